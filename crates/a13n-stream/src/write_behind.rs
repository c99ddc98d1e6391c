//! Writing output on a second thread ([`WriteBehind`]): the main thread fills a chunk in memory and hands it on;
//! the writer thread makes the system calls (and, for a file, the page-cache copies) while the main thread goes on
//! folding or observing.
//!
//! Memory is bounded: a chunk never holds more than [`CHUNK_BYTES`] (a longer write fills several) and what one
//! write in place ([`WriteBehind::write_in_place`], for a line made straight into the chunk) adds past it, at most
//! [`CHUNKS_AHEAD`] chunks wait for the writer, and a written chunk goes back to be filled again, so a run of any
//! length, with lines of any length, touches a few chunks' memory, not its output's. A chunk is handed on when
//! it holds [`CHUNK_BYTES`], when the caller says the input is waiting ([`WriteBehind::hand_on`]: a live producer's
//! output is written as it comes, not when a chunk fills), and on [`Write::flush`].
//!
//! The first write that fails stops the writer; the error, named as the output names it, is returned by the next
//! hand-on or flush. Dropping a `WriteBehind` writes what it holds and waits for the writer, as dropping a
//! `BufWriter` flushes (its errors are lost there too: call `flush` to see them).

use std::io::{self, Write};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::thread::JoinHandle;

/// A chunk is handed to the writer once it holds this many bytes.
pub const CHUNK_BYTES: usize = 1 << 17;

/// Room a chunk keeps past [`CHUNK_BYTES`] for what [`WriteBehind::write_in_place`] writes (an observed line is
/// about 600 bytes in a Harness run; a longer one grows its chunk, which goes back to this size when reused).
pub const IN_PLACE_BYTES: usize = 1 << 14;

/// Chunks that may wait for the writer before the main thread waits for it.
pub const CHUNKS_AHEAD: usize = 4;

/// What the main thread sends the writer.
enum Order {
    /// Write these bytes (the chunk then goes back).
    Write(Vec<u8>),
    /// Flush the output and answer how everything sent so far went.
    Flush(SyncSender<io::Result<()>>),
}

/// An output written by a thread of its own. See the module's documentation.
pub struct WriteBehind {
    chunk: Vec<u8>,
    orders: Option<SyncSender<Order>>,
    written: Receiver<Vec<u8>>,
    writer: Option<JoinHandle<io::Result<()>>>,
    /// Why the writer stopped, once it has: every later call says so again.
    failed: Option<(io::ErrorKind, String)>,
}

impl WriteBehind {
    /// Write to `out` on a new thread.
    pub fn new(out: Box<dyn Write + Send>) -> WriteBehind {
        WriteBehind::after(move || Ok(out))
    }

    /// Write on a new thread to the output `open` makes there first: work on the output (emptying a file) that
    /// the caller need not wait for. An error from `open` is reported as a failed write is.
    pub fn after(open: impl FnOnce() -> io::Result<Box<dyn Write + Send>> + Send + 'static) -> WriteBehind {
        let (orders, taken) = sync_channel(CHUNKS_AHEAD);
        // Room for every chunk there can be: giving one back never waits.
        let (give_back, written) = sync_channel(CHUNKS_AHEAD + 2);
        let writer = std::thread::Builder::new()
            .name("write-behind".into())
            .spawn(move || write_chunks(open()?, &taken, &give_back))
            .expect("the output thread starts");
        WriteBehind { chunk: Vec::new(), orders: Some(orders), written, writer: Some(writer), failed: None }
    }

    /// Append to the output in place, with no copy: `write` appends to the chunk being filled, which is handed on
    /// once it holds [`CHUNK_BYTES`]. (A chunk has room for [`IN_PLACE_BYTES`] more: what one call writes past
    /// that grows it.)
    pub fn write_in_place<T>(&mut self, write: impl FnOnce(&mut Vec<u8>) -> T) -> io::Result<T> {
        self.make_room();
        let made = write(&mut self.chunk);
        if self.chunk.len() >= CHUNK_BYTES {
            self.hand_on()?;
        }
        Ok(made)
    }

    /// A new chunk's memory, taken once (a chunk handed on comes back to be filled again).
    fn make_room(&mut self) {
        if self.chunk.capacity() == 0 {
            self.chunk.reserve_exact(CHUNK_BYTES + IN_PLACE_BYTES);
        }
    }

    /// Hand what is held to the writer now (the input is waiting: what was made of it should be seen).
    pub fn hand_on(&mut self) -> io::Result<()> {
        if self.chunk.is_empty() {
            return Ok(());
        }
        let next = self.written.try_recv().map(|mut chunk| {
            chunk.clear();
            // One grown by a long line written in place goes back to the usual size.
            chunk.shrink_to(CHUNK_BYTES + IN_PLACE_BYTES);
            chunk
        });
        let chunk = std::mem::replace(&mut self.chunk, next.unwrap_or_default());
        self.send(Order::Write(chunk))
    }

