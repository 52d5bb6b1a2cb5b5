//! JUnit XML reports: the figures and test names of a test run, read from the report the
//! runner wrote (pytest `--junitxml`, jest-junit, gotestsum `--junitfile`, cargo nextest,
//! Maven Surefire, Gradle, …) instead of its console output, when the project says where it
//! writes one (`[qa] junit`).
//!
//! Theory of operation. A report is a tree of `<testsuites>` and `<testsuite>` elements, nested
//! to any depth, whose leaves are `<testcase>` elements. Each test case counts once: skipped
//! when it holds a `<skipped>` (even beside a `<failure>`: Node's runner writes a todo test
//! that fails so, and its run passes), else failed when it holds a `<failure>` or an
//! `<error>`, else passed; its name is `classname.name` (`name` alone when there is no class name). A suite
//! with no test case and no suite inside is the summary form: its `tests`, `failures`,
//! `errors` and `skipped` attributes are the counts. A suite that counts more failures and
//! errors than its test cases show (gotestsum reports a package that did not build only in
//! the root's `errors`) adds the difference as failures, so a broken run never reads as a
//! passing one. Several reports of one run (Surefire writes one per class) add up.

use roxmltree::{Document, Node};

use crate::metrics::{Metrics, Outcome, TestCases, TestSummary, add_counts};

/// The figures a test run's report replaces.
const TEST_FIGURES: [&str; 4] = [
    "tests_passed",
    "tests_failed",
    "tests_skipped",
    "tests_total",
];

/// Why a file is not a JUnit report prpd can read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum JunitError {
    #[error("it is not well-formed XML ({0})")]
    Xml(String),
    #[error("its root element is <{0}>, not <testsuites> or <testsuite>")]
    NotJunit(String),
    #[error("attribute `{attribute}` of <{element}> at line {line} is `{value}`, not a count")]
    Count {
        element: String,
        attribute: String,
        value: String,
        line: u32,
    },
}

/// The tests of the reports of one run, summed.
#[derive(Debug, Default)]
pub struct JunitTests {
    summary: TestSummary,
    cases: TestCases,
    reports: usize,
}

impl JunitTests {
    /// Adds one report's tests; a report that cannot be read adds nothing.
    pub fn add_report(&mut self, text: &str) -> Result<(), JunitError> {
        let document = Document::parse(text).map_err(|error| JunitError::Xml(error.to_string()))?;
        let root = document.root_element();
        let tag = root.tag_name().name();
        if tag != "testsuites" && tag != "testsuite" {
            return Err(JunitError::NotJunit(tag.to_owned()));
        }
        let mut cases = TestCases::default();
        let summary = suite(root, &mut cases)?;
        add_counts(&mut self.summary, summary);
        for (name, outcome) in cases.iter() {
            self.cases.record(name, outcome);
        }
        self.reports += 1;
        Ok(())
    }

    /// How many reports were added.
    pub fn reports(&self) -> usize {
        self.reports
    }

    /// The test figures (`tests_passed`, `tests_failed`, `tests_skipped`, `tests_total`) and
    /// the named tests, as a console parse would give them.
    pub fn into_metrics(self) -> Metrics {
        let mut metrics = Metrics {
            cases: self.cases,
            ..Metrics::default()
        };
        let summary = self.summary;
        for (name, value) in TEST_FIGURES.into_iter().zip([
            summary.passed,
            summary.failed,
            summary.skipped,
            summary.total(),
        ]) {
            metrics.set_number(name, f64::from(value));
        }
        metrics
    }
}

impl Metrics {
    /// Takes the test figures and named tests from `report` (a run's JUnit report), keeping
    /// every other figure read from the console.
    pub fn replace_tests(&mut self, report: Metrics) {
        self.drop_tests();
        self.figures.extend(report.figures);
        self.cases = report.cases;
    }

    /// Forgets the test figures and named tests: the run's report, which was to give them,
    /// could not be read, and the console's must not stand in for it.
    pub fn drop_tests(&mut self) {
        for name in TEST_FIGURES {
            self.figures.remove(name);
        }
        self.cases = TestCases::default();
    }
}

/// The counts of a `<testsuites>` or `<testsuite>` element; its test cases go into `cases`.
fn suite(node: Node<'_, '_>, cases: &mut TestCases) -> Result<TestSummary, JunitError> {
    let mut counted = TestSummary::default();
    let mut holds_tests = false;
    for child in node.children().filter(Node::is_element) {
        match child.tag_name().name() {
            "testcase" => {
                holds_tests = true;
                let outcome = case_outcome(child);
                let one = TestSummary {
                    passed: u32::from(outcome == Outcome::Passed),
                    failed: u32::from(outcome == Outcome::Failed),
                    skipped: u32::from(outcome == Outcome::Skipped),
                    total: None,
                };
                add_counts(&mut counted, one);
                cases.record(&case_name(child), outcome);
            }
            "testsuite" | "testsuites" => {
                holds_tests = true;
                add_counts(&mut counted, suite(child, cases)?);
            }
            _ => {}
        }
    }
    let own = attributes(node)?;
    if !holds_tests {
        return Ok(own);
    }
    counted.failed = counted.failed.max(own.failed);
    Ok(counted)
}

