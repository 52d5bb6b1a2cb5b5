//! One agent invocation: prpd writes the prompt, starts the phase's agent through
//! [`process::run`], and reads what came back into an [`AgentReport`].
//!
//! Theory of operation. The prompt goes to `<iteration_dir>/prompt.md` and, depending on the
//! agent's [`PromptMode`], to its stdin or to the path that replaces `{prompt_file}` in its
//! argv. The agent runs in the target repo's root with only allow-listed variables of prpd's
//! environment plus the `PRPD_*` ones, and its merged output goes to
//! `<iteration_dir>/output.log`. Reading the output: when it holds a Claude Code result object
//! (`--output-format json`, or the last line of `stream-json`), the status block, usage and cost
//! come from that object; otherwise the status block is searched in the plain output.
//!
//! How the run ended is classified into an [`AgentEnd`] for the circuit breaker. A run that
//! exited 0 with a status block and no reported error is `Ok`, whatever its text says. Only a
//! run that failed (non-zero exit, an error result, no usable block) has its last lines matched
//! against [`classify::FAILURE_PATTERNS`]: an agent that implements a rate limiter prints
//! "rate limit" for good reasons.
//!
//! Errors ([`AgentError`]) mean prpd could not start the agent at all; everything an agent can
//! do wrong once started is an [`AgentReport`]. Environment values are handed to the child only:
//! they are never written to the iteration's files nor logged.

mod argv;
mod classify;
mod output;
mod preflight;

use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::base::config::{AgentConfig, PromptMode};
use crate::base::phase::Phase;
use crate::base::process::{self, EnvPolicy, ProcessError, Spec};
use crate::base::status_block::Found;
use crate::run::breaker::AgentEnd;

use classify::read_report;
use output::read_output;

pub use argv::{Commands, LAST_MESSAGE_FILE, MissingCommand, check_commands};
pub use preflight::{AgentsNotInstalled, NotInstalled, check_installed};

/// The prompt as the agent received it.
pub const PROMPT_FILE: &str = "prompt.md";
/// The agent's merged stdout and stderr.
pub const OUTPUT_LOG: &str = "output.log";
/// The status block prpd read, rendered again.
pub const STATUS_BLOCK_FILE: &str = "status-block.txt";

/// Lines kept in [`AgentReport::output_tail`].
const TAIL_LINES: usize = 50;

/// Everything one invocation needs. Relative paths are taken from prpd's working directory and
/// handed to the agent made absolute, because the agent runs in the target repo.
pub struct Invocation<'a> {
    pub phase: Phase,
    pub iteration: u32,
    pub attempt: u32,
    pub run_id: &'a str,
    pub run_dir: &'a Path,
    /// The target repo's root: the agent's working directory.
    pub repo: &'a Path,
    pub prp_path: &'a Path,
    /// The file with the last iteration's failures, output tails and QA blockers.
    pub feedback_path: &'a Path,
    pub prompt: &'a str,
    pub config: &'a AgentConfig,
    /// Where `prompt.md`, `output.log` and `status-block.txt` go; created if missing.
    pub iteration_dir: &'a Path,
    /// More variables for the agent, e.g. `PRPD_QA_REPORT`; they override the `PRPD_*` ones.
    pub extra_env: &'a [(String, String)],
    /// Where the agent's process group is recorded while it runs (see
    /// [`crate::base::process::stop_orphaned_group`]).
    pub group_file: Option<&'a Path>,
    /// The run's discovered commands, for `{test_command}` and `{lint_command}`.
    pub commands: &'a Commands,
}