    fn send(&mut self, order: Order) -> io::Result<()> {
        let sent = self.orders.as_ref().map(|orders| orders.send(order).is_ok());
        if sent == Some(true) {
            return Ok(());
        }
        Err(self.stopped())
    }

    /// The writer has stopped (a write failed): why.
    fn stopped(&mut self) -> io::Error {
        let _ = self.stop();
        let (kind, message) = self.failed.get_or_insert_with(|| (io::ErrorKind::Other, "the output stopped".into()));
        io::Error::new(*kind, message.clone())
    }

    /// Close the channel and wait for the writer: how its writing went (an error is kept for later calls).
    fn stop(&mut self) -> io::Result<()> {
        self.orders = None;
        let result = match self.writer.take().map(JoinHandle::join) {
            Some(Ok(result)) => result,
            Some(Err(_)) => Err(io::Error::other("the output thread panicked")),
            None => return Ok(()),
        };
        if let Err(error) = &result {
            self.failed = Some((error.kind(), error.to_string()));
        }
        result
    }
}

impl Write for WriteBehind {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        let mut rest = bytes;
        while !rest.is_empty() {
            self.make_room();
            let (now, later) = rest.split_at(rest.len().min(CHUNK_BYTES.saturating_sub(self.chunk.len())));
            self.chunk.extend_from_slice(now);
            rest = later;
            if self.chunk.len() >= CHUNK_BYTES {
                self.hand_on()?;
            }
        }
        Ok(bytes.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.hand_on()?;
        let (answer, answered) = sync_channel(1);
        self.send(Order::Flush(answer))?;
        match answered.recv() {
            Ok(Ok(())) => Ok(()),
            _ => Err(self.stopped()),
        }
    }
}

impl Drop for WriteBehind {
    fn drop(&mut self) {
        if self.writer.is_some() {
            let _ = self.hand_on();
            let _ = self.stop();
        }
    }
}

