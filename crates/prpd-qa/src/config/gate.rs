//! `[commands]` and `[checks.<ID>]` of `prpd.toml`: how a repository adjusts its QA gate
//! without copying the checklist or the tools mapping. `[commands]` names the command of a kind
//! (test, lint, …) and wins over discovery; `[checks.<ID>]` changes one check of the checklist
//! (`blocking`, `optional`, `command`, `validation`, `timeout`), switches it off with
//! `disabled = "<reason>"`, or on with `enabled = true` (a check the checklist ships switched
//! off, such as the mutation check C7).
//!
//! Only the shape is checked here. Whether a check id exists, a validation expression parses or
//! a command is safe for QA to run is the QA gate's to judge, so every setting keeps the place
//! it was written ([`Place`]) and the gate can name the file and line of the one it refuses.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;
use toml::Spanned;

use prpd_base::config_file::{ConfigError, line_and_column};

/// Where a setting was written: the file, line and column of its value (or its key).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Place {
    pub path: PathBuf,
    pub line: usize,
    pub column: usize,
}

impl Place {
    fn of<T>(path: &Path, text: &str, spanned: &Spanned<T>) -> Place {
        let (line, column) = line_and_column(text, spanned.span().start);
        Place {
            path: path.to_path_buf(),
            line,
            column,
        }
    }

    /// An error about the setting written here.
    pub fn error(&self, message: impl Into<String>) -> ConfigError {
        ConfigError::Invalid {
            path: self.path.clone(),
            line: self.line,
            column: self.column,
            message: message.into(),
        }
    }
}

/// A value and where it was written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Located<T> {
    pub value: T,
    pub place: Place,
}

/// What `prpd.toml` says about the QA gate; empty when it says nothing.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct GateSettings {
    /// `[commands]`: the command of a kind, by the kind's name (`test`, `format_check`, …),
    /// in the order of [`COMMAND_KINDS`].
    pub commands: Vec<CommandSetting>,
    /// `[checks.<ID>]`, by id.
    pub checks: Vec<CheckSetting>,
}

/// The kinds `[commands]` accepts; the same names as the checklist's
/// `{detected_<kind>_command}` placeholders.
pub const COMMAND_KINDS: [&str; 7] = [
    "test",
    "lint",
    "typecheck",
    "build",
    "format_check",
    "complexity",
    "duplication",
];

/// One line of `[commands]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandSetting {
    /// One of [`COMMAND_KINDS`].
    pub kind: &'static str,
    /// The shell command, run from the repository root.
    pub command: Located<String>,
}

