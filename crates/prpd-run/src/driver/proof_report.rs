//! SHIP's proof (`proof_report.rs` builds and renders it): collected from the run record and
//! prpd's own measurements — the test run QA approved (its log read back while it hashes to
//! the sealed fingerprint, else the tests run once more), the run without the feature (from
//! the record), the hold-out tests, the frozen harness, the test files the shipped commit
//! changes against its base — written to `proof.json` and `proof.md` in the run directory in every
//! case, dry runs included, then published on the shipped commit as the check run
//! `prpd / verdict` when SHIP delivers. The pull request's body carries its short section.
//!
//! Not publishing is said, never an error: a dry run, no token or a remote off GitHub leave
//! "not published: <why>" in `proof.md`, and a token that may create neither a check run nor
//! a commit status (403 on both) ships with that said too. Any other GitHub failure stops SHIP
//! like the pull request's would, and `prpd resume` carries on; a verdict published once is not
//! published again for the same commit.

use std::path::Path;
use std::time::SystemTime;

use crate::frozen::Family;
use crate::proof::{self, CasesRun};
use crate::proof_report::{
    self, Attempt, FailToPass, Harness, ProofReport, Publication, Rendering, Runs, TestAudit,
    checks_of_qa_report, held_out_results,
};
use crate::snapshot::TestDiff;
use prpd_base::phase::Phase;
use prpd_base::secret::Secret;
use prpd_ship::github::{GitHub, GitHubError, VerdictCheck};

use super::flaky::TestRunAt;
use super::ship::Stop;
use super::{DriveError, Driver, write_text};

/// Where SHIP may publish the verdict.
enum Destination<'a> {
    /// The repository's GitHub API.
    GitHub(&'a GitHub),
    /// Nowhere, and why: a dry run, no token, a remote off GitHub.
    Nowhere { why: String },
}

/// Why there is no fail-to-pass proof to show.
const NO_PROOF: &str = "prpd could not prove the tests test the feature: no test command, or no test harness frozen at the end of RED";

impl Driver {
    /// The proof of the shipped `commit`, written and published, and the GitHub client SHIP
    /// goes on with: with a `token`, unless a `dry_run` or `no_pull_request` says why not.
    /// Returns the pull request's section.
    pub(super) async fn publish_proof(
        &mut self,
        commit: &str,
        token: Option<&Secret>,
        dry_run: Option<&str>,
        no_pull_request: Option<&str>,
    ) -> Result<(String, Option<GitHub>), Stop> {
        let github = match token.filter(|_| no_pull_request.is_none()) {
            Some(token) => Some(self.github(token).await.map_err(Stop::Failed)?),
            None => None,
        };
        let destination = match (&github, dry_run) {
            (Some(github), _) => Destination::GitHub(github),
            (None, Some(reason)) => Destination::Nowhere {
                why: format!("dry run ({reason})"),
            },
            (None, None) => Destination::Nowhere {
                why: no_pull_request.unwrap_or_default().to_owned(),
            },
        };
        let section = self
            .prove_on_pull_request(commit, destination, token)
            .await?;
        Ok((section, github))
    }

    /// Writes the proof of `commit` (`proof.json`, `proof.md`), publishes it at `destination`
    /// (or says why not), and returns the pull request's section.
    async fn prove_on_pull_request(
        &mut self,
        commit: &str,
        destination: Destination<'_>,
        token: Option<&Secret>,
    ) -> Result<String, Stop> {
        let mut report = self.proof_report(commit).await?;
        report.published = self.publish(&report, destination).await?;
        let redact = |text: String| token.map_or_else(|| text.clone(), |token| token.redact(&text));
        let dir = self.run_dir();
        let json = serde_json::to_string_pretty(&report).map_err(|error| {
            Stop::Drive(DriveError::Write {
                path: dir.join("proof.json"),
                source: std::io::Error::other(error),
            })
        })?;
        write_text(&dir.join("proof.json"), &redact(json))?;
        let path = dir.join("proof.md");
        write_text(
            &path,
            &redact(proof_report::render(&report, Rendering::File)),
        )?;
        tracing::info!(path = %path.display(), published = ?report.published, "SHIP: the proof was written");
        self.record.ship.proof = Some(path.clone());
        self.record.ship.verdict_published = Some(report.published.clone());
        self.save()?;
        Ok(redact(proof_report::pull_request_section(&report, &path)))
    }

