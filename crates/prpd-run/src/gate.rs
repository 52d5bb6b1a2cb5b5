//! The dual gate: a phase ends only when what prpd measured says it is done (gate 1) and the
//! agent says it is done (gate 2) in the same iteration (DESIGN §3).
//!
//! Gate 1 is computed from [`Measured`] facts the orchestrator collected itself (test runs, file
//! hashes, lint, complexity, checklist results); gate 2 from the agent's last status block
//! ([`Signal`]). The two never stand in for each other: `EXIT_SIGNAL` is never inferred from
//! metrics, and `EXIT_SIGNAL` without gate 1 never ends a phase. Unmet conditions are returned as
//! sentences that go straight into the next iteration's feedback.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::proof::Proof;
use prpd_base::phase::Phase;
use prpd_protocols::test_plan::PlanCheck;

mod lint;

pub use lint::Lint;
use lint::lint_shortfall;

/// Passing and failing test counts parsed from the test command's output.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct TestCounts {
    /// Tests that passed.
    pub passing: u32,
    /// Tests that failed.
    pub failing: u32,
}

/// One run of the test command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TestRun {
    /// The exit code; `None` when the command was killed (timeout) or could not start.
    pub exit_code: Option<i32>,
    /// Counts parsed from the output; `None` when the output had none prpd recognises.
    pub counts: Option<TestCounts>,
    /// Why the counts are missing when the project names a JUnit report (`[qa] junit`) and the
    /// run did not write one prpd could read; the console's counts do not stand in for it.
    pub report_problem: Option<String>,
}

impl TestRun {
    /// This run passed (see [`TestRun::failure`]).
    pub fn passed(&self) -> bool {
        self.failure().is_none()
    }
    /// Why this run does not count as passing, or `None` when it passed: exit code 0, no failing
    /// test counted, and not a run of zero tests (a run that tested nothing proves nothing).
    fn failure(&self) -> Option<String> {
        match (self.exit_code, self.counts) {
            (None, _) => Some("did not finish (killed or timed out)".to_owned()),
            (Some(_), None) if self.report_problem.is_some() => self.report_problem.clone(),
            (Some(code), Some(counts)) if code != 0 => Some(format!(
                "exit code {code}, {} failing test(s)",
                counts.failing
            )),
            (Some(code), None) if code != 0 => Some(format!("exit code {code}")),
            (Some(_), Some(counts)) if counts.failing > 0 => Some(format!(
                "exit code 0 but {} failing test(s) counted",
                counts.failing
            )),
            (Some(_), Some(counts)) if counts.passing == 0 => Some("ran no test".to_owned()),
            (Some(_), None) => Some(
                "exit code 0 but no test count prpd recognises, so nothing shows a test ran"
                    .to_owned(),
            ),
            (Some(_), Some(_)) => None,
        }
    }
}

/// The facts gate 1 looks at, one variant per phase that iterates. SHIP has no gate here: it
/// ends when the push and the pull request succeed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Measured {
    /// RED: the test command must run and fail with at least one counted failing test, and
    /// test files must have been added or changed; with a `TestPlan`, each of its cases must
    /// have a failing test (`prpd-protocols/src/test_plan/coverage.rs`).
    Red {
        /// The test run after the iteration; `None` when no test command could be run.
        tests: Option<TestRun>,
        /// Test files added or changed since the run started.
        changed_test_files: Vec<PathBuf>,
        /// The agent's test plan against the run's failing tests (nothing without a plan).
        test_plan: PlanCheck,
    },
    /// GREEN: the last two test runs pass, at least as many tests as RED counted. (That RED's
    /// tests are unchanged is the frozen measurement's job: they are restored before GREEN is
    /// measured, see `frozen.rs`.)
    Green {
        /// The test runs of this iteration, in order; the last two must pass.
        runs: Vec<TestRun>,
        /// How many tests RED's last run counted (passing + failing); GREEN must pass at least
        /// as many, so a test command narrowed to a subset cannot turn green.
        tests_at_red_end: Option<u32>,
        /// The fail-to-pass proof for the last run, once both runs pass (`None` before that,
        /// or when there was nothing to compare with).
        proof: Option<Proof>,
    },
    /// REFACTOR: tests pass, lint passes, complexity is not worse than at the end of GREEN.
    Refactor {
        /// The test run after the iteration.
        tests: Option<TestRun>,
        /// The lint result.
        lint: Lint,
        /// The highest complexity measured now.
        complexity: Option<u32>,
        /// The highest complexity measured at the end of GREEN; `None` when it was not
        /// measured, in which case there is nothing to compare with.
        complexity_at_green_end: Option<u32>,
    },
    /// DOCUMENT: the documentation checks of the checklist pass. A checklist without
    /// documentation checks asks for nothing here; QA's no-vacuous-approval rule still guards
    /// the release.
    Document {
        /// Names of the documentation checks that failed.
        failed: Vec<String>,
    },
    /// QA: no blocking check failed.
    Qa {
        /// Names of the blocking checks that failed.
        blocking_failed: Vec<String>,
    },
}

