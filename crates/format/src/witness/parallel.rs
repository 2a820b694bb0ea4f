//! A witness file read on several threads and handed over in file order
//! ([`ParallelLines`]): one thread reads the file in chunks of whole lines, workers parse
//! each chunk's lines (and run the caller's per-line work on them), and the caller's fold
//! sees every line in file order on its own thread, exactly as [`WitnessLineReader`] would
//! give them. So a fold that is cheap next to parsing runs at the pace of the workers, and
//! the fold itself needs no merging.
//!
//! Memory is bounded: a fixed number of chunks are in flight (each [`CHUNK`] bytes, or one
//! line's when a line is longer, and the parsed lines of one chunk), whatever the file's size.

use super::{WitnessLine, WitnessLineReader, line_text, parse_witness_line_into};
use std::collections::BTreeMap;
use std::io::Read;
use std::ops::Range;
use std::sync::{Arc, Mutex, PoisonError, mpsc};

/// The bytes of one chunk, once a file has more than one.
pub const CHUNK: usize = 1 << 19;

/// The most threads that parse.
const MAX_WORKERS: usize = 4;

/// The most lines a chunk holds parsed at once: a chunk of more (short lines) is parsed in
/// steps of this many, the later ones on the caller's thread, so that the memory of the
/// parsed lines is bounded by lines, not by bytes (a row a runner writes is hundreds of
/// bytes: a chunk holds about a thousand).
const MAX_SLOTS: usize = 4096;

/// How a file's lines are read: [`ParallelLines::read`].
#[derive(Debug, Clone, Copy)]
pub struct ParallelLines {
    workers: usize,
    complete_only: bool,
    chunk: usize,
}

/// One line as the caller's fold sees it.
#[derive(Debug)]
pub enum Streamed<'a, X> {
    /// A line the `skip` of [`ParallelLines::read`] refused: passed over unread.
    Skipped,
    /// A line read, its bytes (without the line ending) and what `prepare` made of it.
    Line(&'a WitnessLine, &'a [u8], &'a X),
}

/// How a read ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LinesRead {
    /// The bytes read from the input: all of it, unless `stopped` (then some of it, how
    /// much unspecified: the reader may have run ahead).
    pub bytes: u64,
    /// The fold asked to stop before the end.
    pub stopped: bool,
}

impl Default for ParallelLines {
    fn default() -> ParallelLines {
        ParallelLines::new()
    }
}

impl ParallelLines {
    /// As many workers as the machine has cores (at most four; none on one core: the
    /// caller's thread then parses too).
    pub fn new() -> ParallelLines {
        let cores = std::thread::available_parallelism().map_or(1, usize::from);
        ParallelLines {
            workers: if cores > 1 { cores.min(MAX_WORKERS) } else { 0 },
            complete_only: false,
            chunk: CHUNK,
        }
    }

    /// `workers` threads parse (0: the caller's thread reads and parses).
    pub fn workers(mut self, workers: usize) -> ParallelLines {
        self.workers = workers.min(MAX_WORKERS);
        self
    }

    /// Leave out a torn last line, as [`WitnessLineReader::complete_lines_only`] does.
    pub fn complete_lines_only(mut self) -> ParallelLines {
        self.complete_only = true;
        self
    }

    /// Chunks of `chunk` bytes (at least 1) instead of 512 KiB.
    pub fn chunk(mut self, chunk: usize) -> ParallelLines {
        self.chunk = chunk.max(1);
        self
    }