    /// Where the verdict goes: where it went already for this commit, the check run (or a
    /// commit status), or nowhere and why.
    async fn publish(
        &self,
        report: &ProofReport,
        destination: Destination<'_>,
    ) -> Result<Publication, Stop> {
        if let Some(done @ (Publication::CheckRun { .. } | Publication::CommitStatus { .. })) =
            &self.record.ship.verdict_published
        {
            return Ok(done.clone());
        }
        let github = match destination {
            Destination::GitHub(github) => github,
            Destination::Nowhere { why } => return Ok(Publication::NotPublished { why }),
        };
        let check = VerdictCheck {
            sha: report.commit.clone(),
            passed: report.passes(),
            title: proof_report::verdict_title(report),
            summary: proof_report::summary(report),
            text: proof_report::render(report, Rendering::CheckRun),
            completed_at: SystemTime::now(),
        };
        match github.publish_verdict(&check).await {
            Ok(published) => {
                tracing::info!(?published, "SHIP: the verdict is on the commit");
                Ok(published.into())
            }
            Err(error @ GitHubError::Forbidden { .. }) => {
                tracing::warn!(%error, "SHIP: the token may publish no verdict; the run ships without it");
                Ok(Publication::NotPublished {
                    why: format!(
                        "the token may create neither a check run nor a commit status: {error}"
                    ),
                })
            }
            Err(error) => Err(Stop::github(
                &error,
                &format!("the commit {} is pushed", report.commit),
            )),
        }
    }

    /// The proof of the shipped `commit`, before it is published.
    async fn proof_report(&mut self, commit: &str) -> Result<ProofReport, Stop> {
        let log_dir = self.run_dir().join("proof");
        std::fs::create_dir_all(&log_dir).map_err(|source| {
            Stop::Drive(DriveError::Write {
                path: log_dir.clone(),
                source,
            })
        })?;
        let measured = self.measured_runs(&log_dir).await?;
        let runs = measured.as_ref().map(|(without, with, _)| Runs {
            without_feature: &without.run,
            with_feature: with,
        });
        let flaky = self.known_flaky();
        let flipped = self.record.flaky.flipped_with_feature();
        let proof = measured
            .as_ref()
            .map(|(without, with, files)| proof::judge(without, with, files, &flaky, &flipped));
        let test_diff = self.test_diff(commit)?;
        let harness = self.harness(
            measured
                .as_ref()
                .map(|(without, _, _)| without.key.tree.clone()),
        );
        Ok(ProofReport {
            version: proof_report::PROOF_VERSION,
            run_id: self.record.run_id.clone(),
            prp: self.record.prp.clone(),
            feature: self.context.prp.title.clone(),
            commit: commit.to_owned(),
            verdict: self.record.verdicts.last().map(|verdict| verdict.verdict),
            fail_to_pass: FailToPass::new(proof.as_ref(), runs, NO_PROOF),
            held_out: held_out_results(&self.held_names(), runs, &self.context.prp.requirements),
            harness,
            test_audit: TestAudit::new(test_diff.changes, test_diff.at_from, test_diff.at_to, runs),
            checks: checks_of_qa_report(self.record.last_qa_markdown.as_deref().unwrap_or("")),
            attempts: self
                .record
                .verdicts
                .iter()
                .map(|verdict| Attempt {
                    attempt: verdict.attempt,
                    verdict: verdict.verdict,
                    reasons: verdict.blocking.clone(),
                })
                .collect(),
            published: Publication::NotPublished {
                why: "not yet".to_owned(),
            },
        })
    }

    /// The run without the feature and the run QA approved, with the harness's test files;
    /// `None` when there is nothing to compare (no test command, no harness frozen).
    async fn measured_runs(
        &mut self,
        log_dir: &Path,
    ) -> Result<Option<(proof::WithoutFeature, CasesRun, proof::TestFiles)>, Stop> {
        let detection = self.detection()?;
        let Some(tree) = self
            .record
            .snapshots
            .last
            .as_ref()
            .map(|last| last.tree.clone())
        else {
            return Ok(None);
        };
        let earlier = self.earlier_run(&tree, &detection);
        let at = TestRunAt {
            phase: Phase::Ship,
            detection: &detection,
            log_dir,
            label: "tests-with-feature",
            tree: &tree,
        };
        let Some(with) = self
            .judged_tests(&at, earlier.as_ref(), &mut Vec::new())
            .await?
        else {
            return Ok(None);
        };
        let Some((without, files)) = self.without_feature(&detection, log_dir).await? else {
            return Ok(None);
        };
        Ok(Some((without, with.cases, files)))
    }

    /// The test files the shipped `commit` changes against the base it ships on.
    fn test_diff(&self, commit: &str) -> Result<TestDiff, Stop> {
        Ok(self
            .snapshots()?
            .test_diff(commit)
            .map_err(DriveError::from)?)
    }

    /// Where the harness froze, and the tree without the feature.
    fn harness(&self, without_feature_tree: Option<String>) -> Option<Harness> {
        let frozen = self.record.freeze.frozen_at.get(&Family::Harness)?;
        Some(Harness {
            frozen_in_commit: frozen.commit.clone(),
            frozen_in_tree: frozen.tree.clone(),
            files: self
                .record
                .freeze
                .entries
                .values()
                .filter(|(family, _)| *family == Family::Harness)
                .count(),
            without_feature_tree,
        })
    }
}
