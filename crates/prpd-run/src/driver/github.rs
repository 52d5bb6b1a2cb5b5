//! The GitHub client a run uses, built from `[ship]` (`ship::github::client_for`: the API URL,
//! the repository configured or read from the push remote's URL, and the token). It stands
//! apart because SHIP's pull request and remote checks and the escalation issue all need it,
//! and each must refuse the same way when prpd cannot tell where to go.

use prpd_base::secret::Secret;
use prpd_ship::github::{self, GitHub};

use super::Driver;

impl Driver {
    /// The client for this run's repository, or a message that says what to set.
    pub(super) async fn github(&self, token: &Secret) -> Result<GitHub, String> {
        let (repo, ship, token) = (
            self.context.home.clone(),
            self.context.config.ship.clone(),
            token.clone(),
        );
        tokio::task::spawn_blocking(move || github::client_for(&repo, &ship, &token))
            .await
            .map_err(|error| format!("reading the remote stopped unexpectedly: {error}"))?
            .map_err(|message| {
                if message.contains("prpd resume") {
                    message
                } else {
                    format!("{message}, then run `prpd resume`")
                }
            })
    }
}
