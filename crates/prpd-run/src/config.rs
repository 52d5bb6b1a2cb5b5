//! A run's configuration: the tables of `prpd.toml` this crate owns — `[agents]`,
//! `[guardrails]`, `[prices]`, `[breaker]`, `[run]` — read from raw serde structs (every field optional,
//! unknown keys rejected) into validated values with defaults, and put together with the tables
//! the run needs from the crates below (`[qa]`/`[commands]`/`[checks]` of prpd-qa, `[ship]`,
//! `[memory]`, `[plan]`) into one [`Config`], all from one reading of the file.
//!
//! The commented example in `config/prpd.toml` is compiled in and tested to parse, so the
//! documentation of every key cannot drift from what the parser accepts.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use prpd_base::config_file::{self, ConfigError, ConfigFile};
use prpd_base::phase::Phase;
use prpd_memory::config::MemoryConfig;
use prpd_qa::config::{GateSettings, QaConfig, QaSettings};
use prpd_ship::config::ShipConfig;
use prpd_web::config::PlanSection;

mod agents;
pub mod model;
mod presets;
mod prices;

pub use agents::{AgentConfig, Agents, PromptMode};
pub use presets::Preset;
pub use prices::{Price, Prices};

/// Validated configuration, with every default filled in.
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    /// Where the configuration came from (`None`: built-in defaults).
    pub source: Option<PathBuf>,
    pub qa: QaConfig,
    pub agents: Agents,
    pub guardrails: Guardrails,
    /// `[prices]`: what each model's tokens cost, for receipts and budgets.
    pub prices: Prices,
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
    /// `[run] holdout`: the share of RED's tests set aside from GREEN, REFACTOR and DOCUMENT
    /// and put back in QA (`0` turns hold-out tests off).
    pub holdout: f64,
    /// `[run] flaky_passes` and `flaky_days`: how the quarantine list of flaky tests lets go.
    pub flaky: FlakySettings,
    /// `[commands]` and `[checks.<ID>]`: the repository's adjustments of the QA gate.
    pub gate: GateSettings,
    /// `[ship]`: where and how an approved run ships.
    pub ship: ShipConfig,
    /// `[memory]`: where prpd remembers earlier runs, and how long a question may take.
    pub memory: MemoryConfig,
    /// `[plan]`: the running web app `prpd plan` explores; `None` when the project has none.
    pub plan: Option<PlanSection>,
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
    /// Tokens the run's agents may use (`budget.rs`); counted from the usage they report.
    pub max_tokens: Option<u64>,
    /// Dollars the run's agents may spend (`budget.rs`): reported by their CLIs, else priced.
    pub max_cost_usd: Option<f64>,
    /// Dollars every run of the repository together may spend in one UTC day.
    pub max_cost_usd_per_day: Option<f64>,
    /// Tokens every run of the repository together may use in one UTC day.
    pub max_tokens_per_day: Option<u64>,
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

