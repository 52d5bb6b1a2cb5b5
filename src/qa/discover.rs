//! Command discovery: which command a repository uses to test, lint, type-check, build,
//! check formatting, and measure complexity and duplication, and where prpd found each one
//! (DESIGN §6.3; the seed's "Quality Command Discovery").
//!
//! Theory of operation. A project's own commands beat generic defaults, so prpd reads, in this
//! order, and keeps the first safe command of each kind:
//!
//! 1. `package.json` scripts, run through the project's package manager ([`PackageManager`]);
//! 2. Makefile targets, then justfile recipes;
//! 3. CI configuration (GitHub workflow `run:` steps, then `.gitlab-ci.yml` job scripts), only
//!    at the repository root, where CI lives;
//! 4. Python configuration: `pyproject.toml` tool tables, tox environments, then the
//!    `setup.cfg`/`pytest.ini`/`tox.ini` tool sections;
//! 5. the tools mapping's defaults for the stack.
//!
//! Directories are read in this order: the repository root (sources 1–4), then each detected
//! stack in [`detect_stacks`] order, primary first: the sources of its directory when it is a
//! sub-folder, then its mapping defaults if it sits in the primary stack's directory. So the
//! commands are the primary stack's, and a kind the primary stack has no command for falls
//! back to what the other stacks' directories name (their scripts, targets, recipes), but
//! not to their defaults: a Rust project with a Node example in `examples/` must not be
//! measured with eslint. A command found in a sub-folder runs from there: it is prefixed with
//! `cd <path> && `.
//!
//! Every candidate goes through [`is_safe`] (the one rule for what QA may run): a command that
//! would rewrite the tree, publish, push, run docker or watch is skipped, the skip is kept in
//! [`Detection::skipped`], and discovery carries on with the next candidate of that kind.
//! A `package.json` or `pyproject.toml` that cannot be parsed is an error naming file and line,
//! because the commands prpd would otherwise pick could be wrong; a CI file prpd cannot parse
//! is only skipped with a warning, since CI syntax goes beyond what prpd needs from it.

mod ci;
mod just;
mod make;
mod package_json;
mod python;

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

pub use package_json::PackageManager;

use crate::base::config_file::ConfigError;
use crate::qa::command::CommandKind;
use crate::qa::safety::{Unsafe, is_safe};
use crate::qa::stack::{Stack, detect_stacks};
use crate::qa::tools_mapping::{FILE_NAME as MAPPING_FILE_NAME, ToolsMapping};

/// A discovered command and where it came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Discovered {
    /// A shell command line, run from the repository root.
    pub command: String,
    /// Where prpd found it, such as `package.json scripts.test`.
    pub source: String,
}

/// A candidate that [`is_safe`] refused; shown in the human output so users see why their
/// script was not used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skipped {
    /// The kind the command would have been.
    pub kind: CommandKind,
    /// The command as it would have run.
    pub command: String,
    /// Where it was found.
    pub source: String,
    /// Why it was refused.
    pub reason: Unsafe,
}

/// Everything `prpd detect` reports about a repository.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Detection {
    /// The stacks found, primary first.
    pub stacks: Vec<Stack>,
    /// The JavaScript package manager of the first directory with a `package.json`.
    pub package_manager: Option<PackageManager>,
    /// The command of every kind, `None` when none was found.
    pub commands: BTreeMap<CommandKind, Option<Discovered>>,
    /// Candidates refused as unsafe, in discovery order; not part of the JSON output.
    #[serde(skip)]
    pub skipped: Vec<Skipped>,
}

/// A project file that discovery depends on could not be read or parsed.
#[derive(Debug, thiserror::Error)]
pub enum DetectError {
    /// The file exists but could not be read.
    #[error("failed to read {}", path.display())]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// The file is malformed; the error names file, line and column.
    #[error(transparent)]
    Malformed(ConfigError),
}

/// One command a source offers for one kind.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Candidate {
    kind: CommandKind,
    /// What would run, relative to the directory of the source.
    command: String,
    /// The text [`is_safe`] judges: the script or recipe behind `command`.
    judged: String,
    source: String,
}

impl Candidate {
    fn new(kind: CommandKind, command: String, judged: String, source: String) -> Candidate {
        Candidate {
            kind,
            command,
            judged,
            source,
        }
    }

    /// A candidate whose command is its own text (CI lines, tool defaults).
    fn plain(kind: CommandKind, command: &str, source: String) -> Candidate {
        Candidate::new(kind, command.to_owned(), command.to_owned(), source)
    }
}

