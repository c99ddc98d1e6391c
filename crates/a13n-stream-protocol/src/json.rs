//! JSON encodings that reproduce the reference runtime byte for byte.
//!
//! Two encoders matter for parity:
//! - Python's `json.dumps`, used by the reference for tool-argument text, tool-result text, size limits and
//!   failure messages (`ensure_ascii`, `sort_keys` and separators vary by call site);
//! - Pydantic's `model_dump_json`, used for checkpoints and oversized CUSTOM events: compact, raw UTF-8.
//!
//! Both write floats the way Python's `repr` does (`1e-05`, `21.0`, `1e+16`), which differs from Rust's
//! shortest-representation formatting only in layout, never in digits.

use std::borrow::Cow;
use std::io;
use std::sync::LazyLock;

use memchr::memmem::Finder;
use serde::Serialize;
use serde_json::ser::{CharEscape, Formatter};
use serde_json::{Map, Value};

/// A JSON object with insertion order preserved, as Python dicts keep it.
pub type Object = Map<String, Value>;

/// The sign, the shortest round-trip decimal digits and the decimal exponent of the first digit: `-0.0125` is
/// `(true, "125", -2)`. Both float layouts below are arrangements of these.
fn shortest_digits(value: f64) -> (bool, String, i32) {
    // `{:e}` yields the shortest round-trip digits: "-1.25e-2".
    let sci = format!("{value:e}");
    let (mantissa, exponent) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exponent: i32 = exponent.parse().unwrap_or(0);
    let (negative, mantissa) = match mantissa.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, mantissa),
    };
    (negative, mantissa.chars().filter(|c| *c != '.').collect(), exponent)
}

/// A JSON number as Python's `json.loads` holds it: an `int` of any size (its digits), or a `float`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum PyNumber<'a> {
    /// An integer literal, as `str(int)` writes it (`-0` is `0`).
    Int(&'a str),
    /// Any literal with a fraction or an exponent.
    Float(f64),
}

impl<'a> PyNumber<'a> {
    /// The number a JSON literal is, in Python.
    pub(crate) fn of(literal: &'a str) -> PyNumber<'a> {
        if literal.bytes().any(|byte| matches!(byte, b'.' | b'e' | b'E')) {
            return PyNumber::Float(literal.parse().unwrap_or(f64::NAN));
        }
        match literal.strip_prefix('-') {
            Some(digits) if digits.bytes().all(|digit| digit == b'0') => PyNumber::Int("0"),
            _ => PyNumber::Int(literal),
        }
    }

    /// The number a parsed JSON number is (its literal, which `serde_json` keeps).
    pub(crate) fn of_number(number: &'a serde_json::Number) -> PyNumber<'a> {
        PyNumber::of(number.as_str())
    }

    /// `json.dumps`'s text (`Infinity` for a float too large to hold).
    pub(crate) fn dumps(self) -> Cow<'a, str> {
        match self {
            PyNumber::Int(text) => Cow::Borrowed(text),
            PyNumber::Float(value) if value.is_finite() => Cow::Owned(py_float_repr(value)),
            PyNumber::Float(value) if value > 0.0 => Cow::Borrowed("Infinity"),
            PyNumber::Float(value) if value < 0.0 => Cow::Borrowed("-Infinity"),
            PyNumber::Float(_) => Cow::Borrowed("NaN"),
        }
    }

    /// Python's `repr` (and `str`): `inf`, `-inf` and `nan` for a float that is not finite.
    pub(crate) fn repr(self) -> Cow<'a, str> {
        match self {
            PyNumber::Float(value) if value.is_nan() => Cow::Borrowed("nan"),
            PyNumber::Float(value) if value.is_infinite() => Cow::Borrowed(if value > 0.0 { "inf" } else { "-inf" }),
            number => number.dumps(),
        }
    }

    /// Pydantic's JSON text (`null` for a float that is not finite).
    pub(crate) fn pydantic(self) -> Cow<'a, str> {
        match self {
            PyNumber::Int(text) => Cow::Borrowed(text),
            PyNumber::Float(value) if value.is_finite() => Cow::Owned(pydantic_float_repr(value)),
            PyNumber::Float(_) => Cow::Borrowed("null"),
        }
    }
}

/// The most digits Python 3.13 converts from text to an `int` (`sys.get_int_max_str_digits()`'s default): its
/// `json.loads` refuses a line holding a longer integer.
pub(crate) const PY_INT_MAX_DIGITS: usize = 4300;

/// The path and digit count of the first integer in `value` longer than [`PY_INT_MAX_DIGITS`].
pub(crate) fn long_integer(value: &Value) -> Option<(String, usize)> {
    // The path is written only for the integer found.
    let nested = |key: &dyn std::fmt::Display, (path, digits): (String, usize)| {
        (if path.is_empty() { key.to_string() } else { format!("{key}.{path}") }, digits)
    };
    match value {
        Value::Number(number) => match PyNumber::of_number(number) {
            PyNumber::Int(digits) => {
                let digits = digits.trim_start_matches('-').len();
                (digits > PY_INT_MAX_DIGITS).then(|| (String::new(), digits))
            }
            PyNumber::Float(_) => None,
        },
        Value::Array(items) => {
            items.iter().enumerate().find_map(|(at, item)| long_integer(item).map(|found| nested(&at, found)))
        }
        Value::Object(fields) => {
            fields.iter().find_map(|(key, child)| long_integer(child).map(|found| nested(key, found)))
        }
        _ => None,
    }
}

