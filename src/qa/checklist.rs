//! The QA checklist (`qa-checklist.yml`): which checks QA runs, how each one is measured (a
//! command or a built-in method), the expression its figures must satisfy, and whether a
//! failure blocks shipping or is only a warning.
//!
//! The built-in checklist is the commented `qa-checklist.yml` at the root of prpd's repository,
//! compiled in; a target repository's own `qa-checklist.yml` replaces it as a whole. The file
//! is parsed into raw serde structs that reject unknown keys, then validated once into
//! [`Checklist`]: every check has exactly one of command and method, ids are unique, method
//! names and validation expressions are known to work, so QA never meets a bad check mid-run.
//!
//! A validation expression (`validacao`) is a tiny boolean language over the figures a check
//! produced ([`Metrics`]):
//!
//! ```text
//! expr       := term (OR term)*
//! term       := factor (AND factor)*
//! factor     := NOT factor | MISSING metric | comparison | flag
//! comparison := [label] metric OP number['%']      OP: == != < <= > >=
//! flag       := metric
//! ```
//!
//! Keywords are case-insensitive; the seed's leading label (`test_runner exit_code == 0`) is
//! accepted and ignored. `MISSING metric` holds when the output did not contain the figure: it
//! lets a checklist accept threshold-style tools, which print nothing when all is well
//! (`max_complexity < 10 OR MISSING max_complexity AND exit_code == 0`). Evaluation is three-valued: a figure prpd could not measure makes its
//! comparison [`Evaluation::Unmeasured`], which stays unmeasured unless the other side of an
//! `OR` passes (or of an `AND` fails). QA treats unmeasured as a failure: no vacuous approval.

use std::collections::BTreeSet;
use std::fmt;
use std::path::Path;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::base::config_file::{ConfigError, parse_yaml, read};
use crate::qa::method::Method;
use crate::qa::metrics::{MetricValue, Metrics};

/// The built-in checklist's text, used when a repository has no `qa-checklist.yml`.
pub const BUILTIN_TEXT: &str = include_str!("../../qa-checklist.yml");

