//! The QA checklist (`qa-checklist.yml`): which checks QA runs, how each one is measured (a
//! command or a built-in method), the expression its figures must satisfy, and whether a
//! failure blocks shipping or is only a warning.
//!
//! The built-in checklist is the commented `qa-checklist.yml` at the root of prpd's repository,
//! compiled in. A target repository's own `qa-checklist.yml` is laid over it check by check
//! (`checklist/merge.rs`), or replaces it with `replace_builtin: true`; `prpd.toml`'s
//! `[checks.<ID>]` then has the last word ([`Checklist::adjust`]). A file is parsed into raw serde structs that reject unknown keys, then validated once into
//! [`Checklist`]: every check has exactly one of command and method, ids are unique, method
//! names and validation expressions are known to work, so QA never meets a bad check mid-run.
//!
//! The validation expressions themselves, their grammar and their three-valued evaluation
//! are in `checklist/expression.rs`.

use std::collections::BTreeSet;
use std::fmt;
use std::path::Path;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::method::Method;
use prpd_base::config_file::{ConfigError, parse_yaml, read};

mod expression;
mod merge;

pub use expression::{Evaluation, ExpressionError, Validation};

/// The built-in checklist's text, used when a repository has no `qa-checklist.yml`.
pub const BUILTIN_TEXT: &str = include_str!("../../../qa-checklist.yml");

/// The file name a repository uses to adjust (or replace) the built-in checklist.
pub const FILE_NAME: &str = "qa-checklist.yml";

/// A validated checklist.
#[derive(Debug, Clone, PartialEq)]
pub struct Checklist {
    /// The file's `version`, for the report.
    pub version: String,
    /// The checks in file order: functionality, then code quality, then documentation.
    pub checks: Vec<CheckSpec>,
}

/// One check of the checklist.
#[derive(Debug, Clone, PartialEq)]
pub struct CheckSpec {
    /// Its id, unique in the checklist (`F1`, `C2`, …).
    pub id: String,
    /// The section it was listed under.
    pub category: Category,
    /// What it verifies, in the user's words (`criterio`).
    pub criterion: String,
    /// The expression its figures must satisfy (`validacao`).
    pub validation: Validation,
    /// How its figures are produced.
    pub action: Action,
    /// Whether a failure blocks shipping.
    pub severity: Severity,
    /// Skip (with a note) instead of failing when the check does not apply to the repository:
    /// no command was discovered for its placeholder, or its method says it is not applicable.
    pub optional: bool,
    /// Its own time limit; `None` means QA's default.
    pub timeout: Option<Duration>,
    /// Switched off by the repository: the note the report prints instead of a result
    /// (`disabled in prpd.toml: <reason>`). A disabled check never counts as passed.
    pub disabled: Option<String>,
}

/// The three sections of the checklist, as in the seed's report.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Category {
    /// `funcionalidade`: tests and acceptance criteria.
    Functionality,
    /// `qualidade_codigo`: lint, complexity, duplication, types, build.
    CodeQuality,
    /// `documentacao`: README, ADR, API docs, CHANGELOG.
    Documentation,
}

impl fmt::Display for Category {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str(match self {
            Category::Functionality => "Functionality",
            Category::CodeQuality => "Code Quality",
            Category::Documentation => "Documentation",
        })
    }
}

/// What a failed check means for the verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    /// `blocking: true`: a failure makes the verdict REJECT.
    Blocking,
    /// `blocking: false`: a failure is reported as a warning.
    Warning,
}

/// How a check's figures are produced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    /// A shell command; `{detected_<kind>_command}` placeholders are still in the text.
    Command(String),
    /// A built-in method, run in-process.
    Method(Method),
    /// `metodo: mutation_testing`: the installed mutation tools on the lines the change
    /// touched (see [`crate::mutation`]); unlike a method, it starts processes.
    Mutation,
}

