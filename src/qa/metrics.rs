//! The figures prpd reads out of a check's output: how many tests passed or failed, how many
//! lint errors a linter reported, the worst cyclomatic complexity, the duplication percentage.
//!
//! Theory of operation. A check's log can be huge (a flooding test suite writes tens of MiB),
//! so [`parse_output`] reads it line by line, cuts every line at [`MAX_LINE_BYTES`] and keeps
//! only running sums. Each tool's summary line has its own small parser, tried in a fixed order;
//! the first that recognises a line wins, so a line is never counted twice. Summary lines add up
//! (cargo prints one `test result:` line per test binary; a Makefile may run two runners), and
//! per-item lines (flake8's `path:l:c: E123`, go's `--- PASS:`) are only a fallback used when
//! no summary line of the same kind was seen, because tools such as ruff print both. A figure
//! that was never seen is absent, not zero: the checklist treats a missing figure as
//! "prpd could not measure this", never as a pass.

use std::collections::BTreeMap;
use std::fmt;
use std::io::BufRead;
use std::path::Path;
use std::sync::LazyLock;

use regex::Regex;
use serde::{Serialize, Serializer};

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

/// Named figures, ordered by name; serialises as one JSON object of numbers and booleans.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(transparent)]
pub struct Metrics(BTreeMap<String, MetricValue>);

impl Metrics {
    /// Sets (or replaces) a number.
    pub fn set_number(&mut self, name: &str, value: f64) {
        self.0.insert(name.to_owned(), MetricValue::Number(value));
    }

    /// Sets (or replaces) a yes/no fact.
    pub fn set_bool(&mut self, name: &str, value: bool) {
        self.0.insert(name.to_owned(), MetricValue::Bool(value));
    }

    /// The figure called `name`, if it was measured.
    pub fn get(&self, name: &str) -> Option<MetricValue> {
        self.0.get(name).copied()
    }

    /// Every figure, ordered by name.
    pub fn iter(&self) -> impl Iterator<Item = (&str, MetricValue)> {
        self.0.iter().map(|(name, value)| (name.as_str(), *value))
    }

    /// True when nothing was measured.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// How many tests ran — passed plus failed; skipped tests ran nothing — if any test
    /// runner's summary was seen. `Some(0)` means a runner reported that it ran nothing (or
    /// skipped everything), which QA must not take as a pass.
    pub fn tests_ran(&self) -> Option<u64> {
        self.get("tests_total")?;
        let count = |name| match self.get(name) {
            #[expect(
                clippy::cast_possible_truncation,
                clippy::cast_sign_loss,
                reason = "test counts are sums of u32 counts"
            )]
            Some(MetricValue::Number(value)) => value.max(0.0) as u64,
            Some(MetricValue::Bool(_)) | None => 0,
        };
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

