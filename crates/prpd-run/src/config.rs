//! `prpd.toml`, the optional per-repository configuration: raw serde structs (every field
//! optional, unknown keys rejected) turned once into a validated [`Config`] with defaults.
//!
//! The commented example in `config/prpd.toml` is compiled in and tested to parse, so the
//! documentation of every key cannot drift from what the parser accepts.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::config_file::{self, ConfigError};
use crate::phase::Phase;

mod agents;
mod gate;
mod junit;
mod memory;
pub mod model;
mod plan;
mod presets;
mod ship;
mod watch;

pub use agents::{AgentConfig, Agents, PromptMode};
pub use memory::{McpServer, McpToolNames, MemoryBackend, MemoryConfig};
pub use plan::{PlanAuthSection, PlanSection, TEST_TYPES};
pub use presets::Preset;
pub use ship::{SLUG_PLACEHOLDER, ShipConfig};
pub use watch::{NotifyConfig, WatchConfig};

pub use gate::{COMMAND_KINDS, CheckSetting, CommandSetting, GateSettings, Located, Place};

/// The file name prpd looks for at the root of the target repository.
pub const FILE_NAME: &str = "prpd.toml";

/// The commented example configuration shipped in `config/prpd.toml`.
pub const EXAMPLE: &str = include_str!("../../../config/prpd.toml");

/// Validated configuration, with every default filled in.
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    /// Where the configuration came from (`None`: built-in defaults).
    pub source: Option<PathBuf>,
    pub qa: QaConfig,
    pub agents: Agents,
    pub guardrails: Guardrails,
    pub breaker: BreakerConfig,
    /// What happens to a run's snapshots when it ends.
    pub snapshots: SnapshotRetention,
    /// `[run] keep_worktrees = true`: a run's worktree stays when it ships or is aborted (an
    /// escalated run's always stays, for the human).
    pub keep_worktrees: bool,
    /// `[run] setup`: shell commands run once in a new worktree before the first agent (an
    /// install, say), in the environment of the checks.
    pub setup: Vec<String>,
    /// `[run] green_may_add_tests = true`: GREEN may add new test modules in its first attempt
    /// too (they freeze when GREEN ends); by default only after a REJECT.
    pub green_may_add_tests: bool,
    /// `[commands]` and `[checks.<ID>]`: the repository's adjustments of the QA gate.
    pub gate: GateSettings,
    /// `[ship]`: where and how an approved run ships.
    pub ship: ShipConfig,
    /// `[memory]`: where prpd remembers earlier runs, and how long a question may take.
    pub memory: MemoryConfig,
    /// `[watch]`: what the daemon reacts to.
    pub watch: WatchConfig,
    /// `[notify]`: the command that tells a human about an escalation.
    pub notify: NotifyConfig,
    /// `[plan]`: the running web app `prpd plan` explores; `None` when the project has none.
    pub plan: Option<PlanSection>,
}

/// What `prpd qa` reads of prpd.toml ([`Config::load_qa`]): the QA gate's settings, nothing
/// about agents.
#[derive(Debug, Clone, PartialEq)]
pub struct QaOnly {
    pub qa: QaConfig,
    /// `[commands]` and `[checks.<ID>]`.
    pub gate: GateSettings,
}

/// What happens to a run's snapshot refs (`refs/prpd/<run>/…`) when the run ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SnapshotRetention {
    /// Removed when the run is SHIPPED or ABORTED (the default): git may collect them.
    RemoveAtEnd,
    /// Kept (`[run] keep_snapshots = true`), so `prpd diff` works after the run.
    Keep,
}

impl Default for Config {
    fn default() -> Self {
        let defaults = Config::parse(Path::new("(built-in defaults)"), "")
            .unwrap_or_else(|error| unreachable!("the empty config is valid: {error}"));
        Config {
            source: None,
            ..defaults
        }
    }
}

/// Limits of one run (seed 001): reaching one escalates the run with the guardrail named.
#[derive(Debug, Clone, PartialEq)]
pub struct Guardrails {
    pub max_agent_invocations: u32,
    pub max_wall_time: Duration,
    /// Only enforced when the agent reports usage.
    pub max_tokens: Option<u64>,
    /// Only enforced when the agent reports cost.
    pub max_cost_usd: Option<f64>,
    /// Agent invocations allowed in any rolling hour; more wait for the window.
    pub max_calls_per_hour: u32,
}