/// Whether `line` may hold an integer longer than [`PY_INT_MAX_DIGITS`]: a run of more digits than that anywhere in
/// it (in a string too). The lanes leave such a line to the general path, which tells ([`long_integer`]). Such a run
/// covers one of every `PY_INT_MAX_DIGITS + 1` bytes, so only those are looked at, and the run around a digit there.
pub(crate) fn may_hold_long_integer(line: &str) -> bool {
    let bytes = line.as_bytes();
    let digit = |byte: &&u8| byte.is_ascii_digit();
    (PY_INT_MAX_DIGITS..bytes.len()).step_by(PY_INT_MAX_DIGITS + 1).any(|at| {
        bytes[at].is_ascii_digit()
            && bytes[..at].iter().rev().take_while(digit).count() + bytes[at..].iter().take_while(digit).count()
                > PY_INT_MAX_DIGITS
    })
}

/// `value` when it is an integer from 0 to 2**64 - 1 as Python reads it (`-0` is `0`).
pub(crate) fn py_u64(value: &Value) -> Option<u64> {
    match value {
        Value::Number(number) => match PyNumber::of_number(number) {
            PyNumber::Int(digits) => digits.parse().ok(),
            PyNumber::Float(_) => None,
        },
        _ => None,
    }
}

/// Whether every number in `value` is finite as Python reads it (`json.loads` reads `1E400` as infinity).
pub(crate) fn finite_numbers(value: &Value) -> bool {
    match value {
        Value::Number(number) => !matches!(PyNumber::of_number(number), PyNumber::Float(float) if !float.is_finite()),
        Value::Array(items) => items.iter().all(finite_numbers),
        Value::Object(entries) => entries.values().all(finite_numbers),
        _ => true,
    }
}

/// Python's `==` of two JSON values as `json.loads` makes them: numbers by value, exactly (`1.50 == 1.5`,
/// `-0 == 0`, `1 == 1.0`, `2**64 + 1 != 2.0**64`), whatever their spelling, and `true`/`false` as the numbers 1
/// and 0 (`bool` is an `int`); objects as dicts (order aside).
pub(crate) fn py_equal(a: &Value, b: &Value) -> bool {
    match (py_numeric(a), py_numeric(b)) {
        (Some(x), Some(y)) => return numbers_equal(x, y),
        (Some(_), None) | (None, Some(_)) => return false,
        (None, None) => {}
    }
    match (a, b) {
        (Value::Array(x), Value::Array(y)) => x.len() == y.len() && x.iter().zip(y).all(|(x, y)| py_equal(x, y)),
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(key, x)| y.get(key).is_some_and(|y| py_equal(x, y)))
        }
        _ => a == b,
    }
}

/// A number, or a boolean as the number Python's `bool` is; `None` for any other value.
fn py_numeric(value: &Value) -> Option<PyNumber<'_>> {
    match value {
        Value::Number(number) => Some(PyNumber::of_number(number)),
        Value::Bool(flag) => Some(PyNumber::Int(if *flag { "1" } else { "0" })),
        _ => None,
    }
}

/// Python's `==` of two numbers: an integer equals a float only when the float is that integer exactly.
fn numbers_equal(x: PyNumber<'_>, y: PyNumber<'_>) -> bool {
    match (x, y) {
        (PyNumber::Int(x), PyNumber::Int(y)) => x == y,
        (PyNumber::Float(x), PyNumber::Float(y)) => x == y,
        (PyNumber::Int(int), PyNumber::Float(float)) | (PyNumber::Float(float), PyNumber::Int(int)) => {
            // A finite float with no fraction is an integer, which `{:.0}` writes in full (`-0.0` as `-0`).
            float.is_finite() && float.fract() == 0.0 && {
                let whole = format!("{float:.0}");
                int == whole.strip_prefix('-').filter(|digits| *digits == "0").unwrap_or(&whole)
            }
        }
    }
}

/// Format a finite float as Python's `repr(float)`.
pub fn py_float_repr(value: f64) -> String {
    float_layout(value, -3, 2)
}

/// Format a finite float as Pydantic's JSON serializer does: ryu's layout (plain decimals while the decimal
/// point falls within 16 digits of the value, `0.0000d` down to five leading zeros), with `e+` for positive
/// exponents as Python writes them.
pub fn pydantic_float_repr(value: f64) -> String {
    float_layout(value, -4, 1)
}

/// `value` in plain decimals while its decimal point falls from `lowest_point` to 16 places into its shortest
/// digits, else as `d.ddde±X` with at least `exponent_digits` digits of exponent; Python's tokens for zero and
/// for floats that are not finite.
fn float_layout(value: f64, lowest_point: i32, exponent_digits: usize) -> String {
    if value == 0.0 {
        return if value.is_sign_negative() { "-0.0".into() } else { "0.0".into() };
    }
    if !value.is_finite() {
        // Python's json.dumps writes these non-standard tokens; serde_json values never hold them.
        return if value.is_nan() {
            "NaN".into()
        } else if value > 0.0 {
            "Infinity".into()
        } else {
            "-Infinity".into()
        };
    }
    let (negative, digits, exponent) = shortest_digits(value);
    let mut out = String::with_capacity(digits.len() + 24);
    if negative {
        out.push('-');
    }
    let point = exponent + 1; // the decimal point's position within `digits`
    if !(lowest_point..=16).contains(&point) {
        out.push_str(&digits[..1]);
        if digits.len() > 1 {
            out.push('.');
            out.push_str(&digits[1..]);
        }
        out.push_str(if exponent < 0 { "e-" } else { "e+" });
        out.push_str(&format!("{:0exponent_digits$}", exponent.unsigned_abs()));
    } else if point <= 0 {
        out.push_str("0.");
        out.extend(std::iter::repeat_n('0', point.unsigned_abs() as usize));
        out.push_str(&digits);
    } else if point as usize >= digits.len() {
        out.push_str(&digits);
        out.extend(std::iter::repeat_n('0', point as usize - digits.len()));
        out.push_str(".0");
    } else {
        out.push_str(&digits[..point as usize]);
        out.push('.');
        out.push_str(&digits[point as usize..]);
    }
    out
}

