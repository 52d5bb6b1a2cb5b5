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

mod aider;
mod argv;
mod classify;
mod formats;
mod live;
mod output;
mod preflight;
mod provider;
mod stream;
mod unreachable;

use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::breaker::AgentEnd;
use crate::config::{AgentConfig, PromptMode};
use prpd_base::phase::Phase;
use prpd_base::process::{self, EnvPolicy, ProcessError, Spec};
use prpd_base::status_block::Found;

use classify::read_report;
use output::read_output;

pub use aider::{EXCLUDE_PATTERN as AIDER_EXCLUDE, is_aider};
pub use argv::{Commands, LAST_MESSAGE_FILE, MissingCommand, check_commands};
pub use live::CallBudget;
pub use preflight::{AgentsNotInstalled, NotInstalled, check_installed};
pub use provider::{Needs, advice, cli_of, needs};

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
    /// [`prpd_base::process::stop_orphaned_group`]).
    pub group_file: Option<&'a Path>,
    /// The run's discovered commands, for `{test_command}` and `{lint_command}`.
    pub commands: &'a Commands,
    /// The budgets the call may not cross; its streamed usage is watched against them.
    pub budget: Option<&'a CallBudget>,
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
            .field("budget", &self.budget)
            .finish()
    }
}

/// Tokens and cost the agent reported: Claude Code's `usage` and `total_cost_usd`, Codex's
/// `turn.completed` usage, Aider's `Tokens: … Cost: …` lines. Cached input is kept apart from
/// fresh input because providers bill it differently.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Usage {
    /// Input tokens processed fresh: neither read from nor written to the prompt cache.
    pub input_tokens: u64,
    /// Input tokens written to the prompt cache (billed above the input price by Anthropic).
    pub cache_write_tokens: u64,
    /// Input tokens read from the prompt cache (billed at a fraction of the input price).
    pub cache_read_tokens: u64,
    pub output_tokens: u64,
    pub cost_usd: Option<f64>,
}

impl Usage {
    /// What the `max_tokens` guardrail counts: fresh input, cache writes and output. Cache
    /// reads are left out: they are billed at a tenth of the input price or less, and a
    /// long agent session rereads its whole context on every turn, so counting them at full
    /// weight would trip the guardrail after a few calls (their cost is in `max_cost_usd`).
    pub fn billed_tokens(&self) -> u64 {
        self.input_tokens
            .saturating_add(self.cache_write_tokens)
            .saturating_add(self.output_tokens)
    }
}

/// What one invocation produced; a failed agent is a report, not an error.
#[derive(Debug, Clone)]
pub struct AgentReport {
    /// How the run ended, for the breaker.
    pub end: AgentEnd,
    /// The line that says the agent could not use its model at all (a key its provider
    /// refused, a model it does not know, a request it refuses), when the run gave no answer:
    /// no retry fixes it, so the run escalates at once, naming it.
    pub setup_error: Option<String>,
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
    /// The `BLOCKERS` of the agent's status block.
    pub blockers: Vec<String>,
    /// The tool calls the CLI refused (Claude Code's `permission_denials`), e.g.
    /// `Bash(npm test)`.
    pub denials: Vec<String>,
    /// When the provider's usage limit resets (Unix seconds), when a `Quota` end names it.
    pub reset_at: Option<u64>,
    /// The model the CLI says it worked with (Claude Code's `modelUsage`, Aider's banner).
    pub model: Option<String>,
    /// The end of the agent's final message (its last
    /// [`prpd_protocols::test_plan::MAX_PLAN_BYTES`]), with the secrets it was given
    /// redacted: where a RED agent's `TestPlan` is looked for.
    pub answer: String,
    /// The budget the agent's streamed usage crossed, for which prpd stopped it.
    pub budget_crossed: Option<crate::budget::Crossing>,
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
    let argv = provider::codex_argv(config, argv, provider::passed_base_url(config));
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
    let index = aider::is_aider(config)
        .then(|| aider::SavedIndex::save(invocation.repo))
        .flatten();
    let watching =
        live::Watching::start(invocation.budget.cloned(), config.model.clone(), &mut spec);
    let outcome = process::run(spec).await;
    let watched = watching.finish().await;
    if let Some(index) = &index {
        index.restore();
    }
    let mut outcome = outcome.map_err(|source| start_error(invocation.phase, program, source))?;
    let secrets = process::passed_secret_values(&config.env);
    redact_secrets(&mut outcome, &secrets).await;
    let output = read_output(&outcome).await;
    let last_message = read_last_message(&last_message_path, &secrets).await;
    let mut report = read_report(&outcome, &output, last_message.as_deref(), config.timeout);
    // A call stopped mid-turn never printed its totals: what it streamed is what it used.
    report.usage = report.usage.or(watched.usage);
    report.model = report.model.or(watched.model);
    // A crossing counts only when it stopped the agent: a call whose last report crossed as it
    // ended by itself is measured, and the next call is refused before it starts.
    if outcome.termination == process::Termination::Stopped {
        report.budget_crossed = watched.crossing;
        if let Some(why) = watched.stopped_because {
            report.note = redacted(&why, &secrets);
        }
    }
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

/// Replaces every secret value the agent was given (an API key, an auth token) in its output
/// log and tail by `[redacted]`: an agent that prints its environment must not put a token
/// into a file prpd keeps, nor into the feedback and reports built from them.
async fn redact_secrets(outcome: &mut process::Outcome, secrets: &[String]) {
    if secrets.is_empty() {
        return;
    }
    let redact = |text: &str| redacted(text, secrets);
    outcome.tail = redact(&outcome.tail);
    let Ok(bytes) = tokio::fs::read(&outcome.log_path).await else {
        return;
    };
    let text = String::from_utf8_lossy(&bytes);
    if !secrets.iter().any(|secret| text.contains(secret.as_str())) {
        return;
    }
    if let Err(error) = tokio::fs::write(&outcome.log_path, redact(&text)).await {
        tracing::warn!(path = %outcome.log_path.display(), %error, "failed to redact the agent's output log; removing it");
        let _ = tokio::fs::remove_file(&outcome.log_path).await;
    }
}

/// The final message the CLI wrote to `{last_message_file}` (Codex), when it wrote one, with
/// the secrets it was given redacted, in the file too: the file lies in the iteration's
/// directory, and its text becomes the answer prpd reads a `TestPlan` from.
async fn read_last_message(path: &Path, secrets: &[String]) -> Option<String> {
    let text = tokio::fs::read_to_string(path).await.ok()?;
    if !secrets.iter().any(|secret| text.contains(secret.as_str())) {
        return Some(text);
    }
    let text = redacted(&text, secrets);
    if let Err(error) = tokio::fs::write(path, &text).await {
        tracing::warn!(path = %path.display(), %error, "failed to redact the agent's last message; removing it");
        let _ = tokio::fs::remove_file(path).await;
    }
    Some(text)
}

/// `text` with every one of `secrets` replaced by `[redacted]`.
fn redacted(text: &str, secrets: &[String]) -> String {
    secrets.iter().fold(text.to_owned(), |text, secret| {
        text.replace(secret.as_str(), REDACTED)
    })
}

/// What a redacted secret reads as.
const REDACTED: &str = "[redacted]";

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
mod tests;
