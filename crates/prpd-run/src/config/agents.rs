//! `[agents]` of `prpd.toml`: which program runs each phase, with which model, how it gets its
//! prompt and which variables of prpd's environment it sees. `[agents.default]` applies to
//! every phase and `[agents.<phase>]` overrides it key by key; QA reviews with another model
//! than GREEN implements with unless `allow_same_model` says otherwise. `[agents.examiner]`,
//! when present, is the agent that writes hold-out tests from the PRP alone; like QA, it uses
//! another model than GREEN.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use serde::Deserialize;

use prpd_base::config_file::ConfigError;
use prpd_base::phase::Phase;

use super::model;
use super::presets::Preset;
use prpd_base::config_file::duration;

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
    phases: BTreeMap<Phase, PhaseAgent>,
    /// `[agents.examiner]`: writes acceptance tests from the PRP alone, straight into the
    /// hold-out tests (`None`: no examiner, the default).
    pub examiner: Option<AgentConfig>,
    /// Accept a QA agent that uses the GREEN agent's model.
    pub allow_same_model: bool,
}

/// One phase's agent and the `[agents.<key>]` table its command comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
struct PhaseAgent {
    config: AgentConfig,
    command_key: &'static str,
}

impl Agents {
    /// The agent of `phase` (SHIP runs none; it is given QA's, which keeps this total).
    pub fn for_phase(&self, phase: Phase) -> &AgentConfig {
        let phase = if phase == Phase::Ship {
            Phase::Qa
        } else {
            phase
        };
        &self
            .phases
            .get(&phase)
            .expect("`agents` fills in every iterating phase")
            .config
    }

    /// The `[agents.<key>]` table the command of `phase` comes from: the phase's own when it
    /// sets `command` or `agent`, else `default`.
    pub fn command_key(&self, phase: Phase) -> String {
        self.phases
            .get(&phase)
            .map_or("default", |agent| agent.command_key)
            .to_owned()
    }
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawAgents {
    allow_same_model: Option<bool>,
    default: Option<RawAgent>,
    red: Option<RawAgent>,
    green: Option<RawAgent>,
    refactor: Option<RawAgent>,
    document: Option<RawAgent>,
    qa: Option<RawAgent>,
    examiner: Option<RawAgent>,
}

#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawAgent {
    agent: Option<String>,
    command: Option<Vec<String>>,
    model: Option<String>,
    prompt: Option<String>,
    timeout: Option<String>,
    env: Option<Vec<String>>,
}

/// The preset used when `[agents.default]` names none.
const BUILTIN_PRESET: Preset = Preset::ClaudeCode;

pub(super) fn agents(path: &Path, text: &str, raw: RawAgents) -> Result<Agents, ConfigError> {
    let default = raw.default.unwrap_or_default();
    let default_preset = preset(path, text, "default", default.agent.as_deref())?;
    let mut phases = BTreeMap::new();
    for (phase, name, own) in [
        (Phase::Red, "red", raw.red),
        (Phase::Green, "green", raw.green),
        (Phase::Refactor, "refactor", raw.refactor),
        (Phase::Document, "document", raw.document),
        (Phase::Qa, "qa", raw.qa),
    ] {
        // A phase that picks its own preset starts from that block; otherwise from the
        // default's preset with `[agents.default]`'s keys over it. The phase's own keys win.
        let own_preset = match own.as_ref().and_then(|own| own.agent.as_deref()) {
            Some(agent) => preset(path, text, name, Some(agent))?,
            None => None,
        };
        let base = match own_preset {
            Some(own_preset) => own_preset.block(phase),
            None => agent(
                path,
                text,
                "default",
                default.clone(),
                &default_preset.unwrap_or(BUILTIN_PRESET).block(phase),
            )?,
        };
        let command_key = if own
            .as_ref()
            .is_some_and(|own| own.agent.is_some() || own.command.is_some())
        {
            name
        } else {
            "default"
        };
        let config = match own {
            Some(own) => agent(path, text, name, own, &base)?,
            None => base,
        };
        phases.insert(
            phase,
            PhaseAgent {
                config,
                command_key,
            },
        );
    }
    let examiner = examiner(path, text, raw.examiner, &default, default_preset)?;
    let agents = Agents {
        phases,
        examiner,
        allow_same_model: raw.allow_same_model.unwrap_or(false),
    };
    if let (false, Some(green), Some(examiner)) = (
        agents.allow_same_model,
        &agents.for_phase(Phase::Green).model,
        agents
            .examiner
            .as_ref()
            .and_then(|examiner| examiner.model.as_ref()),
    ) && model::same(green, examiner)
    {
        return Err(ConfigError::at(
            path,
            text,
            "[agents.examiner]",
            format!(
                "the examiner uses the GREEN agent's model: {green}; it must write its tests with a different model (set `model` in [agents.examiner]) or set `allow_same_model = true` in [agents]"
            ),
        ));
    }
    let green = &agents.for_phase(Phase::Green).model;
    let qa = &agents.for_phase(Phase::Qa).model;
    if let (false, Some(green), Some(qa)) = (agents.allow_same_model, green, qa)
        && model::same(green, qa)
    {
        let also = if green == qa {
            String::new()
        } else {
            format!(" ({qa} is {green})")
        };
        return Err(ConfigError::at(
            path,
            text,
            "[agents",
            format!(
                "the QA agent uses the GREEN agent's model{also}: {green}; QA must review with a different model (set `model` in [agents.qa]) or set `allow_same_model = true` in [agents]"
            ),
        ));
    }
    Ok(agents)
}

