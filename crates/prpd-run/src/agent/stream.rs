//! Usage read from an agent's output while it runs, line by line as the CLI streams it, so that
//! a budget can stop the call within one usage report instead of after its turn:
//!
//! - Claude Code with `--output-format stream-json` prints each assistant message with its
//!   `usage` (the same message id again for each of its content blocks: the last one counts)
//!   and the model that wrote it, then the result object with the totals and the cost.
//! - `codex exec --json` prints `turn.completed` with the turn's usage.
//! - Aider prints `Tokens: … Cost: $… message, $… session.` after each model reply, the cost
//!   sometimes on the next line.
//!
//! The figures at the end of the call are read again from the whole output (`classify.rs`);
//! these are only what was known so far.

use serde_json::Value as Json;

use super::Usage;
use super::formats::{add_turn, aider_usage};
use super::output::usage_of;

/// The longest line kept while waiting for its end (a Claude Code tool result quoting a large
/// file is a few MiB); memory stays bounded whatever the agent prints.
const MAX_LINE: usize = 16 * 1024 * 1024;

/// What the output said of usage so far.
#[derive(Debug, Default)]
pub(super) struct StreamedUsage {
    /// The line not yet ended.
    partial: Vec<u8>,
    /// Claude Code's assistant messages: the last usage of each message id.
    messages: Vec<(String, Usage)>,
    /// Claude Code's result object: the call's totals with its cost.
    result: Option<Usage>,
    codex: Option<Usage>,
    aider: Option<Usage>,
    /// An Aider `Tokens:` line without its cost yet, which may come on the next line.
    aider_line: Option<String>,
    model: Option<String>,
}

impl StreamedUsage {
    /// Reads the lines `chunk` completes.
    pub(super) fn push(&mut self, chunk: &[u8]) {
        let mut rest = chunk;
        while let Some(end) = rest.iter().position(|byte| *byte == b'\n') {
            self.partial.extend_from_slice(&rest[..end]);
            let line = String::from_utf8_lossy(&std::mem::take(&mut self.partial)).into_owned();
            self.line(line.trim_end_matches('\r'));
            rest = &rest[end + 1..];
        }
        self.partial.extend_from_slice(rest);
        if self.partial.len() > MAX_LINE {
            // No usage report is this long: output without line ends is not one.
            self.partial.clear();
        }
    }

    /// The usage so far: the result's totals once there are any, else the sum of what was
    /// reported.
    pub(super) fn usage(&self) -> Option<Usage> {
        if let Some(result) = self.result {
            return Some(result);
        }
        if !self.messages.is_empty() {
            return Some(
                self.messages
                    .iter()
                    .fold(Usage::default(), |total, (_, usage)| sum(total, *usage)),
            );
        }
        let pending = self
            .aider_line
            .as_deref()
            .and_then(aider_usage)
            .map(|usage| sum(self.aider.unwrap_or_default(), usage));
        self.codex.or(pending).or(self.aider)
    }

    /// The model the output named (Claude Code's messages).
    pub(super) fn model(&self) -> Option<&str> {
        self.model.as_deref()
    }

    fn line(&mut self, line: &str) {
        let trimmed = line.trim();
        if trimmed.starts_with('{') {
            if let Ok(Json::Object(event)) = serde_json::from_str::<Json>(trimmed) {
                self.event(&event);
            }
            return;
        }
        if let Some(pending) = self.aider_line.take() {
            if trimmed.starts_with("Tokens:") {
                self.add_aider(&pending);
            } else {
                self.add_aider(&format!("{pending}\n{trimmed}"));
                return;
            }
        }
        if trimmed.starts_with("Tokens:") {
            if trimmed.contains("Cost:") {
                self.add_aider(trimmed);
            } else {
                self.aider_line = Some(trimmed.to_owned());
            }
        }
    }

    fn event(&mut self, event: &serde_json::Map<String, Json>) {
        match event.get("type").and_then(Json::as_str) {
            Some("assistant") => {
                let Some(Json::Object(message)) = event.get("message") else {
                    return;
                };
                if let Some(model) = message.get("model").and_then(Json::as_str) {
                    self.model = Some(model.to_owned());
                }
                let Some(usage) = usage_of(message) else {
                    return;
                };
                let id = message
                    .get("id")
                    .and_then(Json::as_str)
                    .unwrap_or_default()
                    .to_owned();
                match self.messages.iter_mut().find(|(seen, _)| *seen == id) {
                    Some((_, last)) => *last = usage,
                    None => self.messages.push((id, usage)),
                }
            }
            Some("result") => self.result = usage_of(event),
            Some("turn.completed") => {
                add_turn(
                    self.codex.get_or_insert_with(Usage::default),
                    &Json::Object(event.clone()),
                );
            }
            _ => {}
        }
    }

