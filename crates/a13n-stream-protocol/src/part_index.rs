//! A model response part's `index`, as Python holds it: an `int` of any size. It names the part's positional ids
//! (`RUN:request-N:part-INDEX:KIND`) and keys the observer's open parts, in its state and so in every checkpoint.

use std::fmt;

use serde::de::{self, Visitor};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

use crate::py_int::PyInt;

/// A part's index: any integer (`-0` is `0`).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct PartIndex(PyInt);

impl PartIndex {
    /// The index a JSON value is: an integer; `None` for anything else.
    pub(crate) fn of_value(value: &Value) -> Option<PartIndex> {
        PyInt::of_value(value).map(PartIndex)
    }
}

impl From<i64> for PartIndex {
    fn from(index: i64) -> PartIndex {
        PartIndex(PyInt::Small(index))
    }
}

impl fmt::Display for PartIndex {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

/// A checkpoint holds an index only as a key of the open parts' map: a JSON string of its digits.
impl Serialize for PartIndex {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for PartIndex {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(IndexVisitor)
    }
}

struct IndexVisitor;

impl Visitor<'_> for IndexVisitor {
    type Value = PartIndex;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a part index: an integer, or its digits as a map key")
    }

    fn visit_i64<E: de::Error>(self, index: i64) -> Result<PartIndex, E> {
        Ok(PartIndex::from(index))
    }

    fn visit_u64<E: de::Error>(self, index: u64) -> Result<PartIndex, E> {
        Ok(PartIndex(PyInt::of_digits(&index.to_string())))
    }

    /// A key's digits, with a sign and leading zeros as Rust's integer parsing allows them at any size.
    fn visit_str<E: de::Error>(self, text: &str) -> Result<PartIndex, E> {
        let (negative, unsigned) = match text.as_bytes().first() {
            Some(b'-') => (true, &text[1..]),
            Some(b'+') => (false, &text[1..]),
            _ => (false, text),
        };
        if unsigned.is_empty() || !unsigned.bytes().all(|byte| byte.is_ascii_digit()) {
            return Err(E::custom(format!("a part index: expected an integer, found {text:?}")));
        }
        Ok(PartIndex(PyInt::of_digits(&PyInt::canonical_digits(negative, unsigned))))
    }
}

#[cfg(test)]
mod tests {
    use indexmap::IndexMap;

    use super::*;

    #[test]
    fn indexes_are_integers_of_any_size() {
        let of = |text: &str| PartIndex::of_value(&serde_json::from_str(text).unwrap()).map(|i| i.to_string());
        for (given, held) in [("3", "3"), ("-1", "-1"), ("-0", "0"), ("9223372036854775808", "9223372036854775808")] {
            assert_eq!(of(given).as_deref(), Some(held), "{given}");
        }
        assert_eq!(of("-18446744073709551623").as_deref(), Some("-18446744073709551623"));
        for refused in ["1.0", "1e3", "true", "\"1\"", "null"] {
            assert_eq!(of(refused), None, "{refused}");
        }
        assert_eq!(PartIndex::of_value(&serde_json::json!(7)), Some(PartIndex::from(7)));
    }

    /// The open parts' map keys, as the reference's checkpoint writes them, read back and written again.
    #[test]
    fn map_keys_round_trip_at_any_size() {
        let text = r#"{"0":1,"-5":2,"9223372036854775808":3,"-99999999999999999999":4}"#;
        let parts: IndexMap<PartIndex, u8> = serde_json::from_str(text).unwrap();
        assert_eq!(parts.get(&PartIndex::from(-5)), Some(&2));
        assert_eq!(serde_json::to_string(&parts).unwrap(), text);
        // Signs and leading zeros at any size, as the 64-bit keys read before; the index written back as Python does.
        let spelled: IndexMap<PartIndex, u8> =
            serde_json::from_str(r#"{"+5":1,"007":2,"-000":3,"-0099999999999999999999":4}"#).unwrap();
        assert_eq!(serde_json::to_string(&spelled).unwrap(), r#"{"5":1,"7":2,"0":3,"-99999999999999999999":4}"#);
        for refused in [r#"{"1.0":1}"#, r#"{"x":1}"#, r#"{"":1}"#, r#"{"-":1}"#, r#"{"1_0":1}"#] {
            assert!(serde_json::from_str::<IndexMap<PartIndex, u8>>(refused).is_err(), "{refused}");
        }
    }
}
