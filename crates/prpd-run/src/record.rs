//! The persisted record of a run: everything needed to continue it after any stop, kill -9
//! included (DESIGN §2, §11).
//!
//! The record is written atomically (temporary file, fsync, rename) to
//! `.prp-session/runs/<id>/state.json`
//! *before* the effects of a transition are carried out: the effects still to do are part of
//! it (`pending`). The driver removes an effect only after carrying it out, and every effect can
//! be carried out again on resume (an interrupted iteration is run again with the same number).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::config::BreakerConfig;
use prpd_base::phase::Phase;
use prpd_protocols::test_plan::HeldPlan;
use prpd_qa::discover::Detection;
use prpd_qa::runner::EarlierRun;
use prpd_web::in_run::WebCase;

use crate::breaker::{Breaker, Observation};
use crate::cache::CacheKey;
use crate::frozen::Freeze;
use crate::machine::{Effect, PhaseMachine, QaVerdict, State};
use crate::proof::WithoutFeature;
use crate::proof_report::Publication;
use crate::snapshot::SnapshotLog;
use prpd_ship::github::{IssueRef, PullRequest, RemoteChecks};

/// The version of the record's layout; a record of another version is refused, not guessed at.
/// From version 3 an unfinished run's record is always sealed (`snapshot/seal.rs`), and
/// `prpd resume` refuses one without its seal; from version 4 every record is, finished ones
/// too, each run has its own record file, and a run works in a worktree of its own.
pub const RECORD_VERSION: u32 = 4;

/// One run of one PRP.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RunRecord {
    pub version: u32,
    pub run_id: String,
    /// The PRP, relative to the repository root.
    pub prp: PathBuf,
    /// When the run started (seconds since the Unix epoch).
    pub started_at: u64,
    /// The run's own worktree (`worktree.rs`); `None`: the run works in the user's working
    /// tree (`prpd run --in-place`).
    pub worktree: Option<PathBuf>,
    /// Whether `[run] setup` ran in the worktree (or had nothing to run).
    #[serde(default)]
    pub setup_done: bool,
    pub machine: PhaseMachine,
    /// Effects decided but not yet carried out, in order.
    pub pending: Vec<Effect>,
    /// One breaker per iterating phase.
    pub breakers: BTreeMap<Phase, Breaker>,
    /// Iterations finished in the current visit of the current phase.
    pub iteration: u32,
    /// Iterations finished per phase over the whole run.
    pub iterations: BTreeMap<Phase, u32>,
    /// What the guardrails count.
    pub usage: RunUsage,
    /// Baselines fixed at phase ends and at the start of the run.
    pub baseline: Baseline,
    /// The run's git-native snapshots.
    pub snapshots: SnapshotLog,
    /// The commands discovered when the run started: how the tests run is frozen with them, so
    /// an agent that adds a Makefile with a friendlier `test` target changes nothing.
    pub detection: Option<Detection>,
    /// What no agent may change from now on (prpd's inputs; after RED, the test harness).
    pub freeze: Freeze,
    /// Each time a human resumed with `--reload-config`: which of prpd's inputs had changed.
    pub config_reloads: Vec<String>,
    /// The last observation of the current phase, which the next iteration is compared with.
    pub last_observation: Option<Observation>,
    /// Feedback for the next iteration of each phase (the unmet gate conditions).
    pub feedback: BTreeMap<Phase, Vec<String>>,
    /// What the last iteration's measurement showed (failing tests, output), for the next
    /// iteration of the same phase.
    pub evidence: Vec<String>,
    /// The phase whose iteration produced `evidence`.
    pub evidence_phase: Option<Phase>,
    /// The QA report that goes with the GREEN feedback after a REJECT.
    pub last_qa_report: Option<PathBuf>,
    /// The text of that report as prpd rendered it: what ships in the pull request, never
    /// read back from a file an agent could have rewritten.
    pub last_qa_markdown: Option<String>,
    /// The blockers of the last REJECT: every GREEN iteration gets them until GREEN completes.
    pub qa_blockers: Vec<String>,
    pub verdicts: Vec<VerdictRecord>,
    /// The guardrail that stopped the run, if one did.
    pub guardrail: Option<String>,
    pub escalation_report: Option<PathBuf>,
    /// The test command's run without the feature, for the fail-to-pass proof (absent in
    /// records written before the proof existed).
    #[serde(default)]
    pub without_feature: Option<WithoutFeature>,
    /// The last test run prpd made and what it measured: the same command on the same tree,
    /// with the same measurement settings, is not run again (GREEN's two runs excepted).
    #[serde(default)]
    pub last_test_run: Option<CachedTestRun>,
    /// The tests seen failing and passing on one tree, and the quarantine list the run started
    /// with (`flaky.rs`; absent in older records).
    #[serde(default)]
    pub flaky: crate::flaky::FlakyLog,
    /// What the last agent said stood in its way: the tool calls its CLI refused and the
    /// `BLOCKERS` of its status block, for the next iteration's feedback and the escalation
    /// report (absent in older records).
    #[serde(default)]
    pub agent_obstacles: AgentObstacles,
    /// The model each phase's CLI reported it worked with, for the GREEN/QA diversity check
    /// (absent in older records).
    #[serde(default)]
    pub reported_models: BTreeMap<Phase, String>,
    /// SHIP's progress, saved after each of its steps (absent in older records).
    #[serde(default)]
    pub ship: ShipProgress,
    /// The GitHub issue prpd opened for the current escalation (`[ship] issue_on_escalation`).
    #[serde(default)]
    pub escalation_issue: Option<IssueRef>,
    /// The `TestPlan` RED's tests are held to, and why the RED agent's latest plan was refused
    /// (absent in older records).
    #[serde(default)]
    pub test_plan: HeldPlan,
    /// The plan prpd made of the running web app at RED's start, when `[plan]` is set (absent
    /// in older records and without `[plan]`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub web_plan: Option<WebPlanState>,
    /// RED's tests held out of GREEN's view (absent in older records).
    #[serde(default)]
    pub holdout: crate::holdout::Holdout,
    /// One line per agent call: what it cost and what came of it (absent in older records).
    #[serde(default)]
    pub receipt: crate::receipt::Receipt,
    /// The budgets a human raised with `prpd resume --budget` (absent in older records).
    #[serde(default)]
    pub budget_raises: Vec<crate::budget::Raise>,
    /// The budget that stopped the run, until a human resumes it.
    #[serde(default)]
    pub budget_stop: Option<crate::budget::Budget>,
}

