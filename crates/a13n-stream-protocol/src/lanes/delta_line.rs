//! Scanning the commonest source line, a delta of a model response part, into borrowed typed fields without a
//! JSON tree: what the fast lanes of [`DisplayFold::fold_line`](crate::DisplayFold::fold_line) and
//! [`HarnessAguiStreamObserver::observe_line`](crate::HarnessAguiStreamObserver::observe_line) read. A content
//! delta of a text or thinking part becomes one `*_MESSAGE_CONTENT` event ([`ContentDelta`]); an argument delta
//! of a tool-call part is carried through as one `CUSTOM` part-delta observation ([`ArgsDelta`]).

use std::borrow::Cow;
use std::cell::Cell;
use std::ops::Range;

use serde_json::Value;

use crate::agui::EventType;
use crate::fields::{agui_key, source_key};
use crate::json::{write_pydantic_str, Object};
use crate::lane_line::{scan_line, LineHead};
use crate::lanes::event_head::describe_event_head;
use crate::names;
use crate::part_kind::PartKind;
use crate::scan::{once, Scanner};
use crate::sink::{Bytes, JsonSink, Tree};
use crate::source::MAX_SOURCE_LINE_BYTES;

/// The longest argument-delta line a lane takes: its observation stays far below the size at which the general
/// path splits a `CUSTOM` event into fragments.
pub(crate) const MAX_ARGS_LINE_BYTES: usize = 32 * 1024;

/// The fields of a part-delta source line that the conversion reads. A lane takes only a line in its model's layout
/// (`scan_for_lane` checks that first, and a delta memo reads only lines like one it checked), so its keys are the
/// model's, in the model's order: a copy of its event is written in that order, and a key of another kind of delta
/// is never there.
pub(crate) struct DeltaLine<'a> {
    pub(crate) head: LineHead<'a>,
    pub(crate) index: i64,
    pub(crate) part_delta_kind: Cow<'a, str>,
    pub(crate) content_delta: Option<Cow<'a, str>>,
    pub(crate) signature_delta: Option<Cow<'a, str>>,
    pub(crate) args_delta: Option<Cow<'a, str>>,
    pub(crate) tool_name_delta: Option<Cow<'a, str>>,
    pub(crate) tool_call_id: Option<Cow<'a, str>>,
    /// The provider fields as the line spells them (any value; only the tool-call lane reads them).
    pub(crate) provider_name: Option<&'a str>,
    pub(crate) provider_details: Option<&'a str>,
    /// Where the line holds the delta's text, the `args_delta` or `content_delta` value (with any whitespace
    /// before it): the value a [`DeltaMemo`](crate::lanes::delta_memo::DeltaMemo) lets vary.
    pub(crate) text_at: Option<Range<usize>>,
}

/// A part delta event's keys in the order its writers write them.
const EVENT_KEYS: &[&str] = &[source_key::INDEX, source_key::DELTA, source_key::EVENT_KIND];
/// A delta's keys in the order its writers write them (a text or thinking delta's, then a tool call's).
const DELTA_KEYS: &[&str] = &[
    source_key::CONTENT_DELTA,
    source_key::SIGNATURE_DELTA,
    source_key::TOOL_NAME_DELTA,
    source_key::ARGS_DELTA,
    source_key::TOOL_CALL_ID,
    source_key::PROVIDER_NAME,
    source_key::PROVIDER_DETAILS,
    source_key::CITATIONS_DELTA,
    source_key::PART_DELTA_KIND,
];

/// Scan a source line whose event is a part delta. `None` for anything else, and for anything the general
/// decoder would read differently: an unknown or repeated field, a value of another type, a number that is not
/// a plain integer (the general path names those errors).
pub(crate) fn scan_delta_line(line: &str) -> Option<DeltaLine<'_>> {
    let (mut index, mut part_delta_kind, mut event_kind) = (None, None, None);
    let (mut content_delta, mut signature_delta, mut args_delta) = (None, None, None);
    let (mut tool_name_delta, mut tool_call_id, mut provider_name, mut provider_details) = (None, None, None, None);
    let mut text_at = None;
    let head = scan_line(line, MAX_SOURCE_LINE_BYTES, |scanner| {
        scanner.object_expecting(EVENT_KEYS, |scanner, key| match key.as_ref() {
            "index" => once(&mut index, scanner.integer()),
            "event_kind" => once(&mut event_kind, scanner.string()),
            "delta" => scanner.object_expecting(DELTA_KEYS, |scanner, key| match key.as_ref() {
                "part_delta_kind" => once(&mut part_delta_kind, scanner.string()),
                "content_delta" => {
                    let from = scanner.position();
                    let value = scanner.opt_string().map(|text| content_delta = text);
                    text_at = Some(from..scanner.position());
                    value
                }
                "signature_delta" => scanner.opt_string().map(|text| signature_delta = text),
                "args_delta" => {
                    let from = scanner.position();
                    let value = scanner.opt_string().map(|text| args_delta = text);
                    text_at = Some(from..scanner.position());
                    value
                }
                "tool_name_delta" => scanner.opt_string().map(|text| tool_name_delta = text),
                "tool_call_id" => scanner.opt_string().map(|text| tool_call_id = text),
                "provider_name" => scanner.raw_value().map(|raw| provider_name = Some(raw)),
                "provider_details" => scanner.raw_value().map(|raw| provider_details = Some(raw)),
                // Not read by any conversion the lanes take; any value will do.
                "citations_delta" => scanner.skip_value(),
                _ => None,
            }),
            _ => None,
        })
    })?;
    (event_kind? == source_key::PART_DELTA_EVENT).then_some(())?;
    Some(DeltaLine {
        head,
        index: index?,
        part_delta_kind: part_delta_kind?,
        content_delta,
        signature_delta,
        args_delta,
        tool_name_delta,
        tool_call_id,
        provider_name,
        provider_details,
        text_at,
    })
}