impl Measured {
    /// The phase these facts belong to.
    pub fn phase(&self) -> Phase {
        match self {
            Measured::Red { .. } => Phase::Red,
            Measured::Green { .. } => Phase::Green,
            Measured::Refactor { .. } => Phase::Refactor,
            Measured::Document { .. } => Phase::Document,
            Measured::Qa { .. } => Phase::Qa,
        }
    }
}

/// What the agent's last status block said, for gate 2.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Signal {
    /// `EXIT_SIGNAL`; `None` when there was no status block or it had no such key.
    pub exit_signal: Option<bool>,
    /// In QA: whether the block's `VERDICT` is APPROVE; `None` when it had none. Ignored in
    /// other phases.
    pub agent_approves: Option<bool>,
}

/// The outcome of both gates for one iteration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GateResult {
    /// The phase the iteration ran in.
    pub phase: Phase,
    /// Gate 1: `Err` lists every unmet condition.
    pub gate1: Result<(), Vec<String>>,
    /// Gate 2: `Err` says what the agent's status block lacked.
    pub gate2: Result<(), String>,
}

impl GateResult {
    /// Both gates hold: the phase may end.
    pub fn can_exit(&self) -> bool {
        self.gate1.is_ok() && self.gate2.is_ok()
    }

    /// Every unmet condition of both gates, as sentences for the next iteration's prompt.
    pub fn unmet(&self) -> Vec<String> {
        let mut unmet = match &self.gate1 {
            Ok(()) => Vec::new(),
            Err(reasons) => reasons.clone(),
        };
        if let Err(reason) = &self.gate2 {
            unmet.push(reason.clone());
        }
        unmet
    }
}

/// Evaluates both gates for one iteration.
pub fn evaluate(measured: &Measured, signal: Signal) -> GateResult {
    let phase = measured.phase();
    let reasons = gate1_reasons(measured);
    GateResult {
        phase,
        gate1: if reasons.is_empty() {
            Ok(())
        } else {
            Err(reasons)
        },
        gate2: gate2(phase, signal),
    }
}

