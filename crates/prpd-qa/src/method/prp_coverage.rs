//! The `parse_prp_and_verify` method (F2): a PRP's requirements are only trustworthy when
//! evidence shows them, so each is traced by its id — never by its sentence — to a test that
//! ran and passed and carries the id in its name, to the command prpd ran for it, or to the
//! check that judges it (see `prp::requirement`); what none of these can show is listed for a
//! person, never passed in silence. [`AcceptanceId`] and [`test_files_naming`] serve the
//! `[VERIFY] AC checklist` task, which looks for test files named after an id.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use super::files::{extension, is_test_path, read_text, walk};
use super::{EarlierCheck, Ended};
use super::{MethodContext, MethodOutcome, measured, test_definitions};
use crate::metrics::{Metrics, Outcome};
use crate::table_cell::cell;
use prpd_prp::{Prp, Requirement, RequirementKind, id_tokens, names_id};

/// Prose files never count as tests: the PRP itself would otherwise "cover" every criterion.
const PROSE_EXTENSIONS: &[&str] = &["md", "markdown", "rst", "txt", "adoc"];

/// An acceptance id such as `AC-1.2` as a text names it: `AC-1.2`, `ac_1_2` or `AC 1.2`'s
/// test name `ac_1_2_…`, but not `AC-1.20` or `AC-12`.
#[derive(Debug, Clone)]
pub struct AcceptanceId {
    id: String,
    /// The id's words, as [`names_id`] compares them.
    tokens: Vec<String>,
}

impl AcceptanceId {
    /// The matcher of `id`: the same rule as a requirement's test names
    /// ([`prpd_prp::Requirement::is_named_by`]).
    pub fn new(id: &str) -> AcceptanceId {
        AcceptanceId {
            id: id.to_owned(),
            tokens: id_tokens(id),
        }
    }

    /// The id as written.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// Whether `text` (a file, a test's name) names the id.
    pub fn is_named_in(&self, text: &str) -> bool {
        names_id(&self.tokens, text)
    }
}

/// For each of `ids`, the test files under `repo` that name it (relative paths, sorted), by the
/// rules of `parse_prp_and_verify`: test files by path, or Rust files with tests in them;
/// prose (the PRP, a `requirements.md`) never counts.
pub fn test_files_naming(repo: &Path, ids: &[AcceptanceId]) -> BTreeMap<String, Vec<PathBuf>> {
    let mut named: BTreeMap<String, Vec<PathBuf>> =
        ids.iter().map(|id| (id.id.clone(), Vec::new())).collect();
    for path in walk(repo) {
        let Some(text) = test_file_text(repo, &path, None) else {
            continue;
        };
        let relative = path.strip_prefix(repo).unwrap_or(&path);
        for id in ids.iter().filter(|id| id.is_named_in(&text)) {
            named
                .entry(id.id.clone())
                .or_default()
                .push(relative.to_path_buf());
        }
    }
    named
}

/// The text of `path` when it holds tests (see [`test_files_naming`]); `prp` is skipped too.
fn test_file_text(repo: &Path, path: &Path, prp: Option<&Path>) -> Option<String> {
    let relative = path.strip_prefix(repo).unwrap_or(path);
    let extension = extension(path);
    if PROSE_EXTENSIONS.contains(&extension.as_str())
        || prp.is_some_and(|prp| path == repo.join(prp) || path == prp)
    {
        return None;
    }
    let by_path = is_test_path(relative);
    if !by_path && extension != "rs" {
        return None;
    }
    let text = read_text(path)?;
    if !by_path && !text.contains("#[cfg(test)]") && !text.contains("#[test]") {
        return None;
    }
    Some(text)
}

/// How one requirement stands after QA's checks ran.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Standing {
    /// A test that ran and passed carries its id; the tests, by name.
    Covered(Vec<String>),
    /// prpd ran the command it names, and it passed (the check's id).
    Measured(String),
    /// The command it names ran and failed (the check's id).
    MeasuredFailed(String),
    /// Judged by a check of the checklist that ran (its id and how it ended).
    JudgedBy(String, Ended),
    /// A test must carry its id and none that passed does.
    Missing,
    /// Neither a test nor a measurement: for the QA agent and the human to judge (why).
    ToJudge(String),
}

