//! A task's result in the seed's layout (pure), for stdout, the QA report and `.progress.md`:
//!
//! ```text
//! Verified V4 [VERIFY] Full local CI
//! - npm run lint: PASS
//! - npm test: FAIL (14 passed, 1 failed)
//!   exit 1
//!   <the last lines of its output>
//! - npm run build: SKIPPED (npm test failed first)
//!
//! VERIFICATION_FAIL
//! ```
//!
//! An AC checklist is the seed's table, then `N AC failed: …`. How many lines of a failed
//! command's output are quoted is the caller's choice: a few on a terminal, the last 50 in
//! `.progress.md`.

use std::fmt::Write as _;
use std::time::SystemTime;

use super::result::{
    AcceptanceRow, CommandOutcome, CommandRun, Finding, PipelineFinding, RowStatus, TaskResult,
    short_sha,
};
use prpd_base::files;
use prpd_qa::report::cell;
use prpd_ship::github::{ChecksOutcome, Conclusion, RemoteChecks};

/// How many output lines of a failed command stdout shows.
pub const TERMINAL_TAIL_LINES: usize = 20;

/// How many output lines of a failed command `.progress.md` keeps (the seed's "last 50 lines").
pub const PROGRESS_TAIL_LINES: usize = 50;

/// `result` in the seed's layout, quoting the last `tail_lines` lines of each failure.
pub fn render(result: &TaskResult, tail_lines: usize) -> String {
    let mut out = format!("Verified {}\n", result.task.heading());
    match &result.finding {
        Finding::Commands(runs) => {
            for run in runs {
                command_lines(&mut out, run, tail_lines);
            }
        }
        Finding::Acceptance { source, rows } => acceptance_table(&mut out, source, rows),
        Finding::Pipeline(PipelineFinding::NotAsked(why)) => {
            let _ = writeln!(out, "- remote checks: FAIL");
            indented(&mut out, why, usize::MAX);
        }
        Finding::Pipeline(PipelineFinding::Checked(checks)) => pipeline_lines(&mut out, checks),
        Finding::Deferred(why) => {
            let _ = writeln!(out, "- deferred to SHIP: {why}");
        }
        Finding::NothingToRun(why) => {
            let _ = writeln!(out, "- nothing to run: FAIL");
            indented(&mut out, why, usize::MAX);
        }
    }
    let _ = writeln!(out, "\n{}", result.verdict().signal());
    out
}

fn command_lines(out: &mut String, run: &CommandRun, tail_lines: usize) {
    let counts = run.counts.map_or_else(String::new, |counts| {
        format!(" ({} passed, {} failed)", counts.passed, counts.failed)
    });
    match &run.outcome {
        CommandOutcome::Passed => {
            let _ = writeln!(out, "- {}: PASS{counts}", run.command);
        }
        CommandOutcome::Failed(why) => {
            let _ = writeln!(out, "- {}: FAIL{counts}", run.command);
            indented(out, why, usize::MAX);
            indented(out, &run.tail, tail_lines);
        }
        CommandOutcome::Skipped(why) => {
            let _ = writeln!(out, "- {}: SKIPPED ({why})", run.command);
        }
    }
    if let Some(from) = &run.reused_from {
        let _ = writeln!(out, "  (not run again: {from})");
    }
}

/// The last `count` non-blank-ended lines of `text`, each indented by two spaces.
fn indented(out: &mut String, text: &str, count: usize) {
    let text = text.trim_end();
    if text.trim().is_empty() || count == 0 {
        return;
    }
    for line in files::last_lines(text, count).lines() {
        let _ = writeln!(out, "  {}", line.trim_end());
    }
}

