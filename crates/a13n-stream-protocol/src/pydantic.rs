//! Pydantic's `ValidationError` text, for the payload models the reference validates while observing: the
//! reference raises it (not an observation error) for a malformed first-party payload, and its message is part
//! of the recorded behaviour.
//!
//! The layout, as Pydantic 2.14 writes it:
//!
//! ```text
//! 2 validation errors for InlineDelegationPayload
//! invocation_id
//!   String should match pattern '^delegation-[A-Za-z0-9_-]+$' [type=string_pattern_mismatch, input_value='bad id', input_type=str]
//!     For further information visit https://errors.pydantic.dev/2.14/v/string_pattern_mismatch
//! ...
//! ```
//!
//! `input_value` is the Python `repr` of the offending input, cut to its first 25 and last 24 bytes around
//! `...` when longer than 50 bytes.

use serde_json::Value;

use crate::json::{char_len, PyNumber};
use crate::pystr::is_printable;

/// Where Pydantic's error pages live, for the version the reference was recorded with.
const DOCS: &str = "https://errors.pydantic.dev/2.14/v/";

/// A regular expression as Pydantic shows it, and the test it stands for.
pub(crate) type Pattern<'a> = (&'a str, fn(&str) -> bool);

/// One error: its location (a field name, or none for a model validator), message, type and input.
struct Line {
    loc: Option<String>,
    message: String,
    kind: &'static str,
    input: Value,
}

/// The errors of validating one model, in the order Pydantic reports them.
pub(crate) struct Validation {
    model: &'static str,
    lines: Vec<Line>,
}

impl Validation {
    pub(crate) fn new(model: &'static str) -> Validation {
        Validation { model, lines: Vec::new() }
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.lines.is_empty()
    }

    fn push(&mut self, loc: Option<&str>, message: String, kind: &'static str, input: &Value) {
        self.lines.push(Line { loc: loc.map(str::to_owned), message, kind, input: input.clone() });
    }

    /// A required field that is absent; Pydantic shows the whole input object.
    pub(crate) fn missing(&mut self, field: &str, object: &Value) {
        self.push(Some(field), "Field required".into(), "missing", object);
    }

    /// A field the model does not declare (`extra="forbid"`).
    pub(crate) fn extra(&mut self, field: &str, input: &Value) {
        self.push(Some(field), "Extra inputs are not permitted".into(), "extra_forbidden", input);
    }

    /// Check a `str` field with length bounds (in code points) and an optional pattern, as Pydantic checks them:
    /// type, then minimum, then maximum, then pattern; one error at most.
    pub(crate) fn string(
        &mut self,
        field: &str,
        input: &Value,
        min: usize,
        max: usize,
        pattern: Option<Pattern<'_>>,
    ) -> bool {
        let Value::String(text) = input else {
            self.push(Some(field), "Input should be a valid string".into(), "string_type", input);
            return false;
        };
        let length = char_len(text);
        if length < min {
            let plural = if min == 1 { "" } else { "s" };
            self.push(
                Some(field),
                format!("String should have at least {min} character{plural}"),
                "string_too_short",
                input,
            );
        } else if length > max {
            let plural = if max == 1 { "" } else { "s" };
            self.push(
                Some(field),
                format!("String should have at most {max} character{plural}"),
                "string_too_long",
                input,
            );
        } else if let Some((pattern, matches)) = pattern.filter(|(_, matches)| !matches(text)) {
            let _ = matches;
            self.push(
                Some(field),
                format!("String should match pattern '{pattern}'"),
                "string_pattern_mismatch",
                input,
            );
        } else {
            return true;
        }
        false
    }

    /// Check a `Literal[...]` field of strings.
    pub(crate) fn literal(&mut self, field: &str, input: &Value, options: &[&str]) -> bool {
        if input.as_str().is_some_and(|text| options.contains(&text)) {
            return true;
        }
        let quoted: Vec<String> = options.iter().map(|option| format!("'{option}'")).collect();
        let expected = match quoted.split_last() {
            Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
            _ => quoted.concat(),
        };
        self.push(Some(field), format!("Input should be {expected}"), "literal_error", input);
        false
    }

    /// A field of Python `int`s from 0 to `max` (`Field(ge=0, le=max)`): an `input` that is an integer outside them
    /// is an error; any other input is not this check's to judge.
    pub(crate) fn count(&mut self, field: &str, input: &Value, max: u64) {
        let Value::Number(number) = input else { return };
        let PyNumber::Int(digits) = PyNumber::of_number(number) else { return };
        if digits.starts_with('-') {
            self.push(Some(field), "Input should be greater than or equal to 0".into(), "greater_than_equal", input);
        } else if !digits.parse::<u64>().is_ok_and(|count| count <= max) {
            self.push(Some(field), format!("Input should be less than or equal to {max}"), "less_than_equal", input);
        }
    }

    /// A list field that needs an item (`Field(min_length=1)`), given `length` items.
    pub(crate) fn non_empty(&mut self, field: &str, length: usize) {
        if length == 0 {
            let message = "List should have at least 1 item after validation, not 0".to_owned();
            self.push(Some(field), message, "too_short", &Value::Array(Vec::new()));
        }
    }

