//! The per-item line layouts of the reference's recorded files, byte for byte: one line per source item (or
//! AG-UI event), written as Python's `json.dumps(value, ensure_ascii=False, separators=(",", ":"))` writes the
//! reference's `model_dump(mode="json")` (so floats are Python `repr`: `1e-05`, `21.0`).
//!
//! - an observer line: `{"events":[...]}`, or `{"error":{"type":"AguiObservationError","message":"..."}}`;
//! - a display line: `{"observed":[...]}`, or the same error line.
//!
//! Malformed input, which the reference rejects before its observer runs, is written as
//! `{"error":{"type":"InputError","message":"..."}}`.

use crate::agui::Event;
use crate::error::{FoldError, ObserveError};
use crate::json::to_python_writer;

/// The `type` of an error line for an item the protocol rejected (the reference's exception class).
pub const OBSERVATION_ERROR: &str = "AguiObservationError";
/// The `type` of an error line for a first-party payload that failed the reference's Pydantic model.
pub const VALIDATION_ERROR: &str = "ValidationError";
/// The `type` of an error line for malformed input.
pub const INPUT_ERROR: &str = "InputError";

/// Append `{"events":[...]}` for the events of one observed item.
pub fn write_events_line(events: &[Event], out: &mut Vec<u8>) {
    out.extend_from_slice(b"{\"events\":[");
    for (index, event) in events.iter().enumerate() {
        if index > 0 {
            out.push(b',');
        }
        // Serializing into memory cannot fail for these types.
        let _ = to_python_writer(out, event);
    }
    out.extend_from_slice(b"]}");
}

/// Append `{"observed":[...]}` from observed entries written one a line (the layout of
/// [`DisplayFold::fold_line`](crate::DisplayFold::fold_line) and [`Observed::write_lines`](crate::Observed::write_lines)).
pub fn write_observed_line(entries: &[u8], out: &mut Vec<u8>) {
    let body = open_observed_line(out);
    out.extend_from_slice(entries);
    close_observed_line(out, body);
}

/// Append the opening of an observed line, `{"observed":[`; where its entries start is returned, for
/// [`close_observed_line`] once they are written after it, one a line (so a fold can write them in place).
pub fn open_observed_line(out: &mut Vec<u8>) -> usize {
    out.extend_from_slice(b"{\"observed\":[");
    out.len()
}

/// Make the entries written one a line in `out` from `body` on into the rest of their observed line, in place:
/// each newline between two becomes a comma, and `]}` closes the list. (A `body` past the end: no entries.)
pub fn close_observed_line(out: &mut Vec<u8>, body: usize) {
    // An entry never holds a raw newline (JSON escapes it inside strings): each newline ends one entry.
    let mut from = body;
    while let Some(at) = out.get(from..).and_then(|rest| memchr::memchr(b'\n', rest)) {
        out[from + at] = b',';
        from += at + 1;
    }
    if out.len() > body && out.last() == Some(&b',') {
        out.pop();
    }
    out.extend_from_slice(b"]}");
}

/// Append one input's display line: the observed entries `fold` appends (one a line) made into their observed line
/// where they lie, or, when it fails, its error line in their stead. The fold's result is returned.
pub fn write_fold_line(
    out: &mut Vec<u8>,
    fold: impl FnOnce(&mut Vec<u8>) -> Result<(), FoldError>,
) -> Result<(), FoldError> {
    let start = out.len();
    let body = open_observed_line(out);
    let result = fold(out);
    match &result {
        Ok(()) => close_observed_line(out, body),
        Err(error) => {
            out.truncate(start);
            let (kind, message) = fold_error_parts(error);
            write_error_line(kind, &message, out);
        }
    }
    result
}

/// Append the error line of a rejected or malformed item.
pub fn write_error_line(kind: &str, message: &str, out: &mut Vec<u8>) {
    out.extend_from_slice(b"{\"error\":{\"type\":");
    let _ = to_python_writer(out, kind);
    out.extend_from_slice(b",\"message\":");
    let _ = to_python_writer(out, message);
    out.extend_from_slice(b"}}");
}

/// The error line's `type` and `message` for an observer failure.
pub fn observe_error_parts(error: &ObserveError) -> (&'static str, String) {
    match error {
        ObserveError::Observation(rejection) => (OBSERVATION_ERROR, rejection.message().to_owned()),
        ObserveError::Validation(message) => (VALIDATION_ERROR, message.clone()),
        other => (INPUT_ERROR, other.to_string()),
    }
}

/// The error line's `type` and `message` for a display-fold failure.
pub fn fold_error_parts(error: &FoldError) -> (&'static str, String) {
    match error {
        FoldError::Observation(rejection) => (OBSERVATION_ERROR, rejection.message().to_owned()),
        FoldError::Validation(message) => (VALIDATION_ERROR, message.clone()),
        other => (INPUT_ERROR, other.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_lines_are_written_as_the_recording_writes_them() {
        let mut out = Vec::new();
        write_error_line(OBSERVATION_ERROR, "Pydantic part kind changed before its end event", &mut out);
        assert_eq!(
            String::from_utf8(out).unwrap(),
            r#"{"error":{"type":"AguiObservationError","message":"Pydantic part kind changed before its end event"}}"#
        );
        let mut out = Vec::new();
        write_observed_line(b"{\"a\":1}\n{\"b\":\"x\\ny\"}\n", &mut out);
        assert_eq!(String::from_utf8(out).unwrap(), r#"{"observed":[{"a":1},{"b":"x\ny"}]}"#);
    }

    /// Entries written in place after what the output held become their observed line there: none, one without
    /// its newline, several; a `body` past the end is no entries, not a panic.
    #[test]
    fn entries_written_in_place_close_into_their_observed_line() {
        for (entries, line) in [("", "[]"), ("{\"a\":1}", "[{\"a\":1}]"), ("{\"a\":1}\n{}\n", "[{\"a\":1},{}]")] {
            let mut out = b"before\n".to_vec();
            let body = open_observed_line(&mut out);
            out.extend_from_slice(entries.as_bytes());
            close_observed_line(&mut out, body);
            assert_eq!(String::from_utf8(out).unwrap(), format!("before\n{{\"observed\":{line}}}"));
        }
        let mut out = b"x".to_vec();
        close_observed_line(&mut out, 5);
        assert_eq!(out, b"x]}");
    }
}
