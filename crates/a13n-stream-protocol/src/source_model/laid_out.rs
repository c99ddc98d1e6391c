//! A journal line written again in the writers' layout, for a fast lane to read: the item's keys in the order the
//! Harness writes them, and its event as its model dumps it (fields in declaration order, omitted defaults written,
//! keys the model drops left out), the values copied as spelled.
//!
//! This is [`super::normalize_event`]'s rule applied to the line's text instead of to a decoded tree, driven by the
//! same table, so the lane that takes the result writes what the general path writes for the line as given. Where
//! the two could part, nothing is written and the line takes the general path: a key given twice (a decoder keeps
//! its first place and its last value), a backslash in the value of a key that chooses a model or is a date-time
//! (as [`super::layout`] refuses), a field the model requires missing, a key the model refuses or keeps that it
//! does not declare, a result in place of an event.

use std::borrow::Cow;
use std::ops::Range;

use super::layout::Entries;
use super::scalar::written_as_held;
use super::{choose, unset_text, Default, Extra, Ty};
use crate::fields::source_key;
use crate::lax_time::pydantic_datetime;
use crate::lax_time::unix_time_of_number;
use crate::scan::Scanner;

/// A source item's keys, in the order every writer writes them.
const ITEM_KEYS: [&str; 5] =
    [source_key::THREAD_ID, source_key::RUN_ID, source_key::SEQUENCE, source_key::OCCURRED_AT, source_key::EVENT];

/// `line` with its keys and its event's in the writers' layout, compact but for whitespace inside values copied;
/// `None` where the general path must read it (see the module's documentation), or where it is not one JSON object.
/// (The lanes lay lines out through [`super::laid_out_memo`], which remembers how.)
#[cfg(test)]
pub(crate) fn laid_out(line: &str) -> Option<String> {
    laid_out_copying(line).map(|laid| laid.text)
}

/// A line laid out, and where its text copies the line's.
pub(super) struct LaidOut {
    pub(super) text: String,
    /// Each stretch of the line copied as it stands: its range in the line, and where the copy starts in `text`.
    pub(super) copies: Vec<(Range<usize>, usize)>,
    /// Whether a value was written otherwise than the line spells it (a date-time in Pydantic's layout).
    pub(super) rewritten: bool,
}

/// `line` with its keys and its event's in the writers' layout, compact but for whitespace inside values copied,
/// and where that copies the line; `None` where the general path must read it (see the module's documentation), or
/// where it is not one JSON object.
pub(super) fn laid_out_copying(line: &str) -> Option<LaidOut> {
    let mut scanner = Scanner::new(line);
    let item = Entries::read(&mut scanner)?;
    scanner.end()?;
    if item.has_repeats() || item.value(source_key::RESULT).is_some() {
        return None;
    }
    let text = String::with_capacity(line.len() + 256);
    let mut out = Writer { line, laid: LaidOut { text, copies: Vec::with_capacity(16), rewritten: false } };
    out.push("{");
    for (at, key) in ITEM_KEYS.into_iter().enumerate() {
        let value = item.value(key)?;
        if at > 0 {
            out.push(",");
        }
        out.key(key);
        if key == source_key::EVENT {
            event(value, &mut out)?;
        } else {
            out.copy(value);
        }
    }
    out.push("}");
    Some(out.laid)
}

/// The laid-out text being written, and what it copies of `line`.
struct Writer<'l> {
    line: &'l str,
    laid: LaidOut,
}

impl Writer<'_> {
    /// Text of the layout's own.
    fn push(&mut self, text: &str) {
        self.laid.text.push_str(text);
    }

    /// `"key":`, for a key that needs no escape.
    fn key(&mut self, key: &str) {
        self.push("\"");
        self.push(key);
        self.push("\":");
    }

    /// A stretch of the line (`text` lies in it), copied as it stands.
    fn copy(&mut self, text: &str) {
        let start = text.as_ptr() as usize - self.line.as_ptr() as usize;
        self.laid.copies.push((start..start + text.len(), self.laid.text.len()));
        self.laid.text.push_str(text);
    }
}

