//! Writing prpd's own files: whole files atomically (a reader sees the old file or the new one,
//! never a mix), logs by appending. One place, so every artifact is written the same way.

use std::io::Write as _;
use std::path::Path;

/// Writes `contents` to `path` through a temporary file in the same directory, fsync and
/// rename; creates the directory when missing.
pub fn write_atomically(path: &Path, contents: &[u8]) -> std::io::Result<()> {
    let directory = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(directory)?;
    let mut file = tempfile::NamedTempFile::new_in(directory)?;
    file.write_all(contents)?;
    file.as_file().sync_all()?;
    file.persist(path).map_err(|persist| persist.error)?;
    Ok(())
}

/// Appends `text` to `path`, creating the file when missing.
pub fn append(path: &Path, text: &str) -> std::io::Result<()> {
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)?
        .write_all(text.as_bytes())
}

/// The last `count` lines of `text`.
pub fn last_lines(text: &str, count: usize) -> String {
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(count)..].join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn atomic_write_replaces_and_append_extends() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("nested/file.txt");
        write_atomically(&path, b"old").expect("first write");
        write_atomically(&path, b"new").expect("second write");
        append(&path, "\nmore").expect("append");
        assert_eq!(std::fs::read_to_string(&path).expect("read"), "new\nmore");
    }

    #[test]
    fn last_lines_keeps_the_end() {
        assert_eq!(last_lines("a\nb\nc", 2), "b\nc");
        assert_eq!(last_lines("a", 5), "a");
    }
}
