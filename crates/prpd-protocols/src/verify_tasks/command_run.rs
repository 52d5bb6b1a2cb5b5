//! One command of a `[VERIFY]` task, run the way QA runs its checks: through the one spawner
//! (`prpd-base/src/process`) as a measurement (own process group, a fresh home, no secret-named
//! variables, the timeout ending the group), its output in a log and its figures read by
//! `prpd-qa/src/metrics`.
//!
//! No vacuous pass. A command that cannot be found is a failure named as such
//! (`command not found: eslint`), whether prpd sees it before it starts (the program is not on
//! `PATH`) or the shell says so (exit 127); the seed skipped such a command, and a
//! verification of nothing then passed. A template placeholder left in (`<lint>`) is not run
//! and fails. A timeout fails. The project's test command must run at least one test.
//!
//! A command already run on the same tree (by a QA check just before, or by an earlier task
//! of the same `prpd verify`) is not run again: its result is read back and says so.

use std::path::{Path, PathBuf};
use std::sync::LazyLock;
use std::time::Duration;

use regex::Regex;

use super::result::{CommandOutcome, CommandRun, TestCounts};
use super::task::is_placeholder;
use prpd_base::process::{self, Missing, ProcessError, Spec, Termination, find_program};
use prpd_qa::metrics::{self, Metrics};

/// A command prpd already ran on this tree, kept so that the same command is not run twice.
#[derive(Debug, Clone)]
pub struct Ran {
    /// The command as it ran.
    pub command: String,
    pub termination: Termination,
    /// The last lines of its output.
    pub tail: String,
    /// Its full output.
    pub log: PathBuf,
    /// The figures and named tests its output gave.
    pub metrics: Metrics,
    pub duration: Duration,
    /// Who ran it, as the reuse note names it: `QA check F1`, `V4 [VERIFY] Full local CI`.
    pub ran_by: String,
}

/// How commands run.
#[derive(Debug, Clone)]
pub struct Settings {
    /// The repository: every command runs in its root.
    pub repo: PathBuf,
    /// How long one command may run.
    pub timeout: Duration,
    /// Between SIGTERM and SIGKILL.
    pub grace: Duration,
    /// The project's test command, which must run at least one test.
    pub test_command: Option<String>,
}

/// Runs `command` (logging to `log`), or reads back its run from `ran`; the fresh run is
/// returned as a [`Ran`] for later reuse. `ran_by` names the task that runs it.
pub async fn run_command(
    settings: &Settings,
    command: &str,
    log: &Path,
    ran: &[Ran],
    ran_by: &str,
) -> Result<(CommandRun, Option<Ran>), ProcessError> {
    if let Some(earlier) = ran.iter().rev().find(|earlier| earlier.command == command) {
        let mut run = judged(settings, earlier);
        run.reused_from = Some(format!("{} ran it on the same tree", earlier.ran_by));
        return Ok((run, None));
    }
    if let Some(why) = not_runnable(command, &settings.repo) {
        return Ok((
            CommandRun {
                command: command.to_owned(),
                outcome: CommandOutcome::Failed(why),
                counts: None,
                tail: String::new(),
                log: None,
                reused_from: None,
                duration: Duration::ZERO,
            },
            None,
        ));
    }
    let mut spec = Spec::measurement(command, &settings.repo, log);
    spec.timeout = settings.timeout;
    spec.grace = settings.grace;
    let outcome = process::run(spec).await?;
    let fresh = Ran {
        command: command.to_owned(),
        termination: outcome.termination,
        metrics: metrics::parse_log(&outcome.log_path).unwrap_or_default(),
        tail: outcome.tail,
        log: outcome.log_path,
        duration: outcome.duration,
        ran_by: ran_by.to_owned(),
    };
    Ok((judged(settings, &fresh), Some(fresh)))
}

/// Why `command` is not started at all: a template placeholder, or a program that is not there.
fn not_runnable(command: &str, repo: &Path) -> Option<String> {
    if is_placeholder(command) {
        return Some(format!(
            "`{command}` is a placeholder of the task template, not a command: write the \
             project's command in its place"
        ));
    }
    let program = program_of(command)?;
    match find_program(&program, repo, std::env::var_os("PATH").as_deref()) {
        Ok(_) => None,
        Err(Missing::NotFound) => Some(format!("command not found: {program}")),
        Err(Missing::NotExecutable(path)) => Some(format!("not executable: {}", path.display())),
    }
}