/// The file name a repository uses to replace the built-in checklist.
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
            Category::Functionality => "Funcionalidade",
            Category::CodeQuality => "Qualidade de Código",
            Category::Documentation => "Documentação",
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
            Action::Method(_) => Vec::new(),
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

    /// The repository's `qa-checklist.yml` when it has one, else the built-in checklist.
    pub fn load(repo: &Path) -> Result<Checklist, ConfigError> {
        let path = repo.join(FILE_NAME);
        if !path.is_file() {
            return Ok(Checklist::builtin());
        }
        let text = read(&path)?;
        Checklist::parse(&path, &text)
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

    /// Parses and validates checklist text; `path` names the file in errors.
    pub fn parse(path: &Path, text: &str) -> Result<Checklist, ConfigError> {
        let raw: RawFile = parse_yaml(path, text)?;
        let sections = [
            (Category::Functionality, raw.qa_checklist.funcionalidade),
            (Category::CodeQuality, raw.qa_checklist.qualidade_codigo),
            (Category::Documentation, raw.qa_checklist.documentacao),
        ];
        let mut checks = Vec::new();
        let mut seen = BTreeSet::new();
        for (category, raw_checks) in sections {
            for raw_check in raw_checks.unwrap_or_default() {
                let occurrence = usize::from(seen.contains(&raw_check.id));
                if occurrence > 0 {
                    return Err(error_at_id(
                        path,
                        text,
                        &raw_check.id,
                        occurrence,
                        None,
                        format!(
                            "duplicate check id `{}`; every check needs its own id",
                            raw_check.id
                        ),
                    ));
                }
                seen.insert(raw_check.id.clone());
                checks.push(validate_check(path, text, category, raw_check)?);
            }
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
        Ok(Checklist {
            version: raw.qa_checklist.version.unwrap_or_else(|| "1".to_owned()),
            checks,
        })
    }
}

/// Turns one raw check into a [`CheckSpec`], reporting the first problem at its line.
fn validate_check(
    path: &Path,
    text: &str,
    category: Category,
    raw: RawCheck,
) -> Result<CheckSpec, ConfigError> {
    let id = raw.id;
    let action = match (raw.comando, raw.metodo) {
        (Some(command), None) if !command.trim().is_empty() => Action::Command(command),
        (Some(_), None) => {
            return Err(error_at_id(
                path,
                text,
                &id,
                0,
                None,
                format!("check `{id}` has an empty `comando`; expected a shell command"),
            ));
        }
        (None, Some(name)) => match name.parse::<Method>() {
            Ok(method) => Action::Method(method),
            Err(error) => {
                return Err(error_at_id(
                    path,
                    text,
                    &id,
                    0,
                    Some(&name),
                    format!("check `{id}`: {error}"),
                ));
            }
        },
        (Some(_), Some(_)) => {
            return Err(error_at_id(
                path,
                text,
                &id,
                0,
                None,
                format!(
                    "check `{id}` has both `comando` and `metodo`; expected exactly one of them"
                ),
            ));
        }
        (None, None) => {
            return Err(error_at_id(
                path,
                text,
                &id,
                0,
                None,
                format!(
                    "check `{id}` has neither `comando` (command) nor `metodo` (method); \
                     expected exactly one of them"
                ),
            ));
        }
    };
    let validation = Validation::parse(&raw.validacao).map_err(|error| {
        error_at_id(
            path,
            text,
            &id,
            0,
            Some(raw.validacao.trim()),
            format!("check `{id}`: invalid validation expression: {error}"),
        )
    })?;
    let timeout = match raw.timeout {
        None => None,
        Some(timeout) => Some(humantime::parse_duration(&timeout).map_err(|error| {
            error_at_id(
                path,
                text,
                &id,
                0,
                Some(&timeout),
                format!(
                    "check `{id}`: invalid timeout `{timeout}`: {error}; expected a duration \
                     such as \"90s\" or \"10m\""
                ),
            )
        })?),
    };
    Ok(CheckSpec {
        id,
        category,
        criterion: raw.criterio,
        validation,
        action,
        severity: if raw.blocking.unwrap_or(true) {
            Severity::Blocking
        } else {
            Severity::Warning
        },
        optional: raw.optional.unwrap_or(false),
        timeout,
    })
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
    #[serde(alias = "functionality")]
    funcionalidade: Option<Vec<RawCheck>>,
    #[serde(alias = "code_quality")]
    qualidade_codigo: Option<Vec<RawCheck>>,
    #[serde(alias = "documentation")]
    documentacao: Option<Vec<RawCheck>>,
}

/// `id`, `criterio` and `validacao` are required: serde's "missing field" error then points
/// at the check itself, which is the most useful place.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawCheck {
    id: String,
    #[serde(alias = "criterion")]
    criterio: String,
    #[serde(alias = "validation")]
    validacao: String,
    #[serde(alias = "command")]
    comando: Option<String>,
    #[serde(alias = "method")]
    metodo: Option<String>,
    blocking: Option<bool>,
    optional: Option<bool>,
    timeout: Option<String>,
}

/// A parsed validation expression together with the text it came from.
#[derive(Debug, Clone, PartialEq)]
pub struct Validation {
    source: String,
    expression: Expr,
}

/// The result of evaluating a validation expression.
#[derive(Debug, Clone, PartialEq)]
pub enum Evaluation {
    /// The figures satisfy the expression.
    Pass,
    /// They do not; says why, e.g. `max_complexity is 12, expected < 10`.
    Fail(String),
    /// A figure the expression needs was not measured; names the missing figures.
    Unmeasured(String),
}

/// A validation expression that does not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message} (at character {position} of `{source_text}`)")]
pub struct ExpressionError {
    message: String,
    /// 1-based character position in the expression.
    position: usize,
    source_text: String,
}

impl Validation {
    /// Parses an expression such as `max_complexity < 10` or `openapi_valid OR not_applicable`.
    pub fn parse(source: &str) -> Result<Validation, ExpressionError> {
        let tokens = tokenize(source)?;
        let mut parser = Parser {
            source,
            tokens,
            next: 0,
        };
        let expression = parser.expression()?;
        if let Some(token) = parser.peek() {
            return Err(parser.error(
                token.position,
                format!("expected AND, OR or the end, found `{}`", token.kind),
            ));
        }
        Ok(Validation {
            source: source.trim().to_owned(),
            expression,
        })
    }