/// Compiles one of this file's fixed patterns; they are covered by the tests below.
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
#[derive(Debug, Clone, Copy, PartialEq)]
enum Finding {
    Tests(TestSummary),
    /// A go test result line (`--- PASS: TestX`), counted only without package summaries.
    GoTest(GoResult),
    /// A go package line (`ok  \tpkg`), used when `-v` was not given.
    GoPackage(GoPackage),
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

#[derive(Debug, Clone, Copy, PartialEq)]
enum GoResult {
    Pass,
    Fail,
    Skip,
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

/// The running sums of one parse.
#[derive(Debug, Default)]
struct Tally {
    tests: Option<TestSummary>,
    tests_total: u32,
    go_tests: [u32; 3],
    go_packages: [u32; 3],
    saw_go: bool,
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
        let Some(finding) = classify(line) else {
            return;
        };
        match finding {
            Finding::Tests(summary) => {
                let sum = self.tests.get_or_insert_with(TestSummary::default);
                sum.passed = sum.passed.saturating_add(summary.passed);
                sum.failed = sum.failed.saturating_add(summary.failed);
                sum.skipped = sum.skipped.saturating_add(summary.skipped);
                self.tests_total = self.tests_total.saturating_add(summary.total());
            }
            Finding::GoTest(result) => {
                self.saw_go = true;
                let index = match result {
                    GoResult::Pass => 0,
                    GoResult::Fail => 1,
                    GoResult::Skip => 2,
                };
                self.go_tests[index] = self.go_tests[index].saturating_add(1);
            }
            Finding::GoPackage(package) => {
                self.saw_go = true;
                let index = match package {
                    GoPackage::Ok => 0,
                    GoPackage::Fail => 1,
                    GoPackage::NoTests => 2,
                };
                self.go_packages[index] = self.go_packages[index].saturating_add(1);
            }
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

    /// The sums as named figures; kinds never seen stay absent.
    fn into_metrics(mut self) -> Metrics {
        if self.saw_go {
            self.add_go_counts();
        }
        let mut metrics = Metrics::default();
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

    /// go test prints per-test lines only with `-v`; without it, each package line stands for
    /// that package's tests, so a package counts as one passed or failed test, and a run whose
    /// packages all say `[no test files]` ran zero tests.
    fn add_go_counts(&mut self) {
        let [pass, fail, skip] = self.go_tests;
        let summary = if pass + fail + skip > 0 {
            TestSummary {
                passed: pass,
                failed: fail,
                skipped: skip,
                total: None,
            }
        } else {
            let [ok, failed, _no_tests] = self.go_packages;
            TestSummary {
                passed: ok,
                failed,
                skipped: 0,
                total: None,
            }
        };
        let sum = self.tests.get_or_insert_with(TestSummary::default);
        sum.passed = sum.passed.saturating_add(summary.passed);
        sum.failed = sum.failed.saturating_add(summary.failed);
        sum.skipped = sum.skipped.saturating_add(summary.skipped);
        self.tests_total = self.tests_total.saturating_add(summary.total());
    }
}

/// Tries each tool's parser in turn; the order puts specific formats before generic ones.
/// Each parser comes with a piece of text its lines always contain, so a long log of ordinary
/// lines costs a few substring searches per line instead of a dozen regex runs.
fn classify(line: &str) -> Option<Finding> {
    type Parser = fn(&str) -> Option<Finding>;
    const PARSERS: &[(&str, Parser)] = &[
        ("test result: ", cargo_test),
        ("Summary [", nextest),
        ("Tests:", jest),
        ("Tests ", vitest),
        ("", node_test),
        (" / ", busted),
        (" in ", pytest),
        ("", go_test),
        (" passed, ", plain_counts),
        ("✖", eslint),
        ("", ruff),
        ("Total: ", luacheck),
        (" issue", golangci_lint),
        ("`", clippy),
        (": ", flake8_item),
        (" - ", radon),
        (".go:", gocyclo),
        ("has a complexity of", eslint_complexity),
        ("cyclomatic complexity of", luacheck_complexity),
        ("@", lizard),
        ("max_complexity", generic_complexity),
        ("", jscpd),
        ("Found total", dupl),
    ];
    PARSERS
        .iter()
        .filter(|(needle, _)| line.contains(needle))
        .find_map(|(_, parser)| parser(line))
}

fn number(text: &str) -> u32 {
    text.parse().unwrap_or(u32::MAX)
}

fn float(text: &str) -> Option<f64> {
    text.parse().ok()
}

/// Reads `N word` items (`3 passed`, `1 failed`) into a summary with the given vocabulary.
fn count_items<'a>(items: impl Iterator<Item = (u32, &'a str)>) -> TestSummary {
    let mut summary = TestSummary::default();
    for (count, word) in items {
        match word.to_ascii_lowercase().as_str() {
            "passed" | "pass" | "passing" | "xpassed" | "successes" | "success" => {
                summary.passed = summary.passed.saturating_add(count);
            }
            "failed" | "fail" | "failing" | "failures" | "failure" | "errors" | "error"
            | "cancelled" | "timed" => summary.failed = summary.failed.saturating_add(count),
            "skipped" | "skip" | "pending" | "ignored" | "xfailed" | "todo" => {
                summary.skipped = summary.skipped.saturating_add(count);
            }
            "total" | "tests" => summary.total = Some(count),
            _ => {}
        }
    }
    summary
}

/// `test result: ok. 3 passed; 0 failed; 1 ignored; 0 measured; 0 filtered out; finished in 0.00s`
fn cargo_test(line: &str) -> Option<Finding> {
    static PATTERN: LazyLock<Regex> = LazyLock::new(|| {
        regex(r"^test result: (?:ok|FAILED)\. (\d+) passed; (\d+) failed; (\d+) ignored;")
    });
    let captures = PATTERN.captures(line.trim())?;
    Some(Finding::Tests(TestSummary {
        passed: number(&captures[1]),
        failed: number(&captures[2]),
        skipped: number(&captures[3]),
        total: None,
    }))
}

/// `     Summary [   0.015s] 3 tests run: 2 passed, 1 failed, 1 skipped`
fn nextest(line: &str) -> Option<Finding> {
    static PATTERN: LazyLock<Regex> =
        LazyLock::new(|| regex(r"^Summary \[[^\]]*\] (\d+) tests? run: (.*)$"));
    static ITEM: LazyLock<Regex> = LazyLock::new(|| regex(r"(\d+) ([a-z]+)"));
    let captures = PATTERN.captures(line.trim())?;
    let mut summary = count_items(ITEM.captures_iter(&captures[2]).map(|item| {
        (
            number(&item[1]),
            item.get(2).map_or("", |word| word.as_str()),
        )
    }));
    let run = number(&captures[1]);
    summary.total = Some(run.saturating_add(summary.skipped));
    Some(Finding::Tests(summary))
}

/// `Tests:       1 failed, 2 skipped, 3 passed, 6 total`
fn jest(line: &str) -> Option<Finding> {
    static PATTERN: LazyLock<Regex> =
        LazyLock::new(|| regex(r"^Tests:\s+(\d+ [a-z]+(?:, \d+ [a-z]+)*)$"));
    static ITEM: LazyLock<Regex> = LazyLock::new(|| regex(r"(\d+) ([a-z]+)"));
    let captures = PATTERN.captures(line.trim())?;
    Some(Finding::Tests(count_items(
        ITEM.captures_iter(&captures[1]).map(|item| {
            (
                number(&item[1]),
                item.get(2).map_or("", |word| word.as_str()),
            )
        }),
    )))
}

/// `      Tests  1 failed | 2 passed (3)`
fn vitest(line: &str) -> Option<Finding> {
    static PATTERN: LazyLock<Regex> =
        LazyLock::new(|| regex(r"^Tests\s+(\d+ [a-z]+(?: \| \d+ [a-z]+)*) \((\d+)\)"));
    static ITEM: LazyLock<Regex> = LazyLock::new(|| regex(r"(\d+) ([a-z]+)"));
    let captures = PATTERN.captures(line.trim())?;
    let mut summary = count_items(ITEM.captures_iter(&captures[1]).map(|item| {
        (
            number(&item[1]),
            item.get(2).map_or("", |word| word.as_str()),
        )
    }));
    summary.total = Some(number(&captures[2]));
    Some(Finding::Tests(summary))
}

/// node --test: TAP `# pass 3` and the spec reporter's `ℹ pass 3`, one figure per line.
fn node_test(line: &str) -> Option<Finding> {
    static PATTERN: LazyLock<Regex> =
        LazyLock::new(|| regex(r"^(?:#|ℹ) (tests|pass|fail|cancelled|skipped|skip|todo)\s+(\d+)$"));
    let line = line.trim();
    if !line.starts_with("# ") && !line.starts_with("ℹ ") {
        return None;
    }
    let captures = PATTERN.captures(line)?;
    let count = number(&captures[2]);
    let mut summary = count_items(std::iter::once((count, &captures[1])));
    if summary.total.is_none() {
        summary.total = Some(0);
    }
    Some(Finding::Tests(summary))
}

/// `3 successes / 0 failures / 1 errors / 0 pending : 0.012 seconds`
fn busted(line: &str) -> Option<Finding> {
    static PATTERN: LazyLock<Regex> = LazyLock::new(|| {
        regex(r"^(\d+) successes? / (\d+) failures? / (\d+) errors? / (\d+) pending")
    });
    let captures = PATTERN.captures(line.trim())?;
    Some(Finding::Tests(TestSummary {
        passed: number(&captures[1]),
        failed: number(&captures[2]).saturating_add(number(&captures[3])),
        skipped: number(&captures[4]),
        total: None,
    }))
}

/// `==== 3 passed, 1 failed, 2 skipped, 1 warning in 0.12s ====`, `3 passed in 0.01s` (`-q`)
/// and `==== no tests ran in 0.01s ====`.
fn pytest(line: &str) -> Option<Finding> {
    static PATTERN: LazyLock<Regex> = LazyLock::new(|| {
        regex(r"^=*\s*(\d+ [a-z]+(?:, \d+ [a-z]+)*|no tests ran) in [\d.]+m?s(?: \([^)]*\))?\s*=*$")
    });
    static ITEM: LazyLock<Regex> = LazyLock::new(|| regex(r"(\d+) ([a-z]+)"));
    let captures = PATTERN.captures(line.trim())?;
    if &captures[1] == "no tests ran" {
        return Some(Finding::Tests(TestSummary::default()));
    }
    Some(Finding::Tests(count_items(
        ITEM.captures_iter(&captures[1]).map(|item| {
            (
                number(&item[1]),
                item.get(2).map_or("", |word| word.as_str()),
            )
        }),
    )))
}

/// go test: top-level `--- PASS: TestX (0.00s)` lines (sub-tests are indented and not
/// counted) and the package lines `ok  \tpkg\t0.01s`, `FAIL\tpkg\t0.01s`, `?   \tpkg\t[no test files]`.
fn go_test(line: &str) -> Option<Finding> {
    static PACKAGE: LazyLock<Regex> = LazyLock::new(|| regex(r"^(ok|FAIL|\?)\s+\S+(?:\s+(.*))?$"));
    if let Some(rest) = line.strip_prefix("--- ") {
        let result = match rest.split(':').next()? {
            "PASS" => GoResult::Pass,
            "FAIL" => GoResult::Fail,
            "SKIP" => GoResult::Skip,
            _ => return None,
        };
        return Some(Finding::GoTest(result));
    }
    if !line.contains('\t') {
        return None;
    }
    let captures = PACKAGE.captures(line)?;
    let rest = captures.get(2).map_or("", |rest| rest.as_str());
    let package = match &captures[1] {
        _ if rest.contains("[no test files]") || rest.contains("[no tests to run]") => {
            GoPackage::NoTests
        }
        "ok" => GoPackage::Ok,
        "FAIL" => GoPackage::Fail,
        _ => return None,
    };
    Some(Finding::GoPackage(package))
}

/// The plain `N passed, N failed` line (optionally `, N skipped`, optionally `word:` before),
/// which small hand-written runners print.
fn plain_counts(line: &str) -> Option<Finding> {
    static PATTERN: LazyLock<Regex> = LazyLock::new(|| {
        regex(r"^(?:[A-Za-z][\w-]*:\s*)?(\d+) passed, (\d+) failed(?:, (\d+) skipped)?\.?$")
    });
    let captures = PATTERN.captures(line.trim())?;
    Some(Finding::Tests(TestSummary {
        passed: number(&captures[1]),
        failed: number(&captures[2]),
        skipped: captures
            .get(3)
            .map_or(0, |skipped| number(skipped.as_str())),
        total: None,
    }))
}

/// `✖ 5 problems (3 errors, 2 warnings)`
fn eslint(line: &str) -> Option<Finding> {
    static PATTERN: LazyLock<Regex> =
        LazyLock::new(|| regex(r"^✖ \d+ problems? \((\d+) errors?, (\d+) warnings?\)"));
    let captures = PATTERN.captures(line.trim())?;
    Some(Finding::Lint(LintSummary {
        errors: number(&captures[1]),
        warnings: number(&captures[2]),
    }))
}

/// ruff `Found 3 errors.` (mypy's `Found 3 errors in 2 files` reads the same) and
/// `All checks passed!`.
fn ruff(line: &str) -> Option<Finding> {
    static PATTERN: LazyLock<Regex> = LazyLock::new(|| regex(r"^Found (\d+) errors?\b"));
    let line = line.trim();
    if line == "All checks passed!" {
        return Some(Finding::LintClean);
    }
    let captures = PATTERN.captures(line)?;
    Some(Finding::Lint(LintSummary {
        errors: number(&captures[1]),
        warnings: 0,
    }))
}

/// `Total: 2 warnings / 1 error in 3 files`
fn luacheck(line: &str) -> Option<Finding> {
    static PATTERN: LazyLock<Regex> =
        LazyLock::new(|| regex(r"^Total: (\d+) warnings? / (\d+) errors? in \d+ files?"));
    let captures = PATTERN.captures(line.trim())?;
    Some(Finding::Lint(LintSummary {
        errors: number(&captures[2]),
        warnings: number(&captures[1]),
    }))
}

/// golangci-lint `3 issues:` (followed by per-linter counts) and `0 issues.`
fn golangci_lint(line: &str) -> Option<Finding> {
    static PATTERN: LazyLock<Regex> = LazyLock::new(|| regex(r"^(\d+) issues?[:.]$"));
    let captures = PATTERN.captures(line.trim())?;
    Some(Finding::Lint(LintSummary {
        errors: number(&captures[1]),
        warnings: 0,
    }))
}

/// cargo clippy: ``error: could not compile `app` (lib) due to 3 previous errors; 2 warnings
/// emitted`` and ``warning: `app` (lib) generated 4 warnings``.
fn clippy(line: &str) -> Option<Finding> {
    static FAILED: LazyLock<Regex> = LazyLock::new(|| {
        regex(
            r"^error: could not compile `[^`]+`(?: \([^)]*\))?(?: due to (\d+) previous errors?)?(?:; (\d+) warnings? emitted)?",
        )
    });
    static WARNED: LazyLock<Regex> =
        LazyLock::new(|| regex(r"^warning: `[^`]+`(?: \([^)]*\))? generated (\d+) warnings?"));
    let line = line.trim();
    if let Some(captures) = FAILED.captures(line) {
        return Some(Finding::Lint(LintSummary {
            errors: captures.get(1).map_or(1, |errors| number(errors.as_str())),
            warnings: captures
                .get(2)
                .map_or(0, |warnings| number(warnings.as_str())),
        }));
    }
    let captures = WARNED.captures(line)?;
    Some(Finding::Lint(LintSummary {
        errors: 0,
        warnings: number(&captures[1]),
    }))
}

/// flake8 (and pycodestyle) items: `app/main.py:3:1: E302 expected 2 blank lines, found 1`.
fn flake8_item(line: &str) -> Option<Finding> {
    static PATTERN: LazyLock<Regex> =
        LazyLock::new(|| regex(r"^[^\s:][^:]*:\d+:\d+: ([A-Z]+)\d+ "));
    let captures = PATTERN.captures(line)?;
    Some(Finding::LintItem {
        warning: &captures[1] == "W",
    })
}

/// radon `cc -s`: `    F 12:0 handle_request - B (7)`. Without `-s` radon prints only the
/// rank (`M 40:4 Router.route - C`); the rank's lowest score stands in for the score, so a
/// listed C-ranked function counts as at least 11.
fn radon(line: &str) -> Option<Finding> {
    static PATTERN: LazyLock<Regex> =
        LazyLock::new(|| regex(r"^[FMC] \d+:\d+ \S+ - ([A-F])(?: \((\d+)\))?$"));
    let captures = PATTERN.captures(line.trim())?;
    if let Some(score) = captures.get(2) {
        return float(score.as_str()).map(Finding::Complexity);
    }
    let lowest = match &captures[1] {
        "A" => 1.0,
        "B" => 6.0,
        "C" => 11.0,
        "D" => 21.0,
        "E" => 31.0,
        _ => 41.0,
    };
    Some(Finding::Complexity(lowest))
}

/// gocyclo: `12 main (*Server).handle server.go:40:1`
fn gocyclo(line: &str) -> Option<Finding> {
    static PATTERN: LazyLock<Regex> = LazyLock::new(|| regex(r"^(\d+) \S+ \S+ \S+\.go:\d+:\d+$"));
    let captures = PATTERN.captures(line.trim())?;
    float(&captures[1]).map(Finding::Complexity)
}

/// eslint's complexity rule: `Function 'parse' has a complexity of 12. Maximum allowed is 10.`
fn eslint_complexity(line: &str) -> Option<Finding> {
    static PATTERN: LazyLock<Regex> = LazyLock::new(|| regex(r"has a complexity of (\d+)"));
    let captures = PATTERN.captures(line)?;
    float(&captures[1]).map(Finding::Complexity)
}

/// luacheck with `--max-cyclomatic-complexity`:
/// `src/app.lua:3:1: cyclomatic complexity of function 'parse' is too high (12 > 10)`
fn luacheck_complexity(line: &str) -> Option<Finding> {
    static PATTERN: LazyLock<Regex> =
        LazyLock::new(|| regex(r"cyclomatic complexity of .* is too high \((\d+) > \d+\)"));
    let captures = PATTERN.captures(line)?;
    float(&captures[1]).map(Finding::Complexity)
}

/// A lizard function row: `      12      4     80      2      14 parse@3-16@src/app.py`
/// (NLOC, CCN, token, PARAM, length, location).
fn lizard(line: &str) -> Option<Finding> {
    static PATTERN: LazyLock<Regex> =
        LazyLock::new(|| regex(r"^\d+\s+(\d+)\s+\d+\s+\d+\s+\d+\s+\S+@\d+-\d+@\S+"));
    let captures = PATTERN.captures(line.trim())?;
    float(&captures[1]).map(Finding::Complexity)
}

/// `max_complexity: 7` (or `= 7`), for project scripts that compute the figure themselves.
fn generic_complexity(line: &str) -> Option<Finding> {
    static PATTERN: LazyLock<Regex> =
        LazyLock::new(|| regex(r"^max_complexity\s*[:=]\s*(\d+(?:\.\d+)?)$"));
    let captures = PATTERN.captures(line.trim())?;
    float(&captures[1]).map(Finding::Complexity)
}

/// jscpd: the console table's `Total:` row (duplicated lines come first), the older
/// `… duplicated lines … (3.2%)` sentence, the threshold error, and `Found N clones.`
fn jscpd(line: &str) -> Option<Finding> {
    static PERCENT: LazyLock<Regex> = LazyLock::new(|| regex(r"\((\d+(?:\.\d+)?)%\)"));
    static CLONES: LazyLock<Regex> =
        LazyLock::new(|| regex(r"^Found (\d+) (?:exact )?clones?\.?$"));
    static TOO_MANY: LazyLock<Regex> =
        LazyLock::new(|| regex(r"too many duplicates \((\d+(?:\.\d+)?)%\)"));
    let trimmed = line.trim();
    if let Some(captures) = CLONES.captures(trimmed) {
        return Some(Finding::DuplicationClones(number(&captures[1])));
    }
    if trimmed.contains("too many duplicates")
        && let Some(captures) = TOO_MANY.captures(trimmed)
    {
        return float(&captures[1]).map(Finding::DuplicationPercentage);
    }
    let is_total_row = trimmed
        .trim_start_matches(['│', '|', ' '])
        .starts_with("Total:");
    if is_total_row || trimmed.contains("duplicated lines") {
        let captures = PERCENT.captures(trimmed)?;
        return float(&captures[1]).map(Finding::DuplicationPercentage);
    }
    None
}

/// dupl: `Found total 3 clone groups.`
fn dupl(line: &str) -> Option<Finding> {
    static PATTERN: LazyLock<Regex> =
        LazyLock::new(|| regex(r"^Found total (\d+) clone groups?\.?$"));
    let captures = PATTERN.captures(line.trim())?;
    Some(Finding::DuplicationClones(number(&captures[1])))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Metrics {
        parse_output(text.as_bytes())
    }

    fn number_of(metrics: &Metrics, name: &str) -> Option<f64> {
        match metrics.get(name)? {
            MetricValue::Number(number) => Some(number),
            MetricValue::Bool(_) => None,
        }
    }

    /// `(passed, failed, skipped, total)` or None when no test figure was seen.
    fn tests(text: &str) -> Option<(f64, f64, f64, f64)> {
        let metrics = parse(text);
        Some((
            number_of(&metrics, "tests_passed")?,
            number_of(&metrics, "tests_failed")?,
            number_of(&metrics, "tests_skipped")?,
            number_of(&metrics, "tests_total")?,
        ))
    }

    fn lint(text: &str) -> Option<(f64, f64)> {
        let metrics = parse(text);
        Some((
            number_of(&metrics, "lint_errors")?,
            number_of(&metrics, "lint_warnings")?,
        ))
    }

    #[test]
    fn regression_a_run_that_only_skipped_tests_ran_none() {
        let metrics = parse_output("===== 5 skipped in 0.01s =====\n".as_bytes());
        assert_eq!(metrics.tests_ran(), Some(0));
    }

    #[test]
    fn cargo_test_sums_every_binary() {
        let output = "\
running 2 tests
test parse::tests::empty ... ok
test parse::tests::full ... FAILED

test result: FAILED. 1 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s

running 3 tests
test it::a ... ok
test it::b ... ignored
test it::c ... ok

test result: ok. 2 passed; 0 failed; 1 ignored; 0 measured; 0 filtered out; finished in 0.01s

   Doc-tests app

running 0 tests

test result: ok. 0 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s
";
        assert_eq!(tests(output), Some((3.0, 1.0, 1.0, 5.0)));
    }

    #[test]
    fn nextest_summary() {
        let output = "\
    Starting 4 tests across 2 binaries (1 test skipped)
        PASS [   0.004s] app tests::a
        FAIL [   0.005s] app tests::b
------------
     Summary [   0.015s] 3 tests run: 2 passed, 1 failed, 1 skipped
        FAIL [   0.005s] app tests::b
error: test run failed
";
        assert_eq!(tests(output), Some((2.0, 1.0, 1.0, 4.0)));
    }

    #[test]
    fn pytest_summaries() {
        let banner = "\
============================= test session starts ==============================
collected 6 items

tests/test_app.py ...F.s                                                 [100%]
=================== 3 passed, 1 failed, 2 skipped, 1 warning in 0.12s ===================
";
        assert_eq!(tests(banner), Some((3.0, 1.0, 2.0, 6.0)));
        assert_eq!(tests("5 passed in 0.03s\n"), Some((5.0, 0.0, 0.0, 5.0)));
        assert_eq!(
            tests(
                "============================ no tests ran in 0.01s =============================\n"
            ),
            Some((0.0, 0.0, 0.0, 0.0))
        );
        assert_eq!(
            tests("==== 1 failed, 2 passed, 1 error in 1.50s ====\n"),
            Some((2.0, 2.0, 0.0, 4.0))
        );
    }

    #[test]
    fn go_test_verbose_counts_top_level_results() {
        let output = "\
=== RUN   TestAdd
--- PASS: TestAdd (0.00s)
=== RUN   TestTable
=== RUN   TestTable/zero
    --- FAIL: TestTable/zero (0.00s)
--- FAIL: TestTable (0.00s)
=== RUN   TestSlow
    slow_test.go:9: short mode
--- SKIP: TestSlow (0.00s)
FAIL
FAIL\texample.com/calc\t0.004s
?   \texample.com/calc/cmd\t[no test files]
FAIL
";
        assert_eq!(tests(output), Some((1.0, 1.0, 1.0, 3.0)));
    }

    #[test]
    fn go_test_without_verbose_counts_packages() {
        let output = "\
ok  \texample.com/calc\t0.004s
ok  \texample.com/calc/internal\t(cached)
?   \texample.com/calc/cmd\t[no test files]
";
        assert_eq!(tests(output), Some((2.0, 0.0, 0.0, 2.0)));
    }

    #[test]
    fn go_test_with_only_no_test_files_ran_nothing() {
        let metrics = parse("?   \texample.com/calc\t[no test files]\n");
        assert_eq!(metrics.tests_ran(), Some(0));
    }

    #[test]
    fn jest_tests_line() {
        let output = "\
Test Suites: 1 failed, 1 passed, 2 total
Tests:       1 failed, 3 passed, 4 total
Snapshots:   0 total
Time:        1.2 s
";
        assert_eq!(tests(output), Some((3.0, 1.0, 0.0, 4.0)));
    }

    #[test]
    fn vitest_tests_line() {
        let passing =
            " Test Files  1 passed (1)\n      Tests  3 passed (3)\n   Start at  10:00:00\n";
        assert_eq!(tests(passing), Some((3.0, 0.0, 0.0, 3.0)));
        let failing = " Test Files  1 failed (1)\n      Tests  1 failed | 2 passed (3)\n";
        assert_eq!(tests(failing), Some((2.0, 1.0, 0.0, 3.0)));
    }

    #[test]
    fn node_test_tap_and_spec_reporters() {
        let tap = "\
TAP version 13
ok 1 - adds
ok 2 - subtracts
not ok 3 - divides
1..3
# tests 3
# suites 0
# pass 2
# fail 1
# cancelled 0
# skipped 0
# todo 0
# duration_ms 41.2
";
        assert_eq!(tests(tap), Some((2.0, 1.0, 0.0, 3.0)));
        let spec = "✔ adds (0.5ms)\nℹ tests 3\nℹ suites 0\nℹ pass 3\nℹ fail 0\nℹ skipped 0\n";
        assert_eq!(tests(spec), Some((3.0, 0.0, 0.0, 3.0)));
    }

    #[test]
    fn busted_summary() {
        let output = "●●◼\n2 successes / 1 failure / 0 errors / 1 pending : 0.012 seconds\n";
        assert_eq!(tests(output), Some((2.0, 1.0, 1.0, 4.0)));
    }

    #[test]
    fn plain_counts_line() {
        assert_eq!(tests("4 passed, 0 failed\n"), Some((4.0, 0.0, 0.0, 4.0)));
        assert_eq!(
            tests("Results: 4 passed, 1 failed, 2 skipped\n"),
            Some((4.0, 1.0, 2.0, 7.0))
        );
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
    fn eslint_problems() {
        let output = "\
/repo/src/app.js
  1:10  error    'x' is defined but never used  no-unused-vars
  3:1   warning  Unexpected console statement   no-console

✖ 5 problems (3 errors, 2 warnings)
  1 error and 0 warnings potentially fixable with the `--fix` option.
";
        assert_eq!(lint(output), Some((3.0, 2.0)));
    }

    #[test]
    fn ruff_found_and_clean() {
        let output = "app.py:1:8: F401 [*] `os` imported but unused\napp.py:4:1: E402 Module level import not at top of file\nFound 2 errors.\n[*] 1 fixable with the `--fix` option.\n";
        assert_eq!(
            lint(output),
            Some((2.0, 0.0)),
            "summary wins over item lines"
        );
        assert_eq!(lint("All checks passed!\n"), Some((0.0, 0.0)));
    }

    #[test]
    fn luacheck_total() {
        let output = "Checking src/app.lua                          2 warnings\n\n    src/app.lua:3:7: unused variable x\n\nTotal: 2 warnings / 1 error in 3 files\n";
        assert_eq!(lint(output), Some((1.0, 2.0)));
    }

    #[test]
    fn golangci_lint_issue_count() {
        let output = "main.go:5:2: Error return value is not checked (errcheck)\n\tos.Remove(\"x\")\n\t^\n3 issues:\n* errcheck: 2\n* unused: 1\n";
        assert_eq!(lint(output), Some((3.0, 0.0)));
        assert_eq!(lint("0 issues.\n"), Some((0.0, 0.0)));
    }

    #[test]
    fn clippy_errors_and_warnings() {
        let failed = "\
    Checking app v0.1.0 (/repo)
error: this looks like you are trying to swap `a` and `b`
warning: unused variable: `x`
error: could not compile `app` (lib) due to 3 previous errors; 2 warnings emitted
";
        assert_eq!(lint(failed), Some((3.0, 2.0)));
        let warned = "warning: `app` (lib) generated 4 warnings (run `cargo clippy --fix --lib -p app` to apply 1 suggestion)\n    Finished `dev` profile [unoptimized + debuginfo] target(s) in 0.51s\n";
        assert_eq!(lint(warned), Some((0.0, 4.0)));
    }

    #[test]
    fn flake8_items_are_counted_without_a_summary() {
        let output = "app/main.py:3:1: E302 expected 2 blank lines, found 1\napp/main.py:9:80: E501 line too long (88 > 79 characters)\napp/util.py:1:1: W391 blank line at end of file\n";
        assert_eq!(lint(output), Some((2.0, 1.0)));
    }

    #[test]
    fn complexity_parsers() {
        let radon = "app/server.py\n    F 12:0 handle_request - B (7)\n    M 40:4 Router.route - C (12)\n    C 30:0 Router - A (4)\n";
        assert_eq!(number_of(&parse(radon), "max_complexity"), Some(12.0));
        let radon_ranks = "app/server.py\n    M 40:4 Router.route - C\n    F 90:0 legacy - D\n2 blocks (classes, functions, methods) analyzed.\nAverage complexity: C (17.5)\n";
        assert_eq!(number_of(&parse(radon_ranks), "max_complexity"), Some(21.0));
        let gocyclo = "14 main (*Server).handle server.go:40:1\n3 main main main.go:5:1\n";
        assert_eq!(number_of(&parse(gocyclo), "max_complexity"), Some(14.0));
        let eslint = "/repo/src/a.js\n  3:1  error  Function 'parse' has a complexity of 12. Maximum allowed is 10  complexity\n  9:1  error  Arrow function has a complexity of 11. Maximum allowed is 10  complexity\n";
        assert_eq!(number_of(&parse(eslint), "max_complexity"), Some(12.0));
        let luacheck = "Checking src/app.lua                              1 warning\n\n    src/app.lua:3:1: cyclomatic complexity of function 'parse' is too high (12 > 10)\n\nTotal: 1 warning / 0 errors in 1 file\n";
        assert_eq!(number_of(&parse(luacheck), "max_complexity"), Some(12.0));
        let lizard = "\
================================================
  NLOC    CCN   token  PARAM  length  location
------------------------------------------------
       3      1     13      0       3 main@1-3@./a.c
      18      6     90      2      20 parse@5-24@./a.c
2 file analyzed.
";
        assert_eq!(number_of(&parse(lizard), "max_complexity"), Some(6.0));
        assert_eq!(
            number_of(&parse("max_complexity: 9\n"), "max_complexity"),
            Some(9.0)
        );
    }

    #[test]
    fn jscpd_total_row_and_sentences() {
        let table = "\
Clone found (javascript):
 - src/a.js [1:1 - 20:2] (19 lines, 120 tokens)
   src/b.js [1:1 - 20:2]

┌────────────┬────────────────┬─────────────┬──────────────┬──────────────┬──────────────────┬───────────────────┐
│ Format     │ Files analyzed │ Total lines │ Total tokens │ Clones found │ Duplicated lines │ Duplicated tokens │
├────────────┼────────────────┼─────────────┼──────────────┼──────────────┼──────────────────┼───────────────────┤
│ javascript │ 2              │ 40          │ 240          │ 1            │ 19 (47.5%)       │ 120 (50%)         │
├────────────┼────────────────┼─────────────┼──────────────┼──────────────┼──────────────────┼───────────────────┤
│ Total:     │ 2              │ 40          │ 240          │ 1            │ 19 (47.5%)       │ 120 (50%)         │
└────────────┴────────────────┴─────────────┴──────────────┴──────────────┴──────────────────┴───────────────────┘
Found 1 clones.
";
        let metrics = parse(table);
        assert_eq!(number_of(&metrics, "duplication_percentage"), Some(47.5));
        assert_eq!(number_of(&metrics, "duplication_clones"), Some(1.0));
        let old = "Found 3 exact clones with 25(3.2%) duplicated lines in 10 (1 formats) files.\n";
        assert_eq!(number_of(&parse(old), "duplication_percentage"), Some(3.2));
        let none = parse("Found 0 clones.\n");
        assert_eq!(number_of(&none, "duplication_percentage"), Some(0.0));
    }

    #[test]
    fn dupl_clone_groups() {
        let some =
            parse("found 2 clones:\n  a.go:3,20\n  b.go:5,22\nFound total 1 clone groups.\n");
        assert_eq!(number_of(&some, "duplication_clones"), Some(1.0));
        assert_eq!(number_of(&some, "duplication_percentage"), None);
        let none = parse("Found total 0 clone groups.\n");
        assert_eq!(number_of(&none, "duplication_percentage"), Some(0.0));
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
