//! A scalar field's value as the model holds it. Pydantic validates a journal line's event in its lax mode, so a
//! field declared `int` holds 3 whether the line says `3`, `3.0`, `"3"` or (for 1) `true`, a `bool` field `true`
//! for `"yes"` or `1`, and a `float` field `3.0` for `3`; the dump writes what the field holds. A value lax mode
//! refuses is kept as given here, and the rules that read the field refuse it.

use serde_json::{Number, Value};

use crate::json::PyNumber;
use crate::lax::{lax_bool, lax_int};

/// A scalar field's type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Scalar {
    /// An `int` (or `None`).
    Int,
    /// A `bool` (or `None`, or one of the field's string literals: `bool | Literal['allow-local']`).
    Bool,
    /// A `float`.
    Float,
}

/// The value a field of type `scalar` holds when given `value`, where that is not `value` as written; `None` when it
/// is (or when lax mode refuses it). Nothing else changes a scalar.
pub(super) fn held(value: &Value, scalar: Scalar) -> Option<Value> {
    match (scalar, value) {
        (Scalar::Int, Value::Number(number)) if matches!(PyNumber::of_number(number), PyNumber::Int(_)) => None,
        (Scalar::Int, Value::Null) => None,
        (Scalar::Int, value) => {
            lax_int(value).and_then(|int| int.to_string().parse::<Number>().ok()).map(Value::Number)
        }
        (Scalar::Bool, Value::Bool(_) | Value::Null) => None,
        (Scalar::Bool, value) => lax_bool(value).map(Value::Bool),
        (Scalar::Float, Value::Number(number)) => match PyNumber::of_number(number) {
            // Python's `float(int)`, correctly rounded (`-0` is the integer 0); too large for a float: refused.
            PyNumber::Int(digits) => digits.parse::<f64>().ok().and_then(Number::from_f64).map(Value::Number),
            PyNumber::Float(_) => None,
        },
        (Scalar::Float, Value::Bool(flag)) => Number::from_f64(f64::from(u8::from(*flag))).map(Value::Number),
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
    match scalar {
        Scalar::Int if integer() => true,
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
        let cases: [(Scalar, Value, Option<&str>); 16] = [
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