/// What the run keeps of its web plan: what RED's prompt says of it and the cases QA lists.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WebPlanState {
    /// The plan's folder (`runs/<id>/web/`).
    pub dir: PathBuf,
    /// Why there is no plan (the app could not be explored, a guardrail stopped it).
    pub error: Option<String>,
    /// The section of RED's prompt (`{{web_plan}}`).
    pub prompt: String,
    pub cases: Vec<WebCase>,
}

/// What SHIP has done so far, and what it was told when the run started. Each step is saved
/// before the next one starts, so a SHIP resumed after a crash or a failure reuses the commit
/// and the branch instead of making new ones.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ShipProgress {
    /// Whether SHIP may talk to the remote services (`prpd run --dry-run` says no).
    pub delivery: Delivery,
    /// The branch checked out when the run started: the pull request's base unless
    /// `[ship] base` names one (`None`: a detached `HEAD`).
    pub base_branch: Option<String>,
    /// The shipped commit (hex), once written.
    pub commit: Option<String>,
    /// The branch pointed at it, once it is.
    pub branch: Option<String>,
    /// Where the branch was pushed, as messages show it (never with credentials).
    pub pushed_to: Option<String>,
    /// Why nothing was pushed, when SHIP decided so (a dry run with no local remote).
    pub not_pushed: Option<String>,
    /// The pull request's title and body as written to `runs/<id>/pr.md`.
    pub pull_request: Option<PathBuf>,
    /// Why SHIP opened no pull request, when it decided so: a dry run, no token, or a remote
    /// that is not on GitHub with no `[ship] repository` (absent in older records).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub no_pull_request: Option<String>,
    /// The pull request on GitHub, once prpd opened or updated it (absent in older records).
    #[serde(default)]
    pub github_pull_request: Option<PullRequest>,
    /// Whether prpd commented on the pull request it updated in this SHIP (`[ship]
    /// comment_on_update`), so a resumed SHIP does not comment twice.
    #[serde(default)]
    pub commented_on_update: bool,
    /// Every wait for the remote checks of this run, oldest first: a REJECT by the remote CI
    /// keeps its checks here when SHIP starts over.
    #[serde(default)]
    pub remote_checks: Vec<RemoteChecks>,
    /// `proof.md` (`proof.json` beside it), once SHIP wrote it (absent in older records).
    #[serde(default)]
    pub proof: Option<PathBuf>,
    /// Where the verdict went on GitHub — the check run `prpd / verdict` or a commit status —
    /// or why it went nowhere, so a resumed SHIP does not publish it twice (absent in older
    /// records).
    #[serde(default)]
    pub verdict_published: Option<Publication>,
}

