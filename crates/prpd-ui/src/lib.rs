//! prpd's dashboard: the repository's runs in a browser (`prpd ui`, or `prpd watch --ui ADDR`
//! inside the daemon). It shows what the state files hold — the runs, each run's timeline,
//! iterations, diffs, receipt and reports — updates the open page as they change (server-sent
//! events), and resumes or aborts a run through the daemon's control socket, as the CLI does.
//!
//! Safe by default: it binds to the loopback interface unless told otherwise (`address`), an
//! action needs the repository's token in a header (`token`), and nothing a run wrote reaches a
//! page as markup (`html`, `markdown`). It stands above `prpd-watch` only for the control
//! socket and the queue file; the daemon itself knows nothing of it.

mod actions;
pub mod address;
mod events;
mod html;
mod markdown;
mod pages;
mod routes;
mod runs;
mod server;
pub mod token;

pub use address::Exposure;
pub use server::{Dashboard, FINGERPRINT_HEADER, Options};

use std::path::PathBuf;

/// The dashboard could not start.
#[derive(Debug, thiserror::Error)]
pub enum UiError {
    /// The address to bind is not one (a user's mistake).
    #[error("--ui/--addr {given}: {problem}")]
    Address {
        given: String,
        problem: &'static str,
    },
    #[error("failed to listen on {address} (in use? `--addr 127.0.0.1:0` picks a free port)")]
    Bind {
        address: std::net::SocketAddr,
        #[source]
        source: std::io::Error,
    },
    #[error("failed to read or write the dashboard token {}", path.display())]
    Token {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("failed to write {}", path.display())]
    State {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("the dashboard's server failed")]
    Serve(#[source] std::io::Error),
}