/// Where F2 read the names of the tests from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum NamesFrom {
    /// The test command's own output: tests that ran and passed (and that a test file
    /// defines, so a line the code under test prints cannot pose as a test).
    Runner,
    /// The runner named no test, so the test files' definitions were read instead.
    Definitions,
}

/// Every requirement of a PRP with its standing.
#[derive(Debug, Clone)]
pub(crate) struct Trace {
    pub(crate) rows: Vec<(Requirement, Standing)>,
    pub(crate) names_from: NamesFrom,
    /// What was left unread when the test files' reading budget ran out.
    pub(crate) limit: Option<String>,
}

/// One check that runs the commands of a PRP's command criteria: its id (`F2-R3`, after the
/// first requirement that names the command), the command, and every requirement it judges
/// (two criteria naming the same command share one run).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct CommandCheck {
    pub(crate) id: String,
    pub(crate) command: String,
    pub(crate) requirements: Vec<String>,
}

/// The command checks of `prp`, in the order of the PRP.
pub(crate) fn command_checks(prp: &Prp) -> Vec<CommandCheck> {
    let mut checks: Vec<CommandCheck> = Vec::new();
    for requirement in &prp.requirements {
        let RequirementKind::Command { command } = &requirement.kind else {
            continue;
        };
        match checks.iter_mut().find(|check| check.command == *command) {
            Some(check) => check.requirements.push(requirement.id.clone()),
            None => checks.push(CommandCheck {
                id: format!("F2-{}", requirement.id),
                command: command.clone(),
                requirements: vec![requirement.id.clone()],
            }),
        }
    }
    checks
}

