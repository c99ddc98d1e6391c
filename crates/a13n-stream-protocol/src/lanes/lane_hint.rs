//! Which fast lane a source line is for. A line is sent by its `event_kind` (and a part's start or end by its
//! `part_kind`) to one lane's scanner rather than tried against each in turn, so a line no lane takes is scanned
//! by none. The hint only chooses; the lane's own scan checks everything, and a line it refuses takes the general
//! path. [`take_in_lane`] is the one dispatch both the observer and the display fold use.

use std::sync::LazyLock;

use memchr::memmem::{Finder, FinderRev};

use crate::fields::event_kind as kinds;
use crate::fields::source_key;
use crate::json::may_hold_long_integer;
use crate::lanes::carried_line::CarriedLine;
use crate::lanes::compact::compacted;
use crate::lanes::delta_line::{ArgsDelta, ContentDelta, LaneLine};
use crate::lanes::delta_memo::DeltaMemo;
use crate::lanes::input_line::InputLine;
use crate::lanes::lane_counts::{FastLane, LaneFor, LanePath};
use crate::lanes::part_line::{PartLine, ToolReturnLine};
use crate::names;
use crate::source_model::laid_out_memo::LaidOutMemo;
use crate::source_model::layout::LayoutMemo;

/// What takes lines through the fast lanes (the observer, the display fold): one method per lane, each
/// returning how many events it wrote, or `None` with nothing changed or written.
pub(crate) trait Lanes {
    fn content(&mut self, delta: &ContentDelta<'_>, out: &mut Vec<u8>) -> Option<usize>;
    fn arguments(&mut self, delta: &ArgsDelta<'_>, out: &mut Vec<u8>) -> Option<usize>;
    fn part(&mut self, line: &PartLine<'_>, out: &mut Vec<u8>) -> Option<usize>;
    fn carried(&mut self, line: &CarriedLine<'_>, out: &mut Vec<u8>) -> Option<usize>;
    fn tool_return(&mut self, line: &ToolReturnLine<'_>, out: &mut Vec<u8>) -> Option<usize>;
    /// A text input ([`InputLine`]).
    fn input(&mut self, line: &InputLine<'_>, out: &mut Vec<u8>) -> Option<usize>;
    /// What the taker reads its lines by.
    fn memos(&mut self) -> &mut LaneMemos;
}

/// What a line's lane scan reads it by besides the line: the last part delta scanned in full, the lines found in
/// their model's layout, and the lines laid out in it. All depend on the lines read alone, never on a taker's
/// state, so lines can be read ahead of taking them (see [`crate::read_ahead::ReadAhead`]).
#[derive(Debug, Default)]
pub(crate) struct LaneMemos {
    pub(crate) delta: DeltaMemo,
    pub(crate) layout: LayoutMemo,
    pub(crate) laid_out: LaidOutMemo,
}

/// What the lanes' scans made of a line: the lane it is for and what that lane reads, or no lane.
pub(crate) enum Scanned<'a> {
    Content(ContentDelta<'a>),
    Arguments(ArgsDelta<'a>),
    Part(PartLine<'a>),
    Carried(CarriedLine<'a>),
    ToolReturn(ToolReturnLine<'a>),
    Input(InputLine<'a>),
    /// No lane takes the line: it takes the general path, for the reason given.
    General(LanePath),
}

impl Scanned<'_> {
    /// The lane that read the line, or why none did.
    pub(crate) fn lane(&self) -> Result<FastLane, LanePath> {
        Ok(match self {
            Scanned::Content(_) => FastLane::Content,
            Scanned::Arguments(_) => FastLane::Arguments,
            Scanned::Part(_) => FastLane::Part,
            Scanned::Carried(_) => FastLane::Carried,
            Scanned::ToolReturn(_) => FastLane::ToolReturn,
            Scanned::Input(_) => FastLane::Input,
            Scanned::General(why) => return Err(*why),
        })
    }
}

/// Take `line` through the lane it is for, as spelled or spelled otherwise ([`respell`]); `None` (nothing changed
/// or written) when no lane takes it.
pub(crate) fn take_in_lane(lanes: &mut impl Lanes, line: &str, out: &mut Vec<u8>) -> Option<usize> {
    let scanned = scan_for_lane(lanes.memos(), line, false);
    take_scanned_or_respelled(lanes, line, &scanned, Respell::Now, out).map(|(_, count)| count)
}

/// Where the first other spelling of a line no lane took as spelled comes from ([`first_spelling`]).
#[derive(Clone, Copy)]
pub(crate) enum Respell<'r> {
    /// Made now, by the taker.
    Now,
    /// Made by the reader that read the line ahead ([`respelled_ahead`]): `None` where there is none to try.
    Ahead(Option<&'r Respelled>),
}

/// A line spelled otherwise for a lane: the first spelling [`respell`] tries.
#[derive(Debug)]
pub(crate) enum Respelled {
    /// Without the whitespace beside its structural characters ([`compacted`]).
    Compacted(String),
    /// In its model's layout ([`LaidOutMemo::laid_out`]).
    LaidOut(String),
}

/// Take `line`, which its lane's scan read as `scanned`, through that lane, or else spelled otherwise ([`respell`],
/// its first spelling from `first`): the path that took it and how many events it wrote, or `None` (nothing
/// changed or written) when no lane takes it.
pub(crate) fn take_scanned_or_respelled(
    lanes: &mut impl Lanes,
    line: &str,
    scanned: &Scanned<'_>,
    first: Respell<'_>,
    out: &mut Vec<u8>,
) -> Option<(LanePath, usize)> {
    if let (Some(count), Ok(lane)) = (take_scanned(lanes, scanned, out), scanned.lane()) {
        return Some((LanePath::Taken(lane), count));
    }
    let Scanned::General(why) = scanned else { return None };
    // The memo is lent out while the lanes take a spelling (their scans read the other memos).
    let mut memo = std::mem::take(&mut lanes.memos().laid_out);
    let taken = respell(line, *why, &mut memo, first, |text, path| {
        take_spelled(lanes, text, out).map(|(lane, count)| (path(lane), count))
    });
    lanes.memos().laid_out = memo;
    taken
}

/// Whether a line no lane took for this reason may be taken spelled otherwise: it is not in its model's layout, or
/// its lane's scan declined it.
fn respellable(why: LanePath) -> bool {
    matches!(why, LanePath::NotInLayout | LanePath::ScanDeclined(_))
}

/// The first other spelling of a line to try: without the whitespace beside its structural characters where it
/// has some ([`compacted`]), else in its model's layout, where that is another text. A line of a shape laid out
/// before has none to leave out ([`LaidOutMemo::by_shape`]), so the memo is asked first, which spares a line whose
/// text holds `", "` the reading for whitespace.
fn first_spelling(line: &str, memo: &mut LaidOutMemo) -> Option<Respelled> {
    let laid = match memo.by_shape(line) {
        Some(laid) => laid,
        None => match compacted(line) {
            Some(compact) => return Some(Respelled::Compacted(compact)),
            None => memo.read(line)?,
        },
    };
    (laid != line).then_some(Respelled::LaidOut(laid))
}

/// The rule for a line no lane took as spelled, for a reason `why` that allows it ([`respellable`]): `attempt` is
/// given the line spelled as the writers spell it, first without the whitespace beside its structural characters
/// ([`compacted`], where it has some), then, if that is not in its model's layout or its lane's scan declined it,
/// with its keys in the layout's order, its defaults written and the keys its model drops left out
/// ([`LaidOutMemo::laid_out`]), where that is another text. The first spelling is made now or was made by a reader
/// (`first`). `attempt` says what a lane made of a spelling (given the path that names it), or why none took it.
/// The general path reads every spelling alike, and a lane takes each one exactly as the general path reads it.
fn respell<T>(
    line: &str,
    why: LanePath,
    memo: &mut LaidOutMemo,
    first: Respell<'_>,
    mut attempt: impl FnMut(&str, fn(FastLane) -> LanePath) -> Result<T, LanePath>,
) -> Option<T> {
    if !respellable(why) {
        return None;
    }
    let made;
    let first = match first {
        Respell::Now => {
            made = first_spelling(line, memo)?;
            &made
        }
        Respell::Ahead(first) => first?,
    };
    let compact = match first {
        Respelled::LaidOut(laid) => return attempt(laid, LanePath::LaidOut).ok(),
        Respelled::Compacted(compact) => compact,
    };
    match attempt(compact, LanePath::Compacted) {
        Ok(taken) => return Some(taken),
        // Laying out can also help a line in layout that its lane's scan declined (its item has a key no writer
        // writes, which laying out leaves out).
        Err(why) if respellable(why) => {}
        Err(_) => return None,
    }
    let laid = memo.laid_out(compact).filter(|laid| laid != compact)?;
    attempt(&laid, LanePath::LaidOut).ok()
}

/// What a reader ahead of the taker makes of a line its scan read as `scanned`: the first other spelling to try
/// ([`first_spelling`]), which the taker then scans and takes ([`Respell::Ahead`]; it lays out a compact spelling
/// its lane does not take itself). The reader does that work, so that a journal written in another layout is not
/// all the taker's, and scans nothing twice.
pub(crate) fn respelled_ahead(memos: &mut LaneMemos, line: &str, scanned: &Scanned<'_>) -> Option<Respelled> {
    let Scanned::General(why) = scanned else { return None };
    respellable(*why).then(|| first_spelling(line, &mut memos.laid_out)).flatten()
}

/// `line` scanned and taken through its lane: the lane and how many events it wrote, or why no lane took it (with
/// nothing changed or written).
fn take_spelled(lanes: &mut impl Lanes, line: &str, out: &mut Vec<u8>) -> Result<(FastLane, usize), LanePath> {
    let scanned = scan_for_lane(lanes.memos(), line, false);
    let lane = scanned.lane()?;
    take_scanned(lanes, &scanned, out).map(|count| (lane, count)).ok_or(LanePath::TakeDeclined(lane))
}

/// Read `line` for its lane: the scan alone, which changes nothing but the memos. With `for_fold` (a reader reads
/// the line ahead of a fold, on another thread), an argument delta read in full, which may open a stream, also makes the
/// stream's identity ([`ArgsDelta::prepare`]).
pub(crate) fn scan_for_lane<'a>(memos: &mut LaneMemos, line: &'a str, for_fold: bool) -> Scanned<'a> {
    // The lanes copy numbers as written: one Python's `json` would refuse is the general path's to refuse.
    if may_hold_long_integer(line) {
        return Scanned::General(LanePath::NoLane);
    }
    match memos.delta.read(line) {
        Some(LaneLine::Arguments(delta)) => return Scanned::Arguments(delta),
        Some(LaneLine::Content(delta)) => return Scanned::Content(delta),
        None => {}
    }
    // Every writer's dump opens `{"thread_id":` and has no whitespace between its tokens: a line opening otherwise
    // (sorted keys put `event` first; `json.dumps` spaces by default) is in no layout the lanes take, which its
    // opening tells without walking the line.
    if !opens_as_written(line) {
        return Scanned::General(LanePath::NotInLayout);
    }
    let Some(lane_for) = lane_hint(line) else { return Scanned::General(LanePath::NoLane) };
    // The lanes copy what they scan: a line spelled otherwise than its model's dump takes the general path.
    let Some(layout) = memos.layout.in_layout(lane_for as usize, line) else {
        return Scanned::General(LanePath::NotInLayout);
    };
    let canonical_event = layout.canonical_event;
    let scanned = match lane_for {
        LaneFor::Delta => LaneLine::scan(line).map(|scanned| match scanned {
            LaneLine::Content(delta) => {
                memos.delta.remember_content(line, &delta);
                Scanned::Content(delta)
            }
            LaneLine::Arguments(mut delta) => {
                delta.memo_line = memos.delta.remember(line, &delta);
                if for_fold {
                    delta.prepare();
                }
                Scanned::Arguments(delta)
            }
        }),
        LaneFor::Part => match PartLine::scan(line) {
            Some(part) => Some(Scanned::Part(part)),
            // A tool call's start is carried through whole.
            None => CarriedLine::scan(line, canonical_event).map(Scanned::Carried),
        },
        LaneFor::Carried => CarriedLine::scan(line, canonical_event).map(Scanned::Carried),
        LaneFor::ToolReturn => match ToolReturnLine::scan(line) {
            Some(tool_return) => Some(Scanned::ToolReturn(tool_return)),
            // A result the observer does not present is carried through whole.
            None => CarriedLine::scan(line, canonical_event).map(Scanned::Carried),
        },
        LaneFor::Input => InputLine::scan(line).map(Scanned::Input),
    };
    scanned.unwrap_or(Scanned::General(LanePath::ScanDeclined(lane_for)))
}

/// Take a scanned line through its lane; `None` (nothing changed or written) when the lane refuses it.
pub(crate) fn take_scanned(lanes: &mut impl Lanes, scanned: &Scanned<'_>, out: &mut Vec<u8>) -> Option<usize> {
    let written = out.len();
    let taken = match scanned {
        Scanned::Content(delta) => lanes.content(delta, out),
        Scanned::Arguments(delta) => lanes.arguments(delta, out),
        Scanned::Part(part) => lanes.part(part, out),
        Scanned::Carried(carried) => lanes.carried(carried, out),
        Scanned::ToolReturn(tool_return) => lanes.tool_return(tool_return, out),
        Scanned::Input(input) => lanes.input(input, out),
        Scanned::General(_) => None,
    };
    // The general path writes the line a lane declined: a lane that declines must have written nothing (held in
    // debug builds: `cargo test` without `--release`, and the fuzz targets).
    debug_assert!(taken.is_some() || out.len() == written, "a lane declined a line after writing to it");
    taken
}

/// The lanes `line`'s `event_kind` points to (`None`: the general path, for anything else and a part of a kind no
/// part lane takes). A Pydantic event's dump ends with its `event_kind`, so it is read from the end first.
/// Where the hint is wrong, a lane refuses the line or it takes the general path: the result is the same.
pub(crate) fn lane_hint(line: &str) -> Option<LaneFor> {
    const KEY: &str = r#""event_kind":""#;
    let bytes = line.as_bytes();
    // A dump ends `…"event_kind":"<kind>"}}`; any other layout is searched.
    let end = bytes.len().saturating_sub(3);
    let at_end = (bytes.get(end..) == Some(br#""}}"#.as_slice()))
        .then(|| bytes[..end].iter().rposition(|&byte| byte == b'"'))
        .flatten()
        .and_then(|open| (open + 1).checked_sub(KEY.len()))
        // Compared as bytes: `at` need not fall on a character boundary.
        .filter(|&at| bytes[at..].starts_with(KEY.as_bytes()));
    // Searched forwards, which is several times faster than backwards: a nested `event_kind` found first (a
    // tool's result holding one) only sends the line to a lane that refuses it.
    // The searcher is built once: building it is a good part of searching one line.
    static FINDER: LazyLock<Finder<'static>> = LazyLock::new(|| Finder::new(KEY));
    let Some(at) = at_end.or_else(|| FINDER.find(bytes)) else {
        return Some(LaneFor::Carried);
    };
    match quoted_after(line, at + KEY.len()) {
        kinds::PART_DELTA => Some(LaneFor::Delta),
        kinds::PART_START => part_hint(line, at, true),
        kinds::PART_END => part_hint(line, at, false),
        "function_tool_call" => Some(LaneFor::Carried),
        kinds::FUNCTION_TOOL_RESULT | kinds::OUTPUT_TOOL_RESULT => Some(LaneFor::ToolReturn),
        kinds::CAPABILITY => input_hint(line),
        _ => None,
    }
}

/// The input lane for a capability event whose `kind` is a text input; no lane for any other capability.
fn input_hint(line: &str) -> Option<LaneFor> {
    // Found as written: inside a string, the quotes would be escaped.
    static FINDER: LazyLock<Finder<'static>> =
        LazyLock::new(|| Finder::new(format!(r#""kind":"{}""#, names::INPUT_TEXT).as_bytes()).into_owned());
    FINDER.find(line.as_bytes()).map(|_| LaneFor::Input)
}

/// The lane of a part's start or end, by the last `part_kind` before its `event_kind` at `event_at` (the part's,
/// in a dump).
fn part_hint(line: &str, event_at: usize, start: bool) -> Option<LaneFor> {
    const KEY: &str = r#""part_kind":""#;
    static FINDER: LazyLock<FinderRev<'static>> = LazyLock::new(|| FinderRev::new(KEY));
    let Some(at) = FINDER.rfind(&line.as_bytes()[..event_at]) else {
        return Some(LaneFor::Part);
    };
    match quoted_after(line, at + KEY.len()) {
        // A tool call's start is carried; its end presents the call.
        "tool-call" if start => Some(LaneFor::Carried),
        "text" | "thinking" | "tool-call" => Some(LaneFor::Part),
        // No part lane takes any other kind.
        _ => None,
    }
}

/// Whether `line` opens as the writers' dumps do: `{"thread_id":` and then its value, no whitespace between.
fn opens_as_written(line: &str) -> bool {
    let value = line.strip_prefix("{\"").and_then(|rest| rest.strip_prefix(source_key::THREAD_ID));
    value.and_then(|rest| rest.strip_prefix("\":")).is_some_and(|rest| !rest.starts_with([' ', '\t', '\n', '\r']))
}

/// The text from `from` to the next quote (all of it when there is none).
fn quoted_after(line: &str, from: usize) -> &str {
    let rest = &line[from..];
    &rest[..rest.find('"').unwrap_or(rest.len())]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_hint_follows_the_event_kind() {
        let line = |event: &str| format!(r#"{{"thread_id":"t","run_id":"r","event":{event}}}"#);
        assert_eq!(lane_hint(&line(r#"{"index":0,"part":{},"event_kind":"part_end"}"#)), Some(LaneFor::Part));
        assert_eq!(lane_hint(&line(r#"{"index":0,"delta":{},"event_kind":"part_delta"}"#)), Some(LaneFor::Delta));
        let part =
            |kind: &str, event: &str| line(&format!(r#"{{"part":{{"part_kind":"{kind}"}},"event_kind":"{event}"}}"#));
        assert_eq!(lane_hint(&part("tool-call", "part_start")), Some(LaneFor::Carried));
        assert_eq!(lane_hint(&part("tool-call", "part_end")), Some(LaneFor::Part));
        assert_eq!(lane_hint(&part("text", "part_start")), Some(LaneFor::Part));
        assert_eq!(lane_hint(&part("thinking", "part_end")), Some(LaneFor::Part));
        assert_eq!(lane_hint(&part("builtin-tool-call", "part_start")), None);
        assert_eq!(lane_hint(&line(r#"{"event_kind":"part_start","index":0}"#)), Some(LaneFor::Part));
        assert_eq!(lane_hint(&line(r#"{"kind":"lifecycle","payload":{}}"#)), Some(LaneFor::Carried));
        assert_eq!(lane_hint(&line(r#"{"part":{},"event_kind":"function_tool_call"}"#)), Some(LaneFor::Carried));
        assert_eq!(lane_hint(&line(r#"{"part":{},"event_kind":"output_tool_result"}"#)), Some(LaneFor::ToolReturn));
        assert_eq!(lane_hint(&line(r#"{"event_kind":"final_result"}"#)), None);
        let input = r#"{"kind":"a13n.input.text","event_kind":"capability","content":"\"kind\":\"a13n.input.text\""}"#;
        assert_eq!(lane_hint(&line(input)), Some(LaneFor::Input));
        // Another capability's kind, even with the input's kind inside a string: no lane.
        let edit = r#"{"kind":"a13n.filesystem.edit_applied","after":"\"kind\":\"a13n.input.text\"","event_kind":"capability"}"#;
        assert_eq!(lane_hint(&line(edit)), None);
        assert_eq!(lane_hint(r#"{"event_kind":""#), None);
        assert_eq!(lane_hint(r#""}}"#), Some(LaneFor::Carried));
    }

    #[test]
    fn a_line_opening_otherwise_than_a_dump_is_known_at_once() {
        assert!(opens_as_written(r#"{"thread_id":"t","run_id":"r"}"#));
        assert!(opens_as_written(r#"{"thread_id":1"#));
        for other in [
            r#"{"event":{},"thread_id":"t"}"#,
            r#"{ "thread_id":"t"}"#,
            r#"{"thread_id": "t"}"#,
            r#"{"thread_id" :"t"}"#,
            "{\"thread_id\":\t\"t\"}",
            r#"{"thread_id\u0020":"t"}"#,
            r#"{"thread_idx":"t"}"#,
            "",
            "[]",
        ] {
            assert!(!opens_as_written(other), "{other}");
        }
    }

    /// Found by the `fold_lanes` fuzz target: where the key would start can fall inside a character.
    #[test]
    fn a_line_ending_like_a_dump_inside_a_character_is_no_dump() {
        let line = format!("x{}\"\"}}}}", "\u{1f680}".repeat(4));
        assert_eq!(line.len(), 21);
        assert_eq!(lane_hint(&line), Some(LaneFor::Carried));
    }
}