fn acceptance_table(out: &mut String, source: &str, rows: &[AcceptanceRow]) {
    if rows.is_empty() {
        let _ = writeln!(out, "- acceptance criteria: FAIL");
        let _ = writeln!(
            out,
            "  no AC-* item in {source}: an AC checklist with nothing to check cannot pass"
        );
        return;
    }
    let _ = writeln!(out, "\n| AC | Description | Status | Evidence |");
    let _ = writeln!(out, "|----|-------------|--------|----------|");
    for row in rows {
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} |",
            cell(&row.id),
            cell(&row.description),
            row.status.word(),
            cell(&row.evidence)
        );
    }
    let failed: Vec<&str> = rows
        .iter()
        .filter(|row| row.status == RowStatus::Fail)
        .map(|row| row.id.as_str())
        .collect();
    if !failed.is_empty() {
        let _ = writeln!(out, "\n{} AC failed: {}", failed.len(), failed.join(", "));
    }
}

fn pipeline_lines(out: &mut String, checks: &RemoteChecks) {
    for check in &checks.checks {
        let word = check.conclusion.word();
        match &check.conclusion {
            Conclusion::Passed(_) => {
                let _ = writeln!(out, "- {}: PASS", check.name);
            }
            Conclusion::Pending(_) => {
                let _ = writeln!(out, "- {}: PENDING ({word})", check.name);
            }
            Conclusion::Failed(_) => {
                let _ = writeln!(out, "- {}: FAIL ({word})", check.name);
                for text in [&check.title, &check.summary, &check.url] {
                    if let Some(text) = text.as_deref() {
                        indented(out, text, TERMINAL_TAIL_LINES);
                    }
                }
            }
        }
    }
    let sha = short_sha(&checks.sha);
    match checks.outcome {
        ChecksOutcome::Finished => {}
        ChecksOutcome::TimedOut { waited } => {
            let _ = writeln!(
                out,
                "- remote checks of {sha}: FAIL\n  still pending after {}s; raise `[ship] \
                 checks_timeout` in prpd.toml to wait longer",
                waited.as_secs()
            );
        }
        ChecksOutcome::NoChecksReported { waited } => {
            let _ = writeln!(
                out,
                "- remote checks of {sha}: FAIL\n  no check and no status reported on this commit \
                 within {}s: push it, and make sure CI runs on it",
                waited.as_secs()
            );
        }
    }
}

/// The entry `.progress.md` gets for `result` at `when`: a heading with the verdict, the task's
/// `Done when`, and the output (the last [`PROGRESS_TAIL_LINES`] lines of each failure) fenced.
pub fn progress_entry(result: &TaskResult, when: SystemTime, note: Option<&str>) -> String {
    let output = render(result, PROGRESS_TAIL_LINES);
    let fence = "`".repeat(longest_backtick_run(&output).max(2) + 1);
    let mut entry = format!(
        "### {}: {} ({})\n\n",
        result.task.heading(),
        result.verdict().signal(),
        humantime::format_rfc3339_seconds(when)
    );
    if let Some(note) = note {
        let _ = writeln!(entry, "{note}\n");
    }
    if let Some(done_when) = result.task.field("Done when") {
        let _ = writeln!(entry, "Done when: {done_when}\n");
    }
    let _ = write!(entry, "{fence}text\n{output}{fence}\n");
    entry
}

