//! What a tool's own configuration makes a command do. `ruff check .` only reports, unless the
//! project's ruff configuration says `fix = true`: then the very same command rewrites files.
//! [`super::is_safe`] judges command text, so discovery reads these settings too.
//!
//! ruff takes its settings from the closest `.ruff.toml`, `ruff.toml` or `pyproject.toml` with
//! a `[tool.ruff]` table, walking up from the directory it runs in; prpd does the same, from
//! the directory a command runs in up to the repository root. A command prpd writes itself
//! (a CI line, a tool default) gets `--no-fix`; a script or recipe that runs `ruff check`,
//! which prpd cannot change, is refused.

use std::path::Path;

use toml::{Table, Value};

use super::{DetectError, Directory};
use crate::safety::{Unsafe, segments};
use prpd_base::config_file::parse_toml;

/// ruff's configuration files, in the order ruff prefers them within one directory.
const RUFF_FILES: &[&str] = &[".ruff.toml", "ruff.toml", "pyproject.toml"];

/// The settings of the project's tools that change what a command does.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct ToolConfig {
    /// The file that sets ruff's `fix = true`, as sources name it (`pyproject.toml`).
    ruff_fix: Option<String>,
}

impl ToolConfig {
    /// The settings that apply to commands run from `directory`.
    pub(super) fn read(directory: &Directory<'_>) -> Result<ToolConfig, DetectError> {
        let relative = directory.relative();
        let mut levels: Vec<&Path> = relative
            .ancestors()
            .filter(|level| !level.as_os_str().is_empty() && *level != Path::new("."))
            .collect();
        levels.push(Path::new("."));
        for level in levels {
            let level = Directory::new(directory.repo(), level);
            for name in RUFF_FILES {
                let Some(text) = level.read(name)? else {
                    continue;
                };
                let table: Table =
                    parse_toml(&level.path(name), &text).map_err(DetectError::Malformed)?;
                let ruff = if *name == "pyproject.toml" {
                    match table.get("tool").and_then(|tool| tool.get("ruff")) {
                        Some(Value::Table(ruff)) => ruff.clone(),
                        Some(_) | None => continue,
                    }
                } else {
                    table
                };
                let fixes = ruff.get("fix").and_then(Value::as_bool) == Some(true);
                return Ok(ToolConfig {
                    ruff_fix: fixes.then(|| level.display(name)),
                });
            }
        }
        Ok(ToolConfig::default())
    }

    /// `command`, written by prpd, made report-only under this configuration: `ruff check`
    /// gets `--no-fix` when ruff is configured to fix.
    pub(super) fn adjust(&self, command: &str) -> String {
        if self.ruff_fix.is_none() {
            return command.to_owned();
        }
        let words: Vec<&str> = command.split(' ').collect();
        let mut adjusted = Vec::with_capacity(words.len() + 1);
        for (index, word) in words.iter().enumerate() {
            adjusted.push(*word);
            let after_ruff_check = *word == "check" && index > 0 && is_ruff(words[index - 1]);
            let legacy_ruff = is_ruff(word)
                && words
                    .get(index + 1)
                    .is_some_and(|next| *next != "check" && !is_subcommand(next));
            if (after_ruff_check || legacy_ruff) && !has_no_fix(&words[index..]) {
                adjusted.push("--no-fix");
            }
        }
        adjusted.join(" ")
    }

    /// Refuses `judged` (a script or recipe prpd cannot change) when it runs `ruff check`
    /// without `--no-fix` under a configuration that fixes.
    pub(super) fn judge(&self, judged: &str) -> Result<(), Unsafe> {
        let Some(file) = &self.ruff_fix else {
            return Ok(());
        };
        for segment in segments(judged) {
            let words = segment.words();
            let Some(position) = words.iter().position(|word| is_ruff(word)) else {
                continue;
            };
            let subcommand = words.get(position + 1).copied();
            let checks = match subcommand {
                Some("check") | None => true,
                Some(word) => !is_subcommand(word),
            };
            if checks && !has_no_fix(&words[position..]) {
                return Err(Unsafe(format!(
                    "rewrites files (`ruff check` with `fix = true` in {file})"
                )));
            }
        }
        Ok(())
    }
}