    /// Reads every line of `reader` into `each`, in order, until it returns `false`: the
    /// lines [`WitnessLineReader::next_unless`] would give with `skip` (line numbers, blank
    /// lines, `\r\n`, lines that are not UTF-8 or not JSON, a torn last line), each after
    /// `prepare` ran on it on a worker (it may change the line, and fills the line's `X`,
    /// which starts as whatever the slot held last: `prepare` sets all of it; it must not
    /// depend on the line's number, which is then its number within a chunk of the file: a
    /// field error that names it is renumbered with it). A read error ends the reading with
    /// that error, after the lines of the chunks read whole before it (the sequential reader
    /// also hands over the whole lines of its last block: the error is the same, the lines
    /// before it may be fewer).
    pub fn read<R, X, S, P>(
        self,
        reader: R,
        skip: S,
        prepare: P,
        mut each: impl FnMut(Streamed<'_, X>) -> bool,
    ) -> std::io::Result<LinesRead>
    where
        R: Read + Send,
        X: Default + Send,
        S: Fn(&[u8]) -> bool + Sync,
        P: Fn(&mut WitnessLine, &[u8], &mut X) + Sync,
    {
        if self.workers == 0 {
            return self.read_here(reader, skip, prepare, each);
        }
        let mut chunker = Chunker {
            reader,
            carry: Vec::new(),
            bytes: 0,
            eof: false,
            seq: 0,
            chunk: self.chunk,
        };
        let parse = |c: &mut Chunk<X>| c.parse(self.complete_only, &skip, &prepare);
        let mut first = Chunk::default();
        // A file of one chunk is read on this thread alone.
        let read = chunker.fill(&mut first)?;
        if chunker.eof {
            return here(&mut chunker, first, read, &parse, &mut each);
        }
        let pool = 2 * self.workers + 2;
        std::thread::scope(|scope| {
            let (free_tx, free_rx) = mpsc::channel::<Chunk<X>>();
            let (work_tx, work_rx) = mpsc::sync_channel::<Chunk<X>>(pool);
            let work_rx = Arc::new(Mutex::new(work_rx));
            let (done_tx, done_rx) = mpsc::channel::<Done<X>>();
            let mut started = 0;
            for _ in 0..self.workers {
                let (work_rx, done_tx) = (Arc::clone(&work_rx), done_tx.clone());
                let parse = &parse;
                let worker = std::thread::Builder::new()
                    .spawn_scoped(scope, move || work(&work_rx, &done_tx, parse));
                started += usize::from(worker.is_ok());
            }
            drop(work_rx);
            if started == 0 {
                // No thread could be started: this one reads the file alone.
                return here(&mut chunker, first, read, &parse, &mut each);
            }
            // Room for every chunk in flight: the reader never waits to hand one over.
            let _ = work_tx.send(first);
            let end_tx = done_tx.clone();
            std::thread::Builder::new().spawn_scoped(scope, move || {
                feed(chunker, pool, &work_tx, &free_rx, &end_tx)
            })?;
            // (The workers stop once the channels close.)
            drop(done_tx);
            in_file_order(done_rx, free_tx, &parse, &mut each)
        })
    }

    /// [`ParallelLines::read`] on this thread alone, one line at a time.
    fn read_here<R, X, S, P>(
        self,
        reader: R,
        skip: S,
        prepare: P,
        mut each: impl FnMut(Streamed<'_, X>) -> bool,
    ) -> std::io::Result<LinesRead>
    where
        R: Read,
        X: Default,
        S: Fn(&[u8]) -> bool,
        P: Fn(&mut WitnessLine, &[u8], &mut X),
    {
        let mut lines = WitnessLineReader::new(reader);
        if self.complete_only {
            lines = lines.complete_lines_only();
        }
        let mut extra = X::default();
        let mut stopped = false;
        while let Some(it) = lines.next_unless(&skip)? {
            let go_on = match it {
                Some(_) => {
                    let text = &lines.buf[lines.text.clone()];
                    prepare(&mut lines.current, text, &mut extra);
                    each(Streamed::Line(&lines.current, text, &extra))
                }
                None => each(Streamed::Skipped),
            };
            if !go_on {
                stopped = true;
                break;
            }
        }
        Ok(LinesRead {
            bytes: lines.bytes_read(),
            stopped,
        })
    }
}

/// The chunks of `chunker`, from `first` (`more`: it holds lines), parsed and handed to
/// `each` on this thread.
fn here<R: Read, X: Default>(
    chunker: &mut Chunker<R>,
    mut chunk: Chunk<X>,
    mut more: bool,
    parse: &impl Fn(&mut Chunk<X>),
    each: &mut impl FnMut(Streamed<'_, X>) -> bool,
) -> std::io::Result<LinesRead> {
    let mut lines = 0;
    while more {
        parse(&mut chunk);
        match chunk.hand_over(lines, parse, each) {
            Some(after) => lines = after,
            None => return Ok(chunker.read(true)),
        }
        more = chunker.fill(&mut chunk)?;
    }
    Ok(chunker.read(false))
}

/// A worker's loop: parses the chunks it is given and hands them back, until the channels
/// close. A panic (in `prepare`, say) is handed to the caller's thread, which stops the
/// reading and passes it on: the other threads would otherwise wait for this chunk forever.
fn work<X>(
    work_rx: &Mutex<mpsc::Receiver<Chunk<X>>>,
    done_tx: &mpsc::Sender<Done<X>>,
    parse: &impl Fn(&mut Chunk<X>),
) {
    loop {
        let next = work_rx
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .recv();
        let Ok(mut c) = next else { return };
        let parsed = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            parse(&mut c);
        }));
        let done = match parsed {
            Ok(()) => Done::Chunk(c),
            Err(panic) => Done::Panicked(panic),
        };
        if done_tx.send(done).is_err() {
            return;
        }
    }
}

