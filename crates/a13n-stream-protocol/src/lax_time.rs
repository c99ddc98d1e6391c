//! A date-time field as Pydantic's lax mode reads it. A number, or text holding one, is a Unix time: seconds
//! since the epoch, or milliseconds once its size passes 2e10; the instant is UTC. A fraction is rounded to the
//! nearest microsecond. Text takes the digits of an integer (signed or not) or of a decimal with a point (then an
//! exponent too); anything else is not a Unix time, and is read as ISO 8601 text or refused.
//! `tests/data/pydantic_datetimes.jsonl` records Pydantic on each rule's edges.

use crate::json::PyNumber;
use crate::time::UtcTime;

/// A Unix time's size from which it counts milliseconds, not seconds.
const MILLIS_PAST: u64 = 20_000_000_000;

/// A Unix time as Pydantic holds one before it reads an instant from it.
#[derive(Clone, Copy, Debug, PartialEq)]
enum UnixTime {
    Int(i64),
    Float(f64),
}

/// The text Pydantic's JSON mode writes for a date-time field given the string `text`: the instant of a Unix time it
/// holds, UTC, or else the ISO 8601 date-time (or date alone) it spells ([`crate::time::pydantic_iso_datetime`]).
/// `None` when it is neither.
pub(crate) fn pydantic_datetime(text: &str) -> Option<String> {
    match unix_time_of_text(text) {
        Some(time) => Some(time.to_string()),
        None => crate::time::pydantic_iso_datetime(text),
    }
}

/// The instant a date-time field holds when a line writes its value, the JSON text `literal`, as a number (the
/// field's dump then writes the instant as text); `None` for any other value, and where Pydantic refuses the number
/// (an integer past 64 bits, a float too large to hold, an instant outside Python's years 1 to 9999).
pub(crate) fn unix_time_of_number(literal: &str) -> Option<UtcTime> {
    if !literal.starts_with(|first: char| first == '-' || first.is_ascii_digit()) {
        return None;
    }
    let time = match PyNumber::of(literal) {
        PyNumber::Int(digits) => UnixTime::Int(digits.parse().ok()?),
        PyNumber::Float(value) => UnixTime::Float(value),
    };
    instant(time)
}

/// The instant a string given for a date-time field stands for when it holds a Unix time (`"1764439540"`,
/// `"-.5"`, `"1.5e3"`); `None` when it holds none, or one Pydantic refuses.
fn unix_time_of_text(text: &str) -> Option<UtcTime> {
    instant(unix_time_in(text)?)
}

/// Whether `text` holds a Unix time, as text may: an integer's digits (within 64 bits), or a decimal's with its
/// point, the exponent after it.
fn unix_time_in(text: &str) -> Option<UnixTime> {
    // ISO text fails here at its first `T`, space or colon, before any closer look.
    if !text.bytes().all(|byte| byte.is_ascii_digit() || matches!(byte, b'+' | b'-' | b'.' | b'e' | b'E')) {
        return None;
    }
    let unsigned = text.strip_prefix(['+', '-']).unwrap_or(text);
    let digits = |part: &str| part.bytes().all(|byte| byte.is_ascii_digit());
    if !unsigned.is_empty() && digits(unsigned) {
        return text.parse().ok().map(UnixTime::Int);
    }
    let (mantissa, exponent) = match unsigned.split_once(['e', 'E']) {
        Some((mantissa, exponent)) => (mantissa, Some(exponent)),
        None => (unsigned, None),
    };
    let (whole, fraction) = mantissa.split_once('.')?;
    let exponent_well_formed = exponent.is_none_or(|exponent| {
        let unsigned = exponent.strip_prefix(['+', '-']).unwrap_or(exponent);
        !unsigned.is_empty() && digits(unsigned)
    });
    let well_formed = digits(whole) && digits(fraction) && whole.len() + fraction.len() > 0 && exponent_well_formed;
    well_formed.then(|| text.parse().ok().map(UnixTime::Float)).flatten()
}

/// The instant `time` stands for, if Python can hold it.
fn instant(time: UnixTime) -> Option<UtcTime> {
    let micros = match time {
        UnixTime::Int(value) => value.checked_mul(unit_micros(value.unsigned_abs() > MILLIS_PAST))?,
        UnixTime::Float(value) => {
            if !value.is_finite() {
                return None;
            }
            let unit = unit_micros(value.abs() > MILLIS_PAST as f64);
            let whole = value.floor();
            // A whole past 64 bits is past year 9999 in either unit.
            if whole.abs() >= 9.2e18 {
                return None;
            }
            let fraction = ((value - whole) * unit as f64).round() as i64;
            (whole as i64).checked_mul(unit)?.checked_add(fraction)?
        }
    };
    UtcTime::from_unix_micros(micros)
}

/// Microseconds in a Unix time's unit.
fn unit_micros(millis: bool) -> i64 {
    if millis {
        1_000
    } else {
        1_000_000
    }
}

#[cfg(test)]
mod tests {
    use super::{pydantic_datetime, unix_time_of_number, unix_time_of_text};

    /// Every value `tests/oracle/pydantic_datetime_cases.py` recorded: what Pydantic writes for it, or its refusal.
    /// ISO text Pydantic refuses is not held to it: it is converted as given, a difference left (docs/TESTING.md).
    #[test]
    fn every_recorded_value_reads_as_pydantic_reads_it() {
        let recorded = include_str!("../tests/data/pydantic_datetimes.jsonl");
        let (mut wrong, mut accepted, mut refused) = (Vec::new(), 0, 0);
        for line in recorded.lines() {
            let (given, expected): (String, Option<String>) = serde_json::from_str(line).expect("a recorded case");
            let got = match serde_json::from_str::<serde_json::Value>(&given).expect("a JSON value") {
                serde_json::Value::String(text) => match unix_time_of_text(&text) {
                    Some(time) => Some(time.to_string()),
                    None => pydantic_datetime(&text).filter(|_| expected.is_some()),
                },
                serde_json::Value::Number(_) => unix_time_of_number(&given).map(|time| time.to_string()),
                other => panic!("recorded {other}"),
            };
            match expected.is_some() {
                true => accepted += 1,
                false => refused += 1,
            }
            if got != expected {
                wrong.push(format!("{given}: Pydantic {expected:?}, here {got:?}"));
            }
        }
        assert!(accepted > 900 && refused > 100, "the recording holds both: {accepted} accepted, {refused} refused");
        assert!(wrong.is_empty(), "{} of {} differ:\n{}", wrong.len(), accepted + refused, wrong.join("\n"));
    }
}