/// Shows the names of `extra_env` only: its values may be tokens.
impl fmt::Debug for Invocation<'_> {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter
            .debug_struct("Invocation")
            .field("phase", &self.phase)
            .field("iteration", &self.iteration)
            .field("attempt", &self.attempt)
            .field("run_id", &self.run_id)
            .field("run_dir", &self.run_dir)
            .field("repo", &self.repo)
            .field("prp_path", &self.prp_path)
            .field("feedback_path", &self.feedback_path)
            .field("prompt_bytes", &self.prompt.len())
            .field("config", &self.config)
            .field("iteration_dir", &self.iteration_dir)
            .field(
                "extra_env",
                &self
                    .extra_env
                    .iter()
                    .map(|(name, _)| name.as_str())
                    .collect::<Vec<_>>(),
            )
            .field("group_file", &self.group_file)
            .field("commands", &self.commands)
            .finish()
    }
}

/// Tokens and cost the agent reported (Claude Code's `usage` and `total_cost_usd`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Usage {
    /// Every input token the model processed: fresh, written to the cache and read from it.
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cost_usd: Option<f64>,
}

/// What one invocation produced; a failed agent is a report, not an error.
#[derive(Debug, Clone)]
pub struct AgentReport {
    /// How the run ended, for the breaker.
    pub end: AgentEnd,
    /// The last status block in the agent's answer.
    pub status: Found,
    /// Present when the agent's output reported usage or cost.
    pub usage: Option<Usage>,
    /// The exit code, when the agent exited by itself.
    pub exit_code: Option<i32>,
    pub duration: Duration,
    /// The last lines of the answer (of Claude's `result` text when there is one).
    pub output_tail: String,
    /// `<iteration_dir>/output.log`.
    pub log_path: PathBuf,
    /// The normalised error lines of a run that did not end `Ok`.
    pub error_signature: Option<String>,
    /// One line saying why the run ended as it did, for logs and feedback.
    pub note: String,
}

/// prpd could not run the agent at all; the orchestrator escalates.
#[derive(Debug, thiserror::Error)]
pub enum AgentError {
    /// An artifact of the iteration (the prompt, the status block) could not be written.
    #[error("failed to write {}", path.display())]
    Write {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// The agent's program could not be started (missing, not executable, empty command).
    #[error(
        "failed to start the {phase} agent `{program}`; check `{config_key}` (or \
         `agents.default.command`) in prpd.toml"
    )]
    Start {
        phase: Phase,
        program: String,
        config_key: String,
        #[source]
        source: ProcessError,
    },
    /// The agent's output could not be captured or its exit not awaited.
    #[error("failed to run the {phase} agent `{program}`")]
    Run {
        phase: Phase,
        program: String,
        #[source]
        source: ProcessError,
    },
}

/// Runs the phase's agent once and reads its answer; see the module docs.
pub async fn invoke(invocation: &Invocation<'_>) -> Result<AgentReport, AgentError> {
    let config = invocation.config;
    let prompt_path = absolute(&invocation.iteration_dir.join(PROMPT_FILE));
    write_artifact(&prompt_path, invocation.prompt).await?;

    let last_message_path = absolute(&invocation.iteration_dir.join(LAST_MESSAGE_FILE));
    let argv = argv::expand(
        &config.command,
        &argv::Values {
            model: config.model.as_deref(),
            prompt_file: &prompt_path,
            last_message_file: &last_message_path,
            commands: invocation.commands,
        },
    );
    let program = argv.first().cloned().unwrap_or_default();
    let log_path = invocation.iteration_dir.join(OUTPUT_LOG);
    let mut spec = Spec::argv(argv, invocation.repo, &log_path);
    spec.env_policy = EnvPolicy::AllowList(config.env.clone());
    spec.env = agent_env(invocation);
    spec.stdin = match config.prompt {
        PromptMode::Stdin => Some(invocation.prompt.as_bytes().to_vec()),
        PromptMode::File => None,
    };
    spec.timeout = config.timeout;
    spec.tail_lines = TAIL_LINES;
    spec.group_file = invocation.group_file.map(Path::to_path_buf);

    tracing::info!(phase = %invocation.phase, iteration = invocation.iteration, %program, "starting agent");
    let outcome = process::run(spec)
        .await
        .map_err(|source| start_error(invocation.phase, program, source))?;
    let output = read_output(&outcome).await;
    let report = read_report(&outcome, &output, config.timeout);
    if let Found::Block(block) = &report.status {
        write_artifact(
            &invocation.iteration_dir.join(STATUS_BLOCK_FILE),
            &block.to_string(),
        )
        .await?;
    }
    tracing::info!(phase = %invocation.phase, iteration = invocation.iteration, end = ?report.end, note = %report.note, "agent finished");
    Ok(report)
}

