//! A strict, allocation-free JSON scanner for the fast lane.
//!
//! It walks one JSON text in place and hands out borrowed keys and strings (owned only when a string holds
//! escapes). It is sound rather than complete: every method returns `None` for anything it does not handle —
//! malformed JSON, a number that is not a plain integer, a lone surrogate escape, nesting deeper than
//! [`MAX_DEPTH`] — and the caller then takes the general path, whose decoder reports errors. Whatever it accepts,
//! `serde_json` accepts with the same values.

use std::borrow::Cow;
use std::ops::Range;

use crate::canonical::{canonical_end, Scratch, MAX_DEPTH};
use crate::json::{find_string_special, same};

/// Fill `slot` with a scanned `value` once: `None` when the value did not scan or the field was seen before (a
/// repeated field is left to the general path, whose decoder keeps the last).
pub(crate) fn once<T>(slot: &mut Option<T>, value: Option<T>) -> Option<()> {
    if slot.is_some() {
        return None;
    }
    *slot = Some(value?);
    Some(())
}

/// A position in one JSON text (copied to try a value and go back).
#[derive(Clone)]
pub(crate) struct Scanner<'a> {
    text: &'a str,
    at: usize,
}

impl<'a> Scanner<'a> {
    pub(crate) fn new(text: &'a str) -> Scanner<'a> {
        Scanner { text, at: 0 }
    }

    #[inline]
    fn bytes(&self) -> &'a [u8] {
        self.text.as_bytes()
    }

    #[inline]
    fn skip_whitespace(&mut self) {
        // Compact JSON has none: one test, and the loop only for text that has some.
        if matches!(self.bytes().get(self.at), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.skip_whitespace_run();
        }
    }

    #[cold]
    fn skip_whitespace_run(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.bytes().get(self.at) {
            self.at += 1;
        }
    }

    /// The next non-whitespace byte, not consumed.
    #[inline]
    fn peek(&mut self) -> Option<u8> {
        self.skip_whitespace();
        self.bytes().get(self.at).copied()
    }

    #[inline]
    fn eat(&mut self, byte: u8) -> Option<()> {
        (self.peek()? == byte).then(|| self.at += 1)
    }

    /// Only whitespace is left.
    pub(crate) fn end(&mut self) -> Option<()> {
        self.skip_whitespace();
        (self.at == self.text.len()).then_some(())
    }

