//! One observed entry as [`DisplayFold::fold_line`](super::DisplayFold::fold_line) writes it, split into its parts
//! without parsing: a host stores the item reference as the text the fold wrote, and the event in Pydantic's
//! spelling ([`ObservedLine::event_pydantic`]).

/// The parts of one line `{"sequence":…,"event":{…},"item":…}` that the fold wrote.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ObservedLine<'a> {
    /// The event's display sequence.
    pub sequence: u64,
    /// The event's JSON, as the stream carries it.
    pub event: &'a str,
    /// The item reference's JSON; `None` when the event changed no item (the line's `null`).
    pub item: Option<&'a str>,
}

const SEQUENCE: &str = r#"{"sequence":"#;
const EVENT: &str = r#","event":"#;
const ITEM: &str = r#","item":"#;

impl<'a> ObservedLine<'a> {
    /// Split one line the fold wrote (without its newline). `None` for text of any other layout.
    ///
    /// The item reference is the value after the line's last `,"item":`: an item reference has no `item` key,
    /// and inside a JSON string the quotes of that text would be escaped, so nothing after it can hold it.
    pub fn split(line: &'a str) -> Option<ObservedLine<'a>> {
        let rest = line.strip_prefix(SEQUENCE)?.strip_suffix('}')?;
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        let sequence = rest[..digits].parse().ok()?;
        let rest = rest[digits..].strip_prefix(EVENT)?;
        let (event, item) = rest.rsplit_once(ITEM)?;
        let item = (item != "null").then_some(item);
        Some(ObservedLine { sequence, event, item })
    }

    /// The event's JSON as Pydantic's `model_dump_json` writes it, as [`event_json`](super::event_json) gives it
    /// and as a host stores and sends it. The fold writes observed lines as the reference records them (Python's
    /// `json.dumps`), which spells some floats otherwise (`1e-05` for `0.00001`; a float too large to hold is `null`
    /// in both, as the dump made it); any other event is its text as written.
    ///
    /// ```
    /// use a13n_stream_protocol::display::ObservedLine;
    ///
    /// let line = r#"{"sequence":3,"event":{"type":"CUSTOM","name":"n","value":[1e-05,Infinity,"1e-05"]},"item":null}"#;
    /// let entry = ObservedLine::split(line).unwrap();
    /// assert_eq!(entry.event_pydantic(), r#"{"type":"CUSTOM","name":"n","value":[0.00001,null,"1e-05"]}"#);
    /// ```
    pub fn event_pydantic(&self) -> std::borrow::Cow<'a, str> {
        crate::json::python_to_pydantic(self.event)
    }

    /// Every entry of `written`, the newline-ended lines one or more folds wrote, in order. Stops at the first line
    /// of another layout, which the fold never writes.
    pub fn lines(written: &'a [u8]) -> impl Iterator<Item = ObservedLine<'a>> + 'a {
        // The fold writes JSON text, which is UTF-8: on anything else there is no entry to give.
        let text = std::str::from_utf8(written).unwrap_or_default();
        text.lines().map_while(ObservedLine::split)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::display::{DisplayFold, Observed};

    const RUN: &str = r#"{"thread_id":"t","run_id":"r","sequence":0,"occurred_at":"2026-11-29T12:00:00+00:00","event":{"schema_version":"1","kind":"lifecycle","payload":{"type":"run_started"}}}"#;

    #[test]
    fn a_fold_lines_entries_split_into_event_and_item() {
        let mut fold = DisplayFold::new("r");
        let mut written = Vec::new();
        let count = fold.fold_line(RUN, &mut written).unwrap();
        let entries: Vec<ObservedLine<'_>> = ObservedLine::lines(&written).collect();
        assert_eq!(entries.len(), count);
        let text = std::str::from_utf8(&written).unwrap();
        for (entry, line) in entries.iter().zip(text.lines()) {
            let parsed: Observed = serde_json::from_str(line).unwrap();
            assert_eq!(entry.sequence, parsed.sequence);
            let event: serde_json::Value = serde_json::from_str(entry.event).unwrap();
            assert_eq!(event, serde_json::to_value(&parsed.event).unwrap());
            assert_eq!(entry.item.map(str::to_owned), parsed.item.as_ref().map(|item| item.to_json()));
        }
    }

    #[test]
    fn an_item_reference_is_told_from_null() {
        let line = r#"{"sequence":7,"event":{"type":"X","text":",\"item\":1"},"item":{"id":"itm_1","kind":"text"}}"#;
        let entry = ObservedLine::split(line).unwrap();
        assert_eq!(entry.sequence, 7);
        assert_eq!(entry.event, r#"{"type":"X","text":",\"item\":1"}"#);
        assert_eq!(entry.item, Some(r#"{"id":"itm_1","kind":"text"}"#));
        let none = ObservedLine::split(r#"{"sequence":8,"event":{"type":"X"},"item":null}"#).unwrap();
        assert_eq!(none.item, None);
    }

    #[test]
    fn other_lines_do_not_split() {
        for other in ["", "{}", r#"{"sequence":"1","event":{},"item":null}"#, r#"{"event":{},"item":null}"#] {
            assert_eq!(ObservedLine::split(other), None, "{other}");
        }
    }
}
