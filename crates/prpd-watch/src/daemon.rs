//! The daemon's loop: the one owner of the repository's runs while `prpd watch` lives.
//!
//! Theory of operation. The daemon holds the repository's daemon lock for its whole life (a
//! second daemon is refused) and drives up to `[watch] parallel` runs at once, each in its own
//! worktree with its own record, lock, breakers and guardrails. Each pass of its loop asks
//! "what is there to start?" ([`Daemon::next_work`]) while a slot is free: continue an
//! interrupted run, resume an escalated one (a human asked, a `resume` file appeared in the
//! run's folder, or an open breaker's cooldown ended), start the oldest queued PRP, or — with
//! no run going — re-run QA after source changes. Then it waits for whichever comes first: a
//! run that stops, a request on the control socket, a batch of file changes (a PRP dropped is
//! queued), the next look for `resume` files, or SIGTERM / Ctrl-C. A stop drops every run — the
//! running agents' and checks' process groups die with them — and what escaped the groups is
//! stopped; each run record on disk is the last step prpd saved, which the next start resumes.
//!
//! Sharing the machine. Across runs, at most `[watch] max_agents` agent processes and
//! `[watch] max_checks` check processes run at once (`prpd-base/src/process/slots.rs`); a run waits
//! for a slot rather than oversubscribe a small machine.
//!
//! Persistence. Each run's record is saved by its driver before each effect; the queue is
//! saved whenever it changes. A queued PRP keeps its entry, marked with its run's id, until
//! that run has a record, so a kill in between starts the same run again.

use std::collections::{BTreeMap, BTreeSet};
use std::os::linux::net::SocketAddrExt as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures_util::StreamExt as _;
use futures_util::stream::FuturesUnordered;
use tokio::sync::mpsc;

use crate::asked_run::asked_run;
use crate::config::{self, WatchConfig};
use crate::control::{self, ControlError, DaemonView, Incoming, Reply, Request};
use crate::cooldown;
use crate::files::{FileWatcher, WatchError};
use crate::notify_command;
use crate::queue::{Queue, QueueError};
use crate::trigger::Layout;
use prpd_base::config_file::ConfigError;
use prpd_base::lock::{self, Holder, SessionLock};
use prpd_base::paths::{SessionPaths, new_run_id};
use prpd_base::{process, shutdown};
use prpd_qa::standalone::{self, QaInputs, StandaloneRequest};
use prpd_run::driver::{InputChanges, Output, unix_now};
use prpd_run::record::{Delivery, RunRecord};
use prpd_run::session::{self, Listed, Place, Resumption, SessionFailure, Start};
use prpd_run::worktree;

/// How often the loop looks for `resume` files and elapsed cooldowns while a run waits for a
/// human.
const RESUME_FILE_POLL: Duration = Duration::from_secs(1);

