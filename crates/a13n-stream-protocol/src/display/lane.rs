//! Folding source lines straight to observed lines, with a fast lane for the commonest item.
//!
//! Most of any agent stream is content deltas of a text or thinking part that is already open. Converting and
//! folding one of those changes three things — the part cursor's `emitted_content`, the item's accumulated text,
//! and the fold's position — and produces one `*_MESSAGE_CONTENT` event. The fast lane decodes such a line into
//! borrowed, typed fields (no JSON tree), checks every condition under which the general path would do anything
//! else, and then makes exactly those changes and writes exactly those bytes. Any line it is not sure about —
//! another event kind, an unknown or duplicate field, a part that is not open, a processor, a bound that could
//! cut — goes through [`SourceItem::from_json`] and [`DisplayFold::fold_source`], so both lanes give the same
//! output and the same state (the tests compare them on every recorded and generated stream).

use serde_json::Value;

use super::store::{CharCounts, StreamId};
use super::{append_bounded, DisplayFold, ItemKind, Observed};
use crate::delta_line::{ContentDelta, DeltaLine};
use crate::error::FoldError;
use crate::json::{to_python_writer, write_pydantic_str, Object};
use crate::observer::PartKind;
use crate::source::SourceItem;

impl DisplayFold {
    /// Decode one Harness source line, convert and fold it, and append one observed line per event to `out`
    /// ([`Observed::write_lines`]). Returns how many events
    /// the line produced.
    ///
    /// The same as [`SourceItem::from_json`] then [`DisplayFold::fold_source`], byte for byte and state for
    /// state, and as atomic: a rejected line changes nothing and appends nothing. Content deltas of open text
    /// and thinking parts, most of any stream, take a lane that builds no JSON tree.
    ///
    /// ```
    /// use a13n_stream_protocol::DisplayFold;
    ///
    /// let lines = [
    ///     r#"{"thread_id":"t","run_id":"r","sequence":0,"occurred_at":"2026-11-29T12:00:00Z","event":{"index":0,"part":{"content":"Hel","part_kind":"text"},"event_kind":"part_start"}}"#,
    ///     r#"{"thread_id":"t","run_id":"r","sequence":1,"occurred_at":"2026-11-29T12:00:01Z","event":{"index":0,"delta":{"content_delta":"lo","part_delta_kind":"text"},"event_kind":"part_delta"}}"#,
    /// ];
    /// let mut fold = DisplayFold::new("r");
    /// let mut out = Vec::new();
    /// for line in lines {
    ///     fold.fold_line(line, &mut out)?;
    /// }
    /// let text = String::from_utf8(out).unwrap();
    /// assert_eq!(text.lines().count(), 3); // TEXT_MESSAGE_START and two TEXT_MESSAGE_CONTENT
    /// assert_eq!(fold.items().next().unwrap().content["text"], "Hello");
    /// # Ok::<(), a13n_stream_protocol::FoldError>(())
    /// ```
    pub fn fold_line(&mut self, line: &str, out: &mut Vec<u8>) -> Result<usize, FoldError> {
        if self.fold_open_part_delta(line, out) {
            return Ok(1);
        }
        let item = SourceItem::from_json(line)?;
        let observed = self.fold_source(&item)?;
        Observed::write_lines(&observed, out);
        Ok(observed.len())
    }

