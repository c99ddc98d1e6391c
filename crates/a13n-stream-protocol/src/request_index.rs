//! The index of the model request in progress, as Python holds it: an `int` of any size. The observer keeps it in
//! its state; the extension rules and the carried lane read it from a payload.

use std::borrow::Cow;
use std::fmt;

use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Number, Value};

use crate::json::PyNumber;

/// The index of a run's model request in progress: what its last `model_request_started` payload gave as an integer
/// of 0 or more (any size, as Python reads it: `-0` is `0`), or what a checkpoint holds (any integer). It names the
/// positional ids of the request's parts (`RUN:request-INDEX:part-N:KIND`) and is written in the checkpoint as the
/// number it is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RequestIndex(Cow<'static, str>);

impl Default for RequestIndex {
    fn default() -> Self {
        RequestIndex(Cow::Borrowed("0"))
    }
}

impl RequestIndex {
    /// The index a payload's `request_index` sets: an integer of 0 or more (`None` for anything else, which
    /// changes nothing: a negative or fractional number, a string, a boolean).
    pub(crate) fn of_payload(value: &Value) -> Option<RequestIndex> {
        let Value::Number(number) = value else { return None };
        Self::of_payload_text(number.as_str())
    }

    /// [`of_payload`](Self::of_payload) of a value's JSON text as written (the carried lane reads it so).
    pub(crate) fn of_payload_text(text: &str) -> Option<RequestIndex> {
        let number = text.starts_with(|first: char| first == '-' || first.is_ascii_digit());
        number.then_some(text).and_then(Self::of_literal).filter(|index| !index.0.starts_with('-'))
    }

    /// The integer a JSON literal is, in Python's digits (`None` for a float).
    pub(crate) fn of_literal(literal: &str) -> Option<RequestIndex> {
        match PyNumber::of(literal) {
            PyNumber::Int(digits) => Some(RequestIndex(Cow::Owned(digits.to_owned()))),
            PyNumber::Float(_) => None,
        }
    }

    /// The index's digits, as `str(int)` writes them.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl From<u64> for RequestIndex {
    fn from(index: u64) -> Self {
        RequestIndex(Cow::Owned(index.to_string()))
    }
}

impl fmt::Display for RequestIndex {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl Serialize for RequestIndex {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        // Its digits are a JSON integer; `serde_json` keeps a `Number`'s literal as it is.
        let number: Number = self.0.parse().map_err(serde::ser::Error::custom)?;
        number.serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for RequestIndex {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let number = Number::deserialize(deserializer)?;
        RequestIndex::of_literal(number.as_str())
            .ok_or_else(|| D::Error::custom(format!("request_index: expected an integer, found {number}")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn payload_indexes_are_integers_of_zero_or_more_of_any_size() {
        let of = |text: &str| RequestIndex::of_payload(&serde_json::from_str(text).unwrap()).map(|i| i.to_string());
        assert_eq!(of("5").as_deref(), Some("5"));
        assert_eq!(of("-0").as_deref(), Some("0"));
        assert_eq!(of("18446744073709551616").as_deref(), Some("18446744073709551616"));
        for refused in ["-1", "1.0", "1e3", "true", "\"1\"", "null"] {
            assert_eq!(of(refused), None, "{refused}");
        }
    }

    #[test]
    fn checkpoints_hold_the_number_as_it_is() {
        let index: RequestIndex = serde_json::from_str("99999999999999999999999").unwrap();
        assert_eq!(serde_json::to_string(&index).unwrap(), "99999999999999999999999");
        let negative: RequestIndex = serde_json::from_str("-3").unwrap();
        assert_eq!(negative.as_str(), "-3");
        assert!(serde_json::from_str::<RequestIndex>("1.5").is_err());
        assert_eq!(serde_json::to_string(&RequestIndex::default()).unwrap(), "0");
    }
}
