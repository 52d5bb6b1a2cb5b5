//! `prpd.toml`, the optional per-repository configuration: raw serde structs (every field
//! optional, unknown keys rejected) turned once into a validated [`Config`] with defaults.
//!
//! The commented example in `config/prpd.toml` is compiled in and tested to parse, so the
//! documentation of every key cannot drift from what the parser accepts.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::base::config_file::{self, ConfigError};
use crate::base::phase::Phase;

mod gate;
mod junit;

pub use gate::{COMMAND_KINDS, CheckSetting, CommandSetting, GateSettings, Located, Place};

/// The file name prpd looks for at the root of the target repository.
pub const FILE_NAME: &str = "prpd.toml";

/// The commented example configuration shipped in `config/prpd.toml`.
pub const EXAMPLE: &str = include_str!("../../config/prpd.toml");

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
    /// `[run] green_may_add_tests = true`: GREEN may add new test modules in its first attempt
    /// too (they freeze when GREEN ends); by default only after a REJECT.
    pub green_may_add_tests: bool,
    /// `[commands]` and `[checks.<ID>]`: the repository's adjustments of the QA gate.
    pub gate: GateSettings,
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

/// How a prompt reaches the agent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PromptMode {
    /// Written to the agent's standard input.
    Stdin,
    /// Written to a file whose path replaces `{prompt_file}` in the command.
    File,
}

/// The agent of one phase, with the defaults of `[agents.default]` filled in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentConfig {
    /// The program and its arguments (not a shell string). `{model}` and `{prompt_file}` are
    /// replaced before it runs.
    pub command: Vec<String>,
    /// The model the agent uses, when it has one.
    pub model: Option<String>,
    pub prompt: PromptMode,
    /// How long one invocation may run.
    pub timeout: Duration,
    /// Environment variables passed through from prpd's environment (besides `PATH`, `HOME`
    /// and the `PRPD_*` variables); everything else is withheld from the agent.
    pub env: Vec<String>,
}

/// The agents of every phase.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Agents {
    default: AgentConfig,
    phases: BTreeMap<Phase, AgentConfig>,
    /// Accept a QA agent that uses the GREEN agent's model.
    pub allow_same_model: bool,
}

impl Agents {
    /// The agent of `phase`.
    pub fn for_phase(&self, phase: Phase) -> &AgentConfig {
        self.phases.get(&phase).unwrap_or(&self.default)
    }

