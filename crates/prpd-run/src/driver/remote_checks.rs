//! SHIP's last step with `[ship] wait_for_checks = true` (seed 002's V5): wait for the remote
//! CI's checks of the pushed commit and take its word. Every check passed: shipped. One
//! failed: a QA REJECT, back to GREEN with the failed checks as feedback (the checks, as
//! Markdown, become the report that goes with it). Still pending at the timeout, or no check
//! at all: not a pass — the run escalates in SHIP, and `prpd resume` waits again.

use std::fmt::Write as _;

use prpd_base::secret::Secret;
use prpd_ship::github::{ChecksOutcome, GitHub, PollPolicy, RemoteCheck};

use super::ship::{Delivered, Stop};
use super::{Driver, write_text};

impl Driver {
    /// Waits for the checks of `commit` and says what they decide.
    pub(super) async fn await_remote_checks(
        &mut self,
        github: &GitHub,
        commit: &str,
        token: &Secret,
    ) -> Result<Delivered, Stop> {
        let config = self.context.config.ship.clone();
        let policy = PollPolicy::with_timeout(config.checks_timeout);
        tracing::info!(
            commit,
            timeout_seconds = config.checks_timeout.as_secs(),
            "SHIP: waiting for the remote checks"
        );
        let checks = github
            .wait_for_checks(commit, &policy)
            .await
            .map_err(|error| Stop::github(&error, "the pull request is open"))?;
        // The checks' words come from the CI: scrubbed like everything prpd writes.
        let markdown = token.redact(&checks.render_markdown());
        let path = self.run_dir().join(format!(
            "remote-checks-{}.md",
            self.record.ship.remote_checks.len() + 1
        ));
        write_text(&path, &markdown)?;
        self.record.ship.remote_checks.push(checks.clone());
        self.save()?;

        let failed = checks.failed();
        if !failed.is_empty() {
            let blocking = failed
                .iter()
                .map(|check| token.redact(&blocking_line(check)))
                .collect();
            tracing::warn!(path = %path.display(), "SHIP: remote checks failed; back to GREEN");
            self.record.last_qa_report = Some(path);
            self.record.ship.start_over();
            self.save()?;
            return Ok(Delivered::RemoteChecksFailed { blocking });
        }
        let short: String = commit.chars().take(7).collect();
        match checks.outcome {
            ChecksOutcome::Finished => {
                tracing::info!(
                    checks = checks.checks.len(),
                    "SHIP: every remote check passed"
                );
                Ok(Delivered::Shipped)
            }
            ChecksOutcome::TimedOut { waited } => {
                let pending: Vec<String> = checks
                    .pending()
                    .iter()
                    .map(|check| format!("`{}`", check.name))
                    .collect();
                Err(Stop::Failed(format!(
                    "the remote checks of {short} were still pending after {}s ({}); the pull \
                     request is open. Run `prpd resume` to wait again, or raise `[ship] \
                     checks_timeout` in prpd.toml (see {})",
                    waited.as_secs(),
                    pending.join(", "),
                    path.display()
                )))
            }
            ChecksOutcome::NoChecksReported { waited } => Err(Stop::Failed(format!(
                "no remote check reported on {short} within {}s: with `[ship] wait_for_checks = \
                 true` prpd ships only on the remote CI's word, and none came. Make sure CI runs \
                 on the pull request's commits (or set `wait_for_checks = false`), then run \
                 `prpd resume`",
                waited.as_secs()
            ))),
        }
    }
}

/// A failed check as a REJECT's blocking item: its name, GitHub's word and where to read more.
fn blocking_line(check: &RemoteCheck) -> String {
    let mut line = format!(
        "remote check `{}` failed: {}",
        check.name,
        check.conclusion.word()
    );
    if let Some(title) = check
        .title
        .as_deref()
        .filter(|title| !title.trim().is_empty())
    {
        let _ = write!(line, " — {}", title.trim());
    }
    if let Some(url) = &check.url {
        let _ = write!(line, " ({url})");
    }
    line
}