/// Traces `prp`'s requirements to the evidence of `checks` (the checks QA ran before F2): the
/// names of tests that passed in a check that runs the tests (or, when none named one, the
/// tests the test files define), the requirement commands' checks, and the checks that judge
/// the gate.
pub(crate) fn trace(prp: &Prp, checks: &[EarlierCheck<'_>], repo: &Path) -> Trace {
    // Several checks may run the same tests (F1 and a command criterion): each name once.
    let passed: BTreeSet<String> = checks
        .iter()
        .filter(|check| check.runs_tests)
        .flat_map(|check| check.cases.named(Outcome::Passed))
        .map(str::to_owned)
        .collect();
    let (defined, limit) = test_definitions::defined_tests(repo);
    let defined: Vec<String> = defined
        .into_iter()
        .map(|test| format!("{}::{}", test.file, test.name))
        .collect();
    let (names, names_from): (Vec<String>, NamesFrom) = if passed.is_empty() {
        (defined.clone(), NamesFrom::Definitions)
    } else {
        (passed.into_iter().collect(), NamesFrom::Runner)
    };
    let by_id = |id: &str| checks.iter().find(|check| check.id == id);
    let command_checks = command_checks(prp);
    let rows = prp
        .requirements
        .iter()
        .map(|requirement| {
            let standing = match &requirement.kind {
                RequirementKind::Behaviour => {
                    // A name the runner printed counts only when a test file defines a test
                    // that carries the id too (when prpd can read the definitions at all).
                    let defined_here = defined.is_empty()
                        || defined.iter().any(|name| requirement.is_named_by(name));
                    let tests: Vec<String> = names
                        .iter()
                        .filter(|name| defined_here && requirement.is_named_by(name))
                        .cloned()
                        .collect();
                    if !tests.is_empty() {
                        Standing::Covered(tests)
                    } else if requirement.needs_a_test() {
                        Standing::Missing
                    } else {
                        Standing::ToJudge(format!(
                            "no test that passed is named after it (`{}_…`)",
                            requirement.test_name()
                        ))
                    }
                }
                RequirementKind::Command { .. } => {
                    let id = command_checks
                        .iter()
                        .find(|check| check.requirements.contains(&requirement.id))
                        .map_or_else(|| format!("F2-{}", requirement.id), |check| check.id.clone());
                    match by_id(&id).map(|check| (check.ended, check.detail)) {
                        Some((Ended::Passed, _)) => Standing::Measured(id),
                        Some((Ended::Failed | Ended::Warned, _)) => Standing::MeasuredFailed(id),
                        Some((Ended::Skipped, detail)) => {
                            Standing::ToJudge(format!("{id} did not run: {detail}"))
                        }
                        None => Standing::ToJudge(format!("{id} did not run")),
                    }
                }
                RequirementKind::Gate { gate } => {
                    let id = gate.check_id();
                    match by_id(id) {
                        Some(check) if check.ended != Ended::Skipped => {
                            Standing::JudgedBy(id.to_owned(), check.ended)
                        }
                        Some(_) | None => Standing::ToJudge(format!(
                            "{id}, which measures it, did not run in this QA"
                        )),
                    }
                }
                RequirementKind::Manual { command } => Standing::ToJudge(format!(
                    "prpd does not run `{command}`: it talks to or starts a service, or runs in another folder"
                )),
            };
            (requirement.clone(), standing)
        })
        .collect();
    Trace {
        rows,
        names_from,
        limit,
    }
}

/// `criteria_coverage`: the percentage of the requirements that tests or prpd's own runs
/// cover, out of those a test must cover, those a command measures, and the others a test
/// happens to cover. Requirements judged by another check or left to a person are listed in
/// the detail, never counted as covered.
pub(super) fn parse_prp_and_verify(context: &MethodContext<'_>) -> MethodOutcome {
    let Some(prp) = context.prp else {
        return MethodOutcome::NotApplicable {
            reason: "no PRP was given, so there are no requirements to trace to tests".to_owned(),
        };
    };
    let computed;
    let trace = if let Some(trace) = context.trace {
        trace
    } else {
        computed = trace(prp, &[], context.repo);
        &computed
    };
    let mut covered = Vec::new();
    let mut open = Vec::new();
    let mut judged = Vec::new();
    for (requirement, standing) in &trace.rows {
        match standing {
            Standing::Covered(_) | Standing::Measured(_) => covered.push(requirement.id.as_str()),
            Standing::Missing => open.push(format!(
                "{} (no test named `{}_…` passed)",
                requirement.id,
                requirement.test_name()
            )),
            Standing::MeasuredFailed(check) => {
                open.push(format!("{} ({check} failed)", requirement.id));
            }
            // A criterion about the gate that its check found wanting is not met, even where
            // that check only warns (C6).
            Standing::JudgedBy(check, Ended::Failed | Ended::Warned) => {
                open.push(format!("{} ({check} did not pass)", requirement.id));
            }
            Standing::JudgedBy(_, Ended::Passed | Ended::Skipped) | Standing::ToJudge(_) => {
                judged.push(requirement.id.as_str());
            }
        }
    }
    let total = covered.len() + open.len();
    if total == 0 {
        if trace
            .rows
            .iter()
            .all(|(requirement, _)| requirement.kind != RequirementKind::Behaviour)
        {
            return MethodOutcome::NotApplicable {
                reason: format!(
                    "the PRP's requirements ({}) are all judged by other checks or by a person; none is for a test to cover",
                    judged.join(", ")
                ),
            };
        }
        let mut metrics = Metrics::default();
        metrics.set_number("criteria_coverage", 0.0);
        return measured(
            metrics,
            format!(
                "no requirement is covered: no test that {} carries a requirement's id ({}); name the tests after the ids RED's prompt lists",
                match trace.names_from {
                    NamesFrom::Runner => "ran and passed",
                    NamesFrom::Definitions => "the test files define",
                },
                judged.join(", ")
            ),
        );
    }
    #[expect(
        clippy::cast_precision_loss,
        reason = "requirement counts are tiny; the percentage is rounded for display anyway"
    )]
    let percentage = (covered.len() as f64) * 100.0 / (total as f64);
    let mut metrics = Metrics::default();
    metrics.set_number("criteria_coverage", (percentage * 100.0).round() / 100.0);
    let mut detail = if open.is_empty() {
        format!(
            "{} of {total} requirements covered ({})",
            covered.len(),
            covered.join(", ")
        )
    } else {
        format!(
            "{} of {total} requirements covered; not covered: {}",
            covered.len(),
            open.join(", ")
        )
    };
    if !judged.is_empty() {
        let _ = write!(
            detail,
            "; judged elsewhere or by a person (see Requirements): {}",
            judged.join(", ")
        );
    }
    if trace.names_from == NamesFrom::Definitions {
        detail.push_str(
            "; the test command names no test that passed, so the tests the test files define were read instead (a runner that names its tests, such as `pytest -v`, makes this trace stronger)",
        );
    }
    if let Some(limit) = &trace.limit {
        let _ = write!(detail, "; reading the test files {limit}");
    }
    measured(metrics, detail)
}

