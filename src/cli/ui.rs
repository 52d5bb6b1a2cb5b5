//! `prpd ui`: the dashboard in a browser, and the part of `prpd watch --ui` that starts it
//! beside the daemon. `prpd ui` prints the URL with the token; when the repository's dashboard
//! already runs (the daemon's, or another `prpd ui`), it prints that one's and exits instead of
//! starting another.

use std::io::{Read as _, Write as _};
use std::net::{SocketAddr, TcpStream, ToSocketAddrs as _};
use std::path::Path;
use std::time::Duration;

use anyhow::Context as _;
use clap::Args;

use prpd_base::exit::ExitCode;
use prpd_base::paths::SessionPaths;
use prpd_ui::token::Token;
use prpd_ui::{Dashboard, Exposure, Options, UiError, address};

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
    let exposure = exposure(args.public);
    let address = bind_address(&args.addr, exposure)?;
    let session = SessionPaths::new(repo);
    if let Some((url, token)) = serving(&session) {
        println!("{url}#token={}", token.expose());
        eprintln!(
            "prpd: the dashboard of {} already runs there (--addr is not used)",
            repo.display()
        );
        return Ok(ExitCode::Success);
    }
    let runtime = tokio::runtime::Runtime::new().context("failed to start the async runtime")?;
    runtime.block_on(async {
        let dashboard = bound(
            Dashboard::bind(Options {
                repo: repo.to_path_buf(),
                address,
                exposure,
            })
            .await,
        )?;
        announce(&dashboard, exposure);
        println!("{}", dashboard.url_with_token());
        eprintln!(
            "prpd: Resume and Abort go through the daemon (`prpd watch`); Ctrl-C stops the dashboard"
        );
        dashboard
            .serve(prpd_base::shutdown::requested())
            .await
            .map_err(anyhow::Error::new)
    })?;
    Ok(ExitCode::Success)
}

/// `--public` as the exposure it asks for.
pub(super) fn exposure(public: bool) -> Exposure {
    if public {
        Exposure::Public
    } else {
        Exposure::Loopback
    }
}

/// `--ui ADDR` / `--addr ADDR` read, a user's mistake exiting 2.
pub(super) fn bind_address(text: &str, exposure: Exposure) -> anyhow::Result<SocketAddr> {
    address::parse(text, exposure).map_err(|error| UsageError(error.to_string()).into())
}

/// A dashboard bound, or why not: an address in use is the user's to change (exit 2).
pub(super) fn bound(result: Result<Dashboard, UiError>) -> anyhow::Result<Dashboard> {
    result.map_err(|error| match error {
        UiError::Bind { .. } => UsageError(format!("{error}: {}", source_of(&error))).into(),
        other => anyhow::Error::new(other),
    })
}

fn source_of(error: &UiError) -> String {
    std::error::Error::source(error).map_or_else(String::new, ToString::to_string)
}

/// Says where the dashboard listens (without the token: this line may go to a log), and warns
/// when it listens off the loopback interface.
pub(super) fn announce(dashboard: &Dashboard, exposure: Exposure) {
    tracing::info!(
        url = dashboard.url(),
        "dashboard listening; `prpd ui` prints its address with the token"
    );
    if exposure == Exposure::Public {
        tracing::warn!(
            url = dashboard.url(),
            "the dashboard listens off the loopback interface over plain HTTP: anyone who can reach it reads the runs, and the token crosses the network unencrypted"
        );
    }
}

/// The URL and token of this repository's dashboard when one answers now: the address it
/// wrote answers with the fingerprint of the repository's token. Whatever else now listens on
/// a port a stale address names never gets the token.
fn serving(session: &SessionPaths) -> Option<(String, Token)> {
    let url = std::fs::read_to_string(session.ui_address()).ok()?;
    let url = url.trim().to_owned();
    let host = url
        .strip_prefix("http://")?
        .trim_end_matches('/')
        .to_owned();
    let token = Token::load(&session.ui_token()).ok()??;
    let target = host.to_socket_addrs().ok()?.next()?;
    let wait = Duration::from_millis(500);
    let mut stream = TcpStream::connect_timeout(&target, wait).ok()?;
    stream.set_read_timeout(Some(wait)).ok()?;
    stream
        .write_all(
            format!("HEAD / HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n").as_bytes(),
        )
        .ok()?;
    let mut answer = Vec::new();
    stream.take(16 * 1024).read_to_end(&mut answer).ok()?;
    let expected = format!(
        "\r\n{}: {}\r\n",
        prpd_ui::FINGERPRINT_HEADER,
        token.fingerprint()
    );
    String::from_utf8_lossy(&answer)
        .to_ascii_lowercase()
        .contains(&expected.to_ascii_lowercase())
        .then_some((url, token))
}
