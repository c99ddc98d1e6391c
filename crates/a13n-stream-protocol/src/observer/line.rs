//! Observing source lines straight to AG-UI event lines, with fast lanes for the commonest items, in the root run
//! or an inline child: a content delta of an open text or thinking part (one `*_MESSAGE_CONTENT` event and one
//! flag of the part's cursor), an argument delta of an open tool call (carried through as one `CUSTOM` event,
//! nothing changed), and a line carried through whole (a Harness lifecycle event, a tool-call part's start, a
//! function tool call: one `CUSTOM` event, and a request index or a new cursor). The lanes scan the line into
//! borrowed fields ([`crate::lanes::delta_line`], [`crate::lanes::carried_line`]), check every condition under which the
//! general path would do anything else, and then make exactly that change and write exactly those bytes.
//! Anything else goes through [`SourceItem::from_json`] and [`Observer::observe`](super::Observer::observe); the tests compare both lanes
//! byte for byte.

use crate::error::ObserveError;
use crate::lanes::carried_line::{Carried, CarriedLine};
use crate::lanes::delta_line::{ArgsDelta, ContentDelta};
use crate::lanes::input_line::InputLine;
use crate::lanes::lane_hint::{take_in_lane, take_scanned_or_respelled, LaneMemos, Lanes};
use crate::lanes::part_line::{PartLine, ToolReturnLine};
use crate::observer::{HarnessAguiStreamObserver, Plan};
use crate::read_ahead::{ReadAhead, ScannedLine};
use crate::source::SourceItem;

impl HarnessAguiStreamObserver {
    /// Decode one Harness source line, observe it, and append each AG-UI event as one JSON line
    /// ([`Event::write_json`](crate::Event::write_json) and a newline) to `out`. Returns how many events the line
    /// produced.
    ///
    /// The same as [`SourceItem::from_json`] then [`HarnessAguiStreamObserver::observe`], byte for byte and state
    /// for state, and as atomic. Content deltas of open parts, argument deltas of open tool calls, lifecycle
    /// events, tool-call starts and function tool calls take lanes that build no JSON tree.
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
        let taken = if self.has_finish() { None } else { take_in_lane(self, line, out) };
        match taken {
            Some(count) => Ok(count),
            None => self.observe_decoded(line, out),
        }
    }

    /// Observe a line read ahead ([`ReadAhead::scan`]) and append its events to `out`: the same as
    /// [`HarnessAguiStreamObserver::observe_line`] on its line, byte for byte, state for state, and as atomic.
    /// Lines must come in the order they were read.
    ///
    /// ```
    /// use a13n_stream_protocol::{HarnessAguiStreamObserver, ReadAhead};
    ///
    /// let journal = [
    ///     r#"{"thread_id":"t","run_id":"r","sequence":0,"occurred_at":"2026-11-29T12:00:00Z","event":{"index":0,"part":{"content":"Hel","part_kind":"text"},"event_kind":"part_start"}}"#,
    ///     r#"{"thread_id":"t","run_id":"r","sequence":1,"occurred_at":"2026-11-29T12:00:01Z","event":{"index":0,"delta":{"content_delta":"lo","part_delta_kind":"text"},"event_kind":"part_delta"}}"#,
    /// ];
    /// let mut observer = HarnessAguiStreamObserver::new().retain_events(false);
    /// let mut reader = observer.read_ahead();
    /// let mut out = Vec::new();
    /// let reader = std::thread::scope(|scope| {
    ///     let (send, receive) = std::sync::mpsc::sync_channel(64);
    ///     let reading = scope.spawn(move || {
    ///         // The observer stops receiving at a line that fails: then nothing more is read.
    ///         journal.iter().map_while(|line| send.send(reader.scan(line)).ok()).for_each(drop);
    ///         reader
    ///     });
    ///     for scanned in receive {
    ///         observer.observe_scanned(&scanned, &mut out)?;
    ///     }
    ///     Ok::<_, a13n_stream_protocol::ObserveError>(reading.join().unwrap())
    /// })?;
    /// observer.end_read_ahead(reader);
    /// let (mut alone, mut expected) = (HarnessAguiStreamObserver::new().retain_events(false), Vec::new());
    /// journal.iter().try_for_each(|line| alone.observe_line(line, &mut expected).map(drop))?;
    /// assert_eq!(out, expected);
    /// # Ok::<(), a13n_stream_protocol::ObserveError>(())
    /// ```
    pub fn observe_scanned(&mut self, line: &ScannedLine<'_>, out: &mut Vec<u8>) -> Result<usize, ObserveError> {
        let taken = if self.has_finish() {
            None
        } else {
            take_scanned_or_respelled(self, line.line(), &line.scanned, line.respell(), out)
        };
        match taken {
            Some((_, count)) => Ok(count),
            None => self.observe_decoded(line.line(), out),
        }
    }

    /// A reader of lines ahead of this observer, for a journal read on two threads: one scans lines
    /// ([`ReadAhead::scan`]), the other observes them in the same order
    /// ([`HarnessAguiStreamObserver::observe_scanned`]). Until the reader is given back
    /// ([`HarnessAguiStreamObserver::end_read_ahead`]), `observe_line` reads with fresh memos: the same results,
    /// found more slowly.
    pub fn read_ahead(&mut self) -> ReadAhead {
        ReadAhead { memos: std::mem::take(&mut self.memos), for_fold: false }
    }

    /// Take back what `reader` has learnt of the lines it read.
    pub fn end_read_ahead(&mut self, reader: ReadAhead) {
        self.memos = reader.memos;
    }

    /// The general path: decode the line, observe the item, write its events.
    fn observe_decoded(&mut self, line: &str, out: &mut Vec<u8>) -> Result<usize, ObserveError> {
        let item = SourceItem::from_json(line)?;
        let events = self.observe(&item)?;
        write_events(&events, out);
        Ok(events.len())
    }

    /// Commit `plan` and write its events: how many.
    fn commit_and_write(&mut self, plan: Plan<'_>, out: &mut Vec<u8>) -> usize {
        let events = self.commit(plan);
        write_events(&events, out);
        events.len()
    }
}

