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
mod directory;
mod just;
mod make;
mod package_json;
mod python;
mod render;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

pub use package_json::PackageManager;

use directory::{Directory, in_directory, logical_lines};

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

impl Detection {
    /// The discovered command of `kind`, if one was found.
    pub fn command(&self, kind: CommandKind) -> Option<&str> {
        self.commands
            .get(&kind)
            .and_then(Option::as_ref)
            .map(|discovered| discovered.command.as_str())
    }
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
