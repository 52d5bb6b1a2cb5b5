//! The figures prpd reads out of a check's output: how many tests passed or failed, how many
//! lint errors a linter reported, the worst cyclomatic complexity, the duplication percentage.
//!
//! Theory of operation. A check's log can be huge (a flooding test suite writes tens of MiB),
//! so [`parse_output`] reads it line by line, cuts every line at [`MAX_LINE_BYTES`] and keeps
//! only running sums. Each tool's summary line has its own small parser, tried in a fixed order;
//! the first that recognises a line wins, so a line is never counted twice. Summary lines add up
//! (cargo prints one `test result:` line per test binary; a Makefile may run two runners),
//! except the plain `N passed, N failed` line of a hand-written wrapper, which counts only when
//! no runner's own summary was seen; per-item lines (flake8's `path:l:c: E123`, go's `--- PASS:`) are only a fallback used when
//! no summary line of the same kind was seen, because tools such as ruff print both. A figure
//! that was never seen is absent, not zero: the checklist treats a missing figure as
//! "prpd could not measure this", never as a pass.
//!
//! Each family of output has its own child module, holding the small parsers for the tools of
//! that family and the tests that feed them real output: `test_runners`, `lint`, `complexity`
//! and `duplication`; `junit` reads a JUnit XML report instead of the console. This file keeps
//! what they share: the figures ([`Metrics`]), the streaming read, what one line can say
//! (`Finding`), the order the parsers are tried in, and the running sums.

mod cases;
mod complexity;
mod duplication;
mod junit;
mod lint;
#[cfg(test)]
mod runner_outputs;
mod test_runners;

use std::collections::BTreeMap;
use std::fmt;
use std::io::BufRead;
use std::path::Path;
use std::sync::LazyLock;

use regex::Regex;
use serde::{Serialize, Serializer};

pub use cases::{Outcome, TestCases};
pub use junit::{JunitError, JunitTests};

/// Lines longer than this are cut: no summary line is this long, and a log that is one 64 MiB
/// line must not be held in memory.
pub const MAX_LINE_BYTES: usize = 64 * 1024;

/// One measured figure.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum MetricValue {
    /// A count, a percentage or a score.
    Number(f64),
    /// A yes/no fact such as `readme_contains_feature`.
    Bool(bool),
}

impl fmt::Display for MetricValue {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MetricValue::Number(number) => write!(formatter, "{}", format_number(*number)),
            MetricValue::Bool(flag) => write!(formatter, "{flag}"),
        }
    }
}

/// Whole numbers print without a fraction (`12`, not `12.0`); others with at most two decimals.
fn format_number(number: f64) -> String {
    if number.fract() == 0.0 && number.abs() < 1e15 {
        format!("{number:.0}")
    } else {
        let text = format!("{number:.2}");
        text.trim_end_matches('0').trim_end_matches('.').to_owned()
    }
}

impl Serialize for MetricValue {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            MetricValue::Number(number) if number.fract() == 0.0 && number.abs() < 1e15 => {
                #[expect(
                    clippy::cast_possible_truncation,
                    reason = "whole numbers below 1e15 fit an i64 exactly"
                )]
                let whole = *number as i64;
                serializer.serialize_i64(whole)
            }
            MetricValue::Number(number) => serializer.serialize_f64(*number),
            MetricValue::Bool(flag) => serializer.serialize_bool(*flag),
        }
    }
}

/// Named figures, ordered by name, and the tests the output named; serialises as one JSON
/// object of the figures (numbers and booleans).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(transparent)]
pub struct Metrics {
    figures: BTreeMap<String, MetricValue>,
    #[serde(skip)]
    cases: TestCases,
}

impl Metrics {
    /// Sets (or replaces) a number.
    pub fn set_number(&mut self, name: &str, value: f64) {
        self.figures
            .insert(name.to_owned(), MetricValue::Number(value));
    }

    /// Sets (or replaces) a yes/no fact.
    pub fn set_bool(&mut self, name: &str, value: bool) {
        self.figures
            .insert(name.to_owned(), MetricValue::Bool(value));
    }

    /// The figure called `name`, if it was measured.
    pub fn get(&self, name: &str) -> Option<MetricValue> {
        self.figures.get(name).copied()
    }

