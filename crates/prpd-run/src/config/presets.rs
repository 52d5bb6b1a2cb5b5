//! The built-in agent blocks, chosen with `agent = "claude-code" | "codex" | "aider"` in
//! `[agents.default]` or `[agents.<phase>]`. Each is a complete, working block for the real CLI:
//! the command for every phase, a GREEN model and a different QA model, how the prompt is
//! passed, and the name patterns of the environment variables the CLI needs (credentials,
//! gateways, proxies, CA bundles). They live apart from the parsing of `[agents]` because they
//! change when a CLI changes, not when prpd.toml does.
//!
//! What an agent may run is the least that lets it work: Claude Code's RED, GREEN and REFACTOR
//! may run exactly the test command and the lint command prpd discovered (`--allowedTools
//! "Bash(<command>)"`), DOCUMENT and QA no shell at all; Aider's GREEN runs the test command
//! itself after each edit (`--test-cmd`, `--auto-test`); Codex stays in its
//! `workspace-write` sandbox.
//!
//! Aider answers every question yes under `--yes-always` except "Run shell command?", so what
//! it would ask about is switched off instead: a URL anywhere in its message (a PRP, a QA report
//! quoted as feedback) would otherwise be fetched, and Aider would install Playwright to fetch it
//! (`--no-detect-urls`). Its provider layer, litellm, reads `LITELLM_*` settings; without
//! `LITELLM_LOCAL_MODEL_COST_MAP` it downloads its model price list each time it starts, which
//! a machine without internet access or behind a gateway cannot.

use std::time::Duration;

use prpd_base::phase::Phase;

use super::agents::{AgentConfig, PromptMode};

/// A built-in agent block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Preset {
    /// Claude Code (`@anthropic-ai/claude-code`) in print mode with JSON output.
    ClaudeCode,
    /// Codex CLI (`@openai/codex`), `codex exec` with JSONL events.
    Codex,
    /// Aider (`aider-chat`), one message from a file.
    Aider,
}

/// Variables every CLI may need to reach its provider: proxies (either case) and CA bundles.
const NETWORK_ENV: &[&str] = &[
    "HTTP_PROXY",
    "http_proxy",
    "HTTPS_PROXY",
    "https_proxy",
    "NO_PROXY",
    "no_proxy",
    "ALL_PROXY",
    "all_proxy",
    "*_CA_*",
    "SSL_CERT_*",
    "NODE_EXTRA_CA_CERTS",
];

/// How long one invocation of a preset may run.
const TIMEOUT: Duration = Duration::from_secs(30 * 60);

impl Preset {
    /// Every preset, in the order prpd names them.
    pub const ALL: [Preset; 3] = [Preset::ClaudeCode, Preset::Codex, Preset::Aider];

    /// The preset named `name` in prpd.toml.
    pub fn named(name: &str) -> Option<Preset> {
        Preset::ALL.into_iter().find(|preset| preset.name() == name)
    }