/// Circuit breaker settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BreakerConfig {
    thresholds: BTreeMap<Phase, Thresholds>,
    /// How long an OPEN breaker waits before the daemon gives it one probe iteration.
    pub cooldown: Duration,
    /// How long prpd waits after an agent reports a rate or usage limit before trying again.
    pub quota_wait: Duration,
}

impl BreakerConfig {
    /// The same settings with every phase's thresholds spelled out (for comparing a config
    /// that states the defaults with one that leaves them out).
    #[cfg(test)]
    fn with_all_phases(mut self) -> BreakerConfig {
        for phase in Phase::ITERATING {
            let thresholds = self.thresholds(phase);
            self.thresholds.insert(phase, thresholds);
        }
        self
    }

    /// The thresholds of `phase`.
    pub fn thresholds(&self, phase: Phase) -> Thresholds {
        self.thresholds
            .get(&phase)
            .copied()
            .unwrap_or_else(|| Thresholds::default_for(phase))
    }
}

/// Settings of the QA gate.
#[derive(Debug, Clone, PartialEq)]
pub struct QaConfig {
    /// How many independent checks run at once.
    pub jobs: usize,
    /// How long one check may run before its process group is stopped.
    pub check_timeout: Duration,
    /// How long a stopped check gets between SIGTERM and SIGKILL.
    pub grace: Duration,
    /// `junit = "<glob>"`: the JUnit XML report the test command writes, relative to the
    /// repository root; its figures replace the console's (see `qa/junit.rs`).
    pub junit: Option<String>,
}