    /// Every figure, ordered by name.
    pub fn iter(&self) -> impl Iterator<Item = (&str, MetricValue)> {
        self.figures
            .iter()
            .map(|(name, value)| (name.as_str(), *value))
    }

    /// True when nothing was measured.
    pub fn is_empty(&self) -> bool {
        self.figures.is_empty() && self.cases.is_empty()
    }

    /// The tests the output named, with how each ended (empty when the runner prints no
    /// per-test lines).
    pub fn test_cases(&self) -> &TestCases {
        &self.cases
    }

    /// The figure called `name` as a whole non-negative count (a fraction is cut off, a
    /// negative figure is 0), if it was measured as a number. Test counts, lint counts and
    /// complexities are all read through here.
    pub fn count(&self, name: &str) -> Option<u32> {
        match self.get(name)? {
            #[expect(
                clippy::cast_possible_truncation,
                clippy::cast_sign_loss,
                reason = "counts parsed from output are non-negative integers; `as` saturates beyond u32"
            )]
            MetricValue::Number(value) => Some(value.max(0.0) as u32),
            MetricValue::Bool(_) => None,
        }
    }

    /// How many tests ran — passed plus failed; skipped tests ran nothing — if any test
    /// runner's summary was seen. `Some(0)` means a runner reported that it ran nothing (or
    /// skipped everything), which QA must not take as a pass.
    pub fn tests_ran(&self) -> Option<u64> {
        self.get("tests_total")?;
        let count = |name| u64::from(self.count(name).unwrap_or(0));
        Some(count("tests_passed") + count("tests_failed"))
    }
}

/// Reads a command's log from disk and parses it with [`parse_output`].
pub fn parse_log(path: &Path) -> std::io::Result<Metrics> {
    let file = std::fs::File::open(path)?;
    Ok(parse_output(std::io::BufReader::new(file)))
}

/// Parses a command's combined output, line by line, into the figures it reports.
///
/// Test counts: `tests_passed`, `tests_failed`, `tests_skipped`, `tests_total`. Lint:
/// `lint_errors`, `lint_warnings`. Complexity: `max_complexity`. Duplication:
/// `duplication_percentage`, `duplication_clones`. Figures not reported are absent. A read
/// error ends the parse with what was read so far (the log is evidence, not input to trust).
pub fn parse_output(mut reader: impl BufRead) -> Metrics {
    let mut tally = Tally::default();
    let mut line = Vec::with_capacity(256);
    while read_bounded_line(&mut reader, &mut line).unwrap_or(false) {
        let text = String::from_utf8_lossy(&line);
        let text = strip_ansi(&text);
        tally.add_line(text.trim_end_matches(['\r', '\n']));
    }
    tally.into_metrics()
}

/// Reads one line into `line`, keeping at most [`MAX_LINE_BYTES`] of it and skipping the rest.
/// Returns false at end of input.
fn read_bounded_line(reader: &mut impl BufRead, line: &mut Vec<u8>) -> std::io::Result<bool> {
    line.clear();
    let mut read_any = false;
    loop {
        let buffer = match reader.fill_buf() {
            Ok(buffer) => buffer,
            Err(error) if error.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(error) => return Err(error),
        };
        if buffer.is_empty() {
            return Ok(read_any);
        }
        read_any = true;
        let newline = buffer.iter().position(|byte| *byte == b'\n');
        let chunk = &buffer[..newline.unwrap_or(buffer.len())];
        let room = MAX_LINE_BYTES.saturating_sub(line.len());
        line.extend_from_slice(&chunk[..chunk.len().min(room)]);
        if let Some(index) = newline {
            reader.consume(index + 1);
            return Ok(true);
        }
        let length = buffer.len();
        reader.consume(length);
    }
}

fn strip_ansi(text: &str) -> std::borrow::Cow<'_, str> {
    static ANSI: LazyLock<Regex> = LazyLock::new(|| regex(r"\x1b\[[0-9;?]*[A-Za-z]"));
    if text.contains('\x1b') {
        ANSI.replace_all(text, "")
    } else {
        std::borrow::Cow::Borrowed(text)
    }
}

/// Compiles one of the fixed patterns of this module and its children; their tests cover them.
fn regex(pattern: &str) -> Regex {
    Regex::new(pattern).expect("metrics patterns are valid")
}

