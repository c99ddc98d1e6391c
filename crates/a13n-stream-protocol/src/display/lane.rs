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

use super::bounds::append_bounded;
use super::field::{Field, FieldInput};
use super::item::{write_observed_line, ObservedItem};
use super::item_content::ItemContent;
use super::store::CharCounts;
use super::stream_id::StreamId;
use super::{DisplayFold, ItemKind, LanePath};
use crate::error::FoldError;
use crate::fields::item_key;
use crate::lanes::args_event::EventTemplate;
use crate::lanes::carried_line::CarriedLine;
use crate::lanes::delta_line::{ArgsDelta, ContentDelta, DeltaLine};
use crate::lanes::input_line::InputLine;
use crate::lanes::lane_counts::LaneCounts;
use crate::lanes::lane_hint::{scan_for_lane, take_scanned_or_respelled, LaneMemos, Lanes, Respell, Scanned};
use crate::lanes::part_line::{PartLine, ToolReturnLine};
use crate::observer::PartKind;
use crate::source::SourceItem;

impl DisplayFold {
    /// Decode one Harness source line, convert and fold it, and append one observed line per event to `out`
    /// ([`Observed::write_lines`](super::Observed::write_lines)). Returns how many events
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
        let scanned = scan_for_lane(&mut self.fast.memos, line, false);
        self.fold_scanned(line, &scanned, Respell::Now, out)
    }

    /// Fold `line`, which its lane's scan read as `scanned`: through that lane when it takes the line (as spelled, or
    /// spelled otherwise from the first spelling `first`), else decoded and folded on the general path.
    pub(super) fn fold_scanned(
        &mut self,
        line: &str,
        scanned: &Scanned<'_>,
        first: Respell<'_>,
        out: &mut Vec<u8>,
    ) -> Result<usize, FoldError> {
        let (taken, path) = match take_scanned_or_respelled(self, line, scanned, first, out) {
            Some((path, count)) => (Some(count), path),
            None => (None, scanned.lane().map_or_else(|why| why, LanePath::TakeDeclined)),
        };
        self.fast.counts.add(path);
        if let Some(count) = taken {
            return Ok(count);
        }
        let item = SourceItem::from_json(line)?;
        let folded = self.fold_source_typed(&item)?;
        self.write_folded(&folded, out);
        Ok(folded.len())
    }

    /// Fold one source line for its effect on the display alone: the state [`DisplayFold::fold_line`] leaves,
    /// equally atomic, without writing the observed lines nobody reads. This is the recovery path: rebuilding a
    /// fold from a run's journal to export or continue it.
    ///
    /// ```
    /// use a13n_stream_protocol::DisplayFold;
    ///
    /// let journal = [
    ///     r#"{"thread_id":"t","run_id":"r","sequence":0,"occurred_at":"2026-11-29T12:00:00Z","event":{"index":0,"part":{"content":"Hel","part_kind":"text"},"event_kind":"part_start"}}"#,
    ///     r#"{"thread_id":"t","run_id":"r","sequence":1,"occurred_at":"2026-11-29T12:00:01Z","event":{"index":0,"delta":{"content_delta":"lo","part_delta_kind":"text"},"event_kind":"part_delta"}}"#,
    /// ];
    /// let (mut replayed, mut folded) = (DisplayFold::new("r"), DisplayFold::new("r"));
    /// for line in journal {
    ///     replayed.replay_line(line)?;
    ///     folded.fold_line(line, &mut Vec::new())?;
    /// }
    /// assert_eq!(replayed.export_json(), folded.export_json());
    /// # Ok::<(), a13n_stream_protocol::FoldError>(())
    /// ```
    pub fn replay_line(&mut self, line: &str) -> Result<usize, FoldError> {
        self.writes_observed = false;
        let folded = self.fold_line(line, &mut Vec::new());
        self.writes_observed = true;
        folded
    }

    /// The part lane: a text part's start or end or a tool call's end converts without a tree (its events are
    /// typed from the scanned line) and its typed events fold through the general path's message fold.
    fn fold_part(&mut self, line: &PartLine<'_>, out: &mut Vec<u8>) -> Option<usize> {
        let plan = self.observer.part_in_any_run(line)?;
        let count = self.fold_events(&plan.events, out)?;
        self.observer.commit(plan);
        Some(count)
    }

    /// The content lane for a delta whose part had no start: its typed start and content events fold through the
    /// general path's message fold, and the part opens in the observer.
    fn fold_opening_delta(&mut self, delta: &ContentDelta<'_>, out: &mut Vec<u8>) -> Option<usize> {
        let plan = self.observer.opening_delta_in_any_run(delta)?;
        let count = self.fold_events(&plan.events, out)?;
        self.observer.commit(plan);
        Some(count)
    }

    /// The content lane: `true` when the delta's part is open and the delta is folded and written.
    fn fold_open_part_delta(&mut self, delta: &ContentDelta<'_>, out: &mut Vec<u8>) -> bool {
        let (parsed, part_kind, at, text) = (&delta.line, delta.part_kind, delta.line.head.at, delta.text());
        let item_kind = match part_kind {
            PartKind::Text => ItemKind::TextMessage,
            _ => ItemKind::ReasoningMessage,
        };
        // The same part as the lane's last line, with nothing else folded since: every check below held then and
        // nothing could change its outcome (only the general path changes cursors, groups and copied fields).
        let (hit, first) = match self.fast.lane.take() {
            Some(Lane::Content(hit)) if hit.is(parsed, part_kind) => (hit, false),
            _ => match self.check_open_part(parsed, part_kind, item_kind) {
                Some(hit) => (hit, true),
                None => return false,
            },
        };
        let sequence = self.sequence + 1;
        let position = StreamId::At { attempt: self.attempt, sequence };
        let full = self.content.whole_fields();
        let append = |content: &mut ItemContent, counts: &mut CharCounts, index: usize| {
            append_bounded(content, Field::Text, text, full, counts, index);
        };
        // The checks found the item, and only the general path removes items.
        let Some(item) = self.store.touch(&hit.key, item_kind, None, position, at, append) else { return false };
        let reference = ObservedItem {
            id: &hit.key,
            kind: item_kind,
            state: item.state,
            ordinal: Some(item.ordinal),
            response_group: item.response_group,
            failure: item.failure,
            memory_sources: None,
        };
        if self.writes_observed {
            write_observed_line(
                out,
                sequence,
                |out| delta.write_event(&hit.message_id, hit.child, out),
                Some(reference),
            );
        }

        // The rest of what the general path commits.
        if first {
            self.observer.commit_open_part_content_in(&hit.run_id, hit.child, parsed.index);
        }
        self.sequence = sequence;
        if self.arguments.held.as_ref().is_some_and(|held| held.sequence() + 1 < self.sequence) {
            self.seal_arguments();
        }
        self.fast.lane = Some(Lane::Content(hit));
        true
    }

    /// The argument lane: `true` when the delta's tool call is open and the delta is folded into its argument
    /// stream (continued, or opened when it starts one) and written.
    fn fold_argument_delta(&mut self, delta: &ArgsDelta<'_>, out: &mut Vec<u8>) -> bool {
        let parsed = &delta.line;
        if self.content.full_content() {
            return false;
        }
        let found = self.observer.open_tool_call_in_any_run(
            &parsed.head.thread_id,
            &parsed.head.run_id,
            parsed.index,
            delta.tool_call_id(),
        );
        let Some(child) = found else { return false };
        // The stream identity the lane compared last (with the held stream's) spares writing it again. The
        // identity is written into the buffer of the one before it, so a run of deltas allocates none; a delta
        // the memo read by the last delta's line has that delta's identity, so it writes none.
        let (spare, last, last_line) = match self.fast.lane.take() {
            Some(Lane::Arguments { identity, spare, memo_line }) => (spare, Some(identity), memo_line),
            other => {
                self.fast.lane = other;
                (Vec::with_capacity(256), None, None)
            }
        };
        // The identity a reader made ahead of the fold is what the calls below make (`ArgsDelta::prepare`).
        let prepared = delta.prepared.take();
        let (identity, spare, same) = match last {
            Some(last) if delta.memo_line.is_some() && delta.memo_line == last_line => (last, spare, true),
            last => {
                let mut identity = spare;
                identity.clear();
                match &prepared {
                    Some(prepared) => identity.extend_from_slice(prepared),
                    None => delta.write_identity(&mut identity),
                }
                let same = last.as_ref() == Some(&identity);
                (identity, last.unwrap_or_default(), same)
            }
        };
        // An identity the lane compared last needs no comparing again.
        let continued = self.holds_adjacent((!same).then_some(identity.as_slice()));
        self.next_sequence();
        // A new stream holds the observation whole, as the general path's object, built from the same description
        // as the bytes, and its identity as the text the lane compares identities by; either way the bytes are
        // written straight into the output below.
        if continued {
            self.grow_arguments(delta.text());
        } else {
            self.open_lane_arguments(delta.event_object(child), &identity);
        }
        let subagent = child.then(|| Value::String(parsed.head.run_id.to_string()));
        let (sequence, writes) = (self.sequence, self.writes_observed);
        let mut template = std::mem::take(&mut self.fast.args_event);
        self.put_arguments(continued, delta.text(), subagent, |item| {
            if writes {
                write_observed_line(out, sequence, |out| template.write(delta, child, out), Some(item));
            }
        });
        self.fast.args_event = template;
        self.fast.lane = Some(Lane::Arguments { identity, spare, memo_line: delta.memo_line });
        true
    }

    /// Whether the line's part is open in the observer and its item is live with nothing the event could change
    /// but its text: what the general path would then do is append.
    fn check_open_part(&mut self, parsed: &DeltaLine<'_>, part_kind: PartKind, item_kind: ItemKind) -> Option<LaneHit> {
        let found =
            self.observer.open_part_in_any_run(&parsed.head.thread_id, &parsed.head.run_id, parsed.index, part_kind);
        let (message_id, child) = found.map(|(id, child)| (id.to_owned(), child))?;
        // A child run's items are scoped to it, and so are its response groups.
        let scope = child.then(|| Value::String(parsed.head.run_id.to_string()));
        let key = self.scoped(item_kind, scope.as_ref().map(FieldInput::Json), &message_id);
        let (kind, content) = self.store.live(&key)?;
        let scope_group =
            self.response_groups.get(if child { parsed.head.run_id.as_ref() } else { item_key::ROOT_SCOPE });
        if kind != item_kind
            || content.text(Field::MessageId) != Some(message_id.as_str())
            || !content.holds(Field::SubagentRunId, scope.as_ref())
            || (scope_group.is_some() && !content.contains(Field::ResponseGroup))
        {
            return None;
        }
        Some(LaneHit {
            thread_id: parsed.head.thread_id.clone().into_owned(),
            run_id: parsed.head.run_id.clone().into_owned(),
            index: parsed.index,
            part_kind,
            message_id,
            key,
            child,
        })
    }
}

