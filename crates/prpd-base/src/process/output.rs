//! Output capture: the log file and the thread that drains the child's merged stdout and stderr
//! into it and into a bounded tail. It stands apart from the spawn logic because its one job is
//! to keep memory and disk bounded whatever the child prints, and to never block the child.

use std::collections::VecDeque;
use std::fs::File;
use std::io::{PipeReader, PipeWriter, Read, Write};
use std::path::Path;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use tokio::sync::{mpsc, watch};

use super::ProcessError;

/// Longest line kept in the tail; the rest of a longer line is dropped and marked.
pub(super) const LINE_CAP: usize = 4 * 1024;
/// Marks a tail line cut at [`LINE_CAP`].
pub(super) const LINE_CUT_MARK: &str = "…";
/// One read from the pipe; a Linux pipe holds 64 KiB by default.
const READ_CHUNK: usize = 64 * 1024;

pub(super) fn create_log(path: &Path) -> Result<File, ProcessError> {
    if let Some(dir) = path.parent().filter(|dir| !dir.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|source| ProcessError::LogDir {
            path: dir.to_path_buf(),
            source,
        })?;
    }
    File::create(path).map_err(|source| ProcessError::LogFile {
        path: path.to_path_buf(),
        source,
    })
}

/// What the drain thread has read so far; `run` takes a snapshot when it ends.
pub(super) struct Capture {
    pub(super) tail: Tail,
    pub(super) output_bytes: u64,
    pub(super) log_truncated: bool,
}

impl Capture {
    fn new(tail_lines: usize) -> Capture {
        Capture {
            tail: Tail::new(tail_lines),
            output_bytes: 0,
            log_truncated: false,
        }
    }
}

/// The reading side of the output pipe, as seen from `run`.
pub(super) struct Output {
    pub(super) capture: Arc<Mutex<Capture>>,
    /// Becomes `true` when the drain thread has seen EOF.
    closed: watch::Receiver<bool>,
}

impl Output {
    /// Creates the pipe and starts the thread that drains it; returns the write end for the child.
    /// Every chunk read is also sent to `chunks`, when given.
    pub(super) fn start(
        log: File,
        max_log_bytes: u64,
        tail_lines: usize,
        chunks: Option<mpsc::UnboundedSender<Vec<u8>>>,
    ) -> std::io::Result<(Output, PipeWriter)> {
        let (pipe_reader, pipe_writer) = std::io::pipe()?;
        let capture = Arc::new(Mutex::new(Capture::new(tail_lines)));
        let (closed_sender, closed) = watch::channel(false);
        let drain = Drain {
            pipe: pipe_reader,
            log: Some(log),
            max_log_bytes,
            capture: Arc::clone(&capture),
            closed: closed_sender,
            chunks,
        };
        std::thread::Builder::new()
            .name("prpd-output".to_owned())
            .spawn(move || drain.run())?;
        Ok((Output { capture, closed }, pipe_writer))
    }

    /// Resolves once the drain thread has seen EOF (or died, which closes the pipe as well).
    pub(super) async fn closed(&self) {
        let _ = self.closed.clone().wait_for(|closed| *closed).await;
    }
}

/// A panicking drain thread leaves consistent counters behind, so a poisoned lock is still usable.
pub(super) fn lock(capture: &Mutex<Capture>) -> MutexGuard<'_, Capture> {
    capture.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The body of the thread that drains the output pipe. It is a plain thread, not
/// `spawn_blocking`, because a process that escaped its group can hold the pipe open forever
/// and the runtime waits for blocking tasks when it shuts down.
struct Drain {
    pipe: PipeReader,
    /// `None` after a write error: the rest of the output is counted but not logged.
    log: Option<File>,
    max_log_bytes: u64,
    capture: Arc<Mutex<Capture>>,
    closed: watch::Sender<bool>,
    /// The watcher of the output (`process::OutputWatch`), if any.
    chunks: Option<mpsc::UnboundedSender<Vec<u8>>>,
}