/// Where the string whose text starts at `from` (after its opening quote) closes: the position of its closing
/// quote. Any escape is accepted; `None` for a raw control character or no end.
pub(crate) fn json_string_end(bytes: &[u8], from: usize) -> Option<usize> {
    let mut at = from;
    loop {
        let found = find_string_special(bytes, at)?;
        match bytes[found] {
            b'"' => return Some(found),
            b'\\' => at = found + 2,
            _ => return None,
        }
    }
}

/// JSON text as Python's `json.dumps` spells it respelled as Pydantic's `model_dump_json` spells it (what
/// [`to_pydantic_writer`] writes). The two differ in floats alone: a float with a decimal exponent from -5 to -9
/// (`1e-05` is `0.00001`, `2.5e-07` is `2.5e-7`), and a float too large to hold (`Infinity`, `-Infinity`, `NaN`,
/// which `json.dumps` writes for a plain value, are `null`; [`to_python_writer`] writes a dump's as `null`
/// already). Text holding neither is returned as it is, after three searches.
pub(crate) fn python_to_pydantic(text: &str) -> Cow<'_, str> {
    // The searchers are built once: building one is a good part of searching a short text.
    static SUSPECTS: LazyLock<[Finder<'static>; 3]> =
        LazyLock::new(|| [Finder::new("e-0"), Finder::new("Infinity"), Finder::new("NaN")]);
    let bytes = text.as_bytes();
    let suspect = SUSPECTS.iter().any(|finder| finder.find(bytes).is_some());
    if !suspect {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    while at < bytes.len() {
        match bytes[at] {
            b'"' => {
                // A string, copied whole (only text that is not JSON has none that closes).
                let Some(close) = json_string_end(bytes, at + 1) else {
                    out.push_str(&text[at..]);
                    break;
                };
                out.push_str(&text[at..=close]);
                at = close + 1;
            }
            b'-' | b'0'..=b'9' | b'I' | b'N' => {
                let start = at;
                while at < bytes.len()
                    && matches!(bytes[at], b'-' | b'+' | b'.' | b'0'..=b'9' | b'e' | b'E' | b'A'..=b'Z' | b'a'..=b'z')
                {
                    at += 1;
                }
                let token = &text[start..at];
                match token {
                    "Infinity" | "-Infinity" | "NaN" => out.push_str("null"),
                    _ if token.bytes().all(|byte| matches!(byte, b'-' | b'+' | b'.' | b'0'..=b'9' | b'e' | b'E')) => {
                        out.push_str(&PyNumber::of(token).pydantic());
                    }
                    _ => out.push_str(token),
                }
            }
            _ => {
                let start = at;
                at += 1;
                while at < bytes.len() && !matches!(bytes[at], b'"' | b'-' | b'0'..=b'9' | b'I' | b'N') {
                    at += 1;
                }
                out.push_str(&text[start..at]);
            }
        }
    }
    Cow::Owned(out)
}

/// Options of Python's `json.dumps` that the reference varies.
#[derive(Clone, Copy, Debug)]
pub(crate) struct PyDumps {
    pub ensure_ascii: bool,
    pub sort_keys: bool,
    /// `(",", ":")` when true, Python's default `(", ", ": ")` otherwise.
    pub compact: bool,
}

impl PyDumps {
    /// `json.dumps(v, ensure_ascii=False, separators=(",", ":"), sort_keys=True)`.
    pub const SORTED_TEXT: PyDumps = PyDumps { ensure_ascii: false, sort_keys: true, compact: true };
    /// `json.dumps(v, ensure_ascii=False, separators=(",", ":"))`.
    pub const TEXT: PyDumps = PyDumps { ensure_ascii: false, sort_keys: false, compact: true };
    /// `json.dumps(v)`.
    pub const DEFAULT: PyDumps = PyDumps { ensure_ascii: true, sort_keys: false, compact: false };

    pub fn dumps(self, value: &Value) -> String {
        self.dumps_as(value, false)
    }

    /// `json.dumps` of `value` once Pydantic has dumped it in JSON mode (`dump_python(mode="json")`): a float that
    /// is not finite is `null` there.
    pub fn dumps_of_dump(self, value: &Value) -> String {
        self.dumps_as(value, true)
    }

    fn dumps_as(self, value: &Value, dumped: bool) -> String {
        let mut out = Vec::with_capacity(64);
        let mut ser = serde_json::Serializer::with_formatter(&mut out, PyFormatter { options: self, dumped });
        let result = if self.sort_keys { Sorted(value).serialize(&mut ser) } else { value.serialize(&mut ser) };
        // Serializing a `Value` into memory cannot fail.
        debug_assert!(result.is_ok());
        String::from_utf8(out).unwrap_or_default()
    }
}

/// Serializes a value with every object's keys in code point order, like `sort_keys=True`.
struct Sorted<'a>(&'a Value);

