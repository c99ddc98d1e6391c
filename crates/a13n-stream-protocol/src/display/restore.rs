//! Continuing a fold from a checkpoint: from a decoded snapshot, from checkpoint JSON (read in one pass when it
//! is in the writers' layout), from the parts a host stores, or checked against the run it must belong to.

use serde::Deserialize;

use super::checkpoint::checkpoint_error;
use super::{bound_event, checkpoint_text, ContinuationParts, DecodedItem, Held, Restoring, Store};
use crate::{
    AguiEventProcessor, ContentPolicy, CustomEventAssembler, DisplayContinuation, DisplayFold, DisplayOptions,
    DisplaySnapshot, FoldError, HarnessAguiStreamObserver, InputError,
};

impl DisplayFold {
    /// Continue from a checkpoint. `retain_content` and the processor are host policy, not checkpoint state:
    /// supply the ones the exporting fold had.
    pub fn restore(
        snapshot: DisplaySnapshot,
        retain_content: bool,
        processor: Option<AguiEventProcessor>,
    ) -> Result<DisplayFold, FoldError> {
        snapshot.validate()?;
        let state = snapshot.continuation;
        let bounded = !(state.full_content || retain_content);
        let mut fold = DisplayFold::with_options(
            state.run_id.clone(),
            DisplayOptions {
                attempt: state.position.attempt,
                content: ContentPolicy::new(state.full_content, retain_content),
                ..DisplayOptions::default()
            },
        );
        let open = state.arguments.as_ref().map(|held| held.key.as_str());
        fold.store = Store::new(snapshot.items, state.next_ordinal, open);
        fold.arguments.open = open.is_some();
        fold.sequence = state.position.sequence;
        fold.response_groups = state.response_groups;
        fold.memory_sources = state.memory_sources;
        fold.arguments.held = state.arguments.map(Held::Decoded);
        fold.assembler = CustomEventAssembler::restore(state.fragments)?;
        let mut observer = HarnessAguiStreamObserver::restore(state.observer, processor);
        if bounded {
            observer = observer.with_finish(bound_event);
        }
        fold.observer = observer;
        Ok(fold)
    }

    /// Continue from checkpoint JSON directly: [`DisplaySnapshot::from_json`] and [`DisplayFold::restore`] in
    /// one step, keeping immutable items' text as it is instead of rebuilding it.
    pub fn restore_json(
        text: &str,
        retain_content: bool,
        processor: Option<AguiEventProcessor>,
    ) -> Result<DisplayFold, FoldError> {
        if let Some((items, continuation)) = checkpoint_text::scan_checkpoint(text) {
            if let Ok(continuation) = ContinuationParts::read(continuation) {
                return DisplayFold::restore_items(items, continuation, retain_content, processor);
            }
        }
        #[derive(Deserialize)]
        #[serde(deny_unknown_fields)]
        struct DecodedSnapshot<'a> {
            #[serde(borrow)]
            items: Vec<DecodedItem<'a>>,
            continuation: DisplayContinuation,
        }
        let snapshot: DecodedSnapshot<'_> = serde_json::from_str(text).map_err(checkpoint_error)?;
        let mut items = Restoring::new(text, snapshot.items.len());
        snapshot.items.into_iter().for_each(|item| item.push_into(&mut items));
        DisplayFold::restore_items(items, snapshot.continuation.into(), retain_content, processor)
    }

    /// Continue from a checkpoint held in parts, as a host stores it: each item's JSON (in ordinal order) and the
    /// continuation's JSON. The same as [`DisplayFold::restore_json`] of the checkpoint they make up.
    pub fn restore_parts<'a>(
        items: impl IntoIterator<Item = &'a str>,
        continuation: &str,
        retain_content: bool,
        processor: Option<AguiEventProcessor>,
    ) -> Result<DisplayFold, FoldError> {
        let items = items.into_iter();
        let mut restoring = Restoring::new("", items.size_hint().0);
        for (index, text) in items.enumerate() {
            let item = serde_json::from_str::<DecodedItem<'a>>(text).map_err(|error| {
                FoldError::from(InputError::decoding(format!("items.{index}"), error.to_string(), error))
            })?;
            item.push_into(&mut restoring);
        }
        let continuation = ContinuationParts::read(continuation)
            .map_err(|error| FoldError::from(InputError::decoding("continuation", error.to_string(), error)))?;
        DisplayFold::restore_items(restoring, continuation, retain_content, processor)
    }

    /// Continue from a checkpoint's items, read into a store being restored, and its continuation.
    fn restore_items(
        items: Restoring<'_>,
        continuation: ContinuationParts,
        retain_content: bool,
        processor: Option<AguiEventProcessor>,
    ) -> Result<DisplayFold, FoldError> {
        let ContinuationParts { state, held } = continuation;
        let store = items.finish(state.next_ordinal, held.as_ref().map(Held::key))?;
        let mut fold = DisplayFold::restore(
            DisplaySnapshot { items: Vec::new(), continuation: state },
            retain_content,
            processor,
        )?;
        fold.store = store;
        fold.arguments.open = held.is_some();
        fold.arguments.held = held;
        Ok(fold)
    }

    /// Continue from a checkpoint, rejecting one of another run, attempt or content policy.
    pub fn restore_checked(
        run_id: &str,
        attempt: u64,
        full_content: bool,
        snapshot: DisplaySnapshot,
        retain_content: bool,
        processor: Option<AguiEventProcessor>,
    ) -> Result<DisplayFold, FoldError> {
        let state = &snapshot.continuation;
        if state.run_id != run_id || state.position.attempt != attempt || state.full_content != full_content {
            return Err(FoldError::Continuation(format!(
                "the checkpoint is for run {:?}, attempt {}, full_content {}; this fold is for run {run_id:?}, \
                 attempt {attempt}, full_content {full_content}",
                state.run_id, state.position.attempt, state.full_content
            )));
        }
        DisplayFold::restore(snapshot, retain_content, processor)
    }
}
