//! Reading checkpoint JSON without building its items' trees.
//!
//! Most of a checkpoint is item content that restoring never reads: observations no later event can change. A
//! restore therefore keeps each item's content as the text the checkpoint holds when that text is canonical
//! (exactly what this library would write for it), and parses it only otherwise. Checkpoints laid out as the
//! writers lay them out (compact, fields in declaration order) are read in one pass by [`scan_checkpoint`];
//! anything else is decoded in full by serde, which also says precisely what is wrong with a bad one.

use std::borrow::Cow;

use indexmap::IndexMap;
use serde::Deserialize;
use serde_json::value::RawValue;

use super::restoring::{RawContent, Restoring};
use super::store::Header;
use super::stream_id::StreamId;
use super::{ContentRef, ItemKind, ItemState};
use crate::canonical::Scratch;
use crate::scan::Scanner;
use crate::time::{TimeReader, UtcTime};

/// A checkpoint item as serde decodes it, for checkpoints the scanner leaves alone.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct DecodedItem<'a> {
    id: String,
    ordinal: u64,
    kind: ItemKind,
    state: ItemState,
    #[serde(borrow)]
    first_stream_id: Cow<'a, str>,
    #[serde(borrow)]
    last_stream_id: Cow<'a, str>,
    started_at: UtcTime,
    ended_at: Option<UtcTime>,
    #[serde(borrow)]
    content: &'a RawValue,
    #[serde(default)]
    content_refs: IndexMap<String, ContentRef>,
}

impl<'a> DecodedItem<'a> {
    /// Add the item to a store being restored.
    pub(super) fn push_into(self, restoring: &mut Restoring<'a>) {
        let content = self.content.get();
        let positions = (&*self.first_stream_id, &*self.last_stream_id);
        let header = Header::from_text(self.ordinal, self.kind, self.state, positions, self.started_at, self.ended_at);
        let content = RawContent::read(content, is_canonical(content), None);
        restoring.push(self.id, header, content, Some(self.content_refs));
    }
}

/// Whether JSON text is exactly what this library writes for the value it holds (compact, canonical escapes,
/// plain integers, no repeated keys), so it can be kept byte for byte.
pub(super) fn is_canonical(text: &str) -> bool {
    Scanner::new(text).canonical_value().is_some_and(|value| value.len() == text.len())
}