/// The commands found so far: the first safe candidate of each kind wins.
#[derive(Debug, Default)]
struct Found {
    commands: BTreeMap<CommandKind, Discovered>,
    skipped: Vec<Skipped>,
}

impl Found {
    fn offer_all(&mut self, directory: &Path, candidates: Vec<Candidate>) {
        for candidate in candidates {
            self.offer(directory, candidate);
        }
    }

    fn offer(&mut self, directory: &Path, candidate: Candidate) {
        if self.commands.contains_key(&candidate.kind) {
            return;
        }
        let command = in_directory(directory, &candidate.command);
        match is_safe(&candidate.judged) {
            Ok(()) => {
                self.commands.insert(
                    candidate.kind,
                    Discovered {
                        command,
                        source: candidate.source,
                    },
                );
            }
            Err(reason) => {
                tracing::info!(
                    kind = candidate.kind.name(),
                    %command,
                    source = %candidate.source,
                    %reason,
                    "skipping an unsafe command"
                );
                self.skipped.push(Skipped {
                    kind: candidate.kind,
                    command,
                    source: candidate.source,
                    reason,
                });
            }
        }
    }
}

/// Detects the stacks of `repo` and discovers its commands (see the module docs for the order).
pub fn detect(repo: &Path, mapping: &ToolsMapping) -> Result<Detection, DetectError> {
    std::fs::read_dir(repo).map_err(|source| DetectError::Read {
        path: repo.to_path_buf(),
        source,
    })?;
    let stacks = detect_stacks(repo, mapping);
    let root = PathBuf::from(".");
    let mut found = Found::default();
    let mut package_manager = None;
    scan_directory(repo, &root, &mut found, &mut package_manager)?;
    let mut scanned = vec![root];
    for stack in &stacks {
        if !scanned.contains(&stack.path) {
            scan_directory(repo, &stack.path, &mut found, &mut package_manager)?;
            scanned.push(stack.path.clone());
        }
        let beside_primary = stacks
            .first()
            .is_some_and(|primary| primary.path == stack.path);
        if let Some(tools) = mapping.stack(&stack.id).filter(|_| beside_primary) {
            let source = format!("{MAPPING_FILE_NAME} default ({})", stack.id);
            for kind in CommandKind::ALL {
                if let Some(command) = tools.command(kind) {
                    found.offer(&stack.path, Candidate::plain(kind, command, source.clone()));
                }
            }
        }
    }
    let Found {
        mut commands,
        skipped,
    } = found;
    Ok(Detection {
        stacks,
        package_manager,
        commands: CommandKind::ALL
            .into_iter()
            .map(|kind| (kind, commands.remove(&kind)))
            .collect(),
        skipped,
    })
}

/// Offers the candidates of every source in `relative` (a directory of `repo`), in order.
fn scan_directory(
    repo: &Path,
    relative: &Path,
    found: &mut Found,
    package_manager: &mut Option<PackageManager>,
) -> Result<(), DetectError> {
    let directory = Directory::new(repo, relative);
    if let Some(scripts) = package_json::scripts(&directory)? {
        package_manager.get_or_insert(scripts.package_manager);
        found.offer_all(relative, scripts.candidates);
    }
    found.offer_all(relative, make::candidates(&directory)?);
    found.offer_all(relative, just::candidates(&directory)?);
    if directory.is_root() {
        found.offer_all(relative, ci::candidates(&directory)?);
    }
    found.offer_all(relative, python::candidates(&directory)?);
    Ok(())
}

/// A directory of the repository that discovery reads.
#[derive(Debug)]
struct Directory<'repo> {
    repo: &'repo Path,
    relative: &'repo Path,
}

