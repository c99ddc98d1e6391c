//! Python's truthiness, `str` and `repr` of JSON values, as the reference applies them to event fields.

use serde_json::Value;

/// Python truthiness of a JSON value.
pub(super) fn truthy(value: &Value) -> bool {
    match value {
        Value::Null => false,
        Value::Bool(flag) => *flag,
        Value::Number(number) => number.as_f64() != Some(0.0),
        Value::String(text) => !text.is_empty(),
        Value::Array(items) => !items.is_empty(),
        Value::Object(map) => !map.is_empty(),
    }
}

/// Python's `str()` of a JSON value.
pub(super) fn py_str(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        other => py_repr(other),
    }
}

/// Python's `str(None)`, what a missing value shows as.
pub(super) const PY_NONE: &str = "None";

pub(super) fn py_repr(value: &Value) -> String {
    match value {
        Value::Null => PY_NONE.into(),
        Value::Bool(true) => "True".into(),
        Value::Bool(false) => "False".into(),
        Value::Number(number) => crate::json::PyNumber::of_number(number).repr().into_owned(),
        Value::String(text) => {
            let quote = if text.contains('\'') && !text.contains('"') { '"' } else { '\'' };
            let mut out = String::with_capacity(text.len() + 2);
            out.push(quote);
            for ch in text.chars() {
                match ch {
                    '\\' => out.push_str("\\\\"),
                    '\n' => out.push_str("\\n"),
                    '\r' => out.push_str("\\r"),
                    '\t' => out.push_str("\\t"),
                    c if c == quote => {
                        out.push('\\');
                        out.push(c);
                    }
                    c if (c as u32) < 0x20 || c as u32 == 0x7f => out.push_str(&format!("\\x{:02x}", c as u32)),
                    c => out.push(c),
                }
            }
            out.push(quote);
            out
        }
        Value::Array(items) => format!("[{}]", items.iter().map(py_repr).collect::<Vec<_>>().join(", ")),
        Value::Object(map) => format!(
            "{{{}}}",
            map.iter()
                .map(|(key, value)| format!("{}: {}", py_repr(&Value::String(key.clone())), py_repr(value)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `str()` of a JSON number is Python's: a literal too large for a float reads as infinity, shown `inf`.
    #[test]
    fn numbers_show_as_python_shows_them() {
        let shown = |text: &str| py_repr(&serde_json::from_str(text).unwrap());
        assert_eq!([shown("1e400"), shown("-1e400"), shown("-0"), shown("1E2")], ["inf", "-inf", "0", "100.0"]);
    }
}
