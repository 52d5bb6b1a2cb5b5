//! The checklist's validation expressions and how they are evaluated. They are a language of
//! their own, independent of how the YAML file is read, so they live apart from the loading;
//! the parser of their text is in [`parser`].
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

use std::fmt;

use crate::metrics::{MetricValue, Metrics};

mod parser;

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
}