/// The writer thread: each chunk written, then given back; ends when the channel closes or a write fails.
fn write_chunks(
    mut out: Box<dyn Write + Send>,
    taken: &Receiver<Order>,
    give_back: &SyncSender<Vec<u8>>,
) -> io::Result<()> {
    for order in taken {
        match order {
            Order::Write(chunk) => {
                out.write_all(&chunk)?;
                let _ = give_back.try_send(chunk);
            }
            Order::Flush(answer) => {
                let flushed = out.flush();
                let failed = flushed.as_ref().err().map(|error| io::Error::new(error.kind(), error.to_string()));
                let _ = answer.send(flushed);
                if let Some(error) = failed {
                    return Err(error);
                }
            }
        }
    }
    out.flush()
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use super::*;

    /// An output that keeps what it was given and the size of each write, and fails once it would hold more
    /// than `fail_after` bytes.
    #[derive(Clone)]
    struct Kept {
        bytes: Arc<Mutex<Vec<u8>>>,
        writes: Arc<Mutex<Vec<usize>>>,
        fail_after: usize,
    }

    impl Write for Kept {
        fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
            let mut kept = self.bytes.lock().unwrap();
            if kept.len() + bytes.len() > self.fail_after {
                return Err(io::Error::new(io::ErrorKind::StorageFull, "out.json: No space left on device"));
            }
            kept.extend_from_slice(bytes);
            self.writes.lock().unwrap().push(bytes.len());
            Ok(bytes.len())
        }

        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    fn kept(fail_after: usize) -> Kept {
        Kept { bytes: Arc::default(), writes: Arc::default(), fail_after }
    }

    fn line(n: usize) -> String {
        format!("{{\"n\":{n},\"text\":\"{}\"}}\n", "x".repeat(n % 300))
    }

    #[test]
    fn every_byte_arrives_in_order_across_chunks() {
        let out = kept(usize::MAX);
        let mut writer = WriteBehind::new(Box::new(out.clone()));
        let mut expected = String::new();
        for n in 0..20_000 {
            writer.write_all(line(n).as_bytes()).unwrap();
            expected.push_str(&line(n));
        }
        assert!(expected.len() > 8 * CHUNK_BYTES, "the output spans chunks");
        writer.flush().unwrap();
        assert_eq!(*out.bytes.lock().unwrap(), expected.as_bytes());
    }

    /// Lines made in place, some longer than a chunk's spare room, mixed with copied ones, arrive whole and in
    /// order; a chunk a long line grew is no larger once it comes back to be filled again.
    #[test]
    fn lines_written_in_place_arrive_in_order_and_chunks_keep_their_size() {
        let out = kept(usize::MAX);
        let mut writer = WriteBehind::new(Box::new(out.clone()));
        let mut expected = String::new();
        let long = format!("{{\"long\":\"{}\"}}\n", "y".repeat(CHUNK_BYTES));
        for round in 0..4 {
            // Past the spare room whatever the chunk holds: the chunk grows, then is handed on and comes back.
            writer.write_in_place(|chunk| chunk.extend_from_slice(long.as_bytes())).unwrap();
            expected.push_str(&long);
            writer.flush().unwrap();
            for n in 0..2_000 {
                let text = line(round * 2_000 + n);
                match n % 2 {
                    0 => writer.write_in_place(|chunk| chunk.extend_from_slice(text.as_bytes())).unwrap(),
                    _ => writer.write_all(text.as_bytes()).unwrap(),
                }
                assert!(writer.chunk.capacity() <= CHUNK_BYTES + IN_PLACE_BYTES, "round {round}, line {n}");
                expected.push_str(&text);
            }
        }
        writer.flush().unwrap();
        assert_eq!(*out.bytes.lock().unwrap(), expected.as_bytes());
    }

    #[test]
    fn handing_on_writes_what_is_held_without_a_full_chunk() {
        let out = kept(usize::MAX);
        let mut writer = WriteBehind::new(Box::new(out.clone()));
        writer.write_all(b"{\"first\":true}\n").unwrap();
        writer.hand_on().unwrap();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
        while out.bytes.lock().unwrap().is_empty() {
            assert!(std::time::Instant::now() < deadline, "the handed-on line was written");
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        assert_eq!(*out.bytes.lock().unwrap(), b"{\"first\":true}\n");
    }

    #[test]
    fn a_failed_write_is_reported_with_its_name_and_nothing_after_it_is_written() {
        let out = kept(3 * CHUNK_BYTES);
        let mut writer = WriteBehind::new(Box::new(out.clone()));
        let failed = (0..100_000).map(|n| writer.write_all(line(n).as_bytes())).find_map(Result::err);
        let error = failed.or_else(|| writer.flush().err()).expect("the full output is reported");
        assert_eq!(error.to_string(), "out.json: No space left on device");
        assert_eq!(error.kind(), io::ErrorKind::StorageFull);
        // What was written is the start of what was given, in order.
        let expected: Vec<u8> = (0..100_000).flat_map(|n| line(n).into_bytes()).collect();
        let kept = out.bytes.lock().unwrap().clone();
        assert!(!kept.is_empty() && expected.starts_with(&kept));
        // Later calls keep failing rather than pretending the output is whole.
        assert!(writer.write_all(&[b'x'; CHUNK_BYTES]).is_err());
        assert!(writer.flush().is_err());
    }

    /// A long line was copied into one chunk as long as itself, and chunks kept their size when reused: a few
    /// long lines waiting for a slow reader held several times their size.
    #[test]
    fn a_write_longer_than_a_chunk_fills_several() {
        let out = kept(usize::MAX);
        let mut writer = WriteBehind::new(Box::new(out.clone()));
        let long: Vec<u8> = (0..5 * CHUNK_BYTES + 7).map(|n| b'a' + (n % 26) as u8).collect();
        writer.write_all(b"{").unwrap();
        writer.write_all(&long).unwrap();
        writer.write_all(b"}\n").unwrap();
        writer.flush().unwrap();
        assert_eq!(out.bytes.lock().unwrap().len(), long.len() + 3);
        assert!(out.bytes.lock().unwrap()[1..=long.len()] == long[..]);
        assert!(out.writes.lock().unwrap().iter().all(|&size| size <= CHUNK_BYTES));
        assert!(writer.chunk.capacity() <= CHUNK_BYTES + IN_PLACE_BYTES);
    }

    #[test]
    fn dropping_writes_what_was_held() {
        let out = kept(usize::MAX);
        let mut writer = WriteBehind::new(Box::new(out.clone()));
        writer.write_all(b"held\n").unwrap();
        drop(writer);
        assert_eq!(*out.bytes.lock().unwrap(), b"held\n");
    }

    /// An output that could not be made is reported as a failed write is: by the next hand-on or flush, and
    /// again after.
    #[test]
    fn an_output_that_could_not_be_made_is_reported_as_a_failed_write() {
        let mut writer = WriteBehind::after(|| Err(io::Error::other("out.jsonl: refused")));
        writer.write_all(b"line\n").unwrap();
        let error = writer.flush().unwrap_err();
        assert_eq!(error.to_string(), "out.jsonl: refused");
        assert_eq!(writer.flush().unwrap_err().to_string(), "out.jsonl: refused");
    }
}
