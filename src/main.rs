//! The `prpd` binary: parse the command line, set up logging, run the command, map the result
//! to an exit code. It holds the command line ([`cli`]) and the server of `prpd mcp`
//! ([`mcp_server`]); everything else is in the crates under `crates/`, each a subsystem that
//! uses only the ones below it (`ARCHITECTURE.md` has the map):
//!
//! `prpd-base` and `prpd-prp` (no other prpd crate); `prpd-qa` (base, prp); `prpd-memory`
//! (qa); `prpd-ship` (base, prp); `prpd-protocols` (qa, ship); `prpd-web` (protocols);
//! `prpd-run` (all of these); `prpd-watch` (run); this binary (all).

mod cli;
#[cfg(test)]
mod config_reference;
mod mcp_server;

use std::io::IsTerminal as _;
use std::path::PathBuf;
use std::sync::Mutex;

use clap::{CommandFactory as _, FromArgMatches as _};
use cli::{Cli, Command};
use prpd_watch::log_file::{self, RotatingLog};
use tracing_subscriber::EnvFilter;
use tracing_subscriber::layer::SubscriberExt as _;
use tracing_subscriber::util::SubscriberInitExt as _;

fn main() -> std::process::ExitCode {
    let cli = parse();
    // The demo's phase lines are its progress: its log says only what went wrong unless asked.
    let quiet = matches!(cli.command, Command::Demo(_)) && cli.verbose == 0;
    init_logging(cli.verbose, quiet, cli::daemon_log(&cli));
    match cli::run(cli) {
        Ok(code) => code.into(),
        Err(error) => {
            eprintln!("prpd: error: {error:#}");
            cli::exit_code_for(&error).into()
        }
    }
}

/// The command line. Help and usage errors are coloured only on a terminal and never when
/// `NO_COLOR` is set, to any value (clap alone ignores an empty one).
fn parse() -> Cli {
    let mut command = Cli::command();
    if std::env::var_os("NO_COLOR").is_some() {
        command = command.color(clap::ColorChoice::Never);
    }
    let matches = command.get_matches();
    Cli::from_arg_matches(&matches).unwrap_or_else(|error| error.exit())
}

/// Logs go to stderr (stdout carries results) and, for the daemon, as JSON lines to its rotated
/// log file too. `PRPD_LOG` wins over `-v`. Colours only when stderr is a terminal and
/// `NO_COLOR` is not set (to any value, empty included): a log redirected to a file or a pipe
/// stays plain text.
fn init_logging(verbose: u8, quiet: bool, daemon_log: Option<PathBuf>) {
    let default = match verbose {
        0 if quiet => "prpd=warn",
        0 => "prpd=info",
        1 => "prpd=debug",
        _ => "prpd=trace",
    };
    let filter = EnvFilter::try_from_env("PRPD_LOG").unwrap_or_else(|_| EnvFilter::new(default));
    let stderr = tracing_subscriber::fmt::layer()
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none())
        .with_target(false);
    let json = daemon_log.and_then(|path| {
        let opened = path
            .parent()
            .map_or(Ok(()), std::fs::create_dir_all)
            .and_then(|()| RotatingLog::open(&path, log_file::MAX_BYTES));
        match opened {
            Ok(log) => Some(
                tracing_subscriber::fmt::layer()
                    .json()
                    .with_writer(Mutex::new(log))
                    .with_target(false),
            ),
            Err(error) => {
                eprintln!("prpd: cannot open the log file {}: {error}", path.display());
                None
            }
        }
    });
    tracing_subscriber::registry()
        .with(filter)
        .with(stderr)
        .with(json)
        .init();
}
