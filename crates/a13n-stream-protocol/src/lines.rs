//! The one set of rules by which NDJSON input becomes lines, shared by the command-line tool, the host and the
//! conformance runner (sans-IO: the caller feeds bytes as it reads them).
//!
//! - A line ends at `\n`; the last line may end at the end of input instead. Trailing `\r`s are dropped.
//! - A line of JSON whitespace only (spaces, tabs, carriage returns) is skipped: it is not an item and takes no
//!   position.
//! - A line longer than the limit is reported as [`LineError::TooLong`] without being held; a line that is not
//!   UTF-8 as [`LineError::NotUtf8`]. Either still takes its position, so later lines keep their numbers.

use std::fmt;

/// Why a line could not be read as text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum LineError {
    /// The line is longer than the limit (bytes).
    TooLong {
        /// The limit.
        limit: usize,
    },
    /// The line is not UTF-8.
    NotUtf8 {
        /// The length of its valid prefix.
        valid_up_to: usize,
    },
}

impl fmt::Display for LineError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LineError::TooLong { limit } => write!(f, "the line exceeds the {limit}-byte limit"),
            LineError::NotUtf8 { valid_up_to } => write!(f, "the line is not UTF-8 (invalid after byte {valid_up_to})"),
        }
    }
}

impl std::error::Error for LineError {}

/// One line: its 1-based physical line number (blank lines counted) and its text or why it has none.
pub type Line<'a> = (u64, Result<&'a str, LineError>);

/// Splits bytes fed in any chunks into lines by the rules above.
#[derive(Debug)]
pub struct LineSplitter {
    limit: usize,
    line: Vec<u8>,
    oversized: bool,
    number: u64,
    /// The previous line was handed out of `line`: clear it before taking more bytes.
    handed: bool,
}

impl LineSplitter {
    /// A splitter for lines of at most `limit` bytes.
    pub fn new(limit: usize) -> LineSplitter {
        LineSplitter { limit, line: Vec::new(), oversized: false, number: 0, handed: false }
    }

    /// The next complete line from `input`, advancing it past what was consumed; `None` once `input` is used up
    /// (bytes of an unfinished line are kept for the next call). A line that lies whole in `input` is handed out
    /// from it; only a line begun in an earlier call is copied.
    pub fn next_line<'s, 'i: 's>(&'s mut self, input: &mut &'i [u8]) -> Option<Line<'s>> {
        loop {
            let Some(end) = memchr::memchr(b'\n', input) else {
                self.take(input);
                *input = &[];
                return None;
            };
            let (piece, rest) = (&input[..end], &input[end + 1..]);
            *input = rest;
            self.number += 1;
            if self.handed {
                self.reset();
            }
            if self.line.is_empty() && !self.oversized {
                if piece.len() > self.limit {
                    return Some((self.number, Err(LineError::TooLong { limit: self.limit })));
                }
                if !is_blank(piece) {
                    return Some((self.number, line_text(piece)));
                }
                continue;
            }
            self.take(piece);
            if !self.blank() {
                return Some(self.hand_out());
            }
            self.reset();
        }
    }

    /// The last line, when the input ended without a newline after it.
    pub fn finish(&mut self) -> Option<Line<'_>> {
        if self.handed {
            self.reset();
        }
        if self.line.is_empty() && !self.oversized {
            return None;
        }
        self.number += 1;
        if self.blank() {
            self.reset();
            return None;
        }
        Some(self.hand_out())
    }

    /// Physical lines seen so far.
    pub fn lines_seen(&self) -> u64 {
        self.number
    }

    /// The error of the line being read, when it is known before the line ends: the line is already longer than
    /// the limit. A reader may stop there instead of reading on to the line's end (the line is number
    /// `lines_seen() + 1`; [`next_line`](Self::next_line) or [`finish`](Self::finish) would report the same error).
    pub fn pending_error(&self) -> Option<LineError> {
        (self.oversized && !self.handed).then_some(LineError::TooLong { limit: self.limit })
    }

    fn take(&mut self, piece: &[u8]) {
        if self.handed {
            self.reset();
        }
        if self.oversized || self.line.len() + piece.len() > self.limit {
            self.oversized = true;
            self.line.clear();
        } else {
            self.line.extend_from_slice(piece);
        }
    }

    fn blank(&self) -> bool {
        !self.oversized && is_blank(&self.line)
    }

    fn reset(&mut self) {
        self.line.clear();
        self.oversized = false;
        self.handed = false;
    }

    fn hand_out(&mut self) -> Line<'_> {
        self.handed = true;
        if self.oversized {
            return (self.number, Err(LineError::TooLong { limit: self.limit }));
        }
        (self.number, line_text(&self.line))
    }
}

