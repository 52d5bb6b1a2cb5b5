//! How each agent CLI finds its model: the variables that hold the key it sends, the variable
//! that points it at another endpoint, and the login it keeps instead of a key. prpd passes an
//! agent only the variables its block's `env` allows, and each CLI reads them its own way; a
//! setting the CLI does not read fails far from where it was made (Codex CLI 0.171 sends no key
//! from `OPENAI_API_KEY` and ignores `OPENAI_BASE_URL`, and waits for `api.openai.com` until
//! its timeout). This is where that knowledge lives: `prpd init` reports from it what it finds
//! (names, never values), an escalation for an agent that cannot use its model names the
//! settings of its CLI, and [`codex_argv`] hands Codex the endpoint it would not read.
//!
//! Codex's endpoint. Its built-in provider reads `openai_base_url` from `$CODEX_HOME/config.toml`
//! or from `-c openai_base_url=…`, not from the environment. When the agent is given
//! `OPENAI_BASE_URL`, prpd passes it as `-c openai_base_url="…"` (unless the command sets that
//! key itself): the variable is what every client of that API reads, and what a user who points prpd
//! at a gateway sets. The key is not mapped the same way: `CODEX_API_KEY` would override a
//! `codex login` (a subscription plan would be billed through the API instead), so a missing key is reported
//! instead, and a provider's refusal escalates within seconds.

use std::path::{Path, PathBuf};

use crate::config::{AgentConfig, Preset};
use prpd_base::process;

/// The CLI an agent's command starts, known by its program's file name.
pub fn cli_of(config: &AgentConfig) -> Option<Preset> {
    let program = Path::new(config.command.first()?).file_name()?.to_str()?;
    match program {
        "claude" => Some(Preset::ClaudeCode),
        "codex" => Some(Preset::Codex),
        "aider" => Some(Preset::Aider),
        _ => None,
    }
}

/// What an agent needs to reach its model, and what of it prpd's environment holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Needs {
    pub cli: Preset,
    /// The variables the CLI sends a key from, any one of them; empty when prpd cannot tell
    /// (an Aider model of a provider it does not know) or none is needed (Ollama).
    pub keys: Vec<&'static str>,
    /// The first of `keys` that is set and passed.
    pub key_passed: Option<&'static str>,
    /// Those of `keys` that are set but that the block's `env` withholds.
    pub keys_withheld: Vec<&'static str>,
    /// The CLI's login file, when it exists: it serves instead of a key.
    pub login: Option<PathBuf>,
    /// Set and passed variables that look like a key for this CLI but that it does not read.
    pub ignored: Vec<&'static str>,
    /// The variable that points the CLI at another endpoint, and its value, when set and passed.
    pub endpoint: Option<(&'static str, String)>,
}

