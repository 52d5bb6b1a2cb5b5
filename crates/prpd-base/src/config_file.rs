//! Reading prpd's configuration files (`prpd.toml`, `qa-checklist.yml`, `qa-tools-mapping.yml`)
//! with one error shape: every message names the file, the line and column, and what was
//! expected, so a user can fix a typo without guessing (STYLE item 11).
//!
//! Parsing goes into raw serde structs with `deny_unknown_fields`; serde then names the unknown
//! key and the keys that are allowed. Checks that serde cannot express (an id used twice, a
//! check with neither command nor method) are reported through [`ConfigError::at`], which looks
//! up the line of the offending text.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::de::DeserializeOwned;
use toml::Spanned;

/// The file name prpd looks for at the root of the target repository.
pub const FILE_NAME: &str = "prpd.toml";

/// The commented example of `prpd.toml` shipped in `config/prpd.toml`, every key at its default.
pub const EXAMPLE: &str = include_str!("../../../config/prpd.toml");

/// The tables `prpd.toml` may hold, and the crate that reads each: prpd-qa `qa`, `commands`,
/// `checks`; prpd-run `agents`, `guardrails`, `prices`, `breaker`, `run`; prpd-ship `ship`; prpd-memory
/// `memory`; prpd-watch `watch`, `notify`; prpd-web `plan`. Each crate parses only its own
/// tables and ignores the others, so the file's outline is checked here, once, when it is read.
pub const TABLES: [&str; 13] = [
    "qa",
    "commands",
    "checks",
    "agents",
    "guardrails",
    "prices",
    "breaker",
    "run",
    "ship",
    "memory",
    "watch",
    "notify",
    "plan",
];

/// `prpd.toml` as read once: where it came from and its text. Every crate turns the tables it
/// owns into its typed settings from this, so one command (the daemon too) reads the file once
/// and every part of prpd sees the same version of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigFile {
    path: PathBuf,
    text: String,
}

impl ConfigFile {
    /// `explicit` when given (it must exist), else `<repo>/prpd.toml` when present; `None`
    /// means the built-in defaults. A table prpd does not know is refused here.
    pub fn find(repo: &Path, explicit: Option<&Path>) -> Result<Option<ConfigFile>, ConfigError> {
        let path = if let Some(path) = explicit {
            path.to_path_buf()
        } else {
            let path = repo.join(FILE_NAME);
            if !path.exists() {
                return Ok(None);
            }
            path
        };
        let text = read(&path)?;
        ConfigFile::from_text(path, text).map(Some)
    }

    /// The file at `path` with `text`, its tables checked against [`TABLES`].
    pub fn from_text(path: PathBuf, text: String) -> Result<ConfigFile, ConfigError> {
        let outline: BTreeMap<Spanned<String>, toml::Value> = parse_toml(&path, &text)?;
        if let Some((unknown, value)) = outline
            .iter()
            .find(|(name, _)| !TABLES.contains(&name.get_ref().as_str()))
        {
            let (line, column) = line_and_column(&text, unknown.span().start);
            let what = if value.is_table() { "table" } else { "key" };
            return Err(ConfigError::Invalid {
                path,
                line,
                column,
                message: format!(
                    "unknown {what} `{}`, expected one of the tables {}",
                    unknown.get_ref(),
                    TABLES.map(|table| format!("`{table}`")).join(", ")
                ),
            });
        }
        Ok(ConfigFile { path, text })
    }

    /// Where the file is (errors name it).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The file's text (errors are located in it).
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The tables `T` reads (a raw serde struct with one optional field per table it owns;
    /// the others are ignored), errors located in the file.
    pub fn tables<T: DeserializeOwned>(&self) -> Result<T, ConfigError> {
        parse_toml(&self.path, &self.text)
    }
}

/// A duration string such as `"90s"` or `"10m"`, naming `key` on error.
pub fn duration(
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

/// A configuration file could not be read or does not say what prpd expects.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The file exists but could not be read.
    #[error("failed to read {}", path.display())]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// The file was read but its contents are wrong at a known place.
    #[error("{}:{line}:{column}: {message}", path.display())]
    Invalid {
        path: PathBuf,
        line: usize,
        column: usize,
        message: String,
    },
    /// The file is wrong as a whole (for example, it is empty).
    #[error("{}: {message}", path.display())]
    Whole { path: PathBuf, message: String },
}

impl ConfigError {
    /// An error about `needle` in `text`: the line is the first line that contains `needle`
    /// (line 1 when it does not occur, which only happens for generated text).
    pub fn at(path: &Path, text: &str, needle: &str, message: impl Into<String>) -> ConfigError {
        let line = text
            .lines()
            .position(|line| line.contains(needle))
            .map_or(1, |index| index + 1);
        let column = text
            .lines()
            .nth(line - 1)
            .and_then(|line| line.find(needle))
            .map_or(1, |index| index + 1);
        ConfigError::Invalid {
            path: path.to_path_buf(),
            line,
            column,
            message: message.into(),
        }
    }