impl CheckSpec {
    /// The kinds of the `{detected_<kind>_command}` placeholders in the check's command, in
    /// order (`["test"]` for `{detected_test_command}`); empty for methods.
    pub fn placeholders(&self) -> Vec<&str> {
        match &self.action {
            Action::Command(command) => command
                .split('{')
                .skip(1)
                .filter_map(|rest| rest.split_once('}'))
                .filter_map(|(inside, _)| {
                    inside.strip_prefix("detected_")?.strip_suffix("_command")
                })
                .collect(),
            Action::Method(_) | Action::Mutation => Vec::new(),
        }
    }
}

impl Checklist {
    /// The checklist compiled into prpd.
    pub fn builtin() -> Checklist {
        // The built-in file is fixed at compile time and a unit test parses it.
        Checklist::parse(Path::new("qa-checklist.yml (built-in)"), BUILTIN_TEXT)
            .expect("the built-in qa-checklist.yml is valid")
    }

    /// The built-in checklist with the repository's `qa-checklist.yml` laid over it (or in its
    /// place, when the file says `replace_builtin: true`); the built-in one when there is none.
    pub fn load(repo: &Path) -> Result<Checklist, ConfigError> {
        let path = repo.join(FILE_NAME);
        if !path.is_file() {
            return Ok(Checklist::builtin());
        }
        let text = read(&path)?;
        Checklist::over_builtin(&path, &text)
    }

    /// A repository's checklist text laid over the built-in checklist: a check with a built-in
    /// id changes the fields it names, a new id is added to its section (see `checklist/merge.rs`).
    pub fn over_builtin(path: &Path, text: &str) -> Result<Checklist, ConfigError> {
        let file = RawFile::read(path, text)?;
        if file.qa_checklist.replace_builtin == Some(true) {
            return Checklist::complete(path, text, file);
        }
        merge::over(Checklist::builtin(), path, text, file)
    }

    /// The checks of one category (the DOCUMENT phase's gate uses the documentation checks).
    #[must_use]
    pub fn only(&self, category: Category) -> Checklist {
        Checklist {
            version: self.version.clone(),
            checks: self
                .checks
                .iter()
                .filter(|check| check.category == category)
                .cloned()
                .collect(),
        }
    }

    /// Parses and validates a whole checklist (the built-in one, or a repository's that
    /// replaces it): every check says what it verifies, how, and what must hold.
    pub fn parse(path: &Path, text: &str) -> Result<Checklist, ConfigError> {
        let file = RawFile::read(path, text)?;
        Checklist::complete(path, text, file)
    }

    fn complete(path: &Path, text: &str, file: RawFile) -> Result<Checklist, ConfigError> {
        let RawChecklist { version, .. } = &file.qa_checklist;
        let version = version.clone().unwrap_or_else(|| "1".to_owned());
        let mut checks = Vec::new();
        for (category, raw_check) in file.entries() {
            checks.push(new_check(path, text, category, &raw_check, "")?);
        }
        if checks.is_empty() {
            return Err(ConfigError::at(
                path,
                text,
                "qa_checklist",
                "the checklist has no checks; expected a list under `funcionalidade`, \
                 `qualidade_codigo` or `documentacao`",
            ));
        }
        Ok(Checklist { version, checks })
    }
}

impl RawFile {
    /// Parses the file and refuses an id given twice, at the line of its second use.
    fn read(path: &Path, text: &str) -> Result<RawFile, ConfigError> {
        let raw: RawFile = parse_yaml(path, text)?;
        let mut seen = BTreeSet::new();
        for (_, raw_check) in raw.sections() {
            if !seen.insert(raw_check.id.as_str()) {
                return Err(error_at_id(
                    path,
                    text,
                    &raw_check.id,
                    1,
                    None,
                    format!(
                        "duplicate check id `{}`; every check needs its own id",
                        raw_check.id
                    ),
                ));
            }
        }
        Ok(raw)
    }

