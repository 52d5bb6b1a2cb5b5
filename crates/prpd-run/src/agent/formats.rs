//! The output formats of Codex CLI and Aider, read for the agent's answer and its usage.
//! Claude Code's result object has its own reader (`output.rs`); these two CLIs say less and
//! say it differently:
//!
//! - `codex exec --json` prints one JSON event per line. The answer is the last
//!   `agent_message` item (or the file `--output-last-message` wrote), the usage is in
//!   `turn.completed`, whose `input_tokens` include the `cached_input_tokens`.
//! - Aider prints `Tokens: 3.2k sent, 331 received. Cost: $0.01 message, $0.01 session.` after
//!   each model reply (with `…, 2.1k cache write, 12k cache hit, …` when the provider caches,
//!   and then the cost on a line of its own; a long line is wrapped at the terminal's width);
//!   the figures are rounded the way Aider rounds them (`3.2k`, `12k`, `1.1M`). `sent` is every
//!   input token of the request, the cache writes and hits Aider names apart included (litellm's
//!   `prompt_tokens` holds them, and Aider adds the writes once more), so the fresh input is
//!   `sent` less both. Its banner names
//!   the model it works with once its aliases are resolved: `Main model: gpt-4o with diff edit
//!   format` for `--model 4o`.

use std::sync::LazyLock;

use regex::Regex;
use serde_json::Value as Json;

use super::Usage;

/// What a `codex exec --json` run printed.
#[derive(Debug, Default, PartialEq)]
pub(super) struct CodexRun {
    /// The text of the last `agent_message` item.
    pub(super) last_message: Option<String>,
    pub(super) usage: Option<Usage>,
}

/// The Codex events of `output`, when it holds any (`thread.started`, `turn.*`, `item.*`).
pub(super) fn find_codex_run(output: &str) -> Option<CodexRun> {
    let mut run = CodexRun::default();
    let mut seen = false;
    for line in output
        .lines()
        .map(str::trim)
        .filter(|line| line.starts_with('{'))
    {
        let Ok(event) = serde_json::from_str::<Json>(line) else {
            continue;
        };
        let kind = event.get("type").and_then(Json::as_str).unwrap_or_default();
        match kind {
            "thread.started" | "turn.started" | "turn.failed" | "item.started" | "item.updated" => {
                seen = true;
            }
            "item.completed" => {
                seen = true;
                let item = event.get("item");
                let item_type = item
                    .and_then(|item| item.get("type").or_else(|| item.get("item_type")))
                    .and_then(Json::as_str);
                if item_type == Some("agent_message")
                    && let Some(text) = item
                        .and_then(|item| item.get("text"))
                        .and_then(Json::as_str)
                {
                    run.last_message = Some(text.to_owned());
                }
            }
            "turn.completed" => {
                seen = true;
                add_turn(run.usage.get_or_insert_with(Usage::default), &event);
            }
            _ => {}
        }
    }
    seen.then_some(run)
}

/// Adds the usage of a Codex `turn.completed` event to `total`: its `input_tokens` include
/// the `cached_input_tokens`.
pub(super) fn add_turn(total: &mut Usage, event: &Json) {
    let usage = event.get("usage");
    let tokens = |key: &str| {
        usage
            .and_then(|usage| usage.get(key))
            .and_then(Json::as_u64)
            .unwrap_or(0)
    };
    let cached = tokens("cached_input_tokens");
    total.input_tokens += tokens("input_tokens").saturating_sub(cached);
    total.cache_read_tokens += cached;
    total.output_tokens += tokens("output_tokens");
}

/// The usage of an Aider run: its `Tokens: …` lines summed, and the session cost of the last
/// one (Aider's session is this one invocation). Words may be parted by any white space: Aider
/// puts the cost on the next line when it names cache writes and hits, and wraps long lines.
pub(super) fn aider_usage(output: &str) -> Option<Usage> {
    static TOKENS: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(
            r"Tokens:\s+([\d.]+[kM]?)\s+sent(?:,\s+([\d.]+[kM]?)\s+cache\s+write)?(?:,\s+([\d.]+[kM]?)\s+cache\s+hit)?,\s+([\d.]+[kM]?)\s+received\.(?:\s+Cost:\s+\$([\d.]+)\s+message,\s+\$([\d.]+)\s+session\.)?",
        )
        .expect("the Aider token pattern is a valid regex")
    });
    let mut usage: Option<Usage> = None;
    for captures in TOKENS.captures_iter(output) {
        let figure = |index: usize| captures.get(index).map_or(0, |found| count(found.as_str()));
        let total = usage.get_or_insert_with(Usage::default);
        let (sent, written, hit) = (figure(1), figure(2), figure(3));
        total.input_tokens += sent.saturating_sub(written).saturating_sub(hit);
        total.cache_write_tokens += written;
        total.cache_read_tokens += hit;
        total.output_tokens += figure(4);
        if let Some(session) = captures
            .get(6)
            .and_then(|found| found.as_str().parse().ok())
        {
            total.cost_usd = Some(session);
        }
    }
    usage
}

/// The model Aider says it works with: its banner's `Main model: <name> with <format> edit
/// format` line (`Model: …` when the weak model is the main one), printed before any answer of
/// the model, with Aider's aliases (`4o`, `sonnet`, `flash`) already resolved.
pub(super) fn aider_model(output: &str) -> Option<String> {
    output.lines().find_map(|line| {
        let rest = line
            .strip_prefix("Main model: ")
            .or_else(|| line.strip_prefix("Model: "))?;
        let (model, format) = rest.split_once(" with ")?;
        let named = !model.is_empty() && !model.contains(char::is_whitespace);
        (named && format.contains(" edit format")).then(|| model.to_owned())
    })
}

