//! How an agent run ended, read from its outcome and its output: the [`AgentEnd`] the circuit
//! breaker counts, the note for logs and feedback, and the error signature that tells a stuck
//! agent from one making progress. It stands apart from reading the output because the rules
//! here (which words name a quota, when a status block excuses nothing) are prpd's policy, not
//! any agent's format.

use std::sync::LazyLock;
use std::time::Duration;

use regex::Regex;

use crate::breaker::{AgentEnd, normalise_error};
use prpd_base::process::{Outcome, Termination};
use prpd_base::status_block::Found;
use prpd_protocols::test_plan;

use super::formats::{aider_model, aider_usage, find_codex_run};
use super::output::{ClaudeResult, find_answer_block, find_claude_result};
use super::unreachable::{self, event_message};
use super::{AgentReport, TAIL_LINES};

/// The last lines of a failed run that are searched for its cause.
const FAILURE_LINES: usize = 20;
/// Longest [`AgentReport::note`].
const NOTE_CAP: usize = 240;

/// Case-insensitive patterns naming the cause of a failed run, tried in order; the first that
/// matches one of the run's last lines wins. Quota comes first: a usage limit explains any
/// refusal that follows it.
pub(super) const FAILURE_PATTERNS: &[(AgentEnd, &str)] = &[
    // Claude Code "Claude AI usage limit reached|<epoch>", Codex "usage_limit_reached".
    (AgentEnd::Quota, r"usage[ _-]?limit"),
    // "rate limit", Anthropic's "rate_limit_error", "rate-limited".
    (AgentEnd::Quota, r"rate[ _-]?limit"),
    // HTTP 429 when named as a status, not any 429 (a line number in a stack trace).
    (
        AgentEnd::Quota,
        r"(?:http|status|code|error)\W{0,3}429\b|too many requests",
    ),
    // OpenAI "insufficient_quota", "You exceeded your current quota".
    (AgentEnd::Quota, r"quota"),
    // Anthropic's 529 "overloaded_error".
    (AgentEnd::Quota, r"overloaded"),
    (AgentEnd::PermissionDenied, r"permission denied"),
    // Claude Code "Claude requested permissions to use Bash, but you haven't granted it yet."
    (
        AgentEnd::PermissionDenied,
        r"haven't granted|requires? (?:your )?approval|approval required",
    ),
    (
        AgentEnd::PermissionDenied,
        r"not allowed to (?:use|run|execute|edit|write)|(?:tool|command) is not allowed",
    ),
];

/// Case-insensitive patterns of transient provider failures, named so precisely that they are
/// trusted even when the agent exited 0 (Aider does after a rate limit): an agent talking about
/// rate limits in its answer does not print a library's exception class.
const TRANSIENT_PATTERNS: &[&str] = &[
    // Aider (litellm): "litellm.RateLimitError: AnthropicException - …", "litellm.APIConnectionError".
    r"litellm\.(?:RateLimitError|APIConnectionError|InternalServerError|ServiceUnavailableError|Timeout|APIError)",
    // Codex CLI: "We're currently experiencing high demand", "stream disconnected before completion",
    // "stream error: …; retrying".
    r"experiencing high demand|stream disconnected before completion|stream error",
    // Claude Code: "API Error: 500 {…}", "API Error: 529 … overloaded_error".
    r"API Error: (?:408|429|5\d\d)\b|overloaded_error",
];

/// Patterns of an agent that cannot use its model at all — its provider refused the key, knows
/// no such model, or refuses the request as made — which no retry fixes. They are read only from
/// a run that gave no answer (no status block), so that an agent whose work prints such words (a
/// test of an API client) is never taken for one. A library's exception class is trusted
/// whatever the exit (Aider exits 0 after one: `litellm.AuthenticationError: …`).
const SETUP_CLASSES: &str =
    r"litellm\.(?:AuthenticationError|NotFoundError|BadRequestError|PermissionDeniedError)";

/// A provider's error as the CLIs print it, trusted only when the run itself failed (a non-zero
/// exit, Claude Code's `is_error`): Claude Code's `API Error: 401 {…authentication_error…}` and
/// `Invalid API key · Please run /login`, the error codes `invalid_api_key`, `model_not_found`
/// and `Incorrect API key provided` that Codex CLI passes on, and Codex's own `unexpected
/// status 401 Unauthorized`, the `invalid_request_error` (a 400) and "The model `…` does
/// not exist or you do not have access to it" (`tests/fixtures/agents/codex-0.171-*.log`).
const SETUP_ERRORS: &str = r"API Error: (?:400|401|403|404)\b|Invalid API key · Please run /login|\binvalid_api_key\b|\bmodel_not_found\b|Incorrect API key provided|unexpected status (?:400|401|403|404)\b|\binvalid_request_error\b|does not exist or you do not have access to it";