/// The counts a suite's attributes state: `tests` minus the failures, errors and skips passed.
fn attributes(node: Node<'_, '_>) -> Result<TestSummary, JunitError> {
    let count = |attribute: &str| -> Result<u32, JunitError> {
        let Some(value) = node.attribute(attribute) else {
            return Ok(0);
        };
        value.trim().parse().map_err(|_| JunitError::Count {
            element: node.tag_name().name().to_owned(),
            attribute: attribute.to_owned(),
            value: value.to_owned(),
            line: node.document().text_pos_at(node.range().start).row,
        })
    };
    let failed = count("failures")?.saturating_add(count("errors")?);
    let skipped = count("skipped")?;
    Ok(TestSummary {
        passed: count("tests")?
            .saturating_sub(failed)
            .saturating_sub(skipped),
        failed,
        skipped,
        total: None,
    })
}

/// Skipped with a `<skipped>`, else failed with a `<failure>` or an `<error>`, else passed.
fn case_outcome(case: Node<'_, '_>) -> Outcome {
    let holds = |names: &[&str]| {
        case.children()
            .any(|child| child.is_element() && names.contains(&child.tag_name().name()))
    };
    if holds(&["skipped"]) {
        Outcome::Skipped
    } else if holds(&["failure", "error"]) {
        Outcome::Failed
    } else {
        Outcome::Passed
    }
}

/// `classname.name`, or `name` alone when the class name is missing or empty.
fn case_name(case: Node<'_, '_>) -> String {
    let name = case.attribute("name").unwrap_or_default().trim();
    match case.attribute("classname").map(str::trim) {
        Some(class) if !class.is_empty() => format!("{class}.{name}"),
        Some(_) | None => name.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::MetricValue;

    fn read(reports: &[&str]) -> Result<Metrics, JunitError> {
        let mut tests = JunitTests::default();
        for report in reports {
            tests.add_report(report)?;
        }
        Ok(tests.into_metrics())
    }

    /// passed, failed, skipped and total; `u32::MAX` for a figure that is missing.
    fn counts(metrics: &Metrics) -> [u32; 4] {
        TEST_FIGURES.map(|name| metrics.count(name).unwrap_or(u32::MAX))
    }

    #[test]
    fn nested_suites_count_each_case_and_name_it() {
        let report = r#"<testsuites><testsuite name="outer">
              <testsuite name="inner">
                <testcase classname="a.B" name="passes"/>
                <testcase classname="a.B" name="fails"><failure message="no"/></testcase>
              </testsuite>
              <testcase name="errs"><error/><system-out>x</system-out></testcase>
              <testcase classname="" name="skips"><skipped/></testcase>
              <testcase name="todo"><skipped type="todo"/><failure/></testcase>
            </testsuite></testsuites>"#;
        let metrics = read(&[report]).expect("a report");
        assert_eq!(counts(&metrics), [1, 2, 2, 5]);
        let cases = metrics.test_cases();
        assert_eq!(cases.get("a.B.passes"), Some(Outcome::Passed));
        assert_eq!(cases.get("a.B.fails"), Some(Outcome::Failed));
        assert_eq!(cases.get("errs"), Some(Outcome::Failed));
        assert_eq!(cases.get("skips"), Some(Outcome::Skipped));
        assert_eq!(cases.get("todo"), Some(Outcome::Skipped));
    }

    #[test]
    fn the_summary_form_counts_from_attributes() {
        let report = r#"<testsuite tests="7" failures="1" errors="1" skipped="2"/>"#;
        let metrics = read(&[report]).expect("a report");
        assert_eq!(counts(&metrics), [3, 2, 2, 7]);
        assert!(metrics.test_cases().is_empty());
        assert_eq!(
            read(&["<testsuites/>"]).expect("a report").tests_ran(),
            Some(0)
        );
    }

    #[test]
    fn failures_a_suite_states_beyond_its_cases_count() {
        let report = r#"<testsuites tests="1" failures="0" errors="1">
              <testsuite tests="1"><testcase classname="p" name="TestOk"/></testsuite>
            </testsuites>"#;
        assert_eq!(counts(&read(&[report]).expect("a report")), [1, 1, 0, 2]);
    }

    #[test]
    fn reports_of_one_run_add_up() {
        let first = r#"<testsuite><testcase classname="A" name="t"/></testsuite>"#;
        let second =
            r#"<testsuite><testcase classname="B" name="t"><failure/></testcase></testsuite>"#;
        let metrics = read(&[first, second]).expect("two reports");
        assert_eq!(counts(&metrics), [1, 1, 0, 2]);
    }

    #[test]
    fn what_is_not_a_report_is_an_error_and_adds_nothing() {
        let mut tests = JunitTests::default();
        assert!(matches!(
            tests.add_report("<testsuite><testcase"),
            Err(JunitError::Xml(_))
        ));
        assert_eq!(
            tests.add_report("<html/>"),
            Err(JunitError::NotJunit("html".to_owned()))
        );
        let error = tests
            .add_report("<testsuites>\n<testsuite tests=\"many\"/></testsuites>")
            .expect_err("not a count");
        assert_eq!(
            error.to_string(),
            "attribute `tests` of <testsuite> at line 2 is `many`, not a count"
        );
        assert!(tests.add_report("").is_err());
        assert_eq!(tests.reports(), 0);
    }

    #[test]
    fn a_report_replaces_the_console_test_figures_only() {
        let mut console = crate::metrics::parse_output(
            "test result: ok. 9 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s\n".as_bytes(),
        );
        console.set_number("exit_code", 0.0);
        let report = read(&[r#"<testsuite><testcase name="only"/></testsuite>"#]).expect("ok");
        console.replace_tests(report);
        assert_eq!(counts(&console), [1, 0, 0, 1]);
        assert_eq!(console.get("exit_code"), Some(MetricValue::Number(0.0)));
        console.drop_tests();
        assert_eq!(console.tests_ran(), None);
        assert!(console.test_cases().is_empty());
    }
}
