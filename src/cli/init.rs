//! `prpd init`: the first command of a new user. It writes a commented `prpd.toml` for the agent
//! CLI it finds on `PATH` (Claude Code, Codex CLI, Aider, in that order; without one, the
//! scripted agents of `prpd demo`), loads the file it wrote as every later command will, says
//! what it can check of the agent (installed, a key, the endpoint: `agent_check.rs`), and
//! shows the commands `prpd detect` finds, so the user sees at once what prpd will measure.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use clap::ValueEnum;

use prpd_base::config_file;
use prpd_base::phase::Phase;
use prpd_base::process;
use prpd_qa::command::CommandKind;
use prpd_qa::settings;
use prpd_qa::tools_mapping::ToolsMapping;
use prpd_run::config;
use prpd_run::config::Config;

use super::usage::UsageError;

/// The agent a `prpd.toml` is written for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum AgentChoice {
    /// Claude Code (`claude`).
    Claude,
    /// Codex CLI (`codex`).
    Codex,
    /// Aider (`aider`).
    Aider,
    /// The scripted agents of `prpd demo` (Node; they play the demo's story only).
    Demo,
}

/// What `prpd init` writes for one agent.
struct Preset {
    name: &'static str,
    /// The program looked up on `PATH`.
    program: &'static str,
    /// A comment on the agent, what its settings are for.
    note: &'static str,
    agent: InitAgent,
}

/// The agent a written prpd.toml configures.
enum InitAgent {
    /// A real CLI: prpd.toml names its built-in block (`agent = "…"`).
    Builtin(config::Preset),
    /// The scripted demo agents, spelled out.
    Scripted {
        command: &'static [&'static str],
        model: &'static str,
        /// QA's model: another than the working phases' (model diversity).
        qa_model: &'static str,
        prompt: &'static str,
        timeout: &'static str,
        env: &'static [&'static str],
    },
}

const CLAUDE: Preset = Preset {
    name: "Claude Code",
    program: "claude",
    note: "Print mode with JSON output (prpd reads `result`, `usage`, `permission_denials` and\n\
           # `total_cost_usd`); edits are accepted without prompting, and RED, GREEN and REFACTOR may\n\
           # run the test and lint commands. A `claude login` session works as well as the key.",
    agent: InitAgent::Builtin(config::Preset::ClaudeCode),
};

const CODEX: Preset = Preset {
    name: "Codex CLI",
    program: "codex",
    note: "`codex exec` is non-interactive, `-` reads the prompt from stdin, `--json` reports the\n\
           # usage, and `--sandbox workspace-write` lets it edit the repository. Codex sends\n\
           # CODEX_API_KEY (or a `codex login`), not OPENAI_API_KEY; prpd hands it OPENAI_BASE_URL\n\
           # as `-c openai_base_url=…`, since Codex does not read that variable.",
    agent: InitAgent::Builtin(config::Preset::Codex),
};

const AIDER: Preset = Preset {
    name: "Aider",
    program: "aider",
    note: "One message read from a file; no commits of its own (prpd measures the working tree);\n\
           # in GREEN it runs the test command after each edit.",
    agent: InitAgent::Builtin(config::Preset::Aider),
};

const DEMO: Preset = Preset {
    name: "the scripted demo agents",
    program: "node",
    note: "No agent CLI (claude, codex, aider) was found on PATH. These are the scripted agents\n\
           # of `prpd demo`: they play a fixed story for the demo's PRP only, so they can show the\n\
           # loop but not implement your PRP. Install an agent CLI, then run `prpd init --force`.",
    agent: InitAgent::Scripted {
        command: &["node", DEMO_AGENT],
        model: "scripted-green",
        qa_model: "scripted-qa",
        prompt: "stdin",
        timeout: "60s",
        env: &[],
    },
};

/// Where the scripted demo agent goes in the repository.
const DEMO_AGENT: &str = ".prpd/agents/scripted-agent.mjs";

impl AgentChoice {
    fn preset(self) -> &'static Preset {
        match self {
            AgentChoice::Claude => &CLAUDE,
            AgentChoice::Codex => &CODEX,
            AgentChoice::Aider => &AIDER,
            AgentChoice::Demo => &DEMO,
        }
    }
}

/// What `prpd init` was asked.
#[derive(Debug)]
pub struct InitRequest {
    /// The repository root.
    pub repo: PathBuf,
    /// `--agent`: write for this agent, found or not.
    pub agent: Option<AgentChoice>,
    /// `--force`: overwrite an existing prpd.toml (and the demo agent script).
    pub force: bool,
}