fn start_error(phase: Phase, program: String, source: ProcessError) -> AgentError {
    match source {
        ProcessError::EmptyArgv | ProcessError::Spawn { .. } => AgentError::Start {
            phase,
            program,
            config_key: format!("agents.{}.command", phase.to_string().to_lowercase()),
            source,
        },
        ProcessError::LogDir { .. }
        | ProcessError::LogFile { .. }
        | ProcessError::Home { .. }
        | ProcessError::Capture { .. }
        | ProcessError::Wait { .. } => AgentError::Run {
            phase,
            program,
            source,
        },
    }
}

async fn write_artifact(path: &Path, text: &str) -> Result<(), AgentError> {
    let write_error = |source| AgentError::Write {
        path: path.to_path_buf(),
        source,
    };
    if let Some(dir) = path.parent() {
        tokio::fs::create_dir_all(dir).await.map_err(write_error)?;
    }
    tokio::fs::write(path, text).await.map_err(write_error)
}

fn absolute(path: &Path) -> PathBuf {
    std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf())
}

fn agent_env(invocation: &Invocation<'_>) -> Vec<(String, String)> {
    let path = |path: &Path| absolute(path).to_string_lossy().into_owned();
    let mut env = vec![
        ("PRPD_PHASE".to_owned(), invocation.phase.to_string()),
        (
            "PRPD_ITERATION".to_owned(),
            invocation.iteration.to_string(),
        ),
        ("PRPD_ATTEMPT".to_owned(), invocation.attempt.to_string()),
        ("PRPD_RUN_ID".to_owned(), invocation.run_id.to_owned()),
        ("PRPD_RUN_DIR".to_owned(), path(invocation.run_dir)),
        ("PRPD_PRP".to_owned(), path(invocation.prp_path)),
        ("PRPD_FEEDBACK".to_owned(), path(invocation.feedback_path)),
    ];
    env.extend(invocation.extra_env.iter().cloned());
    env
}

#[cfg(test)]
mod tests {
    use serde_json::Value as Json;

    use super::*;
    use crate::base::status_block::StatusBlock;

    const BLOCK: &str = "---PRP_PHASE_STATUS---\nPHASE: GREEN\nSTATUS: COMPLETE\nEXIT_SIGNAL: true\n---END_PRP_PHASE_STATUS---\n";
    const PROMPT: &str = "# GREEN\nMake the tests pass.\n";

    struct Fixture {
        dir: tempfile::TempDir,
    }

    impl Fixture {
        fn new() -> Fixture {
            let dir = tempfile::Builder::new()
                .prefix("prpd-agent-")
                .tempdir()
                .expect("temp dir");
            std::fs::create_dir_all(dir.path().join("repo")).expect("repo dir");
            Fixture { dir }
        }

        fn repo(&self) -> PathBuf {
            self.dir.path().join("repo")
        }

        fn iteration_dir(&self) -> PathBuf {
            self.dir.path().join("run/iterations/green-3")
        }

        /// An agent script run by `sh` (exec'ing a file just written can fail with ETXTBSY
        /// while other test threads fork).
        fn agent(&self, script: &str, arguments: &[&str], prompt: PromptMode) -> AgentConfig {
            let path = self.dir.path().join("agent.sh");
            std::fs::write(&path, script).expect("write script");
            let mut command = vec!["sh".to_owned(), path.display().to_string()];
            command.extend(arguments.iter().map(|argument| (*argument).to_owned()));
            AgentConfig {
                command,
                model: Some("test-model".to_owned()),
                prompt,
                timeout: Duration::from_secs(20),
                env: Vec::new(),
            }
        }