    /// A model validator's `ValueError`.
    pub(crate) fn value_error(&mut self, message: &str, object: &Value) {
        self.push(None, format!("Value error, {message}"), "value_error", object);
    }

    /// The exception's text.
    pub(crate) fn message(&self) -> String {
        let count = self.lines.len();
        let mut out = format!("{count} validation error{} for {}", if count == 1 { "" } else { "s" }, self.model);
        for line in &self.lines {
            out.push('\n');
            if let Some(loc) = &line.loc {
                out.push_str(loc);
                out.push('\n');
            }
            out.push_str(&format!(
                "  {} [type={}, input_value={}, input_type={}]\n    For further information visit {DOCS}{}",
                line.message,
                line.kind,
                truncated(&python_repr(&line.input)),
                python_type(&line.input),
                line.kind
            ));
        }
        out
    }
}

/// The Python type name of a JSON value's Python form.
pub(crate) fn python_type(value: &Value) -> &'static str {
    match value {
        Value::Null => "NoneType",
        Value::Bool(_) => "bool",
        Value::Number(number) => match PyNumber::of_number(number) {
            PyNumber::Int(_) => "int",
            PyNumber::Float(_) => "float",
        },
        Value::String(_) => "str",
        Value::Array(_) => "list",
        Value::Object(_) => "dict",
    }
}

/// Pydantic shows at most 50 bytes of a repr: the first 25 and the last 24 around `...`, on character
/// boundaries (the head rounded down, the tail rounded up).
fn truncated(repr: &str) -> String {
    if repr.len() <= 50 {
        return repr.to_owned();
    }
    let mut head = 25;
    while !repr.is_char_boundary(head) {
        head -= 1;
    }
    let mut tail = repr.len() - 24;
    while !repr.is_char_boundary(tail) {
        tail += 1;
    }
    format!("{}...{}", &repr[..head], &repr[tail..])
}

/// Python's `repr` of a JSON value's Python form (`None`, `True`, `'text'`, `1.5`, `[...]`, `{...}`).
pub(crate) fn python_repr(value: &Value) -> String {
    let mut out = String::new();
    write_repr(value, &mut out);
    out
}

fn write_repr(value: &Value, out: &mut String) {
    match value {
        Value::Null => out.push_str("None"),
        Value::Bool(true) => out.push_str("True"),
        Value::Bool(false) => out.push_str("False"),
        Value::Number(number) => out.push_str(&PyNumber::of_number(number).repr()),
        Value::String(text) => write_str_repr(text, out),
        Value::Array(items) => {
            out.push('[');
            for (index, item) in items.iter().enumerate() {
                if index > 0 {
                    out.push_str(", ");
                }
                write_repr(item, out);
            }
            out.push(']');
        }
        Value::Object(map) => {
            out.push('{');
            for (index, (key, item)) in map.iter().enumerate() {
                if index > 0 {
                    out.push_str(", ");
                }
                write_str_repr(key, out);
                out.push_str(": ");
                write_repr(item, out);
            }
            out.push('}');
        }
    }
}

/// Python's `repr` of a `str`: single quotes unless the text holds a single quote and no double quote; escapes
/// for the backslash, the quote, `\t \n \r`, and characters Python does not print (controls, separators and
/// format characters).
fn write_str_repr(text: &str, out: &mut String) {
    let quote = if text.contains('\'') && !text.contains('"') { '"' } else { '\'' };
    out.push(quote);
    for c in text.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            c if c == quote => {
                out.push('\\');
                out.push(c);
            }
            c if !is_printable(c) => {
                let code = u32::from(c);
                if code < 0x100 {
                    out.push_str(&format!("\\x{code:02x}"));
                } else if code < 0x10000 {
                    out.push_str(&format!("\\u{code:04x}"));
                } else {
                    out.push_str(&format!("\\U{code:08x}"));
                }
            }
            c => out.push(c),
        }
    }
    out.push(quote);
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reprs_follow_python() {
        assert_eq!(
            python_repr(&json!({"a": [1, 2.5, null, true], "b": "it's"})),
            r#"{'a': [1, 2.5, None, True], 'b': "it's"}"#
        );
        assert_eq!(python_repr(&json!("both ' and \"")), r#"'both \' and "'"#);
        assert_eq!(python_repr(&json!("tab\tnl\n\u{1}é\u{2028}")), r"'tab\tnl\n\x01é\u2028'");
        // Unassigned code points and format characters Python escapes (found by helper-54).
        assert_eq!(python_repr(&json!("x\u{890}\u{378}\u{d7ff}\u{110bd}")), r"'x\u0890\u0378\ud7ff\U000110bd'");
        assert_eq!(python_repr(&json!(1e-5)), "1e-05");
        assert_eq!(
            truncated(&python_repr(&json!("é".repeat(129)))),
            format!("'{}...{}'", "é".repeat(12), "é".repeat(11))
        );
    }
}
