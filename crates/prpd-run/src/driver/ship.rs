//! SHIP as the driver carries it out: the last check of the frozen tree, then the commit, the
//! branch and the push of `prpd-ship/src/git`, each saved in the run record before the next starts, then
//! the pull request's title and body. It stands apart because it is the one effect that leaves
//! the repository: everything before it stays on prpd's private refs.
//!
//! A step that fails is the run's outcome, not prpd's: `ShipFailed` escalates the run in SHIP
//! with the message (which says what to do), the commit stays on its local branch, and
//! `prpd resume` goes through the steps again, skipping those the record says are done.
//!
//! Delivery: with a token in the variable `[ship] token_env` names, the pull request is opened
//! or updated on GitHub (`pull_request.rs`), and with `[ship] wait_for_checks` SHIP waits for
//! the remote CI's verdict (`remote_checks.rs`), whose failure is a QA REJECT. A GitHub error
//! (a refused token, a missing permission, a rate limit, the network) is a `ShipFailed` like a
//! refused push: the commit stays pushed and `prpd resume` carries on from the step that failed.
//!
//! No GitHub repository: when `[ship] repository` is not set and the push remote is not on
//! GitHub (GitLab, a self-hosted server, a local bare repository), the branch is pushed as
//! usual, the pull request is written to `runs/<id>/pr.md` as in a dry run, the record says
//! why no pull request was opened (`ship.no_pull_request`), and the run ships: the work is done
//! and delivered where the user pushes. A `[ship] repository` that is set is the user's word:
//! if it cannot be reached, SHIP fails as above.
//!
//! The base moved: a run in a worktree ships on its base branch as it is when it ships, not as
//! it was when the run started (`rebase.rs` of the driver).
//!
//! Dry run: with `prpd run --dry-run`, or when that variable holds no token, SHIP does every
//! local step — the commit, the branch, and the push when the remote is a local path — and
//! writes the pull request to `runs/<id>/pr.md`; nothing goes over the network and no token is
//! used.
//!
//! The proof: after the push and before the pull request, `proof.json` and `proof.md` are
//! written in every case and, when SHIP delivers, published on the commit as the check run
//! `prpd / verdict` (`proof_report.rs` of the driver); the pull request's body carries its
//! summary and says where it is.

use crate::machine::{Event, QaVerdict};
use crate::record::Delivery;
use prpd_base::phase::Phase;
use prpd_base::secret::Secret;
use prpd_base::status_block::Verdict;
use prpd_ship::git::{self, CommitPlan, PushRequest, PushToken, Pushed, ShipError};
use prpd_ship::github::{self, GitHubError};
use prpd_ship::message::{self, RunFacts, Tokens};

use super::{DriveError, Driver};

/// How a SHIP that did not stop ended.
pub(super) enum Delivered {
    /// Pushed and, when SHIP delivers, the pull request open and its checks passed.
    Shipped,
    /// The remote CI rejected the work: one line per failed check.
    RemoteChecksFailed { blocking: Vec<String> },
}

/// Why SHIP stopped: a step failed (the run's outcome, with a message that says what to do),
/// or prpd could not act.
pub(super) enum Stop {
    Failed(String),
    Drive(DriveError),
}

impl Stop {
    /// A GitHub request failed; `kept` says what is done already (the commit is never lost).
    pub(super) fn github(error: &GitHubError, kept: &str) -> Stop {
        Stop::Failed(format!(
            "{error}. Nothing is lost: {kept}; once that is fixed, `prpd resume` carries on"
        ))
    }
}

impl From<ShipError> for Stop {
    fn from(error: ShipError) -> Self {
        Stop::Failed(error.to_string())
    }
}

impl From<DriveError> for Stop {
    fn from(error: DriveError) -> Self {
        Stop::Drive(error)
    }
}