/// Lines that look like an error; they make up the error signature of a failed run.
const ERROR_LINE_PATTERN: &str =
    r"(?i)error|fatal|panic|exception|traceback|fail|denied|limit|quota|overloaded";

/// Classifies a finished run from its outcome and the end of its output.
/// `last_message` is what the CLI wrote to `{last_message_file}`, when it did.
pub(super) fn read_report(
    outcome: &Outcome,
    output: &str,
    last_message: Option<&str>,
    timeout: Duration,
) -> AgentReport {
    let claude = find_claude_result(output);
    let codex = claude.is_none().then(|| find_codex_run(output)).flatten();
    // What a failure is read from: Claude's result text, else everything the agent printed.
    let printed = claude
        .as_ref()
        .map_or(output, |result| result.text.as_str());
    // The agent's answer, where its status block is: the last message when the CLI reports
    // one apart from its log (Codex), else what it printed.
    let answer = last_message
        .filter(|text| !text.trim().is_empty())
        .or_else(|| codex.as_ref().and_then(|run| run.last_message.as_deref()))
        .unwrap_or(printed);
    let status = find_answer_block(answer);
    let output_tail = if claude.is_some() || !std::ptr::eq(answer, printed) {
        prpd_base::files::last_lines(answer, TAIL_LINES)
    } else {
        outcome.tail.clone()
    };
    let usage = claude
        .as_ref()
        .and_then(|result| result.usage)
        .or_else(|| codex.as_ref().and_then(|run| run.usage))
        .or_else(|| aider_usage(output));
    let reported_error = claude.as_ref().is_some_and(|result| result.is_error);
    let denials: Vec<String> = claude
        .as_ref()
        .and_then(|result| result.permission_denials.clone())
        .unwrap_or_default();

    let (end, note) = match outcome.termination {
        Termination::Stopped => (AgentEnd::Crashed, "stopped by prpd while it ran".to_owned()),
        Termination::TimedOut => (
            AgentEnd::TimedOut,
            format!(
                "stopped at its timeout of {}",
                humantime::format_duration(timeout)
            ),
        ),
        Termination::Exited(0)
            if !reported_error && !denials.is_empty() && !claims_done(&status) =>
        {
            (
                AgentEnd::PermissionDenied,
                format!("permission denied for {}", denials.join(", ")),
            )
        }
        Termination::Exited(0) if !reported_error && matches!(status, Found::Block(_)) => {
            (AgentEnd::Ok, ok_note(&status))
        }
        Termination::Exited(_) | Termination::Signaled(_) => {
            failure_end(outcome.termination, claude.as_ref(), printed, &status)
        }
    };
    let failed = reported_error || outcome.exit_code().is_some_and(|code| code != 0);
    let setup_error = (!matches!(status, Found::Block(_)))
        .then(|| setup_error(printed, failed))
        .flatten();
    let (end, note) = not_an_outage(setup_error.as_deref(), end, note);
    let error_signature = match end {
        AgentEnd::Ok => None,
        AgentEnd::Malformed
        | AgentEnd::PermissionDenied
        | AgentEnd::Quota
        | AgentEnd::TimedOut
        | AgentEnd::Crashed => Some(error_signature(
            &failure_text(claude.as_ref(), printed),
            &note,
        )),
    };
    AgentReport {
        budget_crossed: None,
        end,
        setup_error,
        usage,
        exit_code: outcome.exit_code(),
        duration: outcome.duration,
        output_tail,
        log_path: outcome.log_path.clone(),
        error_signature,
        note: one_line(&note),
        blockers: match &status {
            Found::Block(block) => block.blockers(),
            Found::None | Found::Malformed(_) => Vec::new(),
        },
        denials,
        status,
        model: match &claude {
            Some(result) => result.model.clone(),
            None => aider_model(output),
        },
        answer: test_plan::plan_window(answer).to_owned(),
        reset_at: match end {
            AgentEnd::Quota => usage_limit_reset(&failure_text(claude.as_ref(), printed)),
            AgentEnd::Ok
            | AgentEnd::Malformed
            | AgentEnd::PermissionDenied
            | AgentEnd::TimedOut
            | AgentEnd::Crashed => None,
        },
    }
}

