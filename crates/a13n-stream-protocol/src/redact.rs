//! The Harness's rule for an extension event's payload, which its model applies as a journal line loads: a member
//! whose key names an authority (`authorization`, `api_key`, `password`, `secret`, `token`, ..., but not a count
//! such as `input_tokens`) becomes `"[REDACTED]"`, every `Bearer <credential>` in a string becomes
//! `Bearer [REDACTED]`, and a payload whose compact JSON is larger than 64 KiB is refused. A journal the Harness
//! wrote holds payloads it redacted already, which the rule leaves as they are.

use std::borrow::Cow;
use std::sync::OnceLock;

use aho_corasick::{AhoCorasick, MatchKind};

use serde_json::Value;

use crate::pystr;
use crate::scan::Scanner;

/// What a redacted member's value becomes.
const REDACTED: &str = "[REDACTED]";

/// What a bearer credential becomes.
const BEARER_REDACTED: &str = "Bearer [REDACTED]";

/// The largest payload, in bytes of its compact JSON (`json.dumps(separators=(",", ":"), ensure_ascii=False)`).
pub(crate) const MAX_PAYLOAD_BYTES: usize = 64 * 1024;

/// A key is an authority's when one of its `_`-separated words (`-` and `.` separate too) is one of these, or it
/// holds `api_key`.
const SENSITIVE_WORDS: [&str; 9] =
    ["authorization", "credential", "credentials", "grant", "grants", "password", "passwd", "secret", "token"];

/// Whether the member under `key` is redacted; `is_bool`: its value is a boolean, which keeps
/// `credential_configured` (a known-safe status).
pub(crate) fn sensitive_key(key: &str, is_bool: bool) -> bool {
    if key == "credential_configured" && is_bool {
        return false;
    }
    // Lowercasing may turn letters outside ASCII into ASCII ones (the Kelvin sign into `k`); an ASCII key is compared
    // ignoring case instead, without a new string.
    let lowered = if key.is_ascii() { Cow::Borrowed(key) } else { Cow::Owned(key.to_lowercase()) };
    let bytes = lowered.as_bytes();
    bytes
        .split(|byte| is_separator(*byte))
        .any(|word| SENSITIVE_WORDS.iter().any(|sensitive| word.eq_ignore_ascii_case(sensitive.as_bytes())))
        || (0..bytes.len()).any(|at| api_key_at(bytes, at))
}

/// A separator of a key's words (Python's rule lowercases the key and makes `-` and `.` into `_`).
fn is_separator(byte: u8) -> bool {
    matches!(byte, b'_' | b'-' | b'.')
}

/// Whether `api`, a separator and `key` (in any ASCII case) stand at `at`.
fn api_key_at(bytes: &[u8], at: usize) -> bool {
    bytes.get(at..at + 7).is_some_and(|seven| {
        seven[..3].eq_ignore_ascii_case(b"api") && is_separator(seven[3]) && seven[4..].eq_ignore_ascii_case(b"key")
    })
}

/// `payload` redacted in place.
pub(crate) fn redact(payload: &mut Value) {
    match payload {
        Value::String(text) => {
            if let Cow::Owned(redacted) = without_bearer(text) {
                *text = redacted;
            }
        }
        Value::Array(items) => items.iter_mut().for_each(redact),
        Value::Object(members) => {
            for (key, value) in members.iter_mut() {
                if sensitive_key(key, value.is_boolean()) {
                    *value = Value::String(REDACTED.into());
                } else {
                    redact(value);
                }
            }
        }
        _ => {}
    }
}

