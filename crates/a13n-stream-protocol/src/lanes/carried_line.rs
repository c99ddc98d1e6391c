//! Scanning source lines the observer carries through as one `CUSTOM` event whose value is the source item: a
//! Harness lifecycle event or usage report, a tool-call part's start, a function tool call, and a tool result the
//! observer does not present (a retry, a failure, a denial) whose projection leaves it as it is. Their event is
//! copied as the line spells it when the line spells it canonically ([`Scanner::canonical_value`], or the layout
//! memo's word for a line like one it found so), so no JSON tree is built: a lane takes only a line in its model's
//! layout (`scan_for_lane` checks that first), whose event is its model's dump, key for key. What the conversion
//! and the fold read of it (kinds, the part's call, a request index) is scanned out beside.

use std::borrow::Cow;
use std::ops::Range;

use crate::agui::EventType;
use crate::content::presents_tool_result;
use crate::extension::Extension;
use crate::fields::event_kind as kinds;
use crate::fields::{agui_key, source_key};
use crate::lane_line::{scan_line, LineHead};
use crate::lanes::event_head::describe_event_head;
use crate::names;
use crate::redact;
use crate::request_index::RequestIndex;
use crate::scan::{once, Scanner};
use crate::sink::{Bytes, JsonSink};
use crate::source::schema_version_fits;

/// The longest line the lane takes: its observation stays well below the display's observation bound (even
/// ASCII-escaped, at most three bytes for each byte of a line without DEL, which the lane refuses) and the size at
/// which a `CUSTOM` event is split into fragments.
const MAX_CARRIED_LINE_BYTES: usize = 8 * 1024;

/// What a carried line changes besides producing its observation.
#[derive(Debug)]
pub(crate) enum Carried<'a> {
    /// A Harness lifecycle event or usage report ([`Extension::ModelRequestStarted`] changes what it says, the
    /// others nothing).
    Harness(Extension),
    /// A tool-call part's start: it opens the part's cursor.
    ToolCallStart { index: i64, tool_call_id: Cow<'a, str>, tool_name: Cow<'a, str> },
    /// A function tool call: nothing.
    ToolCall,
    /// A tool result the observer does not present, carried as its source event (see `unpresented_result`):
    /// nothing for the observer. The display fold folds the event into the call's item and fails it.
    UnpresentedResult,
    /// An inline delegation (its payload's `type` is `inline_delegation`): the observer validates the payload,
    /// converts it to a `SUBAGENT_*` event before the observation, and opens or releases the child run.
    Delegation { payload: &'a str },
}

/// A source line carried through as one `CUSTOM` event, with everything needed to write it.
pub(crate) struct CarriedLine<'a> {
    pub(crate) head: LineHead<'a>,
    /// The observation's name.
    pub(crate) name: &'static str,
    /// The event as the line holds it (canonical JSON).
    event: &'a str,
    pub(crate) carried: Carried<'a>,
}

/// The fields of a line's `event` the classification reads.
#[derive(Default)]
struct EventFields<'a> {
    event_kind: Option<Cow<'a, str>>,
    kind: Option<Cow<'a, str>>,
    payload: Option<Payload<'a>>,
    index: Option<i64>,
    part: Option<PartFields<'a>>,
    /// The event's own `content`, as written.
    content: Option<&'a str>,
}

/// An object payload: its text, and its `type` and `request_index` as the general path reads them.
struct Payload<'a> {
    text: &'a str,
    payload_type: Option<Cow<'a, str>>,
    request_index: Option<RequestIndex>,
}