    /// The checks in file order, each with the section it was listed under.
    fn sections(&self) -> impl Iterator<Item = (Category, &RawCheck)> {
        let checklist = &self.qa_checklist;
        [
            (Category::Functionality, &checklist.funcionalidade),
            (Category::CodeQuality, &checklist.qualidade_codigo),
            (Category::Documentation, &checklist.documentacao),
        ]
        .into_iter()
        .flat_map(|(category, checks)| {
            checks
                .iter()
                .flatten()
                .map(move |raw_check| (category, raw_check))
        })
    }

    fn entries(self) -> impl Iterator<Item = (Category, RawCheck)> {
        let RawChecklist {
            funcionalidade,
            qualidade_codigo,
            documentacao,
            ..
        } = self.qa_checklist;
        [
            (Category::Functionality, funcionalidade),
            (Category::CodeQuality, qualidade_codigo),
            (Category::Documentation, documentacao),
        ]
        .into_iter()
        .flat_map(|(category, checks)| {
            checks
                .unwrap_or_default()
                .into_iter()
                .map(move |raw_check| (category, raw_check))
        })
    }
}

/// Turns one raw check that the checklist does not have yet into a [`CheckSpec`], reporting
/// the first problem at its line; `why` says why every field is needed, when it is not obvious.
fn new_check(
    path: &Path,
    text: &str,
    category: Category,
    raw: &RawCheck,
    why: &str,
) -> Result<CheckSpec, ConfigError> {
    let id = raw.id.clone();
    let missing = |field: &str, expected: &str| {
        error_at_id(
            path,
            text,
            &id,
            0,
            None,
            format!("check `{id}` has no `{field}`{why}; expected {expected}"),
        )
    };
    let Some(criterion) = raw.criterio.clone() else {
        return Err(missing("criterio", "what it verifies (`criterion`)"));
    };
    let Some(validation) = validation_of(path, text, raw)? else {
        return Err(missing(
            "validacao",
            "the expression its figures must satisfy (`validation`), such as `exit_code == 0`",
        ));
    };
    let Some(action) = action_of(path, text, raw)? else {
        return Err(error_at_id(
            path,
            text,
            &id,
            0,
            None,
            format!(
                "check `{id}` has neither `comando` (command) nor `metodo` (method){why}; \
                 expected exactly one of them"
            ),
        ));
    };
    Ok(CheckSpec {
        category,
        criterion,
        validation,
        action,
        severity: severity(raw.blocking.unwrap_or(true)),
        optional: raw.optional.unwrap_or(false),
        timeout: timeout_of(path, text, raw)?,
        disabled: disabled_of(path, text, raw)?,
        id,
    })
}

fn severity(blocking: bool) -> Severity {
    if blocking {
        Severity::Blocking
    } else {
        Severity::Warning
    }
}

/// The check's `comando` or `metodo`, when it names one.
fn action_of(path: &Path, text: &str, raw: &RawCheck) -> Result<Option<Action>, ConfigError> {
    let id = &raw.id;
    match (&raw.comando, &raw.metodo) {
        (Some(command), None) if !command.trim().is_empty() => {
            Ok(Some(Action::Command(command.clone())))
        }
        (Some(_), None) => Err(error_at_id(
            path,
            text,
            id,
            0,
            None,
            format!("check `{id}` has an empty `comando`; expected a shell command"),
        )),
        (None, Some(name)) if name.trim() == crate::mutation::METHOD_NAME => {
            Ok(Some(Action::Mutation))
        }
        (None, Some(name)) => match name.parse::<Method>() {
            Ok(method) => Ok(Some(Action::Method(method))),
            Err(error) => Err(error_at_id(
                path,
                text,
                id,
                0,
                Some(name),
                format!("check `{id}`: {error}"),
            )),
        },
        (Some(_), Some(_)) => Err(error_at_id(
            path,
            text,
            id,
            0,
            None,
            format!("check `{id}` has both `comando` and `metodo`; expected exactly one of them"),
        )),
        (None, None) => Ok(None),
    }
}