        /// An agent that prints `output` exactly and exits with `code`.
        fn printing(&self, output: &str, code: i32) -> AgentConfig {
            std::fs::write(self.dir.path().join("output.txt"), output).expect("write output");
            let script = format!(
                "cat '{}'\nexit {code}\n",
                self.dir.path().join("output.txt").display()
            );
            self.agent(&script, &[], PromptMode::Stdin)
        }

        async fn invoke_with(
            &self,
            config: &AgentConfig,
            extra_env: &[(String, String)],
        ) -> Result<AgentReport, AgentError> {
            let repo = self.repo();
            let run_dir = self.dir.path().join("run");
            let iteration_dir = self.iteration_dir();
            invoke(&Invocation {
                phase: Phase::Green,
                iteration: 3,
                attempt: 2,
                run_id: "run-1",
                run_dir: &run_dir,
                repo: &repo,
                prp_path: &repo.join("PRPs/feature.md"),
                feedback_path: &run_dir.join("feedback.md"),
                prompt: PROMPT,
                config,
                iteration_dir: &iteration_dir,
                extra_env,
                group_file: None,
                commands: &Commands::default(),
            })
            .await
        }

        async fn invoke(&self, config: &AgentConfig) -> AgentReport {
            self.invoke_with(config, &[]).await.expect("agent starts")
        }

        fn read(&self, path: impl AsRef<Path>) -> String {
            let path = self.dir.path().join(path);
            std::fs::read_to_string(&path)
                .unwrap_or_else(|error| panic!("{}: {error}", path.display()))
        }
    }

    fn block(status: &Found) -> &StatusBlock {
        match status {
            Found::Block(block) => block,
            other => panic!("expected a block, got {other:?}"),
        }
    }

    fn claude_result(result: &str, is_error: bool) -> Json {
        serde_json::json!({
            "type": "result",
            "subtype": "success",
            "is_error": is_error,
            "duration_ms": 1234,
            "result": result,
            "session_id": "0f9a3c2e-1111-2222-3333-444455556666",
            "usage": {
                "input_tokens": 10,
                "output_tokens": 7,
                "cache_creation_input_tokens": 5,
                "cache_read_input_tokens": 100
            },
            "total_cost_usd": 0.12
        })
    }

    #[tokio::test]
    async fn a_plain_status_block_is_read_and_the_artifacts_are_written() {
        let fixture = Fixture::new();
        let config = fixture.printing(&format!("working on it\n{BLOCK}"), 0);
        let report = fixture.invoke(&config).await;
        assert_eq!(report.end, AgentEnd::Ok, "{}", report.note);
        let found = block(&report.status);
        assert_eq!(found.exit_signal(), Some(true));
        assert_eq!(report.exit_code, Some(0));
        assert_eq!(report.usage, None);
        assert_eq!(report.error_signature, None);
        assert_eq!(
            report.note,
            "exited 0 with a status block (EXIT_SIGNAL: true)"
        );
        assert_eq!(report.log_path, fixture.iteration_dir().join(OUTPUT_LOG));
        assert!(report.output_tail.starts_with("working on it\n"));
        let iteration = fixture.iteration_dir();
        assert_eq!(fixture.read(iteration.join(PROMPT_FILE)), PROMPT);
        assert_eq!(fixture.read(iteration.join(STATUS_BLOCK_FILE)), BLOCK);
        assert!(
            fixture
                .read(iteration.join(OUTPUT_LOG))
                .contains("working on it")
        );
    }