impl Serialize for Sorted<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::{SerializeMap, SerializeSeq};
        match self.0 {
            Value::Object(map) => {
                let mut entries: Vec<_> = map.iter().collect();
                entries.sort_by(|a, b| a.0.cmp(b.0));
                let mut out = serializer.serialize_map(Some(entries.len()))?;
                for (key, value) in entries {
                    out.serialize_entry(key, &Sorted(value))?;
                }
                out.end()
            }
            Value::Array(items) => {
                let mut out = serializer.serialize_seq(Some(items.len()))?;
                for item in items {
                    out.serialize_element(&Sorted(item))?;
                }
                out.end()
            }
            other => other.serialize(serializer),
        }
    }
}

struct PyFormatter {
    options: PyDumps,
    /// Whether the value is a model's JSON-mode dump (`model_dump(mode="json")`), in which Pydantic has made a float
    /// that is not finite `None`: `null`, where `json.dumps` of a plain float writes `Infinity` or `NaN`.
    dumped: bool,
}

impl Formatter for PyFormatter {
    fn write_f64<W: ?Sized + io::Write>(&mut self, writer: &mut W, value: f64) -> io::Result<()> {
        if self.dumped && !value.is_finite() {
            return writer.write_all(b"null");
        }
        writer.write_all(py_float_repr(value).as_bytes())
    }

    fn write_number_str<W: ?Sized + io::Write>(&mut self, writer: &mut W, value: &str) -> io::Result<()> {
        match PyNumber::of(value) {
            PyNumber::Float(float) if self.dumped && !float.is_finite() => writer.write_all(b"null"),
            number => writer.write_all(number.dumps().as_bytes()),
        }
    }

    fn write_f32<W: ?Sized + io::Write>(&mut self, writer: &mut W, value: f32) -> io::Result<()> {
        self.write_f64(writer, f64::from(value))
    }

    fn begin_array_value<W: ?Sized + io::Write>(&mut self, writer: &mut W, first: bool) -> io::Result<()> {
        if first {
            Ok(())
        } else if self.options.compact {
            writer.write_all(b",")
        } else {
            writer.write_all(b", ")
        }
    }

    fn begin_object_key<W: ?Sized + io::Write>(&mut self, writer: &mut W, first: bool) -> io::Result<()> {
        self.begin_array_value(writer, first)
    }

    fn begin_object_value<W: ?Sized + io::Write>(&mut self, writer: &mut W) -> io::Result<()> {
        writer.write_all(if self.options.compact { b":" } else { b": " })
    }

    fn write_string_fragment<W: ?Sized + io::Write>(&mut self, writer: &mut W, fragment: &str) -> io::Result<()> {
        // `ensure_ascii` escapes every character outside `' '..='~'`: DEL (0x7f) as well as everything past ASCII.
        if !self.options.ensure_ascii || !fragment.bytes().any(|byte| byte >= 0x7f) {
            return writer.write_all(fragment.as_bytes());
        }
        let mut units = [0u16; 2];
        for ch in fragment.chars() {
            if ch < '\u{7f}' {
                writer.write_all(&[ch as u8])?;
            } else {
                for unit in ch.encode_utf16(&mut units) {
                    write!(writer, "\\u{unit:04x}")?;
                }
            }
        }
        Ok(())
    }

    fn write_char_escape<W: ?Sized + io::Write>(&mut self, writer: &mut W, escape: CharEscape) -> io::Result<()> {
        write_python_escape(writer, escape)
    }
}

fn write_python_escape<W: ?Sized + io::Write>(writer: &mut W, escape: CharEscape) -> io::Result<()> {
    let text: &[u8] = match escape {
        CharEscape::Quote => b"\\\"",
        CharEscape::ReverseSolidus => b"\\\\",
        CharEscape::Solidus => b"/",
        CharEscape::Backspace => b"\\b",
        CharEscape::FormFeed => b"\\f",
        CharEscape::LineFeed => b"\\n",
        CharEscape::CarriageReturn => b"\\r",
        CharEscape::Tab => b"\\t",
        CharEscape::AsciiControl(byte) => return write!(writer, "\\u{byte:04x}"),
    };
    writer.write_all(text)
}

/// The formatter of Pydantic's `model_dump_json`: compact, raw UTF-8, Python float layout.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct PydanticFormatter;

impl Formatter for PydanticFormatter {
    fn write_f64<W: ?Sized + io::Write>(&mut self, writer: &mut W, value: f64) -> io::Result<()> {
        writer.write_all(pydantic_float_repr(value).as_bytes())
    }

    fn write_number_str<W: ?Sized + io::Write>(&mut self, writer: &mut W, value: &str) -> io::Result<()> {
        writer.write_all(PyNumber::of(value).pydantic().as_bytes())
    }

    fn write_f32<W: ?Sized + io::Write>(&mut self, writer: &mut W, value: f32) -> io::Result<()> {
        self.write_f64(writer, f64::from(value))
    }

    fn write_char_escape<W: ?Sized + io::Write>(&mut self, writer: &mut W, escape: CharEscape) -> io::Result<()> {
        write_python_escape(writer, escape)
    }
}

/// Append `value` as Python's `json.dumps(value, ensure_ascii=False, separators=(",", ":"))` writes its JSON-mode
/// dump (floats as `repr`; one that is not finite, which the dump made `None`, as `null`).
pub(crate) fn to_python_writer<T: Serialize + ?Sized>(out: &mut Vec<u8>, value: &T) -> Result<(), serde_json::Error> {
    let mut ser = serde_json::Serializer::with_formatter(out, PyFormatter { options: PyDumps::TEXT, dumped: true });
    value.serialize(&mut ser)
}

