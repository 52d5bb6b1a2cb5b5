//! How a repository's settings are laid over the built-in checklist, so a project adjusts one
//! check without copying the file and still gets the checks prpd adds later.
//!
//! Precedence, highest first: `prpd.toml` `[checks.<ID>]` ([`Checklist::adjust`]), then the
//! repository's `qa-checklist.yml` ([`over`]), then the built-in checklist. A check with a
//! built-in id changes only the fields it names (listed under another section, it moves
//! there); a new id is added to its section and must say everything a check needs. A file with
//! `replace_builtin: true` is the whole checklist instead, and never comes here.

use std::path::Path;

use crate::config::CheckSetting;
use prpd_base::config_file::ConfigError;

use super::{
    Action, Checklist, RawFile, Validation, action_of, disabled_of, new_check, severity,
    timeout_of, validation_of,
};

/// `file` (the repository's checklist at `path`, text `text`) laid over `builtin`.
pub(super) fn over(
    builtin: Checklist,
    path: &Path,
    text: &str,
    file: RawFile,
) -> Result<Checklist, ConfigError> {
    let Checklist {
        version: builtin_version,
        mut checks,
    } = builtin;
    let version = file.qa_checklist.version.clone().unwrap_or(builtin_version);
    for (category, raw) in file.entries() {
        let Some(index) = checks.iter().position(|check| check.id == raw.id) else {
            checks.push(new_check(
                path,
                text,
                category,
                &raw,
                " and is not a built-in check",
            )?);
            continue;
        };
        let check = &mut checks[index];
        check.category = category;
        if let Some(criterion) = raw.criterio.clone() {
            check.criterion = criterion;
        }
        if let Some(validation) = validation_of(path, text, &raw)? {
            check.validation = validation;
        }
        if let Some(action) = action_of(path, text, &raw)? {
            check.action = action;
        }
        if let Some(blocking) = raw.blocking {
            check.severity = severity(blocking);
        }
        if let Some(optional) = raw.optional {
            check.optional = optional;
        }
        if let Some(timeout) = timeout_of(path, text, &raw)? {
            check.timeout = Some(timeout);
        }
        if let Some(note) = disabled_of(path, text, &raw)? {
            check.disabled = Some(note);
        }
    }
    checks.sort_by_key(|check| check.category);
    Ok(Checklist { version, checks })
}

