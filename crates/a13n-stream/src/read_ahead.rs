//! Reading input on a second thread: blocks of lines are read, split by the workspace's line rules and scanned
//! by the fast lanes' scans ([`ReadAhead`]) while the main thread observes or folds the block before.
//!
//! A block owns its text and the scans that borrow it (`self_cell`), so it moves between threads whole. A block is
//! handed on once it holds [`BLOCK_BYTES`], or when the input has nothing more ready (a pipe or a terminal between
//! writes), so a live producer's lines are taken as they come. At most [`BLOCKS_AHEAD`] blocks wait; a block
//! holds up to [`BLOCK_BYTES`] plus one read and one line (a line may be as long as the line limit). A block taken
//! goes back to the reader, which fills it again: its memory is touched once, not once a block.
//!
//! Neither thread waits while the other has work: while the taker waits for a block, the reader hands on the one
//! it is scanning, and the taker reads the lines left unscanned itself ([`Starving`]).
//!
//! A taker that stops early or fails does not wait for the reader, which may be waiting for input that never
//! comes: the reader is left to stop when it next hands a block on (or when the process ends).

use std::io::BufRead;
use std::ops::Range;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender, TryRecvError};
use std::sync::Arc;

use a13n_stream_protocol::lines::{LineError, LineSplitter};
use a13n_stream_protocol::{ReadAhead, ScannedLine, MAX_SOURCE_LINE_BYTES};
use indicatif::ProgressBar;
use self_cell::self_cell;

use crate::failure::{io_error, Failure};
use crate::input::{progress_bar, show_progress, Input, Next};

/// A block is handed on once it holds this many bytes of lines (or the input ends, or has nothing more ready).
/// One read's worth ([`crate::input::READ_BYTES`]): the taker starts on the first block sooner, and a block's scans
/// (about 400 bytes a line, new memory for each block) stay small enough for the allocator to reuse the pages of
/// the blocks taken before. From 256 KiB to 64 KiB took `fold` of a 7,059-line Harness run from about 2,300 page
/// faults to 1,850 (`docs/PERFORMANCE.md`, session 35).
const BLOCK_BYTES: usize = 1 << 16;

/// Blocks read ahead of the one being taken.
const BLOCKS_AHEAD: usize = 4;

/// A block's lines: their text, one after another, each line's number and place in it (or its error), how many
/// bytes of input the block read, and whether it was handed on because the input had nothing more ready.
#[derive(Default)]
struct Lines {
    text: String,
    lines: Vec<(u64, Result<Range<usize>, LineError>)>,
    bytes: u64,
    waiting: bool,
}

/// The scans of the block's first lines (`None` for a line with an error); the lines after them are left for the
/// taker to read itself (see [`Starving`]).
type Scans<'a> = Vec<Option<ScannedLine<'a>>>;

/// Set while the taker waits for a block. The reader then hands on the block it is scanning, the lines it has not
/// scanned left for the taker to read with its own memos (the same results: see `observe_line` and
/// `fold_line`), so that neither thread waits while the other works: the scans are the larger half of
/// `observe`'s work and the smaller of `fold`'s, and the first block is taken at once.
type Starving = Arc<AtomicBool>;

self_cell!(
    struct Block {
        owner: Lines,
        #[not_covariant]
        dependent: Scans,
    }
);