impl ShipProgress {
    /// SHIP starts over after the remote CI rejected the work: a new commit, branch position,
    /// push and pull request text; what was told at the start, the pull request on GitHub (it
    /// is updated, not opened again) and the checks seen so far stay.
    pub fn start_over(&mut self) {
        *self = ShipProgress {
            delivery: self.delivery,
            base_branch: self.base_branch.take(),
            github_pull_request: self.github_pull_request.take(),
            remote_checks: std::mem::take(&mut self.remote_checks),
            ..ShipProgress::default()
        };
    }

    /// Whether SHIP has anything to show: a commit, a pull request or checks.
    pub fn started(&self) -> bool {
        self.commit.is_some()
            || self.github_pull_request.is_some()
            || !self.remote_checks.is_empty()
    }

    /// The shipped commit's first seven hex digits, as git shows a short id (empty before the
    /// commit is written).
    pub fn short_commit(&self) -> String {
        self.commit
            .as_deref()
            .unwrap_or("")
            .chars()
            .take(7)
            .collect()
    }
}

/// Whether SHIP delivers to the remote services or only does the local steps.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Delivery {
    /// Push and open the pull request (without a token this is a dry run all the same).
    #[default]
    Live,
    /// `--dry-run`: the branch, the commit, a push only to a local path, and `pr.md`.
    DryRun,
}

/// The refusals and blockers of the last agent invocation.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct AgentObstacles {
    /// The phase the agent worked in.
    pub phase: Option<Phase>,
    /// Tool calls its CLI refused, e.g. `Bash(npm test)`.
    pub denials: Vec<String>,
    /// The `BLOCKERS` of its status block.
    pub blockers: Vec<String>,
}

impl AgentObstacles {
    /// The feedback lines that tell the next agent what stood in the last one's way.
    pub fn feedback(&self) -> Vec<String> {
        let mut lines = Vec::new();
        if !self.denials.is_empty() {
            lines.push(format!(
                "Your CLI refused these tool calls: {}. Run only the commands you are allowed to (the test and lint commands exactly as written in the prompt); anything else is refused.",
                self.denials.join(", ")
            ));
        }
        for blocker in &self.blockers {
            lines.push(format!("You reported a blocker: {blocker}"));
        }
        lines
    }
}

/// A test run and what it measured.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CachedTestRun {
    /// The tree, the command and the measurement settings of the run.
    pub key: CacheKey,
    pub run: EarlierRun,
}

impl CachedTestRun {
    /// The run, when it measured what `key` names.
    pub fn measured(&self, key: &CacheKey) -> Option<&EarlierRun> {
        (self.key == *key).then_some(&self.run)
    }
}

/// What the guardrails of a run count (seed 001).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct RunUsage {
    /// Agent invocations that finished.
    pub invocations: u32,
    /// Start times (Unix seconds) of the invocations of the last hour, for the rate limit.
    pub recent_calls: Vec<u64>,
    /// Seconds the run has been driven (wall time, summed over sessions; time spent stopped or
    /// escalated does not count).
    pub active_seconds: u64,
    /// Tokens the agents reported that the `max_tokens` guardrail counts: fresh input, cache
    /// writes and output ([`crate::agent::Usage::billed_tokens`]).
    pub tokens: u64,
    /// The same tokens by kind, cache reads included (absent in older records).
    #[serde(default)]
    pub token_usage: TokenUsage,
    /// The agents' cost in US dollars: what their CLIs reported, else what `[prices]` makes of
    /// the tokens they reported (calls of unknown cost are on the receipt, not in this sum).
    pub cost_usd: f64,
}