/// Words the shell runs itself: no program to look for.
const SHELL_WORDS: &[&str] = &[
    "!", ".", ":", "[", "[[", "alias", "break", "builtin", "case", "cd", "command", "continue",
    "declare", "echo", "eval", "exec", "exit", "export", "false", "for", "function", "getopts",
    "hash", "if", "kill", "let", "local", "printf", "pwd", "read", "readonly", "return", "set",
    "shift", "source", "test", "time", "trap", "true", "type", "ulimit", "umask", "unset", "until",
    "wait", "while",
];

/// The program a simple command starts (`FOO=1 npm test` → `npm`); `None` when the shell runs
/// it itself or the word is built at run time (`$TOOL`, quotes, a subshell).
fn program_of(command: &str) -> Option<String> {
    let word = command
        .split_whitespace()
        .find(|word| !is_assignment(word))?;
    let built = word.contains([
        '$', '`', '(', ')', '{', '}', '<', '>', '\'', '"', '\\', ';', '|', '&',
    ]);
    (!built && !SHELL_WORDS.contains(&word)).then(|| word.to_owned())
}

/// `NAME=value`: an environment assignment before the program.
fn is_assignment(word: &str) -> bool {
    word.split_once('=').is_some_and(|(name, _)| {
        !name.is_empty()
            && name
                .chars()
                .all(|character| character == '_' || character.is_ascii_alphanumeric())
            && !name.starts_with(|character: char| character.is_ascii_digit())
    })
}

/// What `sh` prints for a program it cannot find: `sh: 1: eslint: not found`,
/// `bash: eslint: command not found`.
static SHELL_NOT_FOUND: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?:^|: )([^\s:]+): (?:command )?not found\s*$").expect("a valid regex")
});