    /// Walk an object, calling `field` with each key; `field` must consume the key's value.
    pub(crate) fn object(&mut self, field: impl FnMut(&mut Self, Cow<'a, str>) -> Option<()>) -> Option<()> {
        self.object_expecting(&[], field)
    }

    /// [`Scanner::object`] for an object whose keys usually come in the order of `expected` (some may be absent):
    /// the key after one found in `expected` is first compared, in place, with the one that follows it there, and
    /// read as any string only when it is another. `field` sees exactly the keys [`Scanner::object`] would.
    pub(crate) fn object_expecting(
        &mut self,
        expected: &[&'static str],
        mut field: impl FnMut(&mut Self, Cow<'a, str>) -> Option<()>,
    ) -> Option<()> {
        self.eat(b'{')?;
        if self.eat(b'}').is_some() {
            return Some(());
        }
        let mut next = 0;
        loop {
            if self.peek()? != b'"' {
                return None;
            }
            let key = match expected.get(next) {
                Some(&name) if self.quoted(name) => {
                    next += 1;
                    Cow::Borrowed(name)
                }
                _ => {
                    let key = self.string()?;
                    next = expected.iter().position(|&name| name == key).map_or(expected.len(), |at| at + 1);
                    key
                }
            };
            self.eat(b':')?;
            field(self, key)?;
            match self.peek()? {
                b',' => self.at += 1,
                b'}' => {
                    self.at += 1;
                    return Some(());
                }
                _ => return None,
            }
        }
    }

    /// Walk an array, calling `item` for each element; `item` must consume it.
    pub(crate) fn array(&mut self, mut item: impl FnMut(&mut Self) -> Option<()>) -> Option<()> {
        self.eat(b'[')?;
        if self.eat(b']').is_some() {
            return Some(());
        }
        loop {
            item(self)?;
            match self.peek()? {
                b',' => self.at += 1,
                b']' => {
                    self.at += 1;
                    return Some(());
                }
                _ => return None,
            }
        }
    }

    /// Exactly the JSON string `"word"` next (`word` holding nothing to escape), consumed.
    #[inline]
    pub(crate) fn quoted(&mut self, word: &str) -> bool {
        let (bytes, word) = (&self.bytes()[self.at..], word.as_bytes());
        let found = bytes.len() > word.len() + 1
            && bytes[0] == b'"'
            && &bytes[1..=word.len()] == word
            && bytes[word.len() + 1] == b'"';
        if found {
            self.at += word.len() + 2;
        }
        found
    }

    /// A string or `null`.
    pub(crate) fn opt_string(&mut self) -> Option<Option<Cow<'a, str>>> {
        self.skip_whitespace();
        if self.literal(b"null").is_some() {
            return Some(None);
        }
        self.string().map(Some)
    }

    /// A string value, borrowed unless it holds escapes.
    #[inline]
    pub(crate) fn string(&mut self) -> Option<Cow<'a, str>> {
        self.eat(b'"')?;
        let start = self.at;
        // The common case: no escape before the closing quote.
        let at = find_string_special(self.bytes(), start)?;
        if self.bytes()[at] == b'"' {
            self.at = at + 1;
            return Some(Cow::Borrowed(&self.text[start..at]));
        }
        self.escaped_string(start, at).map(Cow::Owned)
    }

    /// The rest of a string from `at`, its first escape or control character after `start`: decoded.
    #[cold]
    #[inline(never)]
    fn escaped_string(&mut self, start: usize, mut at: usize) -> Option<String> {
        let bytes = self.bytes();
        if bytes[at] != b'\\' {
            return None;
        }
        let mut owned = String::with_capacity(at - start + 16);
        owned.push_str(&self.text[start..at]);
        let mut run = at;
        loop {
            match *bytes.get(at)? {
                b'"' => {
                    owned.push_str(&self.text[run..at]);
                    self.at = at + 1;
                    return Some(owned);
                }
                b'\\' => {
                    owned.push_str(&self.text[run..at]);
                    let escape = *bytes.get(at + 1)?;
                    at += 2;
                    let plain = match escape {
                        b'"' => '"',
                        b'\\' => '\\',
                        b'/' => '/',
                        b'b' => '\u{8}',
                        b'f' => '\u{c}',
                        b'n' => '\n',
                        b'r' => '\r',
                        b't' => '\t',
                        b'u' => {
                            let unit = hex4(bytes.get(at..at + 4)?)?;
                            at += 4;
                            match unit {
                                0xD800..=0xDBFF => {
                                    if bytes.get(at..at + 2)? != b"\\u" {
                                        return None;
                                    }
                                    let low = hex4(bytes.get(at + 2..at + 6)?)?;
                                    if !(0xDC00..=0xDFFF).contains(&low) {
                                        return None;
                                    }
                                    at += 6;
                                    char::from_u32(0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00))?
                                }
                                0xDC00..=0xDFFF => return None,
                                _ => char::from_u32(unit)?,
                            }
                        }
                        _ => return None,
                    };
                    owned.push(plain);
                    run = at;
                }
                0..=0x1f => return None,
                _ => at = find_string_special(bytes, at)?,
            }
        }
    }

    /// A non-negative integer that fits an `i64`, written without fraction or exponent.
    pub(crate) fn integer(&mut self) -> Option<i64> {
        self.skip_whitespace();
        let bytes = self.bytes();
        let start = self.at;
        let mut at = start;
        let mut value: i64 = 0;
        while let Some(digit @ b'0'..=b'9') = bytes.get(at).copied() {
            value = value.checked_mul(10)?.checked_add(i64::from(digit - b'0'))?;
            at += 1;
        }
        let digits = at - start;
        // No digits, a leading zero, or a fraction or exponent: not a plain integer.
        if digits == 0 || (digits > 1 && bytes[start] == b'0') || matches!(bytes.get(at), Some(b'.' | b'e' | b'E')) {
            return None;
        }
        self.at = at;
        Some(value)
    }

    /// Any JSON value, checked and skipped.
    pub(crate) fn skip_value(&mut self) -> Option<()> {
        self.skip_at_depth(0)
    }