impl Default for QaConfig {
    fn default() -> Self {
        QaConfig {
            jobs: 4,
            check_timeout: Duration::from_secs(600),
            grace: Duration::from_secs(5),
            junit: None,
        }
    }
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawConfig {
    qa: Option<RawQa>,
    agents: Option<agents::RawAgents>,
    guardrails: Option<RawGuardrails>,
    breaker: Option<RawBreaker>,
    run: Option<RawRun>,
    commands: Option<gate::RawCommands>,
    checks: Option<gate::RawChecks>,
    ship: Option<ship::RawShip>,
    memory: Option<memory::RawMemory>,
    watch: Option<watch::RawWatch>,
    notify: Option<watch::RawNotify>,
    plan: Option<plan::RawPlan>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRun {
    keep_snapshots: Option<bool>,
    keep_worktrees: Option<bool>,
    setup: Option<Vec<String>>,
    green_may_add_tests: Option<bool>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
#[expect(
    clippy::struct_field_names,
    reason = "the field names are prpd.toml's keys, which say what they limit"
)]
struct RawGuardrails {
    max_agent_invocations: Option<u32>,
    max_wall_time: Option<String>,
    max_tokens: Option<u64>,
    max_cost_usd: Option<f64>,
    max_calls_per_hour: Option<u32>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawBreaker {
    cooldown: Option<String>,
    quota_wait: Option<String>,
    red: Option<RawThresholds>,
    green: Option<RawThresholds>,
    refactor: Option<RawThresholds>,
    document: Option<RawThresholds>,
    qa: Option<RawThresholds>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawThresholds {
    no_progress: Option<u32>,
    same_error: Option<u32>,
    permission_denied: Option<u32>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawQa {
    jobs: Option<usize>,
    check_timeout: Option<String>,
    grace: Option<String>,
    junit: Option<String>,
}

impl Config {
    /// Loads `explicit` when given (it must exist), else `<repo>/prpd.toml` when present, else
    /// the defaults.
    pub fn load(repo: &Path, explicit: Option<&Path>) -> Result<Config, ConfigError> {
        match read(repo, explicit)? {
            Some((path, text)) => Config::parse(&path, &text),
            None => Ok(Config::default()),
        }
    }

    /// Loads only what the QA gate reads from the same file: `[qa]`, `[commands]` and
    /// `[checks]`. `prpd qa` runs no agent, so the agents, guardrails and breakers are not
    /// validated here (the file must still parse and hold no unknown key): a QA run never
    /// fails on an agent's configuration.
    pub fn load_qa(repo: &Path, explicit: Option<&Path>) -> Result<QaOnly, ConfigError> {
        let Some((path, text)) = read(repo, explicit)? else {
            let defaults = Config::default();
            return Ok(QaOnly {
                qa: defaults.qa,
                gate: defaults.gate,
            });
        };
        let raw: RawConfig = config_file::parse_toml(&path, &text)?;
        Ok(QaOnly {
            qa: qa(&path, &text, raw.qa.unwrap_or_default())?,
            gate: gate::settings(&path, &text, raw.commands, raw.checks)?,
        })
    }

    /// Loads only `[memory]` of the same file (`prpd memory` runs no agent and no check, so
    /// nothing else is validated; the file must still parse and hold no unknown key).
    pub fn load_memory(repo: &Path, explicit: Option<&Path>) -> Result<MemoryConfig, ConfigError> {
        let Some((path, text)) = read(repo, explicit)? else {
            return Ok(MemoryConfig::default());
        };
        let raw: RawConfig = config_file::parse_toml(&path, &text)?;
        memory::memory(&path, &text, raw.memory.unwrap_or_default())
    }

    /// Loads only `[plan]` of the same file (`prpd plan` runs no agent and no check; the file
    /// must still parse and hold no unknown key); `None` when the section is absent.
    pub fn load_plan(
        repo: &Path,
        explicit: Option<&Path>,
    ) -> Result<Option<PlanSection>, ConfigError> {
        let Some((path, text)) = read(repo, explicit)? else {
            return Ok(None);
        };
        let raw: RawConfig = config_file::parse_toml(&path, &text)?;
        raw.plan
            .map(|raw| plan::plan(&path, &text, raw))
            .transpose()
    }

    /// Parses and validates `text`; `path` names the file in errors.
    pub fn parse(path: &Path, text: &str) -> Result<Config, ConfigError> {
        let raw: RawConfig = config_file::parse_toml(path, text)?;
        Ok(Config {
            source: Some(path.to_path_buf()),
            qa: qa(path, text, raw.qa.unwrap_or_default())?,
            agents: agents::agents(path, text, raw.agents.unwrap_or_default())?,
            guardrails: guardrails(path, text, raw.guardrails.unwrap_or_default())?,
            breaker: breaker(path, text, raw.breaker.unwrap_or_default())?,
            snapshots: if raw.run.as_ref().and_then(|run| run.keep_snapshots) == Some(true) {
                SnapshotRetention::Keep
            } else {
                SnapshotRetention::RemoveAtEnd
            },
            green_may_add_tests: raw
                .run
                .as_ref()
                .and_then(|run| run.green_may_add_tests)
                .unwrap_or(false),
            keep_worktrees: raw
                .run
                .as_ref()
                .and_then(|run| run.keep_worktrees)
                .unwrap_or(false),
            setup: setup(
                path,
                text,
                raw.run.as_ref().and_then(|run| run.setup.clone()),
            )?,
            gate: gate::settings(path, text, raw.commands, raw.checks)?,
            ship: ship::ship(path, text, raw.ship.unwrap_or_default())?,
            memory: memory::memory(path, text, raw.memory.unwrap_or_default())?,
            watch: watch::watch(path, text, raw.watch.unwrap_or_default())?,
            notify: watch::notify(path, text, raw.notify.unwrap_or_default())?,
            plan: raw
                .plan
                .map(|raw| plan::plan(path, text, raw))
                .transpose()?,
        })
    }
}

/// The path and text of the configuration file: `explicit` (it must exist), else
/// `<repo>/prpd.toml` when present; `None` means the built-in defaults.
fn read(repo: &Path, explicit: Option<&Path>) -> Result<Option<(PathBuf, String)>, ConfigError> {
    let path = if let Some(path) = explicit {
        path.to_path_buf()
    } else {
        let path = repo.join(FILE_NAME);
        if !path.exists() {
            return Ok(None);
        }
        path
    };
    let text = config_file::read(&path)?;
    Ok(Some((path, text)))
}

fn qa(path: &Path, text: &str, raw: RawQa) -> Result<QaConfig, ConfigError> {
    let defaults = QaConfig::default();
    let jobs = raw.jobs.unwrap_or(defaults.jobs);
    if jobs == 0 {
        return Err(ConfigError::at(
            path,
            text,
            "jobs",
            "`qa.jobs` must be at least 1",
        ));
    }
    Ok(QaConfig {
        jobs,
        check_timeout: duration(path, text, "check_timeout", raw.check_timeout)?
            .unwrap_or(defaults.check_timeout),
        grace: duration(path, text, "grace", raw.grace)?.unwrap_or(defaults.grace),
        junit: junit::pattern(path, text, raw.junit)?,
    })
}

/// `[run] setup`: each command a non-empty line of shell.
fn setup(path: &Path, text: &str, raw: Option<Vec<String>>) -> Result<Vec<String>, ConfigError> {
    let commands = raw.unwrap_or_default();
    if commands.iter().any(|command| command.trim().is_empty()) {
        return Err(ConfigError::at_key(
            path,
            text,
            "[run]",
            "setup",
            "`setup` holds an empty command; expected shell commands such as [\"npm ci\"]",
        ));
    }
    Ok(commands)
}

fn guardrails(path: &Path, text: &str, raw: RawGuardrails) -> Result<Guardrails, ConfigError> {
    Ok(Guardrails {
        max_agent_invocations: raw.max_agent_invocations.unwrap_or(40),
        max_wall_time: duration(path, text, "max_wall_time", raw.max_wall_time)?
            .unwrap_or(Duration::from_secs(4 * 3600)),
        max_tokens: raw.max_tokens,
        max_cost_usd: raw.max_cost_usd,
        max_calls_per_hour: raw.max_calls_per_hour.unwrap_or(100),
    })
}

fn breaker(path: &Path, text: &str, raw: RawBreaker) -> Result<BreakerConfig, ConfigError> {
    let mut thresholds = BTreeMap::new();
    for (phase, raw_thresholds) in [
        (Phase::Red, raw.red),
        (Phase::Green, raw.green),
        (Phase::Refactor, raw.refactor),
        (Phase::Document, raw.document),
        (Phase::Qa, raw.qa),
    ] {
        let defaults = Thresholds::default_for(phase);
        let Some(raw_thresholds) = raw_thresholds else {
            continue;
        };
        let chosen = Thresholds {
            no_progress: raw_thresholds.no_progress.unwrap_or(defaults.no_progress),
            same_error: raw_thresholds.same_error.unwrap_or(defaults.same_error),
            permission_denied: raw_thresholds
                .permission_denied
                .unwrap_or(defaults.permission_denied),
            ..defaults
        };
        if chosen.no_progress == 0 || chosen.same_error == 0 || chosen.permission_denied == 0 {
            return Err(ConfigError::at(
                path,
                text,
                &format!("[breaker.{}]", phase.to_string().to_lowercase()),
                "breaker thresholds must be at least 1",
            ));
        }
        thresholds.insert(phase, chosen);
    }
    Ok(BreakerConfig {
        thresholds,
        cooldown: duration(path, text, "cooldown", raw.cooldown)?
            .unwrap_or(Duration::from_secs(30 * 60)),
        quota_wait: duration(path, text, "quota_wait", raw.quota_wait)?
            .unwrap_or(Duration::from_secs(5 * 60)),
    })
}

/// Parses a duration string such as `"90s"` or `"10m"`, naming the key on error.
pub(crate) fn duration(
    path: &Path,
    text: &str,
    key: &str,
    value: Option<String>,
) -> Result<Option<Duration>, ConfigError> {
    value
        .map(|value| {
            humantime::parse_duration(&value).map_err(|error| {
                ConfigError::at(
                    path,
                    text,
                    key,
                    format!("`{key}` = {value:?} is not a duration ({error}); expected e.g. \"90s\" or \"10m\""),
                )
            })
        })
        .transpose()
}

/// When a breaker moves. All values count iterations; all are configurable (prpd.toml).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Thresholds {
    /// Iterations without progress (no progress, malformed, timeout, crash) that open the breaker.
    pub no_progress: u32,
    /// Iterations ending on the same error that open the breaker.
    pub same_error: u32,
    /// Permission denials that open the breaker.
    pub permission_denied: u32,
    /// Iterations in a row without progress that move `CLOSED` to `HALF_OPEN`.
    pub half_open_after: u32,
}

impl Thresholds {
    /// The seed's defaults (seed 004 Appendix B): no-progress / same-error RED 3/5, GREEN 2/3,
    /// REFACTOR 5/5, DOCUMENT 3/5, QA 3/3; permission denied 2; `HALF_OPEN` after 2. SHIP runs no
    /// agent iterations, so its values (QA's) only keep this function total.
    pub fn default_for(phase: Phase) -> Thresholds {
        let (no_progress, same_error) = match phase {
            Phase::Red | Phase::Document => (3, 5),
            Phase::Green => (2, 3),
            Phase::Refactor => (5, 5),
            Phase::Qa | Phase::Ship => (3, 3),
        };
        Thresholds {
            no_progress,
            same_error,
            permission_denied: 2,
            half_open_after: 2,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn example_config_parses_and_states_the_defaults() {
        let example = Config::parse(Path::new("config/prpd.toml"), EXAMPLE).expect("parses");
        let defaults = Config::default();
        assert_eq!(example.qa, defaults.qa);
        assert_eq!(example.agents, defaults.agents);
        assert_eq!(example.guardrails, defaults.guardrails);
        assert_eq!(example.breaker, defaults.breaker.with_all_phases());
        assert_eq!(example.ship, defaults.ship);
        assert_eq!(example.memory, defaults.memory);
        assert_eq!(example.watch, defaults.watch);
        assert_eq!(example.notify, defaults.notify);
    }

    #[test]
    fn missing_file_gives_defaults() {
        let dir = tempfile::tempdir().expect("tempdir");
        let config = Config::load(dir.path(), None).expect("defaults");
        assert_eq!(config, Config::default());
    }

    #[test]
    fn durations_and_jobs_are_read() {
        let text = "[qa]\njobs = 2\ncheck_timeout = \"90s\"\ngrace = \"1s\"\n";
        let config = Config::parse(Path::new("prpd.toml"), text).expect("valid");
        assert_eq!(config.qa.jobs, 2);
        assert_eq!(config.qa.check_timeout, Duration::from_secs(90));
        assert_eq!(config.qa.grace, Duration::from_secs(1));
    }

    #[test]
    fn bad_duration_names_the_line_and_the_key() {
        let text = "[qa]\njobs = 2\ncheck_timeout = \"soon\"\n";
        let error = Config::parse(Path::new("prpd.toml"), text).expect_err("bad duration");
        let message = error.to_string();
        assert!(message.starts_with("prpd.toml:3:"), "{message}");
        assert!(message.contains("`check_timeout`"), "{message}");
    }

    #[test]
    fn the_qa_settings_load_whatever_the_agents_say() {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::write(
            dir.path().join(FILE_NAME),
            "[qa]\njobs = 3\n\n[agents.default]\ncommand = []\nmodel = \"same\"\n",
        )
        .expect("write");
        assert!(Config::load(dir.path(), None).is_err());
        let qa = Config::load_qa(dir.path(), None).expect("the QA part is valid");
        assert_eq!(qa.qa.jobs, 3);
        let typo = dir.path().join("typo.toml");
        std::fs::write(&typo, "[qa]\njbos = 3\n").expect("write");
        assert!(Config::load_qa(dir.path(), Some(&typo)).is_err());
    }

    #[test]
    fn breaker_thresholds_override_the_seed() {
        let text = "[breaker.green]\nno_progress = 4\n";
        let config = Config::parse(Path::new("prpd.toml"), text).expect("valid");
        assert_eq!(config.breaker.thresholds(Phase::Green).no_progress, 4);
        assert_eq!(config.breaker.thresholds(Phase::Green).same_error, 3);
        assert_eq!(config.breaker.thresholds(Phase::Red).no_progress, 3);
    }

    #[test]
    fn unknown_key_is_named() {
        let error = Config::parse(Path::new("prpd.toml"), "[qa]\njbos = 2\n").expect_err("typo");
        assert!(
            error.to_string().contains("unknown field `jbos`"),
            "{error}"
        );
    }
}