    fn add_aider(&mut self, text: &str) {
        if let Some(usage) = aider_usage(text) {
            let total = sum(self.aider.unwrap_or_default(), usage);
            self.aider = Some(total);
        }
    }
}

/// `total` and `more` added, the cost being the later one's when it has one (Aider reports
/// the session's cost so far) and summed otherwise.
fn sum(total: Usage, more: Usage) -> Usage {
    Usage {
        input_tokens: total.input_tokens + more.input_tokens,
        cache_write_tokens: total.cache_write_tokens + more.cache_write_tokens,
        cache_read_tokens: total.cache_read_tokens + more.cache_read_tokens,
        output_tokens: total.output_tokens + more.output_tokens,
        cost_usd: more.cost_usd.or(total.cost_usd),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn streamed(chunks: &[&str]) -> StreamedUsage {
        let mut stream = StreamedUsage::default();
        for chunk in chunks {
            stream.push(chunk.as_bytes());
        }
        stream
    }

    #[test]
    fn claude_messages_count_once_each_and_the_result_replaces_them() {
        let first = r#"{"type":"assistant","message":{"id":"msg_1","model":"claude-sonnet-4-5-20250929","usage":{"input_tokens":10,"cache_creation_input_tokens":2000,"cache_read_input_tokens":0,"output_tokens":40}}}"#;
        let again = r#"{"type":"assistant","message":{"id":"msg_1","model":"claude-sonnet-4-5-20250929","usage":{"input_tokens":10,"cache_creation_input_tokens":2000,"cache_read_input_tokens":0,"output_tokens":90}}}"#;
        let second = r#"{"type":"assistant","message":{"id":"msg_2","model":"claude-sonnet-4-5-20250929","usage":{"input_tokens":5,"cache_creation_input_tokens":0,"cache_read_input_tokens":2000,"output_tokens":10}}}"#;
        // A line may arrive in pieces.
        let (head, tail) = second.split_at(40);
        let stream = streamed(&[
            first,
            "\n",
            again,
            "\n{\"type\":\"user\"}\n",
            head,
            tail,
            "\n",
        ]);
        let usage = stream.usage().expect("usage");
        assert_eq!(
            (
                usage.input_tokens,
                usage.cache_write_tokens,
                usage.cache_read_tokens,
                usage.output_tokens,
                usage.cost_usd
            ),
            (15, 2000, 2000, 100, None)
        );
        assert_eq!(stream.model(), Some("claude-sonnet-4-5-20250929"));
        let result = r#"{"type":"result","subtype":"success","total_cost_usd":0.0123,"usage":{"input_tokens":15,"output_tokens":120}}"#;
        let mut stream = stream;
        stream.push(format!("{result}\n").as_bytes());
        let usage = stream.usage().expect("usage");
        assert_eq!((usage.output_tokens, usage.cost_usd), (120, Some(0.0123)));
    }

    #[test]
    fn codex_turns_and_aider_replies_add_up_as_they_come() {
        let codex = streamed(&[
            "{\"type\":\"turn.completed\",\"usage\":{\"input_tokens\":1000,\"cached_input_tokens\":800,\"output_tokens\":50}}\n",
        ]);
        let usage = codex.usage().expect("codex");
        assert_eq!((usage.input_tokens, usage.cache_read_tokens), (200, 800));

        let aider = streamed(&[
            "Main model: gpt-4o with diff edit format\n",
            "Tokens: 3.2k sent, 331 received. Cost: $0.01 message, $0.01 session.\n",
            "Tokens: 4.0k sent, 1.0k cache write, 2.0k cache hit, 100 received.\n",
        ]);
        let usage = aider.usage().expect("aider");
        assert_eq!(usage.output_tokens, 431, "the pending line counts already");
        assert_eq!(usage.cost_usd, Some(0.01));
        let mut aider = aider;
        aider.push(b"Cost: $0.02 message, $0.03 session.\n");
        let usage = aider.usage().expect("aider");
        assert_eq!(
            (
                usage.input_tokens,
                usage.cache_write_tokens,
                usage.output_tokens,
                usage.cost_usd
            ),
            (3200 + 1000, 1000, 431, Some(0.03))
        );
    }

    #[test]
    fn output_without_usage_has_none() {
        assert_eq!(
            streamed(&["hello\n", "{\"type\":\"user\"}\n"]).usage(),
            None
        );
    }
}