impl Lanes for DisplayFold {
    fn content(&mut self, delta: &ContentDelta<'_>, out: &mut Vec<u8>) -> Option<usize> {
        if self.fold_open_part_delta(delta, out) {
            return Some(1);
        }
        self.fold_opening_delta(delta, out)
    }

    fn arguments(&mut self, delta: &ArgsDelta<'_>, out: &mut Vec<u8>) -> Option<usize> {
        self.fold_argument_delta(delta, out).then_some(1)
    }

    fn part(&mut self, line: &PartLine<'_>, out: &mut Vec<u8>) -> Option<usize> {
        self.fold_part(line, out)
    }

    fn carried(&mut self, line: &CarriedLine<'_>, out: &mut Vec<u8>) -> Option<usize> {
        self.fold_carried(line, out)
    }

    fn tool_return(&mut self, line: &ToolReturnLine<'_>, out: &mut Vec<u8>) -> Option<usize> {
        let events = self.observer.tool_return_in_any_run(line)?;
        self.fold_events(&events, out)
    }

    /// A text input's `CUSTOM` event, folded as the general path folds it (a user's message becomes its item).
    fn input(&mut self, line: &InputLine<'_>, out: &mut Vec<u8>) -> Option<usize> {
        let events = self.observer.input_in_any_run(line)?;
        // Checked before anything changes: an event the display cannot hold is the general path's to refuse.
        let folded = self.fold_observed(events, None).ok()?;
        self.fast.forget();
        self.write_folded(&folded, out);
        Some(folded.len())
    }