    /// The expression as written in the checklist.
    pub fn source(&self) -> &str {
        &self.source
    }

    /// Evaluates the expression against a check's figures.
    pub fn evaluate(&self, metrics: &Metrics) -> Evaluation {
        self.expression.evaluate(metrics)
    }
}

impl fmt::Display for Validation {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str(&self.source)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Operator {
    Equal,
    NotEqual,
    Less,
    LessOrEqual,
    Greater,
    GreaterOrEqual,
}

impl Operator {
    fn holds(self, left: f64, right: f64) -> bool {
        match self {
            Operator::Equal => (left - right).abs() < f64::EPSILON,
            Operator::NotEqual => (left - right).abs() >= f64::EPSILON,
            Operator::Less => left < right,
            Operator::LessOrEqual => left <= right,
            Operator::Greater => left > right,
            Operator::GreaterOrEqual => left >= right,
        }
    }

    fn symbol(self) -> &'static str {
        match self {
            Operator::Equal => "==",
            Operator::NotEqual => "!=",
            Operator::Less => "<",
            Operator::LessOrEqual => "<=",
            Operator::Greater => ">",
            Operator::GreaterOrEqual => ">=",
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
enum Expr {
    Or(Vec<Expr>),
    And(Vec<Expr>),
    Not(Box<Expr>),
    Missing(String),
    Compare {
        metric: String,
        operator: Operator,
        value: f64,
        percent: bool,
    },
    Flag(String),
}

impl fmt::Display for Expr {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Expr::Or(parts) => write_joined(formatter, parts, " OR "),
            Expr::And(parts) => write_joined(formatter, parts, " AND "),
            Expr::Not(inner) => write!(formatter, "NOT {inner}"),
            Expr::Missing(metric) => write!(formatter, "MISSING {metric}"),
            Expr::Compare {
                metric,
                operator,
                value,
                percent,
            } => write!(
                formatter,
                "{metric} {} {}{}",
                operator.symbol(),
                MetricValue::Number(*value),
                if *percent { "%" } else { "" }
            ),
            Expr::Flag(metric) => formatter.write_str(metric),
        }
    }
}

fn write_joined(
    formatter: &mut fmt::Formatter<'_>,
    parts: &[Expr],
    separator: &str,
) -> fmt::Result {
    for (index, part) in parts.iter().enumerate() {
        if index > 0 {
            formatter.write_str(separator)?;
        }
        write!(formatter, "{part}")?;
    }
    Ok(())
}

impl Expr {
    /// Three-valued evaluation: see the module docs for how unmeasured figures combine.
    fn evaluate(&self, metrics: &Metrics) -> Evaluation {
        match self {
            Expr::Or(parts) => {
                let results: Vec<Evaluation> =
                    parts.iter().map(|part| part.evaluate(metrics)).collect();
                if results.contains(&Evaluation::Pass) {
                    return Evaluation::Pass;
                }
                combine(&results, Reasons::First)
            }
            Expr::And(parts) => {
                let results: Vec<Evaluation> =
                    parts.iter().map(|part| part.evaluate(metrics)).collect();
                let failures: Vec<&str> = results
                    .iter()
                    .filter_map(|result| match result {
                        Evaluation::Fail(reason) => Some(reason.as_str()),
                        Evaluation::Pass | Evaluation::Unmeasured(_) => None,
                    })
                    .collect();
                if !failures.is_empty() {
                    return Evaluation::Fail(failures.join("; "));
                }
                combine(&results, Reasons::All)
            }
            Expr::Missing(metric) => match metrics.get(metric) {
                None => Evaluation::Pass,
                Some(measured) => Evaluation::Fail(format!("{metric} was measured ({measured})")),
            },
            Expr::Not(inner) => match inner.evaluate(metrics) {
                Evaluation::Pass => {
                    Evaluation::Fail(format!("expected NOT ({inner}), but it held"))
                }
                Evaluation::Fail(_) => Evaluation::Pass,
                Evaluation::Unmeasured(names) => Evaluation::Unmeasured(names),
            },
            Expr::Compare {
                metric,
                operator,
                value,
                percent,
            } => {
                let Some(measured) = metrics.get(metric) else {
                    return Evaluation::Unmeasured(metric.clone());
                };
                let number = match measured {
                    MetricValue::Number(number) => number,
                    MetricValue::Bool(flag) => f64::from(u8::from(flag)),
                };
                if operator.holds(number, *value) {
                    Evaluation::Pass
                } else {
                    let unit = if *percent { "%" } else { "" };
                    Evaluation::Fail(format!(
                        "{metric} is {measured}{unit}, expected {} {}{unit}",
                        operator.symbol(),
                        MetricValue::Number(*value),
                    ))
                }
            }
            Expr::Flag(metric) => match metrics.get(metric) {
                None => Evaluation::Unmeasured(metric.clone()),
                Some(MetricValue::Bool(true)) => Evaluation::Pass,
                Some(MetricValue::Number(number)) if number != 0.0 => Evaluation::Pass,
                Some(measured @ (MetricValue::Bool(false) | MetricValue::Number(_))) => {
                    Evaluation::Fail(format!("{metric} is {measured}"))
                }
            },
        }
    }
}

/// Which failure reasons a combined failure reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Reasons {
    /// Every reason (AND: each one must be fixed).
    All,
    /// The first alternative's reason (OR: the main rule; the others are its exceptions).
    First,
}

