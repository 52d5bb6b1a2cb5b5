//! A repository's session: what `prpd run`, `prpd resume`, `prpd abort` and `prpd status` do
//! with the state in `.prp-session/`. A run gets its own worktree (`worktree.rs`) unless it
//! works in place; the session takes the run's lock, loads and validates everything the run
//! needs *before* anything starts (a bad config or PRP is refused up front), then hands the run
//! to the [`Driver`]. Several runs of one repository may be unfinished at once: each has its
//! own record, lock and worktree, and a command that acts on one run takes its id, or picks
//! the only unfinished run, or says which to name.

use std::path::{Path, PathBuf};

use crate::agent::{self, AgentsNotInstalled, MissingCommand};
use crate::config::{Config, SnapshotRetention};
use crate::driver::{Context, DriveError, Driver, InputChanges, Output};
use crate::flaky::{FlakyLog, Quarantine};
use crate::machine::Event;
use crate::prompt::{self, PromptError};
use crate::record::{Delivery, RunError, RunRecord};
use crate::snapshot::{SnapshotError, Snapshots};
use crate::worktree::{self, WorktreeError};
use prpd_base::config_file::{self, ConfigError};
use prpd_base::lock::{LockError, SessionLock};
use prpd_base::paths::{SessionPaths, new_run_id};
use prpd_base::process::owner;
use prpd_prp::{self as prp, PrpError};
use prpd_qa::command::CommandKind;
use prpd_qa::settings;
use prpd_qa::tools_mapping::ToolsMapping;

mod budget;
mod runs;
mod worktrees;

pub use budget::budget_to_raise;
use budget::raise_budget;
use prpd_ship::git::ShipError;
use runs::Choice;
use runs::chosen;
pub use runs::{Listed, status, unsettled, verified};
use worktrees::{
    discard_worktree, release_worktree, run_scope, sweep_finished_worktrees, work_tree,
};

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
        "run {run_id} works in place in {} and is not finished: two runs cannot share your \
         working tree; continue it with `prpd resume {run_id}` or end it with `prpd abort \
         {run_id}`, or start this one in a worktree of its own (without --in-place)",
        repo.display()
    )]
    InPlaceBusy { run_id: String, repo: PathBuf },
    #[error("there is no run to {action} in {}", repo.display())]
    NoRun { action: &'static str, repo: PathBuf },
    #[error(
        "{} runs of {} could be meant: {}; name one, as in `prpd {action} {}`",
        runs.len(),
        repo.display(),
        runs.join(", "),
        runs.first().map_or("", String::as_str)
    )]
    WhichRun {
        action: &'static str,
        repo: PathBuf,
        runs: Vec<String>,
    },
    #[error("{} has no run {run_id} (`prpd status` lists the runs)", repo.display())]
    NoSuchRun { run_id: String, repo: PathBuf },
    #[error(
        "{} was changed since prpd last wrote it: prpd does not trust a record it did not write \
         (an agent may have edited it); end run {run_id} with `prpd abort {run_id}`",
        path.display()
    )]
    RecordChanged { run_id: String, path: PathBuf },
    #[error(
        "{} has no seal: prpd seals every record it writes on refs/prpd/{run_id}/record, and \
         that ref is gone (an agent may have deleted it along with editing the file); prpd does \
         not trust a record it cannot vouch for; end run {run_id} with `prpd abort {run_id}`",
        path.display()
    )]
    RecordUnsealed { run_id: String, path: PathBuf },
    #[error(transparent)]
    Worktree(#[from] WorktreeError),
    #[error(
        "the worktree of run {run_id} ({}) is gone: the run's work was there; end the run with \
         `prpd abort {run_id}`",
        path.display()
    )]
    WorktreeGone { run_id: String, path: PathBuf },
    #[error(
        "run {run_id} was not stopped by a budget: `--budget` raises the budget that stopped a \
         run (`prpd status {run_id}` says why it stopped); resume without it"
    )]
    NotStoppedByBudget { run_id: String },
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