impl Lanes for HarnessAguiStreamObserver {
    /// The delta of an open part is written and its part's cursor moved; a delta whose part had no start opens it.
    fn content(&mut self, delta: &ContentDelta<'_>, out: &mut Vec<u8>) -> Option<usize> {
        let (head, index) = (&delta.line.head, delta.line.index);
        if let Some((message_id, child)) =
            self.open_part_in_any_run(&head.thread_id, &head.run_id, index, delta.part_kind)
        {
            delta.write_event(message_id, child, out);
            out.push(b'\n');
            self.commit_open_part_content_in(&head.run_id, child, index);
            return Some(1);
        }
        let plan = self.opening_delta_in_any_run(delta)?;
        Some(self.commit_and_write(plan, out))
    }

    /// The delta of an open tool call is carried through.
    fn arguments(&mut self, delta: &ArgsDelta<'_>, out: &mut Vec<u8>) -> Option<usize> {
        let head = &delta.line.head;
        let child =
            self.open_tool_call_in_any_run(&head.thread_id, &head.run_id, delta.line.index, delta.tool_call_id())?;
        self.args_event.write(delta, child, out);
        out.push(b'\n');
        Some(1)
    }

    /// A text part's start or end, or a tool call's end.
    fn part(&mut self, line: &PartLine<'_>, out: &mut Vec<u8>) -> Option<usize> {
        let plan = self.part_in_any_run(line)?;
        Some(self.commit_and_write(plan, out))
    }

    /// The observation, after a delegation's `SUBAGENT_*` event (and a completed child's closing events).
    fn carried(&mut self, line: &CarriedLine<'_>, out: &mut Vec<u8>) -> Option<usize> {
        let child = self.carries_in_any_run(&line.head.thread_id, &line.head.run_id)?;
        let delegation = match line.carried {
            Carried::Delegation { .. } => Some(self.delegation_in_any_run(line)?),
            _ => None,
        };
        if let Some(plan) = &delegation {
            write_events(&plan.closing, out);
            write_events(std::slice::from_ref(&plan.event), out);
        }
        let mut value = Vec::with_capacity(512);
        line.write_value(&mut value);
        line.write_event(child, &value, out);
        out.push(b'\n');
        let delegated = delegation.as_ref().map_or(0, |plan| plan.closing.len() + 1);
        self.commit_carried_in(&line.head.run_id, child, &line.carried, delegation);
        Some(1 + delegated)
    }

    fn memos(&mut self) -> &mut LaneMemos {
        &mut self.memos
    }

    fn tool_return(&mut self, line: &ToolReturnLine<'_>, out: &mut Vec<u8>) -> Option<usize> {
        let events = self.tool_return_in_any_run(line)?;
        write_events(&events, out);
        Some(events.len())
    }

    fn input(&mut self, line: &InputLine<'_>, out: &mut Vec<u8>) -> Option<usize> {
        let events = self.input_in_any_run(line)?;
        write_events(&events, out);
        Some(events.len())
    }
}

/// Append each event's JSON and a newline.
fn write_events(events: &[crate::Event], out: &mut Vec<u8>) {
    for event in events {
        event.write_json(out);
        out.push(b'\n');
    }
}