impl Driver {
    pub(super) async fn ship(&mut self) -> Result<Event, DriveError> {
        if let Some(event) = self.refuse_ship_on_frozen_changes()? {
            return Ok(event);
        }
        let token = Secret::from_env(&self.context.config.ship.token_env);
        match self.ship_steps(token.as_ref()).await {
            Ok(Delivered::Shipped) => Ok(Event::Shipped),
            Ok(Delivered::RemoteChecksFailed { blocking }) => {
                Ok(Event::RemoteChecksFailed { blocking })
            }
            Err(Stop::Drive(error)) => Err(error),
            Err(Stop::Failed(message)) => {
                let message = token.map_or_else(|| message.clone(), |token| token.redact(&message));
                tracing::warn!(%message, "SHIP failed; the run is resumable");
                Ok(Event::ShipFailed { message })
            }
        }
    }

    async fn ship_steps(&mut self, token: Option<&Secret>) -> Result<Delivered, Stop> {
        // The user's repository: a worktree shares its objects, branches and remotes, and a
        // relative remote path or the checked-out branch are the user's tree's.
        let repo = self.context.home.clone();
        let config = self.context.config.ship.clone();
        let branch = config.branch_for(&self.context.prp.slug());
        let facts = self.run_facts();
        let commit = self.commit(&facts).await?;
        let commit = self.on_current_base(commit, token).await?;

        let moved = {
            let (repo, branch, commit, prp) = (
                repo.clone(),
                branch.clone(),
                commit.clone(),
                self.record.prp.clone(),
            );
            blocking(move || git::point_branch(&repo, &branch, &commit, &prp)).await?
        };
        tracing::info!(%branch, ?moved, "SHIP: the branch points at the commit");
        if self.record.ship.branch.as_deref() != Some(branch.as_str()) {
            self.record.ship.branch = Some(branch.clone());
            self.save()?;
        }

        let dry_run = match (self.record.ship.delivery, token) {
            (Delivery::DryRun, _) => Some("--dry-run".to_owned()),
            (Delivery::Live, None) => Some(format!("no token in ${}", config.token_env)),
            (Delivery::Live, Some(_)) => None,
        };
        if self.record.ship.pushed_to.is_none() {
            self.push(&branch, &commit, dry_run.as_deref(), token)
                .await?;
        }

        let no_pull_request = self.why_no_pull_request(dry_run.as_deref()).await?;
        let (proof, github) = self
            .publish_proof(
                &commit,
                token,
                dry_run.as_deref(),
                no_pull_request.as_deref(),
            )
            .await?;
        let text = message::pull_request(
            &self.context.prp,
            &self.record.prp,
            &facts,
            Some(&proof),
            self.record.last_qa_markdown.as_deref(),
        );
        let base = config
            .base
            .clone()
            .or_else(|| self.record.ship.base_branch.clone());
        self.write_pull_request_file(
            &text,
            &branch,
            base.as_deref(),
            no_pull_request.as_deref(),
            token,
        )?;
        if self.record.ship.no_pull_request != no_pull_request {
            self.record
                .ship
                .no_pull_request
                .clone_from(&no_pull_request);
            self.save()?;
        }
        let (Some(token), Some(github)) = (token, github) else {
            if dry_run.is_none()
                && let Some(why) = &no_pull_request
            {
                tracing::info!("SHIP: {why}");
            }
            return Ok(Delivered::Shipped);
        };
        let base = base.ok_or_else(|| {
            Stop::Failed(format!(
                "the run started on a detached HEAD, so the pull request has no base branch; \
                 set `[ship] base` in prpd.toml, then run `prpd resume` (the commit is on {branch})"
            ))
        })?;
        self.deliver_pull_request(&github, &text, &branch, &base, &commit)
            .await?;
        if config.wait_for_checks {
            return self.await_remote_checks(&github, &commit, token).await;
        }
        Ok(Delivered::Shipped)
    }