/// Serialize as Pydantic's `model_dump_json` would.
pub(crate) fn to_pydantic_json<T: Serialize + ?Sized>(value: &T) -> Result<String, serde_json::Error> {
    let mut out = Vec::with_capacity(256);
    to_pydantic_writer(&mut out, value)?;
    Ok(String::from_utf8(out).unwrap_or_default())
}

/// Append the Pydantic JSON form of `value` to `out`.
pub(crate) fn to_pydantic_writer<T: Serialize + ?Sized>(out: &mut Vec<u8>, value: &T) -> Result<(), serde_json::Error> {
    let mut ser = serde_json::Serializer::with_formatter(out, PydanticFormatter);
    value.serialize(&mut ser)
}

/// The position of the first byte at or after `from` that a JSON string cannot hold as is: a quote, a backslash
/// or a control character. Eight bytes at a time: a zero-byte test per kind, whose lowest flagged lane is exact.
#[inline]
pub(crate) fn find_string_special(bytes: &[u8], from: usize) -> Option<usize> {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    let mut at = from;
    while let Some(chunk) = bytes.get(at..at + 8) {
        let mut lanes = [0u8; 8];
        lanes.copy_from_slice(chunk);
        let word = u64::from_le_bytes(lanes);
        let quote = word ^ (ONES * u64::from(b'"'));
        let backslash = word ^ (ONES * u64::from(b'\\'));
        let found = (quote.wrapping_sub(ONES) & !quote)
            | (backslash.wrapping_sub(ONES) & !backslash)
            | (word.wrapping_sub(ONES * 0x20) & !word);
        let found = found & HIGHS;
        if found != 0 {
            return Some(at + (found.trailing_zeros() / 8) as usize);
        }
        at += 8;
    }
    bytes[at.min(bytes.len())..].iter().position(|&byte| matches!(byte, b'"' | b'\\' | 0..=0x1f)).map(|p| at + p)
}

/// Append `text` as a JSON string the way [`to_pydantic_writer`] writes it: quotes, backslashes and control
/// characters escaped, everything else as raw UTF-8. Faster for the short strings of the hot path.
pub(crate) fn write_pydantic_str(out: &mut Vec<u8>, text: &str) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let bytes = text.as_bytes();
    out.reserve(bytes.len() + 2);
    out.push(b'"');
    let mut start = 0;
    while let Some(at) = find_string_special(bytes, start) {
        let byte = bytes[at];
        let escape: &[u8] = match byte {
            b'"' => b"\\\"",
            b'\\' => b"\\\\",
            b'\n' => b"\\n",
            b'\r' => b"\\r",
            b'\t' => b"\\t",
            0x08 => b"\\b",
            0x0c => b"\\f",
            _ => &[b'\\', b'u', b'0', b'0', HEX[usize::from(byte >> 4)], HEX[usize::from(byte & 0xf)]],
        };
        out.extend_from_slice(&bytes[start..at]);
        out.extend_from_slice(escape);
        start = at + 1;
    }
    out.extend_from_slice(&bytes[start..]);
    out.push(b'"');
}

/// The compact length of `value` in an encoding that differs from the others only in how it writes strings
/// and floats.
fn encoded_size(value: &Value, string: fn(&str) -> usize, float: fn(f64) -> usize) -> usize {
    match value {
        Value::Null => 4,
        Value::Bool(true) => 4,
        Value::Bool(false) => 5,
        Value::Number(number) => match PyNumber::of_number(number) {
            PyNumber::Int(digits) => digits.len(),
            PyNumber::Float(value) => float(value),
        },
        Value::String(text) => string(text),
        Value::Array(items) => {
            2 + items.len().saturating_sub(1)
                + items.iter().map(|item| encoded_size(item, string, float)).sum::<usize>()
        }
        Value::Object(map) => encoded_object_size(map, string, float),
    }
}

fn encoded_object_size(map: &Object, string: fn(&str) -> usize, float: fn(f64) -> usize) -> usize {
    2 + map.len().saturating_sub(1)
        + map.iter().map(|(key, value)| string(key) + 1 + encoded_size(value, string, float)).sum::<usize>()
}

/// `len(json.dumps(value, separators=(",", ":")))`: the ASCII-escaped compact length, without building it.
pub(crate) fn json_size(value: &Value) -> usize {
    encoded_size(value, escaped_str_size, |f| py_float_repr(f).len())
}

/// `len(json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode())`, without building it.
pub(crate) fn dumps_utf8_size(value: &Value) -> usize {
    encoded_size(value, utf8_str_size, |f| py_float_repr(f).len())
}

/// The exact length of `value` in the compact UTF-8 JSON this library writes (Pydantic's layout), without
/// writing it.
pub(crate) fn pydantic_size(value: &Value) -> usize {
    encoded_size(value, utf8_str_size, |f| pydantic_float_repr(f).len())
}

/// [`pydantic_size`] of an object.
pub(crate) fn pydantic_object_size(map: &Object) -> usize {
    encoded_object_size(map, utf8_str_size, |f| pydantic_float_repr(f).len())
}

/// The length of a string in compact UTF-8 JSON, quotes and escapes included.
pub(crate) fn utf8_str_size(text: &str) -> usize {
    // Only the bytes `find_string_special` stops at are written longer than they are.
    quoted_size(text, find_string_special)
}