/// The command's outcome from its run (pure).
fn judged(settings: &Settings, ran: &Ran) -> CommandRun {
    let counts = ran.metrics.get("tests_total").map(|_| TestCounts {
        passed: ran.metrics.count("tests_passed").unwrap_or(0),
        failed: ran.metrics.count("tests_failed").unwrap_or(0),
    });
    let is_test_command = settings.test_command.as_deref() == Some(ran.command.as_str());
    let outcome = match ran.termination {
        Termination::Exited(0) if is_test_command && ran.metrics.tests_ran() == Some(0) => {
            CommandOutcome::Failed(
                "the test command ran no test: a test run with nothing in it verifies nothing"
                    .to_owned(),
            )
        }
        Termination::Exited(0) => CommandOutcome::Passed,
        Termination::Exited(127) => {
            let program = ran
                .tail
                .lines()
                .find_map(|line| SHELL_NOT_FOUND.captures(line.trim_end()))
                .and_then(|found| found.get(1))
                .map(|program| program.as_str().to_owned());
            CommandOutcome::Failed(program.map_or_else(
                || "command not found (exit 127)".to_owned(),
                |program| format!("command not found: {program} (exit 127)"),
            ))
        }
        Termination::Exited(126) => {
            CommandOutcome::Failed("a program could not be executed (exit 126)".to_owned())
        }
        Termination::Exited(code) => CommandOutcome::Failed(format!("exit {code}")),
        Termination::Signaled(signal) => {
            CommandOutcome::Failed(format!("killed by signal {signal}"))
        }
        Termination::Stopped => CommandOutcome::Failed("stopped by prpd".to_owned()),
        Termination::TimedOut => CommandOutcome::Failed(format!(
            "did not finish within {}; its process group was stopped",
            humantime::format_duration(settings.timeout)
        )),
    };
    CommandRun {
        command: ran.command.clone(),
        outcome,
        counts,
        tail: ran.tail.clone(),
        log: Some(ran.log.clone()),
        reused_from: None,
        duration: ran.duration,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(test_command: Option<&str>) -> Settings {
        Settings {
            repo: PathBuf::from("/"),
            timeout: Duration::from_secs(90),
            grace: Duration::from_secs(1),
            test_command: test_command.map(str::to_owned),
        }
    }

    fn ran(command: &str, termination: Termination, output: &str) -> Ran {
        Ran {
            command: command.to_owned(),
            termination,
            tail: output.to_owned(),
            log: PathBuf::from("/tmp/x.log"),
            metrics: metrics::parse_output(output.as_bytes()),
            duration: Duration::ZERO,
            ran_by: "QA check F1".to_owned(),
        }
    }

    #[test]
    fn outcomes_from_how_the_command_ended() {
        let tap_pass = "# tests 3\n# pass 3\n# fail 0\n";
        let tap_none = "# tests 0\n# pass 0\n# fail 0\n";
        let cases = [
            (
                ran("npm test", Termination::Exited(0), tap_pass),
                CommandOutcome::Passed,
            ),
            (
                ran("npm test", Termination::Exited(0), tap_none),
                CommandOutcome::Failed(
                    "the test command ran no test: a test run with nothing in it verifies nothing"
                        .to_owned(),
                ),
            ),
            (
                ran("npm run lint", Termination::Exited(0), ""),
                CommandOutcome::Passed,
            ),
            (
                ran("npm run lint", Termination::Exited(2), "1 problem\n"),
                CommandOutcome::Failed("exit 2".to_owned()),
            ),
            (
                ran(
                    "npm run lint",
                    Termination::Exited(127),
                    "> lint\nsh: 1: eslint: not found\n",
                ),
                CommandOutcome::Failed("command not found: eslint (exit 127)".to_owned()),
            ),
            (
                ran("x", Termination::Exited(127), "bash: x: command not found"),
                CommandOutcome::Failed("command not found: x (exit 127)".to_owned()),
            ),
            (
                ran("x", Termination::Exited(127), ""),
                CommandOutcome::Failed("command not found (exit 127)".to_owned()),
            ),
            (
                ran("sleep 600", Termination::TimedOut, ""),
                CommandOutcome::Failed(
                    "did not finish within 1m 30s; its process group was stopped".to_owned(),
                ),
            ),
            (
                ran("x", Termination::Signaled(9), ""),
                CommandOutcome::Failed("killed by signal 9".to_owned()),
            ),
        ];
        for (ran, expected) in cases {
            let run = judged(&settings(Some("npm test")), &ran);
            assert_eq!(run.outcome, expected, "{ran:?}");
        }
        let run = judged(
            &settings(None),
            &ran("npm test", Termination::Exited(0), tap_pass),
        );
        assert_eq!(
            run.counts,
            Some(TestCounts {
                passed: 3,
                failed: 0
            })
        );
        assert_eq!(
            judged(&settings(None), &ran("x", Termination::Exited(0), "")).counts,
            None
        );
    }

    #[test]
    fn the_program_a_command_starts() {
        let cases = [
            ("npm test", Some("npm")),
            ("CI=1 NODE_ENV=test npm test", Some("npm")),
            ("./scripts/check.sh --all", Some("./scripts/check.sh")),
            ("cd web && npm test", None),
            ("test -f README.md", None),
            ("$TOOL run", None),
            ("\"my tool\" run", None),
            ("(make)", None),
            ("2=x cmd", Some("2=x")),
            ("", None),
        ];
        for (command, expected) in cases {
            assert_eq!(program_of(command).as_deref(), expected, "{command}");
        }
    }

    #[test]
    fn a_missing_program_or_a_placeholder_is_not_started() {
        let repo = tempfile::tempdir().expect("temporary directory");
        assert_eq!(
            not_runnable("prpd-no-such-tool-3141 --check", repo.path()),
            Some("command not found: prpd-no-such-tool-3141".to_owned())
        );
        assert_eq!(
            not_runnable("<lint>", repo.path()),
            Some(
                "`<lint>` is a placeholder of the task template, not a command: write the \
                 project's command in its place"
                    .to_owned()
            )
        );
        std::fs::write(repo.path().join("check.sh"), "#!/bin/sh\n").expect("fixture");
        assert!(
            not_runnable("./check.sh", repo.path())
                .is_some_and(|why| why.starts_with("not executable: ")),
        );
        assert_eq!(not_runnable("sh -c true", repo.path()), None);
    }
}