    /// The name prpd.toml uses.
    pub fn name(self) -> &'static str {
        match self {
            Preset::ClaudeCode => "claude-code",
            Preset::Codex => "codex",
            Preset::Aider => "aider",
        }
    }

    /// The model GREEN (and every phase but QA) works with.
    pub fn green_model(self) -> &'static str {
        match self {
            Preset::ClaudeCode | Preset::Aider => "sonnet",
            Preset::Codex => "gpt-5-codex",
        }
    }

    /// The model QA reviews with: another than [`Preset::green_model`].
    pub fn qa_model(self) -> &'static str {
        match self {
            Preset::ClaudeCode | Preset::Aider => "opus",
            Preset::Codex => "gpt-5",
        }
    }

    /// The complete block of `phase`.
    pub fn block(self, phase: Phase) -> AgentConfig {
        let model = if phase == Phase::Qa {
            self.qa_model()
        } else {
            self.green_model()
        };
        AgentConfig {
            command: self.command(phase),
            model: Some(model.to_owned()),
            prompt: match self {
                Preset::ClaudeCode | Preset::Codex => PromptMode::Stdin,
                Preset::Aider => PromptMode::File,
            },
            timeout: TIMEOUT,
            env: self.env(),
        }
    }

    fn command(self, phase: Phase) -> Vec<String> {
        let runs_commands = matches!(phase, Phase::Red | Phase::Green | Phase::Refactor);
        let mut command: Vec<&str> = match self {
            Preset::ClaudeCode => vec![
                "claude",
                "-p",
                "--model",
                "{model}",
                "--output-format",
                "stream-json",
                "--verbose",
                "--permission-mode",
                "acceptEdits",
            ],
            Preset::Codex => vec![
                "codex",
                "exec",
                "--json",
                "--model",
                "{model}",
                "--sandbox",
                "workspace-write",
                "--output-last-message",
                "{last_message_file}",
            ],
            Preset::Aider => vec![
                "aider",
                "--model",
                "{model}",
                "--message-file",
                "{prompt_file}",
                "--yes-always",
                "--no-auto-commits",
                "--no-dirty-commits",
                "--no-gitignore",
                "--no-pretty",
                "--no-stream",
                "--no-check-update",
                "--no-show-model-warnings",
                "--analytics-disable",
                "--no-detect-urls",
            ],
        };
        match self {
            Preset::ClaudeCode if runs_commands => command.extend([
                "--allowedTools",
                "Bash({test_command})",
                "Bash({lint_command?})",
            ]),
            Preset::Aider if phase == Phase::Green => {
                command.extend(["--test-cmd", "{test_command}", "--auto-test"]);
            }
            Preset::Codex => command.push("-"),
            Preset::ClaudeCode | Preset::Aider => {}
        }
        command.into_iter().map(str::to_owned).collect()
    }

    fn env(self) -> Vec<String> {
        let own: &[&str] = match self {
            Preset::ClaudeCode => &[
                "ANTHROPIC_*",
                "CLAUDE_*",
                "AWS_*",
                "GOOGLE_*",
                "CLOUD_ML_*",
                "VERTEX_*",
                "DISABLE_*",
            ],
            Preset::Codex => &["OPENAI_*", "CODEX_*", "AZURE_OPENAI_*"],
            Preset::Aider => &[
                "AIDER_*",
                "LITELLM_*",
                "ANTHROPIC_*",
                "OPENAI_*",
                "AWS_*",
                "GOOGLE_*",
                "VERTEXAI_*",
                "GEMINI_*",
                "OPENROUTER_*",
                "DEEPSEEK_*",
                "OLLAMA_*",
            ],
        };
        own.iter()
            .chain(NETWORK_ENV)
            .map(|name| (*name).to_owned())
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_preset_has_two_models_and_is_found_by_its_name() {
        for preset in Preset::ALL {
            assert_eq!(Preset::named(preset.name()), Some(preset));
            assert_ne!(preset.green_model(), preset.qa_model(), "{preset:?}");
            assert_eq!(
                preset.block(Phase::Qa).model.as_deref(),
                Some(preset.qa_model())
            );
        }
        assert_eq!(Preset::named("claude"), None);
    }

    #[test]
    fn claude_code_may_run_the_test_and_lint_commands_in_the_working_phases_only() {
        for phase in Phase::ITERATING {
            let command = Preset::ClaudeCode.block(phase).command;
            let allowed = command.iter().any(|argument| argument == "--allowedTools");
            assert_eq!(
                allowed,
                matches!(phase, Phase::Red | Phase::Green | Phase::Refactor),
                "{phase}: {command:?}"
            );
            if allowed {
                assert_eq!(
                    command[command.len() - 3..],
                    [
                        "--allowedTools",
                        "Bash({test_command})",
                        "Bash({lint_command?})"
                    ]
                );
            }
            assert!(!command.iter().any(|argument| argument.contains("Bash(*")));
        }
    }

    #[test]
    fn aider_green_runs_the_tests_and_codex_keeps_its_sandbox() {
        let green = Preset::Aider.block(Phase::Green).command;
        assert!(
            green
                .windows(2)
                .any(|pair| pair == ["--test-cmd", "{test_command}"])
        );
        assert!(
            !Preset::Aider
                .block(Phase::Red)
                .command
                .contains(&"--test-cmd".to_owned())
        );
        assert_eq!(Preset::Aider.block(Phase::Red).prompt, PromptMode::File);
        for phase in Phase::ITERATING {
            let aider = Preset::Aider.block(phase);
            assert!(
                aider.command.contains(&"--no-detect-urls".to_owned()),
                "{phase}: a URL in the prompt must not make Aider fetch it"
            );
            assert!(aider.env.contains(&"LITELLM_*".to_owned()), "{phase}");
        }
        for phase in Phase::ITERATING {
            let codex = Preset::Codex.block(phase).command;
            assert!(
                codex
                    .windows(2)
                    .any(|pair| pair == ["--sandbox", "workspace-write"])
            );
            assert_eq!(codex.last().map(String::as_str), Some("-"));
        }
    }
}
