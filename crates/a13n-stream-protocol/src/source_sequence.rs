//! A source item's position in its Run's stream, as Python holds it: an `int` of 0 or more, of any size. The
//! reference copies it into carried-through observations, a terminal event's raw event, input message ids and
//! fragment identities; nothing orders by it.

use std::fmt;

use serde_json::Value;

use crate::py_int::PyInt;

/// A source item's `sequence`: an integer of 0 or more (`-0` is `0`), of any size.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct SourceSequence(PyInt);

impl SourceSequence {
    /// The sequence a JSON value is: an integer of 0 or more; `None` for anything else.
    pub(crate) fn of_value(value: &Value) -> Option<SourceSequence> {
        PyInt::of_value(value).filter(|int| !int.is_negative()).map(SourceSequence)
    }

    /// The sequence, when it fits 64 bits.
    pub fn as_u64(&self) -> Option<u64> {
        match &self.0 {
            PyInt::Small(small) => u64::try_from(*small).ok(),
            PyInt::Large(digits) => digits.parse().ok(),
        }
    }

    /// The sequence as a JSON number.
    pub fn to_value(&self) -> Value {
        self.0.to_value()
    }
}

impl From<u64> for SourceSequence {
    fn from(sequence: u64) -> SourceSequence {
        SourceSequence(i64::try_from(sequence).map_or_else(|_| PyInt::of_digits(&sequence.to_string()), PyInt::Small))
    }
}

impl PartialEq<u64> for SourceSequence {
    fn eq(&self, other: &u64) -> bool {
        self.as_u64() == Some(*other)
    }
}

impl fmt::Display for SourceSequence {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
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
