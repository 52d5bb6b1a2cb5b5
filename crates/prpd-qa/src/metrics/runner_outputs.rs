//! The runner table tests: every real runner output captured under
//! `tests/fixtures/runner-output/<runner>/<scenario>.out` is parsed, and every real JUnit XML
//! report under `tests/fixtures/junit/<runner>/<scenario>.xml` (or the reports of one run in
//! the folder `<scenario>/`) is read, and each is compared with the truth written beside it in
//! `<scenario>.toml` by a person reading the output. All mismatches are reported at once, so a
//! parser change shows everything it broke.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::metrics::{JunitTests, Metrics, Outcome, parse_log};

/// What a person concluded from one captured output.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Truth {
    /// The command that produced the output, for the reader.
    #[serde(rename = "command")]
    _command: String,
    /// The runner's own version line, for the reader.
    #[serde(rename = "version")]
    _version: String,
    /// False when the output holds no test figure at all.
    recognised: bool,
    #[serde(default)]
    passed: u32,
    #[serde(default)]
    failed: u32,
    #[serde(default)]
    skipped: u32,
    #[serde(default)]
    passing: Vec<String>,
    #[serde(default)]
    failing: Vec<String>,
    #[serde(default)]
    skipping: Vec<String>,
}

fn fixtures(folder: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures")
        .join(folder)
}

/// Every capture under the fixtures folder `root` (`<runner>/<scenario>.<extension>`), sorted;
/// with `folders`, a folder `<runner>/<scenario>/` with its truth beside it counts too.
fn captures(root: &Path, extension: &str, folders: bool) -> Vec<PathBuf> {
    let mut found = Vec::new();
    for runner in std::fs::read_dir(root).expect("the fixtures folder exists") {
        let runner = runner.expect("readable fixtures folder").path();
        if !runner.is_dir() {
            continue;
        }
        for file in std::fs::read_dir(&runner).expect("readable runner folder") {
            let file = file.expect("readable runner folder").path();
            let capture = if file.is_dir() {
                folders && file.with_extension("toml").is_file()
            } else {
                file.extension().is_some_and(|found| found == extension)
            };
            if capture {
                found.push(file);
            }
        }
    }
    found.sort();
    found
}

/// The truth written beside `capture`.
fn truth(capture: &Path) -> Result<Truth, String> {
    let path = capture.with_extension("toml");
    std::fs::read_to_string(&path)
        .map_err(|error| error.to_string())
        .and_then(|text| toml::from_str(&text).map_err(|error| error.to_string()))
        .map_err(|error| format!("{}: {error}", path.display()))
}

/// Compares what `read` makes of every capture with its truth; panics with every mismatch.
fn check_all(captures: &[PathBuf], read: impl Fn(&Path) -> Result<Metrics, String>) {
    assert!(!captures.is_empty(), "nothing captured");
    let mut report = Vec::new();
    for capture in captures {
        let checked = truth(capture).and_then(|truth| Ok((truth, read(capture)?)));
        match checked {
            Ok((truth, metrics)) => report.extend(
                compare(&metrics, &truth)
                    .into_iter()
                    .map(|mismatch| format!("{}: {mismatch}", capture.display())),
            ),
            Err(error) => report.push(error),
        }
    }
    assert!(
        report.is_empty(),
        "{} of {} captures misread:\n{}",
        report.len(),
        captures.len(),
        report.join("\n")
    );
}

/// The mismatches between what prpd read from one capture and its truth.
fn compare(metrics: &Metrics, truth: &Truth) -> Vec<String> {
    let mut wrong = Vec::new();
    if !truth.recognised {
        if metrics.get("tests_total").is_some() {
            wrong.push(format!(
                "holds no test figure, but prpd read {} passed / {} failed",
                metrics.count("tests_passed").unwrap_or(0),
                metrics.count("tests_failed").unwrap_or(0)
            ));
        }
        return wrong;
    }
    for (name, expected) in [
        ("tests_passed", truth.passed),
        ("tests_failed", truth.failed),
        ("tests_skipped", truth.skipped),
    ] {
        let read = metrics.count(name);
        if read != Some(expected) {
            wrong.push(format!("{name}: expected {expected}, read {read:?}"));
        }
    }
    for (outcome, expected) in [
        (Outcome::Passed, &truth.passing),
        (Outcome::Failed, &truth.failing),
        (Outcome::Skipped, &truth.skipping),
    ] {
        let read: BTreeSet<&str> = metrics.test_cases().named(outcome).collect();
        let expected: BTreeSet<&str> = expected.iter().map(String::as_str).collect();
        if read != expected {
            wrong.push(format!(
                "{} names: expected {expected:?}, read {read:?}",
                outcome.as_str()
            ));
        }
    }
    wrong
}

#[test]
fn runner_outputs_are_read_right() {
    check_all(
        &captures(&fixtures("runner-output"), "out", false),
        |capture| parse_log(capture).map_err(|error| format!("{}: {error}", capture.display())),
    );
}

#[test]
fn junit_reports_are_read_right() {
    check_all(&captures(&fixtures("junit"), "xml", true), |capture| {
        let mut reports: Vec<PathBuf> = if capture.is_dir() {
            std::fs::read_dir(capture)
                .map_err(|error| format!("{}: {error}", capture.display()))?
                .filter_map(Result::ok)
                .map(|entry| entry.path())
                .collect()
        } else {
            vec![capture.to_path_buf()]
        };
        reports.sort();
        let mut tests = JunitTests::default();
        for report in &reports {
            let text = std::fs::read_to_string(report)
                .map_err(|error| format!("{}: {error}", report.display()))?;
            tests
                .add_report(&text)
                .map_err(|error| format!("{}: {error}", report.display()))?;
        }
        Ok(tests.into_metrics())
    });
}
