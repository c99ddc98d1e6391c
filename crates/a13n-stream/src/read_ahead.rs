//! Reading input on a second thread: blocks of lines are read, split by the workspace's line rules and scanned
//! by the fast lanes' scans ([`ReadAhead`]) while the main thread observes or folds the block before.
//!
//! A block owns its text and the scans that borrow it (`self_cell`), so it moves between threads whole; at most
//! [`BLOCKS_AHEAD`] blocks of about [`BLOCK_BYTES`] wait, so memory stays bounded whatever the input's length.
//! A block taken goes back to the reader, which fills it again: its memory is touched once, not once a block.

use std::io::BufRead;
use std::ops::Range;
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};

use a13n_stream_protocol::lines::{LineError, LineSplitter};
use a13n_stream_protocol::{ReadAhead, ScannedLine, MAX_SOURCE_LINE_BYTES};
use self_cell::self_cell;

use crate::failure::Failure;
use crate::input::progress_bar;

/// A block is handed on once it holds this many bytes of lines (or the input ends).
const BLOCK_BYTES: usize = 1 << 18;

/// Blocks read ahead of the one being taken.
const BLOCKS_AHEAD: usize = 4;

/// A block's lines: their text, one after another, and each line's number and place in it (or its error).
#[derive(Default)]
struct Lines {
    text: String,
    lines: Vec<(u64, Result<Range<usize>, LineError>)>,
}

/// Each line's scan (`None` for a line with an error).
type Scans<'a> = Vec<Option<ScannedLine<'a>>>;

self_cell!(
    struct Block {
        owner: Lines,
        #[not_covariant]
        dependent: Scans,
    }
);

