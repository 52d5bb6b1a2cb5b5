//! The daemon's loop: the only owner of the repository's run while `prpd watch` lives.
//!
//! Theory of operation. The daemon holds the repository's lock for its whole life. Its loop
//! asks "what is there to do?" ([`Daemon::next_work`]): continue an interrupted run, resume an
//! escalated one (a human asked, a `resume` file appeared in the run's folder, or an open
//! breaker's cooldown ended), start the oldest queued PRP, or re-run QA after source changes.
//! It carries out one piece of work at a time. While the work goes, the loop keeps answering
//! the control socket and sorting file changes: a PRP dropped meanwhile is queued; source
//! changes are the agents' own edits and trigger nothing. SIGTERM or Ctrl-C drops the work —
//! the running agent's or check's process group dies with it — and what escaped the group is
//! stopped; the run record on disk is the last step prpd saved, which the next start resumes.
//!
//! Persistence. The run record is saved by the driver before each effect; the queue is saved
//! whenever a PRP joins it. A PRP leaves the saved queue when its run has a record: an entry
//! queued before the current run of the same PRP started is that run ([`Daemon::start`]).

use std::os::linux::net::SocketAddrExt as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::mpsc;

use crate::base::config::{Config, WatchConfig};
use crate::base::config_file::ConfigError;
use crate::base::lock::SessionLock;
use crate::base::paths::SessionPaths;
use crate::base::{process, shutdown};
use crate::qa::standalone::{self, QaInputs, StandaloneRequest};
use crate::run::driver::{InputChanges, Output, unix_now};
use crate::run::record::{Delivery, RunError, RunRecord};
use crate::run::session::{self, DirtyTree, Resumption, SessionFailure, Start};
use crate::watch::control::{self, ControlError, DaemonView, Incoming, Reply, Request};
use crate::watch::cooldown;
use crate::watch::files::{FileWatcher, WatchError};
use crate::watch::notify_command;
use crate::watch::queue::{Queue, QueueError};
use crate::watch::trigger::Layout;

/// How often the idle loop looks for a `resume` file while a run waits for a human.
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

/// One piece of work of the loop.
#[derive(Debug)]
enum Work {
    /// Continue the current run of `prp` (after a stop, or an escalation as `resumption` says).
    Resume {
        prp: PathBuf,
        resumption: Resumption,
        input_changes: InputChanges,
    },
    /// Start a run of this PRP (relative to the repository).
    Start { prp: PathBuf },
    /// Re-run QA after source changes.
    Qa,
}

/// How a piece of work ended.
#[derive(Debug, PartialEq, Eq)]
enum Ended {
    Done,
    /// SIGTERM or Ctrl-C: the daemon stops.
    Stopped,
}

/// The daemon's state; see the module documentation.
#[derive(Debug)]
pub struct Daemon {
    lock: Arc<SessionLock>,
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
    /// What the daemon is doing, for `prpd status`.
    activity: String,
    /// Whether it drives the current run right now.
    driving: bool,
    last_report: Option<PathBuf>,
    /// Why the current run cannot go on without a human, when it cannot.
    blocked: Option<String>,
    /// A human's `prpd resume` waiting for the loop.
    human_resume: Option<InputChanges>,
    /// The cooldown end already used for a probe (each escalation gets one).
    probed_cooldown: Option<u64>,
    /// Sources changed while idle: QA runs again when `qa_on_change` is on.
    sources_changed: bool,
    /// Until then, source changes are the last work's own edits arriving late.
    quiet_until: Instant,
}

