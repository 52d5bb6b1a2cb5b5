//! Which paths of a repository git ignores, asked one path at a time. The file watcher needs
//! it because a watched directory also reports the files git ignores in it (a `debug.log`
//! beside a `*.log` line), and because a directory that appears must be judged before it is
//! watched.
//!
//! The rules are git's: the `.gitignore` of every directory from the path's own up to the
//! repository root (the deepest one that says anything wins; a `!` line re-includes), then
//! `.git/info/exclude`, then the user's global excludes file (`core.excludesFile`). A path
//! under an ignored directory is ignored whatever its own lines say, as in git. `.git/` and
//! `.prp-session/` are always ignored, with or without an exclude line: git's own files and
//! prpd's are never the project's changes.
//!
//! A `.gitignore` inside an ignored directory is never read, like git: nothing under it counts.

use std::collections::HashMap;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use ignore::Match;
use ignore::gitignore::{Gitignore, GitignoreBuilder};

use prpd_base::paths::SESSION_DIR;

/// The name of the per-directory ignore file.
pub(super) const GITIGNORE: &str = ".gitignore";

/// What a path is, as far as its rules care: git has patterns that only match directories
/// (`target/`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    File,
    Directory,
    /// A path that is gone, and nothing said what it was: it is ignored when it would be
    /// ignored as a file or as a directory (a removed `target` under a `target/` line).
    Unknown,
}

/// The ignore rules of one repository, as they are on disk when loaded.
#[derive(Debug)]
pub(super) struct IgnoreRules {
    root: PathBuf,
    gitignore_by_dir: HashMap<PathBuf, Gitignore>,
    exclude: Gitignore,
    global: Gitignore,
}

impl IgnoreRules {
    /// The rules of the repository at `root` (absolute): `.git/info/exclude`, the global
    /// excludes file, and the `.gitignore` of each directory of `kept_dirs` that has one.
    pub(super) fn load<'a>(root: &Path, kept_dirs: impl IntoIterator<Item = &'a PathBuf>) -> Self {
        let mut rules = IgnoreRules {
            root: root.to_path_buf(),
            gitignore_by_dir: HashMap::new(),
            exclude: exclude_file(root),
            global: global_excludes(root),
        };
        for dir in kept_dirs {
            rules.add_gitignore_of(dir);
        }
        rules
    }

    /// Reads `dir/.gitignore`, when there is one, into the rules.
    pub(super) fn add_gitignore_of(&mut self, dir: &Path) {
        let file = dir.join(GITIGNORE);
        if !file.is_file() {
            return;
        }
        let (gitignore, error) = Gitignore::new(&file);
        if let Some(error) = error {
            tracing::warn!(
                file = %file.display(),
                %error,
                "some lines of an ignore file are not usable; the watcher skips them",
            );
        }
        self.gitignore_by_dir.insert(dir.to_path_buf(), gitignore);
    }

    /// Whether git ignores `path` (absolute, under the root): the path itself or any
    /// directory above it up to the root. Paths outside the root are ignored: they are not the
    /// repository's.
    pub(super) fn is_ignored(&self, path: &Path, kind: Kind) -> bool {
        let Ok(relative) = path.strip_prefix(&self.root) else {
            return true;
        };
        if is_git_or_session(relative) {
            return true;
        }
        let mut ancestor = self.root.clone();
        let mut components = relative.components().peekable();
        while let Some(component) = components.next() {
            ancestor.push(component);
            let is_last = components.peek().is_none();
            let ignored = if is_last {
                match kind {
                    Kind::File => self.matches(&ancestor, false),
                    Kind::Directory => self.matches(&ancestor, true),
                    Kind::Unknown => {
                        self.matches(&ancestor, false) || self.matches(&ancestor, true)
                    }
                }
            } else {
                self.matches(&ancestor, true)
            };
            if ignored {
                return true;
            }
        }
        false
    }

    /// Whether the rules ignore `path` itself (its parents are not asked): the deepest
    /// `.gitignore` with a matching line decides, then the exclude file, then the global one.
    fn matches(&self, path: &Path, is_dir: bool) -> bool {
        let mut dir = path.parent();
        while let Some(current) = dir {
            if let Some(gitignore) = self.gitignore_by_dir.get(current) {
                match gitignore.matched(path, is_dir) {
                    Match::Ignore(_) => return true,
                    Match::Whitelist(_) => return false,
                    Match::None => {}
                }
            }
            if current == self.root {
                break;
            }
            dir = current.parent();
        }
        for rules in [&self.exclude, &self.global] {
            match rules.matched(path, is_dir) {
                Match::Ignore(_) => return true,
                Match::Whitelist(_) => return false,
                Match::None => {}
            }
        }
        false
    }
}

/// Whether a path (relative to the root) is inside `.git/` or `.prp-session/`, or is one of
/// them: never the project's files, whatever the ignore files say.
pub(super) fn is_git_or_session(relative: &Path) -> bool {
    relative
        .components()
        .any(|component| is_git_or_session_name(component.as_os_str()))
}

