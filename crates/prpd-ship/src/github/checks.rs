//! The remote CI's word on a commit, as prpd records it: each check run and commit status with
//! its conclusion, and how the wait for them ended. Pure: it reads GitHub's check-run and
//! status objects into [`RemoteCheck`]s, decides whether they are all finished, and renders
//! the Markdown for the run summary and for GREEN's feedback.
//!
//! A check passes only with `success`, `neutral` or `skipped` (a status only with `success`);
//! every other conclusion, an unknown one included, fails. A commit with no check and no status
//! at all is its own outcome ([`ChecksOutcome::NoChecksReported`]), never a pass.

use std::fmt::Write as _;
use std::time::Duration;

use serde::Deserialize;

/// One check run or commit status.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, Deserialize)]
pub struct RemoteCheck {
    pub name: String,
    pub source: CheckSource,
    pub conclusion: Conclusion,
    /// Where to read more: the check's details URL (the CI's page), or the status's target.
    pub url: Option<String>,
    /// The check run's output title, or the status's description.
    pub title: Option<String>,
    /// The check run's output summary.
    pub summary: Option<String>,
}

/// Which GitHub API reported a check.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CheckSource {
    /// The Checks API (GitHub Actions and apps).
    CheckRun,
    /// The commit status API (older CI integrations).
    Status,
}

/// Where a check stands, with GitHub's own word for it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, Deserialize)]
#[serde(tag = "state", content = "word", rename_all = "snake_case")]
pub enum Conclusion {
    /// Not finished: `queued`, `in_progress`, `waiting`, `pending`, …
    Pending(String),
    /// `success`, `neutral`, `skipped`.
    Passed(String),
    /// `failure`, `cancelled`, `timed_out`, `action_required`, `startup_failure`, `stale`,
    /// a status's `failure` or `error`, or a word prpd does not know.
    Failed(String),
}

impl Conclusion {
    /// GitHub's word.
    pub fn word(&self) -> &str {
        match self {
            Conclusion::Pending(word) | Conclusion::Passed(word) | Conclusion::Failed(word) => word,
        }
    }
}

/// How the wait for a commit's checks ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, Deserialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum ChecksOutcome {
    /// Every check finished.
    Finished,
    /// The timeout came with checks still pending.
    TimedOut {
        #[serde(rename = "waited_seconds", with = "seconds")]
        waited: Duration,
    },
    /// No check run and no status appeared within the grace period.
    NoChecksReported {
        #[serde(rename = "waited_seconds", with = "seconds")]
        waited: Duration,
    },
}

/// A duration in a run summary and the run record: whole seconds.
mod seconds {
    use std::time::Duration;

    use serde::Deserialize as _;

    pub(super) fn serialize<S: serde::Serializer>(
        duration: &Duration,
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        serializer.serialize_u64(duration.as_secs())
    }

    pub(super) fn deserialize<'de, D: serde::Deserializer<'de>>(
        deserializer: D,
    ) -> Result<Duration, D::Error> {
        u64::deserialize(deserializer).map(Duration::from_secs)
    }
}

/// The checks of one commit and how the wait for them ended.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, Deserialize)]
pub struct RemoteChecks {
    pub sha: String,
    pub outcome: ChecksOutcome,
    pub checks: Vec<RemoteCheck>,
}

impl RemoteChecks {
    /// Whether every check finished (and there was at least one).
    pub fn all_finished(&self) -> bool {
        match self.outcome {
            ChecksOutcome::Finished => true,
            ChecksOutcome::TimedOut { .. } | ChecksOutcome::NoChecksReported { .. } => false,
        }
    }

    /// The checks that failed.
    pub fn failed(&self) -> Vec<&RemoteCheck> {
        self.with(|conclusion| matches!(conclusion, Conclusion::Failed(_)))
    }

    /// The checks still pending when the wait ended.
    pub fn pending(&self) -> Vec<&RemoteCheck> {
        self.with(|conclusion| matches!(conclusion, Conclusion::Pending(_)))
    }

    /// Whether the remote CI approves: every check finished and none failed.
    pub fn passed(&self) -> bool {
        self.all_finished() && self.failed().is_empty()
    }

    fn with(&self, keep: impl Fn(&Conclusion) -> bool) -> Vec<&RemoteCheck> {
        self.checks
            .iter()
            .filter(|check| keep(&check.conclusion))
            .collect()
    }