/// One `[checks.<ID>]` table: only what it sets is `Some`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckSetting {
    /// The check's id, where the table names it.
    pub id: Located<String>,
    pub blocking: Option<bool>,
    pub optional: Option<bool>,
    pub command: Option<Located<String>>,
    pub validation: Option<Located<String>>,
    pub timeout: Option<Duration>,
    /// `disabled = "<reason>"`: the check does not run and the report prints the reason.
    pub disabled: Option<String>,
    /// `enabled = true`: the check runs even though the checklist switches it off.
    pub enabled: bool,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawCommands {
    test: Option<Spanned<String>>,
    lint: Option<Spanned<String>>,
    typecheck: Option<Spanned<String>>,
    build: Option<Spanned<String>>,
    format_check: Option<Spanned<String>>,
    complexity: Option<Spanned<String>>,
    duplication: Option<Spanned<String>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawCheck {
    blocking: Option<bool>,
    optional: Option<bool>,
    #[serde(alias = "comando")]
    command: Option<Spanned<String>>,
    #[serde(alias = "validacao")]
    validation: Option<Spanned<String>>,
    timeout: Option<Spanned<String>>,
    disabled: Option<Spanned<String>>,
    enabled: Option<Spanned<bool>>,
}

/// `[checks]` as written: its ids with their places.
pub(super) type RawChecks = BTreeMap<Spanned<String>, RawCheck>;

/// Validates the shape of `[commands]` and `[checks]`.
pub(super) fn settings(
    path: &Path,
    text: &str,
    commands: Option<RawCommands>,
    checks: Option<RawChecks>,
) -> Result<GateSettings, ConfigError> {
    let RawCommands {
        test,
        lint,
        typecheck,
        build,
        format_check,
        complexity,
        duplication,
    } = commands.unwrap_or_default();
    let mut command_settings = Vec::new();
    for (kind, command) in COMMAND_KINDS.into_iter().zip([
        test,
        lint,
        typecheck,
        build,
        format_check,
        complexity,
        duplication,
    ]) {
        if let Some(command) = command {
            let command = non_empty(
                path,
                text,
                command,
                &format!(
                    "`commands.{kind}` is empty; expected a shell command, or leave the key out to keep the discovered one"
                ),
            )?;
            command_settings.push(CommandSetting { kind, command });
        }
    }
    let mut check_settings = Vec::new();
    for (id, raw) in checks.unwrap_or_default() {
        let place = Place::of(path, text, &id);
        let name = id.into_inner();
        let command = raw
            .command
            .map(|command| {
                non_empty(
                    path,
                    text,
                    command,
                    &format!("`checks.{name}.command` is empty; expected a shell command"),
                )
            })
            .transpose()?;
        let validation = raw
            .validation
            .map(|validation| {
                non_empty(
                    path,
                    text,
                    validation,
                    &format!("`checks.{name}.validation` is empty; expected an expression such as \"exit_code == 0\""),
                )
            })
            .transpose()?;
        let enabled = enabled(path, text, &name, raw.enabled, raw.disabled.is_some())?;
        let disabled = raw
            .disabled
            .map(|reason| {
                non_empty(
                    path,
                    text,
                    reason,
                    &format!("`checks.{name}.disabled` is empty; expected the reason the check is off, which the report prints"),
                )
            })
            .transpose()?
            .map(|reason| reason.value);
        let timeout = raw
            .timeout
            .map(|timeout| {
                let place = Place::of(path, text, &timeout);
                let value = timeout.into_inner();
                humantime::parse_duration(&value).map_err(|error| {
                    place.error(format!(
                        "`checks.{name}.timeout` = {value:?} is not a duration ({error}); expected e.g. \"90s\" or \"10m\""
                    ))
                })
            })
            .transpose()?;
        check_settings.push(CheckSetting {
            id: Located { value: name, place },
            blocking: raw.blocking,
            optional: raw.optional,
            command,
            validation,
            timeout,
            disabled,
            enabled,
        });
    }
    Ok(GateSettings {
        commands: command_settings,
        checks: check_settings,
    })
}

/// `enabled`: only `true` means something (it switches on a check the checklist switches off),
/// and never beside `disabled`.
fn enabled(
    path: &Path,
    text: &str,
    name: &str,
    enabled: Option<Spanned<bool>>,
    disabled: bool,
) -> Result<bool, ConfigError> {
    let Some(enabled) = enabled else {
        return Ok(false);
    };
    let place = Place::of(path, text, &enabled);
    if !enabled.into_inner() {
        return Err(place.error(format!(
            "`checks.{name}.enabled = false` switches nothing off; expected `enabled = true`, or `disabled = \"<reason>\"` to switch the check off"
        )));
    }
    if disabled {
        return Err(place.error(format!(
            "`checks.{name}` has both `enabled` and `disabled`; expected one of them"
        )));
    }
    Ok(true)
}

fn non_empty(
    path: &Path,
    text: &str,
    value: Spanned<String>,
    message: &str,
) -> Result<Located<String>, ConfigError> {
    let place = Place::of(path, text, &value);
    let value = value.into_inner();
    if value.trim().is_empty() {
        return Err(place.error(message));
    }
    Ok(Located { value, place })
}

#[cfg(test)]
mod tests {
    use std::path::Path;
    use std::time::Duration;

    use crate::config::QaSettings;

    fn parse(text: &str) -> Result<QaSettings, String> {
        QaSettings::parse(Path::new("prpd.toml"), text).map_err(|error| error.to_string())
    }

    #[test]
    fn commands_and_checks_are_read_with_their_places() {
        let config = parse(
            "[commands]\ntest = \"make check\"\nformat_check = \"black --check .\"\n\n[checks.D2]\ndisabled = \"we keep decisions in the wiki\"\n\n[checks.C1]\nblocking = false\nvalidacao = \"lint_errors == 0\"\ntimeout = \"2m\"\n",
        )
        .expect("valid");
        let gate = &config.gate;
        assert_eq!(gate.commands.len(), 2);
        assert_eq!(gate.commands[0].kind, "test");
        assert_eq!(gate.commands[0].command.value, "make check");
        assert_eq!(
            (
                gate.commands[0].command.place.line,
                gate.commands[0].command.place.column
            ),
            (2, 8)
        );
        assert_eq!(gate.commands[1].kind, "format_check");
        let ids: Vec<&str> = gate
            .checks
            .iter()
            .map(|check| check.id.value.as_str())
            .collect();
        assert_eq!(ids, ["C1", "D2"]);
        let lint = &gate.checks[0];
        assert_eq!(lint.id.place.line, 8);
        assert_eq!(lint.blocking, Some(false));
        assert_eq!(
            lint.validation
                .as_ref()
                .map(|validation| validation.value.as_str()),
            Some("lint_errors == 0")
        );
        assert_eq!(lint.timeout, Some(Duration::from_secs(120)));
        assert_eq!(
            gate.checks[1].disabled.as_deref(),
            Some("we keep decisions in the wiki")
        );
        assert_eq!(gate.checks[1].id.place.line, 5);
    }

    #[test]
    fn bad_settings_name_the_line_and_what_was_expected() {
        let cases = [
            (
                "[commands]\ntests = \"pytest\"\n",
                "prpd.toml:2:1: unknown field `tests`, expected one of `test`, `lint`, `typecheck`, `build`, `format_check`, `complexity`, `duplication`",
            ),
            (
                "[commands]\nlint = \"  \"\n",
                "prpd.toml:2:8: `commands.lint` is empty; expected a shell command, or leave the key out to keep the discovered one",
            ),
            (
                "[checks.F1]\nblock = false\n",
                "prpd.toml:2:1: unknown field `block`, expected one of `blocking`, `optional`, `comando`, `command`, `validacao`, `validation`, `timeout`, `disabled`, `enabled`",
            ),
            (
                "[checks.C7]\nenabled = false\n",
                "prpd.toml:2:11: `checks.C7.enabled = false` switches nothing off; expected `enabled = true`, or `disabled = \"<reason>\"` to switch the check off",
            ),
            (
                "[checks.C7]\ndisabled = \"slow\"\nenabled = true\n",
                "prpd.toml:3:11: `checks.C7` has both `enabled` and `disabled`; expected one of them",
            ),
            (
                "[checks.D5]\ndisabled = \"\"\n",
                "prpd.toml:2:12: `checks.D5.disabled` is empty; expected the reason the check is off, which the report prints",
            ),
            (
                "[checks.F1]\ntimeout = \"later\"\n",
                "prpd.toml:2:11: `checks.F1.timeout` = \"later\" is not a duration (expected number at 0); expected e.g. \"90s\" or \"10m\"",
            ),
            (
                "[checks.F1]\nblocking = \"no\"\n",
                "prpd.toml:2:12: invalid type: string \"no\", expected a boolean",
            ),
        ];
        for (text, expected) in cases {
            assert_eq!(parse(text).expect_err(text), expected, "{text}");
        }
    }
}