    #[tokio::test]
    async fn claude_json_gives_the_block_inside_result_and_the_usage() {
        let fixture = Fixture::new();
        let json = claude_result(&format!("All tests pass.\n\n{BLOCK}"), false).to_string();
        assert!(
            !json.contains('\n'),
            "compact JSON keeps the newlines escaped"
        );
        let config = fixture.printing(&format!("{json}\n"), 0);
        let report = fixture.invoke(&config).await;
        assert_eq!(report.end, AgentEnd::Ok, "{}", report.note);
        assert_eq!(block(&report.status).exit_signal(), Some(true));
        assert_eq!(
            report.usage,
            Some(Usage {
                input_tokens: 115,
                output_tokens: 7,
                cost_usd: Some(0.12)
            })
        );
        assert!(
            report.output_tail.starts_with("All tests pass."),
            "{}",
            report.output_tail
        );
        assert!(!report.output_tail.contains("\"type\""));
    }

    #[tokio::test]
    async fn stream_json_is_read_from_its_last_result_line() {
        let fixture = Fixture::new();
        let quoted = BLOCK.replace("EXIT_SIGNAL: true", "EXIT_SIGNAL: false");
        let lines = [
            serde_json::json!({"type": "system", "subtype": "init", "model": "test-model"}),
            serde_json::json!({"type": "assistant", "message": {"content": [{"type": "text", "text": quoted}]}}),
            claude_result(&format!("Done.\n{BLOCK}"), false),
        ];
        let output = lines.map(|line| line.to_string()).join("\n");
        let config = fixture.printing(&format!("warning: on stderr too\n{output}"), 0);
        let report = fixture.invoke(&config).await;
        assert_eq!(report.end, AgentEnd::Ok, "{}", report.note);
        assert_eq!(block(&report.status).exit_signal(), Some(true));
        assert_eq!(report.usage.map(|usage| usage.output_tokens), Some(7));
    }

    #[tokio::test]
    async fn output_without_a_usable_block_is_malformed() {
        let fixture = Fixture::new();
        let config = fixture.printing("I am done. EXIT_SIGNAL: true\n", 0);
        let report = fixture.invoke(&config).await;
        assert_eq!(report.end, AgentEnd::Malformed);
        assert_eq!(report.status, Found::None);
        assert_eq!(report.note, "exited 0 without a status block");
        assert!(report.error_signature.is_some());
        assert!(!fixture.iteration_dir().join(STATUS_BLOCK_FILE).exists());

        let broken = "---PRP_PHASE_STATUS---\nPHASE GREEN\n---END_PRP_PHASE_STATUS---\n";
        let config = fixture.printing(broken, 0);
        let report = fixture.invoke(&config).await;
        assert_eq!(report.end, AgentEnd::Malformed);
        assert!(matches!(report.status, Found::Malformed(_)));
        assert!(report.note.contains("does not parse"), "{}", report.note);
    }

    #[tokio::test]
    async fn a_non_zero_exit_is_a_crash_with_an_error_signature() {
        let fixture = Fixture::new();
        let config = fixture.printing(
            &format!("{BLOCK}compiling\nerror: boom at src/lib.rs:12:5\n"),
            1,
        );
        let report = fixture.invoke(&config).await;
        assert_eq!(
            report.end,
            AgentEnd::Crashed,
            "a block does not excuse a failed exit"
        );
        assert_eq!(report.exit_code, Some(1));
        assert_eq!(
            report.error_signature.as_deref(),
            Some("error: boom at src/lib.rs:<n>:<n>")
        );
        assert_eq!(report.note, "exited 1: error: boom at src/lib.rs:12:5");
    }

    #[tokio::test]
    async fn a_usage_limit_is_quota() {
        let fixture = Fixture::new();
        let json = claude_result("Claude AI usage limit reached|1760000000", true);
        let config = fixture.printing(&format!("{json}\n"), 1);
        let report = fixture.invoke(&config).await;
        assert_eq!(report.end, AgentEnd::Quota, "{}", report.note);
        assert!(
            report.note.contains("usage limit reached"),
            "{}",
            report.note
        );

        let config = fixture.printing("Error: 429 Too Many Requests\n", 1);
        assert_eq!(fixture.invoke(&config).await.end, AgentEnd::Quota);
    }