impl<'a> CarriedLine<'a> {
    /// Scan `line`; `None` for any other line and for anything the general path would treat otherwise. Its event
    /// is walked to check that it is canonical unless the layout memo has found it so (`canonical_event`: where it
    /// is in the line).
    pub(crate) fn scan(line: &'a str, canonical_event: Option<Range<usize>>) -> Option<CarriedLine<'a>> {
        // DEL, one byte in the line, is six ASCII-escaped: such a line could cross the bound its length keeps.
        if memchr::memchr(0x7f, line.as_bytes()).is_some() {
            return None;
        }
        let mut event = None;
        let head = scan_line(line, MAX_CARRIED_LINE_BYTES, |scanner| {
            let text = match &canonical_event {
                Some(known) => scanner.value_at(known.clone()),
                None => scanner.canonical_value(),
            };
            once(&mut event, text)
        })?;
        let event = event?;
        let fields = event_fields(event)?;
        let (name, carried) = classify(fields)?;
        Some(CarriedLine { head, name, event, carried })
    }

    /// Append the observation's value: `{thread_id, run_id, sequence, occurred_at, event}`.
    pub(crate) fn write_value(&self, out: &mut Vec<u8>) {
        self.head.describe_value_head(&mut Bytes(out));
        out.extend_from_slice(self.event.as_bytes());
        out.push(b'}');
    }

    /// Append the `CUSTOM` event's JSON as [`Event::write_json`](crate::Event::write_json) writes it, with the
    /// value [`CarriedLine::write_value`] wrote.
    pub(crate) fn write_event(&self, child: bool, value: &[u8], out: &mut Vec<u8>) {
        let sink = &mut Bytes(out);
        describe_event_head(sink, EventType::Custom, self.head.timestamp, child.then_some(&*self.head.run_id));
        sink.key(agui_key::written::NAME);
        sink.text(Some(self.name));
        sink.key(agui_key::written::VALUE);
        out.extend_from_slice(value);
        out.push(b'}');
    }
}

/// Scan the event's keys (each once) and the values the classification reads, in one walk: a payload or a part
/// that is not an object is not for this lane.
fn event_fields(event: &str) -> Option<EventFields<'_>> {
    let mut fields = EventFields::default();
    let mut scanner = Scanner::new(event);
    scanner.object(|scanner, key| {
        let seen = match key.as_ref() {
            "event_kind" => fields.event_kind.replace(scanner.string()?).is_some(),
            "kind" => fields.kind.replace(scanner.string()?).is_some(),
            // Its layout lets it be any value; the general path refuses one that is not a string, or not of 1 to 32
            // characters.
            "schema_version" => schema_version_fits(&scanner.string()?).then_some(false)?,
            "payload" => {
                let start = scanner.position();
                let (payload_type, request_index) = payload_fields(scanner)?;
                let text = event[start..scanner.position()].trim_start();
                // A payload the Harness's redaction would change is the general path's, which redacts it.
                if redact::may_redact(text) {
                    redact::left_as_is(&mut Scanner::new(text))?.then_some(())?;
                }
                fields.payload.replace(Payload { text, payload_type, request_index }).is_some()
            }
            "index" => fields.index.replace(scanner.integer()?).is_some(),
            "part" => fields.part.replace(part_fields(scanner)?).is_some(),
            "content" => fields.content.replace(scanner.raw_value()?).is_some(),
            _ => {
                scanner.skip_value()?;
                false
            }
        };
        // Canonical JSON has no repeated keys; this only keeps the scan honest.
        (!seen).then_some(())
    })?;
    Some(fields)
}