/// Test counts from one summary line. `total` is the runner's own total when it prints one.
#[derive(Debug, Default, Clone, Copy, PartialEq)]
struct TestSummary {
    passed: u32,
    failed: u32,
    skipped: u32,
    total: Option<u32>,
}

impl TestSummary {
    fn total(&self) -> u32 {
        self.total.unwrap_or_else(|| {
            self.passed
                .saturating_add(self.failed)
                .saturating_add(self.skipped)
        })
    }
}

/// Lint counts from one summary line.
#[derive(Debug, Default, Clone, Copy, PartialEq)]
struct LintSummary {
    errors: u32,
    warnings: u32,
}

/// What one line says, if it is a line some tool prints as a summary or an item.
#[derive(Debug, Clone, PartialEq)]
enum Finding {
    /// A runner's summary line: counts. Summary lines win over counting named cases.
    Tests(TestSummary),
    /// The plain `N passed, N failed` line of a hand-written runner. Such a runner often wraps
    /// a real one whose own summary is in the same output, so it counts only when no runner's
    /// own summary was seen: one run is never counted twice.
    PlainTests(TestSummary),
    /// One test's line with its name and outcome (`test calc::mul ... ok`).
    Case(String, Outcome),
    /// A test's name whose outcome comes on a later line (unittest `-v` when the test prints).
    CaseStarted(String),
    /// The outcome of the last started test.
    CaseEnded(Outcome),
    /// A TAP test line: a case counted only when the output also has a TAP plan (`1..N`), so a
    /// stray `ok 1 thing` line in a build log is not taken for a test.
    TapCase(String, Outcome),
    /// A TAP plan line `1..N` with its N: `1..0` says the run has no test.
    TapPlan(u32),
    /// The next line is a test's name, with this outcome (busted's `Failure -> spec.lua @ 9`,
    /// minitest's `  1) Failure:`).
    NameNext(Outcome),
    /// A heading over a numbered list of tests that ended this way (RSpec's `Pending:`,
    /// PHPUnit's `There were 2 failures:`); `None` ends the list.
    ListHeading(Option<Outcome>),
    /// One test in the list under the last heading (`  1) Calc divides`).
    ListItem(String),
    /// Counts from a TAP comment (`# pass 3`, node-tap's `# { total: 3, pass: 3 }`). They win
    /// over the TAP lines, which leave nested subtests to their parent's line, unless the lines
    /// name more tests (mocha's `# tests` leaves out the pending tests its lines mark `# SKIP`).
    TapCount(TestSummary),
    /// A per-test line too plain to trust alone (`✓ adds`, `(pass) adds`): recorded only when
    /// the output also holds the line the [`Voucher`] names, so a build step that prints
    /// `✔ done` is not taken for a passing test.
    LooseCase(String, Outcome, Voucher),
    /// A runner's closing line that carries no usable count (ava's `2 tests failed` leaves out
    /// the passed ones) but vouches for its loose per-test lines.
    Vouch,
    /// unittest's `Ran 4 tests in 0.001s`: the total, split by the result line that follows.
    RanTests(u32),
    /// unittest's result line (`OK`, `OK (skipped=1)`, `FAILED (failures=1, errors=1)`): the
    /// failed and skipped tests of the `Ran` line before it; the rest passed.
    RanResult(TestSummary),
    /// A go test's line (`--- FAIL: TestMul/zero`, a `-json` event): a named case that also
    /// tells the package line after it that its tests were named.
    GoTest(String, Outcome),
    /// A go package line (`ok  \tpkg`, `FAIL\tpkg [build failed]`): the package stands for
    /// its tests when none of them was named, as without `-v`.
    GoPackage(GoPackage, String),
    /// A line that looks like another runner's test line but names no test (gotestsum's
    /// package line `✓  strs (3ms)`): it is claimed so that no other parser misreads it.
    NotATest,
    /// prove's `Files=2, Tests=5,` closing line: how many tests ran.
    ProveTests(u32),
    /// A file in prove's `Test Summary Report`, with how many of its tests failed; a file
    /// listed with none failed died or broke its plan, and counts as one failure.
    ProveFailedFile(u32),
    Lint(LintSummary),
    /// `All checks passed!` and alike: the linter ran and found nothing.
    LintClean,
    /// One flake8-style item line; `true` for a warning (`W…` code).
    LintItem {
        warning: bool,
    },
    Complexity(f64),
    DuplicationPercentage(f64),
    DuplicationClones(u32),
}