    #[tokio::test]
    async fn a_rate_limit_in_the_output_of_a_successful_run_is_not_quota() {
        let fixture = Fixture::new();
        let config = fixture.printing(&format!("Implemented the rate limit.\n{BLOCK}"), 0);
        assert_eq!(fixture.invoke(&config).await.end, AgentEnd::Ok);

        // Without a block the run is malformed, never quota: a quota end would make prpd wait
        // and retry an agent that only talked about rate limits.
        let config = fixture.printing("Added the API quota and rate limit checks.\n", 0);
        assert_eq!(fixture.invoke(&config).await.end, AgentEnd::Malformed);
    }

    #[tokio::test]
    async fn claude_permission_denials_without_a_block_are_permission_denied() {
        let fixture = Fixture::new();
        let mut json = claude_result("I could not run the tests.", false);
        json["permission_denials"] = serde_json::json!([
            {"tool_name": "Bash", "tool_use_id": "toolu_01", "tool_input": {"command": "cargo test"}}
        ]);
        let config = fixture.printing(&format!("{json}\n"), 0);
        let report = fixture.invoke(&config).await;
        assert_eq!(report.end, AgentEnd::PermissionDenied, "{}", report.note);
        assert_eq!(report.note, "permission denied for Bash");

        json["result"] = Json::String(format!("Done another way.\n{BLOCK}"));
        let config = fixture.printing(&format!("{json}\n"), 0);
        assert_eq!(fixture.invoke(&config).await.end, AgentEnd::Ok);
    }

    #[tokio::test]
    async fn a_hanging_agent_times_out() {
        let fixture = Fixture::new();
        let mut config = fixture.agent("echo started\nsleep 30\n", &[], PromptMode::Stdin);
        config.timeout = Duration::from_millis(300);
        let report = fixture.invoke(&config).await;
        assert_eq!(report.end, AgentEnd::TimedOut);
        assert_eq!(report.exit_code, None);
        assert!(
            report.duration < Duration::from_secs(10),
            "{:?}",
            report.duration
        );
        assert_eq!(report.note, "stopped at its timeout of 300ms");
    }

    #[tokio::test]
    async fn file_mode_passes_the_prompt_path_and_the_model_in_the_argv() {
        let fixture = Fixture::new();
        let script = format!(
            "printf '%s' \"$1\" > args.txt\ncat \"$2\" > seen.txt\ncat > stdin.txt\nprintf '%s' '{BLOCK}'\n"
        );
        let config = fixture.agent(
            &script,
            &["--model={model}", "{prompt_file}"],
            PromptMode::File,
        );
        let report = fixture.invoke(&config).await;
        assert_eq!(report.end, AgentEnd::Ok, "{}", report.note);
        assert_eq!(fixture.read("repo/args.txt"), "--model=test-model");
        assert_eq!(fixture.read("repo/seen.txt"), PROMPT);
        assert_eq!(fixture.read("repo/stdin.txt"), "");
    }

    #[tokio::test]
    async fn stdin_mode_writes_the_prompt_to_stdin() {
        let fixture = Fixture::new();
        let script = format!("cat > seen.txt\npwd > cwd.txt\nprintf '%s' '{BLOCK}'\n");
        let config = fixture.agent(&script, &[], PromptMode::Stdin);
        let report = fixture.invoke(&config).await;
        assert_eq!(report.end, AgentEnd::Ok, "{}", report.note);
        assert_eq!(fixture.read("repo/seen.txt"), PROMPT);
        let cwd = PathBuf::from(fixture.read("repo/cwd.txt").trim());
        assert_eq!(
            cwd.canonicalize().expect("cwd"),
            fixture.repo().canonicalize().expect("repo")
        );
    }