/// The observation's name and what the line changes; `None` for every event the lane does not take.
fn classify(fields: EventFields<'_>) -> Option<(&'static str, Carried<'_>)> {
    let EventFields { event_kind, kind, payload, index, part, content } = fields;
    match event_kind.as_deref() {
        None => {
            // A Harness extension event with an object payload: a lifecycle event other than the run's start, a
            // usage report, or an inline delegation.
            if index.is_some() || part.is_some() {
                return None;
            }
            let payload = payload?;
            let kind = kind.as_deref()?;
            let extension = Extension::of(Some(kind), payload.payload_type.as_deref(), payload.request_index);
            let name = extension.carried_name()?;
            let carried = match extension {
                Extension::InlineDelegation => Carried::Delegation { payload: payload.text },
                other => Carried::Harness(other),
            };
            Some((name, carried))
        }
        Some("part_start") => {
            let (index, part) = (index?, part?);
            if part.part_kind.as_deref() != Some("tool-call") {
                return None;
            }
            let (tool_call_id, tool_name) = (part.tool_call_id?, part.tool_name?);
            Some((names::PART_START, Carried::ToolCallStart { index, tool_call_id, tool_name }))
        }
        Some("function_tool_call") => {
            // Its part is read only when it is a native call; a plain call's part needs only to be an object.
            (part?.part_kind.as_deref() == Some("tool-call")).then_some(())?;
            Some((FUNCTION_TOOL_CALL, Carried::ToolCall))
        }
        Some(kinds::FUNCTION_TOOL_RESULT) => {
            // Its conversion writes the event's own `content` as null; the lane copies only one that is.
            (content? == "null").then_some(())?;
            unpresented_result(&part?).then_some((names::FUNCTION_TOOL_RESULT, Carried::UnpresentedResult))
        }
        Some(kinds::OUTPUT_TOOL_RESULT) => {
            unpresented_result(&part?).then_some((names::OUTPUT_TOOL_RESULT, Carried::UnpresentedResult))
        }
        _ => None,
    }
}

/// Whether a tool result's part is one the observer does not present and carries as written: a retry prompt
/// (which the general path accepts too, though the reference's loader refuses one in a result event), or a
/// `tool-return` with an outcome other than success whose metadata is null and whose content is a string, which
/// the projection of its content (`public_tool_value` of `tool_execution_value`) leaves as it is. Either with the
/// call id and content the source check requires of a result's part (`source::classify`); any other part is
/// the general path's to refuse.
fn unpresented_result(part: &PartFields<'_>) -> bool {
    let part_kind = part.part_kind.as_deref();
    let checked = matches!(part_kind, Some(source_key::TOOL_RETURN | source_key::RETRY_PROMPT))
        && part.tool_call_id.is_some()
        && part.content.is_some();
    if !checked || presents_tool_result(part_kind, part.outcome.as_deref()) {
        return false;
    }
    part_kind == Some(source_key::RETRY_PROMPT)
        || (part.metadata == Some("null") && part.content.is_some_and(|content| content.starts_with('"')))
}

/// The name of a carried function tool call.
const FUNCTION_TOOL_CALL: &str = "a13n.pydantic_ai.function_tool_call";

/// The `type` and `request_index` (an integer of any size) of the payload at the scanner, which moves past it; `None`
/// when it is not an object.
fn payload_fields<'a>(scanner: &mut Scanner<'a>) -> Option<(Option<Cow<'a, str>>, Option<RequestIndex>)> {
    let (mut payload_type, mut request_index) = (None, None);
    scanner.object(|scanner, key| match key.as_ref() {
        // Read as the general path reads them: a `type` that is not a string is none, and a `request_index`
        // that is not an integer of 0 or more changes nothing.
        "type" => {
            payload_type = Scanner::new(scanner.raw_value()?).string();
            Some(())
        }
        source_key::REQUEST_INDEX => {
            request_index = RequestIndex::of_payload_text(scanner.raw_value()?);
            Some(())
        }
        _ => scanner.skip_value(),
    })?;
    Some((payload_type, request_index))
}

/// The fields of a part the classification reads.
#[derive(Default)]
struct PartFields<'a> {
    part_kind: Option<Cow<'a, str>>,
    tool_call_id: Option<Cow<'a, str>>,
    tool_name: Option<Cow<'a, str>>,
    /// A result's outcome (a string; another type sends the line to the general path, which refuses it).
    outcome: Option<Cow<'a, str>>,
    /// A result's metadata, as written.
    metadata: Option<&'a str>,
    /// The part's `content`, as written.
    content: Option<&'a str>,
}