/// The tables of `prpd.toml` this crate reads; the others are their crates' to read.
#[derive(Debug, Default, Deserialize)]
struct Tables {
    agents: Option<agents::RawAgents>,
    guardrails: Option<RawGuardrails>,
    prices: Option<BTreeMap<String, prices::RawPrice>>,
    breaker: Option<RawBreaker>,
    run: Option<RawRun>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRun {
    keep_snapshots: Option<bool>,
    keep_worktrees: Option<bool>,
    setup: Option<Vec<String>>,
    green_may_add_tests: Option<bool>,
    holdout: Option<f64>,
    flaky_passes: Option<u32>,
    flaky_days: Option<u32>,
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
    max_cost_usd_per_day: Option<f64>,
    max_tokens_per_day: Option<u64>,
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

impl Config {
    /// Loads `explicit` when given (it must exist), else `<repo>/prpd.toml` when present, else
    /// the defaults.
    pub fn load(repo: &Path, explicit: Option<&Path>) -> Result<Config, ConfigError> {
        match ConfigFile::find(repo, explicit)? {
            Some(file) => Config::from_file(&file),
            None => Ok(Config::default()),
        }
    }

    /// Parses and validates `text`; `path` names the file in errors.
    pub fn parse(path: &Path, text: &str) -> Result<Config, ConfigError> {
        Config::from_file(&ConfigFile::from_text(path.to_path_buf(), text.to_owned())?)
    }

    /// A run's configuration from `file`, read once: this crate's tables and those of the
    /// crates below that a run needs.
    pub fn from_file(file: &ConfigFile) -> Result<Config, ConfigError> {
        let (path, text) = (file.path(), file.text());
        let raw: Tables = file.tables()?;
        let QaSettings { qa, gate } = QaSettings::from_file(file)?;
        Ok(Config {
            source: Some(path.to_path_buf()),
            qa,
            agents: agents::agents(path, text, raw.agents.unwrap_or_default())?,
            guardrails: guardrails(path, text, raw.guardrails.unwrap_or_default())?,
            prices: prices::prices(path, text, raw.prices.unwrap_or_default())?,
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
            holdout: holdout(path, text, raw.run.as_ref().and_then(|run| run.holdout))?,
            flaky: flaky(path, text, raw.run.as_ref())?,
            setup: setup(
                path,
                text,
                raw.run.as_ref().and_then(|run| run.setup.clone()),
            )?,
            gate,
            ship: ShipConfig::from_file(file)?,
            memory: MemoryConfig::from_file(file)?,
            plan: PlanSection::from_file(file)?,
        })
    }
}

/// How the quarantine list of flaky tests (`.prpd/flaky.toml`) lets a test go.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FlakySettings {
    /// `[run] flaky_passes` (5): runs in a row a quarantined test must pass to leave the list.
    pub passes_to_leave: u32,
    /// `[run] flaky_days` (30): days a test stays quarantined after it was last seen flipping.
    pub days: u32,
}

/// `[run] flaky_passes` and `flaky_days`, each at least 1.
fn flaky(path: &Path, text: &str, raw: Option<&RawRun>) -> Result<FlakySettings, ConfigError> {
    let at_least_one = |key: &str, value: Option<u32>, default: u32| match value {
        Some(0) => Err(ConfigError::at_key(
            path,
            text,
            "[run]",
            key,
            format!("`{key} = 0` is out of range; expected a whole number of at least 1"),
        )),
        Some(value) => Ok(value),
        None => Ok(default),
    };
    Ok(FlakySettings {
        passes_to_leave: at_least_one("flaky_passes", raw.and_then(|run| run.flaky_passes), 5)?,
        days: at_least_one("flaky_days", raw.and_then(|run| run.flaky_days), 30)?,
    })
}

/// The share of RED's tests held out when prpd.toml does not say: about a third (a third of
/// three, six or nine tests, where `1/3` in floating point would give one short of it).
pub const DEFAULT_HOLDOUT: f64 = 0.34;

/// `[run] holdout`: a share from 0 (off) up to 0.9 (at least one test per requirement stays
/// visible whatever the share).
fn holdout(path: &Path, text: &str, raw: Option<f64>) -> Result<f64, ConfigError> {
    let share = raw.unwrap_or(DEFAULT_HOLDOUT);
    if !(0.0..=0.9).contains(&share) {
        return Err(ConfigError::at_key(
            path,
            text,
            "[run]",
            "holdout",
            format!(
                "`holdout = {share}` is out of range; expected a share of RED's tests from 0 (off) to 0.9, such as 0.34"
            ),
        ));
    }
    Ok(share)
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
        max_wall_time: config_file::duration(path, text, "max_wall_time", raw.max_wall_time)?
            .unwrap_or(Duration::from_secs(4 * 3600)),
        max_tokens: raw.max_tokens,
        max_cost_usd: dollars(path, text, "max_cost_usd", raw.max_cost_usd)?,
        max_cost_usd_per_day: dollars(
            path,
            text,
            "max_cost_usd_per_day",
            raw.max_cost_usd_per_day,
        )?,
        max_tokens_per_day: raw.max_tokens_per_day,
        max_calls_per_hour: raw.max_calls_per_hour.unwrap_or(100),
    })
}

/// A budget in dollars of `[guardrails]`: positive when set.
fn dollars(
    path: &Path,
    text: &str,
    key: &str,
    raw: Option<f64>,
) -> Result<Option<f64>, ConfigError> {
    match raw {
        Some(limit) if !limit.is_finite() || limit <= 0.0 => Err(ConfigError::at_key(
            path,
            text,
            "[guardrails]",
            key,
            format!(
                "`{key} = {limit}` is not a budget; expected a positive number of US dollars, such as 20.0"
            ),
        )),
        other => Ok(other),
    }
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
        cooldown: config_file::duration(path, text, "cooldown", raw.cooldown)?
            .unwrap_or(Duration::from_secs(30 * 60)),
        quota_wait: config_file::duration(path, text, "quota_wait", raw.quota_wait)?
            .unwrap_or(Duration::from_secs(5 * 60)),
    })
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