/// Writes `prpd.toml` (and, for the demo agents, their script), loads it back, and returns
/// what to tell the user.
pub fn init(request: &InitRequest) -> anyhow::Result<String> {
    let target = request.repo.join(config_file::FILE_NAME);
    if target.exists() && !request.force {
        return Err(UsageError(format!(
            "{} already exists; prpd init leaves it as it is (pass --force to overwrite it)",
            target.display()
        ))
        .into());
    }
    let path = std::env::var_os("PATH");
    let find = |program: &str| process::find_program(program, &request.repo, path.as_deref());
    let (choice, found) = match request.agent {
        Some(choice) => (choice, find(choice.preset().program).ok()),
        None => [AgentChoice::Claude, AgentChoice::Codex, AgentChoice::Aider]
            .into_iter()
            .find_map(|choice| Some((choice, Some(find(choice.preset().program).ok()?))))
            .unwrap_or_else(|| (AgentChoice::Demo, find("node").ok())),
    };
    let preset = choice.preset();
    let text = render(preset, found.as_deref());
    // A plain write, not an atomic one: the file gets the usual mode (0644 under a common
    // umask) instead of a temporary file's 0600, and nobody reads it while it is written.
    std::fs::write(&target, &text)
        .map_err(|error| UsageError(format!("cannot write {}: {error}", target.display())))?;
    if choice == AgentChoice::Demo {
        write_demo_agent(&request.repo, request.force)?;
    }
    let config = Config::load(&request.repo, None)?;

    let mut out = String::new();
    let _ = writeln!(
        out,
        "Wrote {} for {} ({}); it loads without error.",
        target.display(),
        preset.name,
        found.as_ref().map_or_else(
            || format!(
                "`{}` is not on PATH: install it before `prpd run`",
                preset.program
            ),
            |file| format!("`{}` found at {}", preset.program, file.display()),
        )
    );
    if choice == AgentChoice::Demo {
        let _ = writeln!(
            out,
            "No agent CLI (claude, codex, aider) is on PATH: the scripted demo agents ({DEMO_AGENT}) \
             only play `prpd demo`'s story. Install one (e.g. `npm install -g @anthropic-ai/claude-code`) \
             and run `prpd init --force`."
        );
    }
    let _ = writeln!(
        out,
        "\nWhat prpd found for the agent (variables by name only; none of this stops a run):\n"
    );
    out.push_str(&super::agent_check::report(&config.agents, &request.repo));
    let mapping = ToolsMapping::load(&request.repo)?;
    let detection = settings::detect(&request.repo, &mapping, &config.gate)?;
    let _ = writeln!(out, "\nWhat prpd will measure (`prpd detect`):\n");
    out.push_str(&detection.render_table());
    if detection.command(CommandKind::Test).is_none() {
        let _ = writeln!(
            out,
            "\nNo test command was found: `prpd run` measures RED and GREEN by running the tests, \
             so add a `test` script or Makefile target first."
        );
    }
    let _ = writeln!(
        out,
        "\nNext: `prpd qa` checks the repository as it is; commit what init wrote (a run starts only\nfrom a clean tree), then `prpd run PRPs/<feature>.md` drives a PRP."
    );
    Ok(out)
}

/// The commented prpd.toml for `preset`; `found` is where its program is.
fn render(preset: &Preset, found: Option<&Path>) -> String {
    let list = |items: &[&str]| {
        let quoted: Vec<String> = items.iter().map(|item| format!("{item:?}")).collect();
        format!("[{}]", quoted.join(", "))
    };
    let found = found.map_or_else(
        || format!("`{}` was not found on PATH", preset.program),
        |file| format!("`{}` found at {}", preset.program, file.display()),
    );
    format!(
        "# prpd.toml: prpd's settings for this repository, written by `prpd init` for {name}\n\
         # ({found}).\n\
         #\n\
         # Every key is optional; unknown keys are errors, reported with their line. Durations are\n\
         # strings such as \"90s\", \"10m\" or \"1h 30m\". The \"Configuration\" chapter of prpd's\n\
         # book (docs/src/configuration.md) lists every key and its default.\n\
         \n\
         [qa]\n\
         # How many QA checks run at once, and how long one check (a test run, a linter) may take.\n\
         jobs = 4\n\
         check_timeout = \"10m\"\n\
         # Where your test command writes a JUnit XML report, if it does: prpd then reads the report\n\
         # the run wrote instead of the console (a run that writes none fails).\n\
         # junit = \"build/test-results/**/*.xml\"\n\
         \n\
         [agents]\n\
         # QA reviews with another model than GREEN implements with; the same model is refused\n\
         # unless this is true.\n\
         allow_same_model = false\n\
         \n\
         # The agent of every phase (RED, GREEN, REFACTOR, DOCUMENT, QA); `[agents.<phase>]`\n\
         # overrides it key by key. `command` is an argv, not a shell string: `{{model}}` and\n\
         # `{{prompt_file}}` are replaced. `prompt` is \"stdin\" or \"file\". `env` lists the only\n\
         # variables of your environment the agent gets (besides PATH, HOME and PRPD_*).\n\
         #\n\
         # {note}\n\
         {agents}\n\
         [guardrails]\n\
         # Reaching one escalates the run and names it in the escalation report.\n\
         max_agent_invocations = 40\n\
         max_wall_time = \"4h\"\n\
         # Budgets: the agent is stopped as soon as its streamed usage crosses one, and\n\
         # `prpd resume --budget +N` raises it. Cost is what the CLI reports, else priced\n\
         # from [prices]; `prpd receipt` shows every call.\n\
         # max_cost_usd = 20.0\n\
         # max_cost_usd_per_day = 50.0\n\
         \n\
         # SHIP commits what QA approved on its own branch and pushes it (the book's \"Shipping\"\n\
         # chapter lists every key). Without a token in the variable token_env names, it is a dry run:\n\
         # the commit, the branch, a push to a local path only, and the PR's text in pr.md.\n\
         # [ship]\n\
         # remote = \"origin\"\n\
         # token_env = \"GITHUB_TOKEN\"\n",
        name = preset.name,
        note = preset.note,
        agents = agents_tables(preset, &list),
    )
}