impl<'repo> Directory<'repo> {
    fn new(repo: &'repo Path, relative: &'repo Path) -> Directory<'repo> {
        Directory { repo, relative }
    }

    fn is_root(&self) -> bool {
        self.relative == Path::new(".")
    }

    /// The directory's absolute path.
    fn absolute(&self) -> PathBuf {
        if self.is_root() {
            self.repo.to_path_buf()
        } else {
            self.repo.join(self.relative)
        }
    }

    /// How many levels below the root the directory is.
    fn depth(&self) -> usize {
        if self.is_root() {
            0
        } else {
            self.relative.components().count()
        }
    }

    /// The absolute path of `name` in this directory.
    fn path(&self, name: &str) -> PathBuf {
        self.absolute().join(name)
    }

    /// How sources name `name` of this directory: `package.json`, `web/package.json`.
    fn display(&self, name: &str) -> String {
        if self.is_root() {
            name.to_owned()
        } else {
            format!("{}/{name}", self.relative.display())
        }
    }

    /// The text of `name`, `None` when it does not exist; invalid UTF-8 is replaced, since
    /// the files read this way are searched for commands, not parsed strictly.
    fn read(&self, name: &str) -> Result<Option<String>, DetectError> {
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
fn logical_lines(text: &str) -> Vec<String> {
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

impl Detection {
    /// The discovered command of `kind`, if one was found.
    pub fn command(&self, kind: CommandKind) -> Option<&str> {
        self.commands
            .get(&kind)
            .and_then(Option::as_ref)
            .map(|discovered| discovered.command.as_str())
    }

    /// The human report: stacks, package manager, then the seed's "Quality Commands" table
    /// with "Not found" for missing kinds, and the unsafe commands that were skipped.
    pub fn render_table(&self) -> String {
        let mut out = String::new();
        let stacks = if self.stacks.is_empty() {
            "none found".to_owned()
        } else {
            self.stacks
                .iter()
                .map(|stack| format!("{} ({})", stack.id, stack.path.display()))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let package_manager = self.package_manager.map_or("none", PackageManager::name);
        let _ = writeln!(out, "Stacks: {stacks}");
        let _ = writeln!(out, "Package manager: {package_manager}");
        let _ = writeln!(out);
        let _ = writeln!(out, "## Quality Commands");
        let _ = writeln!(out);
        let _ = writeln!(out, "| Type | Command | Source |");
        let _ = writeln!(out, "|------|---------|--------|");
        for kind in CommandKind::ALL {
            match self.commands.get(&kind).and_then(Option::as_ref) {
                Some(found) => {
                    let _ = writeln!(
                        out,
                        "| {} | `{}` | {} |",
                        kind.label(),
                        table_cell(&found.command),
                        table_cell(&found.source)
                    );
                }
                None => {
                    let _ = writeln!(out, "| {} | Not found | - |", kind.label());
                }
            }
        }
        if !self.skipped.is_empty() {
            let _ = writeln!(out);
            let _ = writeln!(out, "Skipped as unsafe:");
            for skipped in &self.skipped {
                let _ = writeln!(
                    out,
                    "- {}: `{}` ({}): it {}",
                    skipped.kind.label(),
                    skipped.command,
                    skipped.source,
                    skipped.reason
                );
            }
        }
        out
    }
}

/// `text` made safe for a Markdown table cell: a `|` would end the cell.
fn table_cell(text: &str) -> String {
    text.replace('|', r"\|")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kind_names_match_their_serde_names() {
        for kind in CommandKind::ALL {
            let json = serde_json::to_string(&kind).expect("serialize");
            assert_eq!(json, format!("\"{}\"", kind.name()));
        }
    }

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

    #[test]
    fn missing_repository_is_a_read_error() {
        let dir = tempfile::tempdir().expect("temp dir");
        let missing = dir.path().join("nope");
        let error = detect(&missing, &ToolsMapping::builtin()).expect_err("no such directory");
        assert_eq!(
            error.to_string(),
            format!("failed to read {}", missing.display())
        );
    }

    #[test]
    fn detection_json_has_every_kind_and_table_says_not_found() {
        let detection = Detection {
            stacks: vec![Stack {
                id: "rust".to_owned(),
                path: PathBuf::from("."),
            }],
            package_manager: Some(PackageManager::Pnpm),
            commands: CommandKind::ALL
                .into_iter()
                .map(|kind| {
                    let found = (kind == CommandKind::Test).then(|| Discovered {
                        command: "cargo test | tee log".to_owned(),
                        source: "Makefile target test".to_owned(),
                    });
                    (kind, found)
                })
                .collect(),
            skipped: Vec::new(),
        };
        let json = serde_json::to_string(&detection).expect("serialize");
        assert_eq!(
            json,
            r#"{"stacks":[{"id":"rust","path":"."}],"package_manager":"pnpm","commands":{"test":{"command":"cargo test | tee log","source":"Makefile target test"},"lint":null,"typecheck":null,"build":null,"format_check":null,"complexity":null,"duplication":null}}"#
        );
        let table = detection.render_table();
        assert!(
            table.starts_with("Stacks: rust (.)\nPackage manager: pnpm\n"),
            "{table}"
        );
        assert!(
            table.contains("| Test | `cargo test \\| tee log` | Makefile target test |"),
            "{table}"
        );
        assert!(table.contains("| Lint | Not found | - |"), "{table}");
    }
}