/// What must also be in the output before a [`Finding::LooseCase`] counts.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Voucher {
    /// Any test runner's closing line.
    Summary,
    /// A closing line that counted skipped tests (mocha's `  - title` is a pending test only
    /// where mocha also says `2 pending`; elsewhere it is any indented list item).
    Skips,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum GoPackage {
    /// `ok  \tpkg\t0.01s`: the package's tests passed.
    Ok,
    /// `FAIL\tpkg\t0.01s` or `FAIL\tpkg [build failed]`.
    Fail,
    /// `?   \tpkg\t[no test files]` or `ok pkg 0.01s [no tests to run]`.
    NoTests,
}

/// TAP test lines seen so far, and whether a plan line vouched for them.
#[derive(Debug, Default)]
struct TapLines {
    cases: TestCases,
    planned: bool,
    planned_tests: u32,
}

/// What go's lines said beyond their named cases.
#[derive(Debug, Default)]
struct GoLines {
    /// A package line was seen, so the output is go's even when it named no test.
    seen: bool,
    /// A test was named since the last package line.
    named_since_package: bool,
}

/// prove's closing figures: tests run, tests failed, and files that failed with no failed test.
#[derive(Debug, Default)]
struct ProveLines {
    seen: bool,
    tests: u32,
    failed_tests: u32,
    broken_files: u32,
}

/// Loose per-test lines seen so far, and whether a closing line without counts vouched for
/// them.
#[derive(Debug, Default)]
struct LooseLines {
    cases: Vec<(String, Outcome, Voucher)>,
    vouched: bool,
}

/// The running sums of one parse.
#[derive(Debug, Default)]
struct Tally {
    tests: Option<TestSummary>,
    tests_total: u32,
    cases: TestCases,
    started_case: Option<String>,
    name_next: Option<Outcome>,
    list: Option<Outcome>,
    tap: TapLines,
    plain: Option<TestSummary>,
    tap_counts: Option<TestSummary>,
    tap_counts_total: u32,
    loose: LooseLines,
    ran: Option<u32>,
    go: GoLines,
    prove: ProveLines,
    lint: Option<LintSummary>,
    lint_clean: bool,
    lint_items: LintSummary,
    saw_lint_items: bool,
    max_complexity: Option<f64>,
    duplication_percentage: Option<f64>,
    duplication_clones: Option<u32>,
}