/// Whether redaction may change the JSON `text`, judged from its bytes in one search: `false` only when it holds no
/// word of [`SENSITIVE_WORDS`] between a quote or separator and another, no `api` separator `key`, no `bearer`, no `\u`
/// escape and neither character outside ASCII that lowercases into ASCII letters (`İ`, the Kelvin sign); a key
/// that is an authority's and a bearer credential each hold one. A payload of token counts (`input_tokens`)
/// holds none, and needs no walk.
pub(crate) fn may_redact(text: &str) -> bool {
    // Besides the sensitive words: `api` (of `api_key`), `bearer`, an escape, and the two letters outside ASCII
    // that lowercase into ASCII ones.
    const OTHER_SIGNS: [&str; 5] = ["api", "bearer", "\\u", "\u{130}", "\u{212a}"];
    static FINDER: OnceLock<Option<AhoCorasick>> = OnceLock::new();
    let finder = FINDER.get_or_init(|| {
        let mut builder = AhoCorasick::builder();
        // Leftmost-longest: of two words at one place (`credentials`, `credential`), the longer, which alone can
        // end at a boundary.
        builder.ascii_case_insensitive(true).match_kind(MatchKind::LeftmostLongest);
        builder.build(SENSITIVE_WORDS.iter().chain(&OTHER_SIGNS)).ok()
    });
    // The words are few and fixed, so building cannot fail; were it to, every payload would take the walk.
    let Some(finder) = finder else { return true };
    let bytes = text.as_bytes();
    let boundary = |at: usize| matches!(bytes.get(at), Some(b'"' | b'_' | b'-' | b'.'));
    finder.find_iter(text).any(|found| match found.pattern().as_usize().checked_sub(SENSITIVE_WORDS.len()) {
        // A word of a key only counts between a quote or separator and another (no match passed over can hold
        // a boundary: the words are letters).
        None => found.start() > 0 && boundary(found.start() - 1) && boundary(found.end()),
        Some(0) => api_key_at(bytes, found.start()),
        // `bearer`, an escape, or a letter that lowercases into ASCII, which may spell anything.
        Some(_) => true,
    })
}

/// Whether the payload at the scanner (which moves past it) is left as it is by [`redact`]: no member under an
/// authority's key, no bearer credential in a string value. `None` when it is not JSON the scanner reads.
pub(crate) fn left_as_is(scanner: &mut Scanner<'_>) -> Option<bool> {
    let mut kept = true;
    walk(scanner, &mut kept)?;
    Some(kept)
}

fn walk(scanner: &mut Scanner<'_>, kept: &mut bool) -> Option<()> {
    let rest = scanner.rest().trim_start();
    match rest.as_bytes().first()? {
        b'{' => scanner.object(|scanner, key| {
            let is_bool = matches!(scanner.rest().trim_start().as_bytes().first(), Some(b't' | b'f'));
            if !sensitive_key(&key, is_bool) {
                return walk(scanner, kept);
            }
            // Redacted already (the Harness wrote it), it stays as it is.
            if scanner.rest().trim_start().starts_with('"') {
                *kept &= scanner.string()? == REDACTED;
                return Some(());
            }
            *kept = false;
            scanner.skip_value()
        }),
        b'[' => scanner.array(|scanner| walk(scanner, kept)),
        b'"' => {
            *kept &= matches!(without_bearer(&scanner.string()?), Cow::Borrowed(_));
            Some(())
        }
        _ => scanner.skip_value(),
    }
}

/// `text` with every bearer credential cut out as Python's `re.sub(r"(?i)\bBearer\s+[A-Za-z0-9._~+/=-]+", ...)`
/// cuts it: `bearer` in any ASCII case after a boundary of Python's `\w`, whitespace as Python's `\s` reads it,
/// then the credential's characters (the four letters outside ASCII that case-fold into them included).
pub(crate) fn without_bearer(text: &str) -> Cow<'_, str> {
    let mut out = String::new();
    let mut copied = 0;
    let mut from = 0;
    while let Some(found) = find_bearer(&text[from..]).map(|at| from + at) {
        match bearer_end(text, found) {
            Some(end) => {
                out.push_str(&text[copied..found]);
                out.push_str(BEARER_REDACTED);
                (copied, from) = (end, end);
            }
            None => from = found + 1,
        }
    }
    if copied == 0 {
        return Cow::Borrowed(text);
    }
    out.push_str(&text[copied..]);
    Cow::Owned(out)
}

/// Where `bearer` in any ASCII case first stands in `text`.
fn find_bearer(text: &str) -> Option<usize> {
    let bytes = text.as_bytes();
    memchr::memchr2_iter(b'b', b'B', bytes)
        .find(|&at| bytes.get(at..at + 6).is_some_and(|six| six.eq_ignore_ascii_case(b"bearer")))
}

