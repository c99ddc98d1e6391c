//! Pydantic's lax mode for the scalars the reference validates from a Python dict: what a `bool` or an `int` field
//! accepts besides its own type, and the value it then holds.

use serde_json::Value;

use crate::json::PyNumber;
use crate::py_int::PyInt;

/// The boolean Pydantic reads `value` as in its lax mode: a boolean, 0 or 1 (an integer or a float), or one of its
/// words for true and false in any case; `None` for anything else.
pub(crate) fn lax_bool(value: &Value) -> Option<bool> {
    const FALSE: [&str; 6] = ["0", "off", "f", "false", "n", "no"];
    const TRUE: [&str; 6] = ["1", "on", "t", "true", "y", "yes"];
    let word = |words: [&str; 6], text: &str| words.iter().any(|word| text.eq_ignore_ascii_case(word));
    match value {
        Value::Bool(flag) => Some(*flag),
        Value::Number(number) => match PyNumber::of_number(number) {
            PyNumber::Int("0") => Some(false),
            PyNumber::Int("1") => Some(true),
            PyNumber::Float(float) if float == 0.0 || float == 1.0 => Some(float == 1.0),
            _ => None,
        },
        Value::String(text) if word(FALSE, text) => Some(false),
        Value::String(text) if word(TRUE, text) => Some(true),
        _ => None,
    }
}

/// The integer Pydantic reads `value` as in its lax mode, of any size, as the digits `str(int)` writes (a sign
/// when negative, no leading zero): an integer; a boolean (1 or 0); a float with no fraction strictly between
/// -2**63 and 2**63; or text that is, once trimmed of white space, an integer as Python's `int()` spells one (a
/// sign, digits with single underscores between them) with at most a fraction of zeros (`" +1_0.00 "` is 10).
/// `None` for anything else. (Pydantic also reads some text after stripping leading zeros and underscores,
/// `"0__9"` as 9 and `"0-0"` as 0, which Python's `int()` refuses; this refuses it too.)
pub(crate) fn lax_int_digits(value: &Value) -> Option<String> {
    match value {
        Value::Bool(flag) => Some(u8::from(*flag).to_string()),
        Value::Number(number) => match PyNumber::of_number(number) {
            PyNumber::Int(digits) => Some(digits.to_owned()),
            // Pydantic takes a float only strictly between -2**63 and 2**63 (found by helper-56: both refused).
            PyNumber::Float(float) => (float.fract() == 0.0 && float > i64::MIN as f64 && float < i64::MAX as f64)
                .then(|| (float as i64).to_string()),
        },
        Value::String(text) => int_text(text.trim()),
        _ => None,
    }
}

/// [`lax_int_digits`], for an integer an `i128` holds.
pub(crate) fn lax_int(value: &Value) -> Option<i128> {
    lax_int_digits(value)?.parse().ok()
}

/// `text` as Pydantic's lax mode reads an integer from a string, as `str(int)` writes it.
fn int_text(text: &str) -> Option<String> {
    let (whole, fraction) = text.split_once('.').unwrap_or((text, "0"));
    if fraction.is_empty() || fraction.bytes().any(|byte| byte != b'0') {
        return None;
    }
    let (negative, digits) = match whole.strip_prefix('-') {
        Some(digits) => (true, digits),
        None => (false, whole.strip_prefix('+').unwrap_or(whole)),
    };
    // Digits, with an underscore only between two of them: every piece between underscores is digits.
    if !digits.split('_').all(|piece| !piece.is_empty() && piece.bytes().all(|byte| byte.is_ascii_digit())) {
        return None;
    }
    Some(PyInt::canonical_digits(negative, &digits.replace('_', "")))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// What Pydantic 2's lax `int` made of each value (recorded with the reference's Pydantic: `None` where it
    /// raised a `ValidationError`).
    #[test]
    fn integers_are_read_as_pydantics_lax_mode_reads_them() {
        let cases: [(Value, Option<i128>); 42] = [
            (json!(10), Some(10)),
            (json!(10.0), Some(10)),
            (json!(10.5), None),
            (json!(true), Some(1)),
            (json!(false), Some(0)),
            (json!(-0.0), Some(0)),
            (json!(1e20), None),
            (json!(9.2e18), Some(9_200_000_000_000_000_000)),
            (json!(9.3e18), None),
            (json!(9223372036854775808.0), None),
            (json!(-9223372036854775808.0), None),
            (json!(4503599627370497.0), Some(4_503_599_627_370_497)),
            (json!("10"), Some(10)),
            (json!(" 10 "), Some(10)),
            (json!("\t10\n"), Some(10)),
            (json!("\u{a0}10"), Some(10)),
            (json!("10\u{2003}"), Some(10)),
            (json!("\u{85}10"), Some(10)),
            (json!("\u{1c}10"), None),
            (json!("\u{200b}10"), None),
            (json!("+10"), Some(10)),
            (json!("-0"), Some(0)),
            (json!("1_0"), Some(10)),
            (json!("+0_1"), Some(1)),
            (json!("1__0"), None),
            (json!("_10"), None),
            (json!("10_"), None),
            (json!("010"), Some(10)),
            (json!("10.0"), Some(10)),
            (json!("10.00"), Some(10)),
            (json!(" +10.0 "), Some(10)),
            (json!("1_0.0"), Some(10)),
            (json!("10."), None),
            (json!(".0"), None),
            (json!("1.0_0"), None),
            (json!("10.5"), None),
            (json!("1e1"), None),
            (json!("0x10"), None),
            (json!("\u{ff11}\u{ff10}"), None),
            (json!("+-10"), None),
            (json!(""), None),
            (json!(null), None),
        ];
        for (value, expected) in cases {
            assert_eq!(lax_int(&value), expected, "{value}");
        }
        assert_eq!(lax_int(&json!("99999999999999999999.0")), Some(99_999_999_999_999_999_999));
        assert_eq!(lax_int(&json!([1])), None);
        // Of any size, as Python's `int` (found by helper-66: beyond an `i128`, text was not read).
        let big = "170141183460469231731687303715884105728";
        assert_eq!(lax_int_digits(&json!(format!(" +000{big}.00 "))).as_deref(), Some(big));
        assert_eq!(lax_int_digits(&json!(format!("-{big}"))).as_deref(), Some(&*format!("-{big}")));
        assert_eq!(lax_int_digits(&json!("-0_0")).as_deref(), Some("0"));
        assert_eq!(lax_int(&json!(big)), None);
    }
}