    #[tokio::test]
    async fn the_agent_sees_allow_listed_and_prpd_variables_only() {
        let fixture = Fixture::new();
        let mut names: Vec<(String, String)> = std::env::vars()
            .filter(|(name, value)| {
                !["PATH", "HOME"].contains(&name.as_str())
                    && !name.starts_with("PRPD_")
                    && !value.contains('\n')
            })
            .collect();
        names.sort();
        assert!(
            names.len() >= 2,
            "the test process has few variables: {names:?}"
        );
        let (allowed, allowed_value) = names[0].clone();
        let (hidden, _) = names
            .iter()
            .find(|(name, _)| !name.starts_with(&allowed))
            .cloned()
            .expect("a variable the pattern does not match");
        let mut config = fixture.agent("env > env.txt\n", &[], PromptMode::Stdin);
        // A pattern, as the presets write them (`ANTHROPIC_*`), passes the variable through.
        config.env = vec![format!("{allowed}*")];
        let extra = [("PRPD_QA_REPORT".to_owned(), "/tmp/qa.md".to_owned())];
        fixture.invoke_with(&config, &extra).await.expect("starts");

        let env = fixture.read("repo/env.txt");
        let has = |line: &str| env.lines().any(|seen| seen == line);
        let run_dir = fixture.dir.path().join("run");
        assert!(has(&format!("{allowed}={allowed_value}")), "{env}");
        assert!(
            !env.lines()
                .any(|line| line.starts_with(&format!("{hidden}="))),
            "{hidden} leaked"
        );
        assert!(has("PRPD_PHASE=GREEN"));
        assert!(has("PRPD_ITERATION=3"));
        assert!(has("PRPD_ATTEMPT=2"));
        assert!(has("PRPD_RUN_ID=run-1"));
        assert!(has(&format!("PRPD_RUN_DIR={}", run_dir.display())));
        assert!(has(&format!(
            "PRPD_PRP={}",
            fixture.repo().join("PRPs/feature.md").display()
        )));
        assert!(has(&format!(
            "PRPD_FEEDBACK={}",
            run_dir.join("feedback.md").display()
        )));
        assert!(has("PRPD_QA_REPORT=/tmp/qa.md"));
    }

    #[tokio::test]
    async fn a_missing_program_is_an_error_naming_it_and_the_config_key() {
        let fixture = Fixture::new();
        let config = AgentConfig {
            command: vec!["prpd-no-such-agent".to_owned(), "-p".to_owned()],
            model: None,
            prompt: PromptMode::Stdin,
            timeout: Duration::from_secs(5),
            env: Vec::new(),
        };
        let error = fixture
            .invoke_with(&config, &[])
            .await
            .expect_err("cannot start");
        assert!(matches!(error, AgentError::Start { .. }), "{error:?}");
        let message = error.to_string();
        assert!(message.contains("`prpd-no-such-agent`"), "{message}");
        assert!(message.contains("`agents.green.command`"), "{message}");
    }

    #[test]
    fn the_debug_of_an_invocation_shows_no_env_values() {
        let config = AgentConfig {
            command: vec!["agent".to_owned()],
            model: None,
            prompt: PromptMode::Stdin,
            timeout: Duration::from_secs(1),
            env: vec!["ANTHROPIC_API_KEY".to_owned()],
        };
        let extra = [("PRPD_TOKEN".to_owned(), "sk-secret-value".to_owned())];
        let invocation = Invocation {
            phase: Phase::Qa,
            iteration: 1,
            attempt: 1,
            run_id: "run-1",
            run_dir: Path::new("run"),
            repo: Path::new("."),
            prp_path: Path::new("PRPs/x.md"),
            feedback_path: Path::new("run/feedback.md"),
            prompt: "prompt",
            config: &config,
            iteration_dir: Path::new("run/qa-1"),
            extra_env: &extra,
            group_file: None,
            commands: &Commands::default(),
        };
        let shown = format!("{invocation:?}");
        assert!(shown.contains("PRPD_TOKEN"), "{shown}");
        assert!(!shown.contains("sk-secret-value"), "{shown}");
    }
}