    /// The fast lane: `true` when the line was a content delta of an open part and is folded and written.
    fn fold_open_part_delta(&mut self, line: &str, out: &mut Vec<u8>) -> bool {
        let Some(delta) = ContentDelta::scan(line) else { return false };
        let (parsed, part_kind, at, text) = (&delta.line, delta.part_kind, delta.at, delta.text());
        let item_kind = match part_kind {
            PartKind::Text => ItemKind::TextMessage,
            _ => ItemKind::ReasoningMessage,
        };
        // The same part as the lane's last line, with nothing else folded since: every check below held then and
        // nothing could change its outcome (only the general path changes cursors, groups and copied fields).
        let (hit, first) = match self.lane.take() {
            Some(hit) if hit.is(parsed, part_kind) => (hit, false),
            _ => match self.check_open_part(parsed, part_kind, item_kind) {
                Some(hit) => (hit, true),
                None => return false,
            },
        };
        let sequence = self.sequence + 1;
        let position = StreamId::At { attempt: self.attempt, sequence };
        let full = self.full_content || self.retain_content;
        let append = |content: &mut Object, counts: &mut CharCounts, index: usize| {
            append_bounded(content, "text", text, full, counts, index);
        };
        // The checks found the item, and only the general path removes items.
        let Some(item) = self.store.touch(&hit.key, item_kind, position, at, append) else { return false };

        out.extend_from_slice(br#"{"sequence":"#);
        out.extend_from_slice(itoa::Buffer::new().format(sequence).as_bytes());
        out.extend_from_slice(br#","event":"#);
        delta.write_event(&hit.message_id, hit.child, out);
        out.extend_from_slice(br#","item":{"id":"#);
        write_pydantic_str(out, &hit.key);
        out.extend_from_slice(br#","kind":""#);
        out.extend_from_slice(item_kind.as_str().as_bytes());
        out.extend_from_slice(br#"","state":""#);
        out.extend_from_slice(item.state.as_str().as_bytes());
        out.extend_from_slice(br#"","ordinal":"#);
        out.extend_from_slice(itoa::Buffer::new().format(item.ordinal).as_bytes());
        out.extend_from_slice(br#","response_group":"#);
        match item.response_group {
            Some(group) => write_pydantic_str(out, group),
            None => out.extend_from_slice(b"null"),
        }
        out.extend_from_slice(br#","failure":"#);
        match item.failure {
            // Writing into memory cannot fail.
            Some(failure) => drop(to_python_writer(out, failure)),
            None => out.extend_from_slice(b"null"),
        }
        out.extend_from_slice(b"}}\n");

        // The rest of what the general path commits.
        if first {
            self.observer.commit_open_part_content_in(&hit.run_id, hit.child, parsed.index);
        }
        self.sequence = sequence;
        if self.arguments.as_ref().is_some_and(|held| held.sequence + 1 < self.sequence) {
            self.seal_arguments();
        }
        self.lane = Some(hit);
        true
    }

    /// Whether the line's part is open in the observer and its item is live with nothing the event could change
    /// but its text: what the general path would then do is append.
    fn check_open_part(&mut self, parsed: &DeltaLine<'_>, part_kind: PartKind, item_kind: ItemKind) -> Option<LaneHit> {
        let found = self.observer.open_part_in_any_run(&parsed.thread_id, &parsed.run_id, parsed.index, part_kind);
        let (message_id, child) = found.map(|(id, child)| (id.to_owned(), child))?;
        // A child run's items are scoped to it, and so are its response groups.
        let scope = child.then(|| Value::String(parsed.run_id.to_string()));
        let key = self.scoped(item_kind, scope.as_ref(), &message_id);
        let (kind, content) = self.store.live(&key)?;
        let scope_group = self.response_groups.get(if child { parsed.run_id.as_ref() } else { "root" });
        let subagent = content.get("subagentRunId");
        if kind != item_kind
            || content.get("messageId").and_then(Value::as_str) != Some(message_id.as_str())
            || subagent != scope.as_ref()
            || (scope_group.is_some() && !content.contains_key("responseGroup"))
        {
            return None;
        }
        Some(LaneHit {
            thread_id: parsed.thread_id.clone().into_owned(),
            run_id: parsed.run_id.clone().into_owned(),
            index: parsed.index,
            part_kind,
            message_id,
            key,
            child,
        })
    }
}

/// The part the lane folded last and what its checks found.
#[derive(Debug)]
pub(super) struct LaneHit {
    thread_id: String,
    run_id: String,
    index: i64,
    part_kind: PartKind,
    message_id: String,
    key: String,
    /// The part is in an inline child run (its events carry `subagentRunId`).
    child: bool,
}

impl LaneHit {
    fn is(&self, parsed: &DeltaLine<'_>, part_kind: PartKind) -> bool {
        self.index == parsed.index
            && self.part_kind == part_kind
            && self.run_id == parsed.run_id
            && self.thread_id == parsed.thread_id
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const START: &str = r#"{"thread_id":"t","run_id":"r","sequence":0,"occurred_at":"2026-11-29T12:00:00Z","event":{"index":0,"part":{"content":"","part_kind":"text"},"event_kind":"part_start"}}"#;
    const DELTA: &str = r#"{"thread_id":"t","run_id":"r","sequence":1,"occurred_at":"2026-11-29T12:00:01.5Z","event":{"index":0,"delta":{"content_delta":"Hi","provider_name":null,"provider_details":null,"citations_delta":null,"part_delta_kind":"text"},"event_kind":"part_delta"}}"#;

    #[test]
    fn a_delta_of_an_open_part_takes_the_lane() {
        let mut fold = DisplayFold::new("r");
        let mut out = Vec::new();
        assert!(!fold.fold_open_part_delta(START, &mut out), "a part start is not a content delta");
        assert!(!fold.fold_open_part_delta(DELTA, &mut out), "no part is open before the start is folded");
        assert!(out.is_empty());
        fold.fold_line(START, &mut out).unwrap();
        out.clear();
        assert!(fold.fold_open_part_delta(DELTA, &mut out));
        let text = String::from_utf8(out).unwrap();
        assert!(text.starts_with(r#"{"sequence":2,"event":{"type":"TEXT_MESSAGE_CONTENT","timestamp":1795953601500,"#));
        assert_eq!(fold.items().next().unwrap().content["text"], "Hi");
    }

    #[test]
    fn a_processor_or_a_child_run_keeps_the_general_path() {
        let options = super::super::DisplayOptions { processor: Some(Box::new(|_, e| Some(e))), ..Default::default() };
        let mut fold = DisplayFold::with_options("r", options);
        fold.fold_line(START, &mut Vec::new()).unwrap();
        assert!(!fold.fold_open_part_delta(DELTA, &mut Vec::new()));
        let mut fold = DisplayFold::new("r");
        fold.fold_line(START, &mut Vec::new()).unwrap();
        let child = DELTA.replace(r#""run_id":"r""#, r#""run_id":"child""#);
        assert!(!fold.fold_open_part_delta(&child, &mut Vec::new()));
    }
}