    /// The `[agents.<key>]` table the command of `phase` comes from: the phase's own when it
    /// names another command than the default, else `default`.
    pub fn command_key(&self, phase: Phase) -> String {
        match self.phases.get(&phase) {
            Some(agent) if agent.command != self.default.command => {
                phase.to_string().to_lowercase()
            }
            Some(_) | None => "default".to_owned(),
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
    agents: Option<RawAgents>,
    guardrails: Option<RawGuardrails>,
    breaker: Option<RawBreaker>,
    run: Option<RawRun>,
    commands: Option<gate::RawCommands>,
    checks: Option<gate::RawChecks>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRun {
    keep_snapshots: Option<bool>,
    green_may_add_tests: Option<bool>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawAgents {
    allow_same_model: Option<bool>,
    default: Option<RawAgent>,
    red: Option<RawAgent>,
    green: Option<RawAgent>,
    refactor: Option<RawAgent>,
    document: Option<RawAgent>,
    qa: Option<RawAgent>,
}

#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawAgent {
    command: Option<Vec<String>>,
    model: Option<String>,
    prompt: Option<String>,
    timeout: Option<String>,
    env: Option<Vec<String>>,
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

/// The model QA reviews with while none is configured: another than the built-in default's.
const BUILTIN_QA_MODEL: &str = "opus";

/// The agent used when `[agents.default]` names none: Claude Code in print mode with JSON
/// output, which prpd reads (`result`, `usage`, `total_cost_usd`).
fn builtin_default_agent() -> AgentConfig {
    AgentConfig {
        command: [
            "claude",
            "-p",
            "--model",
            "{model}",
            "--output-format",
            "json",
            "--permission-mode",
            "acceptEdits",
        ]
        .map(str::to_owned)
        .to_vec(),
        model: Some("sonnet".to_owned()),
        prompt: PromptMode::Stdin,
        timeout: Duration::from_secs(30 * 60),
        env: vec!["ANTHROPIC_API_KEY".to_owned()],
    }
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

    /// Parses and validates `text`; `path` names the file in errors.
    pub fn parse(path: &Path, text: &str) -> Result<Config, ConfigError> {
        let raw: RawConfig = config_file::parse_toml(path, text)?;
        Ok(Config {
            source: Some(path.to_path_buf()),
            qa: qa(path, text, raw.qa.unwrap_or_default())?,
            agents: agents(path, text, raw.agents.unwrap_or_default())?,
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
            gate: gate::settings(path, text, raw.commands, raw.checks)?,
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

fn agents(path: &Path, text: &str, raw: RawAgents) -> Result<Agents, ConfigError> {
    let builtin = builtin_default_agent();
    let default_model_configured = raw
        .default
        .as_ref()
        .is_some_and(|default| default.model.is_some());
    let default = agent(
        path,
        text,
        "default",
        raw.default.unwrap_or_default(),
        &builtin,
    )?;
    let mut phases = BTreeMap::new();
    // While no model is configured, the QA side reviews with the built-in QA model, another
    // than GREEN's (model diversity, DESIGN §3), whatever else `[agents.default]` or
    // `[agents.qa]` set (a timeout, the env). A model configured in `[agents.default]` applies
    // to QA too, unless `[agents.qa]` names its own.
    let qa_fallback = if default_model_configured {
        raw.qa
    } else {
        let qa = raw.qa.unwrap_or_default();
        Some(RawAgent {
            model: qa.model.or_else(|| Some(BUILTIN_QA_MODEL.to_owned())),
            ..qa
        })
    };
    for (phase, name, raw_agent) in [
        (Phase::Red, "red", raw.red),
        (Phase::Green, "green", raw.green),
        (Phase::Refactor, "refactor", raw.refactor),
        (Phase::Document, "document", raw.document),
        (Phase::Qa, "qa", qa_fallback),
    ] {
        if let Some(raw_agent) = raw_agent {
            phases.insert(phase, agent(path, text, name, raw_agent, &default)?);
        }
    }
    let agents = Agents {
        default,
        phases,
        allow_same_model: raw.allow_same_model.unwrap_or(false),
    };
    let green = &agents.for_phase(Phase::Green).model;
    let qa = &agents.for_phase(Phase::Qa).model;
    if !agents.allow_same_model && green.is_some() && green == qa {
        return Err(ConfigError::at(
            path,
            text,
            "[agents",
            format!(
                "the QA agent uses the GREEN agent's model ({}); QA must review with a different model (set `model` in [agents.qa]) or set `allow_same_model = true` in [agents]",
                green.as_deref().unwrap_or_default()
            ),
        ));
    }
    Ok(agents)
}

fn agent(
    path: &Path,
    text: &str,
    name: &str,
    raw: RawAgent,
    base: &AgentConfig,
) -> Result<AgentConfig, ConfigError> {
    let header = format!("[agents.{name}]");
    let command = raw.command.unwrap_or_else(|| base.command.clone());
    if command
        .first()
        .is_none_or(|program| program.trim().is_empty())
    {
        return Err(ConfigError::at(
            path,
            text,
            &header,
            format!(
                "`agents.{name}.command` is empty; expected a program and its arguments, e.g. [\"claude\", \"-p\"]"
            ),
        ));
    }
    let prompt = match raw.prompt.as_deref() {
        None => base.prompt,
        Some("stdin") => PromptMode::Stdin,
        Some("file") => PromptMode::File,
        Some(other) => {
            return Err(ConfigError::at(
                path,
                text,
                &header,
                format!("`agents.{name}.prompt` is {other:?}; expected \"stdin\" or \"file\""),
            ));
        }
    };
    if prompt == PromptMode::File && !command.iter().any(|arg| arg.contains("{prompt_file}")) {
        return Err(ConfigError::at(
            path,
            text,
            &header,
            format!(
                "`agents.{name}` passes the prompt as a file but its command has no `{{prompt_file}}` placeholder"
            ),
        ));
    }
    let model = raw.model.or_else(|| base.model.clone());
    if model.is_none() && command.iter().any(|arg| arg.contains("{model}")) {
        return Err(ConfigError::at(
            path,
            text,
            &header,
            format!("`agents.{name}.command` uses `{{model}}` but no model is set"),
        ));
    }
    Ok(AgentConfig {
        command,
        model,
        prompt,
        timeout: duration(path, text, "timeout", raw.timeout)?.unwrap_or(base.timeout),
        env: raw.env.unwrap_or_else(|| base.env.clone()),
    })
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
    fn phase_agents_inherit_the_default() {
        let text = "[agents.default]\ncommand = [\"agent\", \"--model\", \"{model}\"]\nmodel = \"a\"\ntimeout = \"1m\"\n\n[agents.qa]\nmodel = \"b\"\n";
        let config = Config::parse(Path::new("prpd.toml"), text).expect("valid");
        let qa = config.agents.for_phase(Phase::Qa);
        assert_eq!(qa.command[0], "agent");
        assert_eq!(qa.model.as_deref(), Some("b"));
        assert_eq!(qa.timeout, Duration::from_secs(60));
        assert_eq!(
            config.agents.for_phase(Phase::Red).model.as_deref(),
            Some("a")
        );
    }

    #[test]
    fn same_model_for_green_and_qa_is_refused() {
        let text = "[agents]\n\n[agents.default]\ncommand = [\"agent\"]\nmodel = \"same\"\n";
        let error = Config::parse(Path::new("prpd.toml"), text).expect_err("same model");
        assert!(error.to_string().contains("allow_same_model"), "{error}");
        let allowed = text.replace("[agents]\n", "[agents]\nallow_same_model = true\n");
        Config::parse(Path::new("prpd.toml"), &allowed).expect("allowed explicitly");
    }

    #[test]
    fn defaults_give_qa_another_model_than_green() {
        let config = Config::default();
        assert_ne!(
            config.agents.for_phase(Phase::Green).model,
            config.agents.for_phase(Phase::Qa).model
        );
    }

    #[test]
    fn any_key_of_the_default_agent_but_its_model_keeps_the_builtin_qa_model() {
        for text in [
            "[agents.default]\ntimeout = \"1h\"\n",
            "[agents.default]\nenv = [\"ANTHROPIC_API_KEY\", \"HTTPS_PROXY\"]\n",
            "[agents.default]\ncommand = [\"my-claude\", \"-p\", \"--model\", \"{model}\"]\n",
            "[agents.qa]\ntimeout = \"5m\"\n",
        ] {
            let config = Config::parse(Path::new("prpd.toml"), text)
                .unwrap_or_else(|error| panic!("{text}: {error}"));
            assert_eq!(
                config.agents.for_phase(Phase::Qa).model.as_deref(),
                Some(BUILTIN_QA_MODEL),
                "{text}"
            );
            assert_eq!(
                config.agents.for_phase(Phase::Green).model.as_deref(),
                Some("sonnet"),
                "{text}"
            );
        }
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
    fn file_prompt_needs_the_placeholder() {
        let text = "[agents.default]\ncommand = [\"aider\"]\nprompt = \"file\"\n";
        let error = Config::parse(Path::new("prpd.toml"), text).expect_err("no placeholder");
        assert!(error.to_string().starts_with("prpd.toml:1:"), "{error}");
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
