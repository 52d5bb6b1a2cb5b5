//! `[agents]` of `prpd.toml`: which program runs each phase, with which model, how it gets its
//! prompt and which variables of prpd's environment it sees. `[agents.default]` applies to
//! every phase and `[agents.<phase>]` overrides it key by key; QA reviews with another model
//! than GREEN implements with unless `allow_same_model` says otherwise.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use serde::Deserialize;

use crate::base::config_file::ConfigError;
use crate::base::phase::Phase;

use super::duration;

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

pub(super) fn agents(path: &Path, text: &str, raw: RawAgents) -> Result<Agents, ConfigError> {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::config::Config;

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
    fn file_prompt_needs_the_placeholder() {
        let text = "[agents.default]\ncommand = [\"aider\"]\nprompt = \"file\"\n";
        let error = Config::parse(Path::new("prpd.toml"), text).expect_err("no placeholder");
        assert!(error.to_string().starts_with("prpd.toml:1:"), "{error}");
    }
}
