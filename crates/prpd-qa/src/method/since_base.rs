//! Documentation judged on what a change added. The README, CHANGELOG and decision-record
//! checks judge a change under review, not the repository: inside a run the change is
//! everything since the run's base snapshot, and `prpd qa --base REF` names a base by hand.
//! Against a base, the README and CHANGELOG checks read only the lines added since it: a README
//! that mentioned the feature before the agents started (or one stuffed with keywords that were
//! always there) proves nothing about the work being documented. With `--prp` but no base they
//! read whole files; with neither there is no change to judge, and they say so. The base also
//! gives the public names the change added to the code (`added_code.rs`), which the README
//! check counts as the feature's names.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use git2::{ObjectType, Repository, Tree};

use super::added_code::{CodeName, added_code_names};
use super::documents::{MAX_DOCUMENTS, is_document, may_hold_documents};

/// Blobs bigger than this are not read (as for files in the working tree).
const MAX_BLOB_BYTES: usize = 1024 * 1024;

/// The text of the documentation files at a change's base, by path relative to the repository.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BaseDocs {
    /// How the base is named in details: `the run started`, `main`.
    since: String,
    texts: BTreeMap<String, String>,
    /// The public names declared on the code lines added since the base.
    code_names: Vec<CodeName>,
    /// The commit the base is, when it was read from git: the mutation check diffs the
    /// working tree against it.
    revision: Option<String>,
}

/// The base a change is judged against could not be read.
#[derive(Debug, thiserror::Error)]
pub enum BaseDocsError {
    /// The repository is not a git repository, so it has no commits to name.
    #[error("--base {revision}: {} is not inside a git repository", repo.display())]
    NotARepository {
        revision: String,
        repo: PathBuf,
        #[source]
        source: git2::Error,
    },
    /// `--base` names nothing git knows in the repository.
    #[error("--base {revision}: not a commit of the git repository at {}", repo.display())]
    UnknownRevision {
        revision: String,
        repo: PathBuf,
        #[source]
        source: git2::Error,
    },
    /// git failed while reading the base.
    #[error("failed to read the documentation at {revision} in {}", repo.display())]
    Git {
        revision: String,
        repo: PathBuf,
        #[source]
        source: git2::Error,
    },
}

impl BaseDocs {
    /// The base's documentation texts (files missing at the base are simply absent); `since`
    /// names the base in details.
    pub fn new(since: impl Into<String>, texts: BTreeMap<String, String>) -> BaseDocs {
        BaseDocs {
            since: since.into(),
            texts,
            code_names: Vec::new(),
            revision: None,
        }
    }