fn validation_of(
    path: &Path,
    text: &str,
    raw: &RawCheck,
) -> Result<Option<Validation>, ConfigError> {
    let id = &raw.id;
    raw.validacao
        .as_deref()
        .map(|source| {
            Validation::parse(source).map_err(|error| {
                error_at_id(
                    path,
                    text,
                    id,
                    0,
                    Some(source.trim()),
                    format!("check `{id}`: invalid validation expression: {error}"),
                )
            })
        })
        .transpose()
}

fn timeout_of(path: &Path, text: &str, raw: &RawCheck) -> Result<Option<Duration>, ConfigError> {
    let id = &raw.id;
    raw.timeout
        .as_deref()
        .map(|timeout| {
            humantime::parse_duration(timeout).map_err(|error| {
                error_at_id(
                    path,
                    text,
                    id,
                    0,
                    Some(timeout),
                    format!(
                        "check `{id}`: invalid timeout `{timeout}`: {error}; expected a duration \
                         such as \"90s\" or \"10m\""
                    ),
                )
            })
        })
        .transpose()
}

/// `disabled: "<reason>"`, as the note the report prints.
fn disabled_of(path: &Path, text: &str, raw: &RawCheck) -> Result<Option<String>, ConfigError> {
    let id = &raw.id;
    match raw.disabled.as_deref().map(str::trim) {
        None => Ok(None),
        Some("") => Err(error_at_id(
            path,
            text,
            id,
            0,
            Some("disabled"),
            format!(
                "check `{id}` has an empty `disabled`; expected the reason the check is off, \
                 which the report prints"
            ),
        )),
        Some(reason) => Ok(Some(format!("disabled in {}: {reason}", file_name(path)))),
    }
}

/// The file's name for notes in the report (`qa-checklist.yml`), without the repository's path.
fn file_name(path: &Path) -> String {
    path.file_name().map_or_else(
        || path.display().to_string(),
        |name| name.to_string_lossy().into_owned(),
    )
}