impl Tally {
    /// Adds what one line reports to the sums.
    fn add_line(&mut self, line: &str) {
        if let Some(outcome) = self.name_next.take() {
            self.cases.record(name_line(line), outcome);
            return;
        }
        let Some(finding) = classify(line) else {
            return;
        };
        match finding {
            Finding::Tests(summary) => self.add_tests(summary),
            Finding::PlainTests(summary) => {
                let sum = self.plain.get_or_insert_with(TestSummary::default);
                add_counts(sum, summary);
            }
            Finding::Case(name, outcome) => self.cases.record(&name, outcome),
            Finding::CaseStarted(name) => self.started_case = Some(name),
            Finding::CaseEnded(outcome) => {
                if let Some(name) = self.started_case.take() {
                    self.cases.record(&name, outcome);
                }
            }
            Finding::TapCase(name, outcome) => self.tap.cases.record(&name, outcome),
            Finding::TapPlan(count) => {
                self.tap.planned = true;
                self.tap.planned_tests = self.tap.planned_tests.saturating_add(count);
            }
            Finding::TapCount(summary) => {
                let sum = self.tap_counts.get_or_insert_with(TestSummary::default);
                add_counts(sum, summary);
                self.tap_counts_total = self.tap_counts_total.saturating_add(summary.total());
            }
            Finding::LooseCase(name, outcome, voucher) => {
                self.loose.cases.push((name, outcome, voucher));
            }
            Finding::Vouch => self.loose.vouched = true,
            Finding::RanTests(count) => self.ran = Some(count),
            Finding::RanResult(result) => {
                if let Some(ran) = self.ran.take() {
                    self.add_tests(TestSummary {
                        passed: ran.saturating_sub(result.failed.saturating_add(result.skipped)),
                        total: Some(ran),
                        ..result
                    });
                }
            }
            Finding::NameNext(outcome) => self.name_next = Some(outcome),
            Finding::ListHeading(outcome) => self.list = outcome,
            Finding::ListItem(name) => {
                if let Some(outcome) = self.list {
                    self.cases.record(&name, outcome);
                }
            }
            Finding::GoTest(name, outcome) => {
                self.go.named_since_package = true;
                self.cases.record(&name, outcome);
            }
            Finding::GoPackage(package, name) => self.add_go_package(package, &name),
            Finding::NotATest => {}
            Finding::ProveTests(count) => {
                self.prove.seen = true;
                self.prove.tests = self.prove.tests.saturating_add(count);
            }
            Finding::ProveFailedFile(failed) => self.add_prove_file(failed),
            Finding::Lint(summary) => {
                let sum = self.lint.get_or_insert_with(LintSummary::default);
                sum.errors = sum.errors.saturating_add(summary.errors);
                sum.warnings = sum.warnings.saturating_add(summary.warnings);
            }
            Finding::LintClean => self.lint_clean = true,
            Finding::LintItem { warning } => {
                self.saw_lint_items = true;
                if warning {
                    self.lint_items.warnings = self.lint_items.warnings.saturating_add(1);
                } else {
                    self.lint_items.errors = self.lint_items.errors.saturating_add(1);
                }
            }
            Finding::Complexity(score) => {
                self.max_complexity = Some(self.max_complexity.map_or(score, |max| max.max(score)));
            }
            Finding::DuplicationPercentage(percentage) => {
                self.duplication_percentage = Some(
                    self.duplication_percentage
                        .map_or(percentage, |max| max.max(percentage)),
                );
            }
            Finding::DuplicationClones(clones) => {
                self.duplication_clones =
                    Some(self.duplication_clones.unwrap_or(0).saturating_add(clones));
            }
        }
    }

    /// A go package line stands for the package's tests when none of them was named.
    fn add_go_package(&mut self, package: GoPackage, name: &str) {
        self.go.seen = true;
        let unnamed = !std::mem::take(&mut self.go.named_since_package);
        match package {
            GoPackage::Ok if unnamed => self.cases.record(name, Outcome::Passed),
            GoPackage::Fail if unnamed => self.cases.record(name, Outcome::Failed),
            GoPackage::Ok | GoPackage::Fail | GoPackage::NoTests => {}
        }
    }

    /// A file in prove's report; one with no failed test died or broke its plan.
    fn add_prove_file(&mut self, failed: u32) {
        self.prove.failed_tests = self.prove.failed_tests.saturating_add(failed);
        if failed == 0 {
            self.prove.broken_files = self.prove.broken_files.saturating_add(1);
        }
    }

    /// The sums as named figures; kinds never seen stay absent.
    fn into_metrics(mut self) -> Metrics {
        if self.tap.planned {
            for (name, outcome) in self.tap.cases.iter() {
                self.cases.record(name, outcome);
            }
        }
        if self.prove.seen {
            self.add_prove_counts();
        }
        self.add_tap_counts();
        if let (None, Some(plain)) = (self.tests, self.plain) {
            self.add_tests(plain);
        }
        let skips = self.tests.is_some_and(|tests| tests.skipped > 0);
        let summary = self.loose.vouched || self.tests.is_some();
        for (name, outcome, voucher) in std::mem::take(&mut self.loose.cases) {
            let vouched = match voucher {
                Voucher::Summary => summary,
                Voucher::Skips => skips,
            };
            if vouched {
                self.cases.record(&name, outcome);
            }
        }
        if self.tests.is_none() && !self.cases.is_empty() {
            self.tests = Some(TestSummary {
                passed: self.cases.count(Outcome::Passed),
                failed: self.cases.count(Outcome::Failed),
                skipped: self.cases.count(Outcome::Skipped),
                total: None,
            });
            self.tests_total = self.tests.map_or(0, |summary| summary.total());
        }
        let said_no_tests = self.go.seen || (self.tap.planned && self.tap.planned_tests == 0);
        if self.tests.is_none() && said_no_tests {
            self.tests = Some(TestSummary::default());
        }
        let mut metrics = Metrics {
            cases: std::mem::take(&mut self.cases),
            ..Metrics::default()
        };
        if let Some(tests) = self.tests {
            metrics.set_number("tests_passed", f64::from(tests.passed));
            metrics.set_number("tests_failed", f64::from(tests.failed));
            metrics.set_number("tests_skipped", f64::from(tests.skipped));
            metrics.set_number("tests_total", f64::from(self.tests_total));
        }
        let lint = match (self.lint, self.saw_lint_items, self.lint_clean) {
            (Some(summary), _, _) => Some(summary),
            (None, true, _) => Some(self.lint_items),
            (None, false, true) => Some(LintSummary::default()),
            (None, false, false) => None,
        };
        if let Some(lint) = lint {
            metrics.set_number("lint_errors", f64::from(lint.errors));
            metrics.set_number("lint_warnings", f64::from(lint.warnings));
        }
        if let Some(max) = self.max_complexity {
            metrics.set_number("max_complexity", max);
        }
        let percentage = match (self.duplication_percentage, self.duplication_clones) {
            (Some(percentage), _) => Some(percentage),
            (None, Some(0)) => Some(0.0),
            (None, Some(_) | None) => None,
        };
        if let Some(percentage) = percentage {
            metrics.set_number("duplication_percentage", percentage);
        }
        if let Some(clones) = self.duplication_clones {
            metrics.set_number("duplication_clones", f64::from(clones));
        }
        metrics
    }