/// Whether `word` names the ruff program.
fn is_ruff(word: &str) -> bool {
    word.rsplit('/').next() == Some("ruff")
}

/// ruff subcommands other than `check`, which never fix.
fn is_subcommand(word: &str) -> bool {
    matches!(
        word,
        "format"
            | "rule"
            | "config"
            | "linter"
            | "clean"
            | "version"
            | "help"
            | "server"
            | "analyze"
    )
}

fn has_no_fix(words: &[&str]) -> bool {
    words.contains(&"--no-fix")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config_of(files: &[(&str, &str)], relative: &str) -> ToolConfig {
        let dir = tempfile::tempdir().expect("temp dir");
        for (name, text) in files {
            let path = dir.path().join(name);
            std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
            std::fs::write(path, text).expect("write");
        }
        std::fs::create_dir_all(dir.path().join(relative)).expect("mkdir");
        ToolConfig::read(&Directory::new(dir.path(), Path::new(relative))).expect("readable")
    }

    type Case<'a> = (&'a [(&'a str, &'a str)], &'a str, ToolConfig);

    #[test]
    fn ruff_fix_is_read_from_the_closest_configuration() {
        let fixing = |file: &str| ToolConfig {
            ruff_fix: Some(file.to_owned()),
        };
        let cases: &[Case<'_>] = &[
            (&[], ".", ToolConfig::default()),
            (
                &[("pyproject.toml", "[tool.ruff]\nfix = true\n")],
                ".",
                fixing("pyproject.toml"),
            ),
            (
                &[("ruff.toml", "fix = true\n")],
                "src/app",
                fixing("ruff.toml"),
            ),
            (
                &[
                    ("pyproject.toml", "[tool.ruff]\nfix = true\n"),
                    ("api/.ruff.toml", "line-length = 100\n"),
                ],
                "api",
                ToolConfig::default(),
            ),
            (
                &[
                    ("pyproject.toml", "[project]\nname = 'x'\n"),
                    ("api/pyproject.toml", "[tool.ruff]\nfix = true\n"),
                ],
                "api",
                fixing("api/pyproject.toml"),
            ),
            (
                &[("pyproject.toml", "[tool.ruff]\nfix = false\n")],
                ".",
                ToolConfig::default(),
            ),
        ];
        for (files, relative, expected) in cases {
            assert_eq!(
                &config_of(files, relative),
                expected,
                "{files:?} {relative}"
            );
        }
    }

    #[test]
    fn ruff_check_gets_no_fix_and_scripts_running_it_are_refused() {
        let config = ToolConfig {
            ruff_fix: Some("pyproject.toml".to_owned()),
        };
        assert_eq!(config.adjust("ruff check ."), "ruff check --no-fix .");
        assert_eq!(
            config.adjust("uv run ruff check src && mypy ."),
            "uv run ruff check --no-fix src && mypy ."
        );
        assert_eq!(
            config.adjust("ruff check --no-fix ."),
            "ruff check --no-fix ."
        );
        assert_eq!(
            config.adjust("ruff format --check ."),
            "ruff format --check ."
        );
        assert_eq!(config.adjust("ruff src"), "ruff --no-fix src");
        assert_eq!(
            config.judge("ruff check ."),
            Err(Unsafe(
                "rewrites files (`ruff check` with `fix = true` in pyproject.toml)".to_owned()
            ))
        );
        assert_eq!(config.judge("ruff check --no-fix ."), Ok(()));
        assert_eq!(config.judge("ruff format --check ."), Ok(()));
        assert_eq!(ToolConfig::default().judge("ruff check ."), Ok(()));
        assert_eq!(ToolConfig::default().adjust("ruff check ."), "ruff check .");
    }
}