/// The last of the run's last lines that says it could not use its model at all (a provider's
/// error counts only when the run `failed`), else the CLI waiting for a network it never
/// reached in the call (`unreachable.rs`); a Codex event is named by its message.
fn setup_error(printed: &str, failed: bool) -> Option<String> {
    static CLASSES: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(SETUP_CLASSES)
            .unwrap_or_else(|error| unreachable!("the setup patterns compile: {error}"))
    });
    static ERRORS: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(SETUP_ERRORS)
            .unwrap_or_else(|error| unreachable!("the setup patterns compile: {error}"))
    });
    let lines = said_lines(printed);
    lines[lines.len().saturating_sub(FAILURE_LINES)..]
        .iter()
        .rev()
        .find(|line| CLASSES.is_match(line) || (failed && ERRORS.is_match(line)))
        .cloned()
        .or_else(|| unreachable::in_output(printed))
        .map(|line| one_line(&line))
}

/// A CLI that cannot reach its model retries first, and its retries read as an outage
/// ("stream disconnected"): waiting for it to pass would wait for ever, so a set-up error
/// makes the end a crash.
fn not_an_outage(setup_error: Option<&str>, end: AgentEnd, note: String) -> (AgentEnd, String) {
    match (setup_error, end) {
        (Some(line), AgentEnd::Quota) => {
            (AgentEnd::Crashed, format!("cannot use its model: {line}"))
        }
        (_, end) => (end, note),
    }
}

/// Whether the agent's block says the phase is done: a refusal it worked around does not
/// make the iteration a denied one.
fn claims_done(status: &Found) -> bool {
    match status {
        Found::Block(block) => block.exit_signal() == Some(true),
        Found::None | Found::Malformed(_) => false,
    }
}

fn ok_note(status: &Found) -> String {
    let exit_signal = match status {
        Found::Block(block) => match block.exit_signal() {
            Some(true) => "true",
            Some(false) => "false",
            None => "missing",
        },
        Found::None | Found::Malformed(_) => "missing",
    };
    format!("exited 0 with a status block (EXIT_SIGNAL: {exit_signal})")
}

/// The end of a run that did not succeed: a recognised cause, else a crash or malformed output.
fn failure_end(
    termination: Termination,
    claude: Option<&ClaudeResult>,
    answer: &str,
    status: &Found,
) -> (AgentEnd, String) {
    let failure_text = failure_text(claude, answer);
    let how = match termination {
        Termination::Exited(code) => format!("exited {code}"),
        Termination::Signaled(signal) => format!("was killed by signal {signal}"),
        Termination::TimedOut => "timed out".to_owned(),
        Termination::Stopped => "was stopped by prpd".to_owned(),
    };
    // Words in the output only explain a run that failed: a successful agent building a rate
    // limiter may well print "rate limit" and "quota".
    let crashed = !matches!(termination, Termination::Exited(0))
        || claude.is_some_and(|result| result.is_error);
    if let Some(code) = claude.and_then(|result| result.api_error_status)
        && is_transient_status(code)
    {
        return (
            AgentEnd::Quota,
            format!("the provider failed for now (API status {code}); prpd waits and retries"),
        );
    }
    if let Some(line) = transient_line(&failure_text) {
        return (
            AgentEnd::Quota,
            format!("the provider failed for now: {line}"),
        );
    }
    let cause = failure_cause(&failure_text).filter(|_| crashed);
    if let Some((AgentEnd::Quota, line)) = cause {
        return (AgentEnd::Quota, format!("usage or rate limit: {line}"));
    }
    // Claude's own record of refused tools is more reliable than matching words.
    match claude.and_then(|result| result.permission_denials.as_ref()) {
        Some(denied) if !denied.is_empty() => {
            return (
                AgentEnd::PermissionDenied,
                format!("permission denied for {}", denied.join(", ")),
            );
        }
        Some(_) => {}
        None => {
            if let Some((AgentEnd::PermissionDenied, line)) = cause {
                return (
                    AgentEnd::PermissionDenied,
                    format!("permission denied: {line}"),
                );
            }
        }
    }
    let last_error = error_lines(&failure_text)
        .last()
        .copied()
        .unwrap_or_default();
    if crashed {
        let reported = if claude.is_some_and(|result| result.is_error) {
            " and reported an error"
        } else {
            ""
        };
        return (AgentEnd::Crashed, format!("{how}{reported}: {last_error}"));
    }
    match status {
        Found::Malformed(error) => (
            AgentEnd::Malformed,
            format!("exited 0 but its status block does not parse: {error}"),
        ),
        Found::None | Found::Block(_) => (
            AgentEnd::Malformed,
            "exited 0 without a status block".to_owned(),
        ),
    }
}

/// The last lines of a failed run's answer, with Claude's error list when there is one.
fn failure_text(claude: Option<&ClaudeResult>, answer: &str) -> String {
    let said = said_lines(answer);
    let mut text = said[said.len().saturating_sub(FAILURE_LINES)..].join("\n");
    for error in claude.iter().flat_map(|result| &result.errors) {
        text.push('\n');
        text.push_str(error);
    }
    text
}