impl Daemon {
    /// Starts the daemon on the repository whose lock is `lock`: the configuration must load,
    /// the control socket opens, the watcher starts, the queue is read.
    pub fn start(lock: SessionLock, options: Options) -> Result<Daemon, DaemonError> {
        let session = SessionPaths::new(&options.repo);
        let (config, qa_inputs) = load_config(&options)?;
        let listener = control::listen(&session.socket())?;
        let (request_sender, requests) = mpsc::channel(16);
        tokio::spawn(control::serve(listener, request_sender));
        let (watcher, changes) = start_watcher(&options.repo, config.watch.debounce)?;
        let mut queue = Queue::load(&session.queue())?;
        if let Ok(Some(record)) = RunRecord::load(&session.state()) {
            // A PRP queued before its current run started is that run.
            queue
                .waiting
                .retain(|queued| queued.prp != record.prp || queued.queued_at > record.started_at);
        }
        let layout = Layout {
            repo: options.repo.clone(),
            prp_dir: config.watch.prp_dir.clone(),
            config: options.config.clone(),
        };
        tracing::info!(
            repo = %options.repo.display(),
            directories = watcher.watched_dirs(),
            prp_dir = %config.watch.prp_dir.display(),
            queued = queue.waiting.len(),
            "watching"
        );
        Ok(Daemon {
            lock: Arc::new(lock),
            session,
            notify: config.notify.command.clone(),
            cooldown: config.breaker.cooldown,
            qa_inputs: Arc::new(qa_inputs),
            watch: config.watch,
            layout,
            queue,
            watcher,
            changes,
            requests,
            activity: "idle".to_owned(),
            driving: false,
            last_report: None,
            blocked: None,
            human_resume: None,
            probed_cooldown: None,
            sources_changed: false,
            quiet_until: Instant::now(),
            options,
        })
    }

    /// Runs until SIGTERM or Ctrl-C; then stops what escaped the work's process groups and
    /// removes the socket.
    pub async fn run(mut self) -> Result<(), DaemonError> {
        let shutdown = async {
            shutdown::requested().await;
            tracing::info!("stop requested");
        };
        tokio::pin!(shutdown);
        notify_systemd_ready();
        loop {
            // One read of the record per pass: what to do next and, if nothing, what to show.
            let record = RunRecord::load(&self.session.state());
            let ended = match self.next_work(&record) {
                Some(work) => self.carry_out(work, &mut shutdown).await?,
                None => self.idle(&record, &mut shutdown).await?,
            };
            if ended == Ended::Stopped {
                break;
            }
        }
        let leftovers = process::stop_leftovers().await;
        for (started_by, stopped) in process::by_starter(&leftovers) {
            tracing::warn!(%stopped, "{}", started_by.stopped_message());
        }
        let _ = std::fs::remove_file(self.session.socket());
        tracing::info!("stopped; the run is saved and the next `prpd watch` resumes it");
        Ok(())
    }

    /// What there is to do now, in order: the current run, then the queue, then QA.
    fn next_work(&mut self, record: &Result<Option<RunRecord>, RunError>) -> Option<Work> {
        let record = match record {
            Ok(record) => record,
            Err(error) => {
                // Nothing starts over a record prpd cannot read: a queued run would replace it.
                tracing::debug!(%error, "the run record cannot be read; waiting for a human");
                return None;
            }
        };
        if let Some(record) = record.as_ref().filter(|record| !record.is_finished()) {
            if let Some(input_changes) = self.human_resume.take() {
                self.blocked = None;
                return Some(Work::Resume {
                    prp: record.prp.clone(),
                    resumption: Resumption::Human,
                    input_changes,
                });
            }
            if self.blocked.is_some() {
                return None;
            }
            if !record.awaits_human() {
                return Some(Work::Resume {
                    prp: record.prp.clone(),
                    resumption: Resumption::Human,
                    input_changes: InputChanges::Refuse,
                });
            }
            let resume_file = self.session.run_dir(&record.run_id).join("resume");
            if std::fs::remove_file(&resume_file).is_ok() {
                tracing::info!(file = %resume_file.display(), "resume file found");
                return Some(Work::Resume {
                    prp: record.prp.clone(),
                    resumption: Resumption::Human,
                    input_changes: InputChanges::Refuse,
                });
            }
            if let Some(ends_at) = cooldown::ends_at(record, self.cooldown)
                && ends_at <= unix_now()
                && self.probed_cooldown != Some(ends_at)
            {
                self.probed_cooldown = Some(ends_at);
                tracing::info!(run_id = %record.run_id, "breaker cooldown elapsed: one probe iteration");
                return Some(Work::Resume {
                    prp: record.prp.clone(),
                    resumption: Resumption::Cooldown,
                    input_changes: InputChanges::Refuse,
                });
            }
            return None;
        }
        self.human_resume = None;
        if let Some(queued) = self.queue.pop() {
            return Some(Work::Start { prp: queued.prp });
        }
        if self.sources_changed && self.watch.qa_on_change {
            self.sources_changed = false;
            return Some(Work::Qa);
        }
        self.sources_changed = false;
        None
    }

