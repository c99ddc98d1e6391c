//! A scalar field's value as the model holds it. Pydantic validates a journal line's event in its lax mode, so a
//! field declared `int` holds 3 whether the line says `3`, `3.0`, `"3"` or (for 1) `true`, a `bool` field `true`
//! for `"yes"` or `1`, and a `float` field `3.0` for `3`; a `bytes` field of a model that reads base64 holds the
//! bytes the text decodes to, and its dump writes them in URL-safe base64 with padding. The dump writes what the
//! field holds. A value the model refuses is kept as given here, and the rules that read the field refuse it.

use base64::alphabet::{STANDARD, URL_SAFE};
use base64::engine::{DecodePaddingMode, GeneralPurpose, GeneralPurposeConfig};
use base64::Engine;
use serde_json::{Number, Value};

use crate::json::PyNumber;
use crate::lax::{lax_bool, lax_int_digits};

/// A scalar field's type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Scalar {
    /// An `int` (or `None`).
    Int,
    /// A `bool` (or `None`, or one of the field's string literals: `bool | Literal['allow-local']`).
    Bool,
    /// A `float`.
    Float,
    /// `bytes`, read and written as base64 text ([`base64_bytes`]).
    Base64,
}

/// The bytes Pydantic's base64 mode reads `text` as: the standard alphabet when the text holds `+` or `/`, else the
/// URL-safe one; padding optional but never more than needed; no bits left over in the last character; no white
/// space. `None` where it refuses the text.
pub(crate) fn base64_bytes(text: &str) -> Option<Vec<u8>> {
    let config = GeneralPurposeConfig::new().with_decode_padding_mode(DecodePaddingMode::Indifferent);
    let alphabet = if text.contains(['+', '/']) { &STANDARD } else { &URL_SAFE };
    GeneralPurpose::new(alphabet, config).decode(text).ok()
}

/// Bytes as Pydantic's base64 mode writes them: URL-safe, padded.
fn base64_text(bytes: &[u8]) -> String {
    GeneralPurpose::new(&URL_SAFE, GeneralPurposeConfig::new()).encode(bytes)
}

/// The value a field of type `scalar` holds when given `value`, where that is not `value` as written; `None` when it
/// is (or when lax mode refuses it). Nothing else changes a scalar.
pub(super) fn held(value: &Value, scalar: Scalar) -> Option<Value> {
    match (scalar, value) {
        (Scalar::Int, Value::Number(number)) if matches!(PyNumber::of_number(number), PyNumber::Int(_)) => None,
        (Scalar::Int, Value::Null) => None,
        (Scalar::Int, value) => {
            lax_int_digits(value).and_then(|digits| digits.parse::<Number>().ok()).map(Value::Number)
        }
        (Scalar::Bool, Value::Bool(_) | Value::Null) => None,
        (Scalar::Bool, value) => lax_bool(value).map(Value::Bool),
        (Scalar::Float, Value::Number(number)) => match PyNumber::of_number(number) {
            // Python's `float(int)`, correctly rounded (`-0` is the integer 0); too large for a float: refused.
            PyNumber::Int(digits) => digits.parse::<f64>().ok().and_then(Number::from_f64).map(Value::Number),
            PyNumber::Float(_) => None,
        },
        (Scalar::Float, Value::Bool(flag)) => Number::from_f64(f64::from(u8::from(*flag))).map(Value::Number),
        (Scalar::Base64, Value::String(text)) => {
            let written = base64_text(&base64_bytes(text)?);
            (written != *text).then_some(Value::String(written))
        }
        // Text Pydantic reads as a float (`"2.5"`, `"inf"`) is kept as given: a difference left (docs/TESTING.md).
        _ => None,
    }
}

/// Whether a scalar field's value, as written in a line (`text`, one JSON value), is what the field holds.
pub(super) fn written_as_held(text: &str, scalar: Scalar) -> bool {
    let integer = || {
        let digits = text.strip_prefix('-').unwrap_or(text);
        !digits.is_empty() && digits.bytes().all(|byte| byte.is_ascii_digit())
    };
    // A string of URL-safe base64 padded to whole quanta: as written once decoded, or refused (kept as given).
    let url_safe_quanta = || {
        let Some(inner) = text.strip_prefix('"').and_then(|text| text.strip_suffix('"')) else { return false };
        let alphabet = |byte: u8| byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'_');
        inner.len() % 4 == 0 && inner.trim_end_matches('=').bytes().all(alphabet)
    };
    match scalar {
        Scalar::Int if integer() => true,
        Scalar::Base64 if url_safe_quanta() => true,
        Scalar::Bool if matches!(text, "true" | "false") => true,
        _ if text == "null" => true,
        _ => serde_json::from_str::<Value>(text).is_ok_and(|value| held(&value, scalar).is_none()),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// What the reference's Pydantic made of each value, by field type (`None`: held as written).
    #[test]
    fn scalars_are_held_as_lax_mode_reads_them() {
        let cases: [(Scalar, Value, Option<&str>); 24] = [
            (Scalar::Int, json!(3), None),
            (Scalar::Int, json!("3"), Some("3")),
            (Scalar::Int, json!(" +3 "), Some("3")),
            (Scalar::Int, json!(3.0), Some("3")),
            (Scalar::Int, json!(true), Some("1")),
            (Scalar::Int, json!(3.5), None),
            (Scalar::Int, json!("x"), None),
            (Scalar::Int, json!(null), None),
            (Scalar::Bool, json!(true), None),
            (Scalar::Bool, json!("yes"), Some("true")),
            (Scalar::Bool, json!(0), Some("false")),
            (Scalar::Bool, json!("allow-local"), None),
            (Scalar::Float, json!(2.5), None),
            (Scalar::Float, json!(3), Some("3.0")),
            (Scalar::Float, json!(false), Some("0.0")),
            (Scalar::Float, json!("2.5"), None),
            (Scalar::Base64, json!("aGVsbG8="), None),
            (Scalar::Base64, json!("aGVsbG8"), Some(r#""aGVsbG8=""#)),
            (Scalar::Base64, json!("YQ="), Some(r#""YQ==""#)),
            (Scalar::Base64, json!("aGVsbG/7/w=="), Some(r#""aGVsbG_7_w==""#)),
            (Scalar::Base64, json!("+/8"), Some(r#""-_8=""#)),
            (Scalar::Base64, json!("aGVsbG8=="), None),
            (Scalar::Base64, json!("YR=="), None),
            (Scalar::Base64, json!("+_-/"), None),
        ];
        for (scalar, value, expected) in cases {
            let held = held(&value, scalar).map(|held| serde_json::to_string(&held).unwrap());
            assert_eq!(held.as_deref(), expected, "{value}");
            let text = serde_json::to_string(&value).unwrap();
            assert_eq!(written_as_held(&text, scalar), expected.is_none(), "{text}");
        }
        let negative_zero: Value = serde_json::from_str("-0").unwrap();
        assert_eq!(held(&negative_zero, Scalar::Float).map(|held| held.to_string()).as_deref(), Some("0.0"));
    }
}
