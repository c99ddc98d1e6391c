//! Which path each line a fold took: through which fast lane, or on the general path and why. A fold counts them
//! ([`DisplayFold::lane_counts`](crate::DisplayFold::lane_counts), re-exported in [`display`](crate::display)), so that a benchmark can say what its lines
//! cost and where a lane declined.

use std::fmt;

/// A fast lane.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum FastLane {
    /// A text or thinking part's content delta.
    Content,
    /// A tool call's argument delta.
    Arguments,
    /// A text or thinking part's start or end, a tool call's end.
    Part,
    /// A line carried through whole (a Harness extension event, a tool call's start, a function tool call).
    Carried,
    /// A tool's successful return.
    ToolReturn,
    /// A text input (a user's message, steering, a context block).
    Input,
}

/// The lane a line's `event_kind` sends it to, before that lane's scan has read it. (In this order they also number
/// the slots of the layout memo, `crate::source_model::layout::LayoutMemo`.)
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum LaneFor {
    /// A part's delta: the content or the argument lane.
    Delta,
    /// A part's start or end.
    Part,
    /// A line carried through whole.
    Carried,
    /// A tool's return.
    ToolReturn,
    /// A text input's capability event (`a13n.input.text`): the input lane.
    Input,
}

/// The path one line took through a fold.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum LanePath {
    /// A fast lane folded it.
    Taken(FastLane),
    /// A fast lane folded it as spelled without the whitespace beside its structural characters (`json.dumps`'
    /// `", "` and `": "`), after refusing it as spelled (`lanes/compact.rs`).
    Compacted(FastLane),
    /// A fast lane folded it written in its model's layout (keys in order, defaults written, keys the model drops
    /// left out; `source_model/laid_out.rs`), compact, after refusing it as spelled.
    LaidOut(FastLane),
    /// No lane is for its kind (a run result, a capability event other than a text input, ...), or for a line that
    /// may hold an integer Python's `json` refuses (more than 4,300 digits): the general path.
    NoLane,
    /// Its event is not spelled as its model writes it, and no lane took it written in that layout either (an escaped
    /// discriminator, a key given twice, a key its model refuses; or a lane's scan or state declined the laid-out
    /// line): the general path, which decodes it into that layout.
    NotInLayout,
    /// The lane's scan refused it: a field or value the lane does not read (a failed tool result, a non-empty
    /// signature, a tool name delta, an escaped discriminator, ...).
    ScanDeclined(LaneFor),
    /// The lane read it, but the fold's state is not one the lane handles (a part that is not open, a tool call
    /// that is not known, a delta that opens a message): the general path.
    TakeDeclined(FastLane),
}

const LANES: [FastLane; 6] =
    [FastLane::Content, FastLane::Arguments, FastLane::Part, FastLane::Carried, FastLane::ToolReturn, FastLane::Input];
const LANES_FOR: [LaneFor; 5] = [LaneFor::Delta, LaneFor::Part, LaneFor::Carried, LaneFor::ToolReturn, LaneFor::Input];
const PATHS: usize = 4 * LANES.len() + LANES_FOR.len() + 2;

// The layout memo keeps a slot for each.
const _: () = assert!(LANES_FOR.len() == crate::source_model::layout::SLOTS, "a layout memo slot a lane");

impl FastLane {
    /// The lane's name: `content`, `arguments`, `part`, `carried`, `tool_return` or `input`.
    pub fn as_str(self) -> &'static str {
        match self {
            FastLane::Content => "content",
            FastLane::Arguments => "arguments",
            FastLane::Part => "part",
            FastLane::Carried => "carried",
            FastLane::ToolReturn => "tool_return",
            FastLane::Input => "input",
        }
    }
}

impl LaneFor {
    /// The name of the lanes: `delta`, `part`, `carried`, `tool_return` or `input`.
    pub fn as_str(self) -> &'static str {
        match self {
            LaneFor::Delta => "delta",
            LaneFor::Part => "part",
            LaneFor::Carried => "carried",
            LaneFor::ToolReturn => "tool_return",
            LaneFor::Input => "input",
        }
    }
}

impl LanePath {
    fn index(self) -> usize {
        match self {
            LanePath::Taken(lane) => lane as usize,
            LanePath::Compacted(lane) => LANES.len() + lane as usize,
            LanePath::LaidOut(lane) => 2 * LANES.len() + lane as usize,
            LanePath::TakeDeclined(lane) => 3 * LANES.len() + lane as usize,
            LanePath::ScanDeclined(lane) => 4 * LANES.len() + lane as usize,
            LanePath::NoLane => PATHS - 2,
            LanePath::NotInLayout => PATHS - 1,
        }
    }

    fn all() -> impl Iterator<Item = LanePath> {
        let taken = LANES.into_iter().map(LanePath::Taken);
        let compacted = LANES.into_iter().map(LanePath::Compacted);
        let laid_out = LANES.into_iter().map(LanePath::LaidOut);
        let take_declined = LANES.into_iter().map(LanePath::TakeDeclined);
        let scan_declined = LANES_FOR.into_iter().map(LanePath::ScanDeclined);
        let general = [LanePath::NoLane, LanePath::NotInLayout];
        taken.chain(compacted).chain(laid_out).chain(take_declined).chain(scan_declined).chain(general)
    }
}

impl fmt::Display for LanePath {
    /// `taken/content`, `compacted/content`, `laid-out/content`, `declined-take/part`, `declined-scan/delta`,
    /// `general/no-lane`, `general/not-in-layout`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LanePath::Taken(lane) => write!(f, "taken/{}", lane.as_str()),
            LanePath::Compacted(lane) => write!(f, "compacted/{}", lane.as_str()),
            LanePath::LaidOut(lane) => write!(f, "laid-out/{}", lane.as_str()),
            LanePath::TakeDeclined(lane) => write!(f, "declined-take/{}", lane.as_str()),
            LanePath::ScanDeclined(lane) => write!(f, "declined-scan/{}", lane.as_str()),
            LanePath::NoLane => f.write_str("general/no-lane"),
            LanePath::NotInLayout => f.write_str("general/not-in-layout"),
        }
    }
}

/// How many lines a fold took down each path. Lines a fold refused count too (by the path that refused them).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LaneCounts {
    counts: [u64; PATHS],
}

impl LaneCounts {
    pub(crate) fn add(&mut self, path: LanePath) {
        self.counts[path.index()] += 1;
    }

    /// How many lines took `path`.
    pub fn get(&self, path: LanePath) -> u64 {
        self.counts[path.index()]
    }

    /// Every path some line took, with its count, lanes first.
    pub fn iter(&self) -> impl Iterator<Item = (LanePath, u64)> + '_ {
        LanePath::all().map(|path| (path, self.get(path))).filter(|&(_, count)| count > 0)
    }

    /// Lines counted in all.
    pub fn total(&self) -> u64 {
        self.counts.iter().sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_path_has_its_own_count() {
        let paths: Vec<LanePath> = LanePath::all().collect();
        assert_eq!(paths.len(), PATHS);
        let mut indexes: Vec<usize> = paths.iter().map(|path| path.index()).collect();
        indexes.sort_unstable();
        assert_eq!(indexes, (0..PATHS).collect::<Vec<_>>());
        let mut counts = LaneCounts::default();
        for (n, path) in paths.iter().enumerate() {
            for _ in 0..=n {
                counts.add(*path);
            }
        }
        for (n, (path, count)) in counts.iter().enumerate() {
            assert_eq!((path, count), (paths[n], n as u64 + 1), "{path}");
        }
        assert_eq!(counts.total(), (1..=PATHS as u64).sum::<u64>());
    }
}