    /// Waits for a change, a request, the shutdown, or (while a run waits for a human) the
    /// next look for a `resume` file and the cooldown.
    async fn idle(
        &mut self,
        record: &Result<Option<RunRecord>, RunError>,
        shutdown: &mut std::pin::Pin<&mut impl Future<Output = ()>>,
    ) -> Result<Ended, DaemonError> {
        self.activity = self.idle_activity(record);
        let waits_for_human = matches!(record, Ok(Some(record)) if record.awaits_human());
        let wake = if waits_for_human {
            RESUME_FILE_POLL
        } else {
            Duration::from_secs(24 * 3600)
        };
        tokio::select! {
            () = shutdown.as_mut() => return Ok(Ended::Stopped),
            Some(batch) = self.changes.recv() => self.on_changes(&batch, Doing::Nothing)?,
            Some((request, reply)) = self.requests.recv() => {
                let answer = self.on_request(request, Doing::Nothing)?;
                let _ = reply.send(answer);
            }
            () = tokio::time::sleep(wake) => {}
        }
        Ok(Ended::Done)
    }

    fn idle_activity(&self, record: &Result<Option<RunRecord>, RunError>) -> String {
        let record = match record {
            Ok(record) => record,
            Err(error) => {
                return format!("stopped: {error:#}; no run starts until it is fixed");
            }
        };
        match record.as_ref().filter(|record| !record.is_finished()) {
            Some(record) if self.blocked.is_some() => {
                format!(
                    "blocked on run {} (prpd resume or prpd abort)",
                    record.run_id
                )
            }
            Some(record) => format!(
                "run {} waits for a human: prpd resume, or a `resume` file in {}",
                record.run_id,
                self.session.run_dir(&record.run_id).display()
            ),
            None => "idle".to_owned(),
        }
    }

    /// Carries out `work` while answering requests and sorting changes; the shutdown drops it.
    async fn carry_out(
        &mut self,
        work: Work,
        shutdown: &mut std::pin::Pin<&mut impl Future<Output = ()>>,
    ) -> Result<Ended, DaemonError> {
        let options = session::Options {
            repo: self.options.repo.clone(),
            config: self.options.config.clone(),
            output: Output::Quiet,
        };
        let lock = Arc::clone(&self.lock);
        let (busy_with, task): (Option<PathBuf>, _) = match work {
            Work::Resume {
                prp,
                resumption,
                input_changes,
            } => {
                self.activity = format!("resuming the run of {}", prp.display());
                let task = async move {
                    session::resume_locked(&lock, &options, None, input_changes, resumption)
                        .await
                        .map(|record| Finished::Run(Box::new(record)))
                };
                (Some(prp), boxed(task))
            }
            Work::Start { prp } => {
                self.activity = format!("running {}", prp.display());
                let start = Start {
                    dirty: DirtyTree::AllowUnder(self.watch.prp_dir.clone()),
                    delivery: Delivery::Live,
                };
                let absolute = self.options.repo.join(&prp);
                let task = async move {
                    session::run_locked(&lock, &options, &absolute, start)
                        .await
                        .map(|record| Finished::Run(Box::new(record)))
                };
                (Some(prp), boxed(task))
            }
            Work::Qa => {
                "re-running QA after source changes".clone_into(&mut self.activity);
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
                let task = async move {
                    standalone::check_now(&request, &inputs)
                        .await
                        .map(|result| Finished::Qa(result.run_dir.join("qa-report.md")))
                        .map_err(Failure::Qa)
                };
                (None, Box::pin(task) as _)
            }
        };
        if busy_with.is_some() {
            // The run's QA judges the tree as the run leaves it.
            self.sources_changed = false;
        }
        tracing::info!(activity = %self.activity, "work started");
        self.driving = busy_with.is_some();
        let mut task = task;
        let finished = loop {
            tokio::select! {
                finished = &mut task => break finished,
                () = shutdown.as_mut() => {
                    drop(task);
                    self.driving = false;
                    return Ok(Ended::Stopped);
                }
                Some(batch) = self.changes.recv() => self.on_changes(&batch, doing(busy_with.as_deref()))?,
                Some((request, reply)) = self.requests.recv() => {
                    let answer = self.on_request(request, doing(busy_with.as_deref()))?;
                    let _ = reply.send(answer);
                }
            }
        };
        self.driving = false;
        self.quiet_until = Instant::now() + self.watch.debounce * 2 + Duration::from_millis(200);
        // The popped PRP leaves the saved queue now that its run has a record.
        self.queue.save(&self.session.queue())?;
        self.finished(finished, busy_with.as_deref()).await;
        Ok(Ended::Done)
    }

