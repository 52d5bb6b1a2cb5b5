//! Reading what an agent wrote: the end of its output log and, in it, the result object Claude
//! Code prints with `--output-format json` or `stream-json`. It stands apart from starting the
//! agent because it knows the agents' output formats, and apart from the classification of the
//! run because it only says what the output holds, not what it means.

use std::io::SeekFrom;
use std::path::Path;

use serde_json::{Map, Value as Json};
use tokio::io::{AsyncReadExt, AsyncSeekExt};

use prpd_base::process::Outcome;
use prpd_base::status_block::{Found, START_DELIMITER, StatusBlock, Value, find_last};

use super::Usage;

/// How much of the end of the output log is parsed. The block and Claude's result object are at
/// the end; the log itself may hold up to 64 MiB.
const PARSE_WINDOW: u64 = 4 * 1024 * 1024;

/// The end of the output: the last [`PARSE_WINDOW`] bytes of the log, or the in-memory tail
/// when the log missed the end of the output (it was capped) or cannot be read.
pub(super) async fn read_output(outcome: &Outcome) -> String {
    if outcome.log_truncated {
        return outcome.tail.clone();
    }
    match read_end(&outcome.log_path, PARSE_WINDOW).await {
        Ok(text) => text,
        Err(error) => {
            tracing::warn!(path = %outcome.log_path.display(), %error, "failed to read the agent's output log; using its tail");
            outcome.tail.clone()
        }
    }
}