    /// Any JSON value, checked and skipped: its text as the line holds it.
    pub(crate) fn raw_value(&mut self) -> Option<&'a str> {
        self.skip_whitespace();
        let start = self.at;
        self.skip_at_depth(0)?;
        Some(&self.text[start..self.at])
    }

    fn skip_at_depth(&mut self, depth: usize) -> Option<()> {
        if depth > MAX_DEPTH {
            return None;
        }
        match self.peek()? {
            b'"' => self.string().map(drop),
            b'{' => self.object(|scanner, _| scanner.skip_at_depth(depth + 1)),
            b'[' => self.array(|scanner| scanner.skip_at_depth(depth + 1)),
            b't' => self.literal(b"true"),
            b'f' => self.literal(b"false"),
            b'n' => self.literal(b"null"),
            _ => self.number(),
        }
    }

    /// A value written exactly as this library writes the value `serde_json` parses from it (see
    /// [`crate::canonical`]): its text, which a lane can then copy instead of building and writing a tree.
    pub(crate) fn canonical_value(&mut self) -> Option<&'a str> {
        self.canonical_value_in(&mut Scratch::default())
    }

    /// [`Scanner::canonical_value`] with caller-owned working memory, for scanning many values.
    pub(crate) fn canonical_value_in(&mut self, scratch: &mut Scratch) -> Option<&'a str> {
        self.skip_whitespace();
        let start = self.at;
        self.at = canonical_end(self.bytes(), start, scratch)?;
        Some(&self.text[start..self.at])
    }

    /// The value known to be at `range` of the text, which must start at the scanner's position: the scanner moves
    /// past it without reading it. `None` when it does not start there.
    pub(crate) fn value_at(&mut self, range: Range<usize>) -> Option<&'a str> {
        self.skip_whitespace();
        (self.at == range.start).then_some(())?;
        let value = self.text.get(range.clone())?;
        self.at = range.end;
        Some(value)
    }

    /// A value `read` reads from the text at the scanner's position, returning it and where it ends.
    pub(crate) fn read_with<T>(&mut self, read: impl FnOnce(&'a [u8], usize) -> Option<(T, usize)>) -> Option<T> {
        let (value, end) = read(self.bytes(), self.at)?;
        self.at = end;
        Some(value)
    }

    /// The text scanned since `start` (an earlier [`Scanner::position`]).
    pub(crate) fn scanned_since(&self, start: usize) -> &'a [u8] {
        &self.bytes()[start..self.at]
    }

    /// The text scanned since `start`, a position the scanner was at (so a character boundary).
    pub(crate) fn text_since(&self, start: usize) -> &'a str {
        &self.text[start..self.at]
    }

    /// How far into the text the scanner is.
    pub(crate) fn position(&self) -> usize {
        self.at
    }

    /// The text not scanned yet.
    pub(crate) fn rest(&self) -> &'a str {
        &self.text[self.at..]
    }

    /// Exactly `word` next, no whitespace before it.
    #[inline]
    pub(crate) fn literal(&mut self, word: &[u8]) -> Option<()> {
        let next = self.bytes().get(self.at..self.at + word.len())?;
        same(next, word).then(|| self.at += word.len())
    }

    /// Any JSON number: `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`.
    fn number(&mut self) -> Option<()> {
        let bytes = self.bytes();
        let mut at = self.at;
        let digits = |at: &mut usize| {
            let start = *at;
            while bytes.get(*at).is_some_and(u8::is_ascii_digit) {
                *at += 1;
            }
            *at - start
        };
        if bytes.get(at) == Some(&b'-') {
            at += 1;
        }
        let start = at;
        let whole = digits(&mut at);
        if whole == 0 || (whole > 1 && bytes[start] == b'0') {
            return None;
        }
        if bytes.get(at) == Some(&b'.') {
            at += 1;
            if digits(&mut at) == 0 {
                return None;
            }
        }
        if matches!(bytes.get(at), Some(b'e' | b'E')) {
            at += 1;
            if matches!(bytes.get(at), Some(b'+' | b'-')) {
                at += 1;
            }
            if digits(&mut at) == 0 {
                return None;
            }
        }
        self.at = at;
        Some(())
    }
}

