//! A repository's session: what `prpd run`, `prpd resume`, `prpd abort` and `prpd status` do
//! with the state in `.prp-session/`. It takes the lock, loads and validates everything a run
//! needs *before* anything starts (a bad config or PRP is refused up front), then hands the
//! run to the [`Driver`].

use std::path::{Path, PathBuf};

use crate::base::config::{Config, SnapshotRetention};
use crate::base::config_file::{self, ConfigError};
use crate::base::lock::{LockError, SessionLock};
use crate::base::paths::{SessionPaths, new_run_id};
use crate::prp::{self, PrpError};
use crate::qa::command::CommandKind;
use crate::qa::settings;
use crate::qa::tools_mapping::ToolsMapping;
use crate::run::agent::{self, AgentsNotInstalled, MissingCommand};
use crate::run::driver::{Context, DriveError, Driver, InputChanges, Output};
use crate::run::machine::Event;
use crate::run::prompt::{self, PromptError};
use crate::run::record::{Delivery, RunError, RunRecord};
use crate::run::snapshot::{SnapshotError, Snapshots};
use crate::ship;
use crate::ship::git::ShipError;

/// A request that cannot be carried out as asked (the user's to fix; exit code 2).
#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error(transparent)]
    Prp(#[from] PrpError),
    #[error(transparent)]
    Lock(#[from] LockError),
    #[error(transparent)]
    AgentsNotInstalled(#[from] AgentsNotInstalled),
    #[error(transparent)]
    Prompt(#[from] PromptError),
    #[error("{}: {source}", config.as_deref().map_or_else(|| "the built-in agent".to_owned(), |path| path.display().to_string()))]
    AgentCommand {
        config: Option<PathBuf>,
        #[source]
        source: MissingCommand,
    },
    #[error(
        "run {run_id} ({state}) is not finished; continue it with `prpd resume` or end it with `prpd abort` before starting another"
    )]
    RunInProgress { run_id: String, state: String },
    #[error("there is no run to {action} in {}", repo.display())]
    NoRun { action: &'static str, repo: PathBuf },
    #[error(
        "{} was changed since prpd last wrote it: run {run_id} does not continue from a record \
         prpd did not write (an agent may have edited it); end the run with `prpd abort`",
        path.display()
    )]
    RecordChanged { run_id: String, path: PathBuf },
    #[error(
        "{} has no seal: prpd seals every record of an unfinished run on \
         refs/prpd/{run_id}/record, and that ref is gone (an agent may have deleted it along with \
         editing the file); run {run_id} does not continue from a record prpd cannot vouch for; \
         end the run with `prpd abort`",
        path.display()
    )]
    RecordUnsealed { run_id: String, path: PathBuf },
    #[error("the current run is {current}, not {asked}")]
    OtherRun { current: String, asked: String },
    #[error("run {run_id} is {state}: there is nothing to {action}")]
    Finished {
        run_id: String,
        state: String,
        action: &'static str,
    },
    #[error(
        "no test command found in {}: prpd measures RED and GREEN by running the tests, so it cannot run a PRP here; add a `test` script, Makefile target or a qa-tools-mapping.yml default",
        repo.display()
    )]
    NoTestCommand { repo: PathBuf },
    #[error("the PRP {} is not inside the repository {}", prp.display(), repo.display())]
    PrpOutsideRepo { prp: PathBuf, repo: PathBuf },
    #[error(
        "run {run_id} has no iteration {iteration} with a snapshot; its iterations are {known}"
    )]
    NoIteration {
        run_id: String,
        iteration: u32,
        known: String,
    },
    #[error(
        "{} is not a git repository prpd can open ({reason}); prpd records every iteration as a \
         git snapshot: run `git init` and commit first",
        repo.display()
    )]
    NotARepository { repo: PathBuf, reason: String },
    #[error(
        "the snapshots of run {run_id} are gone: prpd removes them when a run ends; set \
         `[run] keep_snapshots = true` in prpd.toml to keep them"
    )]
    SnapshotsGone { run_id: String },
    #[error(
        "{} has uncommitted changes: {}{}. prpd ships only what its agents change, and your \
         own work must not land in the pull request: commit or stash it first, or run again \
         with --allow-dirty (your changes are then part of the run's starting point, and stay \
         out of the pull request)",
        repo.display(),
        files.join(", "),
        if *more > 0 { format!(" and {more} more") } else { String::new() }
    )]
    Uncommitted {
        repo: PathBuf,
        files: Vec<String>,
        more: usize,
    },
    #[error("failed to read the state of {}: {source}", repo.display())]
    Status {
        repo: PathBuf,
        #[source]
        source: Box<ShipError>,
    },
}

