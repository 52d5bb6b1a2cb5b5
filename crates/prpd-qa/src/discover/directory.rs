//! A directory of the repository as discovery reads it, and the small text helpers every
//! command source shares: joining continuation lines, and running a command from a
//! sub-folder (`cd web && npm test`).

use std::path::{Path, PathBuf};

use super::DetectError;

/// A directory of the repository that discovery reads.
#[derive(Debug)]
pub(super) struct Directory<'repo> {
    repo: &'repo Path,
    relative: &'repo Path,
}

impl<'repo> Directory<'repo> {
    pub(super) fn new(repo: &'repo Path, relative: &'repo Path) -> Directory<'repo> {
        Directory { repo, relative }
    }

    /// The repository's root.
    pub(super) fn repo(&self) -> &'repo Path {
        self.repo
    }

    /// The directory, relative to the repository root (`.` for the root).
    pub(super) fn relative(&self) -> &'repo Path {
        self.relative
    }

    pub(super) fn is_root(&self) -> bool {
        self.relative == Path::new(".")
    }

    /// The directory's absolute path.
    pub(super) fn absolute(&self) -> PathBuf {
        if self.is_root() {
            self.repo.to_path_buf()
        } else {
            self.repo.join(self.relative)
        }
    }

    /// How many levels below the root the directory is.
    pub(super) fn depth(&self) -> usize {
        if self.is_root() {
            0
        } else {
            self.relative.components().count()
        }
    }

    /// The absolute path of `name` in this directory.
    pub(super) fn path(&self, name: &str) -> PathBuf {
        self.absolute().join(name)
    }

    /// How sources name `name` of this directory: `package.json`, `web/package.json`.
    pub(super) fn display(&self, name: &str) -> String {
        if self.is_root() {
            name.to_owned()
        } else {
            format!("{}/{name}", self.relative.display())
        }
    }

    /// The text of `name`, `None` when it does not exist; invalid UTF-8 is replaced, since
    /// the files read this way are searched for commands, not parsed strictly.
    pub(super) fn read(&self, name: &str) -> Result<Option<String>, DetectError> {
        let path = self.path(name);
        match std::fs::read(&path) {
            Ok(bytes) => Ok(Some(String::from_utf8_lossy(&bytes).into_owned())),
            Err(error) if is_absent(&error) => Ok(None),
            Err(source) => Err(DetectError::Read { path, source }),
        }
    }
}

/// Whether a read failed because the file is not there (or a parent is not a directory).
fn is_absent(error: &std::io::Error) -> bool {
    matches!(
        error.kind(),
        std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory
    )
}

/// `command` run from `directory`: `cd web && npm test`; the root needs no prefix.
pub(crate) fn in_directory(directory: &Path, command: &str) -> String {
    if directory == Path::new(".") || directory.as_os_str().is_empty() {
        command.to_owned()
    } else {
        format!(
            "cd {} && {command}",
            shell_quote(&directory.display().to_string())
        )
    }
}

/// The folder and the command of a line [`in_directory`] wrote (`cd web && npm test` →
/// `web`, `npm test`); `.` and the whole line for anything else, including a `cd` to a
/// folder that is not a plain path below the root.
pub(super) fn split_directory(line: &str) -> (PathBuf, &str) {
    let whole = (PathBuf::from("."), line);
    let Some((folder, command)) = line
        .strip_prefix("cd ")
        .and_then(|rest| rest.split_once(" && "))
    else {
        return whole;
    };
    let folder = folder
        .strip_prefix('\'')
        .and_then(|quoted| quoted.strip_suffix('\''))
        .map_or_else(|| folder.to_owned(), |quoted| quoted.replace(r"'\''", "'"));
    let plain = !folder.is_empty()
        && Path::new(&folder)
            .components()
            .all(|component| matches!(component, std::path::Component::Normal(_)));
    if plain {
        (PathBuf::from(folder), command)
    } else {
        whole
    }
}

/// `word` quoted for `sh` when it holds anything but plain path characters.
fn shell_quote(word: &str) -> String {
    let plain = word
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '/' | '+' | '@'));
    if plain && !word.is_empty() {
        word.to_owned()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

/// The lines of a script or a Makefile with backslash continuations joined by one space.
pub(super) fn logical_lines(text: &str) -> Vec<String> {
    let mut lines = Vec::new();
    let mut pending = String::new();
    for line in text.lines() {
        let line = if pending.is_empty() {
            line
        } else {
            line.trim_start()
        };
        if let Some(head) = line.strip_suffix('\\') {
            pending.push_str(head.trim_end());
            pending.push(' ');
        } else {
            pending.push_str(line);
            lines.push(std::mem::take(&mut pending));
        }
    }
    if !pending.is_empty() {
        lines.push(pending.trim_end().to_owned());
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn in_directory_prefixes_cd_and_quotes_odd_paths() {
        let cases = [
            (".", "npm test", "npm test"),
            ("web", "npm test", "cd web && npm test"),
            ("apps/api", "pytest", "cd apps/api && pytest"),
            ("my app", "pytest", "cd 'my app' && pytest"),
        ];
        for (directory, command, expected) in cases {
            assert_eq!(in_directory(Path::new(directory), command), expected);
        }
    }

    #[test]
    fn logical_lines_join_backslash_continuations() {
        assert_eq!(
            logical_lines("\ta \\\n  b\nc \\\n"),
            ["\ta b".to_owned(), "c".to_owned()]
        );
    }
}
