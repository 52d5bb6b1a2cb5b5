//! `[run] setup`: what a new worktree needs before the first agent can work in it. A worktree
//! holds the tracked files only — no `node_modules/`, no virtual environment — so the commands
//! of `[run] setup` (`npm ci`, `uv sync`, …) run once, in the worktree, in the environment of
//! the checks (prpd's measurement environment: no secrets, a fresh `HOME` with the real tool
//! caches), each with the checks' timeout and its log in the run's folder. A command that fails
//! escalates the run naming it; `prpd resume` runs the setup again. What the commands change in
//! the tree is recorded as prpd's own step, so it never ships as the agents' work.

use crate::machine::Event;
use prpd_base::process::{self, Spec, Termination};

use super::{DriveError, Driver};

/// How many lines of a failed command's output the escalation quotes.
const QUOTED_LINES: usize = 15;

impl Driver {
    /// Runs `[run] setup` in the run's worktree, once; the event that stops the run when a
    /// command fails.
    pub(super) async fn set_up(&mut self) -> Result<Option<Event>, DriveError> {
        if self.record.setup_done {
            return Ok(None);
        }
        let commands = match &self.record.worktree {
            Some(_) => self.context.config.setup.clone(),
            None => Vec::new(),
        };
        for (index, command) in commands.iter().enumerate() {
            let log = self
                .run_dir()
                .join("setup")
                .join(format!("{}.log", index + 1));
            let mut spec = Spec::measurement(command, &self.context.repo, &log);
            spec.timeout = self.context.config.qa.check_timeout;
            spec.grace = self.context.config.qa.grace;
            tracing::info!(%command, "[run] setup");
            let outcome = process::run(spec).await?;
            if !outcome.success() {
                let tail: Vec<&str> = outcome.tail.lines().rev().take(QUOTED_LINES).collect();
                let tail: Vec<&str> = tail.into_iter().rev().collect();
                return Ok(Some(Event::SetupFailed {
                    command: command.clone(),
                    message: format!(
                        "{}; the last lines of its output:\n{}\n(the whole log: {})",
                        ended(outcome.termination),
                        tail.join("\n"),
                        log.display()
                    ),
                }));
            }
        }
        if !commands.is_empty() {
            self.record_tree("after [run] setup")?;
        }
        self.record.setup_done = true;
        self.save()?;
        Ok(None)
    }
}

/// How a setup command ended, in words.
fn ended(termination: Termination) -> String {
    match termination {
        Termination::Exited(code) => format!("it exited with code {code}"),
        Termination::Signaled(signal) => format!("a signal ({signal}) ended it"),
        Termination::Stopped => "prpd stopped it".to_owned(),
        Termination::TimedOut => {
            "it ran past the checks' timeout (`[qa] check_timeout`)".to_owned()
        }
    }
}