impl Checklist {
    /// Applies `prpd.toml`'s `[checks.<ID>]` settings, which win over every checklist file. An
    /// id the checklist does not have, or a validation expression that does not parse, is an
    /// error at the line of the setting.
    pub fn adjust(&mut self, settings: &[CheckSetting]) -> Result<(), ConfigError> {
        for setting in settings {
            let id = &setting.id.value;
            let Some(check) = self.checks.iter_mut().find(|check| check.id == *id) else {
                let known: Vec<&str> = self.checks.iter().map(|check| check.id.as_str()).collect();
                return Err(setting.id.place.error(format!(
                    "[checks.{id}]: the checklist has no check `{id}`; expected one of {}",
                    known.join(", ")
                )));
            };
            if let Some(blocking) = setting.blocking {
                check.severity = severity(blocking);
            }
            if let Some(optional) = setting.optional {
                check.optional = optional;
            }
            if let Some(command) = &setting.command {
                check.action = Action::Command(command.value.clone());
            }
            if let Some(validation) = &setting.validation {
                check.validation = Validation::parse(&validation.value).map_err(|error| {
                    validation.place.error(format!(
                        "`checks.{id}.validation`: invalid validation expression: {error}"
                    ))
                })?;
            }
            if let Some(timeout) = setting.timeout {
                check.timeout = Some(timeout);
            }
            if let Some(reason) = &setting.disabled {
                check.disabled = Some(format!("disabled in prpd.toml: {reason}"));
            }
            if setting.enabled {
                check.disabled = None;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;
    use std::time::Duration;

    use crate::checklist::{Action, Category, Checklist, Severity};
    use crate::config::QaSettings;
    use crate::method::Method;

    fn over(text: &str) -> Result<Checklist, String> {
        Checklist::over_builtin(Path::new("qa-checklist.yml"), text)
            .map_err(|error| error.to_string())
    }

    #[test]
    fn a_repository_checklist_changes_built_in_checks_and_adds_its_own() {
        let checklist = over(
            "qa_checklist:\n  documentation:\n    - id: D5\n      blocking: false\n    - id: D2\n      disabled: we record decisions in the wiki\n  code_quality:\n    - id: L2\n      criterion: no print statements\n      validation: exit_code == 0\n      command: \"! grep -rn print src\"\n    - id: F3\n      optional: false\n",
        )
        .expect("valid");
        let builtin = Checklist::builtin();
        assert_eq!(checklist.version, builtin.version);
        let ids: Vec<&str> = checklist
            .checks
            .iter()
            .map(|check| check.id.as_str())
            .collect();
        assert_eq!(
            ids,
            [
                "F1", "F2", "F3", "C1", "C2", "C3", "C5", "C6", "C7", "L2", "D1", "D2", "D3", "D4",
                "D5"
            ]
        );
        let find = |id: &str| {
            checklist
                .checks
                .iter()
                .find(|check| check.id == id)
                .expect("check present")
        };
        let changelog = find("D5");
        assert_eq!(changelog.severity, Severity::Warning);
        assert_eq!(changelog.action, Action::Method(Method::GrepChangelog));
        assert_eq!(
            find("D2").disabled.as_deref(),
            Some("disabled in qa-checklist.yml: we record decisions in the wiki")
        );
        let build = find("F3");
        assert_eq!(build.category, Category::CodeQuality);
        assert!(!build.optional);
        assert_eq!(build.placeholders(), vec!["build"]);
        assert_eq!(find("L2").severity, Severity::Blocking);
        assert_eq!(find("F1"), &builtin.checks[0]);
    }

    #[test]
    fn replace_builtin_makes_the_file_the_whole_checklist() {
        let checklist = over(
            "qa_checklist:\n  replace_builtin: true\n  functionality:\n    - id: T1\n      criterion: tests\n      validation: exit_code == 0\n      command: make test\n",
        )
        .expect("valid");
        assert_eq!(checklist.checks.len(), 1);
        assert_eq!(checklist.checks[0].id, "T1");
    }

    #[test]
    fn a_new_check_must_say_everything() {
        assert_eq!(
            over("qa_checklist:\n  functionality:\n    - id: T9\n      command: make it\n")
                .expect_err("no criterion"),
            "qa-checklist.yml:3:7: check `T9` has no `criterio` and is not a built-in check; expected what it verifies (`criterion`)"
        );
        assert_eq!(
            over("qa_checklist:\n  functionality:\n    - id: T9\n      criterion: x\n      validation: exit_code == 0\n")
                .expect_err("no action"),
            "qa-checklist.yml:3:7: check `T9` has neither `comando` (command) nor `metodo` (method) and is not a built-in check; expected exactly one of them"
        );
        assert_eq!(
            over("qa_checklist:\n  functionality:\n    - id: F1\n      validation: exit_code ==\n")
                .expect_err("bad expression"),
            "qa-checklist.yml:4:19: check `F1`: invalid validation expression: expected a number after `exit_code ==`, found the end (at character 13 of `exit_code ==`)"
        );
    }

    fn config(text: &str) -> QaSettings {
        QaSettings::parse(Path::new("prpd.toml"), text).expect("valid prpd.toml")
    }

    #[test]
    fn prpd_toml_settings_win_over_every_checklist() {
        let mut checklist =
            over("qa_checklist:\n  functionality:\n    - id: F1\n      timeout: 1m\n")
                .expect("valid");
        let settings = config(
            "[checks.F1]\ncommand = \"make check\"\nvalidation = \"tests_failed == 0\"\ntimeout = \"20m\"\nblocking = true\n\n[checks.D2]\ndisabled = \"no ADRs here\"\noptional = false\n",
        );
        checklist
            .adjust(&settings.gate.checks)
            .expect("valid settings");
        let tests = &checklist.checks[0];
        assert_eq!(tests.action, Action::Command("make check".to_owned()));
        assert_eq!(tests.validation.source(), "tests_failed == 0");
        assert_eq!(tests.timeout, Some(Duration::from_secs(20 * 60)));
        let adr = checklist
            .checks
            .iter()
            .find(|check| check.id == "D2")
            .expect("D2");
        assert_eq!(
            adr.disabled.as_deref(),
            Some("disabled in prpd.toml: no ADRs here")
        );
        assert!(!adr.optional);
    }

    #[test]
    fn the_mutation_check_is_off_until_prpd_toml_enables_it() {
        let mut checklist = Checklist::builtin();
        let mutation = |checklist: &Checklist| {
            checklist
                .checks
                .iter()
                .find(|check| check.id == "C7")
                .cloned()
                .expect("C7")
        };
        let off = mutation(&checklist);
        assert_eq!(off.action, Action::Mutation);
        assert_eq!(off.severity, Severity::Warning);
        assert!(
            off.disabled
                .as_deref()
                .is_some_and(|note| note.contains("enabled = true")),
            "{off:?}"
        );
        checklist
            .adjust(
                &config("[checks.C7]\nenabled = true\nblocking = true\nvalidation = \"mutation_score >= 80%\"\n")
                    .gate
                    .checks,
            )
            .expect("valid settings");
        let on = mutation(&checklist);
        assert_eq!(on.disabled, None);
        assert_eq!(on.severity, Severity::Blocking);
        assert_eq!(on.validation.source(), "mutation_score >= 80%");
    }

    #[test]
    fn prpd_toml_settings_for_unknown_checks_or_bad_expressions_are_located() {
        let mut checklist = Checklist::builtin();
        let error = checklist
            .adjust(
                &config("[qa]\njobs = 2\n\n[checks.X9]\nblocking = false\n")
                    .gate
                    .checks,
            )
            .expect_err("unknown id")
            .to_string();
        assert!(
            error.starts_with(
                "prpd.toml:4:9: [checks.X9]: the checklist has no check `X9`; expected one of F1, F2, F3, C1"
            ),
            "{error}"
        );
        let error = checklist
            .adjust(
                &config("[checks.C1]\nvalidacao = \"lint_errors <\"\n")
                    .gate
                    .checks,
            )
            .expect_err("bad expression")
            .to_string();
        assert!(
            error.starts_with(
                "prpd.toml:2:13: `checks.C1.validation`: invalid validation expression"
            ),
            "{error}"
        );
    }
}