/// Whether every key of this crate's tables in `file` is one it knows, with a value of the right
/// type (nothing more is judged): the binary asks every crate before any command starts, so a
/// typo in any table stops every command, naming its line.
pub fn check_keys(file: &ConfigFile) -> Result<(), ConfigError> {
    file.tables::<Tables>().map(drop)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn example_config_parses_and_states_the_defaults() {
        let example =
            Config::parse(Path::new("config/prpd.toml"), config_file::EXAMPLE).expect("parses");
        let defaults = Config::default();
        assert_eq!(example.qa, defaults.qa);
        assert_eq!(example.agents, defaults.agents);
        assert_eq!(example.guardrails, defaults.guardrails);
        assert_eq!(example.breaker, defaults.breaker.with_all_phases());
        assert_eq!(example.ship, defaults.ship);
        assert_eq!(example.memory, defaults.memory);
        assert!((example.holdout - defaults.holdout).abs() < f64::EPSILON);
        assert_eq!(example.flaky, defaults.flaky);
    }

    #[test]
    fn flaky_settings_default_to_five_runs_and_thirty_days_and_refuse_zero() {
        let defaults = Config::default().flaky;
        assert_eq!((defaults.passes_to_leave, defaults.days), (5, 30));
        let error = Config::parse(Path::new("prpd.toml"), "[run]\nflaky_passes = 0\n")
            .expect_err("out of range")
            .to_string();
        assert!(
            error.starts_with("prpd.toml:2:1: `flaky_passes = 0` is out of range"),
            "{error}"
        );
    }

    #[test]
    fn a_holdout_share_out_of_range_is_refused_at_its_line() {
        let error = Config::parse(Path::new("prpd.toml"), "[run]\nholdout = 1.5\n")
            .expect_err("out of range")
            .to_string();
        assert!(
            error.contains("prpd.toml:2") && error.contains("0.9"),
            "{error}"
        );
        let off = Config::parse(Path::new("prpd.toml"), "[run]\nholdout = 0\n").expect("0 is off");
        assert!(off.holdout.abs() < f64::EPSILON);
    }

    #[test]
    fn missing_file_gives_defaults() {
        let dir = tempfile::tempdir().expect("tempdir");
        let config = Config::load(dir.path(), None).expect("defaults");
        assert_eq!(config, Config::default());
    }

    #[test]
    fn every_table_is_read_from_one_file() {
        let text = "[qa]\njobs = 2\n\n[guardrails]\nmax_agent_invocations = 7\n\n[ship]\ndraft = true\n\n[memory]\nbackend = \"off\"\n\n[plan]\nmax_pages = 3\n";
        let config = Config::parse(Path::new("prpd.toml"), text).expect("valid");
        assert_eq!(config.qa.jobs, 2);
        assert_eq!(config.guardrails.max_agent_invocations, 7);
        assert!(config.ship.draft);
        assert_eq!(config.memory.backend.name(), "off");
        assert_eq!(config.plan.map(|plan| plan.max_pages), Some(3));
    }

    #[test]
    fn an_agents_error_fails_the_run_but_not_the_qa_part() {
        let text = "[qa]\njobs = 3\n\n[agents.default]\ncommand = []\nmodel = \"same\"\n";
        assert!(Config::parse(Path::new("prpd.toml"), text).is_err());
        assert!(QaSettings::parse(Path::new("prpd.toml"), text).is_ok());
    }

    #[test]
    fn breaker_thresholds_override_the_defaults() {
        let text = "[breaker.green]\nno_progress = 4\n";
        let config = Config::parse(Path::new("prpd.toml"), text).expect("valid");
        assert_eq!(config.breaker.thresholds(Phase::Green).no_progress, 4);
        assert_eq!(config.breaker.thresholds(Phase::Green).same_error, 3);
        assert_eq!(config.breaker.thresholds(Phase::Red).no_progress, 3);
    }

    #[test]
    fn unknown_key_is_named() {
        let error = Config::parse(
            Path::new("prpd.toml"),
            "[guardrails]\nmax_wal_time = \"1h\"\n",
        )
        .expect_err("typo");
        assert!(
            error.to_string().contains("unknown field `max_wal_time`"),
            "{error}"
        );
    }
}