/// The event's text, in the layout of the model its `event_kind` chooses.
fn event(text: &str, out: &mut Writer<'_>) -> Option<()> {
    let entries = Entries::read(&mut Scanner::new(text))?;
    object(text, &entries, entries.event_models(), out)
}

/// An object (its whole text, read as `entries`) in the layout of the first of `choices` it is; as spelled when it
/// is none.
fn object(text: &str, entries: &Entries<'_>, choices: &[usize], out: &mut Writer<'_>) -> Option<()> {
    if entries.has_escaped_fixed() || entries.has_repeats() {
        return None;
    }
    let Some(model) = choose(choices, |key| entries.plain_string(key)) else {
        out.copy(text);
        return Some(());
    };
    // A key read as another's (an alias): the general path reads it.
    let mut aliased = model.fields.iter().filter(|field| !field.read_as.is_empty());
    if aliased.any(|field| entries.keys.iter().any(|(key, _)| field.read_under(key))) {
        return None;
    }
    let declared = |key: &str| model.fields.iter().any(|field| field.key == key);
    let undeclared = entries.keys.iter().any(|(key, _)| !declared(key));
    if undeclared && model.extra != Extra::Ignore {
        return None;
    }
    out.push("{");
    let mut first = true;
    for field in model.fields {
        // The value given, or else the default's text.
        let (given, default) = match (entries.value(field.key), &field.default) {
            // An identifier to compute from the content: the general path computes it.
            (Some(given), Default::Digest(_)) if unset_text(given.as_bytes()) => return None,
            (Some(given), _) => (Some(given), ""),
            (None, Default::Json(text)) => (None, *text),
            (None, Default::Required) => return None,
            (None, Default::Factory | Default::Computed) => continue,
            (None, Default::Digest(_)) => return None,
        };
        if !std::mem::take(&mut first) {
            out.push(",");
        }
        out.key(field.key);
        match given {
            Some(given) => value(given, &field.ty, out)?,
            // Written as the table has it, as the general path inserts it (not laid out again).
            None => out.push(default),
        }
    }
    out.push("}");
    Some(())
}

