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

use super::stream_id::StreamId;
use super::{ContentRef, ItemKind, ItemState};
use crate::canonical::Scratch;
use crate::scan::Scanner;
use crate::time::{TimeReader, UtcTime};

/// A checkpoint item whose content is still the checkpoint's JSON text.
#[derive(Debug)]
pub(super) struct RawItem<'a> {
    pub(super) id: String,
    pub(super) ordinal: u64,
    pub(super) kind: ItemKind,
    pub(super) state: ItemState,
    pub(super) first_stream_id: StreamId,
    pub(super) last_stream_id: StreamId,
    pub(super) started_at: UtcTime,
    pub(super) ended_at: Option<UtcTime>,
    /// The content's text, as the checkpoint holds it.
    pub(super) content: &'a str,
    /// Whether `content` is canonical, so it can be kept byte for byte.
    pub(super) canonical: bool,
    /// Where `content` starts in the checkpoint text, when the item was scanned from one.
    pub(super) content_at: Option<usize>,
    pub(super) content_refs: IndexMap<String, ContentRef>,
}

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

impl<'a> From<DecodedItem<'a>> for RawItem<'a> {
    fn from(item: DecodedItem<'a>) -> RawItem<'a> {
        let content = item.content.get();
        RawItem {
            id: item.id,
            ordinal: item.ordinal,
            kind: item.kind,
            state: item.state,
            first_stream_id: StreamId::parse(&item.first_stream_id),
            last_stream_id: StreamId::parse(&item.last_stream_id),
            started_at: item.started_at,
            ended_at: item.ended_at,
            content,
            canonical: is_canonical(content),
            content_at: None,
            content_refs: item.content_refs,
        }
    }
}

/// Whether JSON text is exactly what this library writes for the value it holds (compact, canonical escapes,
/// plain integers, no repeated keys), so it can be kept byte for byte.
pub(super) fn is_canonical(text: &str) -> bool {
    Scanner::new(text).canonical_value().is_some_and(|value| value.len() == text.len())
}

/// The items and the continuation's text of a checkpoint laid out as the writers lay it out:
/// `{"items":[…],"continuation":…}`, each item's fields in declaration order without whitespace. `None` for any
/// other layout or anything malformed: the caller then decodes the checkpoint in full.
pub(super) fn scan_checkpoint(text: &str) -> Option<(Vec<RawItem<'_>>, &str)> {
    let mut scanner = Scanner::new(text);
    scanner.literal(br#"{"items":["#)?;
    // A fold's item takes 200 bytes at the least (its fields' names and id alone take 150), so this rarely grows,
    // and it reserves no more than about the text's own size.
    let mut items = Vec::with_capacity(text.len() / 192);
    let mut scratch = Scratch::with_skeletons();
    let mut times = TimeReader::default();
    if scanner.literal(b"]").is_none() {
        loop {
            items.push(scan_item(&mut scanner, &mut scratch, &mut times)?);
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

fn scan_item<'a>(scanner: &mut Scanner<'a>, scratch: &mut Scratch, times: &mut TimeReader) -> Option<RawItem<'a>> {
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
    let first_stream_id = stream_id(scanner)?;
    let first_text = scanner.scanned_since(from);
    scanner.literal(br#","last_stream_id":"#)?;
    let last_stream_id = match scanner.literal(first_text) {
        Some(()) => first_stream_id.clone(),
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
    let content_at = Some(scanner.position() - content.len());
    let content_refs = match scanner.literal(br#","content_refs":"#) {
        Some(()) => serde_json::from_str(scanner.raw_value()?).ok()?,
        None => IndexMap::new(),
    };
    scanner.literal(b"}")?;
    Some(RawItem {
        id,
        ordinal,
        kind,
        state,
        first_stream_id,
        last_stream_id,
        started_at,
        ended_at,
        content,
        canonical,
        content_at,
        content_refs,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

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
        let text = format!(r#"{{"items":[{item},{item}],"continuation":{{"run_id":"r"}}}}"#);
        let (items, continuation) = scan_checkpoint(&text).expect("the writers' layout scans");
        assert_eq!(items.len(), 2);
        assert_eq!((items[0].content, items[0].canonical), (r#"{"x":1.5}"#, false));
        assert_eq!(continuation, r#"{"run_id":"r"}"#);
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