/// Where a run works.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Place {
    /// A worktree of its own, checked out at `base` (a revision of the repository; `None`: the
    /// commit `HEAD` names now), whose pull request goes to `base_branch` (`None`: the branch
    /// `base` names, if it is one). The user's working tree is never touched.
    Worktree {
        base: Option<String>,
        base_branch: Option<String>,
    },
    /// The user's working tree (`prpd run --in-place`), which must be clean unless `dirty`
    /// allows it.
    InPlace { dirty: DirtyTree },
}

/// What an in-place run does with a working tree that holds uncommitted changes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DirtyTree {
    /// Refuse to start, listing them (the default).
    Refuse,
    /// `--allow-dirty`: start; they are part of the run's base and stay out of the PR.
    Allow,
}

/// How `prpd run` starts a run, besides the options every command shares.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Start {
    pub place: Place,
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
    /// The user's repository: where `.prp-session/` lives.
    pub repo: PathBuf,
    pub config: Option<PathBuf>,
    pub output: Output,
}

/// Takes the repository's daemon lock (`prpd watch` holds it for its whole life: one daemon
/// per repository), after creating `.prp-session/`.
pub fn lock(repo: &Path) -> Result<SessionLock, SessionFailure> {
    let session = SessionPaths::new(repo);
    prepare(&session)?;
    Ok(SessionLock::acquire(&session.lock()).map_err(SessionError::from)?)
}

/// Starts a run of the PRP at `prp` and drives it until it stops. `run_id` names it (see
/// [`new_run_id`]; the daemon chooses it before it starts).
pub async fn run(
    options: &Options,
    prp: &Path,
    start: Start,
    run_id: Option<String>,
) -> Result<RunRecord, SessionFailure> {
    let home = &options.repo;
    let session = SessionPaths::new(home);
    prepare(&session)?;
    sweep_finished_worktrees(options, &session);
    let prp_relative = relative_prp(home, prp)?;
    let run_id = run_id.unwrap_or_else(|| new_run_id("run"));
    let lock = run_lock(&session, &run_id)?;
    let prepared = prepare_run(options, &session, &start, &prp_relative, &run_id).and_then(
        |(context, worktree, base_branch)| {
            // The quarantine list as the run starts; a wrong one stops the run before it starts.
            let quarantine = Quarantine::load(&context.repo).map_err(SessionError::from)?;
            Ok((context, worktree, base_branch, quarantine))
        },
    );
    let (context, worktree, base_branch, quarantine) = match prepared {
        Ok(prepared) => prepared,
        Err(error) => {
            forget_unstarted(&session, &run_id);
            return Err(error);
        }
    };
    let mut record = RunRecord::new(
        run_id,
        prp_relative,
        crate::driver::unix_now(),
        &context.config.breaker,
    );
    record.flaky = FlakyLog::new(quarantine);
    if let Some(path) = &worktree
        && options.output == Output::StatusBlocks
    {
        eprintln!(
            "prpd: run {} works in a worktree of its own: {}",
            record.run_id,
            path.display()
        );
    }
    record.worktree = worktree;
    record.ship.base_branch = base_branch;
    record.ship.delivery = start.delivery;
    tracing::info!(
        run_id = %record.run_id,
        prp = %record.prp.display(),
        tree = %context.repo.display(),
        "run started"
    );
    Box::pin(drive_and_finish(
        options,
        Driver::new(context, record),
        &lock,
    ))
    .await
}