/// The daemon could not start, or its state could not be kept.
#[derive(Debug, thiserror::Error)]
pub enum DaemonError {
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error(transparent)]
    Watch(#[from] WatchError),
    #[error(transparent)]
    Control(#[from] ControlError),
    #[error(transparent)]
    Queue(#[from] QueueError),
}

/// What `prpd watch` was given.
#[derive(Debug, Clone)]
pub struct Options {
    /// The repository (canonical).
    pub repo: PathBuf,
    /// `--config FILE`, when not the repository's prpd.toml.
    pub config: Option<PathBuf>,
}

/// One piece of work the loop starts.
#[derive(Debug)]
enum Work {
    /// Continue run `run_id` of `prp` (after a stop, or an escalation as `resumption` says).
    Resume {
        run_id: String,
        prp: PathBuf,
        resumption: Resumption,
        input_changes: InputChanges,
        /// A human's raise of the budget that stopped the run (`prpd resume --budget`).
        budget: Option<f64>,
    },
    /// Start run `run_id` of this PRP (relative to the repository) at `base`, whose pull
    /// request goes to `base_branch`.
    Start {
        run_id: String,
        prp: PathBuf,
        base: Option<String>,
        base_branch: Option<String>,
    },
    /// Re-run QA after source changes.
    Qa,
}

/// What a piece of work produced.
#[derive(Debug)]
enum Finished {
    Run(Box<RunRecord>),
    Qa(PathBuf),
}

/// Why a piece of work failed.
#[derive(Debug)]
enum Failure {
    Session(SessionFailure),
    Qa(anyhow::Error),
}

/// A piece of work as it ends: the run it was (`None`: QA) and how it ended.
type Ending = (Option<String>, Result<Finished, Failure>);

type Task = std::pin::Pin<Box<dyn Future<Output = Ending>>>;

/// What woke the loop.
enum Wake {
    Stop,
    Ended(Ending),
    Changes(Vec<PathBuf>),
    Request(Incoming),
    Tick,
}

/// The daemon's state; see the module documentation.
#[derive(Debug)]
pub struct Daemon {
    _lock: SessionLock,
    options: Options,
    session: SessionPaths,
    watch: WatchConfig,
    notify: Option<Vec<String>>,
    cooldown: Duration,
    /// What QA on change is configured by: the last files that loaded.
    qa_inputs: Arc<QaInputs>,
    layout: Layout,
    queue: Queue,
    watcher: FileWatcher,
    changes: mpsc::UnboundedReceiver<Vec<PathBuf>>,
    requests: mpsc::Receiver<Incoming>,
    /// The runs being driven now: id → PRP.
    driving: BTreeMap<String, PathBuf>,
    /// Whether QA after source changes runs now.
    qa_running: bool,
    last_report: Option<PathBuf>,
    /// Why a run cannot go on without a human, by run id.
    blocked: BTreeMap<String, String>,
    /// A human's `prpd resume` waiting for a free slot, by run id.
    human_resume: BTreeMap<String, (InputChanges, Option<f64>)>,
    /// Runs seen finished with a trusted record: their records are not read again.
    settled: BTreeSet<String>,
    /// The cooldown end already used for a probe, by run id (each escalation gets one).
    probed_cooldown: BTreeMap<String, u64>,
    /// Sources changed while idle: QA runs again when `qa_on_change` is on.
    sources_changed: bool,
    /// Until then, source changes are the last work's own edits arriving late.
    quiet_until: Instant,
}

impl Daemon {
    /// Starts the daemon on the repository whose daemon lock is `lock`: the configuration must
    /// load, the control socket opens, the watcher starts, the queue is read.
    pub fn start(lock: SessionLock, options: Options) -> Result<Daemon, DaemonError> {
        let session = SessionPaths::new(&options.repo);
        let (config, daemon, qa_inputs) = config::load(&options.repo, options.config.as_deref())?;
        let listener = control::listen(&session.socket())?;
        let (request_sender, requests) = mpsc::channel(16);
        tokio::spawn(control::serve(listener, request_sender));
        let (watcher, changes) = start_watcher(&options.repo, daemon.watch.debounce)?;
        let mut queue = Queue::load(&session.queue())?;
        let recorded: BTreeSet<String> =
            session.run_ids().unwrap_or_default().into_iter().collect();
        queue.restarted(&recorded);
        process::slots::limit(daemon.watch.max_agents, daemon.watch.max_checks);
        let layout = Layout {
            repo: options.repo.clone(),
            prp_dir: daemon.watch.prp_dir.clone(),
            config: options.config.clone(),
        };
        tracing::info!(
            repo = %options.repo.display(),
            directories = watcher.watched_dirs(),
            prp_dir = %daemon.watch.prp_dir.display(),
            parallel = daemon.watch.parallel,
            queued = queue.waiting.len(),
            "watching"
        );
        Ok(Daemon {
            _lock: lock,
            session,
            notify: daemon.notify.command.clone(),
            cooldown: config.breaker.cooldown,
            qa_inputs: Arc::new(qa_inputs),
            watch: daemon.watch,
            layout,
            queue,
            watcher,
            changes,
            requests,
            driving: BTreeMap::new(),
            qa_running: false,
            last_report: None,
            blocked: BTreeMap::new(),
            human_resume: BTreeMap::new(),
            probed_cooldown: BTreeMap::new(),
            settled: BTreeSet::new(),
            sources_changed: false,
            quiet_until: Instant::now(),
            options,
        })
    }

    /// Runs until SIGTERM or Ctrl-C; then drops the work in flight, stops what escaped its
    /// process groups and removes the socket.
    pub async fn run(mut self) -> Result<(), DaemonError> {
        let shutdown = async {
            shutdown::requested().await;
            tracing::info!("stop requested");
        };
        tokio::pin!(shutdown);
        notify_systemd_ready();
        let mut tasks: FuturesUnordered<Task> = FuturesUnordered::new();
        loop {
            let runs = self.unsettled_runs();
            while let Some(work) = self.next_work(&runs) {
                tasks.push(self.begin(work));
            }
            let waits_for_human = runs
                .iter()
                .any(|listed| matches!(&listed.record, Ok(record) if record.awaits_human()));
            let poll = if waits_for_human {
                RESUME_FILE_POLL
            } else {
                Duration::from_secs(24 * 3600)
            };
            let woke = tokio::select! {
                () = shutdown.as_mut() => Wake::Stop,
                Some(ending) = tasks.next(), if !tasks.is_empty() => Wake::Ended(ending),
                Some(batch) = self.changes.recv() => Wake::Changes(batch),
                Some(incoming) = self.requests.recv() => Wake::Request(incoming),
                () = tokio::time::sleep(poll) => Wake::Tick,
            };
            match woke {
                Wake::Stop => break,
                Wake::Ended((run_id, ended)) => self.finished(run_id, ended).await?,
                Wake::Changes(batch) => self.on_changes(&batch)?,
                Wake::Request((request, reply)) => {
                    let answer = self.on_request(request)?;
                    let _ = reply.send(answer);
                }
                Wake::Tick => {}
            }
        }
        drop(tasks);
        let leftovers = process::stop_leftovers().await;
        for (started_by, stopped) in process::by_starter(&leftovers) {
            tracing::warn!(%stopped, "{}", started_by.stopped_message());
        }
        let _ = std::fs::remove_file(self.session.socket());
        tracing::info!("stopped; the runs are saved and the next `prpd watch` resumes them");
        Ok(())
    }

    /// What to start now, while a slot is free, in order: runs that have work left, then the
    /// queue, then (with nothing else going) QA.
    fn next_work(&mut self, runs: &[Listed]) -> Option<Work> {
        if self.qa_running || self.driving.len() >= self.watch.parallel {
            return None;
        }
        for listed in runs {
            if self.driving.contains_key(&listed.run_id) {
                continue;
            }
            if let Some(work) = self.resumption(listed) {
                return Some(work);
            }
        }
        let run_id = new_run_id("run");
        if let Some(queued) = self.queue.start_next(&run_id) {
            // Saved before the run starts: a kill in between starts this same run again.
            if let Err(error) = self.queue.save(&self.session.queue()) {
                tracing::error!(%error, "the queue cannot be saved");
            }
            return Some(Work::Start {
                run_id: queued.run_id.unwrap_or(run_id),
                prp: queued.prp,
                base: queued.base,
                base_branch: queued.base_branch,
            });
        }
        if self.driving.is_empty() && self.sources_changed && self.watch.qa_on_change {
            self.sources_changed = false;
            return Some(Work::Qa);
        }
        if self.driving.is_empty() {
            self.sources_changed = false;
        }
        None
    }

    /// How run `listed` continues now, if it does.
    fn resumption(&mut self, listed: &Listed) -> Option<Work> {
        let run_id = &listed.run_id;
        let record = match &listed.record {
            Ok(record) if !record.is_finished() => record,
            Ok(_) => {
                self.human_resume.remove(run_id);
                return None;
            }
            Err(error) => {
                // Nothing goes on from a record prpd cannot read or vouch for.
                self.blocked
                    .entry(run_id.clone())
                    .or_insert_with(|| described(error));
                return None;
            }
        };
        // A run another prpd drives (a foreground `prpd run`) is that prpd's.
        if lock::holder(&self.session.run(run_id).lock())
            .is_ok_and(|holder| holder != Holder::Nobody)
        {
            return None;
        }
        let resume = |resumption, input_changes, budget| Work::Resume {
            run_id: run_id.clone(),
            prp: record.prp.clone(),
            resumption,
            input_changes,
            budget,
        };
        if let Some((input_changes, budget)) = self.human_resume.remove(run_id) {
            self.blocked.remove(run_id);
            return Some(resume(Resumption::Human, input_changes, budget));
        }
        if self.blocked.contains_key(run_id) {
            return None;
        }
        if !record.awaits_human() {
            return Some(resume(Resumption::Human, InputChanges::Refuse, None));
        }
        let resume_file = self.session.run_dir(run_id).join("resume");
        if std::fs::remove_file(&resume_file).is_ok() {
            tracing::info!(file = %resume_file.display(), "resume file found");
            return Some(resume(Resumption::Human, InputChanges::Refuse, None));
        }
        if let Some(ends_at) = cooldown::ends_at(record, self.cooldown)
            && ends_at <= unix_now()
            && self.probed_cooldown.get(run_id) != Some(&ends_at)
        {
            self.probed_cooldown.insert(run_id.clone(), ends_at);
            tracing::info!(%run_id, "breaker cooldown elapsed: one probe iteration");
            return Some(resume(Resumption::Cooldown, InputChanges::Refuse, None));
        }
        None
    }

    /// Starts `work` and returns the future that ends with it.
    fn begin(&mut self, work: Work) -> Task {
        let options = session::Options {
            repo: self.options.repo.clone(),
            config: self.options.config.clone(),
            output: Output::Quiet,
        };
        match work {
            Work::Resume {
                run_id,
                prp,
                resumption,
                input_changes,
                budget,
            } => {
                tracing::info!(%run_id, "resuming a run");
                self.driving.insert(run_id.clone(), prp);
                Box::pin(async move {
                    let resumed =
                        session::resume(&options, Some(&run_id), input_changes, resumption, budget);
                    let ended = Box::pin(resumed)
                        .await
                        .map(|record| Finished::Run(Box::new(record)))
                        .map_err(Failure::Session);
                    (Some(run_id), ended)
                })
            }
            Work::Start {
                run_id,
                prp,
                base,
                base_branch,
            } => {
                tracing::info!(%run_id, prp = %prp.display(), "starting a run");
                self.driving.insert(run_id.clone(), prp.clone());
                let start = Start {
                    place: Place::Worktree { base, base_branch },
                    delivery: Delivery::Live,
                };
                let absolute = self.options.repo.join(&prp);
                Box::pin(async move {
                    let started = session::run(&options, &absolute, start, Some(run_id.clone()));
                    let ended = Box::pin(started)
                        .await
                        .map(|record| Finished::Run(Box::new(record)))
                        .map_err(Failure::Session);
                    (Some(run_id), ended)
                })
            }
            Work::Qa => {
                tracing::info!("re-running QA after source changes");
                self.qa_running = true;
                let request = StandaloneRequest {
                    repo: self.options.repo.clone(),
                    config: self.options.config.clone(),
                    prp: None,
                    base: None,
                    jobs: None,
                    report: None,
                    path: None,
                };
                let inputs = Arc::clone(&self.qa_inputs);
                Box::pin(async move {
                    let ended = standalone::check_now(&request, &inputs)
                        .await
                        .map(|result| Finished::Qa(result.run_dir.join("qa-report.md")))
                        .map_err(Failure::Qa);
                    (None, ended)
                })
            }
        }
    }

    /// Logs how the work ended and tells a human when a run needs one.
    async fn finished(
        &mut self,
        run_id: Option<String>,
        ended: Result<Finished, Failure>,
    ) -> Result<(), DaemonError> {
        self.quiet_until = Instant::now() + self.watch.debounce * 2 + Duration::from_millis(200);
        let prp = if let Some(run_id) = &run_id {
            self.queue.started(run_id);
            self.queue.save(&self.session.queue())?;
            self.driving.remove(run_id)
        } else {
            self.qa_running = false;
            None
        };
        match ended {
            Ok(Finished::Qa(report)) => {
                tracing::info!(report = %report.display(), "QA re-run after source changes");
                self.last_report = Some(report);
            }
            Ok(Finished::Run(record)) => {
                let state = record.state().to_string();
                if record.awaits_human() {
                    let report = record.escalation_report.clone().unwrap_or_else(|| {
                        self.session.run_dir(&record.run_id).join("escalation.md")
                    });
                    tracing::error!(
                        run_id = %record.run_id,
                        report = %report.display(),
                        worktree = %record.worktree.as_deref().unwrap_or(&self.options.repo).display(),
                        "run escalated: it needs a human (read the report, then `prpd resume {}` or `prpd abort {}`)",
                        record.run_id,
                        record.run_id
                    );
                    self.last_report = Some(report.clone());
                    if let Some(command) = &self.notify {
                        notify_command::tell(&self.options.repo, command, &report).await;
                    }
                } else {
                    self.last_report.clone_from(&record.last_qa_report);
                    tracing::info!(run_id = %record.run_id, %state, "run ended");
                }
            }
            Err(Failure::Session(error)) => {
                let message = format!("{:#}", anyhow::Error::from(error));
                let run_id = run_id.unwrap_or_default();
                let has_record = self.session.run(&run_id).record().is_file();
                if has_record {
                    tracing::error!(%run_id, error = %message, "the run cannot go on; fix it, then `prpd resume` (or `prpd abort`)");
                    self.blocked.insert(run_id, message);
                } else {
                    let prp = prp.filter(|prp| !prp.as_os_str().is_empty());
                    tracing::error!(prp = %prp_name(prp.as_deref()), error = %message, "the run did not start");
                }
            }
            Err(Failure::Qa(error)) => {
                tracing::error!(error = %format!("{error:#}"), "QA after source changes failed");
            }
        }
        Ok(())
    }

    /// Sorts a batch of changed files.
    fn on_changes(&mut self, batch: &[PathBuf]) -> Result<(), DaemonError> {
        let triggers = self.layout.triggers(batch);
        tracing::debug!(paths = batch.len(), ?triggers, "file changes");
        if triggers.config {
            self.reload_config()?;
        }
        let unfinished: Vec<PathBuf> = if triggers.prps.is_empty() {
            Vec::new()
        } else {
            session::unsettled(&self.options.repo, &self.settled)
                .unwrap_or_default()
                .into_iter()
                .filter_map(|listed| listed.record.ok())
                .filter(|record| !record.is_finished())
                .map(|record| record.prp)
                .collect()
        };
        for prp in triggers.prps {
            if unfinished.contains(&prp) {
                tracing::debug!(prp = %prp.display(), "a PRP with an unfinished run changed: that run keeps the PRP it started with");
                continue;
            }
            if !self.options.repo.join(&prp).is_file() {
                continue;
            }
            self.queue_prp(&prp)?;
        }
        let idle = self.driving.is_empty() && !self.qa_running;
        if triggers.sources && idle && Instant::now() >= self.quiet_until {
            self.sources_changed = true;
        }
        Ok(())
    }

    fn queue_prp(&mut self, prp: &Path) -> Result<bool, DaemonError> {
        let base = worktree::resolve_base(&self.options.repo, None).ok();
        let added = self.queue.push(prp, unix_now(), base);
        if added {
            self.queue.save(&self.session.queue())?;
            tracing::info!(prp = %prp.display(), waiting = self.queue.prps().len(), "PRP queued");
        }
        Ok(added)
    }

    /// Reloads prpd.toml, the checklist and the tools mapping; a broken file keeps the
    /// configuration the daemon has.
    fn reload_config(&mut self) -> Result<(), DaemonError> {
        let (config, daemon, qa_inputs) = match config::load(
            &self.options.repo,
            self.options.config.as_deref(),
        ) {
            Ok(loaded) => loaded,
            Err(error) => {
                tracing::error!(%error, "configuration not reloaded: the daemon keeps the previous one");
                return Ok(());
            }
        };
        if daemon.watch.debounce != self.watch.debounce {
            let (watcher, changes) = start_watcher(&self.options.repo, daemon.watch.debounce)?;
            self.watcher = watcher;
            self.changes = changes;
        }
        process::slots::limit(daemon.watch.max_agents, daemon.watch.max_checks);
        self.layout.prp_dir.clone_from(&daemon.watch.prp_dir);
        self.notify = daemon.notify.command;
        self.cooldown = config.breaker.cooldown;
        self.qa_inputs = Arc::new(qa_inputs);
        self.watch = daemon.watch;
        tracing::info!("configuration reloaded");
        Ok(())
    }

    /// Answers a request.
    fn on_request(&mut self, request: Request) -> Result<Reply, DaemonError> {
        let (ok, message) = match request {
            Request::Status => (true, self.activity()),
            Request::Queue { add: None } => {
                (true, format!("{} PRP(s) waiting", self.queue.prps().len()))
            }
            Request::Queue { add: Some(prp) } => self.add_to_queue(&prp)?,
            Request::Resume {
                run,
                reload_config,
                budget,
            } => self.resume(run.as_deref(), reload_config, budget),
            Request::Abort { run } => self.abort(run.as_deref()),
        };
        Ok(Reply {
            ok,
            message,
            daemon: self.view(),
        })
    }

    fn add_to_queue(&mut self, prp: &Path) -> Result<(bool, String), DaemonError> {
        let relative = prp.strip_prefix(&self.options.repo).unwrap_or(prp);
        if !self.options.repo.join(relative).is_file() {
            return Ok((
                false,
                format!("{}: no such file in the repository", relative.display()),
            ));
        }
        Ok(if self.queue_prp(relative)? {
            (true, format!("{} queued", relative.display()))
        } else {
            (true, format!("{} is already queued", relative.display()))
        })
    }

    fn resume(
        &mut self,
        run: Option<&str>,
        reload_config: bool,
        budget: Option<f64>,
    ) -> (bool, String) {
        let run_id = match asked_run(&self.options.repo, run, "resume") {
            Ok(run_id) => run_id,
            Err(refusal) => return (false, refusal),
        };
        if self.driving.contains_key(&run_id) {
            return (false, format!("run {run_id} is running"));
        }
        if budget.is_some() {
            let record = RunRecord::load(&self.session.run(&run_id).record());
            let refusal = match record {
                Ok(Some(record)) => session::budget_to_raise(&record)
                    .err()
                    .map(|error| error.to_string()),
                Ok(None) => Some(format!("run {run_id} has no record")),
                Err(error) => Some(format!("{:#}", anyhow::Error::from(error))),
            };
            if let Some(refusal) = refusal {
                return (false, refusal);
            }
        }
        self.human_resume.insert(
            run_id.clone(),
            (
                if reload_config {
                    InputChanges::Reload
                } else {
                    InputChanges::Refuse
                },
                budget,
            ),
        );
        if self.driving.len() >= self.watch.parallel {
            return (
                true,
                format!("run {run_id} resumes when one of the running runs ends"),
            );
        }
        (true, format!("run {run_id} resumes now"))
    }

    fn abort(&mut self, run: Option<&str>) -> (bool, String) {
        let run_id = match asked_run(&self.options.repo, run, "abort") {
            Ok(run_id) => run_id,
            Err(refusal) => return (false, refusal),
        };
        if self.driving.contains_key(&run_id) {
            return match session::request_abort(&self.session, &run_id) {
                Ok(()) => (true, format!("run {run_id} aborts after its current step")),
                Err(error) => (false, format!("{:#}", anyhow::Error::from(error))),
            };
        }
        let options = session::Options {
            repo: self.options.repo.clone(),
            config: self.options.config.clone(),
            output: Output::Quiet,
        };
        match session::abort(&options, Some(&run_id)) {
            Ok(_) => {
                self.blocked.remove(&run_id);
                self.human_resume.remove(&run_id);
                tracing::info!(%run_id, "run aborted by a human");
                (true, format!("run {run_id} aborted"))
            }
            Err(error) => (false, format!("{:#}", anyhow::Error::from(error))),
        }
    }

    /// The runs not yet seen finished; a run seen finished and trusted is settled, and its record
    /// is not read again.
    fn unsettled_runs(&mut self) -> Vec<Listed> {
        let runs = session::unsettled(&self.options.repo, &self.settled).unwrap_or_default();
        for listed in &runs {
            if matches!(&listed.record, Ok(record) if record.is_finished()) {
                self.settled.insert(listed.run_id.clone());
            }
        }
        runs
    }

    /// What the daemon does, in a few words, for `prpd status`.
    fn activity(&self) -> String {
        let runs: Vec<&str> = self.driving.keys().map(String::as_str).collect();
        match (runs.as_slice(), self.qa_running) {
            ([], true) => "re-running QA after source changes".to_owned(),
            ([], false) if !self.blocked.is_empty() => format!(
                "blocked on {} (prpd resume or prpd abort)",
                self.blocked.keys().cloned().collect::<Vec<_>>().join(", ")
            ),
            ([], false) => "idle".to_owned(),
            (runs, _) => format!(
                "driving {} of at most {} runs: {}",
                runs.len(),
                self.watch.parallel,
                runs.join(", ")
            ),
        }
    }

    fn view(&self) -> DaemonView {
        let cooldown_ends_at = session::unsettled(&self.options.repo, &self.settled)
            .unwrap_or_default()
            .into_iter()
            .filter_map(|listed| {
                let record = listed.record.ok()?;
                Some((listed.run_id, cooldown::ends_at(&record, self.cooldown)?))
            })
            .collect();
        DaemonView {
            pid: std::process::id(),
            activity: self.activity(),
            driving: self.driving.keys().cloned().collect(),
            parallel: self.watch.parallel,
            queue: self.queue.prps(),
            last_report: self.last_report.clone(),
            cooldown_ends_at,
            blocked: self.blocked.clone(),
        }
    }
}

/// An error with its causes, as one line.
fn described(error: &SessionFailure) -> String {
    let mut text = error.to_string();
    let mut source = std::error::Error::source(error);
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

fn prp_name(prp: Option<&Path>) -> String {
    prp.map_or_else(
        || "a queued PRP".to_owned(),
        |prp| prp.display().to_string(),
    )
}

fn start_watcher(
    repo: &Path,
    debounce: Duration,
) -> Result<(FileWatcher, mpsc::UnboundedReceiver<Vec<PathBuf>>), WatchError> {
    let (sender, receiver) = mpsc::unbounded_channel();
    let watcher = FileWatcher::start(repo, debounce, sender)?;
    Ok((watcher, receiver))
}

/// Tells systemd (a `Type=notify` unit) that the daemon is up, when it runs under one.
fn notify_systemd_ready() {
    let Some(socket) = std::env::var_os("NOTIFY_SOCKET") else {
        return;
    };
    let Ok(datagram) = std::os::unix::net::UnixDatagram::unbound() else {
        return;
    };
    // An abstract socket's name starts with `@` (Linux); any other is a path.
    let sent = match socket.as_encoded_bytes().strip_prefix(b"@") {
        Some(name) => std::os::unix::net::SocketAddr::from_abstract_name(name)
            .and_then(|address| datagram.send_to_addr(b"READY=1", &address)),
        None => datagram.send_to(b"READY=1", &socket),
    };
    if let Err(error) = sent {
        tracing::warn!(%error, "cannot tell systemd the daemon is ready");
    }
}