    /// Adds one summary line's counts to the sums.
    fn add_tests(&mut self, summary: TestSummary) {
        add_counts(self.tests.get_or_insert_with(TestSummary::default), summary);
        self.tests_total = self.tests_total.saturating_add(summary.total());
    }

    /// TAP comment counts, or the planned TAP lines where they name more tests.
    fn add_tap_counts(&mut self) {
        let Some(counts) = self.tap_counts.take() else {
            return;
        };
        let lines = TestSummary {
            passed: self.tap.cases.count(Outcome::Passed),
            failed: self.tap.cases.count(Outcome::Failed),
            skipped: self.tap.cases.count(Outcome::Skipped),
            total: None,
        };
        if self.tap.planned && lines.total() > self.tap_counts_total {
            self.add_tests(lines);
        } else {
            self.add_tests(TestSummary {
                total: Some(self.tap_counts_total),
                ..counts
            });
        }
    }

    /// prove's closing line counts the tests of every file; a file that died after its tests or
    /// broke its plan fails with no failed test, so it adds one failure. Under `-v` the TAP
    /// lines name each test (and tell skips apart), so they are counted instead.
    fn add_prove_counts(&mut self) {
        let prove = &self.prove;
        let mut summary = if self.cases.is_empty() {
            TestSummary {
                passed: prove.tests.saturating_sub(prove.failed_tests),
                failed: prove.failed_tests,
                skipped: 0,
                total: None,
            }
        } else {
            TestSummary {
                passed: self.cases.count(Outcome::Passed),
                failed: self.cases.count(Outcome::Failed),
                skipped: self.cases.count(Outcome::Skipped),
                total: None,
            }
        };
        summary.failed = summary.failed.saturating_add(prove.broken_files);
        self.add_tests(summary);
    }
}

/// A test's name on a line of its own, without the location minitest puts after it
/// (`CalcTest#test_mul [test/calc_test.rb:10]:`) or the colon that ends it.
fn name_line(line: &str) -> &str {
    let name = line.trim();
    let name = match name.rfind(" [") {
        Some(index) if name.ends_with("]:") => &name[..index],
        Some(_) | None => name,
    };
    name.strip_suffix(':').unwrap_or(name)
}

/// Adds the passed, failed and skipped counts of `summary` to `sum` (not the total).
fn add_counts(sum: &mut TestSummary, summary: TestSummary) {
    sum.passed = sum.passed.saturating_add(summary.passed);
    sum.failed = sum.failed.saturating_add(summary.failed);
    sum.skipped = sum.skipped.saturating_add(summary.skipped);
}

