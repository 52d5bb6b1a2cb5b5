//! The `prpd` binary: parse the command line, set up logging, run the command, map the result
//! to an exit code. Everything else is library code.

use std::io::IsTerminal as _;

use clap::{CommandFactory as _, FromArgMatches as _};
use prpd::cli::{self, Cli, Command};
use tracing_subscriber::EnvFilter;

fn main() -> std::process::ExitCode {
    let cli = parse();
    // The demo's phase lines are its progress: its log says only what went wrong unless asked.
    let quiet = matches!(cli.command, Command::Demo(_)) && cli.verbose == 0;
    init_logging(cli.verbose, quiet);
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

/// Logs go to stderr (stdout carries results). `PRPD_LOG` wins over `-v`. Colours only when
/// stderr is a terminal and `NO_COLOR` is not set (to any value, empty included): a log
/// redirected to a file or a pipe stays plain text.
fn init_logging(verbose: u8, quiet: bool) {
    let default = match verbose {
        0 if quiet => "prpd=warn",
        0 => "prpd=info",
        1 => "prpd=debug",
        _ => "prpd=trace",
    };
    let filter = EnvFilter::try_from_env("PRPD_LOG").unwrap_or_else(|_| EnvFilter::new(default));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none())
        .with_target(false)
        .init();
}
