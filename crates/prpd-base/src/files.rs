//! Writing prpd's own files: whole files atomically (a reader sees the old file or the new one,
//! never a mix), logs by appending, and the content hash that recognises a file prpd wrote. One
//! place, so every artifact is written the same way. State is also flushed to the disk before it
//! replaces the old file ([`write_atomically`]); a report made again from that state is not
//! ([`replace`]), since waiting for the disk is most of what writing it costs.

use std::io::Write as _;
use std::path::Path;

/// Writes `contents` to `path` through a temporary file in the same directory, fsync and
/// rename; creates the directory when missing.
pub fn write_atomically(path: &Path, contents: &[u8]) -> std::io::Result<()> {
    write_through_temporary(path, contents, true)
}

/// Writes `contents` to `path` through a temporary file in the same directory and a rename,
/// without waiting for the disk: for a report prpd makes again from its state, which a power
/// loss may leave at its previous version (a reader still never sees half of it).
pub fn replace(path: &Path, contents: &[u8]) -> std::io::Result<()> {
    write_through_temporary(path, contents, false)
}

fn write_through_temporary(path: &Path, contents: &[u8], flush: bool) -> std::io::Result<()> {
    let directory = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(directory)?;
    let mut file = tempfile::NamedTempFile::new_in(directory)?;
    file.write_all(contents)?;
    if flush {
        file.as_file().sync_all()?;
    }
    file.persist(path).map_err(|persist| persist.error)?;
    Ok(())
}

/// The git blob id of `bytes`: a content hash that needs no repository, for what prpd keeps in
/// its sealed record to recognise a file it wrote (a log an agent may have rewritten).
pub fn content_hash(bytes: &[u8]) -> String {
    // Hashing a buffer in memory touches no repository and cannot fail; the zero id (which no
    // content has) stands in should libgit2 ever refuse, and then simply matches nothing.
    git2::Oid::hash_object(git2::ObjectType::Blob, bytes)
        .unwrap_or(git2::Oid::ZERO_SHA1)
        .to_string()
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
    fn content_hashes_are_git_blob_ids() {
        assert_eq!(
            content_hash(b""),
            "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391"
        );
        assert_ne!(content_hash(b"a"), content_hash(b"b"));
    }

    #[test]
    fn atomic_write_replaces_and_append_extends() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("nested/file.txt");
        write_atomically(&path, b"old").expect("first write");
        write_atomically(&path, b"new").expect("second write");
        append(&path, "\nmore").expect("append");
        assert_eq!(std::fs::read_to_string(&path).expect("read"), "new\nmore");
        replace(&path, b"report").expect("replace");
        assert_eq!(std::fs::read_to_string(&path).expect("read"), "report");
        let left: Vec<_> = std::fs::read_dir(path.parent().expect("parent"))
            .expect("list")
            .collect();
        assert_eq!(left.len(), 1, "no temporary file is left: {left:?}");
    }

    #[test]
    fn last_lines_keeps_the_end() {
        assert_eq!(last_lines("a\nb\nc", 2), "b\nc");
        assert_eq!(last_lines("a", 5), "a");
    }
}
