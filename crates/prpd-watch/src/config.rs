//! `[watch]` and `[notify]` of `prpd.toml`: what the daemon (`prpd watch`) reacts to and whom
//! it tells when a run needs a human. Parsed from raw tables (unknown keys refused) into
//! validated values; every refusal names the file, the line and what was expected.

use std::path::{Component, Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;

use prpd_base::config_file::{self, ConfigError, ConfigFile};
use prpd_qa::config::QaSettings;
use prpd_qa::standalone::QaInputs;
use prpd_run::config::Config;

/// `[watch]`, validated, with every default filled in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WatchConfig {
    /// How long the watcher waits for a burst of file events to settle before it reacts.
    pub debounce: Duration,
    /// While no run goes, a change of a source file re-runs QA and writes its report.
    pub qa_on_change: bool,
    /// The folder (relative to the repository) whose Markdown files are PRPs: a new or changed
    /// one queues a run.
    pub prp_dir: PathBuf,
    /// How many runs the daemon drives at once, each in its own worktree.
    pub parallel: usize,
    /// How many agent processes may run at once across the daemon's runs.
    pub max_agents: usize,
    /// How many check and test processes may run at once across the daemon's runs.
    pub max_checks: usize,
}

impl Default for WatchConfig {
    fn default() -> Self {
        let cores = std::thread::available_parallelism().map_or(2, std::num::NonZero::get);
        WatchConfig {
            debounce: Duration::from_millis(500),
            qa_on_change: false,
            prp_dir: PathBuf::from("PRPs"),
            parallel: 1,
            max_agents: 4,
            max_checks: cores.max(2),
        }
    }
}

/// `[notify]`: a command run when a run escalates, with the report's path as its last
/// argument.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NotifyConfig {
    /// The argv (no shell); `None` when no command is set.
    pub command: Option<Vec<String>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawWatch {
    debounce: Option<String>,
    qa_on_change: Option<bool>,
    prp_dir: Option<String>,
    parallel: Option<i64>,
    max_agents: Option<i64>,
    max_checks: Option<i64>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawNotify {
    command: Option<Vec<String>>,
}

/// The shortest and longest debounce prpd accepts: below 10 ms one save becomes several
/// triggers; above a minute the daemon no longer feels awake.
const DEBOUNCE_RANGE: (Duration, Duration) = (Duration::from_millis(10), Duration::from_secs(60));

/// Validates `[watch]` of the file at `path` (whose text is `text`).
fn watch(path: &Path, text: &str, raw: RawWatch) -> Result<WatchConfig, ConfigError> {
    let defaults = WatchConfig::default();
    let debounce = match config_file::duration(path, text, "debounce", raw.debounce)? {
        Some(debounce) if debounce < DEBOUNCE_RANGE.0 || debounce > DEBOUNCE_RANGE.1 => {
            return Err(ConfigError::at_key(
                path,
                text,
                "[watch]",
                "debounce",
                format!(
                    "`watch.debounce` = {} is out of range; expected between 10ms and 60s",
                    humantime::format_duration(debounce)
                ),
            ));
        }
        Some(debounce) => debounce,
        None => defaults.debounce,
    };
    let prp_dir = match raw.prp_dir {
        None => defaults.prp_dir,
        Some(dir) => {
            let relative = PathBuf::from(dir.trim());
            let inside = !relative.as_os_str().is_empty()
                && relative
                    .components()
                    .all(|component| matches!(component, Component::Normal(_)));
            if !inside {
                return Err(ConfigError::at_key(
                    path,
                    text,
                    "[watch]",
                    "prp_dir",
                    format!(
                        "`watch.prp_dir` = {dir:?} must be a folder inside the repository, relative to its root, e.g. \"PRPs\""
                    ),
                ));
            }
            relative
        }
    };
    let count = |key: &str, value: Option<i64>, default: usize| match value {
        None => Ok(default),
        Some(value @ 1..=64) => Ok(usize::try_from(value).unwrap_or(default)),
        Some(value) => Err(ConfigError::at_key(
            path,
            text,
            "[watch]",
            key,
            format!("`watch.{key}` = {value} is out of range; expected a number from 1 to 64"),
        )),
    };
    Ok(WatchConfig {
        debounce,
        qa_on_change: raw.qa_on_change.unwrap_or(defaults.qa_on_change),
        prp_dir,
        parallel: count("parallel", raw.parallel, defaults.parallel)?,
        max_agents: count("max_agents", raw.max_agents, defaults.max_agents)?,
        max_checks: count("max_checks", raw.max_checks, defaults.max_checks)?,
    })
}

/// Validates `[notify]`.
fn notify(path: &Path, text: &str, raw: RawNotify) -> Result<NotifyConfig, ConfigError> {
    match raw.command {
        None => Ok(NotifyConfig::default()),
        Some(command)
            if command
                .first()
                .is_none_or(|program| program.trim().is_empty()) =>
        {
            Err(ConfigError::at_key(
                path,
                text,
                "[notify]",
                "command",
                "`notify.command` is empty; expected an argv such as [\"notify-send\", \"prpd\"] (the report's path is added as the last argument)",
            ))
        }
        Some(command) => Ok(NotifyConfig {
            command: Some(command),
        }),
    }
}

/// What the daemon reads of `prpd.toml` beyond a run's configuration.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct DaemonSettings {
    /// `[watch]`.
    pub watch: WatchConfig,
    /// `[notify]`.
    pub notify: NotifyConfig,
}

