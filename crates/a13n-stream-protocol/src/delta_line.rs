//! Scanning the commonest source line, a content delta of a part, into borrowed typed fields without a JSON tree:
//! what the fast lanes of [`DisplayFold::fold_line`](crate::DisplayFold::fold_line) and
//! [`HarnessAguiStreamObserver::observe_line`](crate::HarnessAguiStreamObserver::observe_line) read.

use std::borrow::Cow;

use crate::scan::Scanner;

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
