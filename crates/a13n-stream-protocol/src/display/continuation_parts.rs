//! Reading a checkpoint's continuation for a restore: the state, and the argument stream it holds.
//!
//! A continuation laid out as this library writes it (fields in declaration order, compact) is read field by
//! field, so that the held argument stream can stay text (see [`Held`]); any other is decoded in full by serde,
//! which also says what is wrong with a bad one.

use indexmap::IndexMap;

use super::checkpoint::DisplayContinuation;
use super::held::Held;
use super::item::StreamPosition;
use crate::scan::Scanner;

/// A continuation as a restore takes it.
pub(super) struct ContinuationParts {
    /// The state, without the held argument stream.
    pub(super) state: DisplayContinuation,
    pub(super) held: Option<Held>,
}

impl From<DisplayContinuation> for ContinuationParts {
    fn from(mut state: DisplayContinuation) -> ContinuationParts {
        let held = state.arguments.take().map(Held::Decoded);
        ContinuationParts { state, held }
    }
}

impl ContinuationParts {
    /// Read continuation JSON: what decoding it as a [`DisplayContinuation`] accepts, with the same errors.
    pub(super) fn read(text: &str) -> Result<ContinuationParts, serde_json::Error> {
        match ContinuationParts::scan(text) {
            Some(parts) => Ok(parts),
            None => serde_json::from_str::<DisplayContinuation>(text).map(ContinuationParts::from),
        }
    }