    fn memos(&mut self) -> &mut LaneMemos {
        &mut self.fast.memos
    }
}

/// What the fast lanes keep between lines. Only the lanes change it, except that every change the general path
/// makes to the fold calls [`FastPath::forget`].
#[derive(Debug, Default)]
pub(super) struct FastPath {
    /// What the lanes read lines by (the last part delta scanned in full, lines found in their model's layout).
    pub(super) memos: LaneMemos,
    /// What the lane that took the last line verified; forgotten by any other change to the fold.
    lane: Option<Lane>,
    /// The last argument-delta event the lane wrote, to write the next ones by (see `lanes/args_event.rs`).
    args_event: EventTemplate,
    /// Which path the lines folded by `fold_line` and `replay_line` took (see [`DisplayFold::lane_counts`]).
    pub(super) counts: LaneCounts,
}

impl FastPath {
    /// Forget what the lanes verified: the general path changed the fold.
    pub(super) fn forget(&mut self) {
        self.lane = None;
    }
}

/// What the lanes verified for the line they folded last; any other change to the fold forgets it.
#[derive(Debug)]
pub(super) enum Lane {
    /// The part a content delta extended, and what its checks found.
    Content(LaneHit),
    /// The identity ([`ArgsDelta::write_identity`]) of the argument stream a delta continued, a spare buffer
    /// for the next delta's, and the delta's [`ArgsDelta::memo_line`].
    Arguments { identity: Vec<u8>, spare: Vec<u8>, memo_line: Option<crate::lanes::delta_line::MemoLine> },
}