/// A token figure as Aider prints it: `331`, `3.2k`, `12k`, `1.1M`.
fn count(text: &str) -> u64 {
    let (number, scale) = match text.strip_suffix('k') {
        Some(number) => (number, 1_000.0),
        None => match text.strip_suffix('M') {
            Some(number) => (number, 1_000_000.0),
            None => (text, 1.0),
        },
    };
    let value: f64 = number.parse().unwrap_or(0.0);
    #[expect(
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        reason = "a token figure is a small non-negative number; rounding is what Aider did"
    )]
    let rounded = (value * scale).round() as u64;
    rounded
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codex_events_give_the_last_message_and_the_usage() {
        let events = [
            r#"{"type":"thread.started","thread_id":"0199a213-81c0-7800-8aa1-bbab2a035a53"}"#,
            r#"{"type":"turn.started"}"#,
            r#"{"type":"item.completed","item":{"id":"item_0","type":"reasoning","text":"**Reading the tests**"}}"#,
            r##"{"type":"item.completed","item":{"id":"item_1","type":"command_execution","command":"bash -lc 'npm test'","aggregated_output":"# fail 1\n","exit_code":1,"status":"completed"}}"##,
            r#"{"type":"item.completed","item":{"id":"item_2","type":"agent_message","text":"First answer."}}"#,
            r#"{"type":"item.completed","item":{"id":"item_3","type":"agent_message","text":"Done.\n---PRP_PHASE_STATUS---\nEXIT_SIGNAL: true\n---END_PRP_PHASE_STATUS---"}}"#,
            r#"{"type":"turn.completed","usage":{"input_tokens":24763,"cached_input_tokens":24448,"output_tokens":122}}"#,
        ];
        let run = find_codex_run(&events.join("\n")).expect("codex events");
        assert!(
            run.last_message
                .as_deref()
                .is_some_and(|text| text.starts_with("Done.")),
            "{run:?}"
        );
        assert_eq!(
            run.usage,
            Some(Usage {
                input_tokens: 315,
                cache_write_tokens: 0,
                cache_read_tokens: 24448,
                output_tokens: 122,
                cost_usd: None,
            })
        );
        assert_eq!(find_codex_run("plain text\n{\"type\":\"result\"}\n"), None);
    }

    #[test]
    fn aider_token_lines_are_summed_and_the_session_cost_kept() {
        let output = "Aider v0.86.1\n\
            Main model: anthropic/claude-sonnet-4-5 with diff edit format, infinite output\n\
            Tokens: 3.2k sent, 331 received. Cost: $0.01 message, $0.01 session.\n\
            Applied edit to src/words.js\n\
            Tokens: 1.1M sent, 2.1k cache write, 1.1M cache hit, 1.5k received. Cost: $0.05 message, $0.06 session.\n";
        assert_eq!(
            aider_usage(output),
            Some(Usage {
                input_tokens: 3_200,
                cache_write_tokens: 2_100,
                cache_read_tokens: 1_100_000,
                output_tokens: 1_831,
                cost_usd: Some(0.06),
            })
        );
        assert_eq!(aider_usage("no usage here\n"), None);
    }

    /// Aider 0.86.2's own lines: with cache writes and hits the cost is on a line of its own,
    /// and a line longer than the terminal is wrapped.
    #[test]
    fn aider_cost_on_its_own_line_or_wrapped_is_read() {
        let cached = "Tokens: 14k sent, 2.1k cache write, 11k cache hit, 1.5k received.\n\
            Cost: $0.03 message, $0.03 session.\n";
        assert_eq!(
            aider_usage(cached),
            Some(Usage {
                input_tokens: 900,
                cache_write_tokens: 2_100,
                cache_read_tokens: 11_000,
                output_tokens: 1_500,
                cost_usd: Some(0.03),
            })
        );
        let wrapped = "Tokens: 12k sent, 2.1k cache write, 1.5k received. Cost: $0.0123 message, $0.0456\n\
            session.\n";
        let usage = aider_usage(wrapped).expect("usage");
        assert_eq!(usage.cost_usd, Some(0.0456));
        assert_eq!(usage.input_tokens, 9_900);
    }

    #[test]
    fn aider_names_its_main_model_in_its_banner() {
        let banner = "Aider v0.86.2\n\
            Main model: gpt-4o with diff edit format\n\
            Weak model: gpt-4o-mini\n\
            Git repo: .git with 8 files\n";
        assert_eq!(aider_model(banner).as_deref(), Some("gpt-4o"));
        let thinking = "Main model: anthropic/claude-sonnet-4-20250514 with diff edit format, infinite output\n";
        assert_eq!(
            aider_model(thinking).as_deref(),
            Some("anthropic/claude-sonnet-4-20250514")
        );
        assert_eq!(
            aider_model("Model: ollama/qwen2.5-coder with whole edit format\n").as_deref(),
            Some("ollama/qwen2.5-coder")
        );
        assert_eq!(aider_model("The Main model: is not named here\n"), None);
        assert_eq!(aider_model("Model: a guess with no format\n"), None);
        assert_eq!(aider_model("Weak model: gpt-4o-mini\n"), None);
    }
}