/// Tokens reported by the agents, by kind.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TokenUsage {
    /// Input processed fresh.
    pub input: u64,
    /// Input written to the prompt cache.
    pub cache_write: u64,
    /// Input read from the prompt cache (not counted by `max_tokens`).
    pub cache_read: u64,
    pub output: u64,
}

/// Reference points later gates compare with.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Baseline {
    /// Hashes of the test files when the run started.
    pub tests_at_start: BTreeMap<PathBuf, String>,
    /// The maximum complexity measured at the end of GREEN.
    pub complexity_at_green_end: Option<u32>,
    /// How many tests RED's last run counted (passing + failing).
    pub tests_at_red_end: Option<u32>,
}

/// One QA verdict of the run.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct VerdictRecord {
    pub attempt: u32,
    pub verdict: QaVerdict,
    pub blocking: Vec<String>,
    pub report: Option<PathBuf>,
}

/// The record could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error("failed to read {}", path.display())]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error(
        "{} is not a run record prpd can read ({message}); move the file away to start afresh \
         (the run's artifacts stay under runs/)",
        path.display()
    )]
    Corrupt { path: PathBuf, message: String },
    #[error(
        "{} holds a run record of version {found}, written by another prpd (this one reads \
         version {RECORD_VERSION}); finish or abort that run with the prpd that started it, or \
         move the file away to start afresh",
        path.display()
    )]
    OtherVersion { path: PathBuf, found: String },
    #[error("failed to write {}", path.display())]
    Write {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

impl RunRecord {
    /// A new run of `prp`, with the machine started and its first effects pending.
    pub fn new(run_id: String, prp: PathBuf, started_at: u64, breakers: &BreakerConfig) -> Self {
        let (machine, pending) = PhaseMachine::start();
        let breakers = Phase::ITERATING
            .into_iter()
            .map(|phase| (phase, Breaker::new(phase, breakers.thresholds(phase))))
            .collect();
        RunRecord {
            version: RECORD_VERSION,
            run_id,
            prp,
            started_at,
            worktree: None,
            setup_done: false,
            machine,
            pending,
            breakers,
            iteration: 0,
            iterations: BTreeMap::new(),
            usage: RunUsage::default(),
            baseline: Baseline::default(),
            snapshots: SnapshotLog::default(),
            detection: None,
            agent_obstacles: AgentObstacles::default(),
            reported_models: BTreeMap::new(),
            freeze: Freeze::default(),
            config_reloads: Vec::new(),
            last_observation: None,
            feedback: BTreeMap::new(),
            evidence: Vec::new(),
            evidence_phase: None,
            last_qa_report: None,
            last_qa_markdown: None,
            qa_blockers: Vec::new(),
            verdicts: Vec::new(),
            guardrail: None,
            escalation_report: None,
            without_feature: None,
            last_test_run: None,
            flaky: crate::flaky::FlakyLog::default(),
            ship: ShipProgress::default(),
            escalation_issue: None,
            test_plan: HeldPlan::default(),
            web_plan: None,
            holdout: crate::holdout::Holdout::default(),
            receipt: crate::receipt::Receipt::default(),
            budget_raises: Vec::new(),
            budget_stop: None,
        }
    }

    /// The current state of the run's machine.
    pub fn state(&self) -> &State {
        self.machine.state()
    }

    /// Whether the run has ended for good: SHIPPED or ABORTED with every effect carried out.
    /// An escalated run waits for a human and is not finished.
    pub fn is_finished(&self) -> bool {
        self.pending.is_empty() && matches!(self.state(), State::Shipped {} | State::Aborted {})
    }

    /// Whether the run waits for a human: ESCALATED with every effect carried out (the
    /// escalation report written). A record saved between the decision to escalate and its
    /// report is a crash to recover from, not a human's turn.
    pub fn awaits_human(&self) -> bool {
        self.pending.is_empty() && matches!(self.state(), State::Escalated { .. })
    }

    /// Iterations finished in the current visit of the current phase. `iteration` still counts
    /// the phase that ended until the next phase's start is carried out, so a record saved in
    /// between (a run interrupted right after a phase ended) has finished none of the new one.
    pub fn iterations_in_phase(&self) -> u32 {
        let starting = self
            .pending
            .iter()
            .any(|effect| matches!(effect, Effect::StartPhase { .. }));
        if starting { 0 } else { self.iteration }
    }

    /// The iteration that runs next, or ran when the run stopped: the first effect still to
    /// carry out is an iteration.
    pub fn next_iteration(&self) -> Option<(Phase, u32)> {
        match self.pending.first()? {
            Effect::RunIteration { phase } => Some((*phase, self.iterations_in_phase() + 1)),
            Effect::StartPhase { phase } => Some((*phase, 1)),
            Effect::WriteFeedback { .. }
            | Effect::PhaseCompleted { .. }
            | Effect::RecordVerdict { .. }
            | Effect::ProbeBreaker { .. }
            | Effect::Ship
            | Effect::Complete
            | Effect::Abort
            | Effect::Escalate { .. } => None,
        }
    }

    /// Total iterations of the run.
    pub fn total_iterations(&self) -> u32 {
        self.iterations.values().sum()
    }

    /// Reads the record at `path`; `Ok(None)` when there is none.
    pub fn load(path: &Path) -> Result<Option<RunRecord>, RunError> {
        let text = match std::fs::read_to_string(path) {
            Ok(text) => text,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(source) => {
                return Err(RunError::Read {
                    path: path.to_path_buf(),
                    source,
                });
            }
        };
        RunRecord::parse(path, &text).map(Some)
    }

    /// The record `text` holds; `path` names the file in errors.
    pub fn parse(path: &Path, text: &str) -> Result<RunRecord, RunError> {
        let corrupt = |message: String| RunError::Corrupt {
            path: path.to_path_buf(),
            message,
        };
        let value: serde_json::Value =
            serde_json::from_str(text).map_err(|error| corrupt(error.to_string()))?;
        let version = value.get("version").and_then(serde_json::Value::as_u64);
        if version != Some(u64::from(RECORD_VERSION)) {
            return Err(RunError::OtherVersion {
                path: path.to_path_buf(),
                found: version.map_or_else(|| "none".to_owned(), |version| version.to_string()),
            });
        }
        serde_json::from_value(value).map_err(|error| corrupt(error.to_string()))
    }

    /// Writes the record to `path` atomically.
    pub fn save(&self, path: &Path) -> Result<(), RunError> {
        let json = self.to_json(path)?;
        RunRecord::write(path, &json, true)
    }

    /// The record as the text [`RunRecord::save`] writes; `path` names the file in errors.
    pub fn to_json(&self, path: &Path) -> Result<String, RunError> {
        serde_json::to_string_pretty(self).map_err(|error| RunError::Write {
            path: path.to_path_buf(),
            source: std::io::Error::other(error),
        })
    }

    /// Writes `json` (from [`RunRecord::to_json`]) to `path` atomically, flushed to the disk
    /// first when `durable` (`files::write_atomically`; else `files::replace`).
    pub fn write(path: &Path, json: &str, durable: bool) -> Result<(), RunError> {
        let written = if durable {
            prpd_base::files::write_atomically(path, json.as_bytes())
        } else {
            prpd_base::files::replace(path, json.as_bytes())
        };
        written.map_err(|source| RunError::Write {
            path: path.to_path_buf(),
            source,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;

    #[test]
    fn record_round_trips_through_its_file() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("state.json");
        let record = RunRecord::new(
            "run-1".to_owned(),
            PathBuf::from("PRPs/x.md"),
            7,
            &Config::default().breaker,
        );
        record.save(&path).expect("save");
        let loaded = RunRecord::load(&path).expect("load").expect("present");
        assert_eq!(loaded.run_id, "run-1");
        assert_eq!(loaded.pending, record.pending);
        assert_eq!(loaded.state(), record.state());
        assert_eq!(loaded.breakers.len(), 5);
    }

    #[test]
    fn regression_a_record_saved_before_its_escalation_report_is_not_a_humans_turn() {
        use crate::breaker::{Counter, Trip};
        use crate::machine::Event;
        let mut record = RunRecord::new(
            "run-1".to_owned(),
            PathBuf::from("PRPs/x.md"),
            7,
            &Config::default().breaker,
        );
        let gate = crate::gate::evaluate(
            &crate::gate::Measured::Red {
                tests: None,
                changed_test_files: Vec::new(),
                test_plan: prpd_protocols::test_plan::PlanCheck::default(),
            },
            crate::gate::Signal::default(),
        );
        let trip = Trip {
            phase: Phase::Red,
            counter: Counter::NoProgress,
            count: 3,
            threshold: 3,
        };
        record.pending = record.machine.handle(&Event::IterationFinished {
            gate,
            trip: Some(trip),
        });
        assert!(matches!(record.state(), State::Escalated { .. }));
        assert!(
            !record.awaits_human(),
            "the escalation report is still to write"
        );
        record.pending.clear();
        assert!(record.awaits_human());
        assert!(!record.is_finished());
    }

    #[test]
    fn regression_after_a_phase_ends_the_next_phase_has_finished_no_iteration() {
        use crate::machine::Event;
        let mut record = RunRecord::new(
            "run-1".to_owned(),
            PathBuf::from("PRPs/x.md"),
            7,
            &Config::default().breaker,
        );
        record.pending.clear();
        record.iteration = 2;
        let gate = crate::gate::evaluate(
            &crate::gate::Measured::Red {
                tests: Some(crate::gate::TestRun {
                    exit_code: Some(1),
                    counts: Some(crate::gate::TestCounts {
                        passing: 0,
                        failing: 1,
                    }),
                    report_problem: None,
                }),
                changed_test_files: vec![PathBuf::from("test/x.test.js")],
                test_plan: prpd_protocols::test_plan::PlanCheck::default(),
            },
            crate::gate::Signal {
                exit_signal: Some(true),
                agent_approves: None,
            },
        );
        assert!(gate.can_exit(), "{gate:?}");
        record.pending = record
            .machine
            .handle(&Event::IterationFinished { gate, trip: None });
        assert_eq!(record.state(), &State::Green {});
        // Saved here and interrupted: RED's two iterations are not GREEN's.
        assert_eq!(record.iterations_in_phase(), 0);
        record.pending.remove(0);
        assert_eq!(record.next_iteration(), Some((Phase::Green, 1)));
        record.pending.remove(0);
        record.iteration = 0;
        assert_eq!(record.next_iteration(), Some((Phase::Green, 1)));
    }

    #[test]
    fn a_cached_test_run_stands_only_for_the_same_tree_command_and_settings() {
        let key = CacheKey {
            tree: "t1".to_owned(),
            command: "npm test".to_owned(),
            settings: "s1".to_owned(),
        };
        let cached = CachedTestRun {
            key: key.clone(),
            run: EarlierRun {
                command: "npm test".to_owned(),
                exit_code: 0,
                log: PathBuf::from("tests.log"),
                measured_in: "GREEN iteration 1".to_owned(),
                fingerprint: "f".to_owned(),
            },
        };
        assert!(cached.measured(&key).is_some());
        for other in [
            CacheKey {
                tree: "t2".to_owned(),
                ..key.clone()
            },
            CacheKey {
                command: "npm test -- --grep add".to_owned(),
                ..key.clone()
            },
            CacheKey {
                settings: "s2".to_owned(),
                ..key.clone()
            },
        ] {
            assert!(cached.measured(&other).is_none(), "{other:?}");
        }
    }

    #[test]
    fn a_record_written_before_ship_progress_existed_still_loads() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("state.json");
        let record = RunRecord::new(
            "run-1".to_owned(),
            PathBuf::from("PRPs/x.md"),
            7,
            &Config::default().breaker,
        );
        let mut value = serde_json::to_value(&record).expect("to JSON");
        value
            .as_object_mut()
            .expect("an object")
            .remove("ship")
            .expect("the ship field");
        std::fs::write(&path, value.to_string()).expect("write");
        let loaded = RunRecord::load(&path).expect("load").expect("present");
        assert_eq!(loaded.ship, ShipProgress::default());
        assert_eq!(loaded.ship.delivery, Delivery::Live);
    }

    #[test]
    fn missing_record_is_none_and_other_versions_are_refused() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("state.json");
        assert!(RunRecord::load(&path).expect("no file").is_none());
        std::fs::write(&path, r#"{"version": 99}"#).expect("write");
        let error = RunRecord::load(&path).expect_err("version 99");
        assert!(
            error.to_string().contains("a run record of version 99"),
            "{error}"
        );
    }
}
