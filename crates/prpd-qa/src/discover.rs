//! Command discovery: which command a repository uses to test, lint, type-check, build,
//! check formatting, and measure complexity and duplication, and where prpd found each one
//! (DESIGN §6.3; the seed's "Quality Command Discovery").
//!
//! Theory of operation. A project's own commands beat generic defaults, so prpd reads, in this
//! order, and keeps the first safe command of each kind:
//!
//! 1. `package.json` scripts, run through the project's package manager ([`PackageManager`]);
//! 2. Makefile targets, then justfile recipes;
//! 3. CI configuration (GitHub workflow `run:` steps, `.gitlab-ci.yml` job scripts,
//!    `.travis.yml`, sourcehut `.build.yml`), only at the repository root, where CI lives;
//! 4. Python configuration: `pyproject.toml` tool tables and build backend, tox environments
//!    (`tox.ini`, `tox.toml`, `[tool.tox]`), then the `setup.cfg`/`pytest.ini`/`tox.ini` tool
//!    sections;
//! 5. the tools mapping's defaults for the stack: these the project does not declare, so they
//!    are marked [`Discovered::fallback`], and a QA failure of one says prpd guessed it.
//!
//! Directories are read in this order: the repository root (sources 1–4), then each detected
//! stack in [`detect_stacks`] order, primary first: the sources of its directory when it is a
//! sub-folder, then its mapping defaults if it sits in the primary stack's directory. So the
//! commands are the primary stack's, and a kind the primary stack has no command for falls
//! back to what the other stacks' directories name (their scripts, targets, recipes), but
//! not to their defaults: a Rust project with a Node example in `examples/` must not be
//! measured with eslint. A command found in a sub-folder runs from there: it is prefixed with
//! `cd <path> && `. Each stack in a sub-folder is also a [`SubProject`] with commands of its
//! own, discovered the same way from its folder alone ([`detect_in`], `prpd qa --path`).
//!
//! Every candidate goes through [`is_safe`] (the one rule for what QA may run) after its
//! script or recipe is expanded to what it really runs (nested scripts, Makefile variables,
//! justfile `{{…}}`), and through the tools' own configuration ([`tool_config`]: ruff's `fix =
//! true`); then every task runner it calls (`make`, `npm`, `pnpm`, `yarn`, `bun`, `just`) is
//! followed into the file and folder it names and judged the same way ([`follow`]), so a
//! recipe that runs a script that rewrites files is refused, and so is a call prpd cannot read.
//! A command prpd writes itself (a CI line, a default) is made safe where it can be (`ruff
//! check --no-fix`, a formatter's check mode); anything else that would rewrite the tree,
//! publish, push, run docker or watch is skipped, the skip is kept in [`Detection::skipped`],
//! and discovery carries on with the next candidate of that kind.
//! A `package.json` or `pyproject.toml` that cannot be parsed is an error naming file and line,
//! because the commands prpd would otherwise pick could be wrong; a CI file prpd cannot parse
//! is only skipped with a warning, since CI syntax goes beyond what prpd needs from it.
//!
//! The caller applies what the user configured over what is found here (`prpd.toml`
//! `[commands]`): discovery only reports what the repository itself says.

mod ci;
mod directory;
mod follow;
mod just;
mod make;
mod package_json;
mod python;
mod render;
mod tool_config;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

pub use package_json::PackageManager;

pub(crate) use directory::in_directory;
use directory::{Directory, logical_lines, split_directory};
use follow::Follower;
use tool_config::ToolConfig;

use crate::command::CommandKind;
use crate::safety::{Unsafe, check_mode, formats_in_check_mode, is_safe};
use crate::stack::{Stack, detect_stacks};
use crate::tools_mapping::{FILE_NAME as MAPPING_FILE_NAME, ToolsMapping};
use prpd_base::config_file::ConfigError;

/// A discovered command and where it came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Discovered {
    /// A shell command line, run from the repository root.
    pub command: String,
    /// Where prpd found it, such as `package.json scripts.test`.
    pub source: String,
    /// The project declares no command of this kind: prpd guessed this one from a stack
    /// default of the tools mapping, so its failure may be prpd's guess and not the project's.
    #[serde(default)]
    pub fallback: bool,
    /// The user wrote it in prpd's own inputs (`prpd.toml` `[commands]`, the repository's
    /// `qa-tools-mapping.yml`): it runs as written and is never judged ([`judge_now`]).
    #[serde(default, skip_serializing_if = "is_false")]
    pub configured: bool,
}