/// The last `window` bytes of a file, starting at a line boundary when the file is longer.
async fn read_end(path: &Path, window: u64) -> std::io::Result<String> {
    let mut file = tokio::fs::File::open(path).await?;
    let start = file.metadata().await?.len().saturating_sub(window);
    file.seek(SeekFrom::Start(start)).await?;
    let mut bytes = Vec::new();
    file.take(window).read_to_end(&mut bytes).await?;
    if start > 0
        && let Some(newline) = bytes.iter().position(|byte| *byte == b'\n')
    {
        bytes.drain(..=newline);
    }
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

/// What a Claude Code result object says.
#[derive(Debug)]
pub(super) struct ClaudeResult {
    pub(super) text: String,
    pub(super) is_error: bool,
    pub(super) usage: Option<Usage>,
    /// The refused tools, when the object carries `permission_denials` at all.
    pub(super) permission_denials: Option<Vec<String>>,
    /// `errors`, and `subtype` when it names an error.
    pub(super) errors: Vec<String>,
    pub(super) api_error_status: Option<u64>,
    /// The model that did the work, from `modelUsage`: the one with the most output tokens
    /// (Claude Code also calls a small model for side tasks such as titles).
    pub(super) model: Option<String>,
}

/// The result object: the last line that is a JSON object with `"type": "result"` (`json` and
/// `stream-json` both end with it), else the whole output as one such object (pretty-printed).
pub(super) fn find_claude_result(output: &str) -> Option<ClaudeResult> {
    let parse = |text: &str| -> Option<Map<String, Json>> {
        match serde_json::from_str::<Json>(text).ok()? {
            Json::Object(object) if object.get("type").and_then(Json::as_str) == Some("result") => {
                Some(object)
            }
            _ => None,
        }
    };
    let object = output
        .lines()
        .rev()
        .map(str::trim)
        .filter(|line| line.starts_with('{'))
        .find_map(parse)
        .or_else(|| parse(output.trim()))?;

    let strings = |key: &str| -> Vec<String> {
        object
            .get(key)
            .and_then(Json::as_array)
            .map(|items| {
                items
                    .iter()
                    .filter_map(|item| item.as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default()
    };
    let mut errors = strings("errors");
    if let Some(subtype) = object.get("subtype").and_then(Json::as_str)
        && subtype.starts_with("error")
    {
        errors.push(subtype.to_owned());
    }
    let permission_denials = object
        .get("permission_denials")
        .and_then(Json::as_array)
        .map(|denials| denials.iter().map(describe_denial).collect());
    Some(ClaudeResult {
        text: object
            .get("result")
            .and_then(Json::as_str)
            .unwrap_or_default()
            .to_owned(),
        is_error: object.get("is_error").and_then(Json::as_bool) == Some(true),
        usage: usage_of(&object),
        permission_denials,
        errors,
        api_error_status: object.get("api_error_status").and_then(Json::as_u64),
        model: main_model(&object),
    })
}

fn main_model(object: &Map<String, Json>) -> Option<String> {
    let models = object.get("modelUsage").and_then(Json::as_object)?;
    models
        .iter()
        .max_by_key(|(_, usage)| {
            usage
                .get("outputTokens")
                .and_then(Json::as_u64)
                .unwrap_or(0)
        })
        .map(|(name, _)| name.clone())
}

/// One refused tool call as Claude Code's rules write it: `Bash(cargo test)`, `Write(src/a.rs)`,
/// or the tool's name alone.
fn describe_denial(denial: &Json) -> String {
    let tool = denial
        .get("tool_name")
        .and_then(Json::as_str)
        .unwrap_or("a tool");
    let input = denial.get("tool_input");
    let detail = ["command", "file_path", "path", "url", "pattern"]
        .iter()
        .find_map(|key| {
            input
                .and_then(|input| input.get(key))
                .and_then(Json::as_str)
        });
    match detail {
        Some(detail) => format!("{tool}({})", detail.trim()),
        None => tool.to_owned(),
    }
}

/// The last status block of `answer` that an agent filled in: a block whose values are still
/// the prompt's template placeholders (`<true|false>`, `<integer>`) is an echo of the prompt
/// (Codex prints the whole prompt on stderr), not the agent's word, and an earlier block is
/// looked for instead.
pub(super) fn find_answer_block(answer: &str) -> Found {
    let mut text = answer;
    loop {
        let found = find_last(text);
        let Found::Block(block) = &found else {
            return found;
        };
        if !is_template(block) {
            return found;
        }
        match text.rfind(START_DELIMITER) {
            Some(start) => text = &text[..start],
            None => return Found::None,
        }
    }
}

/// Whether a block holds a template placeholder: a value written `<…>` (`<true|false>`,
/// `<integer>`, `<ISO-8601 time, …>`).
fn is_template(block: &StatusBlock) -> bool {
    fn placeholder(value: &Value) -> bool {
        match value {
            Value::Scalar(text) => {
                let text = text.trim();
                text.len() > 2 && text.starts_with('<') && text.ends_with('>')
            }
            Value::Map(fields) => fields.iter().any(|(_, value)| placeholder(value)),
            Value::List(items) => items.iter().any(|item| {
                let item = item.trim();
                item.len() > 2 && item.starts_with('<') && item.ends_with('>')
            }),
        }
    }
    block.fields().iter().any(|(_, value)| placeholder(value))
}

/// The usage and cost of a Claude Code object that carries them (a result object; an
/// assistant message's `message`).
pub(super) fn usage_of(object: &Map<String, Json>) -> Option<Usage> {
    let usage = object.get("usage").and_then(Json::as_object);
    let cost_usd = object
        .get("total_cost_usd")
        .or_else(|| object.get("cost_usd"))
        .and_then(Json::as_f64);
    if usage.is_none() && cost_usd.is_none() {
        return None;
    }
    let tokens = |key: &str| {
        usage
            .and_then(|usage| usage.get(key))
            .and_then(Json::as_u64)
            .unwrap_or(0)
    };
    Some(Usage {
        input_tokens: tokens("input_tokens"),
        cache_write_tokens: tokens("cache_creation_input_tokens"),
        cache_read_tokens: tokens("cache_read_input_tokens"),
        output_tokens: tokens("output_tokens"),
        cost_usd,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const BLOCK: &str = "---PRP_PHASE_STATUS---\nPHASE: GREEN\nSTATUS: COMPLETE\nEXIT_SIGNAL: true\n---END_PRP_PHASE_STATUS---\n";

    #[tokio::test]
    async fn a_long_log_is_parsed_from_its_end() {
        let dir = tempfile::Builder::new()
            .prefix("prpd-agent-")
            .tempdir()
            .expect("temp dir");
        let path = dir.path().join("long.log");
        let filler = "x".repeat(1000) + "\n";
        std::fs::write(&path, filler.repeat(100) + BLOCK).expect("write");
        let end = read_end(&path, 5000).await.expect("read");
        assert!(
            end.starts_with('x') && end.ends_with(BLOCK),
            "starts at a line boundary"
        );
        assert!(end.len() <= 5000);
        assert_eq!(end.lines().next().map(str::len), Some(1000));
    }
}