/// A lane line: a content delta or an argument delta.
pub(crate) enum LaneLine<'a> {
    Content(ContentDelta<'a>),
    Arguments(ArgsDelta<'a>),
}

impl<'a> LaneLine<'a> {
    /// Scan `line` once and classify it; `None` for every other line.
    pub(crate) fn scan(line: &'a str) -> Option<LaneLine<'a>> {
        let parsed = scan_delta_line(line)?;
        if parsed.part_delta_kind == "tool_call" {
            if line.len() > MAX_ARGS_LINE_BYTES {
                return None;
            }
            return ArgsDelta::new(parsed).map(LaneLine::Arguments);
        }
        ContentDelta::new(parsed).map(LaneLine::Content)
    }
}

/// A source line that is a non-empty content delta of a text or thinking part, with what both lanes need of it:
/// the part's kind, the event it becomes, the text, and the time. `None` for any other line, and for anything
/// the general path would treat otherwise (an empty delta is carried through; a signature adds an event).
pub(crate) struct ContentDelta<'a> {
    pub(crate) line: DeltaLine<'a>,
    pub(crate) part_kind: PartKind,
    pub(crate) event_type: EventType,
}

impl<'a> ContentDelta<'a> {
    pub(crate) fn new(parsed: DeltaLine<'a>) -> Option<ContentDelta<'a>> {
        let (part_kind, event_type) = match parsed.part_delta_kind.as_ref() {
            "text" => (PartKind::Text, EventType::TextMessageContent),
            "thinking" if parsed.signature_delta.as_deref().is_none_or(str::is_empty) => {
                (PartKind::Reasoning, EventType::ReasoningMessageContent)
            }
            _ => return None,
        };
        if parsed.content_delta.as_deref().is_none_or(str::is_empty) {
            return None;
        }
        Some(ContentDelta { line: parsed, part_kind, event_type })
    }

    /// The delta's text (never empty).
    pub(crate) fn text(&self) -> &str {
        self.line.content_delta.as_deref().unwrap_or_default()
    }

    /// Append the event's JSON, as [`Event::write_json`](crate::Event::write_json) writes it: type, timestamp,
    /// the child run it is attributed to (if any), message id, delta.
    pub(crate) fn write_event(&self, message_id: &str, child: bool, out: &mut Vec<u8>) {
        let head = &self.line.head;
        let sink = &mut Bytes(out);
        describe_event_head(sink, self.event_type, head.timestamp, child.then_some(&*head.run_id));
        sink.key(agui_key::written::MESSAGE_ID);
        sink.text(Some(message_id));
        sink.key(agui_key::written::DELTA);
        sink.text(Some(self.text()));
        sink.close();
    }
}

/// A source line that is an argument delta of a tool-call part that changes no conversion state (no tool-name
/// delta): the observer carries it through as one `CUSTOM` part-delta observation whose value is the source
/// item, and the display folds that into the part's argument observation.
pub(crate) struct ArgsDelta<'a> {
    pub(crate) line: DeltaLine<'a>,
    pub(crate) provider_name: Option<Cow<'a, str>>,
    /// Which line a [`DeltaMemo`](crate::lanes::delta_memo::DeltaMemo) remembered when this delta is that line or was
    /// read by it: deltas with the same such line have the same identity ([`ArgsDelta::write_identity`]).
    pub(crate) memo_line: Option<MemoLine>,
    /// The stream's identity, made ahead of the fold ([`ArgsDelta::prepare`]) when a reader scans on another
    /// thread; the lane takes it instead of making it again.
    pub(crate) prepared: Cell<Option<Vec<u8>>>,
}

/// The name a [`DeltaMemo`](crate::lanes::delta_memo::DeltaMemo) gives a line it remembers, which the deltas read by
/// it share: the memo's serial and the line's generation in it. Equal names mean the same remembered line of the
/// same memo.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct MemoLine {
    pub(crate) memo: u64,
    pub(crate) line: u64,
}