/// `[agents.default]` (and `[agents.qa]`): the built-in block of a real CLI, its settings shown
/// in comments; the demo's scripted agents spelled out.
fn agents_tables(preset: &Preset, list: &dyn Fn(&[&str]) -> String) -> String {
    match &preset.agent {
        InitAgent::Builtin(builtin) => {
            let block = builtin.block(Phase::Green);
            let command: Vec<&str> = block.command.iter().map(String::as_str).collect();
            let env: Vec<&str> = block.env.iter().map(String::as_str).collect();
            format!(
                "[agents.default]\n\
                 agent = {name:?}\n\
                 # The block's settings (the book's \"Agents\" chapter lists them per phase); a key\n\
                 # written here overrides it:\n\
                 # command = {command}\n\
                 # model = {model:?}   (QA: {qa_model:?})\n\
                 # timeout = \"30m\"\n\
                 # env = {env}\n",
                name = builtin.name(),
                command = list(&command),
                model = builtin.green_model(),
                qa_model = builtin.qa_model(),
                env = list(&env),
            )
        }
        InitAgent::Scripted {
            command,
            model,
            qa_model,
            prompt,
            timeout,
            env,
        } => format!(
            "[agents.default]\n\
             command = {command}\n\
             model = {model:?}\n\
             prompt = {prompt:?}\n\
             timeout = {timeout:?}\n\
             env = {env}\n\
             \n\
             [agents.qa]\n\
             model = {qa_model:?}\n",
            command = list(command),
            env = list(env),
        ),
    }
}

/// Writes the scripted demo agent where the demo preset's command expects it.
fn write_demo_agent(repo: &Path, force: bool) -> anyhow::Result<()> {
    let path = repo.join(DEMO_AGENT);
    if path.exists() && !force {
        return Ok(());
    }
    let script = super::demo::FILES
        .iter()
        .find(|(relative, _)| *relative == DEMO_AGENT)
        .map(|(_, contents)| *contents)
        .ok_or_else(|| anyhow::anyhow!("the demo files hold no {DEMO_AGENT}"))?;
    let write = || -> std::io::Result<()> {
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::write(&path, script)
    };
    write().map_err(|error| UsageError(format!("cannot write {}: {error}", path.display())))?;
    Ok(())
}

#[cfg(test)]
mod tests {

    use super::*;

    #[test]
    fn every_preset_writes_a_file_that_loads_with_two_models() {
        for choice in [
            AgentChoice::Claude,
            AgentChoice::Codex,
            AgentChoice::Aider,
            AgentChoice::Demo,
        ] {
            let preset = choice.preset();
            let text = render(preset, Some(Path::new("/usr/bin/agent")));
            let config = Config::parse(Path::new("prpd.toml"), &text)
                .unwrap_or_else(|error| panic!("{choice:?}: {error}\n{text}"));
            let green = config.agents.for_phase(Phase::Green);
            assert!(
                green.command[0].ends_with(preset.program)
                    || preset.program == "node" && green.command[0] == "node",
                "{choice:?}"
            );
            assert_ne!(
                green.model,
                config.agents.for_phase(Phase::Qa).model,
                "{choice:?}"
            );
        }
    }

    #[test]
    fn the_demo_preset_runs_the_script_the_demo_ships() {
        assert!(
            super::super::demo::FILES
                .iter()
                .any(|(relative, _)| *relative == DEMO_AGENT)
        );
    }
}
