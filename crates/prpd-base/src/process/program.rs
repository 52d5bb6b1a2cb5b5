//! Finding the program of an argv before it starts, the way `execvp` will: a name with a slash
//! is a path (relative to the directory the child runs in), any other name is searched on
//! `PATH`. prpd asks before a run starts, so that an agent that is not installed is one clear
//! configuration error instead of an iteration that crashes.

use std::ffi::OsStr;
use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};

/// Why a program cannot be started.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Missing {
    /// No file of that name on `PATH`, or no file at that path.
    NotFound,
    /// The file exists but is a directory or has no execute permission.
    NotExecutable(PathBuf),
}

/// The file `program` names when started in `cwd` with `path` as `PATH`.
pub fn find_program(program: &str, cwd: &Path, path: Option<&OsStr>) -> Result<PathBuf, Missing> {
    if program.contains('/') {
        let file = cwd.join(program);
        return match executable(&file) {
            Some(true) => Ok(file),
            Some(false) => Err(Missing::NotExecutable(file)),
            None => Err(Missing::NotFound),
        };
    }
    let mut not_executable = None;
    for dir in path.map(std::env::split_paths).into_iter().flatten() {
        // An empty PATH entry means the current directory, as for the shell.
        let dir = if dir.as_os_str().is_empty() {
            cwd.to_path_buf()
        } else {
            dir
        };
        let file = dir.join(program);
        match executable(&file) {
            Some(true) => return Ok(file),
            Some(false) => {
                not_executable.get_or_insert(file);
            }
            None => {}
        }
    }
    Err(not_executable.map_or(Missing::NotFound, Missing::NotExecutable))
}

/// Whether `file` is a regular file with an execute bit (`None`: there is no such file).
fn executable(file: &Path) -> Option<bool> {
    let metadata = std::fs::metadata(file).ok()?;
    Some(metadata.is_file() && metadata.permissions().mode() & 0o111 != 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(path: &Path, mode: u32) {
        std::fs::write(path, "#!/bin/sh\n").expect("write");
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).expect("chmod");
    }

    #[test]
    fn names_are_searched_on_path_and_paths_taken_from_the_working_directory() {
        let dir = tempfile::tempdir().expect("tempdir");
        let bin = dir.path().join("bin");
        std::fs::create_dir_all(&bin).expect("mkdir");
        write(&bin.join("agent"), 0o755);
        write(&dir.path().join("local-agent"), 0o755);
        write(&bin.join("plain"), 0o644);
        let path = std::env::join_paths([Path::new("/no/such/dir"), &bin]).expect("PATH");
        assert_eq!(
            find_program("agent", dir.path(), Some(&path)),
            Ok(bin.join("agent"))
        );
        assert_eq!(
            find_program("./local-agent", dir.path(), Some(&path)),
            Ok(dir.path().join("./local-agent"))
        );
        assert_eq!(
            find_program("plain", dir.path(), Some(&path)),
            Err(Missing::NotExecutable(bin.join("plain")))
        );
        assert_eq!(
            find_program("claude-not-installed", dir.path(), Some(&path)),
            Err(Missing::NotFound)
        );
        assert_eq!(
            find_program("agent", dir.path(), None),
            Err(Missing::NotFound)
        );
        assert_eq!(
            find_program("bin", dir.path(), Some(dir.path().as_os_str())),
            Err(Missing::NotExecutable(dir.path().join("bin")))
        );
    }
}