/// Tries each tool's parser in turn; the order puts specific formats before generic ones.
/// Each parser comes with a piece of text its lines always contain, so a long log of ordinary
/// lines costs a few substring searches per line instead of a dozen regex runs.
fn classify(line: &str) -> Option<Finding> {
    const OTHER_TOOLS: &[(&str, test_runners::Parser)] = &[
        ("✖", lint::eslint),
        ("", lint::ruff),
        ("Total: ", lint::luacheck),
        (" issue", lint::golangci_lint),
        ("`", lint::clippy),
        (": ", lint::flake8_item),
        (" - ", complexity::radon),
        (".go:", complexity::gocyclo),
        ("has a complexity of", complexity::eslint_complexity),
        ("cyclomatic complexity of", complexity::luacheck_complexity),
        ("@", complexity::lizard),
        ("max_complexity", complexity::generic_complexity),
        ("", duplication::jscpd),
        ("Found total", duplication::dupl),
    ];
    test_runners::FAMILIES
        .iter()
        .copied()
        .chain(std::iter::once(OTHER_TOOLS))
        .flatten()
        .filter(|(needle, _)| line.contains(needle))
        .find_map(|(_, parser)| parser(line))
}

fn number(text: &str) -> u32 {
    text.parse().unwrap_or(u32::MAX)
}

fn float(text: &str) -> Option<f64> {
    text.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(super) fn parse(text: &str) -> Metrics {
        parse_output(text.as_bytes())
    }

    pub(super) fn number_of(metrics: &Metrics, name: &str) -> Option<f64> {
        match metrics.get(name)? {
            MetricValue::Number(number) => Some(number),
            MetricValue::Bool(_) => None,
        }
    }

    /// `(passed, failed, skipped, total)` or None when no test figure was seen.
    pub(super) fn tests(text: &str) -> Option<(f64, f64, f64, f64)> {
        let metrics = parse(text);
        Some((
            number_of(&metrics, "tests_passed")?,
            number_of(&metrics, "tests_failed")?,
            number_of(&metrics, "tests_skipped")?,
            number_of(&metrics, "tests_total")?,
        ))
    }

    #[test]
    fn regression_a_run_that_only_skipped_tests_ran_none() {
        let metrics = parse_output("===== 5 skipped in 0.01s =====\n".as_bytes());
        assert_eq!(metrics.tests_ran(), Some(0));
    }

    #[test]
    fn two_runners_in_one_log_add_up() {
        let output = "test result: ok. 2 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s\n== 3 passed in 0.10s ==\n";
        assert_eq!(tests(output), Some((5.0, 0.0, 0.0, 5.0)));
    }

    #[test]
    fn output_without_summary_has_no_test_figures() {
        let metrics = parse("building...\ndone\n");
        assert!(metrics.is_empty());
        assert_eq!(metrics.tests_ran(), None);
    }

    #[test]
    fn ansi_colours_and_crlf_are_ignored() {
        let output = "\x1b[1m\x1b[32mtest result: ok.\x1b[0m 2 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s\r\n";
        assert_eq!(tests(output), Some((2.0, 0.0, 0.0, 2.0)));
    }

    #[test]
    fn a_huge_line_is_cut_and_the_next_line_still_parses() {
        let mut output = "x".repeat(3 * MAX_LINE_BYTES);
        output.push_str("\n4 passed, 0 failed\n");
        let reader = std::io::BufReader::with_capacity(1024, output.as_bytes());
        assert_eq!(parse_output(reader).tests_ran(), Some(4));
    }

    #[test]
    fn parse_log_reads_a_file() {
        let directory = tempfile::tempdir().expect("temporary directory");
        let path = directory.path().join("check.log");
        std::fs::write(&path, "Tests:       2 passed, 2 total\n").expect("test fixture");
        assert_eq!(parse_log(&path).expect("test fixture").tests_ran(), Some(2));
        assert!(parse_log(&directory.path().join("missing.log")).is_err());
    }

    #[test]
    fn metrics_serialise_as_a_plain_object() {
        let mut metrics = Metrics::default();
        metrics.set_number("tests_passed", 3.0);
        metrics.set_number("duplication_percentage", 3.25);
        metrics.set_bool("openapi_valid", true);
        assert_eq!(
            serde_json::to_string(&metrics).expect("test fixture"),
            r#"{"duplication_percentage":3.25,"openapi_valid":true,"tests_passed":3}"#
        );
        assert_eq!(MetricValue::Number(12.0).to_string(), "12");
        assert_eq!(MetricValue::Number(3.25).to_string(), "3.25");
    }
}
