//! The carried lane of [`DisplayFold::fold_line`]: a line the observer carries through as one `CUSTOM` event (a
//! Harness lifecycle event or inline delegation, a tool-call part's start, a function tool call) becomes one
//! sealed observation item; a delegation's `SUBAGENT_*` event becomes one before it; a tool result the observer
//! does not present folds into its call's item, which it fails.
//! The general path would decode the line into a tree, convert it, turn the event into an object, fold it by
//! its keys and serialize the item; the lane writes the event's value once from the scanned line
//! ([`CarriedLine`]) and uses those bytes for both the observed line and the item's sealed content.

use super::item::{observation_id, write_observed_line, ObservedItem};
use super::rules::{failed_result, validate_event};
use super::store::Change;
use super::stream_id::StreamId;
use super::{DisplayFold, ItemKind, ItemRef, ItemState};
use crate::agui::Event;
use crate::extension::Extension;
use crate::fields::{agui_key, item_key, source_key};
use crate::json::{write_pydantic_str, Object};
use crate::lanes::carried_line::{Carried, CarriedLine};
use crate::time::UtcTime;

impl DisplayFold {
    /// How many events, when the line's run may take the lane and the line is folded and written.
    pub(super) fn fold_carried(&mut self, line: &CarriedLine<'_>, out: &mut Vec<u8>) -> Option<usize> {
        // A fold that keeps full content shows no native part observations: the general path says so.
        if let Carried::ToolCallStart { .. } = line.carried {
            if self.content.full_content() {
                return None;
            }
        }
        let child = self.observer.carries_in_any_run(&line.head.thread_id, &line.head.run_id)?;
        let delegation = match line.carried {
            Carried::Delegation { .. } => Some(self.observer.delegation_in_any_run(line)?),
            _ => None,
        };
        let mut value = Vec::with_capacity(512);
        line.write_value(&mut value);
        if let Carried::UnpresentedResult = line.carried {
            return self.fold_unpresented_result(line, child, &value, out);
        }
        let mut content = Vec::with_capacity(value.len() + 64);
        content.extend_from_slice(br#"{"name":"#);
        write_pydantic_str(&mut content, line.name);
        content.extend_from_slice(br#","value":"#);
        content.extend_from_slice(&value);
        if child {
            content.extend_from_slice(br#","subagentRunId":"#);
            write_pydantic_str(&mut content, &line.head.run_id);
        }
        content.push(b'}');
        // The scanned line is UTF-8 and every piece is canonical JSON, so this holds; if it did not, the general path
        // decides.
        let content = String::from_utf8(content).ok()?.into_boxed_str();
        // A completed child's closing events fold first; they change nothing when they cannot all fold.
        let closed = match &delegation {
            Some(plan) => self.fold_events(&plan.closing, out)?,
            None => 0,
        };
        // Nothing below can fail; this is what the general path commits, in its order.
        self.fast.forget();
        if let Some(plan) = &delegation {
            self.fold_sealed_event(&plan.event, line.head.at, out);
        }
        let sequence = self.next_sequence();
        if let Carried::Harness(Extension::ModelRequestStarted { .. }) = line.carried {
            let scope = if child { line.head.run_id.to_string() } else { item_key::ROOT_SCOPE.to_owned() };
            self.response_groups.insert(scope, format!("{}:{}:{sequence}", self.run_id, self.attempt));
        }
        let item = self.put_sealed_observation(sequence, content, line.head.at);
        let reference = ObservedItem::from(&item);
        if self.writes_observed {
            write_observed_line(out, sequence, |out| line.write_event(child, &value, out), Some(reference));
        }
        let delegated = usize::from(delegation.is_some());
        self.observer.commit_carried_in(&line.head.run_id, child, &line.carried, delegation);
        Some(1 + closed + delegated)
    }

    /// A tool result the observer does not present: its `CUSTOM` event, read back from the bytes written for it,
    /// folds into its call's item as the general path folds it ([`DisplayFold::observation`]), and the call fails
    /// with the result's message ([`failed_result`]). No source tree is decoded and no event is converted.
    fn fold_unpresented_result(
        &mut self,
        line: &CarriedLine<'_>,
        child: bool,
        value: &[u8],
        out: &mut Vec<u8>,
    ) -> Option<usize> {
        let mut event = Vec::with_capacity(value.len() + 160);
        line.write_event(child, value, &mut event);
        let payload: Object = serde_json::from_slice(&event).ok()?;
        // Checked before anything changes, as the general path checks every event first.
        validate_event(&payload).ok()?;
        let part = payload.get(agui_key::VALUE)?.get(source_key::EVENT)?.get(source_key::PART)?.as_object()?;
        let failure = failed_result(part);
        self.fast.forget();
        let sequence = self.next_sequence();
        let mut item = self.observation(&payload);
        if let Some((call_id, message)) = failure {
            let (at, run_id) = (self.occurred(&payload), child.then_some(&*line.head.run_id));
            item = self.fail_tool_call(&call_id, message, at, run_id).or(item);
        }
        if self.writes_observed {
            write_observed_line(
                out,
                sequence,
                |out| out.extend_from_slice(&event),
                item.as_ref().map(ObservedItem::from),
            );
        }
        self.observer.commit_carried_in(&line.head.run_id, child, &line.carried, None);
        Some(1)
    }

    /// Fold a run's or subagent's lifecycle event (`RUN_*`, `SUBAGENT_*`) as the general path does: the next
    /// sequence, and one sealed observation item holding the whole event.
    fn fold_sealed_event(&mut self, event: &Event, at: UtcTime, out: &mut Vec<u8>) {
        let sequence = self.next_sequence();
        let item = self.put_sealed_observation(sequence, event.to_json().into_boxed_str(), at);
        if self.writes_observed {
            write_observed_line(
                out,
                sequence,
                |out| drop(crate::json::to_python_writer(out, event)),
                Some(ObservedItem::from(&item)),
            );
        }
    }

    /// The next event's sequence, sealing a held argument stream it does not continue.
    pub(super) fn next_sequence(&mut self) -> u64 {
        self.sequence += 1;
        if self.arguments.held.as_ref().is_some_and(|held| held.sequence() + 1 < self.sequence) {
            self.seal_arguments();
        }
        self.sequence
    }

    /// The observation item of the event folded as `sequence`, whose content is already its canonical text.
    fn put_sealed_observation(&mut self, sequence: u64, content: Box<str>, at: UtcTime) -> ItemRef {
        let key = observation_id(&self.run_id, self.attempt, sequence);
        let position = StreamId::At { attempt: self.attempt, sequence };
        self.store.put_sealed(
            key,
            Change { kind: ItemKind::Observation, state: ItemState::Completed, position, at },
            content,
        )
    }
}
