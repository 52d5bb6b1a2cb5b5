//! The daemon's log file, `.prp-session/prpd.log`: one JSON object per line, so a user can
//! `jq` it and a supervisor can ship it. A daemon runs for weeks, so the file is rotated:
//! past [`MAX_BYTES`] it becomes `prpd.log.1` (the older ones shift to `.2`, `.3`; the oldest
//! is dropped) and a new file starts. Rotation happens between writes, and the JSON formatter
//! writes each event in one call, so no line is ever split across files.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

/// How large the log grows before it is rotated.
pub const MAX_BYTES: u64 = 10 * 1024 * 1024;

/// How many rotated files are kept besides the current one.
pub const KEPT: u32 = 3;

/// An append-only log file that rotates itself.
#[derive(Debug)]
pub struct RotatingLog {
    path: PathBuf,
    file: File,
    written: u64,
    max_bytes: u64,
}

impl RotatingLog {
    /// Opens (or creates) the log at `path`, rotating past `max_bytes`.
    pub fn open(path: &Path, max_bytes: u64) -> std::io::Result<RotatingLog> {
        let file = OpenOptions::new().create(true).append(true).open(path)?;
        let written = file.metadata()?.len();
        Ok(RotatingLog {
            path: path.to_path_buf(),
            file,
            written,
            max_bytes,
        })
    }

    fn rotate(&mut self) -> std::io::Result<()> {
        for number in (1..KEPT).rev() {
            let from = numbered(&self.path, number);
            if from.exists() {
                std::fs::rename(&from, numbered(&self.path, number + 1))?;
            }
        }
        std::fs::rename(&self.path, numbered(&self.path, 1))?;
        self.file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.path)?;
        self.written = 0;
        Ok(())
    }
}

impl Write for RotatingLog {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if self.written > 0 && self.written + buf.len() as u64 > self.max_bytes {
            self.rotate()?;
        }
        let written = self.file.write(buf)?;
        self.written += written as u64;
        Ok(written)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.file.flush()
    }
}

/// `prpd.log.<number>`.
fn numbered(path: &Path, number: u32) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(format!(".{number}"));
    PathBuf::from(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_log_rotates_whole_lines_and_keeps_three_old_files() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("prpd.log");
        let mut log = RotatingLog::open(&path, 100).expect("open");
        for number in 0..40 {
            let line = format!("{{\"line\":\"{number:03}\",\"padding\":\"..........\"}}\n");
            log.write_all(line.as_bytes()).expect("write");
        }
        log.flush().expect("flush");
        let mut files = vec![path.clone()];
        files.extend((1..=KEPT).map(|number| numbered(&path, number)));
        for file in &files {
            let text = std::fs::read_to_string(file).expect("every file exists");
            assert!(
                text.len() <= 100,
                "{}: {} bytes",
                file.display(),
                text.len()
            );
            for line in text.lines() {
                serde_json::from_str::<serde_json::Value>(line).expect("a whole JSON line");
            }
        }
        assert!(!numbered(&path, KEPT + 1).exists(), "the oldest is dropped");
        let newest = std::fs::read_to_string(&path).expect("read");
        assert!(newest.contains("\"line\":\"039\""), "{newest}");
    }

    #[test]
    fn a_reopened_log_counts_what_it_already_holds() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("prpd.log");
        std::fs::write(&path, "x".repeat(90)).expect("write");
        let mut log = RotatingLog::open(&path, 100).expect("open");
        log.write_all(b"{\"a\":\"0123456789\"}\n").expect("write");
        assert_eq!(
            std::fs::read_to_string(numbered(&path, 1))
                .expect("rotated")
                .len(),
            90
        );
    }
}
