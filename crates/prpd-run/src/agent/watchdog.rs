//! Runs an agent while reading its output log as it grows, and stops it at once when a line
//! says it will get nowhere: a CLI waiting for a network it cannot reach (`unreachable.rs`)
//! would otherwise hold the iteration until the agent's timeout. It reads the file
//! `process::run` writes rather than the pipe, so the one module that starts processes stays the
//! one that drains them; the price is a poll, a few times a second, of a file prpd writes anyway.
//! Stopping is dropping the `process::run` future, whose guard kills the agent's process group.

use std::path::Path;
use std::time::{Duration, Instant};

use tokio::io::{AsyncReadExt, AsyncSeekExt};

use prpd_base::process::{self, Outcome, ProcessError, Spec, Termination};

use super::unreachable::Unreachable;

/// How often the log is read while the agent runs.
const POLL: Duration = Duration::from_millis(250);
/// The signal the drop guard of `process::run` kills a group with.
const SIGKILL: i32 = 9;
/// The longest line kept while waiting for its end; the waiting lines are far shorter.
const LINE_CAP: usize = 64 * 1024;

/// Runs `spec` like [`process::run`], stopping it at the first line that says it cannot reach
/// its model; the outcome of a stopped run is `Signaled(SIGKILL)`, its tail read from the log,
/// where the classifier finds the line again.
pub(super) async fn run(spec: Spec, tail_lines: usize) -> Result<Outcome, ProcessError> {
    let log_path = spec.log_path.clone();
    let started = Instant::now();
    let mut running = Box::pin(process::run(spec));
    let line = tokio::select! {
        outcome = &mut running => {
            return outcome;
        }
        line = first_unreachable_line(&log_path) => line,
    };
    drop(running);
    tracing::warn!(line = %line, "the agent cannot reach its model; stopped it");
    let text = tokio::fs::read(&log_path).await.unwrap_or_default();
    let text = String::from_utf8_lossy(&text);
    Ok(Outcome {
        termination: Termination::Signaled(SIGKILL),
        tail: prpd_base::files::last_lines(&text, tail_lines),
        duration: started.elapsed(),
        output_bytes: text.len() as u64,
        log_truncated: false,
        log_path,
    })
}

/// Reads the log at `path` as it grows until a line says the agent cannot reach its model.
async fn first_unreachable_line(path: &Path) -> String {
    let mut reader = Unreachable::default();
    let mut offset = 0u64;
    let mut pending: Vec<u8> = Vec::new();
    loop {
        tokio::time::sleep(POLL).await;
        let Ok(mut file) = tokio::fs::File::open(path).await else {
            continue;
        };
        if file.seek(std::io::SeekFrom::Start(offset)).await.is_err() {
            continue;
        }
        let mut fresh = Vec::new();
        let Ok(read) = file.read_to_end(&mut fresh).await else {
            continue;
        };
        offset += read as u64;
        pending.extend_from_slice(&fresh);
        while let Some(end) = pending.iter().position(|byte| *byte == b'\n') {
            let line: Vec<u8> = pending.drain(..=end).collect();
            if let Some(found) = reader.read(&String::from_utf8_lossy(&line)) {
                return found;
            }
        }
        if pending.len() > LINE_CAP {
            pending.clear();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Prints Codex's real lines for a closed port, then waits as Codex does.
    const WAITING_AGENT: &str = r#"printf '%s\n' '{"type":"thread.started","thread_id":"t"}' '{"type":"turn.started"}'
printf '%s\n' '{"type":"error","message":"Reconnecting... 5/5 (stream disconnected before completion: Connection refused (os error 111))"}'
sleep 1
printf '%s\n' '{"type":"error","message":"Reconnecting... waiting for network (Connection failed: error sending request)"}'
sleep 60
"#;

    #[tokio::test]
    async fn an_agent_waiting_for_a_network_it_never_reached_is_stopped_at_that_line() {
        let dir = tempfile::tempdir().expect("tempdir");
        let log = dir.path().join("output.log");
        let mut spec = Spec::shell(WAITING_AGENT, dir.path(), &log);
        spec.timeout = Duration::from_secs(120);
        let outcome = run(spec, 10).await.expect("run");
        assert!(
            outcome.duration < Duration::from_secs(20),
            "{:?}",
            outcome.duration
        );
        assert_eq!(outcome.termination, Termination::Signaled(SIGKILL));
        assert!(
            outcome
                .tail
                .ends_with("waiting for network (Connection failed: error sending request)\"}"),
            "{}",
            outcome.tail
        );
    }

    #[tokio::test]
    async fn an_agent_that_ends_by_itself_is_not_stopped() {
        let dir = tempfile::tempdir().expect("tempdir");
        let log = dir.path().join("output.log");
        let spec = Spec::shell("echo working; sleep 0.6; echo done", dir.path(), &log);
        let outcome = run(spec, 10).await.expect("run");
        assert_eq!(outcome.termination, Termination::Exited(0));
        assert_eq!(outcome.tail, "working\ndone");
    }
}