fn hex4(digits: &[u8]) -> Option<u32> {
    digits.iter().try_fold(0u32, |value, &digit| Some(value * 16 + char::from(digit).to_digit(16)?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    /// What the scanner reads of a value: strings and integers as found, anything else skipped.
    fn scan(text: &str) -> Option<()> {
        let mut scanner = Scanner::new(text);
        scanner.skip_value()?;
        scanner.end()
    }

    #[test]
    fn accepts_only_what_serde_json_accepts() {
        let samples = [
            r#"{"a":[1,-2.5e+3,0.0,true,false,null,{"b":"c\u00e9\ud83d\ude80\n"}],"d":{}}"#,
            r#" { "a" : [ ] } "#,
            r#"{"a":01}"#,
            r#"{"a":1.}"#,
            r#"{"a":-}"#,
            r#"{"a":1e}"#,
            r#"{"a":"\ud800"}"#,
            r#"{"a":"\udc00x"}"#,
            r#"{"a":"\x"}"#,
            "{\"a\":\"\u{1}\"}",
            r#"{"a":tru}"#,
            r#"{"a":1,}"#,
            r#"{"a":1} x"#,
            r#"[1,]"#,
            r#"{"a" 1}"#,
            r#"{a:1}"#,
            r#""\u00zz""#,
        ];
        for sample in samples {
            if scan(sample).is_some() {
                assert!(serde_json::from_str::<Value>(sample).is_ok(), "accepted what serde_json refuses: {sample}");
            }
        }
        assert!(scan(samples[0]).is_some() && scan(samples[1]).is_some());
    }

    #[test]
    fn strings_decode_like_serde_json() {
        for text in [r#""plain""#, r#""a\"b\\c\/d\b\f\n\r\t""#, r#""\u00e9\u4e1c\ud83d\ude80""#, r#""""#] {
            let expected: String = serde_json::from_str(text).unwrap();
            assert_eq!(Scanner::new(text).string().as_deref(), Some(expected.as_str()));
        }
    }

    #[test]
    fn integers_are_plain() {
        assert_eq!(Scanner::new("42").integer(), Some(42));
        assert_eq!(Scanner::new("0").integer(), Some(0));
        for text in ["-1", "01", "1.0", "1e3", "99999999999999999999", ""] {
            assert_eq!(Scanner::new(text).integer(), None, "{text}");
        }
    }

    #[test]
    fn deep_nesting_is_left_to_the_general_path() {
        let deep = "[".repeat(100) + &"]".repeat(100);
        assert!(scan(&deep).is_none());
        let shallow = "[".repeat(10) + &"]".repeat(10);
        assert!(scan(&shallow).is_some());
    }

    #[test]
    fn a_canonical_value_is_exactly_what_the_writer_writes_of_it() {
        let accepted = [
            r#"{"a":[1,-2,0,true,false,null,{"b":"c\u001fé\n\"\\"}],"d":{},"e":[]}"#,
            r#""\b\f\t\r\u0000""#,
            "\"\u{7f}\u{2028}東京\"",
            "123456789012345678",
        ];
        let refused = [
            r#"{"a": 1}"#,
            r#" {"a":1}"#,
            r#"{"a":1.5}"#,
            r#"{"a":1e5}"#,
            r#"{"a":-0}"#,
            r#"{"a":01}"#,
            "1234567890123456789",
            r#""\/""#,
            r#""\u0041""#,
            r#""\u00E9""#,
            r#""\u001F""#,
            r#""\u0008""#,
            r#""\u000a""#,
            r#""\ud83d\ude80""#,
            r#"{"a":1,"a":2}"#,
            r#"{"a":{"b":1,"b":1}}"#,
            r#"[1 ,2]"#,
        ];
        for text in accepted {
            assert_eq!(Scanner::new(text).canonical_value(), Some(text), "{text}");
            let value: Value = serde_json::from_str(text).unwrap();
            assert_eq!(crate::json::to_pydantic_json(&value).unwrap(), text, "{text}");
            let mut python = Vec::new();
            crate::json::to_python_writer(&mut python, &value).unwrap();
            assert_eq!(String::from_utf8(python).unwrap(), text, "{text}");
        }
        for text in refused {
            let read = Scanner::new(text).canonical_value();
            assert!(read.is_none_or(|read| read != text), "{text} is not canonical");
        }
    }

    /// Expecting keys changes nothing `field` sees: the same keys, in the same order, whatever the layout.
    #[test]
    fn expected_keys_are_only_a_shortcut() {
        let expected = &["a", "b", "ab", "c"];
        for text in [
            r#"{"a":1,"b":2,"ab":3,"c":4}"#,
            r#"{"c":4,"ab":3,"b":2,"a":1}"#,
            r#"{"a":1,"ab":3,"x":0,"c":4}"#,
            r#"{"\u0061":1,"b":2}"#,
            r#"{"a" :1, "b":2}"#,
            r#"{"ab":1,"abc":2,"a":3}"#,
            r#"{"a":1,"a":2}"#,
            r#"{"a":1,"b"}"#,
            r#"{"a":1,"b":2"#,
            "{}",
        ] {
            let keys = |expecting: &[&'static str]| {
                let mut seen = Vec::new();
                let mut scanner = Scanner::new(text);
                let walked = scanner.object_expecting(expecting, |scanner, key| {
                    seen.push(key.into_owned());
                    scanner.skip_value()
                });
                (walked, seen, scanner.position())
            };
            assert_eq!(keys(expected), keys(&[]), "{text}");
        }
    }
}