#[expect(
    clippy::trivially_copy_pass_by_ref,
    reason = "serde's skip_serializing_if passes a reference"
)]
fn is_false(value: &bool) -> bool {
    !*value
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

/// A stack in a sub-folder, with the commands its own folder declares (`prpd qa --path`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SubProject {
    /// The folder, relative to the repository root.
    pub path: PathBuf,
    /// The ids of the stacks found in it, primary first.
    pub stacks: Vec<String>,
    /// The JavaScript package manager of the folder, if it has a `package.json`.
    pub package_manager: Option<PackageManager>,
    /// The command of every kind, each run from the repository root (`cd <path> && …`).
    pub commands: BTreeMap<CommandKind, Option<Discovered>>,
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
    /// The stacks in sub-folders, each with its own commands.
    #[serde(default)]
    pub subprojects: Vec<SubProject>,
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
    /// `prpd qa --path` named a folder that is not inside the repository.
    #[error("--path {}: not a folder of the repository", path.display())]
    NotAFolder { path: PathBuf },
}

/// Whether the project declares a candidate or prpd guesses it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Origin {
    /// A script, target, recipe, CI step or tool configuration of the project.
    Declared,
    /// A stack default of the tools mapping.
    Fallback,
}

/// Whether a candidate stands for its kind whatever it runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum CheckMode {
    /// It does.
    NotNeeded,
    /// Only when what it runs, calls followed, runs a formatter in its check mode: a Makefile
    /// target or justfile recipe called `fmt` or `format` usually rewrites files.
    Required,
}

/// One command a source offers for one kind.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Candidate {
    kind: CommandKind,
    /// What would run, relative to the directory of the source.
    command: String,
    /// The text [`is_safe`] judges: the script or recipe behind `command`, expanded. The
    /// task-runner calls in it are followed ([`follow`]) and judged too.
    judged: String,
    source: String,
    origin: Origin,
    check_mode: CheckMode,
    /// Refused before any judging: the source could not say in full what it runs.
    refused: Option<Unsafe>,
    /// Where it stands among the other candidates of its kind.
    precedence: Precedence,
}

/// Whether a candidate takes its source's place in the discovery order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Precedence {
    /// It does: the first safe candidate of its kind wins.
    InOrder,
    /// A conventional `all` target or recipe that is not clearly the build (it also runs
    /// tests or linters, or no line of it is a build command prpd knows): it is offered after
    /// every other source and the stack's defaults, so the toolchain's own build (`go build
    /// ./...`, `cargo build`, a CI build step) wins, and it is the build only of a project that
    /// has no other (a plain C Makefile).
    AfterDefaults,
}

impl Candidate {
    fn new(kind: CommandKind, command: String, judged: String, source: String) -> Candidate {
        Candidate {
            kind,
            command,
            judged,
            source,
            origin: Origin::Declared,
            check_mode: CheckMode::NotNeeded,
            refused: None,
            precedence: Precedence::InOrder,
        }
    }

    /// The candidate of a Makefile target or justfile recipe called `name`, whose source
    /// reads `judged` behind it: `all` yields to the toolchain's build unless it clearly is
    /// the build ([`clearly_builds`]).
    fn task(
        kind: CommandKind,
        name: &str,
        command: String,
        judged: String,
        source: String,
    ) -> Candidate {
        let mut candidate = Candidate::new(kind, command, judged, source);
        if kind.needs_check_mode(name) {
            candidate.check_mode = CheckMode::Required;
        }
        if kind == CommandKind::Build && name == "all" && !clearly_builds(&candidate.judged) {
            candidate.precedence = Precedence::AfterDefaults;
        }
        candidate
    }

    /// A candidate whose source could not be read in full (a Makefile whose variables expand
    /// past prpd's caps): refused by name, so the next source's command of its kind is used.
    fn refused(kind: CommandKind, command: String, source: String, reason: Unsafe) -> Candidate {
        Candidate {
            refused: Some(reason),
            ..Candidate::new(kind, command, String::new(), source)
        }
    }

    /// A candidate whose command is its own text (CI lines, tool defaults): prpd wrote it, so
    /// prpd may adjust it.
    fn plain(kind: CommandKind, command: &str, source: String) -> Candidate {
        Candidate::new(kind, command.to_owned(), command.to_owned(), source)
    }

    fn is_plain(&self) -> bool {
        self.command == self.judged
    }
}

/// Whether `judged` (what an `all` target runs, expanded) is clearly a build: some line of
/// it is a build command ([`ci::kinds_of`]: `go build`, `cargo build`, `npm run build`,
/// `python -m build`, …) and no line is a command of another kind (tests, a linter, a
/// formatter). `all: lint test build` is not: run as the build, it fails on a lint finding.
fn clearly_builds(judged: &str) -> bool {
    let kinds: Vec<CommandKind> = logical_lines(judged)
        .iter()
        .flat_map(|line| ci::kinds_of(line.trim()))
        .collect();
    kinds.contains(&CommandKind::Build) && kinds.iter().all(|kind| *kind == CommandKind::Build)
}