/// The length of a string in `json.dumps` with `ensure_ascii=True`, quotes included.
pub(crate) fn escaped_str_size(text: &str) -> usize {
    quoted_size(text, find_escaped_special)
}

/// The length of `text` quoted, each byte `find` stops at adding what [`escape_growth`] says.
#[inline]
fn quoted_size(text: &str, find: fn(&[u8], usize) -> Option<usize>) -> usize {
    let bytes = text.as_bytes();
    let mut size = 2 + bytes.len();
    let mut from = 0;
    while let Some(at) = find(bytes, from) {
        size += escape_growth(bytes[at]);
        from = at + 1;
    }
    size
}

/// How many bytes the escape of the character starting at `byte` adds beyond the bytes the text holds for it:
/// a short escape (`\n`) one, `\u00XX` five; with `ensure_ascii`, `\uXXXX` for a two- or three-byte character and
/// a surrogate pair for a four-byte one (a continuation byte adds nothing).
#[inline]
fn escape_growth(byte: u8) -> usize {
    match byte {
        b'"' | b'\\' | b'\n' | b'\r' | b'\t' | 0x08 | 0x0c => 1,
        0x00..=0x1f | 0x7f => 5,
        0xc0..=0xdf => 4,
        0xe0..=0xef => 3,
        0xf0..=0xff => 8,
        _ => 0,
    }
}

/// [`find_string_special`], stopping also at DEL and every byte that is not ASCII (what `ensure_ascii` escapes).
#[inline]
fn find_escaped_special(bytes: &[u8], from: usize) -> Option<usize> {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    let escaped = |byte: u8| byte >= 0x7f || matches!(byte, b'"' | b'\\' | 0..=0x1f);
    let mut at = from;
    while let Some(chunk) = bytes.get(at..at + 8) {
        let mut lanes = [0u8; 8];
        lanes.copy_from_slice(chunk);
        let word = u64::from_le_bytes(lanes);
        // A lane of 0x7f or more: its high bit, or its high bit once one is added (0x7f + 1 = 0x80).
        if (word | word.wrapping_add(ONES)) & HIGHS != 0 {
            // Such a byte, or a special one before it: the exact first, a byte at a time.
            return chunk.iter().position(|&byte| escaped(byte)).map(|p| at + p);
        }
        if let Some(found) = find_string_special(chunk, 0) {
            return Some(at + found);
        }
        at += 8;
    }
    bytes[at.min(bytes.len())..].iter().position(|&byte| escaped(byte)).map(|p| at + p)
}

/// Number of Unicode code points, Python's `len(str)`.
#[inline]
pub(crate) fn char_len(text: &str) -> usize {
    if text.is_ascii() {
        text.len()
    } else {
        text.chars().count()
    }
}

/// Python's `text[:limit]` for a code point limit, as a byte index.
pub(crate) fn char_boundary(text: &str, limit: usize) -> usize {
    if text.len() <= limit {
        return text.len();
    }
    text.char_indices().nth(limit).map_or(text.len(), |(index, _)| index)
}