    /// Markdown for the run summary and for GREEN's feedback: how the wait ended, then each
    /// check with its conclusion and link; a failed check also with its title and summary.
    pub fn render_markdown(&self) -> String {
        let short_sha: String = self.sha.chars().take(12).collect();
        let mut text = String::new();
        let passed = self.checks.len() - self.failed().len() - self.pending().len();
        let _ = write!(
            text,
            "Remote checks of `{short_sha}`: {passed} passed, {} failed, {} pending",
            self.failed().len(),
            self.pending().len()
        );
        let _ = match self.outcome {
            ChecksOutcome::Finished => writeln!(text, "."),
            ChecksOutcome::TimedOut { waited } => writeln!(
                text,
                " — the wait timed out after {}s with checks still pending.",
                waited.as_secs()
            ),
            ChecksOutcome::NoChecksReported { waited } => writeln!(
                text,
                " — no remote checks reported for this commit within {}s (is CI configured for this branch?).",
                waited.as_secs()
            ),
        };
        for check in &self.checks {
            let _ = write!(
                text,
                "\n- {} `{}` ({})",
                match check.conclusion {
                    Conclusion::Passed(_) => "passed",
                    Conclusion::Failed(_) => "FAILED",
                    Conclusion::Pending(_) => "pending",
                },
                check.name,
                check.conclusion.word()
            );
            if let Some(url) = &check.url {
                let _ = write!(text, " {url}");
            }
            if let Conclusion::Failed(_) = check.conclusion {
                if let Some(title) = check.title.as_deref().filter(|title| !title.is_empty()) {
                    let _ = write!(text, "\n  {title}");
                }
                if let Some(summary) = check.summary.as_deref().filter(|text| !text.is_empty()) {
                    for line in bounded(summary).lines() {
                        let _ = write!(text, "\n  > {line}");
                    }
                }
            }
        }
        text.push('\n');
        text
    }
}

/// How much of a failed check's summary the Markdown quotes.
const SUMMARY_CHARS: usize = 2_000;

fn bounded(summary: &str) -> String {
    let mut kept: String = summary.chars().take(SUMMARY_CHARS).collect();
    if kept.len() < summary.len() {
        kept.push('…');
    }
    kept
}

/// A check run as GitHub's Checks API returns it (the fields prpd reads).
#[derive(Debug, Deserialize)]
pub(super) struct CheckRunJson {
    name: String,
    status: String,
    conclusion: Option<String>,
    html_url: Option<String>,
    details_url: Option<String>,
    output: Option<OutputJson>,
}

#[derive(Debug, Deserialize)]
struct OutputJson {
    title: Option<String>,
    summary: Option<String>,
}

/// A commit status inside GitHub's combined status.
#[derive(Debug, Deserialize)]
pub(super) struct StatusJson {
    context: String,
    state: String,
    target_url: Option<String>,
    description: Option<String>,
}

impl CheckRunJson {
    pub(super) fn into_check(self) -> RemoteCheck {
        let conclusion = if self.status == "completed" {
            match self.conclusion.as_deref() {
                Some(word @ ("success" | "neutral" | "skipped")) => {
                    Conclusion::Passed(word.to_owned())
                }
                Some(word) => Conclusion::Failed(word.to_owned()),
                None => Conclusion::Failed("completed without a conclusion".to_owned()),
            }
        } else {
            Conclusion::Pending(self.status)
        };
        let (title, summary) = self
            .output
            .map_or((None, None), |output| (output.title, output.summary));
        RemoteCheck {
            name: self.name,
            source: CheckSource::CheckRun,
            conclusion,
            url: self.details_url.or(self.html_url),
            title,
            summary,
        }
    }
}

impl StatusJson {
    pub(super) fn into_check(self) -> RemoteCheck {
        let conclusion = match self.state.as_str() {
            "success" => Conclusion::Passed(self.state),
            "pending" => Conclusion::Pending(self.state),
            _ => Conclusion::Failed(self.state),
        };
        RemoteCheck {
            name: self.context,
            source: CheckSource::Status,
            conclusion,
            url: self.target_url,
            title: self.description,
            summary: None,
        }
    }
}

/// What one look at a commit's checks says to do next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Look {
    /// Done, with this outcome.
    Done(ChecksOutcome),
    /// Look again later.
    Again,
}

/// Whether the wait is over, `elapsed` into it: all checks finished, the timeout came with
/// some pending, or none appeared within `grace` (bounded by the timeout).
pub(super) fn look(
    checks: &[RemoteCheck],
    elapsed: Duration,
    timeout: Duration,
    grace: Duration,
) -> Look {
    if checks.is_empty() {
        return if elapsed >= grace.min(timeout) {
            Look::Done(ChecksOutcome::NoChecksReported { waited: elapsed })
        } else {
            Look::Again
        };
    }
    let pending = checks
        .iter()
        .any(|check| matches!(check.conclusion, Conclusion::Pending(_)));
    match (pending, elapsed >= timeout) {
        (false, _) => Look::Done(ChecksOutcome::Finished),
        (true, true) => Look::Done(ChecksOutcome::TimedOut { waited: elapsed }),
        (true, false) => Look::Again,
    }
}