/// The commands found so far: the first safe candidate of each kind wins.
#[derive(Debug, Default)]
struct Found {
    commands: BTreeMap<CommandKind, Discovered>,
    skipped: Vec<Skipped>,
    /// Candidates held back until every source and default was offered
    /// ([`Precedence::AfterDefaults`]), with the directory and tool settings they were found
    /// with.
    deferred: Vec<(PathBuf, ToolConfig, Candidate)>,
}

impl Found {
    fn offer_all(
        &mut self,
        directory: &Path,
        tools: &ToolConfig,
        follower: &mut Follower<'_>,
        candidates: Vec<Candidate>,
    ) {
        for candidate in candidates {
            self.offer(directory, tools, follower, candidate);
        }
    }

    fn offer(
        &mut self,
        directory: &Path,
        tools: &ToolConfig,
        follower: &mut Follower<'_>,
        candidate: Candidate,
    ) {
        if self.commands.contains_key(&candidate.kind) {
            return;
        }
        if candidate.precedence == Precedence::AfterDefaults {
            let held = Candidate {
                precedence: Precedence::InOrder,
                ..candidate
            };
            self.deferred
                .push((directory.to_path_buf(), tools.clone(), held));
            return;
        }
        let (command, verdict) = if candidate.is_plain() {
            let adjusted = tools.adjust(&candidate.command);
            match is_safe(&adjusted) {
                Ok(()) => (adjusted, Ok(())),
                Err(reason) => match check_mode(&adjusted) {
                    Some(checking) => (checking, Ok(())),
                    None => (adjusted, Err(reason)),
                },
            }
        } else {
            (candidate.command.clone(), Ok(()))
        };
        let judged = if candidate.is_plain() {
            command.as_str()
        } else {
            candidate.judged.as_str()
        };
        let verdict =
            verdict.and_then(|()| judge(directory, tools, follower, &command, judged, &candidate));
        let command = in_directory(directory, &command);
        match verdict {
            Ok(Stands::Yes) => {
                self.commands.insert(
                    candidate.kind,
                    Discovered {
                        command,
                        source: candidate.source,
                        fallback: candidate.origin == Origin::Fallback,
                        configured: false,
                    },
                );
            }
            Ok(Stands::NotAFormatCheck) => {}
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

/// Whether a safe candidate stands for its kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stands {
    Yes,
    /// A `fmt` target or recipe that runs no formatter in its check mode: not offered.
    NotAFormatCheck,
}

/// Judges what `command` (as it will run from `directory`) runs: `judged`, the text its
/// source read behind it, then the task-runner calls in both, followed down every chain.
fn judge(
    directory: &Path,
    tools: &ToolConfig,
    follower: &mut Follower<'_>,
    command: &str,
    judged: &str,
    candidate: &Candidate,
) -> Result<Stands, Unsafe> {
    if let Some(reason) = &candidate.refused {
        return Err(reason.clone());
    }
    is_safe(judged)?;
    tools.judge(judged)?;
    let reached = follower.follow(directory, command, judged, candidate.origin)?;
    let formats_in_check_mode = || formats_in_check_mode(judged) || formats_in_check_mode(&reached);
    Ok(match candidate.check_mode {
        CheckMode::Required if !formats_in_check_mode() => Stands::NotAFormatCheck,
        CheckMode::Required | CheckMode::NotNeeded => Stands::Yes,
    })
}

/// One discovery pass over a folder of the repository (the root, or a sub-project's folder).
struct Scan<'a> {
    repo: &'a Path,
    mapping: &'a ToolsMapping,
    found: Found,
    /// Follows the task-runner calls of every candidate, each file read once for the pass.
    follower: Follower<'a>,
    /// The package manager of each directory read that has a `package.json`.
    managers: Vec<(PathBuf, PackageManager)>,
    scanned: Vec<PathBuf>,
}

impl<'a> Scan<'a> {
    fn new(repo: &'a Path, mapping: &'a ToolsMapping) -> Scan<'a> {
        Scan {
            repo,
            mapping,
            found: Found::default(),
            follower: Follower::new(repo),
            managers: Vec::new(),
            scanned: Vec::new(),
        }
    }

