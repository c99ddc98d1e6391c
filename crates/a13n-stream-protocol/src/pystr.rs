//! Python's `str` predicates where the reference's checks use them on a journal's text: `isspace` (what `strip()`
//! and a pattern's `\s` take as whitespace), which holds for four ASCII separators Unicode's `White_Space` does not,
//! a pattern's `\w` (letters and numbers of Python's Unicode, a table generated from Python: `pystr_word.rs`), and
//! `isprintable` (what `repr` leaves unescaped, a table generated from Python: `pystr_printable.rs`).

use crate::pystr_printable::NOT_PRINTABLE;
use crate::pystr_word::WORD;

/// Whether Python's `str.isspace()` holds for `c`: Unicode whitespace, and the file, group, record and unit
/// separators (`\x1c` to `\x1f`), which Python counts as whitespace by their bidirectional class.
pub(crate) fn is_space(c: char) -> bool {
    c.is_whitespace() || ('\x1c'..='\x1f').contains(&c)
}

/// Whether a pattern's `\w` matches `c` in Python's `re` (so a `\b` stands between it and a character it does not).
pub(crate) fn is_word(c: char) -> bool {
    if c.is_ascii() {
        return c.is_ascii_alphanumeric() || c == '_';
    }
    let code = u32::from(c);
    // The first range not wholly below `c` holds it, if any does.
    let at = WORD.partition_point(|&(_, last)| last < code);
    WORD.get(at).is_some_and(|&(first, _)| first <= code)
}

/// Whether Python's `str.isprintable` holds for `c` (`repr` escapes a character it does not hold for).
pub(crate) fn is_printable(c: char) -> bool {
    let code = u32::from(c);
    if (0x20..0x7f).contains(&code) {
        return true;
    }
    let at = NOT_PRINTABLE.partition_point(|&(_, last)| last < code);
    NOT_PRINTABLE.get(at).is_none_or(|&(first, _)| first > code)
}

/// Whether `text` is empty once stripped as Python's `str.strip()` strips it.
pub(crate) fn is_blank(text: &str) -> bool {
    text.chars().all(is_space)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every code point for which CPython 3.13's `str.isspace()` is true.
    #[test]
    fn whitespace_is_pythons() {
        let python: Vec<u32> = [0x9..=0xd, 0x1c..=0x20, 0x85..=0x85, 0xa0..=0xa0, 0x1680..=0x1680, 0x2000..=0x200a]
            .into_iter()
            .flatten()
            .chain([0x2028, 0x2029, 0x202f, 0x205f, 0x3000])
            .collect();
        let ours: Vec<u32> = (0..=0x10ffffu32).filter(|&c| char::from_u32(c).is_some_and(is_space)).collect();
        assert_eq!(ours, python);
        assert!(is_blank("\x1f \u{3000}") && is_blank("") && !is_blank(" r "));
    }

    /// Python's `\w` where Rust's `is_alphanumeric` says otherwise (found by a review: a bearer credential after
    /// `Ⓐ` was kept), and where both agree.
    #[test]
    fn word_characters_are_pythons() {
        for c in ['\u{24b6}', '\u{345}', '\u{93e}', '\u{1c89}', ' ', '-', '\u{2028}'] {
            assert!(!is_word(c), "{c:?}");
        }
        for c in ['a', 'Z', '0', '_', 'é', 'ı', '\u{663}', '\u{4e00}', '\u{10400}', '\u{2160}'] {
            assert!(is_word(c), "{c:?}");
        }
        assert!(WORD.windows(2).all(|pair| pair[0].1 + 1 < pair[1].0), "ranges in order, apart");
        // The search finds each range's ends, and not the code points just outside it.
        let word = |code: u32| char::from_u32(code).is_some_and(is_word);
        for &(first, last) in &WORD {
            assert!(word(first) && word(last), "{first:x}..={last:x}");
            assert!(!word(first - 1) || first == 0x80, "{:x}", first - 1);
            assert!(!word(last + 1), "{:x}", last + 1);
        }
    }

    /// Python's `isprintable` where the hand-written list before the table said otherwise (found by helper-54: a
    /// Pydantic error's repr of unassigned code points and format characters), and where both agree.
    #[test]
    fn printable_characters_are_pythons() {
        for c in [
            '\u{890}',
            '\u{378}',
            '\u{110bd}',
            '\u{13430}',
            '\u{1d173}',
            '\u{ffff}',
            '\u{d7ff}',
            '\u{a0}',
            '\u{2028}',
            '\x7f',
        ] {
            assert!(!is_printable(c), "{c:?}");
        }
        for c in [' ', 'a', '~', 'é', '\u{d7fb}', '\u{4e00}', '\u{1f600}'] {
            assert!(is_printable(c), "{c:?}");
        }
        assert!(NOT_PRINTABLE.windows(2).all(|pair| pair[0].1 + 1 < pair[1].0), "ranges in order, apart");
        let printable = |code: u32| char::from_u32(code).is_none_or(is_printable);
        for &(first, last) in &NOT_PRINTABLE {
            assert!(!printable(first) && !printable(last), "{first:x}..={last:x}");
            assert!(first == 0 || printable(first - 1), "{:x}", first - 1);
            assert!(last == 0x10ffff || printable(last + 1), "{:x}", last + 1);
        }
    }
}
