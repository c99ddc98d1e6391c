//! A source item's position in its Run's stream, as Python holds it: an `int` of 0 or more, of any size. The
//! reference copies it into carried-through observations, a terminal event's raw event, input message ids and
//! fragment identities; nothing orders by it.

use std::fmt;

use serde_json::{Number, Value};

use crate::json::PyNumber;

/// A source item's `sequence`: an integer of 0 or more (`-0` is `0`), of any size.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct SourceSequence(Repr);

/// Almost every sequence fits 64 bits, and is held so.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum Repr {
    Small(u64),
    /// The digits of a larger one, as `str(int)` writes them.
    Large(Box<str>),
}

impl SourceSequence {
    /// The sequence a JSON value is: an integer of 0 or more; `None` for anything else.
    pub(crate) fn of_value(value: &Value) -> Option<SourceSequence> {
        let Value::Number(number) = value else { return None };
        match PyNumber::of_number(number) {
            PyNumber::Int(digits) if !digits.starts_with('-') => Some(SourceSequence::of_digits(digits)),
            _ => None,
        }
    }

    /// The sequence of non-negative decimal digits as Python writes them (no sign, no leading zero).
    fn of_digits(digits: &str) -> SourceSequence {
        match digits.parse() {
            Ok(small) => SourceSequence(Repr::Small(small)),
            Err(_) => SourceSequence(Repr::Large(digits.into())),
        }
    }

    /// The sequence, when it fits 64 bits.
    pub fn as_u64(&self) -> Option<u64> {
        match self.0 {
            Repr::Small(small) => Some(small),
            Repr::Large(_) => None,
        }
    }

    /// The sequence as a JSON number.
    pub fn to_value(&self) -> Value {
        match &self.0 {
            Repr::Small(small) => Value::from(*small),
            // Digits are a JSON integer, and `serde_json` keeps a number's literal as it is.
            Repr::Large(digits) => digits.parse::<Number>().map_or(Value::Null, Value::Number),
        }
    }
}

impl From<u64> for SourceSequence {
    fn from(sequence: u64) -> SourceSequence {
        SourceSequence(Repr::Small(sequence))
    }
}

impl PartialEq<u64> for SourceSequence {
    fn eq(&self, other: &u64) -> bool {
        self.as_u64() == Some(*other)
    }
}

impl fmt::Display for SourceSequence {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0 {
            Repr::Small(small) => write!(f, "{small}"),
            Repr::Large(digits) => f.write_str(digits),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sequences_are_integers_of_zero_or_more_of_any_size() {
        let of = |text: &str| SourceSequence::of_value(&serde_json::from_str(text).unwrap());
        assert_eq!(of("7"), Some(SourceSequence::from(7)));
        assert_eq!(of("-0"), Some(SourceSequence::from(0)));
        for large in ["18446744073709551616", "100000000000000000000000000000000000000000000000000"] {
            let sequence = of(large).unwrap();
            assert_eq!((sequence.to_string().as_str(), sequence.as_u64()), (large, None));
            assert_eq!(serde_json::to_string(&sequence.to_value()).unwrap(), large);
        }
        assert_eq!(of("18446744073709551615").and_then(|s| s.as_u64()), Some(u64::MAX));
        for refused in ["-1", "1.0", "1e3", "true", "\"1\"", "null"] {
            assert_eq!(of(refused), None, "{refused}");
        }
    }
}