    /// Offers the candidates of every source in `relative` (a directory of the repository),
    /// in order, once per directory.
    fn sources(&mut self, relative: &Path) -> Result<(), DetectError> {
        if self.scanned.iter().any(|done| done == relative) {
            return Ok(());
        }
        self.scanned.push(relative.to_path_buf());
        let directory = Directory::new(self.repo, relative);
        let tools = ToolConfig::read(&directory)?;
        let (manager, candidates) = offered(&directory)?;
        if let Some(manager) = manager {
            self.managers.push((relative.to_path_buf(), manager));
        }
        self.found
            .offer_all(relative, &tools, &mut self.follower, candidates);
        Ok(())
    }

    /// Offers the mapping's defaults of `stack`, run through its folder's package manager.
    fn defaults(&mut self, stack: &Stack) -> Result<(), DetectError> {
        let Some(stack_tools) = self.mapping.stack(&stack.id) else {
            return Ok(());
        };
        let manager = self.manager_of(&stack.path);
        let tools = ToolConfig::read(&Directory::new(self.repo, &stack.path))?;
        let source = format!("{MAPPING_FILE_NAME} default ({})", stack.id);
        let package = package_json::read(&Directory::new(self.repo, &stack.path))?;
        let placeholder_test = package.as_ref().is_some_and(|package| {
            package
                .scripts
                .get("test")
                .is_some_and(|script| package_json::is_placeholder_test(script))
        });
        for kind in CommandKind::ALL {
            if let Some(command) = stack_tools.command(kind) {
                let command = manager.rewrite(command);
                if placeholder_test && command == manager.run_script("test") {
                    tracing::info!(
                        %command,
                        "not guessing the test command: the package's test script is npm \
                         init's placeholder, so the project has no test command"
                    );
                    continue;
                }
                let mut candidate = Candidate::plain(kind, &command, source.clone());
                candidate.origin = Origin::Fallback;
                self.found
                    .offer(&stack.path, &tools, &mut self.follower, candidate);
            }
        }
        Ok(())
    }

    /// Offers the candidates held back until now ([`Precedence::AfterDefaults`]).
    fn offer_deferred(&mut self) {
        for (directory, tools, candidate) in std::mem::take(&mut self.found.deferred) {
            self.found
                .offer(&directory, &tools, &mut self.follower, candidate);
        }
    }

    /// The package manager of `relative`: its own `package.json`'s, else the nearest lockfile
    /// up to the repository root, else npm.
    fn manager_of(&self, relative: &Path) -> PackageManager {
        self.managers
            .iter()
            .find(|(path, _)| path == relative)
            .map_or_else(
                || PackageManager::of_directory(&Directory::new(self.repo, relative)),
                |(_, manager)| *manager,
            )
    }

    /// The first directory's package manager, and every kind with its command or `None`.
    fn finish(
        self,
    ) -> (
        Option<PackageManager>,
        BTreeMap<CommandKind, Option<Discovered>>,
        Vec<Skipped>,
    ) {
        let Found {
            mut commands,
            skipped,
            deferred,
        } = self.found;
        debug_assert!(deferred.is_empty(), "offer_deferred runs before finish");
        let commands = CommandKind::ALL
            .into_iter()
            .map(|kind| (kind, commands.remove(&kind)))
            .collect();
        (
            self.managers.first().map(|(_, manager)| *manager),
            commands,
            skipped,
        )
    }
}

/// Every candidate the sources of `directory` offer, in discovery order, with the package
/// manager of its `package.json` when it has one.
fn offered(
    directory: &Directory<'_>,
) -> Result<(Option<PackageManager>, Vec<Candidate>), DetectError> {
    let mut candidates = Vec::new();
    let mut manager = None;
    if let Some(scripts) = package_json::scripts(directory)? {
        manager = Some(scripts.package_manager);
        candidates.extend(scripts.candidates);
    }
    candidates.extend(make::candidates(directory)?);
    candidates.extend(just::candidates(directory)?);
    if directory.is_root() {
        candidates.extend(ci::candidates(directory)?);
    }
    candidates.extend(python::candidates(directory)?);
    Ok((manager, candidates))
}

