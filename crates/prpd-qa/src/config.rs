//! The tables of `prpd.toml` the QA gate reads: `[qa]` (how checks run), `[commands]` and
//! `[checks.<ID>]` (the repository's adjustments of the gate, in `gate.rs`). `prpd qa` reads
//! these and nothing else, so a QA run never fails on an agent's configuration.

use std::path::Path;
use std::time::Duration;

use prpd_base::config_file::{self, ConfigError, ConfigFile};
use serde::Deserialize;

mod gate;
mod junit;

pub use gate::{COMMAND_KINDS, CheckSetting, CommandSetting, GateSettings, Located, Place};

/// Settings of the QA gate.
#[derive(Debug, Clone, PartialEq)]
pub struct QaConfig {
    /// How many independent checks run at once.
    pub jobs: usize,
    /// How long one check may run before its process group is stopped.
    pub check_timeout: Duration,
    /// How long a stopped check gets between SIGTERM and SIGKILL.
    pub grace: Duration,
    /// `junit = "<glob>"`: the JUnit XML report the test command writes, relative to the
    /// repository root; its figures replace the console's (see `junit.rs` of this crate).
    pub junit: Option<String>,
}

impl Default for QaConfig {
    fn default() -> Self {
        QaConfig {
            jobs: 4,
            check_timeout: Duration::from_secs(600),
            grace: Duration::from_secs(5),
            junit: None,
        }
    }
}

/// Everything the QA gate reads of `prpd.toml`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct QaSettings {
    /// `[qa]`.
    pub qa: QaConfig,
    /// `[commands]` and `[checks.<ID>]`.
    pub gate: GateSettings,
}

/// The tables of `prpd.toml` this crate reads; the others are their crates' to read.
#[derive(Debug, Default, Deserialize)]
struct Tables {
    qa: Option<RawQa>,
    commands: Option<gate::RawCommands>,
    checks: Option<gate::RawChecks>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawQa {
    jobs: Option<usize>,
    check_timeout: Option<String>,
    grace: Option<String>,
    junit: Option<String>,
}

impl QaSettings {
    /// The QA tables of `file`, validated, with every default filled in.
    pub fn from_file(file: &ConfigFile) -> Result<QaSettings, ConfigError> {
        let tables: Tables = file.tables()?;
        Ok(QaSettings {
            qa: qa(file.path(), file.text(), tables.qa.unwrap_or_default())?,
            gate: gate::settings(file.path(), file.text(), tables.commands, tables.checks)?,
        })
    }

    /// The QA tables of the repository's `prpd.toml` (or of `explicit`); the defaults when
    /// there is no file.
    pub fn load(repo: &Path, explicit: Option<&Path>) -> Result<QaSettings, ConfigError> {
        match ConfigFile::find(repo, explicit)? {
            Some(file) => QaSettings::from_file(&file),
            None => Ok(QaSettings::default()),
        }
    }

    /// `text` as a whole `prpd.toml` at `path` (for tests and tools that hold the text).
    pub fn parse(path: &Path, text: &str) -> Result<QaSettings, ConfigError> {
        QaSettings::from_file(&ConfigFile::from_text(path.to_path_buf(), text.to_owned())?)
    }
}

fn qa(path: &Path, text: &str, raw: RawQa) -> Result<QaConfig, ConfigError> {
    let defaults = QaConfig::default();
    let jobs = raw.jobs.unwrap_or(defaults.jobs);
    if jobs == 0 {
        return Err(ConfigError::at(
            path,
            text,
            "jobs",
            "`qa.jobs` must be at least 1",
        ));
    }
    Ok(QaConfig {
        jobs,
        check_timeout: config_file::duration(path, text, "check_timeout", raw.check_timeout)?
            .unwrap_or(defaults.check_timeout),
        grace: config_file::duration(path, text, "grace", raw.grace)?.unwrap_or(defaults.grace),
        junit: junit::pattern(path, text, raw.junit)?,
    })
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

    #[test]
    fn durations_and_jobs_are_read() {
        let text = "[qa]\njobs = 2\ncheck_timeout = \"90s\"\ngrace = \"1s\"\n";
        let settings = QaSettings::parse(Path::new("prpd.toml"), text).expect("valid");
        assert_eq!(settings.qa.jobs, 2);
        assert_eq!(settings.qa.check_timeout, Duration::from_secs(90));
        assert_eq!(settings.qa.grace, Duration::from_secs(1));
    }

    #[test]
    fn bad_duration_names_the_line_and_the_key() {
        let text = "[qa]\njobs = 2\ncheck_timeout = \"soon\"\n";
        let error = QaSettings::parse(Path::new("prpd.toml"), text).expect_err("bad duration");
        let message = error.to_string();
        assert!(message.starts_with("prpd.toml:3:"), "{message}");
        assert!(message.contains("`check_timeout`"), "{message}");
    }

    #[test]
    fn the_qa_settings_load_whatever_the_agents_say() {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::write(
            dir.path().join(config_file::FILE_NAME),
            "[qa]\njobs = 3\n\n[agents.default]\ncommand = []\nmodel = \"same\"\n",
        )
        .expect("write");
        let settings = QaSettings::load(dir.path(), None).expect("the QA part is valid");
        assert_eq!(settings.qa.jobs, 3);
        let typo = dir.path().join("typo.toml");
        std::fs::write(&typo, "[qa]\njbos = 3\n").expect("write");
        assert!(QaSettings::load(dir.path(), Some(&typo)).is_err());
        let scalar = dir.path().join("scalar.toml");
        std::fs::write(&scalar, "jobs = 3\n").expect("write");
        let error = QaSettings::load(dir.path(), Some(&scalar)).expect_err("a key outside a table");
        assert!(
            error
                .to_string()
                .contains("scalar.toml:1:1: unknown key `jobs`"),
            "{error}"
        );
        let unknown = dir.path().join("unknown.toml");
        std::fs::write(&unknown, "[qa]\njobs = 3\n\n[gaurdrails]\n").expect("write");
        let error = QaSettings::load(dir.path(), Some(&unknown)).expect_err("unknown table");
        assert!(
            error.to_string().ends_with(
                "unknown.toml:4:2: unknown table `gaurdrails`, expected one of the tables `qa`, `commands`, `checks`, `agents`, `guardrails`, `prices`, `breaker`, `run`, `ship`, `memory`, `watch`, `notify`, `plan`"
            ),
            "{error}"
        );
    }

    #[test]
    fn unknown_key_is_named() {
        let error =
            QaSettings::parse(Path::new("prpd.toml"), "[qa]\njbos = 2\n").expect_err("typo");
        assert!(
            error.to_string().contains("unknown field `jbos`"),
            "{error}"
        );
    }
}
