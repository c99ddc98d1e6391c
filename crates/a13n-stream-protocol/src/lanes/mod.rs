//! The fast lanes: shortcuts that take the commonest source lines (a content or argument delta of an open part, a
//! part's start or end, a tool's successful return, a line carried through whole) from the line's bytes to the
//! same state and output as the general path, without a JSON tree. Each lane's scan reads a line into borrowed
//! fields ([`lane_hint::scan_for_lane`] sends it to at most one), and the observer (`observer/lanes.rs`,
//! `observer/line.rs`) and the display fold (`display/lane.rs`, `display/carried.rs`) take what it read; a line
//! no lane takes, or that a lane declines, takes the general path, for a reason [`lane_counts`] counts.

pub(crate) mod args_event;
pub(crate) mod carried_line;
pub(crate) mod delta_line;
pub(crate) mod delta_memo;
pub(crate) mod event_head;
pub(crate) mod lane_counts;
pub(crate) mod lane_hint;
pub(crate) mod part_line;