/// `[agents.examiner]`: its own preset's block, or the default's with `[agents.default]`'s
/// keys, with its own keys over it; `None` without the table.
fn examiner(
    path: &Path,
    text: &str,
    own: Option<RawAgent>,
    default: &RawAgent,
    default_preset: Option<Preset>,
) -> Result<Option<AgentConfig>, ConfigError> {
    let Some(own) = own else {
        return Ok(None);
    };
    let base = match own.agent.as_deref() {
        Some(name) => preset(path, text, "examiner", Some(name))?.map(examiner_block),
        None => None,
    };
    let base = match base {
        Some(base) => base,
        None => agent(
            path,
            text,
            "default",
            default.clone(),
            &examiner_block(default_preset.unwrap_or(BUILTIN_PRESET)),
        )?,
    };
    Ok(Some(agent(path, text, "examiner", own, &base)?))
}

/// A preset's examiner: RED's command (it writes test files), QA's model (not GREEN's).
fn examiner_block(preset: Preset) -> AgentConfig {
    AgentConfig {
        model: preset.block(Phase::Qa).model,
        ..preset.block(Phase::Red)
    }
}

/// The preset `agent = "<name>"` names in `[agents.<key>]`.
fn preset(
    path: &Path,
    text: &str,
    key: &str,
    name: Option<&str>,
) -> Result<Option<Preset>, ConfigError> {
    let Some(name) = name else {
        return Ok(None);
    };
    Preset::named(name).map(Some).ok_or_else(|| {
        let known: Vec<String> = Preset::ALL
            .iter()
            .map(|preset| format!("\"{}\"", preset.name()))
            .collect();
        ConfigError::at(
            path,
            text,
            &format!("agent = \"{name}\""),
            format!(
                "`agents.{key}.agent` is {name:?}; expected one of {}",
                known.join(", ")
            ),
        )
    })
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
    if stream_json_without_verbose(&command) {
        return Err(ConfigError::at(
            path,
            text,
            "stream-json",
            format!(
                "`agents.{name}.command` asks Claude Code for `--output-format stream-json` in print mode without `--verbose`, which it refuses; add \"--verbose\" or use `--output-format json`"
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

/// Claude Code refuses `-p --output-format stream-json` without `--verbose`: every call would
/// fail, so the configuration is refused instead.
fn stream_json_without_verbose(command: &[String]) -> bool {
    let is_claude = command.first().is_some_and(|program| {
        Path::new(program)
            .file_name()
            .is_some_and(|name| name == "claude")
    });
    let print = command.iter().any(|arg| arg == "-p" || arg == "--print");
    let stream = command
        .windows(2)
        .any(|pair| pair[0] == "--output-format" && pair[1] == "stream-json")
        || command
            .iter()
            .any(|arg| arg == "--output-format=stream-json");
    is_claude && print && stream && !command.iter().any(|arg| arg == "--verbose")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;

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
                Some(Preset::ClaudeCode.qa_model()),
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
    fn file_prompt_needs_the_placeholder() {
        let text = "[agents.default]\ncommand = [\"aider\"]\nprompt = \"file\"\n";
        let error = Config::parse(Path::new("prpd.toml"), text).expect_err("no placeholder");
        assert!(error.to_string().starts_with("prpd.toml:1:"), "{error}");
    }

    #[test]
    fn a_preset_gives_every_phase_its_block_and_explicit_keys_override_it() {
        let text = "[agents.default]\nagent = \"aider\"\ntimeout = \"5m\"\n";
        let config = Config::parse(Path::new("prpd.toml"), text).expect("valid");
        let green = config.agents.for_phase(Phase::Green);
        assert_eq!(green.command[0], "aider");
        assert!(green.command.contains(&"--test-cmd".to_owned()));
        assert!(
            !config
                .agents
                .for_phase(Phase::Red)
                .command
                .contains(&"--test-cmd".to_owned())
        );
        assert_eq!(green.prompt, PromptMode::File);
        assert_eq!(green.timeout, Duration::from_secs(300));
        assert!(green.env.contains(&"AIDER_*".to_owned()));
        assert_eq!(green.model.as_deref(), Some("sonnet"));
        assert_eq!(
            config.agents.for_phase(Phase::Qa).model.as_deref(),
            Some("opus")
        );
        assert_eq!(config.agents.command_key(Phase::Green), "default");

        let text = "[agents.default]\nagent = \"codex\"\n";
        let config = Config::parse(Path::new("prpd.toml"), text).expect("valid");
        assert_eq!(
            config.agents.for_phase(Phase::Qa).model.as_deref(),
            Some("gpt-5")
        );
        assert_eq!(
            config.agents.for_phase(Phase::Green).model.as_deref(),
            Some("gpt-5-codex")
        );
    }

    #[test]
    fn a_phase_may_pick_another_preset() {
        let text = "[agents.default]\nagent = \"claude-code\"\ntimeout = \"5m\"\n\n[agents.qa]\nagent = \"codex\"\n";
        let config = Config::parse(Path::new("prpd.toml"), text).expect("valid");
        let qa = config.agents.for_phase(Phase::Qa);
        assert_eq!(qa.command[0], "codex");
        assert_eq!(qa.model.as_deref(), Some("gpt-5"));
        assert_eq!(
            qa.timeout,
            Duration::from_secs(30 * 60),
            "the default's keys stay with it"
        );
        assert_eq!(config.agents.command_key(Phase::Qa), "qa");
        assert_eq!(config.agents.for_phase(Phase::Green).command[0], "claude");
    }

    #[test]
    fn an_unknown_preset_is_named_with_its_line() {
        let text = "[agents.default]\nagent = \"claude\"\n";
        let error = Config::parse(Path::new("prpd.toml"), text).expect_err("unknown preset");
        let message = error.to_string();
        assert!(message.starts_with("prpd.toml:2:"), "{message}");
        assert!(
            message.contains("\"claude-code\", \"codex\", \"aider\""),
            "{message}"
        );
    }

    #[test]
    fn an_alias_and_the_model_it_names_are_the_same_model() {
        let text = "[agents.default]\nagent = \"claude-code\"\n\n[agents.qa]\nmodel = \"claude-sonnet-5\"\n";
        let error = Config::parse(Path::new("prpd.toml"), text).expect_err("same model");
        let message = error.to_string();
        assert!(message.contains("claude-sonnet-5 is sonnet"), "{message}");
    }

    #[test]
    fn claude_stream_json_without_verbose_is_refused() {
        let text = "[agents.default]\ncommand = [\"claude\", \"-p\", \"--output-format\", \"stream-json\"]\n";
        let error = Config::parse(Path::new("prpd.toml"), text).expect_err("no --verbose");
        let message = error.to_string();
        assert!(message.starts_with("prpd.toml:2:"), "{message}");
        assert!(message.contains("--verbose"), "{message}");
        let verbose = text.replace("\"stream-json\"]", "\"stream-json\", \"--verbose\"]");
        Config::parse(Path::new("prpd.toml"), &verbose).expect("with --verbose");
    }

    #[test]
    fn the_examiner_is_off_by_default_and_writes_with_another_model_than_green() {
        assert_eq!(Config::default().agents.examiner, None);
        let text = "[agents.examiner]\nagent = \"claude-code\"\n";
        let examiner = Config::parse(Path::new("prpd.toml"), text)
            .expect("valid")
            .agents
            .examiner
            .expect("an examiner");
        assert_eq!(examiner.model.as_deref(), Some("opus"), "QA's model");
        let error = Config::parse(
            Path::new("prpd.toml"),
            "[agents.examiner]\nmodel = \"sonnet\"\n",
        )
        .expect_err("GREEN's model")
        .to_string();
        assert!(
            error.contains("examiner") && error.contains("prpd.toml:1"),
            "{error}"
        );
    }
}