/// Whether two runs of the same length are equal, compared eight bytes at a time (runs are short, so this beats
/// a call to `memcmp`).
#[inline(always)]
pub(crate) fn same(a: &[u8], b: &[u8]) -> bool {
    let n = a.len();
    let word = |run: &[u8], at: usize| {
        let mut lanes = [0u8; 8];
        lanes.copy_from_slice(&run[at..at + 8]);
        u64::from_le_bytes(lanes)
    };
    if n < 8 {
        // Four bytes from each end (overlapping when fewer than eight), or byte by byte below four.
        let half = |run: &[u8], at: usize| {
            let mut lanes = [0u8; 4];
            lanes.copy_from_slice(&run[at..at + 4]);
            u32::from_le_bytes(lanes)
        };
        return match n {
            4.. => half(a, 0) == half(b, 0) && half(a, n - 4) == half(b, n - 4),
            _ => a.iter().zip(b).all(|(x, y)| x == y) && a.len() == b.len(),
        };
    }
    let mut at = 0;
    while at + 8 < n {
        if word(a, at) != word(b, at) {
            return false;
        }
        at += 8;
    }
    // The last eight bytes, overlapping the previous word when the length is not a multiple of eight.
    word(a, n - 8) == word(b, n - 8)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A run of more digits than Python converts is found wherever it starts, and a run of as many is not.
    #[test]
    fn runs_of_digits_past_pythons_limit_are_found_at_every_offset() {
        for (run, found) in [(PY_INT_MAX_DIGITS + 1, true), (PY_INT_MAX_DIGITS, false)] {
            for start in [0, 1, 7, PY_INT_MAX_DIGITS - 1, PY_INT_MAX_DIGITS, PY_INT_MAX_DIGITS + 1, 9000] {
                let line = format!("{}{}x{}", "a".repeat(start), "7".repeat(run), "b".repeat(start % 3));
                assert_eq!(may_hold_long_integer(&line), found, "a run of {run} at {start}");
            }
        }
        assert!(!may_hold_long_integer(&"1a".repeat(PY_INT_MAX_DIGITS * 2)));
    }

    /// What `json.dumps` wrote, respelled, is what Pydantic writes: floats of every exponent, numbers too large
    /// for a float, and strings that look like them.
    #[test]
    fn python_text_respelled_is_pydantics() {
        let mut literals: Vec<String> = (-330..=310).step_by(7).map(|exponent| format!("2.5e{exponent}")).collect();
        literals.extend(
            ["1e-05", "1e-5", "-1.25e-07", "0.0001", "1e999", "-1e999", "1e16", "123456789.125", "-0.0", "-0", "7"]
                .map(String::from),
        );
        for literal in &literals {
            let text = format!(
                r#"{{"a":[{literal},"e-05 Infinity NaN \"x\" e-0",{{"{literal}":{literal}}}],"b":null,"c":true}}"#
            );
            let value: Value = serde_json::from_str(&text).unwrap();
            let (mut python, mut pydantic) = (Vec::new(), Vec::new());
            to_python_writer(&mut python, &value).unwrap();
            to_pydantic_writer(&mut pydantic, &value).unwrap();
            let pydantic = String::from_utf8(pydantic).unwrap();
            // A dump's spelling (a float too large to hold already `null`) and a plain value's (`Infinity`).
            for python in [String::from_utf8(python).unwrap(), PyDumps::TEXT.dumps(&value)] {
                assert_eq!(python_to_pydantic(&python), pydantic, "{python}");
            }
        }
        let plain = r#"{"type":"TEXT_MESSAGE_CONTENT","delta":"1.5 and 2"}"#;
        assert!(matches!(python_to_pydantic(plain), Cow::Borrowed(_)));
    }
    use serde_json::json;

    /// `same` is `==` for runs of every length, whichever byte differs.
    #[test]
    fn same_is_equality_at_every_length() {
        for n in 0..24 {
            let a: Vec<u8> = (0..n as u8).map(|i| i.wrapping_mul(37)).collect();
            assert!(same(&a, &a.clone()));
            for at in 0..n {
                let mut b = a.clone();
                b[at] ^= 0x20;
                assert!(!same(&a, &b), "{n} {at}");
            }
        }
    }

    #[test]
    fn numbers_read_as_python_reads_them() {
        let cases = [
            ("-0", "0", "0"),
            ("18446744073709551616", "18446744073709551616", "18446744073709551616"),
            ("1.50", "1.5", "1.5"),
            ("1E2", "100.0", "100.0"),
            ("1e400", "Infinity", "inf"),
            ("-1e400", "-Infinity", "-inf"),
        ];
        for (literal, dumps, repr) in cases {
            assert_eq!((&*PyNumber::of(literal).dumps(), &*PyNumber::of(literal).repr()), (dumps, repr), "{literal}");
        }
    }

    /// Python's `==` on values `json.loads` makes (each pair checked in CPython 3.13): a held argument stream is
    /// continued by a delta whose identity is equal so, however its numbers are spelled.
    #[test]
    fn values_are_equal_as_python_compares_them() {
        let equal = [
            ("-0", "0"),
            ("1.0", "1"),
            ("1.50", "1.5"),
            ("true", "1"),
            ("true", "1.0"),
            ("false", "-0.0"),
            ("-0.0", "0"),
            ("18446744073709551616", "1.8446744073709552e19"),
            ("-18446744073709551616", "-1.8446744073709552e19"),
            ("1e400", "1e999"),
            (r#"{"a":[1,{"b":false}],"c":null}"#, r#"{"c":null,"a":[1.0,{"b":0}]}"#),
        ];
        let unequal = [
            ("18446744073709551617", "1.8446744073709552e19"),
            ("1", "1.5"),
            ("true", "2"),
            ("true", "\"1\""),
            ("0", "null"),
            ("false", "null"),
            ("[1]", "[1,1]"),
            (r#"{"a":1}"#, r#"{"b":1}"#),
        ];
        let value = |text: &str| serde_json::from_str::<Value>(text).unwrap();
        for (a, b) in equal {
            assert!(py_equal(&value(a), &value(b)) && py_equal(&value(b), &value(a)), "{a} == {b}");
        }
        for (a, b) in unequal {
            assert!(!py_equal(&value(a), &value(b)) && !py_equal(&value(b), &value(a)), "{a} != {b}");
        }
    }

    #[test]
    fn float_repr_matches_python() {
        for (value, expected) in [
            (21.0, "21.0"),
            (1e-05, "1e-05"),
            (0.0001, "0.0001"),
            (1e16, "1e+16"),
            (1e15, "1000000000000000.0"),
            (-2.5, "-2.5"),
            (0.1, "0.1"),
            (123456789.123, "123456789.123"),
            (1.5e300, "1.5e+300"),
            (-0.0, "-0.0"),
            (5e-324, "5e-324"),
        ] {
            assert_eq!(py_float_repr(value), expected, "{value}");
        }
    }

    #[test]
    fn pydantic_float_layout() {
        // Recorded from pydantic_core.to_json.
        for (value, expected) in [
            (1e-4, "0.0001"),
            (1e-5, "0.00001"),
            (1.5e-6, "1.5e-6"),
            (1e-7, "1e-7"),
            (1.234e-10, "1.234e-10"),
            (2.5e-5, "0.000025"),
            (1e15, "1000000000000000.0"),
            (9.99e15, "9990000000000000.0"),
            (1e16, "1e+16"),
            (1.5e16, "1.5e+16"),
            (123.0, "123.0"),
            (2.71, "2.71"),
            (-1e-5, "-0.00001"),
            (-1e16, "-1e+16"),
            (12345678901234567.0, "1.2345678901234568e+16"),
            (-0.0, "-0.0"),
            (5e-324, "5e-324"),
        ] {
            assert_eq!(pydantic_float_repr(value), expected, "{value}");
        }
    }

    #[test]
    fn dumps_variants() {
        let value = json!({"b": [1, 2.0, "é🚀"], "a": {"z": null, "y": true}});
        assert_eq!(PyDumps::SORTED_TEXT.dumps(&value), r#"{"a":{"y":true,"z":null},"b":[1,2.0,"é🚀"]}"#);
        assert_eq!(
            PyDumps::DEFAULT.dumps(&value),
            r#"{"b": [1, 2.0, "\u00e9\ud83d\ude80"], "a": {"z": null, "y": true}}"#
        );
        assert_eq!(json_size(&value), PyDumps { compact: true, ..PyDumps::DEFAULT }.dumps(&value).len());
        let control = json!("a\u{1}\n\"\\");
        assert_eq!(PyDumps::TEXT.dumps(&control), "\"a\\u0001\\n\\\"\\\\\"");
        assert_eq!(json_size(&control), PyDumps::TEXT.dumps(&control).len());
    }

    /// A float too large to hold: `json.dumps` of a plain value writes `Infinity`, but a model's JSON-mode dump
    /// made it `None` first, so the lines written from dumps (events, observed entries) hold `null`, valid JSON.
    #[test]
    fn a_dump_holds_null_for_a_float_that_is_not_finite() {
        let value: Value = serde_json::from_str(r#"{"big":1e400,"small":-1e400,"n":1.5}"#).unwrap();
        assert_eq!(PyDumps::TEXT.dumps(&value), r#"{"big":Infinity,"small":-Infinity,"n":1.5}"#);
        let mut dumped = Vec::new();
        to_python_writer(&mut dumped, &value).unwrap();
        assert_eq!(String::from_utf8(dumped).unwrap(), r#"{"big":null,"small":null,"n":1.5}"#);
        let mut nan = Vec::new();
        to_python_writer(&mut nan, &f64::NAN).unwrap();
        assert_eq!(nan, b"null");
    }

    #[test]
    fn pydantic_size_is_exact() {
        let value = json!({"a": [1, -2, 2.5e-6, 1e16, 0.00001, null, true, false], "é\u{1}\"\\\n": "東京🚀\u{7f}\t"});
        assert_eq!(pydantic_size(&value), to_pydantic_json(&value).unwrap().len());
    }

    #[test]
    fn string_sizes_are_exact_at_every_offset() {
        let pieces = ["a", "\u{e9}", "\u{6771}", "\u{1f680}", "\"", "\\", "\n", "\u{1}", "\u{7f}", " ", "\u{2028}"];
        let mut rng = 0x9e37_79b9_7f4a_7c15u64;
        for length in 0..40 {
            for _ in 0..20 {
                let text: String = (0..length)
                    .map(|_| {
                        rng ^= rng << 13;
                        rng ^= rng >> 7;
                        rng ^= rng << 17;
                        pieces[(rng % pieces.len() as u64) as usize]
                    })
                    .collect();
                let value = json!(text);
                let expected_ascii: usize = 2 + text
                    .chars()
                    .map(|c| match c {
                        '"' | '\\' | '\n' => 2,
                        ' '..='~' => 1,
                        c if (c as u32) > 0xffff => 12,
                        _ => 6,
                    })
                    .sum::<usize>();
                assert_eq!(escaped_str_size(&text), expected_ascii, "{text:?}");
                let ascii = PyDumps { ensure_ascii: true, ..PyDumps::TEXT };
                assert_eq!(escaped_str_size(&text), ascii.dumps(&value).len(), "{text:?}");
                assert_eq!(utf8_str_size(&text), to_pydantic_json(&value).unwrap().len(), "{text:?}");
            }
        }
    }

    #[test]
    fn special_bytes_are_found_at_every_offset() {
        for length in 0..72 {
            for at in 0..=length {
                for special in [b'"', b'\\', 0u8, 0x1f, b'\n'] {
                    // Bytes around the boundaries of the test: 0x20, 0x21, 0x5b, 0x5d, 0x7f and UTF-8 lead bytes.
                    let mut bytes: Vec<u8> = (0..length).map(|i| [0x20, 0x21, 0x5b, 0x5d, 0x7f, 0xc3][i % 6]).collect();
                    if at < length {
                        bytes[at] = special;
                    }
                    for from in [0, 1, 7, 9, 17].into_iter().filter(|&from| from <= at) {
                        let expected = (at < length).then_some(at);
                        let found = find_string_special(&bytes, from);
                        assert_eq!(found, expected, "length {length}, at {at}, from {from}, {special}");
                    }
                }
            }
        }
    }

    #[test]
    fn fast_strings_are_written_as_the_serializer_writes_them() {
        let mut every: String = (0u8..=0x7f).map(char::from).collect();
        every.push_str("é東🚀\u{2028}\u{ffff}");
        for text in [every.as_str(), "", "plain", "\"quoted\"", "tab\tand\nline\\"] {
            let (mut fast, mut general) = (Vec::new(), Vec::new());
            write_pydantic_str(&mut fast, text);
            to_pydantic_writer(&mut general, text).unwrap();
            assert_eq!(String::from_utf8(fast).unwrap(), String::from_utf8(general).unwrap());
        }
    }

    #[test]
    fn char_slicing_counts_code_points() {
        assert_eq!(&"héllo"[..char_boundary("héllo", 2)], "hé");
        assert_eq!(char_boundary("ab", 5), 2);
        assert_eq!(char_len("東京🚀"), 3);
    }
}