/// What a run needs before its record exists: its tree (a new worktree, or the user's), its
/// context, and the branch its pull request goes to.
fn prepare_run(
    options: &Options,
    session: &SessionPaths,
    start: &Start,
    prp_relative: &Path,
    run_id: &str,
) -> Result<(Context, Option<PathBuf>, Option<String>), SessionFailure> {
    let home = &options.repo;
    let (work, worktree, base_branch) = match &start.place {
        Place::InPlace { .. } => {
            refuse_a_second_run_in_place(session, home)?;
            (home.clone(), None, None)
        }
        Place::Worktree { base, base_branch } => {
            let mut base =
                worktree::resolve_base(home, base.as_deref()).map_err(SessionError::from)?;
            if base_branch.is_some() {
                base.branch.clone_from(base_branch);
            }
            let path = worktree::create(home, run_id, &base.commit).map_err(SessionError::from)?;
            let carried = worktree::uncommitted_inputs(home, prp_relative)
                .and_then(|files| worktree::carry(home, &path, &files).map(|()| files))
                .map_err(SessionError::from);
            if let Ok(files) = &carried
                && !files.is_empty()
            {
                tracing::info!(
                    files = %files.iter().map(|file| file.display().to_string()).collect::<Vec<_>>().join(", "),
                    "taken into the run's worktree uncommitted"
                );
            }
            if let Err(error) = carried {
                discard_worktree(home, &path);
                return Err(error.into());
            }
            (path.clone(), Some(path), base.branch)
        }
    };
    let context = match context(options, &work, prp_relative, None) {
        Ok(context) => context,
        Err(error) => {
            if let Some(path) = &worktree {
                discard_worktree(home, path);
            }
            return Err(error);
        }
    };
    if let Place::InPlace { dirty } = &start.place {
        check_uncommitted(home, *dirty)?;
    }
    if let Some(path) = &worktree
        && context.config.setup.is_empty()
    {
        let linked = worktree::link_dependencies(home, path);
        if !linked.is_empty() {
            tracing::info!(
                folders = %linked.iter().map(|folder| folder.display().to_string()).collect::<Vec<_>>().join(", "),
                "linked the installed dependencies into the run's worktree (no [run] setup)"
            );
        }
    }
    // Every verdict is about a snapshot: a directory git cannot open is refused before a run
    // record exists that could never go on.
    Snapshots::open(&work, run_id, &session.run(run_id).snapshot_index()).map_err(|error| {
        SessionError::NotARepository {
            repo: work.clone(),
            reason: std::error::Error::source(&error)
                .map_or_else(|| error.to_string(), ToString::to_string),
        }
    })?;
    Ok((context, worktree, base_branch))
}