/// The tables of `prpd.toml` this crate reads; the others are their crates' to read.
#[derive(Debug, Default, Deserialize)]
struct Tables {
    watch: Option<RawWatch>,
    notify: Option<RawNotify>,
}

impl DaemonSettings {
    /// `[watch]` and `[notify]` of `file`, validated, with every default filled in.
    pub fn from_file(file: &ConfigFile) -> Result<DaemonSettings, ConfigError> {
        let tables: Tables = file.tables()?;
        Ok(DaemonSettings {
            watch: watch(file.path(), file.text(), tables.watch.unwrap_or_default())?,
            notify: notify(file.path(), file.text(), tables.notify.unwrap_or_default())?,
        })
    }
}

/// Everything the daemon reads, from one reading of prpd.toml: a run's configuration, the
/// daemon's own tables, and QA's inputs (the checklist and the tools mapping must load too; QA
/// on change uses them as loaded).
pub(crate) fn load(
    repo: &Path,
    explicit: Option<&Path>,
) -> Result<(Config, DaemonSettings, QaInputs), ConfigError> {
    let (config, daemon) = match ConfigFile::find(repo, explicit)? {
        Some(file) => (Config::from_file(&file)?, DaemonSettings::from_file(&file)?),
        None => (Config::default(), DaemonSettings::default()),
    };
    let qa = QaSettings {
        qa: config.qa.clone(),
        gate: config.gate.clone(),
    };
    let qa = QaInputs::with_settings(repo, qa)?;
    Ok((config, daemon, qa))
}

/// Whether every key of this crate's tables in `file` is one it knows, with a value of the right
/// type (nothing more is judged): the binary asks every crate before any command starts, so a
/// typo in any table stops every command, naming its line.
pub fn check_keys(file: &ConfigFile) -> Result<(), ConfigError> {
    file.tables::<Tables>().map(drop)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<DaemonSettings, ConfigError> {
        DaemonSettings::from_file(&ConfigFile::from_text("prpd.toml".into(), text.to_owned())?)
    }

    #[test]
    fn the_example_states_the_defaults() {
        assert_eq!(
            parse(config_file::EXAMPLE).expect("the example parses"),
            DaemonSettings::default()
        );
    }

    #[test]
    fn watch_and_notify_are_read() {
        let text = "[watch]\ndebounce = \"200ms\"\nqa_on_change = true\nprp_dir = \"docs/prps\"\n\n[notify]\ncommand = [\"notify-send\", \"prpd\"]\n";
        let config = parse(text).expect("valid");
        assert_eq!(config.watch.debounce, Duration::from_millis(200));
        assert!(config.watch.qa_on_change);
        assert_eq!(config.watch.prp_dir, PathBuf::from("docs/prps"));
        assert_eq!(
            config.notify.command,
            Some(vec!["notify-send".to_owned(), "prpd".to_owned()])
        );
    }

    #[test]
    fn refusals_name_the_line_and_what_was_expected() {
        for (text, line, expected) in [
            ("[watch]\ndebounce = \"1ms\"\n", 2, "between 10ms and 60s"),
            ("[watch]\ndebounce = \"soon\"\n", 2, "is not a duration"),
            (
                "[watch]\nprp_dir = \"../elsewhere\"\n",
                2,
                "inside the repository",
            ),
            ("[watch]\nprp_dir = \"/abs\"\n", 2, "inside the repository"),
            ("\n[notify]\ncommand = []\n", 3, "expected an argv"),
            ("[watch]\nqa_on_chnage = true\n", 2, "unknown field"),
        ] {
            let error = parse(text).expect_err(text);
            let message = error.to_string();
            assert!(
                message.starts_with(&format!("prpd.toml:{line}:")),
                "{text}: {message}"
            );
            assert!(message.contains(expected), "{text}: {message}");
        }
    }
}