    /// Logs how the work ended and tells a human when a run needs one.
    async fn finished(&mut self, finished: Result<Finished, Failure>, prp: Option<&Path>) {
        match finished {
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
                        "run escalated: it needs a human (read the report, then `prpd resume` or `prpd abort`)"
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
                let current = RunRecord::load(&self.session.state())
                    .ok()
                    .flatten()
                    .filter(|record| !record.is_finished() && Some(record.prp.as_path()) == prp);
                if current.is_some() {
                    tracing::error!(error = %message, "the current run cannot go on; fix it, then `prpd resume` (or `prpd abort`)");
                    self.blocked = Some(message);
                } else {
                    tracing::error!(prp = %prp_name(prp), error = %message, "the run did not start");
                }
            }
            Err(Failure::Qa(error)) => {
                tracing::error!(error = %format!("{error:#}"), "QA after source changes failed");
            }
        }
    }

    /// Sorts a batch of changed files, as what the daemon is `doing` allows.
    fn on_changes(&mut self, batch: &[PathBuf], doing: Doing<'_>) -> Result<(), DaemonError> {
        let triggers = self.layout.triggers(batch);
        tracing::debug!(paths = batch.len(), ?triggers, "file changes");
        if triggers.config {
            self.reload_config()?;
        }
        for prp in triggers.prps {
            if doing == Doing::Run(&prp) {
                tracing::debug!(prp = %prp.display(), "the running PRP changed: the run keeps the PRP it started with");
                continue;
            }
            if !self.options.repo.join(&prp).is_file() {
                continue;
            }
            self.queue_prp(&prp)?;
        }
        if triggers.sources && doing == Doing::Nothing && Instant::now() >= self.quiet_until {
            self.sources_changed = true;
        }
        Ok(())
    }

    fn queue_prp(&mut self, prp: &Path) -> Result<bool, DaemonError> {
        let added = self.queue.push(prp, unix_now());
        if added {
            self.queue.save(&self.session.queue())?;
            tracing::info!(prp = %prp.display(), waiting = self.queue.waiting.len(), "PRP queued");
        }
        Ok(added)
    }

    /// Reloads prpd.toml, the checklist and the tools mapping; a broken file keeps the
    /// configuration the daemon has.
    fn reload_config(&mut self) -> Result<(), DaemonError> {
        let (config, qa_inputs) = match load_config(&self.options) {
            Ok(loaded) => loaded,
            Err(error) => {
                tracing::error!(%error, "configuration not reloaded: the daemon keeps the previous one");
                return Ok(());
            }
        };
        if config.watch.debounce != self.watch.debounce {
            let (watcher, changes) = start_watcher(&self.options.repo, config.watch.debounce)?;
            self.watcher = watcher;
            self.changes = changes;
        }
        self.layout.prp_dir.clone_from(&config.watch.prp_dir);
        self.notify = config.notify.command;
        self.cooldown = config.breaker.cooldown;
        self.qa_inputs = Arc::new(qa_inputs);
        self.watch = config.watch;
        tracing::info!("configuration reloaded");
        Ok(())
    }

    /// Answers a request, as what the daemon is `doing` allows.
    fn on_request(&mut self, request: Request, doing: Doing<'_>) -> Result<Reply, DaemonError> {
        let (ok, message) = match request {
            Request::Status => (true, self.activity.clone()),
            Request::Queue { add: None } => {
                (true, format!("{} PRP(s) waiting", self.queue.waiting.len()))
            }
            Request::Queue { add: Some(prp) } => self.add_to_queue(&prp)?,
            Request::Resume { run, reload_config } => {
                self.resume(run.as_deref(), reload_config, doing)
            }
            Request::Abort { run } => self.abort(run.as_deref(), doing),
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

    /// The current unfinished run, when `run` (if given) names it; else why not, for the
    /// person who asked to `action` it.
    fn asked_run(&self, run: Option<&str>, action: &str) -> Result<RunRecord, String> {
        let record = match RunRecord::load(&self.session.state()) {
            Ok(record) => record,
            Err(error) => return Err(format!("{:#}", anyhow::Error::from(error))),
        };
        let Some(record) = record.filter(|record| !record.is_finished()) else {
            return Err(format!("there is no run to {action}"));
        };
        match run.filter(|asked| *asked != record.run_id) {
            Some(asked) => Err(format!("the current run is {}, not {asked}", record.run_id)),
            None => Ok(record),
        }
    }

    fn resume(
        &mut self,
        run: Option<&str>,
        reload_config: bool,
        doing: Doing<'_>,
    ) -> (bool, String) {
        let record = match self.asked_run(run, "resume") {
            Ok(record) => record,
            Err(refusal) => return (false, refusal),
        };
        if doing == Doing::Run(&record.prp) {
            return (false, format!("run {} is running", record.run_id));
        }
        self.human_resume = Some(if reload_config {
            InputChanges::Reload
        } else {
            InputChanges::Refuse
        });
        (true, format!("run {} resumes now", record.run_id))
    }

    fn abort(&mut self, run: Option<&str>, doing: Doing<'_>) -> (bool, String) {
        let record = match self.asked_run(run, "abort") {
            Ok(record) => record,
            Err(refusal) => return (false, refusal),
        };
        if doing == Doing::Run(&record.prp) {
            return match session::request_abort(&self.session, &record) {
                Ok(()) => (
                    true,
                    format!("run {} aborts after its current step", record.run_id),
                ),
                Err(error) => (false, format!("{:#}", anyhow::Error::from(error))),
            };
        }
        let options = session::Options {
            repo: self.options.repo.clone(),
            config: self.options.config.clone(),
            output: Output::Quiet,
        };
        match session::abort_locked(&self.lock, &options, Some(&record.run_id)) {
            Ok(run_id) => {
                self.blocked = None;
                self.human_resume = None;
                tracing::info!(%run_id, "run aborted by a human");
                (true, format!("run {run_id} aborted"))
            }
            Err(error) => (false, format!("{:#}", anyhow::Error::from(error))),
        }
    }

    fn view(&self) -> DaemonView {
        let record = RunRecord::load(&self.session.state()).ok().flatten();
        DaemonView {
            pid: std::process::id(),
            activity: self.activity.clone(),
            driving: self.driving,
            queue: self.queue.prps(),
            last_report: self.last_report.clone(),
            cooldown_ends_at: record
                .as_ref()
                .and_then(|record| cooldown::ends_at(record, self.cooldown)),
            blocked: self.blocked.clone(),
        }
    }
}

/// What the daemon does while a change or a request arrives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Doing<'a> {
    Nothing,
    /// QA after source changes.
    Qa,
    /// A run of this PRP.
    Run(&'a Path),
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

type Task = std::pin::Pin<Box<dyn Future<Output = Result<Finished, Failure>>>>;

fn boxed(task: impl Future<Output = Result<Finished, SessionFailure>> + 'static) -> Task {
    Box::pin(async move { task.await.map_err(Failure::Session) })
}

fn prp_name(prp: Option<&Path>) -> String {
    prp.map_or_else(
        || "the current run".to_owned(),
        |prp| prp.display().to_string(),
    )
}

/// What the daemon does while the work of `prp` (none: QA) goes.
fn doing(prp: Option<&Path>) -> Doing<'_> {
    prp.map_or(Doing::Qa, Doing::Run)
}

/// The configuration as the daemon validates it: prpd.toml, the checklist and the tools
/// mapping must all load; QA on change uses them as loaded.
fn load_config(options: &Options) -> Result<(Config, QaInputs), ConfigError> {
    let config = Config::load(&options.repo, options.config.as_deref())?;
    let qa = QaInputs::load(&options.repo, options.config.as_deref())?;
    Ok((config, qa))
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