/// Combines results none of which passed (for OR) or failed (for AND): unmeasured figures win,
/// because the outcome depends on them; otherwise the reasons are kept as `reasons` says.
fn combine(results: &[Evaluation], reasons_kept: Reasons) -> Evaluation {
    let mut missing: Vec<&str> = Vec::new();
    let mut reasons: Vec<&str> = Vec::new();
    for result in results {
        match result {
            Evaluation::Pass => {}
            Evaluation::Fail(reason) => reasons.push(reason),
            Evaluation::Unmeasured(names) => {
                for name in names.split(", ") {
                    if !missing.contains(&name) {
                        missing.push(name);
                    }
                }
            }
        }
    }
    if !missing.is_empty() {
        Evaluation::Unmeasured(missing.join(", "))
    } else if !reasons.is_empty() {
        match reasons_kept {
            Reasons::All => Evaluation::Fail(reasons.join("; ")),
            Reasons::First => Evaluation::Fail(reasons[0].to_owned()),
        }
    } else {
        Evaluation::Pass
    }
}

#[derive(Debug, Clone, PartialEq)]
enum TokenKind {
    Word(String),
    Number { value: f64, percent: bool },
    Operator(Operator),
    And,
    Or,
    Not,
    Missing,
}

impl fmt::Display for TokenKind {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TokenKind::Word(word) => formatter.write_str(word),
            TokenKind::Number { value, percent } => write!(
                formatter,
                "{}{}",
                MetricValue::Number(*value),
                if *percent { "%" } else { "" }
            ),
            TokenKind::Operator(operator) => formatter.write_str(operator.symbol()),
            TokenKind::And => formatter.write_str("AND"),
            TokenKind::Or => formatter.write_str("OR"),
            TokenKind::Not => formatter.write_str("NOT"),
            TokenKind::Missing => formatter.write_str("MISSING"),
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
struct Token {
    kind: TokenKind,
    /// 1-based character position.
    position: usize,
}

/// Splits an expression into words, numbers (with an optional `%`), operators and keywords.
fn tokenize(source: &str) -> Result<Vec<Token>, ExpressionError> {
    let characters: Vec<char> = source.chars().collect();
    let error = |position: usize, message: String| ExpressionError {
        message,
        position: position + 1,
        source_text: source.trim().to_owned(),
    };
    let mut tokens = Vec::new();
    let mut index = 0;
    while index < characters.len() {
        let character = characters[index];
        let start = index;
        if character.is_whitespace() {
            index += 1;
            continue;
        }
        let kind = if character.is_ascii_alphabetic() || character == '_' {
            while index < characters.len()
                && (characters[index].is_ascii_alphanumeric() || characters[index] == '_')
            {
                index += 1;
            }
            let word: String = characters[start..index].iter().collect();
            match word.to_ascii_uppercase().as_str() {
                "AND" => TokenKind::And,
                "OR" => TokenKind::Or,
                "NOT" => TokenKind::Not,
                "MISSING" => TokenKind::Missing,
                _ => TokenKind::Word(word),
            }
        } else if character.is_ascii_digit() || character == '-' || character == '.' {
            index += 1;
            while index < characters.len()
                && (characters[index].is_ascii_digit() || characters[index] == '.')
            {
                index += 1;
            }
            let text: String = characters[start..index].iter().collect();
            let value = text
                .parse::<f64>()
                .map_err(|_| error(start, format!("`{text}` is not a number")))?;
            let percent = characters.get(index) == Some(&'%');
            if percent {
                index += 1;
            }
            TokenKind::Number { value, percent }
        } else {
            let next = characters.get(index + 1).copied();
            let (operator, width) = match (character, next) {
                ('=', Some('=')) => (Operator::Equal, 2),
                ('!', Some('=')) => (Operator::NotEqual, 2),
                ('<', Some('=')) => (Operator::LessOrEqual, 2),
                ('>', Some('=')) => (Operator::GreaterOrEqual, 2),
                ('<', _) => (Operator::Less, 1),
                ('>', _) => (Operator::Greater, 1),
                _ => {
                    return Err(error(
                        start,
                        format!(
                            "unexpected `{character}`; expected a metric name, a number, \
                             one of == != < <= > >=, or AND, OR, NOT"
                        ),
                    ));
                }
            };
            index += width;
            TokenKind::Operator(operator)
        };
        tokens.push(Token {
            kind,
            position: start + 1,
        });
    }
    Ok(tokens)
}

struct Parser<'a> {
    source: &'a str,
    tokens: Vec<Token>,
    next: usize,
}