    /// The shipped commit: the one the record holds when it still exists, else the agents'
    /// work committed now (and recorded).
    async fn commit(&mut self, facts: &RunFacts) -> Result<String, Stop> {
        let repo = self.context.home.clone();
        if let Some(commit) = self
            .record
            .ship
            .commit
            .clone()
            .filter(|commit| git::exists(&repo, commit))
        {
            return Ok(commit);
        }
        let plan = CommitPlan {
            repo,
            base_snapshot: self.base_snapshot()?,
            agent_snapshots: self.agent_snapshots()?,
            message: message::commit_message(&self.context.prp, &self.record.prp, facts),
        };
        let commit = blocking(move || git::commit(&plan)).await?;
        tracing::info!(%commit, "SHIP: committed the agents' work");
        self.record.ship.commit = Some(commit.clone());
        self.save()?;
        Ok(commit)
    }

    /// Why SHIP opens no pull request: a dry run, or a push remote that is not on GitHub with
    /// no `[ship] repository` (`ship::github::not_on_github`); `None` when it opens one.
    async fn why_no_pull_request(&self, dry_run: Option<&str>) -> Result<Option<String>, Stop> {
        if let Some(reason) = dry_run {
            return Ok(Some(format!(
                "dry run ({reason}): no pull request was opened"
            )));
        }
        let (repo, config) = (self.context.home.clone(), self.context.config.ship.clone());
        blocking(move || github::not_on_github(&repo, &config)).await
    }

    /// Pushes the branch, or records why a dry run does not.
    async fn push(
        &mut self,
        branch: &str,
        commit: &str,
        dry_run: Option<&str>,
        token: Option<&Secret>,
    ) -> Result<(), Stop> {
        let repo = self.context.home.clone();
        let spec = self.context.config.ship.remote.clone();
        let destination = {
            let (repo, spec) = (repo.clone(), spec.clone());
            blocking(move || git::destination(&repo, &spec)).await?
        };
        let destination = match (destination, dry_run) {
            (None, None) => return Err(git::no_such_remote(&repo, &spec).into()),
            (None, Some(reason)) => {
                return self.not_pushed(format!(
                    "dry run ({reason}): `[ship] remote` = {spec:?} names no remote of the repository, so nothing was pushed"
                ));
            }
            (Some(destination), Some(reason)) if destination.local.is_none() => {
                return self.not_pushed(format!(
                    "dry run ({reason}): {} is not a local path, so nothing was pushed",
                    destination.shown.clone()
                ));
            }
            (Some(destination), _) => destination,
        };
        let shown = destination.shown.clone();
        let push_token = push_token(
            token.filter(|_| dry_run.is_none()),
            &destination.url,
            &self.context.config.ship.api_url,
        );
        let request = PushRequest {
            repo,
            destination,
            branch: branch.to_owned(),
            commit: commit.to_owned(),
            prp: self.record.prp.clone(),
            token: push_token,
            token_env: self.context.config.ship.token_env.clone(),
        };
        let pushed = blocking(move || git::push(&request)).await?;
        match &pushed {
            Pushed::Updated => tracing::info!(%branch, remote = %shown, "SHIP: pushed"),
            Pushed::AlreadyThere => {
                tracing::info!(%branch, remote = %shown, "SHIP: the remote already had the commit");
            }
            Pushed::Replaced { previous } => tracing::info!(
                %branch, remote = %shown, %previous,
                "SHIP: pushed, replacing prpd's earlier commit for this PRP"
            ),
        }
        self.record.ship.pushed_to = Some(shown);
        self.record.ship.not_pushed = None;
        self.save()?;
        Ok(())
    }

    fn not_pushed(&mut self, why: String) -> Result<(), Stop> {
        tracing::info!("SHIP: {why}");
        self.record.ship.not_pushed = Some(why);
        self.save()?;
        Ok(())
    }

