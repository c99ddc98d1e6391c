//! Python's `str` predicates where the reference's checks use them on a journal's text: `isspace` (what `strip()`
//! and a pattern's `\s` take as whitespace), which holds for four ASCII separators Unicode's `White_Space` does not.

/// Whether Python's `str.isspace()` holds for `c`: Unicode whitespace, and the file, group, record and unit
/// separators (`\x1c` to `\x1f`), which Python counts as whitespace by their bidirectional class.
pub(crate) fn is_space(c: char) -> bool {
    c.is_whitespace() || ('\x1c'..='\x1f').contains(&c)
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
}