impl Parser<'_> {
    fn peek(&self) -> Option<&Token> {
        self.tokens.get(self.next)
    }

    fn peek_kind(&self, offset: usize) -> Option<&TokenKind> {
        self.tokens.get(self.next + offset).map(|token| &token.kind)
    }

    fn end_position(&self) -> usize {
        self.source.chars().count() + 1
    }

    fn error(&self, position: usize, message: String) -> ExpressionError {
        ExpressionError {
            message,
            position,
            source_text: self.source.trim().to_owned(),
        }
    }

    fn expression(&mut self) -> Result<Expr, ExpressionError> {
        let mut parts = vec![self.term()?];
        while self.peek_kind(0) == Some(&TokenKind::Or) {
            self.next += 1;
            parts.push(self.term()?);
        }
        Ok(single_or(parts, Expr::Or))
    }

    fn term(&mut self) -> Result<Expr, ExpressionError> {
        let mut parts = vec![self.factor()?];
        while self.peek_kind(0) == Some(&TokenKind::And) {
            self.next += 1;
            parts.push(self.factor()?);
        }
        Ok(single_or(parts, Expr::And))
    }

    /// `NOT factor | MISSING metric | [label] metric OP number | metric`.
    fn factor(&mut self) -> Result<Expr, ExpressionError> {
        let Some(token) = self.peek().cloned() else {
            return Err(self.error(
                self.end_position(),
                "expected a metric name, NOT or MISSING, found the end".to_owned(),
            ));
        };
        match token.kind {
            TokenKind::Not => {
                self.next += 1;
                Ok(Expr::Not(Box::new(self.factor()?)))
            }
            TokenKind::Missing => {
                self.next += 1;
                match self.peek().cloned() {
                    Some(Token {
                        kind: TokenKind::Word(metric),
                        ..
                    }) => {
                        self.next += 1;
                        Ok(Expr::Missing(metric))
                    }
                    Some(other) => Err(self.error(
                        other.position,
                        format!(
                            "expected a metric name after MISSING, found `{}`",
                            other.kind
                        ),
                    )),
                    None => Err(self.error(
                        self.end_position(),
                        "expected a metric name after MISSING, found the end".to_owned(),
                    )),
                }
            }
            TokenKind::Word(first) => {
                self.next += 1;
                let metric = match self.peek_kind(0) {
                    Some(TokenKind::Word(second))
                        if matches!(self.peek_kind(1), Some(TokenKind::Operator(_))) =>
                    {
                        let second = second.clone();
                        self.next += 1;
                        second
                    }
                    Some(TokenKind::Word(second)) => {
                        let position = self.tokens[self.next].position;
                        return Err(self.error(
                            position,
                            format!(
                                "expected AND, OR, a comparison operator or the end after \
                                 `{first}`, found `{second}`"
                            ),
                        ));
                    }
                    Some(_) | None => first,
                };
                let Some(TokenKind::Operator(operator)) = self.peek_kind(0).cloned() else {
                    return Ok(Expr::Flag(metric));
                };
                self.next += 1;
                match self.peek().cloned() {
                    Some(Token {
                        kind: TokenKind::Number { value, percent },
                        ..
                    }) => {
                        self.next += 1;
                        Ok(Expr::Compare {
                            metric,
                            operator,
                            value,
                            percent,
                        })
                    }
                    Some(other) => Err(self.error(
                        other.position,
                        format!(
                            "expected a number after `{metric} {}`, found `{}`",
                            operator.symbol(),
                            other.kind
                        ),
                    )),
                    None => Err(self.error(
                        self.end_position(),
                        format!(
                            "expected a number after `{metric} {}`, found the end",
                            operator.symbol()
                        ),
                    )),
                }
            }
            TokenKind::Number { .. } | TokenKind::Operator(_) | TokenKind::And | TokenKind::Or => {
                Err(self.error(
                    token.position,
                    format!(
                        "expected a metric name, NOT or MISSING, found `{}`",
                        token.kind
                    ),
                ))
            }
        }
    }
}