/// Whether a line holds JSON white space only (or carriage returns): no item.
fn is_blank(line: &[u8]) -> bool {
    line.iter().all(|b| matches!(b, b' ' | b'\t' | b'\r'))
}

/// A line's text without its trailing carriage returns, or why it has none.
fn line_text(line: &[u8]) -> Result<&str, LineError> {
    let end = line.iter().rposition(|&b| b != b'\r').map_or(0, |last| last + 1);
    std::str::from_utf8(&line[..end]).map_err(|e| LineError::NotUtf8 { valid_up_to: e.valid_up_to() })
}

/// Every line of a whole text, by the same rules (no length limit).
pub fn split_text(text: &str) -> Vec<(u64, &str)> {
    let mut out = Vec::new();
    for (index, line) in text.split('\n').enumerate() {
        let line = line.trim_end_matches('\r');
        if !is_blank(line.as_bytes()) {
            out.push((index as u64 + 1, line));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(chunks: &[&[u8]], limit: usize) -> Vec<(u64, Result<String, LineError>)> {
        let mut splitter = LineSplitter::new(limit);
        let mut out = Vec::new();
        for chunk in chunks {
            let mut input = *chunk;
            while let Some((number, line)) = splitter.next_line(&mut input) {
                out.push((number, line.map(str::to_owned)));
            }
        }
        if let Some((number, line)) = splitter.finish() {
            out.push((number, line.map(str::to_owned)));
        }
        out
    }

    #[test]
    fn lines_split_the_same_whatever_the_chunks() {
        let text = b"{\"a\":1}\r\n\n  \t\n{\"b\":2}\n\xff\n0123456789abc\nlast";
        let expected = vec![
            (1, Ok("{\"a\":1}".to_owned())),
            (4, Ok("{\"b\":2}".to_owned())),
            (5, Err(LineError::NotUtf8 { valid_up_to: 0 })),
            (6, Err(LineError::TooLong { limit: 10 })),
            (7, Ok("last".to_owned())),
        ];
        assert_eq!(all(&[text], 10), expected);
        let bytes: Vec<&[u8]> = text.chunks(1).collect();
        assert_eq!(all(&bytes, 10), expected);
        let bytes: Vec<&[u8]> = text.chunks(3).collect();
        assert_eq!(all(&bytes, 10), expected);
        assert_eq!(split_text("{\"a\":1}\r\n\n  \n{\"b\":2}"), vec![(1, "{\"a\":1}"), (4, "{\"b\":2}")]);
        assert!(all(&[b"\n\n"], 10).is_empty());
    }

    /// A line that lies whole in the bytes given is handed out from them, one begun in an earlier call from the
    /// splitter's copy: the same lines either way, at every split of the input.
    #[test]
    fn lines_handed_out_from_the_input_are_the_copied_ones() {
        let text: &[u8] = b"0123456789\r\n\r\r\n01234567890\nok\r\r\n \t\r\n\xc3\xa9\n\xc3\n\n{}\r";
        let whole = all(&[text], 10);
        assert_eq!(
            whole,
            vec![
                // The limit counts a line's carriage returns.
                (1, Err(LineError::TooLong { limit: 10 })),
                (3, Err(LineError::TooLong { limit: 10 })),
                (4, Ok("ok".to_owned())),
                (6, Ok("\u{e9}".to_owned())),
                (7, Err(LineError::NotUtf8 { valid_up_to: 0 })),
                (9, Ok("{}".to_owned())),
            ]
        );
        for at in 0..=text.len() {
            let (head, tail) = text.split_at(at);
            assert_eq!(all(&[head, tail], 10), whole, "split at {at}");
        }
    }

    /// A line longer than the limit is known as soon as its bytes pass the limit, before it ends (a reader of a
    /// body with a larger bound can name the line instead of the body).
    #[test]
    fn an_overlong_line_is_known_before_it_ends() {
        let mut splitter = LineSplitter::new(10);
        let mut input: &[u8] = b"{\"a\":1}\n0123456789";
        assert_eq!(splitter.next_line(&mut input), Some((1, Ok("{\"a\":1}"))));
        assert_eq!(splitter.next_line(&mut input), None);
        assert_eq!(splitter.pending_error(), None, "10 bytes fit the limit");
        assert_eq!(splitter.next_line(&mut &b"x"[..]), None);
        assert_eq!(splitter.pending_error(), Some(LineError::TooLong { limit: 10 }));
        assert_eq!(splitter.lines_seen() + 1, 2, "the pending line's number");
        assert_eq!(splitter.next_line(&mut &b"yz\nok\n"[..]), Some((2, Err(LineError::TooLong { limit: 10 }))));
        assert_eq!(splitter.pending_error(), None, "the error was handed out with its line");
        assert_eq!(splitter.finish(), None);
    }
}