/// The part the content lane folded last and what its checks found.
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
            && self.run_id == parsed.head.run_id
            && self.thread_id == parsed.head.thread_id
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lanes::lane_hint::take_in_lane;

    const START: &str = r#"{"thread_id":"t","run_id":"r","sequence":0,"occurred_at":"2026-11-29T12:00:00Z","event":{"index":0,"part":{"content":"","part_kind":"text"},"event_kind":"part_start"}}"#;
    const DELTA: &str = r#"{"thread_id":"t","run_id":"r","sequence":1,"occurred_at":"2026-11-29T12:00:01.5Z","event":{"index":0,"delta":{"content_delta":"Hi","provider_name":null,"provider_details":null,"citations_delta":null,"part_delta_kind":"text"},"event_kind":"part_delta"}}"#;

    #[test]
    fn a_delta_of_an_open_part_takes_the_lane() {
        let mut fold = DisplayFold::new("r");
        let mut out = Vec::new();
        assert!(take_in_lane(&mut fold, START, &mut out).is_none(), "no run is bound before the first line");
        assert!(take_in_lane(&mut fold, DELTA, &mut out).is_none(), "no part is open before the start is folded");
        assert!(out.is_empty());
        fold.fold_line(START, &mut out).unwrap();
        out.clear();
        assert_eq!(take_in_lane(&mut fold, DELTA, &mut out), Some(1));
        let text = String::from_utf8(out).unwrap();
        assert!(text.starts_with(r#"{"sequence":2,"event":{"type":"TEXT_MESSAGE_CONTENT","timestamp":1795953601500,"#));
        assert_eq!(fold.items().next().unwrap().content["text"], "Hi");
    }

    #[test]
    fn a_processor_or_a_child_run_keeps_the_general_path() {
        let options = super::super::DisplayOptions {
            processor: Some(crate::observer::infallible(|_, e| Some(e))),
            ..Default::default()
        };
        let mut fold = DisplayFold::with_options("r", options);
        fold.fold_line(START, &mut Vec::new()).unwrap();
        assert!(take_in_lane(&mut fold, DELTA, &mut Vec::new()).is_none());
        let mut fold = DisplayFold::new("r");
        fold.fold_line(START, &mut Vec::new()).unwrap();
        let child = DELTA.replace(r#""run_id":"r""#, r#""run_id":"child""#);
        assert!(take_in_lane(&mut fold, &child, &mut Vec::new()).is_none());
    }

    const TOOL_START: &str = r#"{"thread_id":"t","run_id":"r","sequence":0,"occurred_at":"2026-11-29T12:00:00Z","event":{"index":0,"part":{"tool_name":"search","args":"","tool_call_id":"c1","part_kind":"tool-call"},"event_kind":"part_start"}}"#;
    const ARGS: &str = r#"{"thread_id":"t","run_id":"r","sequence":1,"occurred_at":"2026-11-29T12:00:01Z","event":{"index":0,"delta":{"tool_name_delta":null,"args_delta":"{\"q","tool_call_id":"c1","provider_name":null,"provider_details":null,"part_delta_kind":"tool_call"},"event_kind":"part_delta"}}"#;

    #[test]
    fn argument_deltas_open_and_continue_their_stream_in_the_lane() {
        let mut fold = DisplayFold::new("r");
        let mut out = Vec::new();
        fold.fold_line(TOOL_START, &mut out).unwrap();
        assert_eq!(take_in_lane(&mut fold, ARGS, &mut out), Some(1), "the first delta opens the stream");
        out.clear();
        let next = ARGS.replace(r#""sequence":1"#, r#""sequence":2"#).replace(r#"{\"q"#, r#"\": 1}"#);
        assert_eq!(take_in_lane(&mut fold, &next, &mut out), Some(1));
        let text = String::from_utf8(out).unwrap();
        assert!(text.starts_with(r#"{"sequence":3,"event":{"type":"CUSTOM","timestamp":1795953601000,"#), "{text}");
        let observation = fold.items().last().unwrap();
        assert_eq!(observation.content["value"]["event"]["delta"]["args_delta"], "{\"q\": 1}");
        // Another call's delta is another stream.
        let other = next.replace(r#""sequence":2"#, r#""sequence":3"#).replace(r#""c1""#, r#""c2""#);
        assert!(take_in_lane(&mut fold, &other, &mut Vec::new()).is_none());
    }

    /// Argument deltas of two open calls in runs: the memo reads each run's later lines by its first, and a run
    /// of the other call is another stream however its lines were read.
    #[test]
    fn runs_of_two_calls_deltas_fold_as_the_general_path_folds_them() {
        let start = |index: usize, call: &str| {
            TOOL_START
                .replace(r#""index":0"#, &format!(r#""index":{index}"#))
                .replace(r#""c1""#, &format!("\"{call}\""))
        };
        let mut lines = vec![start(0, "c1"), start(1, "c2")];
        for (index, call) in [(0, "c1"), (0, "c1"), (1, "c2"), (1, "c2"), (0, "c1"), (0, "c1")] {
            let sequence = lines.len();
            let delta = ARGS
                .replace(r#""sequence":1"#, &format!(r#""sequence":{sequence}"#))
                .replace(r#""index":0"#, &format!(r#""index":{index}"#))
                .replace(r#""c1""#, &format!("\"{call}\""))
                .replace(r#"{\"q"#, &format!("{call}{sequence}"));
            lines.push(delta);
        }
        let (mut laned, mut general) = (DisplayFold::new("r"), DisplayFold::new("r"));
        let (mut laned_out, mut general_out) = (Vec::new(), Vec::new());
        let mut taken = 0;
        for (at, line) in lines.iter().enumerate() {
            let lane = take_in_lane(&mut laned, line, &mut laned_out);
            taken += usize::from(at >= 2 && lane.is_some());
            if laned_out.is_empty() {
                laned.fold_line(line, &mut laned_out).unwrap();
            }
            for event in general.fold_source_typed(&SourceItem::from_json(line).unwrap()).unwrap() {
                event.write_line(&mut general_out);
            }
            assert_eq!(String::from_utf8_lossy(&laned_out), String::from_utf8_lossy(&general_out), "{line}");
            laned_out.clear();
            general_out.clear();
        }
        assert_eq!(taken, 6, "every delta takes the lane");
        assert_eq!(laned.export_json(), general.export_json());
        let observations = laned.items().filter(|item| item.kind == ItemKind::Observation).count();
        assert_eq!(observations, 2 + 3, "the two starts carried through, and three argument streams");
    }
}
