//! `prpd ui`: the dashboard in a browser, and the part of `prpd watch --ui` that starts it
//! beside the daemon. `prpd ui` prints the URL with the token; when a dashboard already serves
//! the repository (the daemon's), it prints that one's and exits instead of starting another.

use std::net::{SocketAddr, TcpStream, ToSocketAddrs as _};
use std::path::Path;
use std::time::Duration;

use anyhow::Context as _;
use clap::Args;

use prpd_base::exit::ExitCode;
use prpd_base::paths::SessionPaths;
use prpd_ui::token::Token;
use prpd_ui::{Dashboard, Options, UiError, address};

use super::RepoArgs;
use super::usage::UsageError;

#[derive(Debug, Args)]
pub struct UiArgs {
    #[command(flatten)]
    pub repo: RepoArgs,
    /// Where to listen (`HOST:PORT`; port 0 picks a free one).
    #[arg(long, value_name = "ADDR", default_value = address::DEFAULT)]
    pub addr: String,
    /// Allow an address off the loopback interface. The dashboard speaks plain HTTP: the runs,
    /// and the token of whoever acts, cross the network unencrypted.
    #[arg(long)]
    pub public: bool,
}

/// `prpd ui`.
pub(super) fn ui(repo: &Path, args: &UiArgs) -> anyhow::Result<ExitCode> {
    let address = bind_address(&args.addr, args.public)?;
    let session = SessionPaths::new(repo);
    if let Some(url) = serving(&session) {
        let token = Token::load_or_create(&session.ui_token())?;
        println!(
            "A dashboard already serves {} (the daemon's): {url}#token={}",
            repo.display(),
            token.reveal()
        );
        return Ok(ExitCode::Success);
    }
    let runtime = tokio::runtime::Runtime::new().context("failed to start the async runtime")?;
    runtime.block_on(async {
        let dashboard = Dashboard::bind(Options {
            repo: repo.to_path_buf(),
            address,
            public: args.public,
        })
        .await?;
        announce(&dashboard, args.public);
        println!("{}", dashboard.url_with_token());
        eprintln!(
            "prpd: Resume and Abort go through the daemon (`prpd watch`); Ctrl-C stops the dashboard"
        );
        dashboard.serve(prpd_base::shutdown::requested()).await
    })?;
    Ok(ExitCode::Success)
}

/// `--ui ADDR` / `--addr ADDR` read, a user's mistake exiting 2.
pub(super) fn bind_address(text: &str, public: bool) -> anyhow::Result<SocketAddr> {
    address::parse(text, public).map_err(|error| match error {
        UiError::Address { .. } => UsageError(error.to_string()).into(),
        other => anyhow::Error::new(other),
    })
}

/// Says where the dashboard listens (without the token: this line may go to a log), and warns
/// when it listens off the loopback interface.
pub(super) fn announce(dashboard: &Dashboard, public: bool) {
    tracing::info!(
        url = dashboard.url(),
        "dashboard listening; `prpd ui` prints its address with the token"
    );
    if public {
        tracing::warn!(
            url = dashboard.url(),
            "the dashboard listens off the loopback interface over plain HTTP: anyone who can reach it reads the runs, and the token crosses the network unencrypted"
        );
    }
}

/// The URL of a dashboard that answers for this repository now, when there is one.
fn serving(session: &SessionPaths) -> Option<String> {
    let url = std::fs::read_to_string(session.ui_address()).ok()?;
    let url = url.trim().to_owned();
    let host = url.strip_prefix("http://")?.trim_end_matches('/');
    let target = host.to_socket_addrs().ok()?.next()?;
    TcpStream::connect_timeout(&target, Duration::from_millis(500)).ok()?;
    Some(url)
}
