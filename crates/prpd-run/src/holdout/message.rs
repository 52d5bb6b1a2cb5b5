//! What a failing held-out test said, for GREEN: the assertion's message as the runner printed
//! it after the test's name (`0 !== -12`, `assert 12 == -12`), on one line. It is read from
//! the test command's output without knowing the runner: the lines after the last line that
//! names the test, up to the next test or a stack trace. The caller withholds any line of the
//! test's source the runner quoted (`withhold.rs`); what is left is behaviour.

/// The most of a message kept.
const LONGEST: usize = 300;

/// Lines that end a test's message: the next test, or where the runner starts its trace.
const ENDS: &[&str] = &[
    "# Subtest",
    "not ok ",
    "ok ",
    "stack",
    "at ",
    "FAILED ",
    "PASSED ",
    "---- ",
    "test ",
    "Traceback",
    "----",
    "====",
];

/// Lines inside a message that say nothing about behaviour.
const NOISE: &[&str] = &[
    "---",
    "...",
    "duration_ms",
    "location:",
    "failureType",
    "code:",
    "name:",
    "operator:",
];

/// The message the output `log` gives for the test `name`, if it gives one.
pub fn of(log: &str, name: &str) -> Option<String> {
    let lines: Vec<&str> = log.lines().collect();
    let at = lines.iter().rposition(|line| line.contains(name))?;
    let mut parts = Vec::new();
    let tail = lines[at]
        .split_once(name)
        .map_or("", |(_, tail)| tail)
        .trim()
        .trim_start_matches(['-', ':', ' '])
        .trim();
    if !tail.is_empty() && !tail.starts_with('#') {
        parts.push(tail.to_owned());
    }
    for line in lines.iter().skip(at + 1).take(24) {
        let trimmed = line.trim();
        if ENDS.iter().any(|end| trimmed.starts_with(end)) {
            break;
        }
        if trimmed.is_empty() || NOISE.iter().any(|noise| trimmed.starts_with(noise)) {
            continue;
        }
        parts.push(trimmed.trim_start_matches("error: |-").trim().to_owned());
    }
    let message = parts
        .into_iter()
        .filter(|part| !part.is_empty())
        .collect::<Vec<_>>()
        .join(" ");
    if message.is_empty() {
        return None;
    }
    Some(if message.chars().count() > LONGEST {
        message.chars().take(LONGEST).chain(['…']).collect()
    } else {
        message
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn node_tap_gives_its_assertion_and_values() {
        let log = "# Subtest: AC-1: keeps the sign\nnot ok 3 - AC-1: keeps the sign\n  ---\n  duration_ms: 1.0\n  \
                   location: '/x/test/m.test.js:9:1'\n  failureType: 'testCodeFailure'\n  error: |-\n    Expected values to be strictly equal:\n    \n    0 !== -12\n    \n  \
                   code: 'ERR_ASSERTION'\n  name: 'AssertionError'\n  expected: -12\n  actual: 0\n  operator: 'strictEqual'\n  stack: |-\n    at x\n";
        assert_eq!(
            of(log, "AC-1: keeps the sign").as_deref(),
            Some("Expected values to be strictly equal: 0 !== -12 expected: -12 actual: 0")
        );
    }

    #[test]
    fn pytest_gives_the_summary_line_and_a_test_that_said_nothing_gives_none() {
        let log = "tests/test_m.py::test_ac_1_sign FAILED\n\
                   FAILED tests/test_m.py::test_ac_1_sign - assert 12 == -12\n";
        assert_eq!(
            of(log, "tests/test_m.py::test_ac_1_sign").as_deref(),
            Some("assert 12 == -12")
        );
        assert_eq!(of("ok 1 - quiet\n", "quiet"), None);
        assert_eq!(of("nothing\n", "absent"), None);
    }
}