/// The end of the match that starts with the `bearer` at `at`, if one does.
fn bearer_end(text: &str, at: usize) -> Option<usize> {
    if text[..at].chars().next_back().is_some_and(pystr::is_word) {
        return None;
    }
    let rest = &text[at + 6..];
    let spaces = rest.find(|c: char| !pystr::is_space(c)).unwrap_or(rest.len());
    let credential = &rest[spaces..];
    let length = credential.find(|c: char| !credential_char(c)).unwrap_or(credential.len());
    (spaces > 0 && length > 0).then_some(at + 6 + spaces + length)
}

/// A character of `[A-Za-z0-9._~+/=-]` as an ignore-case pattern reads it: with `İ`, `ı`, `ſ` and the Kelvin sign.
fn credential_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || "._~+/=-\u{130}\u{131}\u{17f}\u{212a}".contains(c)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// Each checked against CPython 3.13 running the Harness's own `redact_json`.
    #[test]
    fn payloads_are_redacted_as_the_harness_redacts_them() {
        let mut payload = json!({
            "api_key": "k", "X-Api-Key": 1, "x.api_key": [1], "TO\u{212a}EN": "t", "input_tokens": 3,
            "credential_configured": true, "credential": false, "grants": {"a": 1}, "tokenizer": "ok",
            "nested": [{"Authorization": "Bearer abc.def", "note": "use bearer\u{1f}x-1 or BEARER  ıſ\u{212a}/= done"}],
            "text": "aBearer x, (Bearer) y, Bearer, bearer\u{3000}z"
        });
        redact(&mut payload);
        assert_eq!(
            payload,
            json!({
                "api_key": REDACTED, "X-Api-Key": REDACTED, "x.api_key": REDACTED, "TO\u{212a}EN": REDACTED,
                "input_tokens": 3, "credential_configured": true, "credential": REDACTED, "grants": REDACTED,
                "tokenizer": "ok",
                "nested": [{"Authorization": REDACTED, "note": "use Bearer [REDACTED] or Bearer [REDACTED] done"}],
                "text": "aBearer x, (Bearer) y, Bearer, Bearer [REDACTED]"
            })
        );
    }

    /// Every payload redaction changes is one the byte test says it may change.
    #[test]
    fn what_redaction_may_change_is_found_by_its_bytes() {
        for text in [
            r#"{"token":1}"#,
            r#"{"a-Secret.b":1}"#,
            r#"{"x.API-key":1}"#,
            r#"{"xapi_keyz":1}"#,
            r#"{"t":"BEARER x"}"#,
            r#"{"to\u006ben":1}"#,
            "{\"TO\u{212a}EN\":1}",
            "{\"\u{130}d\":1}",
            r#"{"credentials":1}"#,
            r#"{"grants":[]}"#,
        ] {
            assert!(may_redact(text), "{text}");
        }
        for text in [r#"{"input_tokens":1,"tokenizer":"x","apikey":2,"secrets":3}"#, r#"{"note":"bear her"}"#] {
            assert!(!may_redact(text), "{text}");
            assert_eq!(left_as_is(&mut Scanner::new(text)), Some(true), "{text}");
        }
    }

    #[test]
    fn a_scan_finds_what_redaction_would_change() {
        for (text, kept) in [
            (r#"{"input_tokens":1,"credential_configured":false,"s":"a bearer","t":["Bearer"]}"#, true),
            (r#"{"a":{"b":[{"secret":1}]}}"#, false),
            (r#"{"credential_configured":null}"#, false),
            (r#"{"s":"x Bearer\u0020y"}"#, false),
            (r#"["Bearer [REDACTED]",{"k":"[REDACTED]"}]"#, true),
            (r#"{"api_key":"[REDACTED]","n":{"secret":"[REDACTED]"}}"#, true),
            (r#"{"api_key":"[REDACTED]","n":{"secret":"[REDACTED] "}}"#, false),
            (r#"{"token_count":2}"#, false),
            (r#"{"s":"x Bearer\u0020y","input_tokens":1}"#, false),
        ] {
            assert_eq!(left_as_is(&mut Scanner::new(text)), Some(kept), "{text}");
        }
    }
}