/// The lines of `text` as the CLI itself said them. A JSON line is one of its events (Codex's
/// `--json`, Claude Code's `stream-json`): only the event's own error message counts, never
/// what a tool call it reports printed — a test of an HTTP client prints "unexpected status
/// 404", a test of a rate limiter "rate limit".
fn said_lines(text: &str) -> Vec<String> {
    text.lines()
        .map(str::trim)
        .filter_map(|line| {
            if line.starts_with('{') {
                event_message(line)
            } else {
                Some(line.to_owned())
            }
        })
        .collect()
}

/// HTTP statuses a provider returns for a failure that passes: a timeout, a rate limit, an
/// outage, an overload (Anthropic's 529).
fn is_transient_status(code: u64) -> bool {
    matches!(code, 408 | 429 | 500..=599)
}

/// The first line naming a transient provider failure ([`TRANSIENT_PATTERNS`]).
fn transient_line(text: &str) -> Option<&str> {
    static PATTERNS: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(&format!("(?i){}", TRANSIENT_PATTERNS.join("|")))
            .expect("the transient patterns are valid regexes")
    });
    text.lines()
        .find(|line| PATTERNS.is_match(line))
        .map(str::trim)
}

/// When a usage limit resets (Unix seconds), from Claude Code's "Claude AI usage limit
/// reached|<epoch>".
fn usage_limit_reset(text: &str) -> Option<u64> {
    static RESET: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"(?i)usage limit reached\|(\d{9,11})")
            .expect("the reset pattern is a valid regex")
    });
    RESET
        .captures_iter(text)
        .last()?
        .get(1)?
        .as_str()
        .parse()
        .ok()
}

/// The first [`FAILURE_PATTERNS`] entry that matches a line of `text`, with that line.
fn failure_cause(text: &str) -> Option<(AgentEnd, &str)> {
    static PATTERNS: LazyLock<Vec<(AgentEnd, Regex)>> = LazyLock::new(|| {
        FAILURE_PATTERNS
            .iter()
            .map(|(end, pattern)| {
                let regex = Regex::new(&format!("(?i){pattern}"))
                    .expect("the failure patterns are valid regexes");
                (*end, regex)
            })
            .collect()
    });
    PATTERNS.iter().find_map(|(end, regex)| {
        text.lines()
            .find(|line| regex.is_match(line))
            .map(|line| (*end, line.trim()))
    })
}

fn error_lines(text: &str) -> Vec<&str> {
    static ERROR_LINE: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(ERROR_LINE_PATTERN).expect("the error line pattern is a valid regex")
    });
    text.lines()
        .map(str::trim)
        .filter(|line| ERROR_LINE.is_match(line))
        .collect()
}

/// The normalised error lines of the failure, or of the note when the agent printed none.
fn error_signature(failure_text: &str, note: &str) -> String {
    let lines = error_lines(failure_text);
    if lines.is_empty() {
        normalise_error(note)
    } else {
        normalise_error(&lines.join("\n"))
    }
}

fn one_line(text: &str) -> String {
    let line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    match line.char_indices().nth(NOTE_CAP) {
        Some((cut, _)) => format!("{}…", &line[..cut]),
        None => line,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failure_patterns_name_quota_and_permission_causes_only() {
        let cases = [
            (
                "Claude AI usage limit reached|1760000000",
                Some(AgentEnd::Quota),
            ),
            (
                r#"API Error: 429 {"type":"error","error":{"type":"rate_limit_error"}}"#,
                Some(AgentEnd::Quota),
            ),
            ("HTTP 429 Too Many Requests", Some(AgentEnd::Quota)),
            ("You exceeded your current quota", Some(AgentEnd::Quota)),
            (r#"{"type":"overloaded_error"}"#, Some(AgentEnd::Quota)),
            (
                "Claude requested permissions to use Bash, but you haven't granted it yet.",
                Some(AgentEnd::PermissionDenied),
            ),
            (
                "sh: ./run.sh: Permission denied",
                Some(AgentEnd::PermissionDenied),
            ),
            (
                "this command requires approval",
                Some(AgentEnd::PermissionDenied),
            ),
            (
                "the agent is not allowed to run git push",
                Some(AgentEnd::PermissionDenied),
            ),
            ("thread 'main' panicked at src/main.rs:429:5", None),
            ("error[E0308]: mismatched types", None),
            ("test result: FAILED. 3 passed; 1 failed", None),
        ];
        for (text, expected) in cases {
            assert_eq!(failure_cause(text).map(|(end, _)| end), expected, "{text}");
        }
        assert_eq!(
            failure_cause("compiling\nrate limit exceeded, retry later\n"),
            Some((AgentEnd::Quota, "rate limit exceeded, retry later"))
        );
    }
}
