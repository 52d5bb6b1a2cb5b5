//! An agent CLI that cannot reach its model and waits for it instead of failing. Codex CLI
//! (0.171) pointed at an endpoint that refuses connections or does not resolve retries five
//! times, falls back from its socket to plain HTTPS, then prints `Reconnecting... waiting for network
//! (…)` with an ever longer pause and never exits: left alone it waits until the agent's
//! timeout, 30 minutes (`tests/fixtures/agents/codex-0.171-closed-port.log`). When the CLI
//! has not heard from its model earlier in the same call, that line says the endpoint it is
//! pointed at cannot be reached, which no retry fixes; prpd stops the agent there
//! (`live.rs`) and escalates naming the line. Once the model has answered in the call, the
//! same line means the network went away mid-work: Codex resumes when it returns, so it is left
//! to wait, within the agent's timeout.

use std::sync::LazyLock;

use regex::Regex;
use serde_json::Value as Json;

/// The line of a CLI that waits for a network it cannot reach.
const WAITING: &str = r"^Reconnecting\.\.\. waiting for network";

/// Reads an agent's output line by line, as it is written or once it is complete.
#[derive(Debug, Default)]
pub(super) struct Unreachable {
    /// Whether the model has answered in this call (a Codex event other than an error).
    answered: bool,
}

impl Unreachable {
    /// Reads the next line of output; returns what it says when it is the CLI waiting for a
    /// network it has not reached in this call.
    pub(super) fn read(&mut self, line: &str) -> Option<String> {
        static WAITING_LINE: LazyLock<Regex> = LazyLock::new(|| {
            Regex::new(WAITING)
                .unwrap_or_else(|error| unreachable!("the waiting pattern compiles: {error}"))
        });
        // Only Codex's own top-level error event counts: the same words inside what a tool
        // call printed (another CLI's transcript, a test's output) are someone else's.
        let event = codex_event(line.trim())?;
        if model_answered(&event) {
            self.answered = true;
        }
        let message = event
            .get("message")
            .and_then(Json::as_str)
            .filter(|_| event.get("type").and_then(Json::as_str) == Some("error"))?;
        (!self.answered && WAITING_LINE.is_match(message)).then(|| message.to_owned())
    }
}

/// The last line of a finished run's `output` that says the CLI was waiting for a network it
/// never reached in the call.
pub(super) fn in_output(output: &str) -> Option<String> {
    let mut reader = Unreachable::default();
    output.lines().filter_map(|line| reader.read(line)).last()
}

/// The message of a Codex error event (`{"type":"error","message":…}`, `turn.failed`'s
/// `error.message`, an `error` item's `message`), the words a person reads.
pub(super) fn event_message(line: &str) -> Option<String> {
    let event = codex_event(line)?;
    [
        event.get("message"),
        event.get("error").and_then(|error| error.get("message")),
        event.get("item").and_then(|item| item.get("message")),
    ]
    .into_iter()
    .flatten()
    .find_map(Json::as_str)
    .map(str::to_owned)
}

fn codex_event(line: &str) -> Option<Json> {
    if !line.starts_with('{') {
        return None;
    }
    let event: Json = serde_json::from_str(line).ok()?;
    event.get("type")?.as_str()?;
    Some(event)
}

/// Whether a Codex event shows the model at work: a finished turn, or an item (a message,
/// reasoning, a command) that is not an error.
fn model_answered(event: &Json) -> bool {
    match event.get("type").and_then(Json::as_str) {
        Some("turn.completed") => true,
        Some("item.started" | "item.updated" | "item.completed") => {
            let item_type = event
                .get("item")
                .and_then(|item| item.get("type").or_else(|| item.get("item_type")))
                .and_then(Json::as_str);
            item_type.is_some_and(|kind| kind != "error")
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(name: &str) -> String {
        let path = format!(
            "{}/../../tests/fixtures/agents/{name}",
            env!("CARGO_MANIFEST_DIR")
        );
        std::fs::read_to_string(&path).unwrap_or_else(|error| panic!("{path}: {error}"))
    }

    #[test]
    fn codex_waiting_for_a_network_it_never_reached_is_found_in_its_real_output() {
        for name in [
            "codex-0.171-closed-port.log",
            "codex-0.171-openai-base-url-ignored.log",
        ] {
            let output = fixture(name);
            assert_eq!(
                in_output(&output).as_deref(),
                Some(
                    "Reconnecting... waiting for network (Connection failed: error sending request)"
                ),
                "{name}"
            );
            let mut reader = Unreachable::default();
            let first = output
                .lines()
                .position(|line| reader.read(line).is_some())
                .expect("a waiting line");
            assert!(
                output
                    .lines()
                    .nth(first)
                    .is_some_and(|line| line.contains("waiting for network")),
                "{name}: the first waiting line stops the agent, not an earlier retry"
            );
        }
    }

    #[test]
    fn refusals_and_outages_are_not_waiting() {
        for name in [
            "codex-0.171-401-invalid-key.log",
            "codex-0.171-404-unknown-model.log",
            "codex-0.171-400-bad-request.log",
            "codex-0.171-500-outage.log",
        ] {
            assert_eq!(in_output(&fixture(name)), None, "{name}");
        }
    }

    #[test]
    fn a_model_that_answered_earlier_in_the_call_is_waited_for() {
        let output = "{\"type\":\"thread.started\",\"thread_id\":\"t\"}\n\
                      {\"type\":\"item.completed\",\"item\":{\"id\":\"item_0\",\"type\":\"error\",\"message\":\"Model metadata for `m` not found.\"}}\n\
                      {\"type\":\"item.completed\",\"item\":{\"id\":\"item_1\",\"type\":\"command_execution\",\"command\":\"npm test\"}}\n\
                      {\"type\":\"error\",\"message\":\"Reconnecting... waiting for network (Connection failed: error sending request)\"}\n";
        assert_eq!(in_output(output), None);
        let before = output.lines().take(2).collect::<Vec<_>>().join("\n");
        let waiting = output.lines().last().unwrap_or_default();
        assert!(in_output(&format!("{before}\n{waiting}\n")).is_some());
    }

    #[test]
    fn the_message_of_a_codex_error_event_is_read() {
        assert_eq!(
            event_message(
                r#"{"type":"turn.failed","error":{"message":"unexpected status 401 Unauthorized"}}"#
            )
            .as_deref(),
            Some("unexpected status 401 Unauthorized")
        );
        assert_eq!(event_message("ERROR: plain text"), None);
    }
}