/// Reads what `config`'s CLI needs from prpd's environment; `None` for a command prpd does not
/// know (a script).
pub fn needs(config: &AgentConfig) -> Option<Needs> {
    let cli = cli_of(config)?;
    let passed = |name: &str| process::passed_value(&config.env, name).filter(|v| !v.is_empty());
    let set = |name: &str| std::env::var_os(name).is_some_and(|value| !value.is_empty());
    let (keys, endpoints, ignored): (Vec<&'static str>, &[&'static str], &[&'static str]) =
        match cli {
            Preset::ClaudeCode => (
                vec!["ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"],
                &["ANTHROPIC_BASE_URL"],
                &[],
            ),
            Preset::Codex => (
                vec!["CODEX_API_KEY"],
                &["OPENAI_BASE_URL"],
                &["OPENAI_API_KEY"],
            ),
            Preset::Aider => {
                let (keys, endpoints) = aider_provider(config.model.as_deref().unwrap_or(""));
                (keys.to_vec(), endpoints, &[])
            }
        };
    Some(Needs {
        cli,
        key_passed: keys.iter().copied().find(|name| passed(name).is_some()),
        keys_withheld: keys
            .iter()
            .copied()
            .filter(|name| set(name) && passed(name).is_none())
            .collect(),
        keys,
        login: login_file(cli, &passed).filter(|file| file.is_file()),
        ignored: ignored
            .iter()
            .copied()
            .filter(|name| passed(name).is_some())
            .collect(),
        endpoint: endpoints
            .iter()
            .find_map(|name| passed(name).map(|url| (*name, url))),
    })
}

/// The key and endpoint variables litellm reads for an Aider `model`, by its provider prefix
/// or, for Aider's aliases and bare names, by the family the name belongs to.
fn aider_provider(model: &str) -> (&'static [&'static str], &'static [&'static str]) {
    let (prefix, name) = model.split_once('/').unwrap_or(("", model));
    let name = name.to_ascii_lowercase();
    let family = if prefix.is_empty() {
        if ["sonnet", "opus", "haiku", "claude"]
            .iter()
            .any(|alias| name.starts_with(alias))
        {
            "anthropic"
        } else if name.starts_with("gpt")
            || ["4o", "4", "o1", "o3", "o4"]
                .iter()
                .any(|alias| name == *alias || name.starts_with(&format!("{alias}-")))
        {
            "openai"
        } else if name.starts_with("gemini") {
            "gemini"
        } else if name.starts_with("deepseek") {
            "deepseek"
        } else {
            ""
        }
    } else {
        prefix
    };
    match family {
        "anthropic" => (&["ANTHROPIC_API_KEY"], &["ANTHROPIC_API_BASE"]),
        "openai" => (&["OPENAI_API_KEY"], &["OPENAI_API_BASE", "OPENAI_BASE_URL"]),
        "gemini" => (&["GEMINI_API_KEY"], &[]),
        "deepseek" => (&["DEEPSEEK_API_KEY"], &[]),
        "openrouter" => (&["OPENROUTER_API_KEY"], &[]),
        "ollama" | "ollama_chat" => (&[], &["OLLAMA_API_BASE"]),
        _ => (&[], &[]),
    }
}

/// Where the CLI keeps the login that serves instead of a key: Claude Code's
/// `.credentials.json` in `$CLAUDE_CONFIG_DIR` (else `~/.claude`), Codex's `auth.json` in
/// `$CODEX_HOME` (else `~/.codex`), as the agent will see them.
fn login_file(cli: Preset, passed: &dyn Fn(&str) -> Option<String>) -> Option<PathBuf> {
    let home = || std::env::var_os("HOME").map(PathBuf::from);
    match cli {
        Preset::ClaudeCode => Some(
            passed("CLAUDE_CONFIG_DIR")
                .map(PathBuf::from)
                .or_else(|| Some(home()?.join(".claude")))?
                .join(".credentials.json"),
        ),
        Preset::Codex => Some(
            passed("CODEX_HOME")
                .map(PathBuf::from)
                .or_else(|| Some(home()?.join(".codex")))?
                .join("auth.json"),
        ),
        Preset::Aider => None,
    }
}

/// How to give the CLI a key and an endpoint, for an escalation and for `prpd init`.
pub fn advice(cli: Preset) -> &'static str {
    match cli {
        Preset::ClaudeCode => {
            "Claude Code sends ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN, or a `claude login`) \
             to ANTHROPIC_BASE_URL, else to Anthropic's API"
        }
        Preset::Codex => {
            "Codex CLI sends CODEX_API_KEY (or a `codex login`), never OPENAI_API_KEY, to the \
             `openai_base_url` of $CODEX_HOME/config.toml or a `[model_providers.<name>]` there; \
             prpd passes OPENAI_BASE_URL to it as `-c openai_base_url=…`"
        }
        Preset::Aider => {
            "Aider sends the key of its model's provider (OPENAI_API_KEY for `openai/…`, \
             ANTHROPIC_API_KEY for `anthropic/…`) to OPENAI_API_BASE for an OpenAI-compatible \
             server"
        }
    }
}

