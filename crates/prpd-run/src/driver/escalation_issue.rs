//! `[ship] issue_on_escalation`: when a run escalates, the escalation report also goes to the
//! repository's GitHub issues, so it reaches the people who watch the repository and not only
//! the run directory. Opened once per escalation (the record keeps it until a human resumes);
//! never in a dry run or without a token; a failure to open it is said in the log and at the end
//! of the report, and never changes the escalation itself.

use crate::machine::EscalationReason;
use crate::record::Delivery;
use prpd_base::files;
use prpd_base::secret::Secret;

use super::{DriveError, Driver};

/// GitHub's issue titles are cut here (it allows 256 characters).
const MAX_TITLE_CHARS: usize = 200;

impl Driver {
    /// Opens the issue for the escalation just reported (`report` is its text), when `[ship]`
    /// asks for one.
    pub(super) async fn open_escalation_issue(
        &mut self,
        reason: &EscalationReason,
        report: &str,
    ) -> Result<(), DriveError> {
        let config = self.context.config.ship.clone();
        if !config.issue_on_escalation
            || self.record.ship.delivery == Delivery::DryRun
            || self.record.escalation_issue.is_some()
        {
            return Ok(());
        }
        let Some(token) = Secret::from_env(&config.token_env) else {
            tracing::warn!(
                "[ship] issue_on_escalation is on, but ${} holds no token: no issue opened",
                config.token_env
            );
            return Ok(());
        };
        let Some(path) = self.record.escalation_report.clone() else {
            return Ok(());
        };
        let title: String = format!(
            "prpd: run {} escalated: {}",
            self.record.run_id,
            self.context.prp.title.trim()
        )
        .chars()
        .take(MAX_TITLE_CHARS)
        .collect();
        let opened = match self.github(&token).await {
            Ok(github) => github
                .open_issue(&title, report, &config.labels)
                .await
                .map_err(|error| error.to_string()),
            Err(message) => Err(message),
        };
        match opened {
            Ok(issue) => {
                tracing::info!(number = issue.number, url = %issue.html_url, %reason, "escalation issue opened");
                self.record.escalation_issue = Some(issue);
                self.save()?;
                self.write_summary()
            }
            Err(message) => {
                let message = token.redact(&message);
                tracing::warn!(%message, "could not open the escalation issue");
                let note = format!(
                    "\nprpd could not open the escalation issue (`[ship] issue_on_escalation`): {message}\n"
                );
                files::append(&path, &note).map_err(|source| DriveError::Write { path, source })
            }
        }
    }
}
