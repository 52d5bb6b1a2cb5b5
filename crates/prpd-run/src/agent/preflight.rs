//! Before a run starts: can every phase's agent be started at all? An agent CLI that is not
//! installed (or a script without its execute bit) would otherwise surface as a crashed
//! iteration and an escalation; here it is one configuration error that names the
//! `[agents.<key>]` table, the command and how to install it.

use std::fmt;
use std::path::{Path, PathBuf};

use crate::config::Agents;
use prpd_base::phase::Phase;
use prpd_base::process::{self, Missing};

/// Agents of the configuration that cannot be started.
#[derive(Debug, thiserror::Error)]
pub struct AgentsNotInstalled {
    /// The configuration file (`None`: the built-in default, no prpd.toml).
    pub config: Option<PathBuf>,
    /// One entry per `[agents.<key>]` table whose program is missing.
    pub agents: Vec<NotInstalled>,
}

/// One agent whose program cannot be started.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotInstalled {
    /// `default`, `red`, … (the `[agents.<key>]` table that sets the command).
    pub key: String,
    /// The program, as written in the command.
    pub program: String,
    pub missing: Missing,
}

impl fmt::Display for AgentsNotInstalled {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.config {
            Some(path) => write!(
                formatter,
                "{}: an agent cannot be started, so nothing was run",
                path.display()
            )?,
            None => write!(
                formatter,
                "there is no prpd.toml and the built-in default agent cannot be started, so nothing was run"
            )?,
        }
        for agent in &self.agents {
            let why = match &agent.missing {
                Missing::NotFound if agent.program.contains('/') => {
                    "there is no such file".to_owned()
                }
                Missing::NotFound => "it is not on PATH".to_owned(),
                Missing::NotExecutable(file) => {
                    format!("{} is not an executable file", file.display())
                }
            };
            write!(
                formatter,
                "\n  [agents.{}] command `{}`: {why}; {}",
                agent.key,
                agent.program,
                install_hint(&agent.program)
            )?;
        }
        if self.config.is_none() {
            write!(
                formatter,
                "\n`prpd init` writes a prpd.toml for the agent CLI it finds on PATH (claude, codex, aider), or for the scripted demo agents"
            )?;
        }
        Ok(())
    }
}

/// How to get `program`, for the agent CLIs prpd knows.
fn install_hint(program: &str) -> String {
    let name = Path::new(program).file_name().map_or_else(
        || program.to_owned(),
        |name| name.to_string_lossy().into_owned(),
    );
    match name.as_str() {
        "claude" => "install Claude Code: `npm install -g @anthropic-ai/claude-code`".to_owned(),
        "codex" => "install Codex CLI: `npm install -g @openai/codex`".to_owned(),
        "aider" => {
            "install Aider: `python -m pip install aider-install && aider-install`".to_owned()
        }
        "node" => "install Node.js 18 or later (https://nodejs.org)".to_owned(),
        _ => format!("install `{name}`, or change the command in prpd.toml"),
    }
}

/// Checks that the program of every phase's agent can be started from `repo` (where agents
/// run) with prpd's `PATH`.
pub fn check_installed(
    agents: &Agents,
    source: Option<&Path>,
    repo: &Path,
) -> Result<(), AgentsNotInstalled> {
    let path = std::env::var_os("PATH");
    let mut missing: Vec<NotInstalled> = Vec::new();
    for phase in Phase::ITERATING {
        let Some(program) = agents.for_phase(phase).command.first() else {
            continue;
        };
        let key = agents.command_key(phase);
        if missing.iter().any(|known| known.key == key) {
            continue;
        }
        if let Err(why) = process::find_program(program, repo, path.as_deref()) {
            missing.push(NotInstalled {
                key,
                program: program.clone(),
                missing: why,
            });
        }
    }
    if missing.is_empty() {
        Ok(())
    } else {
        Err(AgentsNotInstalled {
            config: source.map(Path::to_path_buf),
            agents: missing,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;

    #[test]
    fn each_agent_table_that_cannot_start_is_named_once() {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::create_dir_all(dir.path().join("agents")).expect("mkdir");
        std::fs::write(dir.path().join("agents/qa.sh"), "#!/bin/sh\n").expect("write");
        let text = "[agents.default]\ncommand = [\"./agents/default.sh\"]\nmodel = \"a\"\n\n\
                    [agents.qa]\ncommand = [\"./agents/qa.sh\"]\nmodel = \"b\"\n";
        let config = Config::parse(Path::new("prpd.toml"), text).expect("valid");
        let error = check_installed(&config.agents, config.source.as_deref(), dir.path())
            .expect_err("neither script can start");
        let keys: Vec<&str> = error
            .agents
            .iter()
            .map(|agent| agent.key.as_str())
            .collect();
        assert_eq!(keys, ["default", "qa"], "{error}");
        let message = error.to_string();
        assert!(
            message.starts_with("prpd.toml: an agent cannot be started"),
            "{message}"
        );
        assert!(
            message
                .contains("[agents.default] command `./agents/default.sh`: there is no such file"),
            "{message}"
        );
        assert!(
            message.contains("agents/qa.sh is not an executable file"),
            "{message}"
        );
    }

    #[test]
    fn install_hints_name_the_package() {
        assert!(install_hint("claude").contains("npm install -g @anthropic-ai/claude-code"));
        assert!(install_hint("/opt/bin/codex").contains("@openai/codex"));
        assert!(install_hint("aider").contains("aider-install"));
        assert!(install_hint("my-agent").contains("change the command in prpd.toml"));
    }
}
