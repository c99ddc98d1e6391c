//! A Python `int` of any size, as [`PartIndex`](crate::PartIndex) and [`SourceSequence`](crate::SourceSequence)
//! hold one: a 64-bit one as a number, a larger one as the digits `str(int)` writes.

use std::fmt;

use serde_json::{Number, Value};

use crate::json::PyNumber;

/// An integer of any size. Held as `Small` exactly when it fits an `i64`, so equal integers are equal values.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) enum PyInt {
    Small(i64),
    /// The digits of a larger one (a sign when negative, no leading zero).
    Large(Box<str>),
}

impl PyInt {
    /// The integer a JSON value is, as Python's `json` reads it (`-0` is `0`); `None` for anything else.
    pub(crate) fn of_value(value: &Value) -> Option<PyInt> {
        let Value::Number(number) = value else { return None };
        match PyNumber::of_number(number) {
            PyNumber::Int(digits) => Some(PyInt::of_digits(digits)),
            PyNumber::Float(_) => None,
        }
    }

    /// The integer a sign and decimal digits spell (leading zeros allowed), as Python writes it: a sign only when
    /// negative, no leading zero (`-000` is `0`).
    pub(crate) fn canonical_digits(negative: bool, digits: &str) -> String {
        match (negative, digits.trim_start_matches('0')) {
            (_, "") => "0".to_owned(),
            (true, magnitude) => format!("-{magnitude}"),
            (false, magnitude) => magnitude.to_owned(),
        }
    }

    /// The integer of decimal digits as Python writes them.
    pub(crate) fn of_digits(digits: &str) -> PyInt {
        match digits.parse() {
            Ok(small) => PyInt::Small(small),
            Err(_) => PyInt::Large(digits.into()),
        }
    }

    pub(crate) fn is_negative(&self) -> bool {
        match self {
            PyInt::Small(small) => *small < 0,
            PyInt::Large(digits) => digits.starts_with('-'),
        }
    }

    /// The integer as a JSON number.
    pub(crate) fn to_value(&self) -> Value {
        match self {
            PyInt::Small(small) => Value::from(*small),
            // Digits are a JSON integer, and `serde_json` keeps a number's literal as it is.
            PyInt::Large(digits) => digits.parse::<Number>().map_or(Value::Null, Value::Number),
        }
    }
}

impl fmt::Display for PyInt {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PyInt::Small(small) => write!(f, "{small}"),
            PyInt::Large(digits) => f.write_str(digits),
        }
    }
}