    /// The same base, knowing that the change added the public names `names` (name, file) to
    /// the code.
    #[must_use]
    pub fn with_code_names<'name>(
        mut self,
        names: impl IntoIterator<Item = (&'name str, &'name str)>,
    ) -> BaseDocs {
        self.code_names = names
            .into_iter()
            .map(|(name, path)| CodeName {
                name: name.to_owned(),
                path: path.to_owned(),
            })
            .collect();
        self
    }

    /// The public names the change added to the code since the base.
    pub(super) fn code_names(&self) -> &[CodeName] {
        &self.code_names
    }

    /// The documentation of `repo` (a git working tree, or a folder of one) as commit
    /// `revision` holds it: the same files the checks read in the working tree.
    pub fn at_revision(
        repo: &Path,
        revision: &str,
        since: impl Into<String>,
    ) -> Result<BaseDocs, BaseDocsError> {
        let git = |source: git2::Error| BaseDocsError::Git {
            revision: revision.to_owned(),
            repo: repo.to_path_buf(),
            source,
        };
        let repository =
            Repository::discover(repo).map_err(|source| BaseDocsError::NotARepository {
                revision: revision.to_owned(),
                repo: repo.to_path_buf(),
                source,
            })?;
        let tree = repository
            .revparse_single(revision)
            .and_then(|object| object.peel_to_tree())
            .map_err(|source| BaseDocsError::UnknownRevision {
                revision: revision.to_owned(),
                repo: repo.to_path_buf(),
                source,
            })?;
        let mut texts = BTreeMap::new();
        let folder = folder_in_workdir(&repository, repo);
        if let Some(tree) = subtree_of(&repository, &tree, &folder).map_err(git)? {
            collect(&repository, &tree, Path::new(""), &mut texts).map_err(git)?;
        }
        let code_names = match repository.workdir() {
            Some(_) => added_code_names(&repository, &tree, &folder).map_err(git)?,
            None => Vec::new(),
        };
        Ok(BaseDocs {
            since: since.into(),
            texts,
            code_names,
            revision: Some(revision.to_owned()),
        })
    }

    /// `text` (the file `name` now) with every line that was already there at the base blanked
    /// out, so line numbers stay right and only added lines can match.
    pub fn added_lines(&self, name: &str, text: &str) -> String {
        let mut before: HashMap<&str, usize> = HashMap::new();
        for line in self.texts.get(name).map_or("", String::as_str).lines() {
            *before.entry(line).or_default() += 1;
        }
        let mut added = String::with_capacity(text.len());
        for line in text.lines() {
            match before.get_mut(line) {
                Some(count) if *count > 0 => *count -= 1,
                Some(_) | None => added.push_str(line),
            }
            added.push('\n');
        }
        added
    }

    /// The commit the base was read from (`None` for a base given as texts).
    pub(crate) fn revision(&self) -> Option<&str> {
        self.revision.as_deref()
    }

    /// How details name the base: `since the run started`, `since main`.
    pub(crate) fn since(&self) -> String {
        format!("since {}", self.since)
    }
}

/// Where the folder `repo` is inside the repository's working tree (empty for its root).
pub(crate) fn folder_in_workdir(repository: &Repository, repo: &Path) -> PathBuf {
    let workdir = repository.workdir().and_then(|dir| dir.canonicalize().ok());
    let folder = repo.canonicalize().ok();
    match (workdir, folder) {
        (Some(workdir), Some(folder)) => folder
            .strip_prefix(&workdir)
            .map(Path::to_path_buf)
            .unwrap_or_default(),
        _ => PathBuf::new(),
    }
}

/// The tree of the folder `prefix` (relative to the working tree) inside the repository's
/// commit tree; `None` when the commit does not have that folder.
fn subtree_of<'repo>(
    repository: &'repo Repository,
    tree: &Tree<'repo>,
    prefix: &Path,
) -> Result<Option<Tree<'repo>>, git2::Error> {
    if prefix.as_os_str().is_empty() {
        return Ok(Some(tree.clone()));
    }
    match tree.get_path(prefix) {
        Ok(entry) => Ok(entry.to_object(repository)?.into_tree().ok()),
        Err(error) if error.code() == git2::ErrorCode::NotFound => Ok(None),
        Err(error) => Err(error),
    }
}

fn collect(
    repository: &Repository,
    tree: &Tree<'_>,
    relative: &Path,
    texts: &mut BTreeMap<String, String>,
) -> Result<(), git2::Error> {
    for entry in tree {
        if texts.len() >= MAX_DOCUMENTS {
            break;
        }
        let Ok(name) = entry.name() else {
            continue;
        };
        let path = relative.join(name);
        match entry.kind() {
            Some(ObjectType::Tree) if may_hold_documents(&path) => {
                let subtree = entry.to_object(repository)?.peel_to_tree()?;
                collect(repository, &subtree, &path, texts)?;
            }
            Some(ObjectType::Blob) if is_document(&path) => {
                let blob = entry.to_object(repository)?.peel_to_blob()?;
                let content = blob.content();
                if content.len() <= MAX_BLOB_BYTES && !content.contains(&0) {
                    texts.insert(
                        path.display().to_string(),
                        String::from_utf8_lossy(content).into_owned(),
                    );
                }
            }
            _ => {}
        }
    }
    Ok(())
}

