//! SHIP's pull request: its title and body written to `runs/<id>/pr.md` in every case, then,
//! when SHIP delivers (a token, no `--dry-run`), opened on GitHub or, when one is open for the
//! branch already, updated with a comment that says what changed. Each step is saved in the run
//! record, so a resumed SHIP neither opens a second pull request nor comments twice.

use prpd_base::secret::Secret;
use prpd_ship::github::{GitHub, Opened, PullRequestDraft};
use prpd_ship::message::{self, PullRequestText};

use super::ship::Stop;
use super::{Driver, write_text};

impl Driver {
    /// Writes `runs/<id>/pr.md`: the pull request's title and body as they are (or would be)
    /// sent.
    pub(super) fn write_pull_request_file(
        &mut self,
        text: &PullRequestText,
        head: &str,
        base: Option<&str>,
        no_pull_request: Option<&str>,
        token: Option<&Secret>,
    ) -> Result<(), Stop> {
        let markdown = text.markdown();
        let markdown = token.map_or_else(|| markdown.clone(), |token| token.redact(&markdown));
        let path = self.run_dir().join("pr.md");
        write_text(&path, &markdown)?;
        tracing::info!(
            path = %path.display(),
            %head,
            base = base.unwrap_or("(unknown: the run started on a detached HEAD)"),
            no_pull_request = no_pull_request.unwrap_or("no: it is opened next"),
            "SHIP: the pull request's title and body were written"
        );
        self.record.ship.pull_request = Some(path);
        self.save()?;
        Ok(())
    }

    /// Opens the pull request of `head` into `base` on GitHub, or updates the open one (and
    /// comments on it when `[ship] comment_on_update` says so).
    pub(super) async fn deliver_pull_request(
        &mut self,
        github: &GitHub,
        text: &PullRequestText,
        head: &str,
        base: &str,
        commit: &str,
    ) -> Result<(), Stop> {
        let config = self.context.config.ship.clone();
        let draft = PullRequestDraft {
            head: head.to_owned(),
            base: base.to_owned(),
            title: text.title.clone(),
            body: text.body.clone(),
            labels: config.labels.clone(),
            draft: config.draft,
        };
        let kept = format!("the commit is pushed on {head}");
        let pull = github
            .open_or_update_pull_request(&draft)
            .await
            .map_err(|error| Stop::github(&error, &kept))?;
        tracing::info!(
            number = pull.number,
            url = %pull.html_url,
            opened = ?pull.opened,
            "SHIP: the pull request is open"
        );
        self.record.ship.github_pull_request = Some(pull.clone());
        self.save()?;

        if pull.opened == Opened::Updated
            && config.comment_on_update
            && !self.record.ship.commented_on_update
        {
            let comment = message::update_comment(&self.run_facts(), commit);
            github
                .comment(pull.number, &comment)
                .await
                .map_err(|error| {
                    Stop::github(&error, &format!("pull request #{} is updated", pull.number))
                })?;
            self.record.ship.commented_on_update = true;
            self.save()?;
        }
        Ok(())
    }
}