fn single_or(mut parts: Vec<Expr>, combine: fn(Vec<Expr>) -> Expr) -> Expr {
    if parts.len() == 1 {
        parts.remove(0)
    } else {
        combine(parts)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn metrics(figures: &[(&str, MetricValue)]) -> Metrics {
        let mut metrics = Metrics::default();
        for (name, value) in figures {
            match value {
                MetricValue::Number(number) => metrics.set_number(name, *number),
                MetricValue::Bool(flag) => metrics.set_bool(name, *flag),
            }
        }
        metrics
    }

    use MetricValue::{Bool, Number};

    /// An expression, the figures it is evaluated against, and the expected result.
    type Case<'a> = (&'a str, Vec<(&'a str, MetricValue)>, Evaluation);

    fn pass() -> Evaluation {
        Evaluation::Pass
    }
    fn fail(reason: &str) -> Evaluation {
        Evaluation::Fail(reason.to_owned())
    }
    fn unmeasured(names: &str) -> Evaluation {
        Evaluation::Unmeasured(names.to_owned())
    }

    #[test]
    #[expect(clippy::too_many_lines, reason = "a table with one row per seed case")]
    fn seed_expressions_evaluate() {
        let table: Vec<Case<'_>> = vec![
            (
                "test_runner exit_code == 0",
                vec![("exit_code", Number(0.0))],
                pass(),
            ),
            (
                "test_runner exit_code == 0",
                vec![("exit_code", Number(101.0))],
                fail("exit_code is 101, expected == 0"),
            ),
            (
                "test_runner exit_code == 0",
                vec![],
                unmeasured("exit_code"),
            ),
            (
                "criteria_coverage == 100%",
                vec![("criteria_coverage", Number(100.0))],
                pass(),
            ),
            (
                "criteria_coverage == 100%",
                vec![("criteria_coverage", Number(66.67))],
                fail("criteria_coverage is 66.67%, expected == 100%"),
            ),
            (
                "linter exit_code == 0",
                vec![("exit_code", Number(0.0))],
                pass(),
            ),
            (
                "max_complexity < 10",
                vec![("max_complexity", Number(9.0))],
                pass(),
            ),
            (
                "max_complexity < 10",
                vec![("max_complexity", Number(12.0))],
                fail("max_complexity is 12, expected < 10"),
            ),
            (
                "max_complexity < 10",
                vec![("exit_code", Number(0.0))],
                unmeasured("max_complexity"),
            ),
            (
                "duplication_percentage < 5",
                vec![("duplication_percentage", Number(3.2))],
                pass(),
            ),
            (
                "duplication_percentage < 5",
                vec![("duplication_percentage", Number(47.5))],
                fail("duplication_percentage is 47.5, expected < 5"),
            ),
            (
                "naming_violations == 0",
                vec![("naming_violations", Number(0.0))],
                pass(),
            ),
            (
                "readme_contains_feature",
                vec![("readme_contains_feature", Bool(true))],
                pass(),
            ),
            (
                "readme_contains_feature",
                vec![("readme_contains_feature", Bool(false))],
                fail("readme_contains_feature is false"),
            ),
            (
                "readme_contains_feature",
                vec![],
                unmeasured("readme_contains_feature"),
            ),
            (
                "adr_file_exists",
                vec![("adr_file_exists", Bool(true))],
                pass(),
            ),
            (
                "openapi_valid OR not_applicable",
                vec![
                    ("openapi_valid", Bool(false)),
                    ("not_applicable", Bool(true)),
                ],
                pass(),
            ),
            (
                "openapi_valid OR not_applicable",
                vec![
                    ("openapi_valid", Bool(true)),
                    ("not_applicable", Bool(false)),
                ],
                pass(),
            ),
            (
                "openapi_valid OR not_applicable",
                vec![
                    ("openapi_valid", Bool(false)),
                    ("not_applicable", Bool(false)),
                ],
                fail("openapi_valid is false"),
            ),
            (
                "openapi_valid OR not_applicable",
                vec![("not_applicable", Bool(true))],
                pass(),
            ),
            (
                "openapi_valid OR not_applicable",
                vec![("not_applicable", Bool(false))],
                unmeasured("openapi_valid"),
            ),
            (
                "complex_funcs_documented",
                vec![("complex_funcs_documented", Bool(true))],
                pass(),
            ),
            (
                "changelog_has_entry",
                vec![("changelog_has_entry", Bool(false))],
                fail("changelog_has_entry is false"),
            ),
        ];
        for (source, figures, expected) in table {
            let validation = Validation::parse(source).expect("valid expression");
            assert_eq!(
                validation.evaluate(&metrics(&figures)),
                expected,
                "{source} with {figures:?}"
            );
        }
    }

    #[test]
    fn logic_operators_are_three_valued() {
        let table: Vec<Case<'_>> = vec![
            (
                "exit_code == 0 AND tests_total > 0",
                vec![("exit_code", Number(0.0)), ("tests_total", Number(3.0))],
                pass(),
            ),
            (
                "exit_code == 0 and tests_total > 0",
                vec![("exit_code", Number(0.0)), ("tests_total", Number(0.0))],
                fail("tests_total is 0, expected > 0"),
            ),
            (
                "exit_code == 0 AND tests_total > 0",
                vec![("exit_code", Number(0.0))],
                unmeasured("tests_total"),
            ),
            (
                "exit_code == 0 AND tests_total > 0",
                vec![("exit_code", Number(1.0))],
                fail("exit_code is 1, expected == 0"),
            ),
            (
                "a OR b AND c",
                vec![("a", Bool(false)), ("b", Bool(true)), ("c", Bool(true))],
                pass(),
            ),
            (
                "a OR b AND c",
                vec![("a", Bool(false)), ("b", Bool(true)), ("c", Bool(false))],
                fail("a is false"),
            ),
            (
                "a AND b",
                vec![("a", Bool(false)), ("b", Bool(false))],
                fail("a is false; b is false"),
            ),
            ("NOT a", vec![("a", Bool(false))], pass()),
            (
                "not a",
                vec![("a", Bool(true))],
                fail("expected NOT (a), but it held"),
            ),
            ("NOT a", vec![], unmeasured("a")),
            (
                "lint_errors <= 0",
                vec![("lint_errors", Number(0.0))],
                pass(),
            ),
            (
                "lint_errors != 0",
                vec![("lint_errors", Number(0.0))],
                fail("lint_errors is 0, expected != 0"),
            ),
            (
                "tests_total >= 1",
                vec![("tests_total", Number(1.0))],
                pass(),
            ),
            (
                "coverage > 80.5%",
                vec![("coverage", Number(80.0))],
                fail("coverage is 80%, expected > 80.5%"),
            ),
            ("x OR y", vec![], unmeasured("x, y")),
        ];
        for (source, figures, expected) in table {
            let validation = Validation::parse(source).expect("valid expression");
            assert_eq!(
                validation.evaluate(&metrics(&figures)),
                expected,
                "{source} with {figures:?}"
            );
        }
    }

    /// C2 of the built-in checklist, against what threshold-style tools (`gocyclo -over 10`,
    /// eslint's complexity rule, `radon cc -nc`) and score-listing tools print.
    #[test]
    fn missing_lets_threshold_tools_pass_only_when_clean() {
        let source = "max_complexity < 10 OR MISSING max_complexity AND exit_code == 0";
        let table: Vec<Case<'_>> = vec![
            (source, vec![("exit_code", Number(0.0))], pass()),
            (
                source,
                vec![("exit_code", Number(0.0)), ("max_complexity", Number(7.0))],
                pass(),
            ),
            (
                source,
                vec![("exit_code", Number(1.0)), ("max_complexity", Number(14.0))],
                fail("max_complexity is 14, expected < 10"),
            ),
            (
                source,
                vec![("exit_code", Number(0.0)), ("max_complexity", Number(12.0))],
                fail("max_complexity is 12, expected < 10"),
            ),
            (
                source,
                vec![("exit_code", Number(127.0))],
                unmeasured("max_complexity"),
            ),
            (
                "MISSING a",
                vec![("a", Bool(true))],
                fail("a was measured (true)"),
            ),
        ];
        for (source, figures, expected) in table {
            let validation = Validation::parse(source).expect("valid expression");
            assert_eq!(
                validation.evaluate(&metrics(&figures)),
                expected,
                "{source} with {figures:?}"
            );
        }
    }

    #[test]
    fn bad_expressions_say_where() {
        let table = [
            (
                "",
                "expected a metric name, NOT or MISSING, found the end (at character 1 of ``)",
            ),
            (
                "max_complexity <",
                "expected a number after `max_complexity <`, found the end (at character 17 of `max_complexity <`)",
            ),
            (
                "max_complexity < ten",
                "expected a number after `max_complexity <`, found `ten` (at character 18 of `max_complexity < ten`)",
            ),
            (
                "exit_code = 0",
                "unexpected `=`; expected a metric name, a number, one of == != < <= > >=, or AND, OR, NOT (at character 11 of `exit_code = 0`)",
            ),
            (
                "a b c",
                "expected AND, OR, a comparison operator or the end after `a`, found `b` (at character 3 of `a b c`)",
            ),
            (
                "a AND",
                "expected a metric name, NOT or MISSING, found the end (at character 6 of `a AND`)",
            ),
            (
                "a == 1 2",
                "expected AND, OR or the end, found `2` (at character 8 of `a == 1 2`)",
            ),
            (
                "== 1",
                "expected a metric name, NOT or MISSING, found `==` (at character 1 of `== 1`)",
            ),
            (
                "MISSING 3",
                "expected a metric name after MISSING, found `3` (at character 9 of `MISSING 3`)",
            ),
        ];
        for (source, message) in table {
            let error = Validation::parse(source).expect_err(source);
            assert_eq!(error.to_string(), message, "{source}");
        }
    }

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
            "qa_checklist:\n  version: \"9\"\n  code_quality:\n    - id: L\n      criterion: lint\n      validation: exit_code == 0\n      command: \"{detected_lint_command} --quiet\"\n",
        )
        .expect("test fixture");
        let checklist = Checklist::load(repo.path()).expect("test fixture");
        assert_eq!(checklist.version, "9");
        assert_eq!(checklist.checks[0].placeholders(), vec!["lint"]);
        std::fs::write(repo.path().join(FILE_NAME), "qa_checklist: [\n").expect("test fixture");
        let error = Checklist::load(repo.path())
            .expect_err("an error")
            .to_string();
        assert!(error.contains("qa-checklist.yml:"), "{error}");
    }

    #[test]
    fn category_names() {
        assert_eq!(Category::CodeQuality.to_string(), "Qualidade de Código");
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