/// The longest run of backticks in `text`, so a fence around it is longer.
fn longest_backtick_run(text: &str) -> usize {
    text.split(|character| character != '`')
        .map(str::len)
        .max()
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, UNIX_EPOCH};

    use super::*;
    use crate::verify_tasks::result::TestCounts;
    use crate::verify_tasks::task::parse;
    use prpd_ship::github::{CheckSource, RemoteCheck};

    fn result(line: &str, finding: Finding) -> TaskResult {
        TaskResult {
            task: parse(line).pop().expect("a task"),
            finding,
        }
    }

    fn run(command: &str, outcome: CommandOutcome) -> CommandRun {
        CommandRun {
            command: command.to_owned(),
            outcome,
            counts: None,
            tail: String::new(),
            log: None,
            reused_from: None,
            duration: Duration::ZERO,
        }
    }

    const V4: &str = "- [ ] V4 [VERIFY] Full local CI: pnpm lint && pnpm typecheck && pnpm test";

    #[test]
    fn commands_render_in_the_seeds_layout() {
        let mut test = run("pnpm test", CommandOutcome::Passed);
        test.counts = Some(TestCounts {
            passed: 15,
            failed: 0,
        });
        let passing = result(
            V4,
            Finding::Commands(vec![
                run("pnpm lint", CommandOutcome::Passed),
                run("pnpm typecheck", CommandOutcome::Passed),
                test,
            ]),
        );
        assert_eq!(
            render(&passing, TERMINAL_TAIL_LINES),
            "Verified V4 [VERIFY] Full local CI\n- pnpm lint: PASS\n- pnpm typecheck: PASS\n\
             - pnpm test: PASS (15 passed, 0 failed)\n\nVERIFICATION_PASS\n"
        );
        let mut lint = run("pnpm lint", CommandOutcome::Failed("exit 1".to_owned()));
        lint.tail = "> lint\nError: 3 lint errors found\n- src/foo.ts:10 - unexpected console.log\n- src/bar.ts:25 - missing return type\n\n".to_owned();
        let mut typecheck = run("pnpm typecheck", CommandOutcome::Passed);
        typecheck.reused_from = Some("QA check C5 ran it on the same tree".to_owned());
        let failing = result(
            V4,
            Finding::Commands(vec![
                lint,
                typecheck,
                run(
                    "pnpm test",
                    CommandOutcome::Skipped("pnpm lint failed first".to_owned()),
                ),
            ]),
        );
        assert_eq!(
            render(&failing, 3),
            "Verified V4 [VERIFY] Full local CI\n- pnpm lint: FAIL\n  exit 1\n\
             \x20 Error: 3 lint errors found\n  - src/foo.ts:10 - unexpected console.log\n\
             \x20 - src/bar.ts:25 - missing return type\n- pnpm typecheck: PASS\n\
             \x20 (not run again: QA check C5 ran it on the same tree)\n\
             - pnpm test: SKIPPED (pnpm lint failed first)\n\nVERIFICATION_FAIL\n"
        );
    }

    #[test]
    fn an_ac_checklist_renders_the_seeds_table() {
        let row = |id: &str, description: &str, status, evidence: &str| AcceptanceRow {
            id: id.to_owned(),
            description: description.to_owned(),
            status,
            evidence: evidence.to_owned(),
        };
        let checklist = result(
            "- [ ] V6 [VERIFY] AC checklist",
            Finding::Acceptance {
                source: "requirements.md".to_owned(),
                rows: vec![
                    row(
                        "AC-1.1",
                        "Tasks with [VERIFY] tag recognized",
                        RowStatus::Pass,
                        "`npm test`: 2 tests named AC-1.1 passed (test/a.test.js)",
                    ),
                    row("AC-1.2", "a | b", RowStatus::Skip, "marked manual"),
                    row(
                        "AC-2.2",
                        "Delegates to qa-engineer",
                        RowStatus::Fail,
                        "no test names AC-2.2",
                    ),
                ],
            },
        );
        assert_eq!(
            render(&checklist, TERMINAL_TAIL_LINES),
            "Verified V6 [VERIFY] AC checklist\n\n| AC | Description | Status | Evidence |\n\
             |----|-------------|--------|----------|\n\
             | AC-1.1 | Tasks with [VERIFY] tag recognized | PASS | `npm test`: 2 tests named \
             AC-1.1 passed (test/a.test.js) |\n| AC-1.2 | a \\| b | SKIP | marked manual |\n\
             | AC-2.2 | Delegates to qa-engineer | FAIL | no test names AC-2.2 |\n\n\
             1 AC failed: AC-2.2\n\nVERIFICATION_FAIL\n"
        );
        let empty = result(
            "- [ ] V6 [VERIFY] AC checklist",
            Finding::Acceptance {
                source: "PRPs/x.md".to_owned(),
                rows: vec![],
            },
        );
        assert!(
            render(&empty, 5).contains("no AC-* item in PRPs/x.md"),
            "{}",
            render(&empty, 5)
        );
    }

    #[test]
    fn remote_checks_render_each_check_and_how_the_wait_ended() {
        let check = |name: &str, conclusion| RemoteCheck {
            name: name.to_owned(),
            source: CheckSource::CheckRun,
            conclusion,
            url: Some(format!("https://ci.example/{name}")),
            title: Some(format!("{name} title")),
            summary: None,
        };
        let red = result(
            "- [ ] V5 [VERIFY] CI pipeline passes",
            Finding::Pipeline(PipelineFinding::Checked(RemoteChecks {
                sha: "0123456789abcdef0123".to_owned(),
                outcome: ChecksOutcome::Finished,
                checks: vec![
                    check("test", Conclusion::Passed("success".to_owned())),
                    check("lint", Conclusion::Failed("failure".to_owned())),
                ],
            })),
        );
        assert_eq!(
            render(&red, TERMINAL_TAIL_LINES),
            "Verified V5 [VERIFY] CI pipeline passes\n- test: PASS\n- lint: FAIL (failure)\n\
             \x20 lint title\n  https://ci.example/lint\n\nVERIFICATION_FAIL\n"
        );
        let pending = result(
            "- [ ] V5 [VERIFY] CI pipeline passes",
            Finding::Pipeline(PipelineFinding::Checked(RemoteChecks {
                sha: "0123456789abcdef0123".to_owned(),
                outcome: ChecksOutcome::TimedOut {
                    waited: Duration::from_secs(60),
                },
                checks: vec![check("test", Conclusion::Pending("queued".to_owned()))],
            })),
        );
        assert_eq!(
            render(&pending, TERMINAL_TAIL_LINES),
            "Verified V5 [VERIFY] CI pipeline passes\n- test: PENDING (queued)\n\
             - remote checks of 0123456789ab: FAIL\n  still pending after 60s; raise `[ship] \
             checks_timeout` in prpd.toml to wait longer\n\nVERIFICATION_FAIL\n"
        );
        let unseen = result(
            "- [ ] V5 [VERIFY] CI pipeline passes",
            Finding::Pipeline(PipelineFinding::NotAsked(
                "no token in $GITHUB_TOKEN".to_owned(),
            )),
        );
        assert_eq!(
            render(&unseen, TERMINAL_TAIL_LINES),
            "Verified V5 [VERIFY] CI pipeline passes\n- remote checks: FAIL\n\
             \x20 no token in $GITHUB_TOKEN\n\nVERIFICATION_FAIL\n"
        );
        let deferred = result(
            "- [ ] V5 [VERIFY] CI pipeline passes",
            Finding::Deferred("SHIP waits for the remote checks".to_owned()),
        );
        assert_eq!(
            render(&deferred, TERMINAL_TAIL_LINES),
            "Verified V5 [VERIFY] CI pipeline passes\n- deferred to SHIP: SHIP waits for the \
             remote checks\n\nVERIFICATION_DEFERRED\n"
        );
    }

    #[test]
    fn a_progress_entry_keeps_the_last_50_lines_fenced_longer_than_the_output() {
        let mut failing = run(
            "node flood.mjs",
            CommandOutcome::Failed("exit 1".to_owned()),
        );
        failing.tail = (1..=120)
            .map(|number| format!("line {number} ```"))
            .collect::<Vec<_>>()
            .join("\n");
        let mut result = result(
            "- [ ] V1 [VERIFY] Flood: node flood.mjs\n  - **Done when**: it is quiet",
            Finding::Commands(vec![failing]),
        );
        result.task.title = "Flood".to_owned();
        let entry = progress_entry(&result, UNIX_EPOCH + Duration::from_secs(86_400), None);
        assert!(
            entry.starts_with(
                "### V1 [VERIFY] Flood: VERIFICATION_FAIL (1970-01-02T00:00:00Z)\n\n\
                 Done when: it is quiet\n\n````text\nVerified V1 [VERIFY] Flood\n"
            ),
            "{entry}"
        );
        assert!(entry.contains("  line 71 ```\n"), "{entry}");
        assert!(!entry.contains("line 70 "), "{entry}");
        assert!(
            entry.ends_with("line 120 ```\n\nVERIFICATION_FAIL\n````\n"),
            "{entry}"
        );
    }
}