/// Judges `discovered` again on the files of `repo` as they are now, right before it runs.
///
/// Discovery judged the command when it found it, but `make lint` or `npm run lint` runs
/// whatever the Makefile or `package.json` says when it runs, and an agent can write those
/// files in between (a run freezes the commands, not every file they run through). So the
/// script, recipe or tox environment behind the command is read again and judged by the same
/// rule ([`is_safe`], the tools' configuration), with every task runner it calls followed down
/// the chain ([`follow`]); a command that runs through no file of its source (a CI line, a
/// default) is judged as written, under the tools' configuration as it is now, and the task
/// runners it calls are followed too. A
/// command the user configured runs as written: it is the user's, and prpd's inputs are
/// frozen for a run.
pub fn judge_now(repo: &Path, discovered: &Discovered) -> Result<(), Unsafe> {
    if discovered.configured {
        return Ok(());
    }
    let (folder, command) = split_directory(&discovered.command);
    let directory = Directory::new(repo, &folder);
    let unreadable = |error: DetectError| Unsafe(format!("could not be judged again: {error}"));
    let tools = ToolConfig::read(&directory).map_err(unreadable)?;
    let (_, candidates) = offered(&directory).map_err(unreadable)?;
    let behind = candidates
        .into_iter()
        .find(|candidate| !candidate.is_plain() && candidate.command == command);
    let origin = if discovered.fallback {
        Origin::Fallback
    } else {
        Origin::Declared
    };
    let candidate = behind.unwrap_or_else(|| Candidate {
        origin,
        ..Candidate::plain(CommandKind::Test, command, discovered.source.clone())
    });
    let mut follower = Follower::new(repo);
    judge(
        &folder,
        &tools,
        &mut follower,
        command,
        &candidate.judged,
        &candidate,
    )
    .map(|_| ())
}

/// Detects the stacks of `repo` and discovers its commands (see the module docs for the order),
/// then those of every sub-project.
pub fn detect(repo: &Path, mapping: &ToolsMapping) -> Result<Detection, DetectError> {
    let mut detection = detect_in(repo, Path::new("."), mapping)?;
    let mut folders: Vec<&Path> = Vec::new();
    for stack in &detection.stacks {
        if !stack.is_root() && !folders.contains(&stack.path.as_path()) {
            folders.push(&stack.path);
        }
    }
    let mut subprojects = Vec::new();
    for folder in folders {
        let inner = detect_in(repo, folder, mapping)?;
        subprojects.push(SubProject {
            path: folder.to_path_buf(),
            stacks: inner.stacks.into_iter().map(|stack| stack.id).collect(),
            package_manager: inner.package_manager,
            commands: inner.commands,
        });
    }
    detection.subprojects = subprojects;
    Ok(detection)
}

/// Discovery confined to `folder` (relative to `repo`; `.` for the whole repository): the
/// stacks inside it and the commands it declares, each run from the repository root. Sub-projects
/// are not listed. This is what `prpd qa --path FOLDER` gates.
pub fn detect_in(
    repo: &Path,
    folder: &Path,
    mapping: &ToolsMapping,
) -> Result<Detection, DetectError> {
    std::fs::read_dir(repo).map_err(|source| DetectError::Read {
        path: repo.to_path_buf(),
        source,
    })?;
    let folder = normalize_folder(repo, folder)?;
    let root = repo.join(&folder);
    let stacks: Vec<Stack> = detect_stacks(&root, mapping)
        .into_iter()
        .map(|stack| Stack {
            path: if stack.is_root() {
                folder.clone()
            } else if folder == Path::new(".") {
                stack.path
            } else {
                folder.join(stack.path)
            },
            id: stack.id,
        })
        .collect();
    let mut scan = Scan::new(repo, mapping);
    scan.sources(&folder)?;
    for stack in &stacks {
        scan.sources(&stack.path)?;
        let beside_primary = stacks
            .first()
            .is_some_and(|primary| primary.path == stack.path);
        if beside_primary {
            scan.defaults(stack)?;
        }
    }
    scan.offer_deferred();
    let (package_manager, commands, skipped) = scan.finish();
    Ok(Detection {
        stacks,
        package_manager,
        commands,
        subprojects: Vec::new(),
        skipped,
    })
}

/// `folder` as a clean path relative to `repo` (`.` for the root), or an error when it is not
/// a folder inside the repository.
fn normalize_folder(repo: &Path, folder: &Path) -> Result<PathBuf, DetectError> {
    let not_a_folder = || DetectError::NotAFolder {
        path: folder.to_path_buf(),
    };
    let absolute = if folder.is_absolute() {
        folder.to_path_buf()
    } else {
        repo.join(folder)
    };
    let absolute = absolute.canonicalize().map_err(|_| not_a_folder())?;
    let repo = repo.canonicalize().map_err(|source| DetectError::Read {
        path: repo.to_path_buf(),
        source,
    })?;
    if !absolute.is_dir() {
        return Err(not_a_folder());
    }
    let relative = absolute.strip_prefix(&repo).map_err(|_| not_a_folder())?;
    Ok(if relative.as_os_str().is_empty() {
        PathBuf::from(".")
    } else {
        relative.to_path_buf()
    })
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
mod tests;