    /// An error about `key` of the TOML table `table` (`"[ship]"`, `"[memory.mcp]"`): on the
    /// line that sets it inside that table (the same word may occur earlier, in another table
    /// or a comment), else on the table's header, else where the key first occurs.
    pub fn at_key(
        path: &Path,
        text: &str,
        table: &str,
        key: &str,
        message: impl Into<String>,
    ) -> ConfigError {
        let mut in_table = false;
        let mut header = None;
        for (index, line) in text.lines().enumerate() {
            let trimmed = line.trim_start();
            if trimmed.starts_with('[') {
                in_table = trimmed.trim_end() == table;
                if in_table {
                    header = Some(index);
                }
                continue;
            }
            let sets_key = trimmed
                .strip_prefix(key)
                .is_some_and(|rest| rest.trim_start().starts_with('='));
            if in_table && sets_key {
                return ConfigError::Invalid {
                    path: path.to_path_buf(),
                    line: index + 1,
                    column: line.len() - trimmed.len() + 1,
                    message: message.into(),
                };
            }
        }
        match header {
            Some(index) => ConfigError::Invalid {
                path: path.to_path_buf(),
                line: index + 1,
                column: 1,
                message: message.into(),
            },
            None => ConfigError::at(path, text, key, message),
        }
    }
}

/// Reads a file into a string, naming the file when that fails.
pub fn read(path: &Path) -> Result<String, ConfigError> {
    std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
        path: path.to_path_buf(),
        source,
    })
}

/// Parses YAML text into `T`; `path` is only used to name the file in errors.
pub fn parse_yaml<T: DeserializeOwned>(path: &Path, text: &str) -> Result<T, ConfigError> {
    if text.trim().is_empty() {
        return Err(ConfigError::Whole {
            path: path.to_path_buf(),
            message: "the file is empty; expected a YAML mapping".to_owned(),
        });
    }
    yaml_serde::from_str(text).map_err(|error| {
        let (line, column) = error
            .location()
            .map_or((1, 1), |location| (location.line(), location.column()));
        ConfigError::Invalid {
            path: path.to_path_buf(),
            line,
            column,
            message: strip_location(&error.to_string()),
        }
    })
}

/// Parses TOML text into `T`; `path` is only used to name the file in errors.
pub fn parse_toml<T: DeserializeOwned>(path: &Path, text: &str) -> Result<T, ConfigError> {
    toml::from_str(text).map_err(|error| {
        let (line, column) = error
            .span()
            .map_or((1, 1), |span| line_and_column(text, span.start));
        ConfigError::Invalid {
            path: path.to_path_buf(),
            line,
            column,
            message: error.message().trim().to_owned(),
        }
    })
}

/// The 1-based line and column of byte `offset` in `text`.
pub fn line_and_column(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let column = before
        .rfind('\n')
        .map_or(before.len(), |newline| before.len() - newline - 1)
        + 1;
    (line, column)
}

/// YAML messages end with " at line L column C"; the location is printed by us already.
fn strip_location(message: &str) -> String {
    match message.find(" at line ") {
        Some(index) => message[..index].to_owned(),
        None => message.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    #[expect(dead_code, reason = "the fields only exist to be deserialized")]
    struct Sample {
        name: String,
        count: Option<u32>,
    }

    #[test]
    fn yaml_unknown_key_names_line_and_allowed_keys() {
        let error = parse_yaml::<Sample>(Path::new("x.yml"), "name: a\ncolour: red\n")
            .expect_err("unknown key");
        let message = error.to_string();
        assert!(message.starts_with("x.yml:2:"), "{message}");
        assert!(message.contains("unknown field `colour`"), "{message}");
        assert!(message.contains("expected `name` or `count`"), "{message}");
        assert!(!message.contains(" at line "), "{message}");
    }

    #[test]
    fn toml_type_error_names_line() {
        let error = parse_toml::<Sample>(Path::new("p.toml"), "name = \"a\"\ncount = \"x\"\n")
            .expect_err("wrong type");
        assert!(error.to_string().starts_with("p.toml:2:"), "{error}");
    }

    #[test]
    fn empty_yaml_is_a_whole_file_error() {
        let error = parse_yaml::<Sample>(Path::new("e.yml"), "  \n").expect_err("empty");
        assert_eq!(
            error.to_string(),
            "e.yml: the file is empty; expected a YAML mapping"
        );
    }

    #[test]
    fn at_finds_the_line_of_the_needle() {
        let error = ConfigError::at(Path::new("c.yml"), "a: 1\n  id: F9\n", "F9", "duplicate id");
        assert_eq!(error.to_string(), "c.yml:2:7: duplicate id");
    }
}
