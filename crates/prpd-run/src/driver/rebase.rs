//! SHIP on a base that moved. A run in a worktree started from its base branch's tip; several
//! runs go at once and the user keeps working, so by SHIP the branch may have moved: the push
//! remote's branch (another run's pull request merged, the user pushed; `prpd-ship/src/git/fetch.rs`),
//! or without a remote the local one. The shipped commit is replayed onto the branch's current
//! tip (`prpd-ship/src/git/rebase.rs`). A clean
//! replay changes the tree QA approved, so QA's checklist runs again, on the replayed tree in a
//! worktree of its own (the run's worktree and its snapshots stay as QA saw them), before
//! anything is pushed: a blocking failure there, like a clash of lines, stops SHIP with the
//! checks or files named, and the run's worktree stays for the human. `[run] setup` does not
//! run in that worktree; without it, the user's dependency folders are linked in as in the
//! run's own. A run in place works on
//! the user's own branch and is shipped as it is.

use std::path::PathBuf;

use crate::record::Delivery;
use crate::worktree;
use prpd_base::secret::Secret;
use prpd_qa::discover::Detection;
use prpd_qa::runner::{self, CheckStatus, QaRequest};
use prpd_ship::git::{self, PushRequest, Rebase};

use super::ship::{Stop, blocking, push_token};
use super::{DriveError, Driver};

impl Driver {
    /// `commit` on the base branch as it is now: itself, or its replay onto the moved branch
    /// once QA's checklist passed on it (saved in the record as the commit that ships).
    pub(super) async fn on_current_base(
        &mut self,
        commit: String,
        token: Option<&Secret>,
    ) -> Result<String, Stop> {
        let (Some(_), Some(branch)) = (&self.record.worktree, self.record.ship.base_branch.clone())
        else {
            return Ok(commit);
        };
        // Once pushed, the commit is what the remote holds: a resumed SHIP ships it as it is.
        if self.record.ship.pushed_to.is_some() {
            return Ok(commit);
        }
        let Some(tip) = self.base_tip(&branch, token).await else {
            return Ok(commit);
        };
        let rebased = {
            let (home, commit, branch) =
                (self.context.home.clone(), commit.clone(), branch.clone());
            blocking(move || git::rebase_onto(&home, &commit, &tip, &branch)).await?
        };
        let Rebase::Moved {
            commit: replayed,
            onto,
        } = rebased
        else {
            return Ok(commit);
        };
        tracing::info!(%branch, %onto, %replayed, "SHIP: the base branch moved; QA's checklist runs on the replayed commit");
        let detection = self.detection().map_err(Stop::Drive)?;
        let failed = self
            .checklist_on(&replayed, detection)
            .await
            .map_err(Stop::Drive)?;
        if !failed.is_empty() {
            return Err(Stop::Failed(format!(
                "the base branch {branch} moved since the run started (now at {}), and on it QA's \
                 checklist fails: {}. The run's worktree is kept: merge {branch} there and fix it, \
                 then ship by hand, or abort the run",
                onto.chars().take(7).collect::<String>(),
                failed.join("; ")
            )));
        }
        self.record.ship.commit = Some(replayed.clone());
        self.save().map_err(Stop::Drive)?;
        Ok(replayed)
    }

    /// The tip (hex) of the base branch the pull request goes to: the push remote's branch,
    /// fetched (a dry run reads a local remote only: nothing goes over the network); without a
    /// remote, the local branch. `None` when there is none to read, which ships the commit as
    /// it is.
    async fn base_tip(&self, branch: &str, token: Option<&Secret>) -> Option<String> {
        let home = self.context.home.clone();
        let spec = self.context.config.ship.remote.clone();
        let destination = {
            let home = home.clone();
            blocking(move || git::destination(&home, &spec))
                .await
                .ok()?
        };
        let Some(destination) = destination else {
            return git::local_tip(&home, branch);
        };
        let offline = self.record.ship.delivery == Delivery::DryRun || token.is_none();
        if offline && destination.local.is_none() {
            tracing::info!(%branch, "SHIP: a dry run reads no remote over the network: the commit is not replayed onto the remote's base");
            return None;
        }
        let request = PushRequest {
            repo: home,
            token: push_token(
                token.filter(|_| !offline),
                &destination.url,
                &self.context.config.ship.api_url,
            ),
            destination,
            branch: branch.to_owned(),
            commit: String::new(),
            prp: self.record.prp.clone(),
            token_env: self.context.config.ship.token_env.clone(),
        };
        let base = branch.to_owned();
        match blocking(move || git::fetch_base(&request, &base)).await {
            Ok(tip) => tip,
            Err(stop) => {
                let why = match stop {
                    Stop::Failed(message) => message,
                    Stop::Drive(error) => error.to_string(),
                };
                tracing::warn!(%branch, %why, "SHIP: the remote's base branch could not be read; the commit ships on the base it started from");
                None
            }
        }
    }

    /// Runs QA's checklist on `commit` in a worktree of its own; the blocking checks that
    /// failed, each with its detail.
    async fn checklist_on(
        &self,
        commit: &str,
        detection: Detection,
    ) -> Result<Vec<String>, DriveError> {
        let name = format!("{}{}", self.record.run_id, worktree::ON_BASE_SUFFIX);
        let home = &self.context.home;
        // Always made afresh: one a kill left behind may hold an older replay.
        worktree::remove(home, &worktree::location(home, &name)?)?;
        let tree = worktree::create(home, &name, commit)?;
        let _removed_at_the_end = Removal {
            home: home.clone(),
            tree: tree.clone(),
        };
        if self.context.config.setup.is_empty() {
            worktree::link_dependencies(home, &tree);
        }
        let request = QaRequest {
            repo: tree.clone(),
            prp: Some(self.context.prp.clone()),
            prp_path: Some(self.record.prp.clone()),
            jobs: self.context.config.qa.jobs,
            check_timeout: self.context.config.qa.check_timeout,
            grace: self.context.config.qa.grace,
            run_dir: self.run_dir().join("on-base"),
            attempt: self.record.machine.qa_attempt(),
            base_docs: Some(self.base_docs()?),
            earlier_runs: Vec::new(),
            junit: self.context.config.qa.junit.clone(),
        };
        Ok(runner::run(&request, &self.context.checklist, detection)
            .await?
            .checks
            .iter()
            .filter(|check| check.status == CheckStatus::Fail)
            .map(|check| format!("{} ({})", check.id, check.detail))
            .collect())
    }
}

/// Removes the worktree of a replayed commit however its QA ends, a dropped run included.
struct Removal {
    home: PathBuf,
    tree: PathBuf,
}

impl Drop for Removal {
    fn drop(&mut self) {
        if let Err(error) = worktree::remove(&self.home, &self.tree) {
            tracing::warn!(%error, "could not remove the worktree of the replayed commit");
        }
    }
}