/// The kind, call id, tool name and a result's outcome of the part at the scanner, which moves past it (strings
/// only; another type, or a part that is not an object, sends the line to the general path, which names the
/// error), with its metadata as written and whether its content is a string.
fn part_fields<'a>(scanner: &mut Scanner<'a>) -> Option<PartFields<'a>> {
    let mut fields = PartFields::default();
    scanner.object(|scanner, key| match key.as_ref() {
        "part_kind" => fields.part_kind.replace(scanner.string()?).is_none().then_some(()),
        "tool_call_id" => fields.tool_call_id.replace(scanner.string()?).is_none().then_some(()),
        "tool_name" => fields.tool_name.replace(scanner.string()?).is_none().then_some(()),
        "outcome" => fields.outcome.replace(scanner.string()?).is_none().then_some(()),
        "metadata" => fields.metadata.replace(scanner.raw_value()?).is_none().then_some(()),
        "content" => fields.content.replace(scanner.raw_value()?).is_none().then_some(()),
        _ => scanner.skip_value(),
    })?;
    Some(fields)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn result(part: &str, event: &str) -> String {
        format!(
            r#"{{"thread_id":"t","run_id":"r","sequence":3,"occurred_at":"2026-11-29T12:00:00+00:00","event":{{"part":{{"tool_name":"f",{part},"tool_call_id":"c","tool_kind":null,"timestamp":"2026-11-29T12:00:00Z","retry":null}},{event}}}}}"#
        )
    }

    fn carried(line: &str) -> Option<&'static str> {
        let scanned = CarriedLine::scan(line, None)?;
        matches!(scanned.carried, Carried::UnpresentedResult).then_some(scanned.name)
    }

    /// A result the observer does not present is carried when its projection leaves it as written: a retry
    /// prompt, or a return that failed with text content and no metadata (and, for a function tool's, the
    /// event's own content null).
    #[test]
    fn unpresented_results_are_carried_only_where_their_projection_is_the_source() {
        let function = r#""content":null,"event_kind":"function_tool_result""#;
        let output = r#""event_kind":"output_tool_result""#;
        let failed = r#""content":"no","metadata":null,"outcome":"failed","part_kind":"tool-return""#;
        assert_eq!(carried(&result(failed, function)), Some(names::FUNCTION_TOOL_RESULT));
        assert_eq!(carried(&result(failed, output)), Some(names::OUTPUT_TOOL_RESULT));
        let retry = r#""content":[{"msg":"bad"}],"part_kind":"retry-prompt""#;
        assert_eq!(carried(&result(retry, function)), Some(names::FUNCTION_TOOL_RESULT));
        for (part, event) in [
            // Presented: the tool-return lane's, or the general path's.
            (r#""content":"ok","metadata":null,"outcome":"success","part_kind":"tool-return""#, function),
            (r#""content":"ok","metadata":null,"part_kind":"tool-return""#, function),
            // The projection could change the content.
            (r#""content":{"a":1},"metadata":null,"outcome":"failed","part_kind":"tool-return""#, function),
            (r#""content":"no","metadata":{"n":1},"outcome":"failed","part_kind":"tool-return""#, function),
            (r#""content":"no","outcome":"failed","part_kind":"tool-return""#, function),
            // The conversion writes the event's own content as null.
            (failed, r#""content":"seen","event_kind":"function_tool_result""#),
            (failed, r#""event_kind":"function_tool_result""#),
            // An outcome that is not a string is the general path's to refuse.
            (r#""content":"no","metadata":null,"outcome":7,"part_kind":"tool-return""#, function),
            // So are a part of another kind and a retry prompt without content.
            (r#""content":"no","metadata":null,"outcome":"failed","part_kind":"text""#, function),
            (r#""content":"no","metadata":null,"outcome":"failed","part_kind":"tool-return ""#, function),
            (r#""content":"no","part_kind":"builtin-tool-return""#, function),
            (r#""part_kind":"retry-prompt""#, function),
        ] {
            let line = result(part, event);
            assert_eq!(carried(&line), None, "{line}");
        }
        // And a part without its call's id.
        for part in [failed, retry] {
            let line = result(part, function).replace(r#""tool_call_id":"c","#, "");
            assert_eq!(carried(&line), None, "{line}");
        }
    }
}
