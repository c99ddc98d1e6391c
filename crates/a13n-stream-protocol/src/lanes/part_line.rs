//! Scanning a part's start or end into borrowed typed fields without a JSON tree: what the part lanes of
//! [`DisplayFold::fold_line`](crate::DisplayFold::fold_line) and
//! [`HarnessAguiStreamObserver::observe_line`](crate::HarnessAguiStreamObserver::observe_line) read. A text part's
//! start opens a message (`TEXT_MESSAGE_START`, and its first content when it has some); its end closes it
//! (its content when none was sent yet, then `TEXT_MESSAGE_END`). A thinking part does the same with `REASONING_*`
//! events, and its signature as `REASONING_ENCRYPTED_VALUE`. A tool-call part's end presents the call
//! (`TOOL_CALL_START`, its arguments, `TOOL_CALL_END`); its start is carried through whole
//! ([`crate::lanes::carried_line`]).

use std::borrow::Cow;

use crate::content::presents_tool_result;
use crate::fields::source_key;
use crate::lane_line::{scan_line, LineHead};
use crate::part_kind::{Boundary, PartBody};
use crate::scan::once;

/// The longest part line the lanes take (a longer one is rare and takes the general path).
const MAX_PART_LINE_BYTES: usize = 64 * 1024;

/// A text or thinking part's start or end, or a tool-call part's end, as the conversion reads it.
pub(crate) struct PartLine<'a> {
    pub(crate) head: LineHead<'a>,
    pub(crate) index: i64,
    pub(crate) boundary: Boundary,
    pub(crate) body: PartBody<'a>,
}

/// A part start or end event's keys in the order its writers write them.
const EVENT_KEYS: &[&str] = &[
    source_key::INDEX,
    source_key::PART,
    source_key::PREVIOUS_PART_KIND,
    source_key::NEXT_PART_KIND,
    source_key::EVENT_KIND,
];
/// A text or thinking part's keys, then a tool call part's, in the order their writers write them.
const PART_KEYS: &[&str] = &[
    source_key::CONTENT,
    source_key::TOOL_NAME,
    source_key::ARGS,
    source_key::TOOL_CALL_ID,
    source_key::TOOL_KIND,
    source_key::ID,
    source_key::SIGNATURE,
    source_key::PROVIDER_NAME,
    source_key::PROVIDER_DETAILS,
    source_key::CITATIONS,
    source_key::PART_KIND,
];

impl<'a> PartLine<'a> {
    /// Scan `line`; `None` for any other line and for anything the general decoder would read differently.
    pub(crate) fn scan(line: &'a str) -> Option<PartLine<'a>> {
        let (mut index, mut event_kind, mut part_kind, mut content, mut id) = (None, None, None, None, None);
        let (mut tool_name, mut tool_call_id, mut args, mut signature) = (None, None, None, None);
        let mut seen_part = false;
        let head = scan_line(line, MAX_PART_LINE_BYTES, |scanner| {
            scanner.object_expecting(EVENT_KEYS, |scanner, key| match key.as_ref() {
                "index" => once(&mut index, scanner.integer()),
                "event_kind" => once(&mut event_kind, scanner.string()),
                "part" => {
                    (!std::mem::replace(&mut seen_part, true)).then_some(())?;
                    scanner.object_expecting(PART_KEYS, |scanner, key| match key.as_ref() {
                        "part_kind" => once(&mut part_kind, scanner.string()),
                        "content" => once(&mut content, scanner.string()),
                        "id" => once(&mut id, scanner.opt_string()),
                        "signature" => once(&mut signature, scanner.opt_string()),
                        "tool_name" => once(&mut tool_name, scanner.string()),
                        "tool_call_id" => once(&mut tool_call_id, scanner.string()),
                        // Arguments as an object are written sorted by the general path.
                        "args" => once(&mut args, scanner.opt_string()),
                        // Not read by the conversion of these parts; any value will do.
                        _ => scanner.skip_value(),
                    })
                }
                // `previous_part_kind`, `next_part_kind` and anything else: not read.
                _ => scanner.skip_value(),
            })
        })?;
        let boundary = match event_kind?.as_ref() {
            "part_start" => Boundary::Start,
            "part_end" => Boundary::End,
            _ => return None,
        };
        let body = match (part_kind?.as_ref(), boundary) {
            ("text", _) => PartBody::Text { content: content?, id: id.flatten() },
            ("thinking", _) => PartBody::Thinking { content: content?, signature: signature.flatten() },
            ("tool-call", Boundary::End) => PartBody::ToolCall {
                tool_call_id: tool_call_id?,
                tool_name: Some(tool_name?),
                args: args.flatten(),
                builtin: false,
            },
            _ => return None,
        };
        Some(PartLine { head, index: index?, boundary, body })
    }
}

/// A tool's successful return (`function_tool_result` or `output_tool_result` of a `tool-return` part without
/// metadata): it presents as one `TOOL_CALL_RESULT`. Failures, retries and lowered results take the general path.
pub(crate) struct ToolReturnLine<'a> {
    pub(crate) head: LineHead<'a>,
    pub(crate) tool_call_id: Cow<'a, str>,
    /// The returned value (a small tree: the content alone is parsed).
    pub(crate) content: serde_json::Value,
}

impl<'a> ToolReturnLine<'a> {
    /// Scan `line`; `None` for any other line and for anything the general path would treat otherwise.
    pub(crate) fn scan(line: &'a str) -> Option<ToolReturnLine<'a>> {
        let (mut event_kind, mut part_kind, mut tool_call_id, mut content) = (None, None, None, None);
        let (mut metadata, mut outcome) = (None, None);
        let mut seen_part = false;
        let head = scan_line(line, MAX_PART_LINE_BYTES, |scanner| {
            scanner.object(|scanner, key| match key.as_ref() {
                "event_kind" => once(&mut event_kind, scanner.string()),
                "part" => {
                    (!std::mem::replace(&mut seen_part, true)).then_some(())?;
                    scanner.object(|scanner, key| match key.as_ref() {
                        "part_kind" => once(&mut part_kind, scanner.string()),
                        "tool_call_id" => once(&mut tool_call_id, scanner.string()),
                        "content" => once(&mut content, scanner.raw_value()),
                        "metadata" => once(&mut metadata, scanner.raw_value()),
                        // A string, as the general decoder requires (anything else takes the general path).
                        "outcome" => once(&mut outcome, scanner.string()),
                        // Not read by a successful return's conversion; any value will do.
                        _ => scanner.skip_value(),
                    })
                }
                // The event's own `content` and anything else: not read.
                _ => scanner.skip_value(),
            })
        })?;
        matches!(event_kind?.as_ref(), "function_tool_result" | "output_tool_result").then_some(())?;
        presents_tool_result(part_kind.as_deref(), outcome.as_deref()).then_some(())?;
        // No metadata (a lowered result's marker lives there).
        metadata.is_none_or(|raw| raw == "null").then_some(())?;
        let content = serde_json::from_str(content?).ok()?;
        Some(ToolReturnLine { head, tool_call_id: tool_call_id?, content })
    }
}