    /// What prpd counted in this run, for the commit message and the pull request.
    pub(super) fn run_facts(&self) -> RunFacts {
        let usage = &self.record.usage;
        let kinds = usage.token_usage;
        let reported = kinds.input + kinds.cache_write + kinds.cache_read + kinds.output > 0;
        RunFacts {
            run_id: self.record.run_id.clone(),
            iterations: Phase::ITERATING
                .into_iter()
                .filter_map(|phase| Some((phase, *self.record.iterations.get(&phase)?)))
                .collect(),
            verdicts: self
                .record
                .verdicts
                .iter()
                .map(|verdict| {
                    let word = match verdict.verdict {
                        QaVerdict::Approve => Verdict::Approve,
                        QaVerdict::Reject => Verdict::Reject,
                    };
                    (verdict.attempt, word)
                })
                .collect(),
            agent_invocations: usage.invocations,
            tokens: reported.then_some(Tokens {
                input: kinds.input,
                cache_write: kinds.cache_write,
                cache_read: kinds.cache_read,
                output: kinds.output,
            }),
            cost_usd: (usage.cost_usd > 0.0).then_some(usage.cost_usd),
            receipt: (!self.record.receipt.lines.is_empty())
                .then(|| self.record.receipt.phase_markdown()),
        }
    }

    fn base_snapshot(&self) -> Result<String, DriveError> {
        self.record
            .snapshots
            .base
            .as_ref()
            .map(|base| base.commit.clone())
            .ok_or(DriveError::SnapshotGone {
                run_id: self.record.run_id.clone(),
                number: 0,
            })
    }

    /// The snapshots the agents' iterations ended on, in run order, with those that put the
    /// held-out tests back (RED's work, which RED's own snapshots no longer hold).
    fn agent_snapshots(&self) -> Result<Vec<String>, DriveError> {
        let snapshots = self.snapshots()?;
        let mut numbers: Vec<u32> = self.record.snapshots.iterations.values().copied().collect();
        numbers.extend(&self.record.holdout.restores);
        numbers.sort_unstable();
        numbers
            .iter()
            .map(|number| {
                snapshots.at(*number).map(|snapshot| snapshot.commit).ok_or(
                    DriveError::SnapshotGone {
                        run_id: self.record.run_id.clone(),
                        number: *number,
                    },
                )
            })
            .collect()
    }
}

/// Runs a git step off the async runtime (a push may wait on the network).
pub(super) async fn blocking<T: Send + 'static>(
    step: impl FnOnce() -> Result<T, ShipError> + Send + 'static,
) -> Result<T, Stop> {
    match tokio::task::spawn_blocking(step).await {
        Ok(result) => result.map_err(Stop::from),
        Err(error) => Err(Stop::Drive(DriveError::ShipTask(error))),
    }
}

/// What the push may give a remote that asks for credentials: the token only when the remote
/// is on GitHub (github.com, or the host of `[ship] api_url`), so a GitHub token never reaches
/// another host.
pub(super) fn push_token(token: Option<&Secret>, url: &str, api_url: &str) -> PushToken {
    let Some(token) = token else {
        return PushToken::Unset;
    };
    match github::remote_host(url) {
        Some(host) if github::github_repository_from_remote_url(url, api_url).is_none() => {
            PushToken::Withheld { host }
        }
        Some(_) | None => PushToken::Offered(token.clone()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_github_token_goes_to_github_only() {
        let token = Secret::new("ghp_0123456789abcdef");
        let cases = [
            (
                "https://github.com/acme/calc.git",
                "https://api.github.com",
                "offered",
            ),
            (
                "https://ghe.acme.io/acme/calc.git",
                "https://ghe.acme.io/api/v3",
                "offered",
            ),
            (
                "https://gitlab.com/acme/calc.git",
                "https://api.github.com",
                "gitlab.com",
            ),
            (
                "https://git.acme.io/acme/calc.git",
                "https://api.github.com",
                "git.acme.io",
            ),
            ("/srv/git/calc.git", "https://api.github.com", "offered"),
        ];
        for (url, api_url, expected) in cases {
            let found = match push_token(Some(&token), url, api_url) {
                PushToken::Offered(_) => "offered".to_owned(),
                PushToken::Withheld { host } => host,
                PushToken::Unset => "unset".to_owned(),
            };
            assert_eq!(found, expected, "{url}");
        }
        assert!(matches!(
            push_token(None, "https://github.com/a/b", "https://api.github.com"),
            PushToken::Unset
        ));
    }
}