/// Hand every line of `input` to `each` (its 1-based line number and its scan, or why it has none) until the
/// input ends or `each` returns `false`, as [`crate::input::for_each_line`] does, the lines read and scanned by
/// `reader` on another thread. Returns the reader, to be given back to the observer or fold it read for.
pub fn for_each_scanned(
    input: Box<dyn BufRead + Send>,
    reader: ReadAhead,
    each: impl FnMut(u64, Result<&ScannedLine<'_>, LineError>) -> Result<bool, Failure>,
) -> Result<ReadAhead, Failure> {
    for_each_scanned_within(input, reader, MAX_SOURCE_LINE_BYTES, each)
}

/// [`for_each_scanned`] with lines of at most `limit` bytes.
fn for_each_scanned_within(
    input: Box<dyn BufRead + Send>,
    reader: ReadAhead,
    limit: usize,
    mut each: impl FnMut(u64, Result<&ScannedLine<'_>, LineError>) -> Result<bool, Failure>,
) -> Result<ReadAhead, Failure> {
    let progress = progress_bar();
    std::thread::scope(|scope| {
        let (send, receive) = sync_channel(BLOCKS_AHEAD);
        // Room for every block there can be: giving one back never waits.
        let (give_back, taken_back) = sync_channel(BLOCKS_AHEAD + 2);
        let reading = scope.spawn(move || read_blocks(input, reader, limit, &send, &taken_back));
        let mut taken = || -> Result<(), Failure> {
            for block in &receive {
                let block = block?;
                let (go, seen) = block.with_dependent(|lines, scans| -> Result<(bool, u64), Failure> {
                    for ((number, line), scan) in lines.lines.iter().zip(scans) {
                        let line = match (line, scan) {
                            (Ok(_), Some(scanned)) => Ok(scanned),
                            (Err(error), _) => Err(*error),
                            (Ok(_), None) => unreachable!("a line without an error is scanned"),
                        };
                        if !each(*number, line)? {
                            return Ok((false, *number));
                        }
                    }
                    Ok((true, lines.lines.last().map_or(0, |(number, _)| *number)))
                })?;
                progress.set_position(seen);
                let _ = give_back.try_send(block.into_owner());
                if !go {
                    break;
                }
            }
            Ok(())
        };
        let taken = taken();
        // The reader stops at its next block once nobody receives.
        drop(receive);
        let reader = reading.join().map_err(|_| Failure::Io("the input reader stopped".into()))?;
        progress.finish_and_clear();
        taken.map(|()| reader)
    })
}

/// The reading thread: blocks of `input`'s lines, scanned, sent until the input ends or nobody receives.
fn read_blocks(
    mut input: Box<dyn BufRead + Send>,
    mut reader: ReadAhead,
    limit: usize,
    send: &SyncSender<Result<Block, Failure>>,
    taken_back: &Receiver<Lines>,
) -> ReadAhead {
    let mut splitter = LineSplitter::new(limit);
    let mut ended = false;
    while !ended {
        let mut lines = taken_back.try_recv().unwrap_or_else(|_| Lines {
            // A block ends after the line that fills it: room for a long one more without growing.
            text: String::with_capacity(2 * BLOCK_BYTES),
            lines: Vec::new(),
        });
        lines.text.clear();
        lines.lines.clear();
        let push = |lines: &mut Lines, (number, line): (u64, Result<&str, LineError>)| {
            let at = lines.text.len();
            let line = line.map(|text| {
                lines.text.push_str(text);
                at..lines.text.len()
            });
            lines.lines.push((number, line));
        };
        while lines.text.len() < BLOCK_BYTES && !ended {
            let chunk = match input.fill_buf() {
                Ok(chunk) => chunk,
                Err(error) => {
                    let _ = send.send(Err(Failure::Io(format!("reading input: {error}"))));
                    return reader;
                }
            };
            if chunk.is_empty() {
                if let Some(line) = splitter.finish() {
                    push(&mut lines, line);
                }
                ended = true;
                break;
            }
            let (length, mut rest) = (chunk.len(), chunk);
            while let Some(line) = splitter.next_line(&mut rest) {
                push(&mut lines, line);
            }
            input.consume(length);
        }
        let block = Block::new(lines, |lines| {
            let mut scan = |line: &Result<Range<usize>, LineError>| {
                line.as_ref().ok().map(|range| reader.scan(&lines.text[range.clone()]))
            };
            lines.lines.iter().map(|(_, line)| scan(line)).collect()
        });
        if send.send(Ok(block)).is_err() {
            break;
        }
    }
    reader
}

#[cfg(test)]
mod tests {
    use std::io::Cursor;

    use super::*;

    type Read = Vec<(u64, Result<String, LineError>)>;

    /// What `for_each_scanned_within` hands out for `input`, until `stop` lines were taken.
    fn scanned(input: &[u8], limit: usize, stop: usize) -> Result<Read, Failure> {
        let mut read = Vec::new();
        let input = Box::new(Cursor::new(input.to_vec()));
        for_each_scanned_within(input, ReadAhead::new(), limit, |number, line| {
            read.push((number, line.map(|scanned| scanned.line().to_owned())));
            Ok(read.len() < stop)
        })?;
        Ok(read)
    }

    /// The line rules applied to the whole input at once.
    fn split(input: &[u8], limit: usize) -> Read {
        let mut splitter = LineSplitter::new(limit);
        let mut rest = input;
        let mut read = Vec::new();
        while let Some((number, line)) = splitter.next_line(&mut rest) {
            read.push((number, line.map(str::to_owned)));
        }
        read.extend(splitter.finish().map(|(number, line)| (number, line.map(str::to_owned))));
        read
    }

    /// Several blocks of lines of every length, blank lines, `\r\n` endings, a line that is not UTF-8, lines over
    /// the limit (one longer than a block) and a last line without a newline.
    fn journal(limit: usize) -> Vec<u8> {
        let mut input = Vec::new();
        for n in 0..4000usize {
            let line = format!(r#"{{"n":{n},"text":"{}"}}"#, "x".repeat(n * 37 % 700));
            input.extend_from_slice(line.as_bytes());
            input.extend_from_slice(match n % 7 {
                0 => b"\r\n".as_slice(),
                1 => b"\n \t\n".as_slice(),
                _ => b"\n".as_slice(),
            });
            if n % 1000 == 999 {
                input.extend(std::iter::repeat_n(b'y', limit + 1 + n * 300));
                input.extend_from_slice(b"\n\xff\xfe\n");
            }
        }
        input.extend_from_slice(b"{\"last\":true}");
        input
    }

    #[test]
    fn lines_are_handed_out_in_order_across_blocks_as_the_rules_read_them() {
        let limit = BLOCK_BYTES + BLOCK_BYTES / 2;
        let input = journal(limit);
        assert!(input.len() > 4 * BLOCK_BYTES, "the journal spans blocks");
        let expected = split(&input, limit);
        assert!(expected.iter().any(|(_, line)| matches!(line, Err(LineError::TooLong { .. }))));
        assert!(expected.iter().any(|(_, line)| matches!(line, Err(LineError::NotUtf8 { .. }))));
        assert_eq!(scanned(&input, limit, usize::MAX).unwrap(), expected);
    }

    #[test]
    fn a_taker_that_stops_or_fails_ends_the_reading() {
        let input = journal(1 << 20);
        let first = scanned(&input, 1 << 20, 10).unwrap();
        assert_eq!(first, split(&input, 1 << 20)[..10]);
        let mut taken = 0;
        let failed = for_each_scanned(Box::new(Cursor::new(input)), ReadAhead::new(), |_, _| {
            taken += 1;
            if taken == 5 {
                return Err(Failure::Io("the output is gone".into()));
            }
            Ok(true)
        });
        assert!(matches!(failed, Err(Failure::Io(message)) if message == "the output is gone"));
        assert_eq!(taken, 5, "no line is taken after the failure");
    }
}
