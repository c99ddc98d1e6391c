//! Which fast lane a source line that is not a part delta is for, judged from its `event_kind` alone, so the line
//! is scanned by one lane's scanner rather than tried against each in turn. (Part deltas, most lines, are tried
//! first without a hint.) The hint only chooses; the lane's own scan checks everything, and a line it refuses
//! takes the general path.

/// The lane a line's `event_kind` points to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum LaneHint {
    /// A part's start or end: the part lane ([`crate::part_line`]), and for a tool call's start the carried lane.
    Part,
    /// No `event_kind` (a Harness extension event) or a function tool call: the carried lane
    /// ([`crate::carried_line`]).
    Carried,
    /// A tool's return: the tool return lane ([`crate::part_line::ToolReturnLine`]).
    ToolReturn,
    /// Anything else: the general path.
    General,
}

/// The hint for `line`. A Pydantic event's dump ends with its `event_kind`, so it is read from the end first.
pub(crate) fn lane_hint(line: &str) -> LaneHint {
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
    let Some(at) = at_end.or_else(|| line.rfind(KEY)) else { return LaneHint::Carried };
    let rest = &line[at + KEY.len()..];
    match &rest[..rest.find('"').unwrap_or(0)] {
        "part_start" | "part_end" => LaneHint::Part,
        "function_tool_call" => LaneHint::Carried,
        "function_tool_result" | "output_tool_result" => LaneHint::ToolReturn,
        _ => LaneHint::General,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_hint_follows_the_event_kind() {
        let line = |event: &str| format!(r#"{{"thread_id":"t","run_id":"r","event":{event}}}"#);
        assert_eq!(lane_hint(&line(r#"{"index":0,"part":{},"event_kind":"part_end"}"#)), LaneHint::Part);
        assert_eq!(lane_hint(&line(r#"{"event_kind":"part_start","index":0}"#)), LaneHint::Part);
        assert_eq!(lane_hint(&line(r#"{"kind":"lifecycle","payload":{}}"#)), LaneHint::Carried);
        assert_eq!(lane_hint(&line(r#"{"part":{},"event_kind":"function_tool_call"}"#)), LaneHint::Carried);
        assert_eq!(lane_hint(&line(r#"{"part":{},"event_kind":"output_tool_result"}"#)), LaneHint::ToolReturn);
        assert_eq!(lane_hint(&line(r#"{"event_kind":"final_result"}"#)), LaneHint::General);
        assert_eq!(lane_hint(r#"{"event_kind":""#), LaneHint::General);
        assert_eq!(lane_hint(r#""}}"#), LaneHint::Carried);
    }

    /// Found by the `fold_lanes` fuzz target: where the key would start can fall inside a character.
    #[test]
    fn a_line_ending_like_a_dump_inside_a_character_is_no_dump() {
        let line = format!("x{}\"\"}}}}", "\u{1f680}".repeat(4));
        assert_eq!(line.len(), 21);
        assert_eq!(lane_hint(&line), LaneHint::Carried);
    }
}