/// The reader thread's loop: fills chunks (new ones until `pool` are in flight, then those
/// handed back) and gives them to the workers; at the end of the input, or at a read error,
/// says how many chunks there were.
fn feed<R: Read, X: Default>(
    mut chunker: Chunker<R>,
    pool: usize,
    work_tx: &mpsc::SyncSender<Chunk<X>>,
    free_rx: &mpsc::Receiver<Chunk<X>>,
    end_tx: &mpsc::Sender<Done<X>>,
) {
    let mut made = 1;
    loop {
        let mut c = if made < pool {
            made += 1;
            Chunk::default()
        } else {
            match free_rx.recv() {
                Ok(c) => c,
                Err(_) => return,
            }
        };
        let (more, error) = match chunker.fill(&mut c) {
            Ok(more) => (more, None),
            Err(e) => (false, Some(e)),
        };
        if more {
            if work_tx.send(c).is_err() {
                return;
            }
        } else {
            let _ = end_tx.send(Done::End {
                chunks: chunker.seq,
                read: chunker.read(false),
                error,
            });
            return;
        }
    }
}

/// The caller's side: the parsed chunks, as the workers finish them, handed to `each` in
/// file order (each handed back to the reader once read). Returns once every chunk is
/// handed over, `each` stops, or a thread fails; a worker's panic is passed on here.
fn in_file_order<X: Default>(
    done_rx: mpsc::Receiver<Done<X>>,
    free_tx: mpsc::Sender<Chunk<X>>,
    parse: &impl Fn(&mut Chunk<X>),
    each: &mut impl FnMut(Streamed<'_, X>) -> bool,
) -> std::io::Result<LinesRead> {
    let mut waiting: BTreeMap<u64, Chunk<X>> = BTreeMap::new();
    let mut next = 0u64;
    // Lines of the chunks handed over.
    let mut lines = 0usize;
    let mut end: Option<(u64, LinesRead, Option<std::io::Error>)> = None;
    let mut panicked = None;
    let outcome = loop {
        if let Some(mut c) = waiting.remove(&next) {
            next += 1;
            let handed = c.hand_over(lines, parse, each);
            let _ = free_tx.send(c);
            if let Some(after) = handed {
                lines = after;
            } else {
                break Ok(LinesRead {
                    bytes: end.as_ref().map_or(0, |e| e.1.bytes),
                    stopped: true,
                });
            }
            continue;
        }
        if let Some((chunks, read, _)) = &end
            && next == *chunks
        {
            let read = *read;
            break match end.and_then(|e| e.2) {
                Some(e) => Err(e),
                None => Ok(read),
            };
        }
        match done_rx.recv() {
            Ok(Done::Chunk(c)) => {
                waiting.insert(c.seq, c);
            }
            Ok(Done::End {
                chunks,
                read,
                error,
            }) => end = Some((chunks, read, error)),
            Ok(Done::Panicked(panic)) => {
                panicked = Some(panic);
                break Err(std::io::Error::other("a thread reading the file panicked"));
            }
            // Every sender is gone before the end: the reader thread panicked (the
            // scope passes the panic on).
            Err(_) => {
                break Err(std::io::Error::other(
                    "a thread reading the witness file stopped",
                ));
            }
        }
    };
    // The reader and the workers stop once nothing takes their chunks.
    drop(free_tx);
    drop(done_rx);
    if let Some(panic) = panicked {
        std::panic::resume_unwind(panic);
    }
    outcome
}

enum Done<X> {
    Chunk(Chunk<X>),
    /// A worker panicked, with this payload.
    Panicked(Box<dyn std::any::Any + Send>),
    End {
        /// How many chunks the file had.
        chunks: u64,
        read: LinesRead,
        error: Option<std::io::Error>,
    },
}

/// Whole lines of the file (the last chunk may end without `\n`) and, once parsed, their
/// slots.
struct Chunk<X> {
    seq: u64,
    /// `bytes[..len]` are the chunk's; the rest is room for the next fill.
    bytes: Vec<u8>,
    len: usize,
    /// Where the parsing stopped (`len`: the chunk is parsed to its end).
    at: usize,
    /// The chunk's lines (blank ones too) up to `at`: its lines are numbered from 1 in the
    /// chunk and renumbered in file order when they are handed over.
    lines: usize,
    slots: Vec<Slot<X>>,
    used: usize,
}

/// Chunk buffers kept from one read for the next (a gate command reads a batch several
/// times, file by file): memory fresh from the system costs a fault and zeroing per page.
static SPARE: Mutex<Vec<Vec<u8>>> = Mutex::new(Vec::new());

/// How many buffers [`SPARE`] keeps, and the largest it keeps (a long line's is let go).
const SPARE_COUNT: usize = 2 * MAX_WORKERS + 2;
const SPARE_BYTES: usize = 2 * CHUNK;

impl<X> Drop for Chunk<X> {
    fn drop(&mut self) {
        if self.bytes.capacity() == 0 || self.bytes.capacity() > SPARE_BYTES {
            return;
        }
        let mut spare = SPARE.lock().unwrap_or_else(PoisonError::into_inner);
        if spare.len() < SPARE_COUNT {
            spare.push(std::mem::take(&mut self.bytes));
        }
    }
}

impl<X> Default for Chunk<X> {
    fn default() -> Chunk<X> {
        let bytes = SPARE
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .pop()
            .unwrap_or_default();
        Chunk {
            seq: 0,
            bytes,
            len: 0,
            at: 0,
            lines: 0,
            slots: Vec::new(),
            used: 0,
        }
    }
}

struct Slot<X> {
    line: WitnessLine,
    text: Range<usize>,
    skipped: bool,
    extra: X,
}

impl<X: Default> Chunk<X> {
    /// Splits and parses the chunk's next lines, from `at`, into its slots (reusing their
    /// strings): up to [`MAX_SLOTS`] of them.
    fn parse(
        &mut self,
        complete_only: bool,
        skip: &impl Fn(&[u8]) -> bool,
        prepare: &impl Fn(&mut WitnessLine, &[u8], &mut X),
    ) {
        let bytes = &self.bytes[..self.len];
        let mut at = self.at;
        let mut number = self.lines;
        self.used = 0;
        while at < bytes.len() && self.used < MAX_SLOTS {
            let (range, complete) = match memchr::memchr(b'\n', &bytes[at..]) {
                Some(i) => {
                    let range = at..at + i;
                    at += i + 1;
                    (range, true)
                }
                None => {
                    let range = at..bytes.len();
                    at = bytes.len();
                    (range, false)
                }
            };
            number += 1;
            let Some(text) = line_text(bytes, range, complete, complete_only) else {
                // A torn last line: the reading ends before it.
                number -= 1;
                at = bytes.len();
                break;
            };
            if self.used == self.slots.len() {
                self.slots.push(Slot {
                    line: WitnessLine::empty(),
                    text: 0..0,
                    skipped: false,
                    extra: X::default(),
                });
            }
            let slot = &mut self.slots[self.used];
            let line = &bytes[text.clone()];
            slot.text = text;
            if skip(line) {
                slot.skipped = true;
                self.used += 1;
            } else if parse_witness_line_into(number, line, &mut slot.line) {
                slot.skipped = false;
                prepare(&mut slot.line, line, &mut slot.extra);
                self.used += 1;
            }
        }
        self.at = at;
        self.lines = number;
    }

    /// Hands the chunk's lines to `each`, in order, numbered as lines of the file, `before`
    /// lines into it (the lines of the chunks before); what a worker left unparsed (past
    /// [`MAX_SLOTS`] lines) is parsed here, step by step. The lines up to the chunk's end, or
    /// `None` when `each` returned `false`.
    fn hand_over(
        &mut self,
        before: usize,
        parse: &impl Fn(&mut Chunk<X>),
        each: &mut impl FnMut(Streamed<'_, X>) -> bool,
    ) -> Option<usize> {
        loop {
            if before > 0 {
                for slot in &mut self.slots[..self.used] {
                    slot.line.renumber(before);
                }
            }
            if !self.each(each) {
                return None;
            }
            if self.at >= self.len {
                return Some(before + self.lines);
            }
            parse(self);
        }
    }

    /// The parsed lines into `each`, in order, until it returns `false` (then `false`).
    fn each(&self, each: &mut impl FnMut(Streamed<'_, X>) -> bool) -> bool {
        self.slots[..self.used].iter().all(|slot| {
            each(if slot.skipped {
                Streamed::Skipped
            } else {
                Streamed::Line(&slot.line, &self.bytes[slot.text.clone()], &slot.extra)
            })
        })
    }
}

/// Cuts the input into chunks of whole lines, numbering them.
struct Chunker<R> {
    reader: R,
    /// The start of a line the last chunk did not end.
    carry: Vec<u8>,
    bytes: u64,
    eof: bool,
    /// The next chunk's number.
    seq: u64,
    chunk: usize,
}

impl<R: Read> Chunker<R> {
    fn read(&self, stopped: bool) -> LinesRead {
        LinesRead {
            bytes: self.bytes,
            stopped,
        }
    }

    /// Fills `c` with the next chunk: `false` (and `c` empty) at the end of the input.
    fn fill<X>(&mut self, c: &mut Chunk<X>) -> std::io::Result<bool> {
        c.len = 0;
        c.used = 0;
        c.at = 0;
        c.lines = 0;
        if self.eof && self.carry.is_empty() {
            return Ok(false);
        }
        let mut want = self.chunk.max(self.carry.len() + 1);
        if c.bytes.len() < want {
            c.bytes.resize(want, 0);
        }
        c.bytes[..self.carry.len()].copy_from_slice(&self.carry);
        c.len = self.carry.len();
        self.carry.clear();
        loop {
            while !self.eof && c.len < want {
                match self.reader.read(&mut c.bytes[c.len..want]) {
                    Ok(0) => self.eof = true,
                    Ok(n) => {
                        c.len += n;
                        self.bytes += n as u64;
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                    Err(e) => return Err(e),
                }
            }
            if self.eof {
                break;
            }
            match memchr::memrchr(b'\n', &c.bytes[..c.len]) {
                Some(i) => {
                    self.carry.extend_from_slice(&c.bytes[i + 1..c.len]);
                    c.len = i + 1;
                    break;
                }
                // A line longer than the chunk: read on until it ends.
                None => {
                    want *= 2;
                    c.bytes.resize(want, 0);
                }
            }
        }
        if c.len == 0 {
            return Ok(false);
        }
        c.seq = self.seq;
        self.seq += 1;
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A witness file with every kind of line the sequential reader tells apart.
    fn awkward_file(rows: usize) -> Vec<u8> {
        let mut text = Vec::new();
        for i in 0..rows {
            match i % 11 {
                0 => text.extend_from_slice(b"\n"),
                1 => text.extend_from_slice(b"   \r\n"),
                2 if i % 4 == 0 => text.extend_from_slice(b"not json\n"),
                2 => text.extend_from_slice(
                    format!("{{\"witness_id\":\"w{i}\",\"seed\":\"x\"}}\n").as_bytes(),
                ),
                3 => text.extend_from_slice(b"{\"witness_id\":\"bad\xff\"}\n"),
                4 => text.extend_from_slice(
                    format!("{{\"witness_id\":\"w{i}\",\"seed\":{i},\"seed\":1}}\r\n").as_bytes(),
                ),
                _ => text.extend_from_slice(
                    format!(
                        "{{\"witness_id\":\"w{i}\",\"property_id\":\"p\",\"property_digest\":\"d\",\"fixture_pin\":\"f\",\"bound\":\"b\",\"seed\":{i},\"verdict\":\"{}\",\"signature\":\"\",\"runner\":\"local\",\"freeze_writer\":false}}\n",
                        if i % 3 == 0 { "fail" } else { "pass" }
                    )
                    .as_bytes(),
                ),
            }
        }
        text
    }

    /// A line read (`None`: skipped) and its text.
    type Seen = (Option<WitnessLine>, Vec<u8>);

    /// What the sequential reader gives (a skipped line as `None`).
    /// What a `prepare` may do to a line (as a trust file's check does): refuse a row,
    /// with a field error that names the line.
    fn refuse_some(line: &mut WitnessLine, text: &[u8]) {
        if line.row.is_ok() && text.len().is_multiple_of(3) {
            line.row = Err(crate::ParseError::Field(crate::FieldError {
                field: "sig".to_string(),
                line: Some(line.line),
                problem: crate::FieldProblem::Missing,
            }));
        }
    }

    fn sequential(
        bytes: &[u8],
        complete_only: bool,
        skip: &impl Fn(&[u8]) -> bool,
    ) -> (Vec<Seen>, u64) {
        let mut reader = WitnessLineReader::new(bytes);
        if complete_only {
            reader = reader.complete_lines_only();
        }
        let mut out = Vec::new();
        while let Some(it) = reader.next_unless(skip).unwrap() {
            match it {
                Some((line, text)) => {
                    let mut line = line.clone();
                    refuse_some(&mut line, text);
                    out.push((Some(line), text.to_vec()))
                }
                None => out.push((None, reader.text().to_vec())),
            }
        }
        (out, reader.bytes_read())
    }

    fn parallel(
        bytes: &[u8],
        lines: ParallelLines,
        skip: &(impl Fn(&[u8]) -> bool + Sync),
    ) -> (Vec<Seen>, u64) {
        let mut out = Vec::new();
        let read = lines
            .read(
                bytes,
                skip,
                |line, text, extra: &mut usize| {
                    refuse_some(line, text);
                    *extra = 2 * text.len() + usize::from(line.row.is_ok())
                },
                |it| {
                    match it {
                        Streamed::Skipped => out.push((None, Vec::new())),
                        Streamed::Line(line, text, extra) => {
                            assert_eq!(*extra, 2 * text.len() + usize::from(line.row.is_ok()));
                            out.push((Some(line.clone()), text.to_vec()));
                        }
                    }
                    true
                },
            )
            .unwrap();
        assert!(!read.stopped);
        (out, read.bytes)
    }

    /// Every chunk size (lines cut anywhere, lines longer than a chunk), every number of
    /// workers, with and without a torn last line and a `skip`: the same lines, numbers,
    /// texts and byte count as the sequential reader.
    #[test]
    fn gives_what_the_sequential_reader_gives() {
        let file = awkward_file(300);
        let skip_odd = |b: &[u8]| super::super::witness_line_seed(b).is_some_and(|s| s % 2 == 1);
        let skip_none = |_: &[u8]| false;
        for tail in [
            &b""[..],
            b"{\"witness_id\":\"torn",
            b"{\"witness_id\":\"w\"}",
            b"\r",
        ] {
            let mut bytes = file.clone();
            bytes.extend_from_slice(tail);
            for complete_only in [false, true] {
                for (named, skip) in [
                    ("none", &skip_none as &(dyn Fn(&[u8]) -> bool + Sync)),
                    ("odd", &skip_odd),
                ] {
                    let (want, want_bytes) = sequential(&bytes, complete_only, &skip);
                    let want: Vec<_> = want
                        .into_iter()
                        .map(|(l, t)| {
                            if l.is_some() {
                                (l, t)
                            } else {
                                (None, Vec::new())
                            }
                        })
                        .collect();
                    for chunk in [1, 7, 64, 333, 4096, 1 << 20] {
                        for workers in [0, 1, 3] {
                            let mut lines = ParallelLines::new().workers(workers).chunk(chunk);
                            if complete_only {
                                lines = lines.complete_lines_only();
                            }
                            let (got, got_bytes) = parallel(&bytes, lines, &skip);
                            let case = format!(
                                "tail {tail:?}, complete_only {complete_only}, skip {named}, chunk {chunk}, workers {workers}"
                            );
                            assert_eq!(got_bytes, want_bytes, "{case}");
                            assert_eq!(got.len(), want.len(), "{case}");
                            assert!(got == want, "{case}");
                        }
                    }
                }
            }
        }
    }

    /// A fold that stops early stops the reading (no deadlock with chunks in flight), at any
    /// line.
    #[test]
    fn a_fold_that_stops_stops_the_reading() {
        let bytes = awkward_file(2000);
        for workers in [0, 1, 2, 4] {
            for stop_at in [1, 2, 17, 500, 1500] {
                let mut seen = 0;
                let read = ParallelLines::new()
                    .workers(workers)
                    .chunk(100)
                    .read(
                        &bytes[..],
                        |_| false,
                        |_, _, _: &mut ()| {},
                        |_| {
                            seen += 1;
                            seen < stop_at
                        },
                    )
                    .unwrap();
                assert!(read.stopped);
                assert_eq!(seen, stop_at, "workers {workers}");
            }
        }
    }

    /// A file of short lines (more than `MAX_SLOTS` in a chunk) reads as the sequential
    /// reader reads it, and no chunk ever holds more than `MAX_SLOTS` parsed lines.
    #[test]
    fn a_chunk_of_many_short_lines_is_parsed_in_bounded_steps() {
        let mut bytes = Vec::new();
        for i in 0..3 * MAX_SLOTS + 17 {
            bytes.extend_from_slice(match i % 4 {
                0 => b"x\n".as_slice(),
                1 => b"{}\n",
                2 => b"\n",
                _ => b"{\"seed\":\"x\"}\n",
            });
        }
        let none = |_: &[u8]| false;
        let (want, want_bytes) = sequential(&bytes, false, &none);
        for workers in [0, 2] {
            let (got, got_bytes) = parallel(&bytes, ParallelLines::new().workers(workers), &none);
            assert_eq!(got_bytes, want_bytes);
            assert!(got == want, "workers {workers}");
        }
        let mut chunker = Chunker {
            reader: &bytes[..],
            carry: Vec::new(),
            bytes: 0,
            eof: false,
            seq: 0,
            chunk: CHUNK,
        };
        let mut chunk: Chunk<()> = Chunk::default();
        assert!(chunker.fill(&mut chunk).unwrap());
        let mut steps = 0;
        while chunk.at < chunk.len {
            chunk.parse(false, &none, &|_, _, _| {});
            assert!(chunk.used <= MAX_SLOTS);
            steps += 1;
        }
        assert!(steps >= 3, "{steps} steps");
    }

    /// A `prepare` that panics stops the reading and the panic reaches the caller, whatever
    /// the number of workers: no thread is left waiting for the chunk that never came.
    #[test]
    fn a_panicking_prepare_reaches_the_caller_and_nothing_hangs() {
        let bytes = awkward_file(3000);
        for workers in [0, 1, 2, 4] {
            let outcome = std::panic::catch_unwind(|| {
                ParallelLines::new().workers(workers).chunk(100).read(
                    &bytes[..],
                    |_| false,
                    |line, _, _: &mut ()| {
                        if line.witness_id.as_deref() == Some("w1500") {
                            panic!("prepare failed on purpose");
                        }
                    },
                    |_| true,
                )
            });
            let panic = outcome.expect_err("the panic reaches the caller");
            assert_eq!(
                panic.downcast_ref::<&str>(),
                Some(&"prepare failed on purpose"),
                "workers {workers}"
            );
        }
    }

    /// A read error ends the reading with that error, after the lines of the chunks before it.
    #[test]
    fn a_read_error_is_returned() {
        struct Failing<'a> {
            bytes: &'a [u8],
        }
        impl Read for Failing<'_> {
            fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
                if self.bytes.is_empty() {
                    return Err(std::io::Error::other("disk on fire"));
                }
                let n = buf.len().min(self.bytes.len()).min(50);
                buf[..n].copy_from_slice(&self.bytes[..n]);
                self.bytes = &self.bytes[n..];
                Ok(n)
            }
        }
        let bytes = awkward_file(400);
        for workers in [0, 2] {
            let mut seen = 0;
            let err = ParallelLines::new()
                .workers(workers)
                .chunk(300)
                .read(
                    Failing { bytes: &bytes },
                    |_| false,
                    |_, _, _: &mut ()| {},
                    |_| {
                        seen += 1;
                        true
                    },
                )
                .unwrap_err();
            assert_eq!(err.to_string(), "disk on fire");
            assert!(seen > 0, "workers {workers}");
        }
    }
}