/// A field's value in the layout its type gives it.
fn value(text: &str, ty: &Ty, out: &mut Writer<'_>) -> Option<()> {
    match ty {
        Ty::One(choices) if text.starts_with('{') => {
            object(text, &Entries::read(&mut Scanner::new(text))?, choices, out)
        }
        Ty::List(choices) if text.starts_with('[') => {
            out.push("[");
            let mut first = true;
            Scanner::new(text).array(|scanner| {
                if !std::mem::take(&mut first) {
                    out.push(",");
                }
                value(scanner.raw_value()?, &Ty::One(choices), out)
            })?;
            out.push("]");
            Some(())
        }
        Ty::Dict(choices) if text.starts_with('{') => {
            let entries = Entries::read(&mut Scanner::new(text))?;
            if entries.has_repeats() {
                return None;
            }
            out.push("{");
            for (at, (key, range)) in entries.keys.iter().enumerate() {
                // A key spelled with an escape would be written otherwise: the general path writes it.
                let Cow::Borrowed(key) = key else { return None };
                if at > 0 {
                    out.push(",");
                }
                out.key(key);
                value(&entries.text[range.clone()], &Ty::One(choices), out)?;
            }
            out.push("}");
            Some(())
        }
        Ty::Time => {
            // What Pydantic writes for the value, where that is not the value as written: a date-time's text in its
            // layout, or the instant a Unix time stands for. Its layout is ASCII: no character to escape.
            let pydantic = match text.starts_with('"') {
                true => {
                    let written = Scanner::new(text).string()?;
                    pydantic_datetime(&written).filter(|pydantic| *pydantic != written)
                }
                false => unix_time_of_number(text).map(|time| time.to_string()),
            };
            match pydantic {
                Some(pydantic) => {
                    out.laid.rewritten = true;
                    out.push("\"");
                    out.push(&pydantic);
                    out.push("\"");
                }
                None => out.copy(text),
            }
            Some(())
        }
        // A scalar lax mode reads as another value: the general path writes it.
        Ty::Scalar(scalar) if !written_as_held(text, *scalar) => None,
        _ => {
            out.copy(text);
            Some(())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::laid_out;
    use crate::source::SourceItem;

    const HEAD: &str = r#""thread_id":"t","run_id":"r","sequence":1,"occurred_at":"2026-11-29T12:00:01+00:00""#;

    /// The issue's own line: a tool call's start with its keys in another order and its defaults left out.
    #[test]
    fn a_line_in_another_layout_is_written_as_the_general_path_reads_it() {
        let spelled = format!(
            r#"{{"event":{{"event_kind":"part_start","index":0,"part":{{"tool_name":"f","args":"","tool_call_id":"c1","part_kind":"tool-call"}}}},{HEAD}}}"#
        );
        let laid = laid_out(&spelled).unwrap();
        assert_eq!(laid, SourceItem::from_json(&spelled).unwrap().to_line());
        assert!(laid.contains(r#""tool_kind":null,"id":null,"provider_name":null,"provider_details":null,"part_kind":"tool-call"},"previous_part_kind":null,"event_kind":"part_start"}"#), "{laid}");
    }

    #[test]
    fn what_only_decoding_reads_right_is_left_to_the_general_path() {
        let line = |event: &str| format!(r#"{{{HEAD},"event":{event}}}"#);
        // A key given twice, at the top or inside the event.
        assert_eq!(laid_out(&format!(r#"{{{HEAD},"run_id":"x","event":{{"event_kind":"final_result"}}}}"#)), None);
        assert_eq!(
            laid_out(&line(
                r#"{"index":0,"index":1,"part":{"part_kind":"text","content":""},"event_kind":"part_start"}"#
            )),
            None
        );
        // A discriminator with an escape, a missing required field, a result.
        assert_eq!(
            laid_out(&line(r#"{"index":0,"part":{"part_kind":"te\u0078t","content":""},"event_kind":"part_start"}"#)),
            None
        );
        assert_eq!(laid_out(&line(r#"{"part":{"part_kind":"text","content":""},"event_kind":"part_start"}"#)), None);
        assert_eq!(laid_out(&format!(r#"{{{HEAD},"event":{{}},"result":{{}}}}"#)), None);
        assert_eq!(laid_out(&format!("{} x", line("{}"))), None);
    }

    /// Found by a review: a default was laid out again (a nested model's own defaults added), which the general
    /// path, inserting it as the table has it, does not do.
    #[test]
    fn a_default_is_written_as_the_table_has_it() {
        let line = format!(
            r#"{{"event":{{"event_kind":"enqueued_messages","enqueue_id":"e","messages":[{{"parts":[],"kind":"response"}}]}},{HEAD}}}"#
        );
        assert_eq!(laid_out(&line).unwrap(), SourceItem::from_json(&line).unwrap().to_line());
    }

    #[test]
    fn an_event_no_model_is_and_unknown_keys_follow_the_models() {
        // No model for a family the table does not lay out (a custom event's class is the writer's): the event is
        // kept as spelled.
        let custom = format!(r#"{{"event":{{"b":1,"a":2,"name":"x.y","event_kind":"custom"}},{HEAD}}}"#);
        assert_eq!(
            laid_out(&custom).unwrap(),
            format!(r#"{{{HEAD},"event":{{"b":1,"a":2,"name":"x.y","event_kind":"custom"}}}}"#)
        );
        // A key a model drops is dropped; one on the item is too.
        let extra = format!(
            r#"{{{HEAD},"x":1,"event":{{"zzz":[1],"index":0,"part":{{"part_kind":"text","content":"hi"}},"event_kind":"part_start"}}}}"#
        );
        assert_eq!(laid_out(&extra).unwrap(), SourceItem::from_json(&extra).unwrap().to_line());
    }
}