    /// A continuation in the writer's layout, read field by field; `None` for anything else.
    fn scan(text: &str) -> Option<ContinuationParts> {
        fn decoded<'a, T: serde::Deserialize<'a>>(scanner: &mut Scanner<'a>) -> Option<T> {
            serde_json::from_str(scanner.raw_value()?).ok()
        }
        fn number(scanner: &mut Scanner<'_>) -> Option<u64> {
            u64::try_from(scanner.integer()?).ok()
        }
        let mut scanner = Scanner::new(text);
        scanner.literal(br#"{"run_id":"#)?;
        let run_id = scanner.string()?.into_owned();
        scanner.literal(br#","position":{"attempt":"#)?;
        let attempt = number(&mut scanner)?;
        scanner.literal(br#","sequence":"#)?;
        let sequence = number(&mut scanner)?;
        scanner.literal(br#"},"next_ordinal":"#)?;
        let next_ordinal = number(&mut scanner)?;
        scanner.literal(br#","full_content":"#)?;
        let full_content = scanner.literal(b"true").is_some();
        if !full_content {
            scanner.literal(b"false")?;
        }
        scanner.literal(br#","response_groups":"#)?;
        let response_groups = decoded(&mut scanner)?;
        let memory_sources = match scanner.literal(br#","memory_sources":"#) {
            Some(()) => decoded(&mut scanner)?,
            None => IndexMap::new(),
        };
        scanner.literal(br#","arguments":"#)?;
        let held = match scanner.literal(b"null") {
            Some(()) => None,
            None => Some(Held::scan(&mut scanner)?),
        };
        scanner.literal(br#","fragments":"#)?;
        let fragments = decoded(&mut scanner)?;
        scanner.literal(br#","observer":"#)?;
        let observer = decoded(&mut scanner)?;
        scanner.literal(b"}")?;
        scanner.end()?;
        let state = DisplayContinuation {
            run_id,
            position: StreamPosition { attempt, sequence },
            next_ordinal,
            full_content,
            response_groups,
            memory_sources,
            arguments: None,
            fragments,
            observer,
        };
        Some(ContinuationParts { state, held })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::display::DisplayFold;

    fn decoded(text: &str) -> Result<DisplayContinuation, String> {
        serde_json::from_str(text).map_err(|error| error.to_string())
    }

    fn read(text: &str) -> Result<DisplayContinuation, String> {
        let parts = ContinuationParts::read(text).map_err(|error| error.to_string())?;
        Ok(DisplayContinuation { arguments: parts.held.as_ref().map(Held::to_decoded), ..parts.state })
    }

    /// Every continuation a fold of the tools example writes is read field by field (held argument streams
    /// included) into what serde decodes from it.
    #[test]
    fn every_written_continuation_reads_as_serde_decodes_it() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/streams/tools.jsonl");
        let lines = std::fs::read_to_string(path).unwrap();
        let mut fold = DisplayFold::new("run-1");
        let (mut out, mut held) = (Vec::new(), 0);
        for line in lines.lines() {
            fold.fold_line(line, &mut out).unwrap();
            let text = fold.export_continuation().to_json();
            let parts = ContinuationParts::scan(&text).unwrap_or_else(|| panic!("the writer's layout: {text}"));
            held += usize::from(matches!(parts.held, Some(Held::Restored { .. })));
            assert_eq!(read(&text), decoded(&text));
        }
        assert!(held > 0, "no cut held an argument stream");
    }

    /// A checkpoint whose held argument stream is spelled otherwise than the writer spells it restores to the
    /// same fold: it exports the writer's bytes and continues as the original does.
    #[test]
    fn a_held_stream_spelled_otherwise_exports_as_the_writer_writes() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/streams/tools.jsonl");
        let lines: Vec<String> = std::fs::read_to_string(path).unwrap().lines().map(str::to_owned).collect();
        let mut fold = DisplayFold::new("run-1");
        let mut out = Vec::new();
        let mut spelled = 0;
        for (at, line) in lines.iter().enumerate() {
            fold.fold_line(line, &mut out).unwrap();
            let checkpoint = fold.export_json();
            if !checkpoint.contains(r#""arguments":{"stream":"#) {
                continue;
            }
            for (from, to) in [(r#""key":"#, r#""key": "#), (r#","size":"#, r#","size": "#)] {
                let other = checkpoint.replacen(from, to, 1);
                let mut restored = DisplayFold::restore_json(&other, false, None).unwrap();
                assert_eq!(restored.export_json(), checkpoint);
                let (mut expected, mut continued) = (Vec::new(), Vec::new());
                let mut original = DisplayFold::restore_json(&checkpoint, false, None).unwrap();
                for line in &lines[at + 1..] {
                    original.fold_line(line, &mut expected).unwrap();
                    restored.fold_line(line, &mut continued).unwrap();
                }
                assert_eq!(continued, expected);
                spelled += 1;
            }
        }
        assert!(spelled > 0, "no cut held an argument stream");
    }

    /// Other layouts and bad continuations are decoded in full: the same value, or the same error.
    #[test]
    fn other_layouts_read_as_serde_decodes_them() {
        let text = r#"{"run_id":"r","position":{"attempt":0,"sequence":3},"next_ordinal":2,"full_content":false,"response_groups":{},"arguments":null,"fragments":{"pending":{},"gap":false,"max_bytes":64,"max_pending":8},"observer":{"thread_id":null,"run_id":null,"state":{"request_index":0,"parts":{},"children":{},"threads":{}}}}"#;
        assert!(ContinuationParts::scan(text).is_some());
        for other in [
            text.replacen(r#"{"run_id""#, r#"{ "run_id""#, 1),
            text.replacen(r#""response_groups":{}"#, r#""response_groups":{"root":1}"#, 1),
            text.replacen(r#""arguments":null"#, r#""arguments":{"key":"k"}"#, 1),
            text.replacen(r#""next_ordinal":2"#, r#""next_ordinal":-2"#, 1),
            text.replacen(r#","fragments""#, r#","extra":1,"fragments""#, 1),
            text.replacen(r#""full_content":false,"#, "", 1),
            format!("{text} x"),
        ] {
            assert!(ContinuationParts::scan(&other).is_none(), "{other}");
            assert_eq!(read(&other), decoded(&other), "{other}");
        }
    }
}