/// What a documentation check reads of the file `name`: against a base, only the lines added
/// since it, with a name that says so; without one, the whole file.
pub(super) fn judged_text(base: Option<&BaseDocs>, name: String, text: String) -> (String, String) {
    match base {
        Some(base) => (
            base.added_lines(&name, &text),
            format!("{name} (the lines added {})", base.since()),
        ),
        None => (text, name),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_added_lines_remain_in_place() {
        let base = BaseDocs::new(
            "the run started",
            BTreeMap::from([(
                "README.md".to_owned(),
                "# calc\n\n- `multiply(a, b)`: old\n".to_owned(),
            )]),
        );
        assert_eq!(
            base.added_lines(
                "README.md",
                "# calc\n\n- `multiply(a, b)`: old\n- `divide`\n"
            ),
            "\n\n\n- `divide`\n"
        );
        assert_eq!(base.added_lines("CHANGELOG.md", "- new\n"), "- new\n");
    }

    #[expect(
        clippy::disallowed_methods,
        reason = "the test builds a fixture repository with git directly, outside prpd"
    )]
    fn git(repo: &Path, args: &[&str]) {
        let status = std::process::Command::new("git")
            .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
            .args(args)
            .current_dir(repo)
            .output()
            .expect("run git");
        assert!(status.status.success(), "git {args:?}: {status:?}");
    }

    #[test]
    fn a_revision_gives_the_documentation_it_holds() {
        let repo = tempfile::tempdir().expect("temporary directory");
        let root = repo.path();
        git(root, &["init", "-q", "-b", "main"]);
        for (file, text) in [
            ("README.rst", "calc\n====\n"),
            ("CHANGES.rst", "1.0\n---\n\n- first\n"),
            ("src/README.md", "not documentation of the project\n"),
            ("docs/usage.rst", "Usage\n"),
            ("newsfragments/1.feature", "Adds add.\n"),
            ("calc.py", "def add(a, b):\n    return a + b\n"),
        ] {
            let path = root.join(file);
            std::fs::create_dir_all(path.parent().expect("a parent")).expect("test fixture");
            std::fs::write(path, text).expect("test fixture");
        }
        git(root, &["add", "-A"]);
        git(root, &["commit", "-q", "-m", "base"]);
        std::fs::write(root.join("README.rst"), "changed after the base\n").expect("test fixture");
        for (file, text) in [
            ("src/stats.js", "export function wordStats(text) {}\n"),
            ("tests/test_calc.py", "def test_multiply():\n    pass\n"),
            ("notes.txt", "def not_code():\n"),
        ] {
            let path = root.join(file);
            std::fs::create_dir_all(path.parent().expect("a parent")).expect("test fixture");
            std::fs::write(path, text).expect("test fixture");
        }
        std::fs::write(
            root.join("calc.py"),
            "def add(a, b):\n    return a + b\n\n\ndef multiply(a, b):\n    return a * b\n",
        )
        .expect("test fixture");
        let base = BaseDocs::at_revision(root, "main", "main").expect("a commit");
        let code: Vec<(&str, &str)> = base
            .code_names()
            .iter()
            .map(|name| (name.name.as_str(), name.path.as_str()))
            .collect();
        assert_eq!(
            code,
            [("multiply", "calc.py"), ("wordStats", "src/stats.js")]
        );
        let names: Vec<&str> = base.texts.keys().map(String::as_str).collect();
        assert_eq!(
            names,
            [
                "CHANGES.rst",
                "README.rst",
                "docs/usage.rst",
                "newsfragments/1.feature"
            ]
        );
        assert_eq!(base.texts["README.rst"], "calc\n====\n");
        assert_eq!(base.since(), "since main");

        let docs = BaseDocs::at_revision(&root.join("docs"), "HEAD", "HEAD").expect("a commit");
        assert!(docs.texts.is_empty(), "{docs:?}");

        let elsewhere = tempfile::tempdir().expect("temporary directory");
        let error = BaseDocs::at_revision(elsewhere.path(), "main", "main").expect_err("no git");
        assert!(
            error
                .to_string()
                .ends_with("is not inside a git repository"),
            "{error}"
        );
        let error = BaseDocs::at_revision(root, "no-such-branch", "x").expect_err("unknown");
        assert!(
            error
                .to_string()
                .starts_with("--base no-such-branch: not a commit of the git repository at"),
            "{error}"
        );
    }
}