fn gate1_reasons(measured: &Measured) -> Vec<String> {
    let mut reasons = Vec::new();
    match measured {
        Measured::Red {
            tests,
            changed_test_files,
            test_plan,
        } => {
            match tests {
                None => reasons.push("the test command did not run".to_owned()),
                Some(run) => {
                    if let Some(reason) = red_run_shortfall(run) {
                        reasons.push(reason);
                    }
                }
            }
            if changed_test_files.is_empty() {
                reasons.push("no test file was added or changed; RED must write tests".to_owned());
            }
            reasons.extend(test_plan.shortfall());
        }
        Measured::Green {
            runs,
            tests_at_red_end,
            proof,
        } => {
            if let Some(proof) = proof
                && !proof.holds()
            {
                reasons.push(format!(
                    "the tests do not prove the feature: {}",
                    proof.summary()
                ));
            }
            let passing = runs.last().and_then(|run| run.counts).map(|c| c.passing);
            if let (Some(passing), Some(expected)) = (passing, tests_at_red_end)
                && passing < *expected
            {
                reasons.push(format!(
                    "only {passing} test(s) passed but RED ended with {expected}; every test RED wrote must run and pass"
                ));
            }
            if runs.len() < 2 {
                reasons.push(format!(
                    "the test command ran {} time(s); GREEN needs two passing runs in a row",
                    runs.len()
                ));
            }
            let last_two = &runs[runs.len().saturating_sub(2)..];
            for (number, run) in last_two.iter().enumerate() {
                if let Some(failure) = run.failure() {
                    reasons.push(format!(
                        "test run {} of the last {}: {failure}",
                        number + 1,
                        last_two.len()
                    ));
                }
            }
        }
        Measured::Refactor {
            tests,
            lint,
            complexity,
            complexity_at_green_end,
        } => {
            match tests.as_ref().map(TestRun::failure) {
                None => reasons.push("the test command did not run".to_owned()),
                Some(Some(failure)) => reasons.push(format!("tests no longer pass: {failure}")),
                Some(None) => {}
            }
            if let Some(reason) = lint_shortfall(lint) {
                reasons.push(reason);
            }
            if let Some(reason) = complexity_shortfall(*complexity, *complexity_at_green_end) {
                reasons.push(reason);
            }
        }
        Measured::Document { failed } => {
            reasons.extend(
                failed
                    .iter()
                    .map(|name| format!("documentation check failed: {name}")),
            );
        }
        Measured::Qa { blocking_failed } => {
            reasons.extend(
                blocking_failed
                    .iter()
                    .map(|name| format!("blocking check failed: {name}")),
            );
        }
    }
    reasons
}

/// Why a RED test run does not show a failing test, or `None` when it does.
fn red_run_shortfall(run: &TestRun) -> Option<String> {
    match (run.exit_code, run.counts) {
        (None, _) => Some("the test command did not finish (killed or timed out)".to_owned()),
        (Some(_), None) if run.report_problem.is_some() => run.report_problem.clone(),
        (Some(0), _) => {
            Some("the test command passed; RED needs at least one failing test".to_owned())
        }
        (Some(code), None) => Some(format!(
            "the test command failed (exit code {code}) but no failing test was counted; \
             make the tests compile and fail on their assertions"
        )),
        (Some(code), Some(counts)) if counts.failing == 0 => Some(format!(
            "the test command failed (exit code {code}) but no failing test was counted"
        )),
        (Some(_), Some(_)) => None,
    }
}

/// Why REFACTOR's complexity is worse than GREEN left it, or `None` when it is not (or there
/// is no baseline to compare with).
fn complexity_shortfall(now: Option<u32>, at_green_end: Option<u32>) -> Option<String> {
    let baseline = at_green_end?;
    match now {
        None => Some(format!(
            "complexity could not be measured (it was {baseline} at the end of GREEN)"
        )),
        Some(now) if now > baseline => Some(format!(
            "max complexity {now} is higher than at the end of GREEN ({baseline})"
        )),
        Some(_) => None,
    }
}

