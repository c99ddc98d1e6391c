//! Scanning the commonest source line, a content delta of a part, into borrowed typed fields without a JSON tree:
//! what the fast lanes of [`DisplayFold::fold_line`](crate::DisplayFold::fold_line) and
//! [`HarnessAguiStreamObserver::observe_line`](crate::HarnessAguiStreamObserver::observe_line) read.

use std::borrow::Cow;

use crate::agui::EventType;
use crate::json::write_pydantic_str;
use crate::observer::PartKind;
use crate::scan::Scanner;
use crate::source::MAX_SOURCE_LINE_BYTES;
use crate::time::{SourceTime, UtcTime};

/// The fields of a part-delta source line that the conversion reads.
pub(crate) struct DeltaLine<'a> {
    pub(crate) thread_id: Cow<'a, str>,
    pub(crate) run_id: Cow<'a, str>,
    pub(crate) occurred_at: Cow<'a, str>,
    pub(crate) index: i64,
    pub(crate) part_delta_kind: Cow<'a, str>,
    pub(crate) content_delta: Option<Cow<'a, str>>,
    pub(crate) signature_delta: Option<Cow<'a, str>>,
}

/// Scan a source line whose event is a part delta. `None` for anything else, and for anything the general
/// decoder would read differently: an unknown or repeated field, a value of another type, a number that is not
/// a plain integer (the general path names those errors).
pub(crate) fn scan_delta_line(line: &str) -> Option<DeltaLine<'_>> {
    let mut scanner = Scanner::new(line);
    let (mut thread_id, mut run_id, mut occurred_at, mut sequence) = (None, None, None, None);
    let (mut index, mut part_delta_kind, mut event_kind) = (None, None, None);
    let (mut content_delta, mut signature_delta) = (None, None);
    let mut seen = [false; 4];
    // A field seen twice is left to the general path (its decoder keeps the last).
    fn once<T>(slot: &mut Option<T>, value: Option<T>) -> Option<()> {
        if slot.is_some() {
            return None;
        }
        *slot = Some(value?);
        Some(())
    }
    fn first(seen: &mut bool) -> Option<()> {
        (!std::mem::replace(seen, true)).then_some(())
    }
    scanner.object(|scanner, key| match key.as_ref() {
        "thread_id" => once(&mut thread_id, scanner.string()),
        "run_id" => once(&mut run_id, scanner.string()),
        "sequence" => once(&mut sequence, scanner.integer()),
        "occurred_at" => once(&mut occurred_at, scanner.string()),
        "event" => {
            first(&mut seen[0])?;
            scanner.object(|scanner, key| match key.as_ref() {
                "index" => once(&mut index, scanner.integer()),
                "event_kind" => once(&mut event_kind, scanner.string()),
                "delta" => {
                    first(&mut seen[1])?;
                    scanner.object(|scanner, key| match key.as_ref() {
                        "part_delta_kind" => once(&mut part_delta_kind, scanner.string()),
                        "content_delta" => {
                            first(&mut seen[2])?;
                            content_delta = scanner.opt_string()?;
                            Some(())
                        }
                        "signature_delta" => {
                            first(&mut seen[3])?;
                            signature_delta = scanner.opt_string()?;
                            Some(())
                        }
                        // Not read by the conversion of text and thinking deltas; any value will do.
                        "provider_name" | "provider_details" | "citations_delta" => scanner.skip_value(),
                        _ => None,
                    })
                }
                _ => None,
            })
        }
        _ => None,
    })?;
    scanner.end()?;
    sequence?;
    (event_kind? == "part_delta").then_some(())?;
    Some(DeltaLine {
        thread_id: thread_id?,
        run_id: run_id?,
        occurred_at: occurred_at?,
        index: index?,
        part_delta_kind: part_delta_kind?,
        content_delta,
        signature_delta,
    })
}

/// A source line that is a non-empty content delta of a text or thinking part, with what both lanes need of it:
/// the part's kind, the event it becomes, the text, and the time. `None` for any other line, and for anything
/// the general path would treat otherwise (an empty delta is carried through; a signature adds an event).
pub(crate) struct ContentDelta<'a> {
    pub(crate) line: DeltaLine<'a>,
    pub(crate) part_kind: PartKind,
    pub(crate) event_type: EventType,
    pub(crate) timestamp: i64,
    pub(crate) at: UtcTime,
}

impl<'a> ContentDelta<'a> {
    /// Scan `line` as a content delta.
    pub(crate) fn scan(line: &'a str) -> Option<ContentDelta<'a>> {
        if line.len() > MAX_SOURCE_LINE_BYTES {
            return None;
        }
        let parsed = scan_delta_line(line)?;
        let (part_kind, event_type) = match parsed.part_delta_kind.as_ref() {
            "text" => (PartKind::Text, EventType::TextMessageContent),
            "thinking" if parsed.signature_delta.as_deref().is_none_or(str::is_empty) => {
                (PartKind::Reasoning, EventType::ReasoningMessageContent)
            }
            _ => return None,
        };
        if parsed.content_delta.as_deref().is_none_or(str::is_empty)
            || parsed.thread_id.trim().is_empty()
            || parsed.run_id.trim().is_empty()
        {
            return None;
        }
        let timestamp = SourceTime::parse(&parsed.occurred_at).ok()?.timestamp_ms();
        let at = UtcTime::from_epoch_ms(timestamp)?;
        Some(ContentDelta { line: parsed, part_kind, event_type, timestamp, at })
    }

    /// The delta's text (never empty).
    pub(crate) fn text(&self) -> &str {
        self.line.content_delta.as_deref().unwrap_or_default()
    }

    /// Append the event's JSON, as [`Event::write_json`](crate::Event::write_json) writes it: type, timestamp,
    /// the child run it is attributed to (if any), message id, delta.
    pub(crate) fn write_event(&self, message_id: &str, child: bool, out: &mut Vec<u8>) {
        out.extend_from_slice(br#"{"type":""#);
        out.extend_from_slice(self.event_type.as_str().as_bytes());
        out.extend_from_slice(br#"","timestamp":"#);
        out.extend_from_slice(itoa::Buffer::new().format(self.timestamp).as_bytes());
        if child {
            out.extend_from_slice(br#","subagentRunId":"#);
            write_pydantic_str(out, &self.line.run_id);
        }
        out.extend_from_slice(br#","messageId":"#);
        write_pydantic_str(out, message_id);
        out.extend_from_slice(br#","delta":"#);
        write_pydantic_str(out, self.text());
        out.push(b'}');
    }
}