/// `argv` with Codex given the endpoint it does not read from the environment: `-c
/// openai_base_url="<url>"` after the program, when `config` starts Codex and sets no
/// `openai_base_url` itself; `url` is the `OPENAI_BASE_URL` the agent is passed
/// ([`passed_base_url`]).
pub(super) fn codex_argv(
    config: &AgentConfig,
    mut argv: Vec<String>,
    url: Option<String>,
) -> Vec<String> {
    let Some(url) = url.filter(|url| !url.is_empty()) else {
        return argv;
    };
    if cli_of(config) != Some(Preset::Codex)
        || argv
            .iter()
            .any(|argument| argument.contains("openai_base_url"))
    {
        return argv;
    }
    tracing::info!(
        "passing OPENAI_BASE_URL to Codex CLI as -c openai_base_url (it does not read the variable)"
    );
    let at = argv.len().min(1);
    argv.splice(
        at..at,
        ["-c".to_owned(), format!("openai_base_url={url:?}")],
    );
    argv
}

/// The `OPENAI_BASE_URL` of prpd's environment, when `config` passes it to its agent.
pub(super) fn passed_base_url(config: &AgentConfig) -> Option<String> {
    process::passed_value(&config.env, "OPENAI_BASE_URL")
}

#[cfg(test)]
mod tests {
    use super::*;
    use prpd_base::phase::Phase;

    #[test]
    fn the_cli_is_known_by_its_program() {
        for preset in Preset::ALL {
            assert_eq!(cli_of(&preset.block(Phase::Green)), Some(preset));
        }
        let mut script = Preset::Codex.block(Phase::Green);
        script.command = vec!["./agents/codex-like.sh".to_owned()];
        assert_eq!(cli_of(&script), None);
        assert_eq!(needs(&script), None);
    }

    #[test]
    fn aider_keys_follow_the_models_provider() {
        let cases = [
            ("sonnet", "ANTHROPIC_API_KEY"),
            ("anthropic/claude-sonnet-4-5", "ANTHROPIC_API_KEY"),
            ("openai/gpt-4o", "OPENAI_API_KEY"),
            ("gpt-4.1", "OPENAI_API_KEY"),
            ("4o", "OPENAI_API_KEY"),
            ("gemini/gemini-2.5-pro", "GEMINI_API_KEY"),
            ("deepseek", "DEEPSEEK_API_KEY"),
        ];
        for (model, key) in cases {
            assert_eq!(aider_provider(model).0, [key], "{model}");
        }
        assert_eq!(aider_provider("ollama_chat/llama3").0, [] as [&str; 0]);
        assert_eq!(aider_provider("ollama_chat/llama3").1, ["OLLAMA_API_BASE"]);
        assert_eq!(aider_provider("mystery-model"), (&[][..], &[][..]));
    }

    #[test]
    fn codex_is_given_the_endpoint_unless_its_command_sets_one() {
        let codex = Preset::Codex.block(Phase::Green);
        let argv = vec!["codex".to_owned(), "exec".to_owned(), "-".to_owned()];
        let url = || Some("http://127.0.0.1:4000/v1".to_owned());
        assert_eq!(
            codex_argv(&codex, argv.clone(), url()),
            [
                "codex",
                "-c",
                "openai_base_url=\"http://127.0.0.1:4000/v1\"",
                "exec",
                "-"
            ]
        );
        assert_eq!(codex_argv(&codex, argv.clone(), None), argv);
        assert_eq!(codex_argv(&codex, argv.clone(), Some(String::new())), argv);
        let own = vec![
            "codex".to_owned(),
            "-c".to_owned(),
            "openai_base_url=\"http://own\"".to_owned(),
            "exec".to_owned(),
        ];
        assert_eq!(codex_argv(&codex, own.clone(), url()), own);
        let claude = Preset::ClaudeCode.block(Phase::Green);
        assert_eq!(codex_argv(&claude, argv.clone(), url()), argv);
    }
}