/// Removes the folder of a run that did not start (no record was written), so a refused
/// start leaves nothing behind.
fn forget_unstarted(session: &SessionPaths, run_id: &str) {
    let paths = session.run(run_id);
    if !paths.record().exists() {
        let _ = std::fs::remove_dir_all(paths.dir());
        let _ = std::fs::remove_dir(session.runs());
    }
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

/// Continues run `run` (or the only unfinished run): after a crash from its last persisted
/// step, after an escalation as `resumption` says (a human's resume resets the QA attempt
/// counter; an open breaker gets one probe).
pub async fn resume(
    options: &Options,
    run: Option<&str>,
    input_changes: InputChanges,
    resumption: Resumption,
    budget: Option<f64>,
) -> Result<RunRecord, SessionFailure> {
    let home = &options.repo;
    let session = SessionPaths::new(home);
    prepare(&session)?;
    let run_id = chosen(&session, home, run, "resume", Choice::Unfinished)?;
    let lock = run_lock(&session, &run_id)?;
    stop_orphaned_agent(&session, &run_id);
    let mut record = verified(&session, home, &run_id)?;
    stop_escaped_processes(&record.run_id);
    if record.is_finished() {
        return Err(SessionError::Finished {
            run_id: record.run_id.clone(),
            state: record.state().to_string(),
            action: "resume",
        }
        .into());
    }
    if let Some(amount) = budget {
        raise_budget(&mut record, amount)?;
    }
    // A budget that stopped the run is named again if it still holds when the run goes on.
    record.budget_stop = None;
    let work = work_tree(home, &record)?;
    let base_prp = base_prp_text(&session, &work, &record)?;
    let context = context(options, &work, &record.prp, base_prp)?;
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
    Box::pin(drive_and_finish(options, driver, &lock)).await
}

/// Drives `driver` until it stops; a run that ended (SHIPPED, ABORTED) leaves its worktree
/// unless the configuration keeps it.
async fn drive_and_finish(
    options: &Options,
    mut driver: Driver,
    _lock: &SessionLock,
) -> Result<RunRecord, SessionFailure> {
    let scope = run_scope(driver.record());
    owner::scope(scope, driver.drive()).await?;
    let record = driver.record().clone();
    release_worktree(options, &record);
    Ok(record)
}

/// Takes the lock of run `run_id`, after creating its folder.
fn run_lock(session: &SessionPaths, run_id: &str) -> Result<SessionLock, SessionFailure> {
    let paths = session.run(run_id);
    std::fs::create_dir_all(paths.dir()).map_err(|source| SessionFailure::Io {
        path: paths.dir().to_path_buf(),
        source,
    })?;
    Ok(SessionLock::acquire(&paths.lock()).map_err(SessionError::from)?)
}

/// Refuses a run in place while another unfinished one works in the user's tree.
fn refuse_a_second_run_in_place(session: &SessionPaths, home: &Path) -> Result<(), SessionFailure> {
    for run_id in session.run_ids().map_err(|source| SessionFailure::Io {
        path: session.runs(),
        source,
    })? {
        if let Some(record) = RunRecord::load(&session.run(&run_id).record())?
            && !record.is_finished()
            && record.worktree.is_none()
        {
            return Err(SessionError::InPlaceBusy {
                run_id,
                repo: home.to_path_buf(),
            }
            .into());
        }
    }
    Ok(())
}

/// Refuses a working tree with uncommitted changes unless `dirty` allows them (then they are
/// named in the log): an in-place run's base is the working tree, and the user's own work must
/// not land in the pull request.
fn check_uncommitted(repo: &Path, dirty: DirtyTree) -> Result<(), SessionFailure> {
    let mut files = prpd_ship::git::uncommitted(repo).map_err(|source| SessionError::Status {
        repo: repo.to_path_buf(),
        source: Box::new(source),
    })?;
    if files.is_empty() {
        return Ok(());
    }
    if dirty == DirtyTree::Allow {
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

/// What iteration `iteration` of run `run` (default: the only unfinished run, else the latest)
/// changed (default: its last iteration), as a unified diff between the snapshot before it and
/// the one it ended on (`prpd diff`).
pub fn diff(
    repo: &Path,
    run: Option<&str>,
    iteration: Option<u32>,
) -> Result<String, SessionFailure> {
    let session = SessionPaths::new(repo);
    let run_id = chosen(&session, repo, run, "diff", Choice::Latest)?;
    let record = verified(&session, repo, &run_id)?;
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
        &session.run(&record.run_id).snapshot_index(),
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

/// Aborts run `run` (or the only unfinished run). Needs no valid configuration or PRP: an
/// abort must work even when what made the run fail is a broken file.
pub fn abort(options: &Options, run: Option<&str>) -> Result<Aborted, SessionFailure> {
    let home = &options.repo;
    let session = SessionPaths::new(home);
    prepare(&session)?;
    let run_id = chosen(&session, home, run, "abort", Choice::Unfinished)?;
    let paths = session.run(&run_id);
    let lock = match SessionLock::acquire(&paths.lock()) {
        Ok(lock) => lock,
        Err(LockError::Busy { .. }) => {
            request_abort(&session, &run_id)?;
            return Ok(Aborted::Requested { run_id });
        }
        Err(error) => return Err(SessionError::from(error).into()),
    };
    stop_orphaned_agent(&session, &run_id);
    // A record that is not prpd's own is still aborted: abort is the way out the refusal names.
    let mut record = RunRecord::load(&paths.record())?.ok_or_else(|| SessionError::NoSuchRun {
        run_id: run_id.clone(),
        repo: home.clone(),
    })?;
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
        // No agent runs again: the held-out tests go back into the run's tree.
        let tree = record.worktree.clone().unwrap_or_else(|| home.clone());
        crate::driver::put_back_held_out(paths.dir(), &tree, &mut record.holdout)?;
        // The abort's only effect is the summary, written here; nothing is left to carry out.
        record.pending.clear();
        seal(home, &session, &record)?;
        record.save(&paths.record())?;
        let unsealed = Snapshots::open(home, &run_id, &paths.snapshot_index())
            .and_then(|snapshots| snapshots.drop_previous_seal());
        if let Err(error) = unsealed {
            tracing::warn!(%error, "could not drop the seal of the aborted run's earlier record");
        }
        crate::driver::write_summary(&session, &record)?;
        release_snapshots(options, &session, &record);
        release_worktree(options, &record);
    }
    drop(lock);
    Ok(Aborted::Now { run_id })
}

/// Asks the prpd that drives run `run_id` to abort it after its current step.
pub fn request_abort(session: &SessionPaths, run_id: &str) -> Result<(), SessionFailure> {
    let path = session.run(run_id).abort_request();
    std::fs::write(&path, run_id).map_err(|source| SessionFailure::Io { path, source })
}

/// Seals the aborted run's record before it is written, like every record prpd writes (see
/// `snapshot/seal.rs`), so that the unfinished record before it cannot be put back and
/// resumed. An abort must work with a broken repository, so a seal that cannot be written is
/// only logged: the record is finished either way.
fn seal(home: &Path, session: &SessionPaths, record: &RunRecord) -> Result<(), SessionFailure> {
    let path = session.run(&record.run_id).record();
    let json = record.to_json(&path)?;
    let sealed = Snapshots::open(
        home,
        &record.run_id,
        &session.run(&record.run_id).snapshot_index(),
    )
    .and_then(|snapshots| snapshots.seal_record(json.as_bytes()));
    if let Err(error) = sealed {
        tracing::warn!(%error, "could not seal the aborted run's record");
    }
    Ok(())
}

/// Removes an aborted run's snapshot refs unless the config keeps them (its record's seal
/// stays). An abort must work with a broken config or repository, so a failure here is only
/// logged.
fn release_snapshots(options: &Options, session: &SessionPaths, record: &RunRecord) {
    let keep = Config::load(&options.repo, options.config.as_deref())
        .is_ok_and(|config| config.snapshots == SnapshotRetention::Keep);
    if keep {
        return;
    }
    let removed = Snapshots::open(
        &options.repo,
        &record.run_id,
        &session.run(&record.run_id).snapshot_index(),
    )
    .and_then(|snapshots| snapshots.remove_snapshot_refs());
    if let Err(error) = removed {
        tracing::warn!(%error, "could not remove the aborted run's snapshot refs");
    }
}

fn prepare(session: &SessionPaths) -> Result<(), SessionFailure> {
    session.ensure().map_err(|source| SessionFailure::Io {
        path: session.root().to_path_buf(),
        source,
    })
}

/// Stops an agent that a killed predecessor left running in run `run_id`, so that it cannot
/// edit the tree while this prpd runs the interrupted iteration again, and drops an abort
/// request that no prpd was left to honour (resuming is the newer decision). Call with the
/// run's lock held.
fn stop_orphaned_agent(session: &SessionPaths, run_id: &str) {
    let paths = session.run(run_id);
    let _ = std::fs::remove_file(paths.abort_request());
    if let Some(pgid) = prpd_base::process::stop_orphaned_group(&paths.agent_group()) {
        tracing::warn!(
            pgid,
            "stopped an agent left running by a prpd that was killed"
        );
    }
}

/// Stops what the run's agents left running when the prpd driving them was killed with
/// `kill -9` (and so could not stop it): every process that carries the run's `PRPD_RUN_ID`,
/// `setsid` and double-forked ones included.
fn stop_escaped_processes(run_id: &str) {
    let stopped = prpd_base::process::stop_marked("PRPD_RUN_ID", run_id);
    if !stopped.is_empty() {
        tracing::warn!(
            stopped = %stopped.iter().map(ToString::to_string).collect::<Vec<_>>().join(", "),
            "stopped processes an agent of this run left running before prpd was killed"
        );
    }
}

/// The PRP as the run's base snapshot holds it: a run is judged against the PRP it started
/// from, whatever an agent did to the file since.
fn base_prp_text(
    session: &SessionPaths,
    work: &Path,
    record: &RunRecord,
) -> Result<Option<String>, SessionFailure> {
    let Some(base) = &record.snapshots.base else {
        return Ok(None);
    };
    let snapshots = Snapshots::open(
        work,
        &record.run_id,
        &session.run(&record.run_id).snapshot_index(),
    )?;
    Ok(snapshots.read(base, &record.prp)?)
}

/// Loads and validates everything a run in `work` needs; refuses a repository without a test
/// command.
fn context(
    options: &Options,
    work: &Path,
    prp_relative: &Path,
    base_prp: Option<String>,
) -> Result<Context, SessionFailure> {
    let repo = work.to_path_buf();
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
        session: SessionPaths::new(&options.repo),
        home: options.repo.clone(),
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