impl<'a> ArgsDelta<'a> {
    /// Make the stream's identity, for a fold that may take it on another thread. (The observation event a stream
    /// opens with is left to the fold: made here, it cost the fold as much to take over as to make, since its tree
    /// was built and later freed on the other thread.)
    pub(crate) fn prepare(&self) {
        let mut bytes = Vec::with_capacity(256);
        self.write_identity(&mut bytes);
        self.prepared.set(Some(bytes));
    }

    fn new(parsed: DeltaLine<'a>) -> Option<ArgsDelta<'a>> {
        if parsed.args_delta.is_none()
            || parsed.tool_name_delta.as_deref().is_some_and(|name| !name.is_empty())
            || parsed.provider_details.is_some_and(|raw| raw != "null")
        {
            return None;
        }
        let provider_name = match parsed.provider_name {
            None => None,
            Some(raw) => {
                let mut scanner = Scanner::new(raw);
                let name = scanner.opt_string()?;
                scanner.end()?;
                name
            }
        };
        Some(ArgsDelta { line: parsed, provider_name, memo_line: None, prepared: Cell::new(None) })
    }

    /// The argument text.
    pub(crate) fn text(&self) -> &str {
        self.line.args_delta.as_deref().unwrap_or_default()
    }

    /// The call the delta names, if any (an empty id names none).
    pub(crate) fn tool_call_id(&self) -> Option<&str> {
        self.line.tool_call_id.as_deref().filter(|id| !id.is_empty())
    }

    /// Describe the source event as the observation's copy holds it: its model's keys in the model's order, each
    /// value in canonical form; the argument text, or `null` for the stream's identity.
    fn describe_source_event(&self, with_text: bool, sink: &mut impl JsonSink) {
        use source_key::written;
        sink.open();
        sink.key(written::INDEX);
        sink.integer(self.line.index);
        sink.key(written::DELTA);
        sink.open();
        let fields = [
            (written::TOOL_NAME_DELTA, self.line.tool_name_delta.as_deref()),
            (written::ARGS_DELTA, with_text.then(|| self.text())),
            (written::TOOL_CALL_ID, self.line.tool_call_id.as_deref()),
            (written::PROVIDER_NAME, self.provider_name.as_deref()),
            // Anything but `null` is refused by `ArgsDelta::new`.
            (written::PROVIDER_DETAILS, None),
        ];
        for (key, value) in fields {
            sink.key(key);
            sink.text(value);
        }
        sink.key(written::PART_DELTA_KIND);
        sink.name(source_key::TOOL_CALL_DELTA);
        sink.close();
        sink.key(written::EVENT_KIND);
        sink.name(source_key::PART_DELTA_EVENT);
        sink.close();
    }

    /// Describe the `CUSTOM` event, as [`Event::write_json`](crate::Event::write_json) writes the observation:
    /// type, timestamp, the child run it is attributed to (if any), name, and the source item.
    fn describe_event(&self, child: bool, sink: &mut impl JsonSink) {
        let head = &self.line.head;
        describe_event_head(sink, EventType::Custom, head.timestamp, child.then_some(&*head.run_id));
        sink.key(agui_key::written::NAME);
        sink.name(names::PART_DELTA);
        sink.key(agui_key::written::VALUE);
        head.describe_value_head(sink);
        self.describe_source_event(true, sink);
        sink.close();
        sink.close();
    }

    /// Append the `CUSTOM` event's JSON (see [`ArgsDelta::event_object`] for its tree).
    pub(crate) fn write_event(&self, child: bool, out: &mut Vec<u8>) {
        self.describe_event(child, &mut Bytes(out));
    }

    /// The `CUSTOM` event as the display holds a new argument stream's observation: the object
    /// [`ArgsDelta::write_event`]'s bytes parse into, built without them.
    pub(crate) fn event_object(&self, child: bool) -> Object {
        let mut tree = Tree::default();
        self.describe_event(child, &mut tree);
        match tree.into_value() {
            Value::Object(object) => object,
            _ => Object::new(),
        }
    }

    /// Append what identifies the delta's argument stream: the JSON text of its [`stream_of_identity`] value (name,
    /// thread, run and the source event without its text), written canonically, so two lines' identities are equal
    /// exactly when their streams are.
    pub(crate) fn write_identity(&self, out: &mut Vec<u8>) {
        out.push(b'[');
        write_pydantic_str(out, names::PART_DELTA);
        out.push(b',');
        write_pydantic_str(out, &self.line.head.thread_id);
        out.push(b',');
        write_pydantic_str(out, &self.line.head.run_id);
        out.push(b',');
        self.describe_source_event(false, &mut Bytes(out));
        out.push(b']');
    }
}

/// The stream identity the display fold holds for an argument observation (name, thread, run, and the source event
/// with `null` for its text): the value an identity's text ([`ArgsDelta::write_identity`]) reads as.
pub(crate) fn stream_of_identity(identity: &[u8]) -> Value {
    // The identity is JSON this library wrote from strings and an integer: it always reads.
    let stream = serde_json::from_slice(identity);
    debug_assert!(stream.is_ok(), "an identity the lane wrote reads back");
    stream.unwrap_or(Value::Null)
}