/// The report's Requirements section: every requirement, its id, and what covers it.
pub(crate) fn requirements_section(trace: &Trace) -> String {
    let mut markdown =
        String::from("| id | requirement | how it is judged | evidence |\n|---|---|---|---|\n");
    for (requirement, standing) in &trace.rows {
        let how = match &requirement.kind {
            RequirementKind::Behaviour if requirement.needs_a_test() => {
                "a test named after it".to_owned()
            }
            RequirementKind::Behaviour => "a test named after it, else a person".to_owned(),
            RequirementKind::Command { command } => format!("prpd runs `{command}`"),
            RequirementKind::Gate { gate } => format!("check {}", gate.check_id()),
            RequirementKind::Manual { .. } => "a person".to_owned(),
        };
        let evidence = match standing {
            Standing::Covered(tests) => format!("✅ {}", tests.join(", ")),
            Standing::Measured(check) | Standing::JudgedBy(check, Ended::Passed) => {
                format!("✅ {check} passed")
            }
            Standing::MeasuredFailed(check) | Standing::JudgedBy(check, Ended::Failed) => {
                format!("❌ {check} failed")
            }
            Standing::JudgedBy(check, Ended::Warned) => format!("❌ {check} warned"),
            Standing::JudgedBy(check, Ended::Skipped) => format!("{check} skipped"),
            Standing::Missing => format!("❌ no test named `{}_…` passed", requirement.test_name()),
            Standing::ToJudge(why) => format!("👤 to judge: {why}"),
        };
        let _ = writeln!(
            markdown,
            "| {} | {} | {} | {} |",
            cell(&requirement.id),
            cell(&requirement.text),
            cell(&how),
            cell(&evidence)
        );
    }
    markdown
}

#[cfg(test)]
mod tests {
    use super::{AcceptanceId, test_files_naming};
    use crate::method::tests::{Repo, figure, prp, rate_limiter};
    use crate::method::{EarlierCheck, Ended};
    use crate::method::{Method, MethodOutcome};
    use crate::metrics::Metrics;
    use crate::metrics::{MetricValue, parse_output};
    use prpd_prp::Prp;

    /// A check that ran and printed `output` (real runner output), ending `ended`.
    struct Ran {
        id: &'static str,
        ended: Ended,
        metrics: Metrics,
    }

    fn check(id: &'static str, ended: Ended, output: &str) -> Ran {
        Ran {
            id,
            ended,
            metrics: parse_output(output.as_bytes()),
        }
    }

