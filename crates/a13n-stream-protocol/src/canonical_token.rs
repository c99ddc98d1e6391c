//! Where a JSON string or integer spelled as the writers spell it ends: what the canonical recogniser
//! ([`crate::canonical`]) and a skeleton's holes ([`crate::skeleton`]) accept in place of a value.

use crate::json::find_string_special;

/// Past a string at `at` (its opening quote) whose escapes are all canonical.
#[inline(always)]
pub(crate) fn string_end(bytes: &[u8], at: usize) -> Option<usize> {
    let special = find_string_special(bytes, at + 1)?;
    if bytes[special] == b'"' {
        return Some(special + 1);
    }
    escaped_string_end(bytes, special)
}

/// Past the rest of a string from `at`, its first escape or control character.
#[inline(never)]
fn escaped_string_end(bytes: &[u8], mut at: usize) -> Option<usize> {
    loop {
        match bytes[at] {
            b'"' => return Some(at + 1),
            b'\\' => match *bytes.get(at + 1)? {
                b'"' | b'\\' | b'n' | b'r' | b't' | b'b' | b'f' => at += 2,
                b'u' => {
                    // Only the controls without a short escape, as `\u00` and two lowercase hex digits.
                    let unit = bytes.get(at + 2..at + 6)?;
                    let lower_hex = |b: &u8| b.is_ascii_digit() || (b'a'..=b'f').contains(b);
                    let control = unit.starts_with(b"00") && unit[2] <= b'1' && unit.iter().all(lower_hex);
                    let short = matches!(&unit[2..], b"08" | b"09" | b"0a" | b"0c" | b"0d");
                    if !control || short {
                        return None;
                    }
                    at += 6;
                }
                _ => return None,
            },
            // A raw control character.
            _ => return None,
        }
        at = find_string_special(bytes, at)?;
    }
}

/// Past a plain integer at `at`: no leading zero, no negative zero, at most 18 digits (always within `i64`), and
/// no fraction or exponent after it.
#[inline]
pub(crate) fn integer_end(bytes: &[u8], at: usize) -> Option<usize> {
    // A text that ends where the integer would start (a checkpoint cut short) has none.
    let negative = bytes.get(at) == Some(&b'-');
    let start = at + usize::from(negative);
    let mut end = start;
    while bytes.get(end).is_some_and(u8::is_ascii_digit) {
        end += 1;
    }
    let plain = match &bytes[start..end] {
        [] => false,
        [b'0'] => !negative,
        [b'0', ..] => false,
        digits => digits.len() <= 18,
    };
    (plain && !matches!(bytes.get(end), Some(b'.' | b'e' | b'E'))).then_some(end)
}
