//! Observing source lines straight to AG-UI event lines, with a fast lane for the commonest item: a content
//! delta of a text or thinking part that is already open, in the root run or an inline child. Converting one changes a single flag of the part's
//! cursor and produces one `*_MESSAGE_CONTENT` event; the lane scans the line into borrowed fields
//! ([`crate::delta_line`]), checks every condition under which the general path would do anything else, and
//! then makes exactly that change and writes exactly those bytes. Anything else goes through
//! [`SourceItem::from_json`] and [`Observer::observe`]; the tests compare both lanes byte for byte.

use crate::agui::EventType;
use crate::delta_line::scan_delta_line;
use crate::error::ObserveError;
use crate::json::write_pydantic_str;
use crate::observer::{HarnessAguiStreamObserver, PartKind};
use crate::source::{SourceItem, MAX_SOURCE_LINE_BYTES};
use crate::time::{SourceTime, UtcTime};

impl HarnessAguiStreamObserver {
    /// Decode one Harness source line, observe it, and append each AG-UI event as one JSON line
    /// ([`Event::write_json`](crate::Event::write_json) and a newline) to `out`. Returns how many events the line
    /// produced.
    ///
    /// The same as [`SourceItem::from_json`] then [`HarnessAguiStreamObserver::observe`], byte for byte and state
    /// for state, and as atomic. Content deltas of open text and thinking parts take a lane that builds no JSON
    /// tree.
    ///
    /// ```
    /// use a13n_stream_protocol::HarnessAguiStreamObserver;
    ///
    /// let lines = [
    ///     r#"{"thread_id":"t","run_id":"r","sequence":0,"occurred_at":"2026-11-29T12:00:00Z","event":{"index":0,"part":{"content":"Hel","part_kind":"text"},"event_kind":"part_start"}}"#,
    ///     r#"{"thread_id":"t","run_id":"r","sequence":1,"occurred_at":"2026-11-29T12:00:01Z","event":{"index":0,"delta":{"content_delta":"lo","part_delta_kind":"text"},"event_kind":"part_delta"}}"#,
    /// ];
    /// let mut observer = HarnessAguiStreamObserver::new().retain_events(false);
    /// let mut out = Vec::new();
    /// for line in lines {
    ///     observer.observe_line(line, &mut out)?;
    /// }
    /// let text = String::from_utf8(out).unwrap();
    /// assert!(text.lines().last().unwrap().starts_with(r#"{"type":"TEXT_MESSAGE_CONTENT""#));
    /// # Ok::<(), a13n_stream_protocol::ObserveError>(())
    /// ```
    pub fn observe_line(&mut self, line: &str, out: &mut Vec<u8>) -> Result<usize, ObserveError> {
        if self.observe_open_part_delta(line, out) {
            return Ok(1);
        }
        let item = SourceItem::from_json(line)?;
        let events = self.observe(&item)?;
        for event in &events {
            event.write_json(out);
            out.push(b'\n');
        }
        Ok(events.len())
    }

    /// The fast lane: `true` when the line was a content delta of an open part and is observed and written.
    fn observe_open_part_delta(&mut self, line: &str, out: &mut Vec<u8>) -> bool {
        if line.len() > MAX_SOURCE_LINE_BYTES || self.has_finish() {
            return false;
        }
        let Some(parsed) = scan_delta_line(line) else { return false };
        let (part_kind, event_type) = match parsed.part_delta_kind.as_ref() {
            "text" => (PartKind::Text, EventType::TextMessageContent),
            // A signature adds an encrypted-value event: the general path writes both.
            "thinking" if parsed.signature_delta.as_deref().is_none_or(str::is_empty) => {
                (PartKind::Reasoning, EventType::ReasoningMessageContent)
            }
            _ => return false,
        };
        let text = match &parsed.content_delta {
            Some(text) if !text.is_empty() => text.as_ref(),
            // An empty delta is carried through as a CUSTOM event.
            _ => return false,
        };
        if parsed.thread_id.trim().is_empty() || parsed.run_id.trim().is_empty() {
            return false;
        }
        let Ok(occurred_at) = SourceTime::parse(&parsed.occurred_at) else { return false };
        let timestamp = occurred_at.timestamp_ms();
        if UtcTime::from_epoch_ms(timestamp).is_none() {
            return false;
        }
        let found = self.open_part_in_any_run(&parsed.thread_id, &parsed.run_id, parsed.index, part_kind);
        let Some((message_id, child)) = found else { return false };
        out.extend_from_slice(br#"{"type":""#);
        out.extend_from_slice(event_type.as_str().as_bytes());
        out.extend_from_slice(br#"","timestamp":"#);
        out.extend_from_slice(itoa::Buffer::new().format(timestamp).as_bytes());
        if child {
            // A child run's events are attributed to it.
            out.extend_from_slice(br#","subagentRunId":"#);
            write_pydantic_str(out, &parsed.run_id);
        }
        out.extend_from_slice(br#","messageId":"#);
        write_pydantic_str(out, message_id);
        out.extend_from_slice(br#","delta":"#);
        write_pydantic_str(out, text);
        out.extend_from_slice(b"}\n");
        self.commit_open_part_content_in(&parsed.run_id, child, parsed.index);
        true
    }
}