/// What `prpd run` does with a working tree that holds uncommitted changes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DirtyTree {
    /// Refuse to start, listing them (the default).
    Refuse,
    /// `--allow-dirty`: start; they are part of the run's base and stay out of the PR.
    Allow,
    /// The daemon: changes under this folder (relative to the repository: the PRPs a user
    /// dropped) are allowed like `Allow` allows them; any other change refuses the start.
    AllowUnder(PathBuf),
}

/// How `prpd run` starts a run, besides the options every command shares.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Start {
    pub dirty: DirtyTree,
    /// `--dry-run`: SHIP does only the local steps.
    pub delivery: Delivery,
}

/// How many uncommitted files the refusal names.
const UNCOMMITTED_SHOWN: usize = 20;

/// prpd could not carry out the session (I/O, a failed measurement; exit code 4).
#[derive(Debug, thiserror::Error)]
pub enum SessionFailure {
    #[error(transparent)]
    Request(#[from] SessionError),
    #[error(transparent)]
    Drive(#[from] DriveError),
    #[error(transparent)]
    Record(#[from] RunError),
    #[error(transparent)]
    Snapshot(#[from] SnapshotError),
    #[error("failed to prepare {}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// Options of `prpd run` and `prpd resume`.
#[derive(Debug, Clone)]
pub struct Options {
    pub repo: PathBuf,
    pub config: Option<PathBuf>,
    pub output: Output,
}

/// Takes the repository's lock (`prpd run`, `resume` and `abort` take it for one command; the
/// daemon for its whole life), after creating `.prp-session/`.
pub fn lock(repo: &Path) -> Result<SessionLock, SessionFailure> {
    let session = SessionPaths::new(repo);
    prepare(&session)?;
    Ok(SessionLock::acquire(&session.lock()).map_err(SessionError::from)?)
}

/// Starts a run of the PRP at `prp` and drives it until it stops.
pub async fn run(options: &Options, prp: &Path, start: Start) -> Result<RunRecord, SessionFailure> {
    let lock = lock(&options.repo)?;
    run_locked(&lock, options, prp, start).await
}

/// [`run`] by the holder of the repository's lock.
pub async fn run_locked(
    _lock: &SessionLock,
    options: &Options,
    prp: &Path,
    start: Start,
) -> Result<RunRecord, SessionFailure> {
    let session = SessionPaths::new(&options.repo);
    stop_orphaned_agent(&session);
    if let Some(record) = RunRecord::load(&session.state())?
        && !record.is_finished()
    {
        return Err(SessionError::RunInProgress {
            run_id: record.run_id.clone(),
            state: record.state().to_string(),
        }
        .into());
    }
    let prp_relative = relative_prp(&options.repo, prp)?;
    let context = context(options, &prp_relative, None)?;
    check_uncommitted(&options.repo, &start.dirty)?;
    let run_id = new_run_id("run");
    // Every verdict is about a snapshot: a directory git cannot open is refused before a run
    // record exists that could never go on.
    Snapshots::open(
        &options.repo,
        &run_id,
        &session.run_dir(&run_id).join("snapshot.index"),
    )
    .map_err(|error| SessionError::NotARepository {
        repo: options.repo.clone(),
        reason: std::error::Error::source(&error)
            .map_or_else(|| error.to_string(), ToString::to_string),
    })?;
    let mut record = RunRecord::new(
        run_id,
        prp_relative,
        crate::run::driver::unix_now(),
        &context.config.breaker,
    );
    record.ship.delivery = start.delivery;
    tracing::info!(run_id = %record.run_id, prp = %record.prp.display(), "run started");
    let mut driver = Driver::new(context, record);
    driver.drive().await?;
    Ok(driver.record().clone())
}

/// Who continues an escalated run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Resumption {
    /// A human (`prpd resume`, or a `resume` file in the run's folder): the QA attempt counter
    /// resets and an open breaker gets one probe.
    Human,
    /// The daemon's breaker cooldown elapsed: a run escalated by an open breaker gets one probe
    /// iteration; any other escalation keeps waiting for a human.
    Cooldown,
}

/// Continues the current run: after a crash from its last persisted step, after an escalation
/// with a human resume (the QA attempt counter resets; an open breaker gets one probe).
pub async fn resume(
    options: &Options,
    run: Option<&str>,
    input_changes: InputChanges,
) -> Result<RunRecord, SessionFailure> {
    let lock = lock(&options.repo)?;
    resume_locked(&lock, options, run, input_changes, Resumption::Human).await
}

/// [`resume`] by the holder of the repository's lock, as `resumption` says.
pub async fn resume_locked(
    _lock: &SessionLock,
    options: &Options,
    run: Option<&str>,
    input_changes: InputChanges,
    resumption: Resumption,
) -> Result<RunRecord, SessionFailure> {
    let session = SessionPaths::new(&options.repo);
    stop_orphaned_agent(&session);
    let record = current(&session, &options.repo, run, "resume")?;
    stop_escaped_processes(&record.run_id);
    if record.is_finished() {
        return Err(SessionError::Finished {
            run_id: record.run_id.clone(),
            state: record.state().to_string(),
            action: "resume",
        }
        .into());
    }
    refuse_a_record_prpd_did_not_write(&session, &options.repo, &record)?;
    let base_prp = base_prp_text(&session, &options.repo, &record)?;
    let context = context(options, &record.prp, base_prp)?;
    let escalated = record.awaits_human();
    let mut driver = Driver::new(context, record);
    driver.check_inputs_on_resume(input_changes)?;
    if escalated {
        driver.handle_event(match resumption {
            Resumption::Human => &Event::HumanResume,
            Resumption::Cooldown => &Event::CooldownElapsed,
        })?;
    }
    tracing::info!(run_id = %driver.record().run_id, "run resumed");
    driver.drive().await?;
    Ok(driver.record().clone())
}

/// Refuses a working tree with uncommitted changes unless `dirty` allows them (then they are
/// named in the log): the run's base is the working tree, and the user's own work must not
/// land in the pull request.
fn check_uncommitted(repo: &Path, dirty: &DirtyTree) -> Result<(), SessionFailure> {
    let mut files = ship::git::uncommitted(repo).map_err(|source| SessionError::Status {
        repo: repo.to_path_buf(),
        source: Box::new(source),
    })?;
    if files.is_empty() {
        return Ok(());
    }
    let allowed = match dirty {
        DirtyTree::Refuse => false,
        DirtyTree::Allow => true,
        DirtyTree::AllowUnder(folder) => {
            files.iter().all(|file| Path::new(file).starts_with(folder))
        }
    };
    if allowed {
        tracing::warn!(
            files = %files.join(", "),
            "starting on uncommitted changes: they are part of the run's base and stay out of the pull request"
        );
        return Ok(());
    }
    let more = files.len().saturating_sub(UNCOMMITTED_SHOWN);
    files.truncate(UNCOMMITTED_SHOWN);
    Err(SessionError::Uncommitted {
        repo: repo.to_path_buf(),
        files,
        more,
    }
    .into())
}

/// What iteration `iteration` of the current run changed (default: its last iteration), as a
/// unified diff between the snapshot before it and the one it ended on (`prpd diff`).
pub fn diff(
    repo: &Path,
    run: Option<&str>,
    iteration: Option<u32>,
) -> Result<String, SessionFailure> {
    let session = SessionPaths::new(repo);
    let record = current(&session, repo, run, "diff")?;
    let known = &record.snapshots.iterations;
    let chosen = iteration.or_else(|| known.keys().next_back().copied());
    let Some((sequence, number)) =
        chosen.and_then(|sequence| Some((sequence, *known.get(&sequence)?)))
    else {
        return Err(SessionError::NoIteration {
            run_id: record.run_id.clone(),
            iteration: iteration.unwrap_or(0),
            known: if known.is_empty() {
                "none yet".to_owned()
            } else {
                known
                    .keys()
                    .map(u32::to_string)
                    .collect::<Vec<_>>()
                    .join(", ")
            },
        }
        .into());
    };
    let snapshots = Snapshots::open(
        repo,
        &record.run_id,
        &session.run_dir(&record.run_id).join("snapshot.index"),
    )?;
    let (Some(before), Some(after)) =
        (snapshots.at(number.saturating_sub(1)), snapshots.at(number))
    else {
        return Err(SessionError::SnapshotsGone {
            run_id: record.run_id,
        }
        .into());
    };
    tracing::debug!(sequence, number, "diff of an iteration");
    Ok(snapshots.patch(&before, &after)?)
}

/// How an abort request was carried out.
#[derive(Debug)]
pub enum Aborted {
    /// The run was aborted here.
    Now { run_id: String },
    /// Another prpd drives the run: it was asked to stop after its current step.
    Requested { run_id: String },
}

/// Aborts the current run. Needs no valid configuration or PRP: an abort must work even when
/// what made the run fail is a broken file.
pub fn abort(options: &Options, run: Option<&str>) -> Result<Aborted, SessionFailure> {
    let session = SessionPaths::new(&options.repo);
    prepare(&session)?;
    let lock = match SessionLock::acquire(&session.lock()) {
        Ok(lock) => lock,
        Err(LockError::Busy { .. }) => {
            let record = current(&session, &options.repo, run, "abort")?;
            request_abort(&session, &record)?;
            return Ok(Aborted::Requested {
                run_id: record.run_id,
            });
        }
        Err(error) => return Err(SessionError::from(error).into()),
    };
    let run_id = abort_locked(&lock, options, run)?;
    drop(lock);
    Ok(Aborted::Now { run_id })
}

/// Asks the prpd that drives `record`'s run to abort it after its current step.
pub fn request_abort(session: &SessionPaths, record: &RunRecord) -> Result<(), SessionFailure> {
    let path = session.abort_request();
    std::fs::write(&path, &record.run_id).map_err(|source| SessionFailure::Io { path, source })
}

/// [`abort`] by the holder of the repository's lock, with no run being driven: aborts the
/// current run now and returns its id.
pub fn abort_locked(
    _lock: &SessionLock,
    options: &Options,
    run: Option<&str>,
) -> Result<String, SessionFailure> {
    let session = SessionPaths::new(&options.repo);
    stop_orphaned_agent(&session);
    let mut record = current(&session, &options.repo, run, "abort")?;
    stop_escaped_processes(&record.run_id);
    if record.is_finished() {
        return Err(SessionError::Finished {
            run_id: record.run_id.clone(),
            state: record.state().to_string(),
            action: "abort",
        }
        .into());
    }
    let effects = record.machine.handle(&Event::HumanAbort);
    if !effects.is_empty() {
        // The abort's only effect is the summary, written here; nothing is left to carry out.
        record.pending.clear();
        seal_final(options, &session, &record)?;
        record.save(&session.state())?;
        crate::run::driver::write_summary(&session, &record)?;
        release_snapshots(options, &session, &record);
    }
    Ok(record.run_id)
}

/// Seals the aborted run's record before it is written, like every record prpd writes (see
/// `run/snapshot/seal.rs`), so that the unfinished record before it cannot be put back and
/// resumed where the refs are kept. An abort must work with a broken repository, so a seal that
/// cannot be written is only logged: the record is finished either way, and a resume of an
/// edited copy finds no seal that vouches for it.
fn seal_final(
    options: &Options,
    session: &SessionPaths,
    record: &RunRecord,
) -> Result<(), SessionFailure> {
    let path = session.state();
    let json = record.to_json(&path)?;
    let sealed = Snapshots::open(
        &options.repo,
        &record.run_id,
        &session.run_dir(&record.run_id).join("snapshot.index"),
    )
    .and_then(|snapshots| snapshots.seal_final_record(json.as_bytes()));
    if let Err(error) = sealed {
        tracing::warn!(%error, "could not seal the aborted run's record");
    }
    Ok(())
}

/// Removes an aborted run's snapshot refs unless the config keeps them. An abort must work with
/// a broken config or repository, so a failure here is only logged.
fn release_snapshots(options: &Options, session: &SessionPaths, record: &RunRecord) {
    let keep = Config::load(&options.repo, options.config.as_deref())
        .is_ok_and(|config| config.snapshots == SnapshotRetention::Keep);
    if keep {
        return;
    }
    let removed = Snapshots::open(
        &options.repo,
        &record.run_id,
        &session.run_dir(&record.run_id).join("snapshot.index"),
    )
    .and_then(|snapshots| snapshots.remove_refs());
    if let Err(error) = removed {
        tracing::warn!(%error, "could not remove the aborted run's snapshot refs");
    }
}

/// The current run's record, if any (read without the lock: the record is written atomically).
pub fn status(repo: &Path) -> Result<Option<RunRecord>, SessionFailure> {
    Ok(RunRecord::load(&SessionPaths::new(repo).state())?)
}

fn current(
    session: &SessionPaths,
    repo: &Path,
    run: Option<&str>,
    action: &'static str,
) -> Result<RunRecord, SessionFailure> {
    let record = RunRecord::load(&session.state())?.ok_or_else(|| SessionError::NoRun {
        action,
        repo: repo.to_path_buf(),
    })?;
    if let Some(asked) = run
        && asked != record.run_id
    {
        return Err(SessionError::OtherRun {
            current: record.run_id,
            asked: asked.to_owned(),
        }
        .into());
    }
    Ok(record)
}

fn prepare(session: &SessionPaths) -> Result<(), SessionFailure> {
    session.ensure().map_err(|source| SessionFailure::Io {
        path: session.root().to_path_buf(),
        source,
    })
}

/// Stops an agent that a killed predecessor left running, so that it cannot edit the tree
/// while this prpd runs the interrupted iteration again, and drops an abort request that no
/// prpd was left to honour (starting or resuming is the newer decision). Call with the lock
/// held.
fn stop_orphaned_agent(session: &SessionPaths) {
    let _ = std::fs::remove_file(session.abort_request());
    if let Some(pgid) = crate::base::process::stop_orphaned_group(&session.agent_group()) {
        tracing::warn!(
            pgid,
            "stopped an agent left running by a prpd that was killed"
        );
    }
}

/// Refuses to continue from a record someone else wrote: the file must be the content prpd
/// sealed when it last wrote it (see `run/snapshot/seal.rs`). Every unfinished record of this
/// version is sealed, so a record without a seal is refused too.
fn refuse_a_record_prpd_did_not_write(
    session: &SessionPaths,
    repo: &Path,
    record: &RunRecord,
) -> Result<(), SessionFailure> {
    let path = session.state();
    let content = std::fs::read(&path).map_err(|source| SessionFailure::Io {
        path: path.clone(),
        source,
    })?;
    let snapshots = Snapshots::open(
        repo,
        &record.run_id,
        &session.run_dir(&record.run_id).join("snapshot.index"),
    )?;
    match snapshots.is_sealed_record(&content)? {
        Some(true) => Ok(()),
        Some(false) => Err(SessionError::RecordChanged {
            run_id: record.run_id.clone(),
            path,
        }
        .into()),
        None => Err(SessionError::RecordUnsealed {
            run_id: record.run_id.clone(),
            path,
        }
        .into()),
    }
}

/// Stops what the run's agents left running when the prpd driving them was killed with
/// `kill -9` (and so could not stop it): every process that carries the run's `PRPD_RUN_ID`,
/// `setsid` and double-forked ones included.
fn stop_escaped_processes(run_id: &str) {
    let stopped = crate::base::process::stop_marked("PRPD_RUN_ID", run_id);
    if !stopped.is_empty() {
        tracing::warn!(
            stopped = %stopped.iter().map(ToString::to_string).collect::<Vec<_>>().join(", "),
            "stopped processes an agent of this run left running before prpd was killed"
        );
    }
}

/// Loads and validates everything a run needs; refuses a repository without a test command.
/// The PRP as the run's base snapshot holds it: a run is judged against the PRP it started
/// from, whatever an agent did to the file since.
fn base_prp_text(
    session: &SessionPaths,
    repo: &Path,
    record: &RunRecord,
) -> Result<Option<String>, SessionFailure> {
    let Some(base) = &record.snapshots.base else {
        return Ok(None);
    };
    let snapshots = Snapshots::open(
        repo,
        &record.run_id,
        &session.run_dir(&record.run_id).join("snapshot.index"),
    )?;
    Ok(snapshots.read(base, &record.prp)?)
}

fn context(
    options: &Options,
    prp_relative: &Path,
    base_prp: Option<String>,
) -> Result<Context, SessionFailure> {
    let repo = options.repo.clone();
    let config = Config::load(&repo, options.config.as_deref()).map_err(SessionError::from)?;
    agent::check_installed(&config.agents, config.source.as_deref(), &repo)
        .map_err(SessionError::from)?;
    if base_prp.is_none() {
        prompt::check_overrides(&repo).map_err(SessionError::from)?;
    }
    let checklist = settings::checklist(&repo, &config.gate).map_err(SessionError::from)?;
    let mapping = ToolsMapping::load(&repo).map_err(SessionError::from)?;
    let prp_text = match base_prp {
        Some(text) => text,
        None => config_file::read(&repo.join(prp_relative)).map_err(SessionError::from)?,
    };
    let prp = prp::parse(prp_relative, &prp_text).map_err(SessionError::from)?;
    let detection = settings::detect(&repo, &mapping, &config.gate).map_err(DriveError::from)?;
    if detection.command(CommandKind::Test).is_none() {
        return Err(SessionError::NoTestCommand { repo }.into());
    }
    agent::check_commands(&config.agents, &agent::Commands::discovered(&detection)).map_err(
        |source| SessionError::AgentCommand {
            config: config.source.clone(),
            source,
        },
    )?;
    Ok(Context {
        session: SessionPaths::new(&repo),
        repo,
        config,
        checklist,
        mapping,
        prp,
        prp_text,
        output: options.output,
    })
}

/// The PRP's path relative to the repository (it must live inside it).
pub fn relative_prp(repo: &Path, prp: &Path) -> Result<PathBuf, SessionFailure> {
    let candidate = if prp.is_absolute() || prp.exists() {
        prp.to_path_buf()
    } else {
        repo.join(prp)
    };
    let absolute = candidate.canonicalize().map_err(|source| {
        SessionError::from(ConfigError::Read {
            path: candidate.clone(),
            source,
        })
    })?;
    absolute
        .strip_prefix(repo)
        .map(Path::to_path_buf)
        .map_err(|_| {
            SessionError::PrpOutsideRepo {
                prp: absolute.clone(),
                repo: repo.to_path_buf(),
            }
            .into()
        })
}
