//! Observing source lines straight to AG-UI event lines, with a fast lane for the commonest item: a content
//! delta of a text or thinking part that is already open, in the root run or an inline child. Converting one changes a single flag of the part's
//! cursor and produces one `*_MESSAGE_CONTENT` event; the lane scans the line into borrowed fields
//! ([`crate::delta_line`]), checks every condition under which the general path would do anything else, and
//! then makes exactly that change and writes exactly those bytes. Anything else goes through
//! [`SourceItem::from_json`] and [`Observer::observe`]; the tests compare both lanes byte for byte.

use crate::delta_line::ContentDelta;
use crate::error::ObserveError;
use crate::observer::HarnessAguiStreamObserver;
use crate::source::SourceItem;

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
        if self.has_finish() {
            return false;
        }
        let Some(delta) = ContentDelta::scan(line) else { return false };
        let parsed = &delta.line;
        let found = self.open_part_in_any_run(&parsed.thread_id, &parsed.run_id, parsed.index, delta.part_kind);
        let Some((message_id, child)) = found else { return false };
        delta.write_event(message_id, child, out);
        out.push(b'\n');
        self.commit_open_part_content_in(&parsed.run_id, child, parsed.index);
        true
    }
}
