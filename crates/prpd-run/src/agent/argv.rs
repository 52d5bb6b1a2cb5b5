//! The agent's argv with its placeholders filled in. `{model}` and `{prompt_file}` come from
//! the phase's configuration, `{last_message_file}` is a file in the iteration's directory
//! where a CLI can leave its final answer (Codex `--output-last-message`), and
//! `{test_command}` / `{lint_command}` are the commands discovery found when the run started
//! (the record's frozen detection), so an agent is allowed to run exactly what prpd measures
//! with. A placeholder written with a question mark (`{lint_command?}`) is optional: an
//! argument holding it is dropped when there is no such command, while a plain one with no
//! command is a configuration error before the run starts ([`check_commands`]).

use std::path::Path;

use crate::config::Agents;
use prpd_base::phase::Phase;
use prpd_qa::command::CommandKind;
use prpd_qa::discover::Detection;

/// The file a CLI may write its last message to, inside the iteration's directory.
pub const LAST_MESSAGE_FILE: &str = "last-message.md";

/// The discovered commands an argv may name.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Commands {
    pub test: Option<String>,
    pub lint: Option<String>,
}

impl Commands {
    /// The test and lint commands of a detection.
    pub fn discovered(detection: &Detection) -> Commands {
        let command = |kind| detection.command(kind).map(str::to_owned);
        Commands {
            test: command(CommandKind::Test),
            lint: command(CommandKind::Lint),
        }
    }
}

/// A placeholder whose command discovery did not find.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "`agents.{key}.command` uses `{{{placeholder}}}` but prpd found no {kind} command in this \
     repository; declare one in prpd.toml `[commands] {kind} = \"…\"`, or write \
     `{{{placeholder}?}}` to drop the argument when there is none"
)]
pub struct MissingCommand {
    /// The `[agents.<key>]` table of the command.
    pub key: String,
    /// `test_command` or `lint_command`.
    pub placeholder: &'static str,
    /// `test` or `lint`.
    pub kind: &'static str,
}

/// Refuses, before a run, an agent command with a required placeholder that has no command.
pub fn check_commands(agents: &Agents, commands: &Commands) -> Result<(), MissingCommand> {
    for phase in Phase::ITERATING {
        let argv = &agents.for_phase(phase).command;
        for (placeholder, kind, command) in placeholders(commands) {
            let required = format!("{{{placeholder}}}");
            if command.is_none() && argv.iter().any(|argument| argument.contains(&required)) {
                return Err(MissingCommand {
                    key: agents.command_key(phase),
                    placeholder,
                    kind,
                });
            }
        }
    }
    Ok(())
}

fn placeholders(commands: &Commands) -> [(&'static str, &'static str, Option<&str>); 2] {
    [
        ("test_command", "test", commands.test.as_deref()),
        ("lint_command", "lint", commands.lint.as_deref()),
    ]
}

/// What fills the placeholders of one invocation.
pub(super) struct Values<'a> {
    pub(super) model: Option<&'a str>,
    pub(super) prompt_file: &'a Path,
    pub(super) last_message_file: &'a Path,
    pub(super) commands: &'a Commands,
}

/// The argv with every placeholder replaced; an argument with an optional placeholder whose
/// command is missing is left out. A required one with no command (which [`check_commands`]
/// refused before the run) is replaced by nothing.
pub(super) fn expand(command: &[String], values: &Values<'_>) -> Vec<String> {
    let prompt_file = values.prompt_file.to_string_lossy();
    let last_message_file = values.last_message_file.to_string_lossy();
    let named = placeholders(values.commands);
    command
        .iter()
        .filter(|argument| {
            named.iter().all(|(placeholder, _, command)| {
                command.is_some() || !argument.contains(&format!("{{{placeholder}?}}"))
            })
        })
        .map(|argument| {
            let mut argument = argument
                .replace("{model}", values.model.unwrap_or_default())
                .replace("{prompt_file}", &prompt_file)
                .replace("{last_message_file}", &last_message_file);
            for (placeholder, _, command) in &named {
                let command = command.unwrap_or_default();
                argument = argument
                    .replace(&format!("{{{placeholder}?}}"), command)
                    .replace(&format!("{{{placeholder}}}"), command);
            }
            argument
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;

    fn strings(items: &[&str]) -> Vec<String> {
        items.iter().map(|item| (*item).to_owned()).collect()
    }

    #[test]
    fn placeholders_are_filled_and_optional_ones_dropped() {
        let command = strings(&[
            "claude",
            "--model={model}",
            "--allowedTools",
            "Bash({test_command})",
            "Bash({lint_command?})",
            "--out",
            "{last_message_file}",
            "{prompt_file}",
        ]);
        let mut commands = Commands {
            test: Some("npm test".to_owned()),
            lint: None,
        };
        let values = Values {
            model: Some("sonnet"),
            prompt_file: Path::new("/run/prompt.md"),
            last_message_file: Path::new("/run/last-message.md"),
            commands: &commands,
        };
        assert_eq!(
            expand(&command, &values),
            strings(&[
                "claude",
                "--model=sonnet",
                "--allowedTools",
                "Bash(npm test)",
                "--out",
                "/run/last-message.md",
                "/run/prompt.md",
            ])
        );
        commands.lint = Some("npx --no eslint .".to_owned());
        let values = Values {
            model: Some("sonnet"),
            prompt_file: Path::new("/run/prompt.md"),
            last_message_file: Path::new("/run/last-message.md"),
            commands: &commands,
        };
        assert!(expand(&command, &values).contains(&"Bash(npx --no eslint .)".to_owned()));
    }

    #[test]
    fn a_required_placeholder_without_a_command_is_refused_naming_it() {
        let text = "[agents.default]\nagent = \"claude-code\"\n\n[agents.qa]\ncommand = [\"claude\", \"-p\", \"--model\", \"{model}\", \"Bash({lint_command})\"]\n";
        let config = Config::parse(Path::new("prpd.toml"), text).expect("valid");
        let commands = Commands {
            test: Some("make test".to_owned()),
            lint: None,
        };
        let error = check_commands(&config.agents, &commands).expect_err("no lint command");
        assert_eq!(error.key, "qa");
        assert_eq!(error.placeholder, "lint_command");
        let message = error.to_string();
        assert!(message.contains("`{lint_command}`"), "{message}");
        assert!(message.contains("`{lint_command?}`"), "{message}");

        let presets = Config::parse(
            Path::new("prpd.toml"),
            "[agents.default]\nagent = \"aider\"\n",
        )
        .expect("valid");
        check_commands(&presets.agents, &commands).expect("the presets' lint is optional");
        let error = check_commands(&presets.agents, &Commands::default()).expect_err("no test");
        assert_eq!(
            (error.key.as_str(), error.placeholder),
            ("default", "test_command")
        );
    }
}