    fn evidence(checks: &[Ran]) -> Vec<EarlierCheck<'_>> {
        checks
            .iter()
            .map(|check| EarlierCheck {
                id: check.id,
                ended: check.ended,
                detail: "it did",
                runs_tests: check.id == "F1" || check.id.starts_with("F2-"),
                cases: check.metrics.test_cases(),
            })
            .collect()
    }

    fn coverage(prp: &Prp, repo: &Repo, checks: &[Ran]) -> (MetricValue, String) {
        figure(
            &repo.run_with_checks(prp, &evidence(checks)),
            "criteria_coverage",
        )
    }

    const PYTEST: &str = "\
tests/test_limits.py::test_ac_1_over_the_limit_returns_429 PASSED                  [ 25%]
tests/test_limits.py::test_ac_2_resets_every_minute SKIPPED (later)                [ 50%]
tests/test_limits.py::test_ac_10_is_not_written_yet FAILED                         [ 75%]
tests/test_limits.py::test_r1_over_the_limit_gets_429 PASSED                        [100%]
=================== 1 failed, 2 passed, 1 skipped in 0.05s ===================
";

    #[test]
    fn a_requirement_is_covered_by_a_test_that_ran_and_passed_with_its_id() {
        let prp = rate_limiter();
        let repo = Repo::new();
        // Words in a test file are not evidence: a comment naming AC-2 covers nothing.
        repo.file("tests/test_limits.py", "# AC-2 AC-10 are covered here\n");
        let checks = [check("F1", Ended::Failed, PYTEST)];
        let (value, detail) = coverage(&prp, &repo, &checks);
        assert_eq!(value, MetricValue::Number(50.0), "{detail}");
        assert_eq!(
            detail,
            "2 of 4 requirements covered; not covered: AC-2 (no test named `ac_2_…` passed), \
             AC-10 (no test named `ac_10_…` passed)"
        );
        let passing = PYTEST
            .replace("SKIPPED (later)", "PASSED")
            .replace("is_not_written_yet FAILED", "per_key PASSED")
            .replace("1 failed, 2 passed, 1 skipped", "4 passed");
        let (value, detail) = coverage(&prp, &repo, &[check("F1", Ended::Passed, &passing)]);
        assert_eq!(value, MetricValue::Number(100.0), "{detail}");
        assert!(
            detail.starts_with("4 of 4 requirements covered (R1, AC-1, AC-2, AC-10)"),
            "{detail}"
        );
    }

    #[test]
    fn prose_without_an_id_is_for_a_person_and_never_blocks_or_passes_silently() {
        let prp = prp(
            "# Limits\n\n## Success Criteria\n\n- [ ] Requests over the limit get HTTP 429\n\
             - [ ] All tests pass\n- [ ] `make test` passes\n- [ ] Limits feel fair\n",
        );
        let repo = Repo::new();
        let output = "tests/test_limits.py::test_r1_over_the_limit PASSED\n1 passed in 0.01s\n";
        let checks = [
            check("F1", Ended::Passed, output),
            check("F2-R3", Ended::Passed, output),
        ];
        let (value, detail) = coverage(&prp, &repo, &checks);
        assert_eq!(value, MetricValue::Number(100.0), "{detail}");
        assert_eq!(
            detail,
            "2 of 2 requirements covered (R1, R3); judged elsewhere or by a person (see \
             Requirements): R2, R4"
        );
        let trace = super::trace(&prp, &evidence(&checks), repo.path());
        let section = super::requirements_section(&trace);
        assert!(
            section.contains("| R2 | All tests pass | check F1 | ✅ F1 passed |"),
            "{section}"
        );
        assert!(
            section
                .contains("| R3 | `make test` passes | prpd runs `make test` | ✅ F2-R3 passed |"),
            "{section}"
        );
        assert!(
            section.contains(
                "| R4 | Limits feel fair | a test named after it, else a person | 👤 to judge"
            ),
            "{section}"
        );
        // The command failed: its requirement is not covered.
        let failed = [
            check("F1", Ended::Passed, output),
            check("F2-R3", Ended::Failed, output),
        ];
        let (value, detail) = coverage(&prp, &repo, &failed);
        assert_eq!(value, MetricValue::Number(50.0), "{detail}");
        assert!(detail.contains("R3 (F2-R3 failed)"), "{detail}");
    }

    #[test]
    fn a_passing_name_that_no_test_file_defines_covers_nothing() {
        // The code under test prints a line the runner's parser reads as a passing test
        // (`--- PASS: TestAC2…` under `go test -v`): without a test that carries AC-2 in a test
        // file, it is not evidence.
        let prp = prp("# Limits\n\n- [ ] AC-1 a\n- [ ] AC-2 b\n");
        let repo = Repo::new();
        repo.file(
            "limits_test.go",
            "package limits\n\nfunc TestAC1Limit(t *testing.T) {}\n",
        );
        let output = "=== RUN   TestAC1Limit\n--- PASS: TestAC1Limit (0.00s)\n\
                      --- PASS: TestAC2Resets (0.00s)\nPASS\nok  \texample.com/limits\t0.01s\n";
        let (value, detail) = coverage(&prp, &repo, &[check("F1", Ended::Passed, output)]);
        assert_eq!(value, MetricValue::Number(50.0), "{detail}");
        assert!(detail.contains("not covered: AC-2"), "{detail}");
        // A lint check's output is no test run either.
        let (value, _) = coverage(
            &prp,
            &repo,
            &[
                check("F1", Ended::Passed, output),
                check("C1", Ended::Passed, "--- PASS: TestAC2Lint (0.00s)\n"),
            ],
        );
        assert_eq!(value, MetricValue::Number(50.0));
    }

    #[test]
    fn a_gate_criterion_whose_check_warned_is_not_met() {
        let prp =
            prp("# Limits\n\n## Success Criteria\n\n- [ ] Code is formatted\n- [ ] AC-1 limits\n");
        let repo = Repo::new();
        let output = "tests/test_limits.py::test_ac_1_limits PASSED\n1 passed in 0.01s\n";
        let (value, detail) = coverage(
            &prp,
            &repo,
            &[
                check("F1", Ended::Passed, output),
                check("C6", Ended::Warned, ""),
            ],
        );
        assert_eq!(value, MetricValue::Number(50.0), "{detail}");
        assert!(detail.contains("R1 (C6 did not pass)"), "{detail}");
    }

    #[test]
    fn nothing_covered_is_a_failure_not_a_pass() {
        let fair = prp("# Limits\n\n## Success Criteria\n\n- [ ] Limits feel fair\n");
        let repo = Repo::new();
        let output = "tests/test_limits.py::test_something_else PASSED\n1 passed in 0.01s\n";
        let (value, detail) = coverage(&fair, &repo, &[check("F1", Ended::Passed, output)]);
        assert_eq!(value, MetricValue::Number(0.0));
        assert!(detail.starts_with("no requirement is covered"), "{detail}");
        let gate_only = prp("# Limits\n\n## Success Criteria\n\n- [ ] All tests pass\n");
        assert!(matches!(
            repo.run_with_checks(&gate_only, &[]),
            MethodOutcome::NotApplicable { .. }
        ));
    }

    #[test]
    fn without_names_from_the_runner_the_test_definitions_are_read() {
        let prp = rate_limiter();
        let repo = Repo::new();
        repo.file(
            "tests/test_limits.py",
            "def test_ac_1_x():\n    pass\n\n@pytest.mark.skip\ndef test_ac_2_y():\n    pass\n\n\
             def test_r1_z():\n    \"\"\"AC-10\"\"\"\n",
        );
        let dots = "...\n3 passed in 0.01s\n";
        let (value, detail) = coverage(&prp, &repo, &[check("F1", Ended::Passed, dots)]);
        assert_eq!(value, MetricValue::Number(50.0), "{detail}");
        assert!(detail.contains("not covered: AC-2"), "{detail}");
        assert!(
            detail.contains("the tests the test files define were read instead"),
            "{detail}"
        );
    }

    #[test]
    fn test_files_naming_traces_each_id_to_its_test_files_only() {
        let repo = Repo::new();
        repo.file("PRPs/feature.md", "- [ ] AC-1 x\n- [ ] AC-2 y\n")
            .file("specs/x/requirements.md", "AC-1 AC-2\n")
            .file("src/lib.js", "// AC-2 implemented here, not a test\n")
            .file("test/a.test.js", "test('AC-1: works', () => {});\n")
            .file("test/b.test.js", "test('AC-10 and ac_1_case', () => {});\n");
        let ids = [AcceptanceId::new("AC-1"), AcceptanceId::new("AC-2")];
        let named = test_files_naming(repo.path(), &ids);
        assert_eq!(
            named["AC-1"],
            [
                std::path::PathBuf::from("test/a.test.js"),
                std::path::PathBuf::from("test/b.test.js")
            ]
        );
        assert!(named["AC-2"].is_empty(), "{named:?}");
        assert!(ids[0].is_named_in("AC-1: wordStats counts words"));
        assert!(ids[0].is_named_in("tests::ac_1_over_the_limit"));
        assert!(!ids[0].is_named_in("AC-10: something else"));
        assert!(!ids[0].is_named_in("AC-1.2 nested"));
        assert_eq!(ids[1].id(), "AC-2");
    }

    #[test]
    fn without_a_prp_there_is_nothing_to_trace() {
        assert!(matches!(
            Repo::new().run(Method::ParsePrpAndVerify, None),
            MethodOutcome::NotApplicable { .. }
        ));
    }
}