/// An error on the line of the `occurrence`-th (0-based) `id: <id>` entry, or, with a
/// `needle`, on the first line of that check's entry that contains it; so the message points
/// at the check and not at some comment or other check that mentions the same text.
fn error_at_id(
    path: &Path,
    text: &str,
    id: &str,
    occurrence: usize,
    needle: Option<&str>,
    message: String,
) -> ConfigError {
    let is_id_line = |line: &str| {
        let line = line.trim_start().trim_start_matches('-').trim_start();
        line.strip_prefix("id:").is_some_and(|value| {
            let value = value.split('#').next().unwrap_or("").trim();
            value.trim_matches(['"', '\'']) == id
        })
    };
    let lines: Vec<&str> = text.lines().collect();
    let Some(id_line) = (0..lines.len())
        .filter(|index| is_id_line(lines[*index]))
        .nth(occurrence)
    else {
        return ConfigError::at(path, text, needle.unwrap_or(id), message);
    };
    let in_entry = needle.and_then(|needle| {
        lines[id_line..]
            .iter()
            .enumerate()
            .take_while(|(offset, line)| *offset == 0 || !line.trim_start().starts_with("- "))
            .find_map(|(offset, line)| line.find(needle).map(|column| (id_line + offset, column)))
    });
    let (line, column) = in_entry.unwrap_or((id_line, lines[id_line].find("id:").unwrap_or(0)));
    ConfigError::Invalid {
        path: path.to_path_buf(),
        line: line + 1,
        column: column + 1,
        message,
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFile {
    qa_checklist: RawChecklist,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawChecklist {
    version: Option<String>,
    /// `true`: the file is the whole checklist; otherwise it is laid over the built-in one.
    replace_builtin: Option<bool>,
    #[serde(alias = "functionality")]
    funcionalidade: Option<Vec<RawCheck>>,
    #[serde(alias = "code_quality")]
    qualidade_codigo: Option<Vec<RawCheck>>,
    #[serde(alias = "documentation")]
    documentacao: Option<Vec<RawCheck>>,
}

/// Only `id` is required: a check that changes a built-in one names just what it changes; a
/// new check's missing fields are reported at its `id` line.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawCheck {
    id: String,
    #[serde(alias = "criterion")]
    criterio: Option<String>,
    #[serde(alias = "validation")]
    validacao: Option<String>,
    #[serde(alias = "command")]
    comando: Option<String>,
    #[serde(alias = "method")]
    metodo: Option<String>,
    blocking: Option<bool>,
    optional: Option<bool>,
    timeout: Option<String>,
    disabled: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtin_checklist_parses_with_the_seed_ids() {
        let checklist = Checklist::builtin();
        let ids: Vec<&str> = checklist
            .checks
            .iter()
            .map(|check| check.id.as_str())
            .collect();
        for id in ["F1", "F2", "C1", "C2", "C3", "D1", "D2", "D3", "D4", "D5"] {
            assert!(ids.contains(&id), "{id} missing from {ids:?}");
        }
        let f1 = &checklist.checks[0];
        assert_eq!(f1.id, "F1");
        assert_eq!(f1.category, Category::Functionality);
        assert_eq!(f1.severity, Severity::Blocking);
        assert_eq!(f1.placeholders(), vec!["test"]);
        let d3 = checklist
            .checks
            .iter()
            .find(|check| check.id == "D3")
            .expect("test fixture");
        assert_eq!(d3.action, Action::Method(Method::ValidateOpenapi));
        assert_eq!(d3.severity, Severity::Warning);
    }

    #[test]
    fn english_aliases_and_defaults() {
        let text = "\
qa_checklist:
  functionality:
    - id: T1
      criterion: tests pass
      validation: exit_code == 0
      command: make test
      timeout: 90s
  documentation:
    - id: D1
      criterion: readme
      validation: readme_contains_feature
      method: grep_readme
      blocking: false
      optional: true
";
        let checklist =
            Checklist::parse(Path::new("qa-checklist.yml"), text).expect("test fixture");
        assert_eq!(checklist.version, "1");
        assert_eq!(checklist.checks.len(), 2);
        let tests = &checklist.checks[0];
        assert_eq!(tests.action, Action::Command("make test".to_owned()));
        assert_eq!(tests.severity, Severity::Blocking);
        assert!(!tests.optional);
        assert_eq!(tests.timeout, Some(Duration::from_secs(90)));
        assert!(tests.placeholders().is_empty());
        let readme = &checklist.checks[1];
        assert_eq!(readme.category, Category::Documentation);
        assert_eq!(readme.action, Action::Method(Method::GrepReadme));
        assert_eq!(readme.severity, Severity::Warning);
        assert!(readme.optional);
    }

    fn parse_error(text: &str) -> String {
        Checklist::parse(Path::new("qa-checklist.yml"), text)
            .expect_err("invalid checklist")
            .to_string()
    }

    #[test]
    fn invalid_checklists_name_line_and_problem() {
        let header = "qa_checklist:\n  funcionalidade:\n";
        let both = format!(
            "{header}    - id: F1\n      criterio: t\n      validacao: exit_code == 0\n      comando: make\n      metodo: grep_readme\n"
        );
        assert_eq!(
            parse_error(&both),
            "qa-checklist.yml:3:7: check `F1` has both `comando` and `metodo`; expected exactly one of them"
        );
        let neither =
            format!("{header}    - id: F1\n      criterio: t\n      validacao: exit_code == 0\n");
        assert!(parse_error(&neither).starts_with("qa-checklist.yml:3:7: check `F1` has neither"));
        let duplicate = format!(
            "{header}    # F2 is the same as F1 on purpose\n    - id: F2\n      criterio: t\n      validacao: a\n      comando: x\n    - id: \"F2\"\n      criterio: t\n      validacao: a\n      comando: y\n"
        );
        assert_eq!(
            parse_error(&duplicate),
            "qa-checklist.yml:8:7: duplicate check id `F2`; every check needs its own id"
        );
        let method = format!(
            "{header}    - id: F1\n      criterio: t\n      validacao: a\n      metodo: grep_docs\n"
        );
        let message = parse_error(&method);
        assert!(
            message.starts_with("qa-checklist.yml:6:15: check `F1`: unknown method `grep_docs`"),
            "{message}"
        );
        assert!(message.contains("grep_readme, check_docs_adr"), "{message}");
        let expression = format!(
            "{header}    - id: F1\n      criterio: t\n      validacao: max_complexity <\n      comando: x\n"
        );
        assert_eq!(
            parse_error(&expression),
            "qa-checklist.yml:5:18: check `F1`: invalid validation expression: expected a number after `max_complexity <`, found the end (at character 17 of `max_complexity <`)"
        );
        let short = format!(
            "{header}    - id: F1\n      criterio: a\n      validacao: a\n      comando: x\n    - id: F2\n      criterio: b\n      validacao: a <\n      comando: y\n"
        );
        let message = parse_error(&short);
        assert!(
            message.starts_with("qa-checklist.yml:9:18: check `F2`: invalid validation"),
            "{message}"
        );
        let timeout = format!(
            "{header}    - id: F1\n      criterio: t\n      validacao: a\n      comando: x\n      timeout: soon\n"
        );
        assert!(
            parse_error(&timeout)
                .starts_with("qa-checklist.yml:7:16: check `F1`: invalid timeout `soon`")
        );
        let unknown = format!(
            "{header}    - id: F1\n      criterio: t\n      validacao: a\n      comand: x\n"
        );
        let message = parse_error(&unknown);
        assert!(message.starts_with("qa-checklist.yml:6:7: "), "{message}");
        assert!(message.contains("unknown field `comand`"), "{message}");
        assert!(message.contains("`comando`"), "{message}");
        let empty = "qa_checklist:\n  version: \"2\"\n";
        assert!(parse_error(empty).contains("the checklist has no checks"));
    }

    #[test]
    fn load_prefers_the_repository_file() {
        let repo = tempfile::tempdir().expect("temporary directory");
        assert_eq!(
            Checklist::load(repo.path()).expect("test fixture"),
            Checklist::builtin()
        );
        std::fs::write(
            repo.path().join(FILE_NAME),
            "qa_checklist:\n  version: \"9\"\n  replace_builtin: true\n  code_quality:\n    - id: L\n      criterion: lint\n      validation: exit_code == 0\n      command: \"{detected_lint_command} --quiet\"\n",
        )
        .expect("test fixture");
        let checklist = Checklist::load(repo.path()).expect("test fixture");
        assert_eq!(checklist.version, "9");
        assert_eq!(checklist.checks.len(), 1);
        assert_eq!(checklist.checks[0].placeholders(), vec!["lint"]);
        std::fs::write(repo.path().join(FILE_NAME), "qa_checklist: [\n").expect("test fixture");
        let error = Checklist::load(repo.path())
            .expect_err("an error")
            .to_string();
        assert!(error.contains("qa-checklist.yml:"), "{error}");
    }

    #[test]
    fn category_names() {
        assert_eq!(Category::CodeQuality.to_string(), "Code Quality");
        assert_eq!(
            serde_json::to_string(&Category::CodeQuality).expect("test fixture"),
            "\"code_quality\""
        );
        assert_eq!(
            serde_json::to_string(&Severity::Warning).expect("test fixture"),
            "\"warning\""
        );
    }
}