/// Hand every line of `input` to `each` (its 1-based line number and its text and scan, or why it has none), and
/// [`Next::Waiting`] after a block handed on because the input had nothing more ready, until the input ends or
/// `each` returns `false`, as [`crate::input::for_each_line`] does, the lines read and scanned by `reader` on
/// another thread (a line without a scan is for the taker to read: see [`Starving`]). Returns the reader when the
/// input was read to its end, to be given back to the observer or fold it read for (`None` when `each` stopped
/// first).
pub fn for_each_scanned(
    input: Input,
    reader: ReadAhead,
    each: impl FnMut(Next<(&str, Option<&ScannedLine<'_>>)>) -> Result<bool, Failure>,
) -> Result<Option<ReadAhead>, Failure> {
    let progress = progress_bar();
    let reader = for_each_scanned_within(input, reader, MAX_SOURCE_LINE_BYTES, &progress, each);
    progress.finish_and_clear();
    reader
}

/// [`for_each_scanned`] with lines of at most `limit` bytes.
fn for_each_scanned_within(
    input: Input,
    reader: ReadAhead,
    limit: usize,
    progress: &ProgressBar,
    mut each: impl FnMut(Next<(&str, Option<&ScannedLine<'_>>)>) -> Result<bool, Failure>,
) -> Result<Option<ReadAhead>, Failure> {
    let (send, receive) = sync_channel(BLOCKS_AHEAD);
    // Room for every block there can be: giving one back never waits.
    let (give_back, taken_back) = sync_channel(BLOCKS_AHEAD + 2);
    let starving = Starving::default();
    let reading = {
        let starving = Arc::clone(&starving);
        std::thread::Builder::new()
            .name("read-ahead".into())
            .spawn(move || read_blocks(input, reader, limit, &send, &taken_back, &starving))
            .map_err(io_error)?
    };
    let mut bytes = 0u64;
    while let Some(block) = next_block(&receive, &starving) {
        let block = block?;
        let (go, seen) = block.with_dependent(|lines, scans| -> Result<(bool, u64), Failure> {
            for (at, (number, line)) in lines.lines.iter().enumerate() {
                let line = match (line, scans.get(at)) {
                    (Err(error), _) => Err(*error),
                    (Ok(range), scanned) => Ok((&lines.text[range.clone()], scanned.and_then(Option::as_ref))),
                };
                if !each(Next::Line(*number, line))? {
                    return Ok((false, *number));
                }
            }
            if lines.waiting && !each(Next::Waiting)? {
                return Ok((false, lines.lines.last().map_or(0, |(number, _)| *number)));
            }
            // A block without lines (the input's end after its last newline) leaves the count where it was.
            Ok((true, lines.lines.last().map_or(0, |(number, _)| *number)))
        })?;
        bytes += block.borrow_owner().bytes;
        show_progress(progress, seen.max(progress.position()), bytes);
        if !go {
            return Ok(None);
        }
        let _ = give_back.try_send(block.into_owner());
    }
    // The reader has sent its last block: it has ended.
    let reader = reading.join().map_err(|_| Failure::Io("the input reader stopped".into()))?;
    Ok(Some(reader))
}

/// The next block, or `None` once the reader has sent its last; `starving` is set while the taker waits for it.
fn next_block(receive: &Receiver<Result<Block, Failure>>, starving: &Starving) -> Option<Result<Block, Failure>> {
    match receive.try_recv() {
        Ok(block) => Some(block),
        Err(TryRecvError::Disconnected) => None,
        Err(TryRecvError::Empty) => {
            starving.store(true, Ordering::Relaxed);
            let block = receive.recv().ok();
            starving.store(false, Ordering::Relaxed);
            block
        }
    }
}

/// The reading thread: blocks of `input`'s lines, scanned (those the taker has not had to read itself), sent until
/// the input ends, a read fails (the lines before it are sent first), or nobody receives.
fn read_blocks(
    mut input: Input,
    mut reader: ReadAhead,
    limit: usize,
    send: &SyncSender<Result<Block, Failure>>,
    taken_back: &Receiver<Lines>,
    starving: &Starving,
) -> ReadAhead {
    let mut splitter = LineSplitter::new(limit);
    let mut ended = false;
    // Whether the last block handed on said the input was waiting.
    let mut told_waiting = false;
    while !ended {
        let mut lines = taken_back.try_recv().unwrap_or_else(|_| Lines {
            // A block ends after the line that fills it: room for a long one more without growing.
            text: String::with_capacity(2 * BLOCK_BYTES),
            ..Lines::default()
        });
        lines.text.clear();
        // A block that held a very long line lets it go.
        lines.text.shrink_to(2 * BLOCK_BYTES);
        lines.lines.clear();
        lines.bytes = 0;
        lines.waiting = false;
        let mut failed = None;
        loop {
            let chunk = match input.fill_buf() {
                Ok(chunk) => chunk,
                Err(error) => {
                    failed = Some(Failure::Io(format!("reading input: {error}")));
                    break;
                }
            };
            if chunk.is_empty() {
                if let Some(line) = splitter.finish() {
                    lines.push(line);
                }
                ended = true;
                break;
            }
            let (length, mut rest) = (chunk.len(), chunk);
            while let Some(line) = splitter.next_line(&mut rest) {
                lines.push(line);
            }
            input.consume(length);
            lines.bytes += length as u64;
            // A short read: the input has nothing more ready now. Hand on what there is rather than wait, and say
            // so (once, if there is no line to hand on: the taker may hold output of the blocks before).
            let short = input.waits_after(length);
            if lines.text.len() >= BLOCK_BYTES || (short && (!lines.lines.is_empty() || !told_waiting)) {
                lines.waiting = short;
                break;
            }
        }
        told_waiting = lines.waiting;
        let block = Block::new(lines, |lines| {
            let mut scan = |line: &Result<Range<usize>, LineError>| {
                line.as_ref().ok().map(|range| reader.scan(&lines.text[range.clone()]))
            };
            // The lines after the taker began to wait are left to it. Room for every line at once: a vector grown
            // by doubling copies the scans it holds into fresh memory each time.
            let mut scans: Scans = Vec::with_capacity(lines.lines.len());
            scans.extend(
                lines.lines.iter().map_while(|(_, line)| (!starving.load(Ordering::Relaxed)).then(|| scan(line))),
            );
            // Said once: the block after this one is scanned whole unless the taker waits again.
            if scans.len() < lines.lines.len() {
                starving.store(false, Ordering::Relaxed);
            }
            scans
        });
        if send.send(Ok(block)).is_err() {
            break;
        }
        if let Some(failure) = failed {
            let _ = send.send(Err(failure));
            break;
        }
    }
    reader
}

impl Lines {
    /// Append a line: its text to the block's, its place to the block's list.
    fn push(&mut self, (number, line): (u64, Result<&str, LineError>)) {
        let at = self.text.len();
        let line = line.map(|text| {
            self.text.push_str(text);
            at..self.text.len()
        });
        self.lines.push((number, line));
    }
}

#[cfg(test)]
mod tests {
    use std::io::Read;

    use crate::input::READ_BYTES;
    use std::sync::mpsc::channel;
    use std::time::Duration;

    use super::*;

    type Taken = Vec<(u64, Result<String, LineError>)>;

    /// Input handed out in reads of uneven sizes (a few bytes, a page, a whole buffer), as a pipe hands it out,
    /// then, if `then_wait`, no more: a read that waits for bytes that never come (a producer gone quiet).
    struct Uneven {
        bytes: Vec<u8>,
        at: usize,
        reads: usize,
        then_wait: bool,
    }

    impl Read for Uneven {
        fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
            if self.at == self.bytes.len() && self.then_wait {
                // The producer went quiet: it never writes again, nor ends.
                loop {
                    std::thread::park();
                }
            }
            let size = [7, 4093, READ_BYTES][self.reads % 3].min(out.len()).min(self.bytes.len() - self.at);
            out[..size].copy_from_slice(&self.bytes[self.at..self.at + size]);
            (self.at, self.reads) = (self.at + size, self.reads + 1);
            Ok(size)
        }
    }

    fn uneven(bytes: Vec<u8>, then_wait: bool) -> Input {
        Input::new(Box::new(Uneven { bytes, at: 0, reads: 0, then_wait }), None)
    }

    /// What `for_each_scanned_within` hands out for `input`, until `stop` lines were taken, and how many blocks.
    fn taken(input: Input, limit: usize, stop: usize) -> Result<(Taken, bool), Failure> {
        let mut taken = Vec::new();
        let progress = ProgressBar::hidden();
        let reader = for_each_scanned_within(input, ReadAhead::for_new_fold(), limit, &progress, |next| {
            if let Next::Line(number, line) = next {
                // A scan, where there is one, is its line's.
                let line =
                    line.inspect(|(text, scanned)| assert!(scanned.is_none_or(|scanned| scanned.line() == *text)));
                taken.push((number, line.map(|(text, _)| text.to_owned())));
            }
            Ok(taken.len() < stop)
        })?;
        Ok((taken, reader.is_some()))
    }

    /// The line rules applied to the whole input at once.
    fn split(input: &[u8], limit: usize) -> Taken {
        let mut splitter = LineSplitter::new(limit);
        let mut rest = input;
        let mut taken = Vec::new();
        while let Some((number, line)) = splitter.next_line(&mut rest) {
            taken.push((number, line.map(str::to_owned)));
        }
        taken.extend(splitter.finish().map(|(number, line)| (number, line.map(str::to_owned))));
        taken
    }

    /// Lines of every length over several blocks, blank lines, `\r\n` endings, lines that are not UTF-8, lines
    /// over the limit, valid lines longer than a block, and a last line without a newline.
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
                input.extend(std::iter::repeat_n(b'z', BLOCK_BYTES + n));
                input.push(b'\n');
            }
        }
        input.extend_from_slice(b"{\"last\":true}");
        input
    }

    #[test]
    fn lines_are_handed_out_in_order_across_reads_and_blocks_as_the_rules_read_them() {
        let limit = BLOCK_BYTES + BLOCK_BYTES / 2;
        let input = journal(limit);
        assert!(input.len() > 8 * BLOCK_BYTES, "the journal spans blocks");
        let expected = split(&input, limit);
        assert!(expected.iter().any(|(_, line)| matches!(line, Err(LineError::TooLong { .. }))));
        assert!(expected.iter().any(|(_, line)| matches!(line, Err(LineError::NotUtf8 { .. }))));
        assert!(expected.iter().any(|(_, line)| line.as_ref().is_ok_and(|text| text.len() > BLOCK_BYTES)));
        let (got, ended) = taken(uneven(input.clone(), false), limit, usize::MAX).unwrap();
        assert!(got == expected && ended, "uneven reads");
        let (got, ended) = taken(Input::new(Box::new(std::io::Cursor::new(input)), None), limit, usize::MAX).unwrap();
        assert!(got == expected && ended, "the whole input in one read");
    }

    /// The progress count fell to 0 lines at the end of an input ending with a newline: its last block holds no
    /// line, and its count was taken as the lines seen.
    #[test]
    fn the_progress_count_ends_at_the_last_line() {
        let input: Vec<u8> = (0..5000).flat_map(|n| format!("{{\"n\":{n}}}\n").into_bytes()).collect();
        let progress = ProgressBar::hidden();
        let input = Input::new(Box::new(std::io::Cursor::new(input)), None);
        for_each_scanned_within(input, ReadAhead::for_new_fold(), 1 << 20, &progress, |_| Ok(true)).unwrap();
        assert_eq!(progress.position(), 5000);
    }

    /// Run `check` on its own thread: a taker left waiting for the input fails the test at the deadline.
    fn within_deadline(check: Box<dyn FnOnce() + Send>) {
        let (done, finished) = channel();
        std::thread::spawn(move || {
            check();
            let _ = done.send(());
        });
        finished.recv_timeout(Duration::from_secs(60)).expect("the taker returned without waiting for input");
    }

    /// The lines of `input` as `read_blocks` hands them on with the taker waiting from the start (`starving`: the
    /// first block's lines are left to it; the reader clears the flag as it hands that block on) or never: each
    /// line's number, text and whether it came scanned.
    fn read_with(input: &[u8], starving: bool) -> Vec<(u64, Result<String, LineError>, bool)> {
        let (send, receive) = std::sync::mpsc::sync_channel(BLOCKS_AHEAD);
        let (_give_back, taken_back) = std::sync::mpsc::sync_channel(1);
        let flag = Starving::new(AtomicBool::new(starving));
        let input = Input::new(Box::new(std::io::Cursor::new(input.to_vec())), None);
        let reading = std::thread::spawn(move || {
            read_blocks(input, ReadAhead::for_new_fold(), 1 << 20, &send, &taken_back, &flag);
        });
        let mut lines = Vec::new();
        for block in receive {
            block.unwrap().with_dependent(|owner, scans| {
                for (at, (number, line)) in owner.lines.iter().enumerate() {
                    let scanned = scans.get(at).is_some_and(Option::is_some);
                    lines.push((*number, line.clone().map(|range| owner.text[range].to_owned()), scanned));
                }
            });
        }
        reading.join().unwrap();
        lines
    }

    #[test]
    fn lines_left_to_the_taker_are_the_lines_the_reader_would_have_scanned() {
        let input = journal(1 << 20);
        let scanned = read_with(&input, false);
        assert!(
            scanned.iter().all(|(_, line, scanned)| *scanned || line.is_err()),
            "a reader never waited for scans every line"
        );
        let left = read_with(&input, true);
        let first_block = left.iter().take_while(|(_, line, scanned)| !scanned || line.is_err()).count();
        assert!(first_block > 0, "a waiting taker is left the first block's lines");
        assert!(left[first_block..].iter().any(|(_, _, scanned)| *scanned), "later blocks are scanned again");
        let plain = |lines: Vec<(u64, Result<String, LineError>, bool)>| -> Vec<_> {
            lines.into_iter().map(|(n, line, _)| (n, line)).collect()
        };
        assert!(plain(left) == plain(scanned), "the same lines, in the same order, either way");
    }

    /// A live producer's output was held until the output buffer filled: nothing said that the input had gone
    /// quiet, so `tail -f journal | a13n-stream observe` showed nothing.
    #[test]
    fn a_taker_is_told_when_the_producer_goes_quiet_after_its_lines() {
        let input = journal(1 << 20);
        let finished = split(&input, 1 << 20).len() - 1;
        within_deadline(Box::new(move || {
            let mut lines = 0;
            for_each_scanned(uneven(input, true), ReadAhead::for_new_fold(), |next| match next {
                Next::Line(..) => {
                    lines += 1;
                    Ok(true)
                }
                // Told once every finished line was taken (the last, with no newline, waits for the input).
                Next::Waiting => Ok(lines < finished),
            })
            .unwrap();
            assert_eq!(lines, finished);
        }));
    }

    /// The lines a taker is handed before it is told the input waits (it stops then), on its own thread.
    fn lines_before_waiting(input: Input) -> usize {
        let (send, lines) = channel();
        within_deadline(Box::new(move || {
            let mut count = 0;
            for_each_scanned(input, ReadAhead::for_new_fold(), |next| match next {
                Next::Line(..) => {
                    count += 1;
                    Ok(true)
                }
                Next::Waiting => Ok(false),
            })
            .unwrap();
            send.send(count).unwrap();
        }));
        lines.recv().unwrap()
    }

    /// `count` lines of 64 bytes.
    fn short_lines(count: usize) -> Vec<u8> {
        (0..count).flat_map(|n| format!("{n:063}\n").into_bytes()).collect()
    }

    /// A producer that went quiet after exactly a pipe's worth (64 KiB) of lines was never said to wait: the
    /// read was full, so the next was made, and it waited.
    #[test]
    fn a_full_read_that_emptied_a_pipe_is_waiting() {
        let (read, write) = rustix::pipe::pipe().unwrap();
        let mut write = std::fs::File::from(write);
        std::io::Write::write_all(&mut write, &short_lines(READ_BYTES / 64)).unwrap();
        let read = std::fs::File::from(read);
        let polled = read.try_clone().unwrap().into();
        assert_eq!(lines_before_waiting(Input::new(Box::new(read), Some(polled))), READ_BYTES / 64);
        drop(write);
    }

    /// Reads of whole buffers that fill a block, then part of a line, then nothing: the block went on without
    /// saying the input waits, and the part made no line, so the taker was never told.
    #[test]
    fn a_producer_quiet_inside_a_line_after_a_full_block_is_waiting() {
        struct Scripted(std::collections::VecDeque<Vec<u8>>);
        impl Read for Scripted {
            fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
                let Some(chunk) = self.0.pop_front() else {
                    // The producer went quiet: it never writes again, nor ends.
                    loop {
                        std::thread::park();
                    }
                };
                out[..chunk.len()].copy_from_slice(&chunk);
                Ok(chunk.len())
            }
        }
        // A block holds the lines' text without their newlines: the reads' worth that fills one at its last read.
        let per_read = READ_BYTES / 64;
        let count = BLOCK_BYTES.div_ceil(per_read * 63) * per_read;
        assert!(count * 63 >= BLOCK_BYTES && (count - per_read) * 63 < BLOCK_BYTES);
        let lines = short_lines(count);
        let mut reads: std::collections::VecDeque<Vec<u8>> = lines.chunks(READ_BYTES).map(<[u8]>::to_vec).collect();
        reads.push_back(b"{\"partial\":".to_vec());
        assert_eq!(lines_before_waiting(Input::new(Box::new(Scripted(reads)), None)), count);
    }

    #[test]
    fn a_taker_that_stops_or_fails_does_not_wait_for_the_input() {
        let input = journal(1 << 20);
        let expected = split(&input, 1 << 20);
        // The producer goes quiet after the journal: every line it finished is taken (its last line, with no
        // newline, waits for the input to end), then the taker stops.
        let finished = expected[..expected.len() - 1].to_vec();
        within_deadline(Box::new(move || {
            let (got, ended) = taken(uneven(input, true), 1 << 20, finished.len()).unwrap();
            assert!(got == finished && !ended, "every finished line was taken");
        }));
        within_deadline(Box::new(move || {
            let mut count = 0;
            let failed = for_each_scanned(uneven(journal(1 << 20), true), ReadAhead::for_new_fold(), |next| {
                count += usize::from(matches!(next, Next::Line(..)));
                if count == 5 {
                    return Err(Failure::Io("the output is gone".into()));
                }
                Ok(true)
            });
            assert!(matches!(failed, Err(Failure::Io(message)) if message == "the output is gone"));
            assert_eq!(count, 5, "no line is taken after the failure");
        }));
    }
}
