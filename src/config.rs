//! `prpd.toml`, the optional per-repository configuration: raw serde structs (every field
//! optional, unknown keys rejected) turned once into a validated [`Config`] with defaults.
//!
//! The commented example in `config/prpd.toml` is compiled in and tested to parse, so the
//! documentation of every key cannot drift from what the parser accepts.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;

use crate::config_file::{self, ConfigError};

/// The file name prpd looks for at the root of the target repository.
pub const FILE_NAME: &str = "prpd.toml";

/// The commented example configuration shipped in `config/prpd.toml`.
pub const EXAMPLE: &str = include_str!("../config/prpd.toml");

/// Validated configuration, with every default filled in.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Config {
    /// Where the configuration came from (`None`: built-in defaults).
    pub source: Option<PathBuf>,
    pub qa: QaConfig,
}

/// Settings of the QA gate.
#[derive(Debug, Clone, PartialEq)]
pub struct QaConfig {
    /// How many independent checks run at once.
    pub jobs: usize,
    /// How long one check may run before its process group is stopped.
    pub check_timeout: Duration,
    /// How long a stopped check gets between SIGTERM and SIGKILL.
    pub grace: Duration,
}

impl Default for QaConfig {
    fn default() -> Self {
        QaConfig {
            jobs: 4,
            check_timeout: Duration::from_secs(600),
            grace: Duration::from_secs(5),
        }
    }
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawConfig {
    qa: Option<RawQa>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawQa {
    jobs: Option<usize>,
    check_timeout: Option<String>,
    grace: Option<String>,
}

impl Config {
    /// Loads `explicit` when given (it must exist), else `<repo>/prpd.toml` when present, else
    /// the defaults.
    pub fn load(repo: &Path, explicit: Option<&Path>) -> Result<Config, ConfigError> {
        let path = if let Some(path) = explicit {
            path.to_path_buf()
        } else {
            let path = repo.join(FILE_NAME);
            if !path.exists() {
                return Ok(Config::default());
            }
            path
        };
        let text = config_file::read(&path)?;
        Config::parse(&path, &text)
    }

    /// Parses and validates `text`; `path` names the file in errors.
    pub fn parse(path: &Path, text: &str) -> Result<Config, ConfigError> {
        let raw: RawConfig = config_file::parse_toml(path, text)?;
        let raw_qa = raw.qa.unwrap_or_default();
        let defaults = QaConfig::default();
        let jobs = raw_qa.jobs.unwrap_or(defaults.jobs);
        if jobs == 0 {
            return Err(ConfigError::at(
                path,
                text,
                "jobs",
                "`qa.jobs` must be at least 1",
            ));
        }
        let qa = QaConfig {
            jobs,
            check_timeout: duration(path, text, "check_timeout", raw_qa.check_timeout)?
                .unwrap_or(defaults.check_timeout),
            grace: duration(path, text, "grace", raw_qa.grace)?.unwrap_or(defaults.grace),
        };
        Ok(Config {
            source: Some(path.to_path_buf()),
            qa,
        })
    }
}

/// Parses a duration string such as `"90s"` or `"10m"`, naming the key on error.
pub(crate) fn duration(
    path: &Path,
    text: &str,
    key: &str,
    value: Option<String>,
) -> Result<Option<Duration>, ConfigError> {
    value
        .map(|value| {
            humantime::parse_duration(&value).map_err(|error| {
                ConfigError::at(
                    path,
                    text,
                    key,
                    format!("`{key}` = {value:?} is not a duration ({error}); expected e.g. \"90s\" or \"10m\""),
                )
            })
        })
        .transpose()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn example_config_parses() {
        Config::parse(Path::new("config/prpd.toml"), EXAMPLE).expect("example parses");
    }

    #[test]
    fn missing_file_gives_defaults() {
        let dir = tempfile::tempdir().expect("tempdir");
        let config = Config::load(dir.path(), None).expect("defaults");
        assert_eq!(config, Config::default());
    }

    #[test]
    fn durations_and_jobs_are_read() {
        let text = "[qa]\njobs = 2\ncheck_timeout = \"90s\"\ngrace = \"1s\"\n";
        let config = Config::parse(Path::new("prpd.toml"), text).expect("valid");
        assert_eq!(config.qa.jobs, 2);
        assert_eq!(config.qa.check_timeout, Duration::from_secs(90));
        assert_eq!(config.qa.grace, Duration::from_secs(1));
    }

    #[test]
    fn bad_duration_names_the_line_and_the_key() {
        let text = "[qa]\njobs = 2\ncheck_timeout = \"soon\"\n";
        let error = Config::parse(Path::new("prpd.toml"), text).expect_err("bad duration");
        let message = error.to_string();
        assert!(message.starts_with("prpd.toml:3:"), "{message}");
        assert!(message.contains("`check_timeout`"), "{message}");
    }

    #[test]
    fn unknown_key_is_named() {
        let error = Config::parse(Path::new("prpd.toml"), "[qa]\njbos = 2\n").expect_err("typo");
        assert!(
            error.to_string().contains("unknown field `jbos`"),
            "{error}"
        );
    }
}