impl Drain {
    fn run(mut self) {
        let mut buffer = vec![0_u8; READ_CHUNK];
        let mut logged: u64 = 0;
        loop {
            let count = match self.pipe.read(&mut buffer) {
                Ok(0) => break,
                Ok(count) => count,
                Err(error) if error.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(error) => {
                    tracing::warn!(%error, "failed to read process output");
                    break;
                }
            };
            let chunk = &buffer[..count];
            if let Some(chunks) = &self.chunks
                && chunks.send(chunk.to_vec()).is_err()
            {
                // The watcher is gone; the output is still drained and logged.
                self.chunks = None;
            }
            let mut capture = lock(&self.capture);
            capture.output_bytes += count as u64;
            capture.tail.push(chunk);
            let room =
                usize::try_from(self.max_log_bytes.saturating_sub(logged)).unwrap_or(usize::MAX);
            let kept = &chunk[..count.min(room)];
            if kept.len() < count {
                capture.log_truncated = true;
            }
            if let Some(log) = &mut self.log
                && !kept.is_empty()
            {
                if let Err(error) = log.write_all(kept) {
                    tracing::warn!(%error, "failed to write process log; the rest is not logged");
                    self.log = None;
                    capture.log_truncated = true;
                }
                logged += kept.len() as u64;
            }
        }
        let capture = lock(&self.capture);
        if let Some(log) = &mut self.log
            && capture.log_truncated
        {
            let note = format!(
                "\n[prpd: log truncated: kept {logged} of {} bytes]\n",
                capture.output_bytes
            );
            if let Err(error) = log.write_all(note.as_bytes()) {
                tracing::warn!(%error, "failed to write process log");
            }
        }
        drop(capture);
        self.closed.send_replace(true);
    }
}

/// The last lines of a byte stream, with bounded memory: at most `capacity` lines of at most
/// [`LINE_CAP`] bytes each, plus the unfinished line.
pub(super) struct Tail {
    capacity: usize,
    lines: VecDeque<Vec<u8>>,
    /// The line still being written, cut at [`LINE_CAP`].
    partial: Vec<u8>,
    partial_cut: bool,
}

impl Tail {
    fn new(capacity: usize) -> Tail {
        Tail {
            capacity,
            lines: VecDeque::with_capacity(capacity),
            partial: Vec::new(),
            partial_cut: false,
        }
    }

    fn push(&mut self, chunk: &[u8]) {
        if self.capacity == 0 {
            return;
        }
        // A chunk that ends with more than `capacity` complete lines replaces everything before
        // them, so skip to them instead of copying lines that would be dropped at once.
        let start = match nth_newline_from_end(chunk, self.capacity + 1) {
            Some(position) => {
                self.lines.clear();
                self.partial.clear();
                self.partial_cut = false;
                position + 1
            }
            None => 0,
        };
        let mut segments = chunk[start..].split(|byte| *byte == b'\n').peekable();
        while let Some(segment) = segments.next() {
            let room = LINE_CAP - self.partial.len();
            self.partial
                .extend_from_slice(&segment[..segment.len().min(room)]);
            self.partial_cut |= segment.len() > room;
            if segments.peek().is_some() {
                self.finish_line();
            }
        }
    }

    fn finish_line(&mut self) {
        let mut line = std::mem::take(&mut self.partial);
        if std::mem::take(&mut self.partial_cut) {
            line.extend_from_slice(LINE_CUT_MARK.as_bytes());
        }
        if self.lines.len() == self.capacity {
            self.lines.pop_front();
        }
        self.lines.push_back(line);
    }

    /// The last `capacity` lines, the unfinished one counting as a line.
    pub(super) fn render(&self) -> String {
        let unfinished = !self.partial.is_empty();
        let skip = usize::from(unfinished && self.lines.len() == self.capacity);
        let mut rendered: Vec<String> = self
            .lines
            .iter()
            .skip(skip)
            .map(|line| String::from_utf8_lossy(line).into_owned())
            .collect();
        if unfinished {
            let mut last = String::from_utf8_lossy(&self.partial).into_owned();
            if self.partial_cut {
                last.push_str(LINE_CUT_MARK);
            }
            rendered.push(last);
        }
        rendered.join("\n")
    }
}

/// The position of the `n`th `\n` counted from the end of `bytes`, if it has that many.
fn nth_newline_from_end(bytes: &[u8], n: usize) -> Option<usize> {
    let mut end = bytes.len();
    let mut position = None;
    for _ in 0..n {
        let found = bytes[..end].iter().rposition(|byte| *byte == b'\n')?;
        position = Some(found);
        end = found;
    }
    position
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tail_is_the_same_however_the_stream_is_chunked() {
        let texts = [
            "",
            "a",
            "a\n",
            "\n\n\n",
            "one\ntwo\nthree\nfour\nfive\n",
            "one\ntwo\nthree\nfour\nfive",
            "x\ny\n\nz\n\n",
        ];
        for text in texts {
            for capacity in 1..=4 {
                let mut lines: Vec<&str> = text.split('\n').collect();
                if lines.last() == Some(&"") {
                    lines.pop();
                }
                let expected = lines[lines.len().saturating_sub(capacity)..].join("\n");
                for first in 0..=text.len() {
                    for second in first..=text.len() {
                        let mut tail = Tail::new(capacity);
                        tail.push(&text.as_bytes()[..first]);
                        tail.push(&text.as_bytes()[first..second]);
                        tail.push(&text.as_bytes()[second..]);
                        assert_eq!(
                            tail.render(),
                            expected,
                            "{text:?} capacity {capacity} split at {first}, {second}"
                        );
                    }
                }
            }
        }
    }
}