/// Whether a file name is `.git` or `.prp-session`.
pub(super) fn is_git_or_session_name(name: &OsStr) -> bool {
    name == ".git" || name == SESSION_DIR
}

/// `info/exclude` of the repository's git directory (the common one for a worktree, where git
/// reads it), as rules rooted at the repository root; empty outside a git repository.
fn exclude_file(root: &Path) -> Gitignore {
    let Ok(repository) = git2::Repository::open(root) else {
        return Gitignore::empty();
    };
    let file = repository.commondir().join("info").join("exclude");
    if !file.is_file() {
        return Gitignore::empty();
    }
    let mut builder = GitignoreBuilder::new(root);
    if let Some(error) = builder.add(&file) {
        tracing::warn!(
            file = %file.display(),
            %error,
            "some lines of an ignore file are not usable; the watcher skips them",
        );
    }
    builder.build().unwrap_or_else(|error| {
        tracing::warn!(
            file = %file.display(),
            %error,
            "the exclude file is not usable; the watcher ignores it",
        );
        Gitignore::empty()
    })
}

/// The user's global excludes file (`core.excludesFile`, or `~/.config/git/ignore`), rooted
/// at the repository root as git reads it.
fn global_excludes(root: &Path) -> Gitignore {
    let (global, error) = GitignoreBuilder::new(root).build_global();
    if let Some(error) = error {
        tracing::warn!(
            %error,
            "the global git excludes file is partly unusable; the watcher skips those lines",
        );
    }
    global
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(root: &Path, file: &str, text: &str) {
        let path = root.join(file);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    /// A repository with rules at three depths and an exclude file: the answers below are
    /// what `git check-ignore` says for the same tree.
    fn fixture() -> (tempfile::TempDir, IgnoreRules) {
        let repo = tempfile::tempdir().unwrap();
        let root = repo.path().canonicalize().unwrap();
        git2::Repository::init(&root).unwrap();
        write(&root, ".gitignore", "*.log\n!keep.log\ntarget/\n/build\n");
        write(&root, "src/.gitignore", "generated.rs\n!important.log\n");
        write(&root, "src/deep/.gitignore", "!generated.rs\n");
        write(&root, "vendor/.gitignore", "*\n!*/\n!*.rs\n");
        write(&root, ".git/info/exclude", "/local-notes.md\n");
        let dirs = [
            root.clone(),
            root.join("src"),
            root.join("src/deep"),
            root.join("vendor"),
        ];
        let rules = IgnoreRules::load(&root, &dirs);
        (repo, rules)
    }

    #[test]
    fn the_deepest_rule_decides_and_a_whitelist_reincludes() {
        let (repo, rules) = fixture();
        let root = repo.path().canonicalize().unwrap();
        let cases = [
            ("debug.log", Kind::File, true),
            ("keep.log", Kind::File, false),
            ("src/debug.log", Kind::File, true),
            ("src/important.log", Kind::File, false),
            ("src/generated.rs", Kind::File, true),
            ("src/deep/generated.rs", Kind::File, false),
            ("src/lib.rs", Kind::File, false),
            ("target", Kind::Directory, true),
            ("target", Kind::File, false),
            ("target", Kind::Unknown, true),
            ("src/target/out.o", Kind::File, true),
            ("build/x.rs", Kind::File, true),
            ("src/build/x.rs", Kind::File, false),
            ("local-notes.md", Kind::File, true),
            ("src/local-notes.md", Kind::File, false),
            ("vendor/a.c", Kind::File, true),
            ("vendor/a.rs", Kind::File, false),
            ("vendor/sub/b.rs", Kind::File, false),
            (".github/workflows/ci.yml", Kind::File, false),
        ];
        for (path, kind, ignored) in cases {
            assert_eq!(
                rules.is_ignored(&root.join(path), kind),
                ignored,
                "{path} as {kind:?}"
            );
        }
    }

    #[test]
    fn git_and_session_directories_are_ignored_without_any_rule() {
        let (repo, rules) = fixture();
        let root = repo.path().canonicalize().unwrap();
        for path in [
            ".git",
            ".git/index",
            ".prp-session",
            ".prp-session/runs/x/log",
            "sub/.git/HEAD",
        ] {
            assert!(rules.is_ignored(&root.join(path), Kind::Unknown), "{path}");
        }
        assert!(rules.is_ignored(Path::new("/elsewhere/file"), Kind::File));
    }

    #[test]
    fn a_file_under_an_ignored_directory_stays_ignored_even_when_whitelisted() {
        let repo = tempfile::tempdir().unwrap();
        let root = repo.path().canonicalize().unwrap();
        write(&root, ".gitignore", "out/\n!out/keep.txt\n");
        let rules = IgnoreRules::load(&root, std::slice::from_ref(&root));
        assert!(rules.is_ignored(&root.join("out/keep.txt"), Kind::File));
    }
}