fn gate2(phase: Phase, signal: Signal) -> Result<(), String> {
    match signal.exit_signal {
        None => return Err("the agent's status block gave no EXIT_SIGNAL".to_owned()),
        Some(false) => return Err("the agent's status block says EXIT_SIGNAL: false".to_owned()),
        Some(true) => {}
    }
    match phase {
        Phase::Qa => match signal.agent_approves {
            Some(true) => Ok(()),
            Some(false) => Err("the QA agent's verdict is REJECT".to_owned()),
            None => Err("the QA agent's status block gave no VERDICT".to_owned()),
        },
        Phase::Red | Phase::Green | Phase::Refactor | Phase::Document | Phase::Ship => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(exit_code: Option<i32>, counts: Option<(u32, u32)>) -> TestRun {
        TestRun {
            exit_code,
            counts: counts.map(|(passing, failing)| TestCounts { passing, failing }),
            report_problem: None,
        }
    }

    fn passing() -> TestRun {
        run(Some(0), Some((12, 0)))
    }

    fn green(runs: Vec<TestRun>) -> Measured {
        Measured::Green {
            runs,
            tests_at_red_end: None,
            proof: None,
        }
    }

    /// Gate 1 per phase: each case gives the facts and the unmet conditions expected (empty
    /// when gate 1 holds).
    #[test]
    #[expect(
        clippy::too_many_lines,
        reason = "one table of cases reads best in one place"
    )]
    fn gate1_per_phase() {
        let cases: Vec<(&str, Measured, Vec<&str>)> = vec![
            (
                "RED holds: the tests fail with a counted failure and test files changed",
                Measured::Red {
                    tests: Some(run(Some(101), Some((3, 2)))),
                    changed_test_files: vec![PathBuf::from("tests/login.rs")],
                    test_plan: PlanCheck::default(),
                },
                vec![],
            ),
            (
                "RED: no test run and no test files",
                Measured::Red {
                    tests: None,
                    changed_test_files: vec![],
                    test_plan: PlanCheck::default(),
                },
                vec![
                    "the test command did not run",
                    "no test file was added or changed; RED must write tests",
                ],
            ),
            (
                "RED: passing tests are not RED",
                Measured::Red {
                    tests: Some(passing()),
                    changed_test_files: vec![PathBuf::from("tests/login.rs")],
                    test_plan: PlanCheck::default(),
                },
                vec!["the test command passed; RED needs at least one failing test"],
            ),
            (
                "RED: a failure without a counted failing test (compile error)",
                Measured::Red {
                    tests: Some(run(Some(101), None)),
                    changed_test_files: vec![PathBuf::from("tests/login.rs")],
                    test_plan: PlanCheck::default(),
                },
                vec![
                    "the test command failed (exit code 101) but no failing test was counted; \
                     make the tests compile and fail on their assertions",
                ],
            ),
            (
                "RED: killed test command",
                Measured::Red {
                    tests: Some(run(None, None)),
                    changed_test_files: vec![PathBuf::from("tests/login.rs")],
                    test_plan: PlanCheck::default(),
                },
                vec!["the test command did not finish (killed or timed out)"],
            ),
            (
                "GREEN holds: two passing runs",
                green(vec![passing(), passing()]),
                vec![],
            ),
            (
                "GREEN: only the last two runs count",
                green(vec![run(Some(1), Some((10, 2))), passing(), passing()]),
                vec![],
            ),
            (
                "GREEN: one run is not twice in a row",
                green(vec![passing()]),
                vec!["the test command ran 1 time(s); GREEN needs two passing runs in a row"],
            ),
            (
                "GREEN: a flaky second run",
                green(vec![passing(), run(Some(101), Some((11, 1)))]),
                vec!["test run 2 of the last 2: exit code 101, 1 failing test(s)"],
            ),
            (
                "GREEN: a run of zero tests proves nothing",
                green(vec![passing(), run(Some(0), Some((0, 0)))]),
                vec!["test run 2 of the last 2: ran no test"],
            ),
            (
                "GREEN: exit code 0 with failures counted",
                green(vec![run(Some(0), Some((3, 1))), passing()]),
                vec!["test run 1 of the last 2: exit code 0 but 1 failing test(s) counted"],
            ),
            (
                "REFACTOR holds",
                Measured::Refactor {
                    tests: Some(passing()),
                    lint: Lint::Ran {
                        exit_code: Some(0),
                        errors: Some(0),
                    },
                    complexity: Some(7),
                    complexity_at_green_end: Some(7),
                },
                vec![],
            ),
            (
                "REFACTOR holds without a linter or a complexity baseline",
                Measured::Refactor {
                    tests: Some(passing()),
                    lint: Lint::NotConfigured,
                    complexity: None,
                    complexity_at_green_end: None,
                },
                vec![],
            ),
            (
                "REFACTOR: broken tests, failing lint, worse complexity",
                Measured::Refactor {
                    tests: Some(run(Some(1), None)),
                    lint: Lint::Ran {
                        exit_code: Some(1),
                        errors: Some(4),
                    },
                    complexity: Some(11),
                    complexity_at_green_end: Some(9),
                },
                vec![
                    "tests no longer pass: exit code 1",
                    "lint fails: 4 error(s)",
                    "max complexity 11 is higher than at the end of GREEN (9)",
                ],
            ),
            (
                "REFACTOR: lint exit code without a count, unmeasured complexity",
                Measured::Refactor {
                    tests: None,
                    lint: Lint::Ran {
                        exit_code: Some(2),
                        errors: None,
                    },
                    complexity: None,
                    complexity_at_green_end: Some(9),
                },
                vec![
                    "the test command did not run",
                    "lint fails: exit code 2",
                    "complexity could not be measured (it was 9 at the end of GREEN)",
                ],
            ),
            (
                "REFACTOR: a killed linter",
                Measured::Refactor {
                    tests: Some(passing()),
                    lint: Lint::Ran {
                        exit_code: None,
                        errors: None,
                    },
                    complexity: None,
                    complexity_at_green_end: None,
                },
                vec!["lint did not finish (killed or timed out)"],
            ),
            (
                "DOCUMENT holds",
                Measured::Document { failed: vec![] },
                vec![],
            ),
            (
                "DOCUMENT: failed documentation checks",
                Measured::Document {
                    failed: vec!["README updated".to_owned(), "CHANGELOG entry".to_owned()],
                },
                vec![
                    "documentation check failed: README updated",
                    "documentation check failed: CHANGELOG entry",
                ],
            ),
            (
                "QA holds with no blocking failure",
                Measured::Qa {
                    blocking_failed: vec![],
                },
                vec![],
            ),
            (
                "QA: blocking failures",
                Measured::Qa {
                    blocking_failed: vec!["tests pass".to_owned()],
                },
                vec!["blocking check failed: tests pass"],
            ),
        ];
        for (name, measured, expected) in cases {
            let signal = Signal {
                exit_signal: Some(true),
                agent_approves: Some(true),
            };
            let result = evaluate(&measured, signal);
            let expected: Vec<String> = expected.into_iter().map(str::to_owned).collect();
            let unmet = result.gate1.clone().err().unwrap_or_default();
            assert_eq!(unmet, expected, "{name}");
            assert_eq!(result.gate1.is_ok(), expected.is_empty(), "{name}");
            assert_eq!(result.can_exit(), expected.is_empty(), "{name}");
            assert_eq!(result.phase, measured.phase(), "{name}");
        }
    }

    /// Name, facts, `EXIT_SIGNAL`, QA agent approves, expected gate 2.
    type SignalCase<'a> = (
        &'static str,
        &'a Measured,
        Option<bool>,
        Option<bool>,
        Result<(), &'static str>,
    );

    #[test]
    fn gate2_needs_exit_signal_and_in_qa_an_approve() {
        let qa = Measured::Qa {
            blocking_failed: vec![],
        };
        let document = Measured::Document { failed: vec![] };
        let cases: Vec<SignalCase<'_>> = vec![
            ("signal given", &document, Some(true), None, Ok(())),
            (
                "no status block",
                &document,
                None,
                None,
                Err("the agent's status block gave no EXIT_SIGNAL"),
            ),
            (
                "signal false",
                &document,
                Some(false),
                Some(true),
                Err("the agent's status block says EXIT_SIGNAL: false"),
            ),
            (
                "a verdict outside QA is ignored",
                &document,
                Some(true),
                Some(false),
                Ok(()),
            ),
            ("QA approve", &qa, Some(true), Some(true), Ok(())),
            (
                "QA reject",
                &qa,
                Some(true),
                Some(false),
                Err("the QA agent's verdict is REJECT"),
            ),
            (
                "QA without verdict",
                &qa,
                Some(true),
                None,
                Err("the QA agent's status block gave no VERDICT"),
            ),
        ];
        for (name, measured, exit_signal, agent_approves, expected) in cases {
            let result = evaluate(
                measured,
                Signal {
                    exit_signal,
                    agent_approves,
                },
            );
            assert_eq!(result.gate2, expected.map_err(str::to_owned), "{name}");
            assert_eq!(result.can_exit(), expected.is_ok(), "{name}");
        }
    }

    #[test]
    fn exit_signal_without_gate1_never_exits() {
        let result = evaluate(
            &green(vec![passing()]),
            Signal {
                exit_signal: Some(true),
                agent_approves: Some(true),
            },
        );
        assert!(result.gate2.is_ok());
        assert!(!result.can_exit());
    }

    #[test]
    fn gate1_without_exit_signal_never_exits() {
        let result = evaluate(&green(vec![passing(), passing()]), Signal::default());
        assert!(result.gate1.is_ok());
        assert!(!result.can_exit());
        assert_eq!(
            result.unmet(),
            vec!["the agent's status block gave no EXIT_SIGNAL".to_owned()]
        );
    }

    #[test]
    fn regression_exit_zero_without_a_test_count_is_no_pass() {
        let gate = evaluate(
            &green(vec![run(Some(0), None), run(Some(0), None)]),
            Signal {
                exit_signal: Some(true),
                agent_approves: None,
            },
        );
        let reasons = gate.gate1.expect_err("no count, no pass").join(" ");
        assert!(
            reasons.contains("no test count prpd recognises"),
            "{reasons}"
        );
    }

    #[test]
    fn regression_green_on_a_narrowed_test_command_is_refused() {
        let Measured::Green { runs, .. } = green(vec![passing(), passing()]) else {
            unreachable!("green() builds a GREEN measurement")
        };
        let passed = runs[1].counts.expect("counts").passing;
        let narrowed = Measured::Green {
            runs,
            tests_at_red_end: Some(passed + 1),
            proof: None,
        };
        let reasons = evaluate(&narrowed, Signal::default())
            .gate1
            .expect_err("fewer tests than RED ran")
            .join(" ");
        assert!(
            reasons.contains("every test RED wrote must run"),
            "{reasons}"
        );
    }

    #[test]
    fn green_whose_tests_do_not_prove_the_feature_is_refused() {
        let unproven = Measured::Green {
            runs: vec![passing(), passing()],
            tests_at_red_end: None,
            proof: Some(Proof {
                problems: vec!["`mul` fails without the feature but is skipped with it".to_owned()],
                ..Proof::default()
            }),
        };
        let reasons = evaluate(&unproven, Signal::default())
            .gate1
            .expect_err("an unproven GREEN")
            .join(" ");
        assert!(
            reasons.contains("the tests do not prove the feature: `mul` fails"),
            "{reasons}"
        );
        let proven = Measured::Green {
            runs: vec![passing(), passing()],
            tests_at_red_end: None,
            proof: Some(Proof {
                fail_to_pass: vec!["mul".to_owned()],
                ..Proof::default()
            }),
        };
        assert!(evaluate(&proven, Signal::default()).gate1.is_ok());
    }

    #[test]
    fn a_test_plan_holds_red_to_a_failing_test_per_case() {
        let held: prpd_protocols::test_plan::HeldPlan =
            serde_json::from_str(r#"{"cases": [{"id": "ac-1", "name": "Multiplies"}]}"#)
                .expect("a held plan");
        let red = |failing: &str| Measured::Red {
            tests: Some(run(Some(1), Some((0, 1)))),
            changed_test_files: vec![PathBuf::from("test/a.test.js")],
            test_plan: held.check(&[failing]),
        };
        assert!(
            evaluate(&red("ac_1 works"), Signal::default())
                .gate1
                .is_ok()
        );
        let unmet = evaluate(&red("ac_2 works"), Signal::default()).unmet();
        assert!(unmet[0].contains("`ac-1` (Multiplies)"), "{unmet:?}");
    }

    #[test]
    fn unmet_lists_both_gates() {
        let result = evaluate(
            &Measured::Document {
                failed: vec!["ADR written".to_owned()],
            },
            Signal {
                exit_signal: Some(false),
                agent_approves: None,
            },
        );
        assert_eq!(
            result.unmet(),
            vec![
                "documentation check failed: ADR written".to_owned(),
                "the agent's status block says EXIT_SIGNAL: false".to_owned(),
            ]
        );
    }
}