/// The items (in a store being restored) and the continuation's text of a checkpoint laid out as the writers lay
/// it out: `{"items":[…],"continuation":…}`, each item's fields in declaration order without whitespace. `None`
/// for any other layout or anything malformed: the caller then decodes the checkpoint in full.
pub(super) fn scan_checkpoint(text: &str) -> Option<(Restoring<'_>, &str)> {
    let mut scanner = Scanner::new(text);
    scanner.literal(br#"{"items":["#)?;
    // A fold's item takes 200 bytes at the least (its fields' names and id alone take 150), so this seldom grows,
    // and it reserves no more than about the text's own size.
    let mut items = Restoring::new(text, text.len() / 192);
    let mut scratch = Scratch::with_skeletons();
    let mut times = TimeReader::default();
    if scanner.literal(b"]").is_none() {
        loop {
            scan_item(&mut scanner, &mut scratch, &mut times, &mut items)?;
            if scanner.literal(b",").is_none() {
                scanner.literal(b"]")?;
                break;
            }
        }
    }
    scanner.literal(br#","continuation":"#)?;
    // The rest but the closing brace is the continuation; serde decodes it (and rejects anything after it).
    let rest = scanner.rest();
    let continuation = rest.trim_end().strip_suffix('}')?;
    Some((items, continuation))
}

/// An item's stream position: as written, read in place; spelled otherwise, read as a string.
fn stream_id(scanner: &mut Scanner<'_>) -> Option<StreamId> {
    match scanner.read_with(StreamId::read) {
        Some(id) => Some(id),
        None => Some(StreamId::parse(&scanner.string()?)),
    }
}

/// An item's time: as written, read in place (quickly within the minute of the one before); spelled otherwise,
/// read as a string.
fn time(scanner: &mut Scanner<'_>, times: &mut TimeReader) -> Option<UtcTime> {
    match scanner.read_with(|bytes, at| times.read(bytes, at)) {
        Some(time) => Some(time),
        None => UtcTime::parse(&scanner.string()?).ok(),
    }
}

/// Scan the next item into `items`.
fn scan_item<'a>(
    scanner: &mut Scanner<'a>,
    scratch: &mut Scratch,
    times: &mut TimeReader,
    items: &mut Restoring<'a>,
) -> Option<()> {
    scanner.literal(br#"{"id":"#)?;
    let id = scanner.string()?.into_owned();
    scanner.literal(br#","ordinal":"#)?;
    let ordinal = u64::try_from(scanner.integer()?).ok()?;
    scanner.literal(br#","kind":"#)?;
    let kind = ItemKind::ALL.into_iter().find(|kind| scanner.quoted(kind.as_str()))?;
    scanner.literal(br#","state":"#)?;
    let state = ItemState::ALL.into_iter().find(|state| scanner.quoted(state.as_str()))?;
    // Most items (every observation) end where they start, in position and time: the same text again is the
    // same value, so it is compared rather than read twice.
    scanner.literal(br#","first_stream_id":"#)?;
    let from = scanner.position();
    let first = stream_id(scanner)?;
    let first_text = scanner.scanned_since(from);
    scanner.literal(br#","last_stream_id":"#)?;
    let last = match scanner.literal(first_text) {
        Some(()) => first.clone(),
        None => stream_id(scanner)?,
    };
    scanner.literal(br#","started_at":"#)?;
    let from = scanner.position();
    let started_at = time(scanner, times)?;
    let started_text = scanner.scanned_since(from);
    scanner.literal(br#","ended_at":"#)?;
    let ended_at = if scanner.literal(b"null").is_some() {
        None
    } else if scanner.literal(started_text).is_some() {
        Some(started_at)
    } else {
        Some(time(scanner, times)?)
    };
    scanner.literal(br#","content":"#)?;
    // Canonical text is taken in the same pass that checks it; other text is skipped and parsed on restore.
    let mut probe = scanner.clone();
    let (content, canonical) = match probe.canonical_value_in(scratch) {
        Some(content) => {
            *scanner = probe;
            (content, true)
        }
        None => (scanner.raw_value()?, false),
    };
    let content_at = scanner.position() - content.len();
    let content_refs = match scanner.literal(br#","content_refs":"#) {
        Some(()) => Some(serde_json::from_str(scanner.raw_value()?).ok()?),
        None => None,
    };
    scanner.literal(b"}")?;
    let header = Header { ordinal, kind, state, first, last, started_at, ended_at };
    items.push(id, header, RawContent::read(content, canonical, Some(content_at)), content_refs);
    Some(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Value};

    /// Canonical is the whole text (what counts as canonical is `canonical`'s to test).
    #[test]
    fn canonical_text_is_the_whole_text() {
        assert!(is_canonical(r#"{"a":"x y\n","b":[1,null,true]}"#));
        assert!(!is_canonical(r#"{"a":1} "#));
        assert!(!is_canonical(r#"{"a":1}{"#));
    }

    #[test]
    fn the_writers_layout_is_scanned_and_any_other_is_left_to_serde() {
        let item = r#"{"id":"itm_1","ordinal":1,"kind":"observation","state":"completed","first_stream_id":"0-1","last_stream_id":"0-1","started_at":"2026-11-29T12:00:00Z","ended_at":null,"content":{"x":1.5}}"#;
        let second = item.replace("itm_1", "itm_2").replace(r#"{"x":1.5}"#, r#"{"x":2}"#);
        let text = format!(r#"{{"items":[{item},{second}],"continuation":{{"run_id":"r"}}}}"#);
        let (items, continuation) = scan_checkpoint(&text).expect("the writers' layout scans");
        assert_eq!(continuation, r#"{"run_id":"r"}"#);
        let store = items.finish(3, None).expect("a valid checkpoint");
        let contents: Vec<_> = store.items().map(|item| Value::Object(item.content)).collect();
        assert_eq!(contents, [json!({"x": 1.5}), json!({"x": 2})]);
        for odd in [
            text.replace(r#""ordinal":1,"kind""#, r#""kind""#),
            text.replace(r#"{"items""#, r#"{ "items""#),
            text.replace(r#""ended_at":null"#, r#""ended_at":7"#),
            text.replace(r#""kind":"observation""#, r#""kind":"note""#),
        ] {
            assert!(scan_checkpoint(&odd).is_none(), "{odd}");
        }
    }
}
