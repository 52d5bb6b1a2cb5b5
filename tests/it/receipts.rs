//! Receipts and budgets end to end: every agent call of a run is on its receipt (the summary,
//! `prpd status`, `prpd receipt`, the QA report, `pr.md`) and its timeline (`timeline.svg`),
//! and a budget stops an agent while it streams its usage, not after its turn;
//! `prpd resume --budget +N` is how a human continues.
//!
//! The fixture agent prints Claude Code's `stream-json`: each assistant message with its usage
//! and model, then the result object with the cost. Its `spend` behaviour streams 20 messages
//! of 100k input tokens of `claude-sonnet-4-5-20250929` in GREEN ($0.30 each at the built-in
//! price), 100 ms apart.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::run::{PRP, calc_repo, prp, prpd_json, prpd_toml, read, run, run_dir};
use crate::util::TestRepo;

/// The model the fixture's `stream` format reports, and the one it reports in QA.
const MODEL: &str = "claude-sonnet-4-5-20250929";
const QA_MODEL: &str = "claude-opus-4-5-20251101";

#[test]
fn every_agent_call_is_on_the_runs_receipt_wherever_a_person_looks() {
    let repo = calc_repo(&prp(""), &prpd_toml("stream", &[], ""));
    let (code, summary) = run(&repo);
    assert_eq!(
        (code, summary["state"].as_str()),
        (0, Some("SHIPPED")),
        "{summary:#}"
    );

    let lines = summary["receipt"]["lines"]
        .as_array()
        .expect("receipt lines");
    let phases: Vec<&str> = lines
        .iter()
        .filter_map(|line| line["phase"].as_str())
        .collect();
    assert_eq!(
        phases,
        ["RED", "GREEN", "REFACTOR", "DOCUMENT", "QA"],
        "{summary:#}"
    );
    for line in lines {
        let model = if line["phase"] == "QA" {
            QA_MODEL
        } else {
            MODEL
        };
        assert_eq!(line["model"], model, "{line:#}");
        assert_eq!(line["model_reported"], true, "{line:#}");
        assert_eq!(line["agent"], "node", "{line:#}");
        assert_eq!(line["cost"], "reported", "{line:#}");
        assert_eq!(line["cost_usd"], 0.01, "{line:#}");
        assert_eq!(line["tokens"]["input"], 10, "{line:#}");
        assert!(line["wall_seconds"].as_f64().is_some(), "{line:#}");
    }
    let verdicts: Vec<&str> = lines
        .iter()
        .filter_map(|line| line["verdict"].as_str())
        .collect();
    assert_eq!(verdicts, ["done", "done", "done", "done", "APPROVE"]);
    assert_eq!(summary["receipt_totals"]["cost_usd"], 0.05, "{summary:#}");
    assert_eq!(summary["receipt_totals"]["calls_without_cost"], 0);

    let (code, printed) = prpd_json(repo.path(), &["receipt", "--json"]);
    assert_eq!(code, 0);
    assert_eq!(printed["lines"], summary["receipt"], "{printed:#}");
    assert_eq!(printed["totals"], summary["receipt_totals"]);

    let table = stdout(&repo, &["receipt"]);
    assert!(
        table.contains(&format!(
            "| 1 | RED 1 | node | {MODEL} | 10 / 0 / 0 / 5 | $0.0100 (reported) |"
        )),
        "{table}"
    );
    assert!(table.contains("**Total:** 5 call(s)"), "{table}");
    assert!(table.contains("**$0.0500**;"), "{table}");

    let status = stdout(&repo, &["status"]);
    assert!(
        status.contains("Cost:         $0.0500 for 5 agent call(s)"),
        "{status}"
    );

    let run_dir = run_dir(repo.path(), &summary);
    let pull_request = read(&run_dir.join("pr.md"));
    assert!(pull_request.contains("### Receipt"), "{pull_request}");
    assert!(
        pull_request.contains(&format!("| GREEN | 1 | {MODEL} | 10 / 0 / 5 | $0.0100 |")),
        "{pull_request}"
    );
    assert!(
        pull_request.contains("| **Total** | 5 | | | **$0.0500** |"),
        "{pull_request}"
    );
    let qa_report = qa_report(&run_dir);
    assert!(
        qa_report.contains("## What the run cost so far"),
        "{qa_report}"
    );
    assert!(qa_report.contains("| DOCUMENT | 1 |"), "{qa_report}");

    for line in lines {
        assert!(line["prepared_seconds"].as_f64().is_some(), "{line:#}");
        assert!(line["measured_seconds"].as_f64().is_some(), "{line:#}");
        assert!(line["stop"].is_null(), "{line:#}");
    }
    let every_call = [
        "passed RED",
        "passed GREEN",
        "passed REFACTOR",
        "passed DOCUMENT",
        "approve QA",
    ];
    let shipped = timeline(&run_dir);
    assert_eq!(shipped.bars, every_call);
    assert_eq!(
        shipped.visits,
        ["RED 1", "GREEN 1", "REFACTOR 1", "DOCUMENT 1", "QA 1"]
    );
    assert!(shipped.svg.contains("· SHIPPED ·"), "{}", shipped.svg);
    let beside_the_qa_report = timeline(qa_report_path(&run_dir).parent().expect("its dir"));
    assert_eq!(beside_the_qa_report.bars, every_call);
}

#[test]
fn budgets_stop_an_agent_mid_call_per_run_and_per_day_and_a_human_raises_them() {
    let config = prpd_toml(
        "stream",
        &[("green", "spend")],
        "[guardrails]\nmax_cost_usd = 1.0\nmax_cost_usd_per_day = 2.0\n",
    );
    let repo = calc_repo(&prp(""), &config);
    repo.file("PRPs/again.md", &prp("")).commit("a second PRP");

    // Run A: RED costs $0.01, GREEN streams $0.30015 a message (100k input and 10 output
    // tokens); the fourth takes the run past $1.
    // Both runs work in worktrees of their own: an in-place run's `node --test` would also find
    // the other run's tests under `.git/prpd/worktrees/`.
    let (code, first) = prpd_json(repo.path(), &["run", PRP, "--json"]);
    assert_eq!(
        (code, first["state"].as_str()),
        (3, Some("ESCALATED")),
        "{first:#}"
    );
    let guardrail = first["guardrail"].as_str().expect("guardrail");
    assert!(
        guardrail.starts_with("max_cost_usd = 1 for this run ($1.2106 spent, $0.2106 over; the agent was stopped mid-call"),
        "stopped within one usage report: {guardrail}"
    );
    let first_dir = run_dir(repo.path(), &first);
    assert!(
        !first_dir.join("spend-finished").exists(),
        "the agent did not run to its end"
    );
    let green = last_line(&first, "GREEN");
    assert_eq!(green["verdict"], "stopped", "{green:#}");
    let streamed = green["tokens"]["input"].as_u64().expect("tokens");
    assert!(
        (400_000..=500_000).contains(&streamed),
        "stopped at the fourth message, or the one in flight: {green:#}"
    );
    assert_eq!(
        green["cost"], "priced",
        "no result object: priced from the streamed tokens"
    );
    assert_eq!(green["stop"]["by"], "budget", "{green:#}");
    assert_eq!(
        timeline(&first_dir).bars.last().map(String::as_str),
        Some("budget GREEN")
    );
    let escalation = read(&first_dir.join("escalation.md"));
    assert!(escalation.contains("## Receipt"), "{escalation}");
    assert!(
        escalation.contains("stopped; run escalated: budget used up"),
        "{escalation}"
    );
    assert!(
        escalation.contains("prpd resume --budget +N"),
        "{escalation}"
    );

    // Run B, in a worktree of its own, the same day: the repository's $2 are crossed before
    // the run's own $1.
    let (code, second) = prpd_json(repo.path(), &["run", "PRPs/again.md", "--json"]);
    assert_eq!(
        (code, second["state"].as_str()),
        (3, Some("ESCALATED")),
        "{second:#}"
    );
    let guardrail = second["guardrail"].as_str().expect("guardrail");
    assert!(
        guardrail.starts_with("max_cost_usd_per_day = 2 for this repository today"),
        "{guardrail}"
    );
    assert!(guardrail.contains("stopped mid-call"), "{guardrail}");

    // A raise must be an amount; a human raises A's run budget, then today's.
    let refused = repo
        .prpd()
        .args([
            "resume",
            first["run_id"].as_str().expect("id"),
            "--budget",
            "lots",
        ])
        .output()
        .expect("prpd");
    assert_eq!(refused.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&refused.stderr).contains("expected a positive amount"));
    let run_a = first["run_id"].as_str().expect("id");
    let (code, resumed) = prpd_json(repo.path(), &["resume", run_a, "--budget", "+10", "--json"]);
    assert_eq!(code, 3, "{resumed:#}");
    let guardrail = resumed["guardrail"].as_str().expect("guardrail");
    assert!(
        guardrail.starts_with("max_cost_usd_per_day = 2 for this repository today")
            && !guardrail.contains("mid-call"),
        "the day's budget was used up before the next call: {guardrail}"
    );
    let (code, shipped) = prpd_json(repo.path(), &["resume", run_a, "--budget", "+10", "--json"]);
    assert_eq!(
        (code, shipped["state"].as_str()),
        (0, Some("SHIPPED")),
        "{shipped:#}"
    );
    assert!(
        first_dir.join("spend-finished").exists(),
        "GREEN ran to its end"
    );
    let greens: Vec<&Value> = lines_of(&shipped, "GREEN");
    assert_eq!(
        greens.len(),
        2,
        "the stopped call and the one that finished: {shipped:#}"
    );
    assert_eq!(greens[1]["cost"], "reported");
}

fn lines_of<'a>(summary: &'a Value, phase: &str) -> Vec<&'a Value> {
    summary["receipt"]["lines"]
        .as_array()
        .expect("receipt lines")
        .iter()
        .filter(|line| line["phase"] == phase)
        .collect()
}

fn last_line<'a>(summary: &'a Value, phase: &str) -> &'a Value {
    lines_of(summary, phase)
        .last()
        .copied()
        .unwrap_or_else(|| panic!("no {phase} line in {summary:#}"))
}

fn stdout(repo: &TestRepo, args: &[&str]) -> String {
    let output = repo.prpd().args(args).output().expect("prpd");
    assert!(output.status.success(), "prpd {args:?}: {output:?}");
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// The QA report of the run's last QA iteration.
fn qa_report(run_dir: &Path) -> String {
    read(&qa_report_path(run_dir))
}

fn qa_report_path(run_dir: &Path) -> PathBuf {
    let mut reports: Vec<_> = std::fs::read_dir(run_dir.join("iterations"))
        .expect("iterations")
        .filter_map(Result::ok)
        .map(|entry| entry.path().join("qa-report.md"))
        .filter(|path| path.is_file())
        .collect();
    reports.sort();
    reports.pop().expect("a QA report")
}

/// Asserts that `timeline.svg` in `dir` shows a run that QA rejected once and approved next:
/// the REJECT, the visit of GREEN after it with the next attempt, the APPROVE last.
pub(crate) fn assert_reject_then_approve(dir: &Path) {
    let timeline = timeline(dir);
    assert_eq!(
        timeline.visits,
        [
            "RED 1",
            "GREEN 1",
            "REFACTOR 1",
            "DOCUMENT 1",
            "QA 1",
            "GREEN 2",
            "REFACTOR 2",
            "DOCUMENT 2",
            "QA 2"
        ]
    );
    assert!(
        timeline.bars.contains(&"reject QA".to_owned()),
        "{:?}",
        timeline.bars
    );
    assert_eq!(timeline.bars.last().map(String::as_str), Some("approve QA"));
}

/// What `timeline.svg` shows.
pub(crate) struct Timeline {
    /// Its phase visits, `PHASE attempt`, left to right.
    pub visits: Vec<String>,
    /// Its bars, `ending PHASE`, left to right.
    pub bars: Vec<String>,
    pub svg: String,
}

/// The `timeline.svg` in `dir`.
pub(crate) fn timeline(dir: &Path) -> Timeline {
    let svg = read(&dir.join("timeline.svg"));
    let attribute = |element: &str, name: &str| -> String {
        element
            .split(&format!(" {name}=\""))
            .nth(1)
            .and_then(|rest| rest.split('"').next())
            .unwrap_or_else(|| panic!("no {name} in {element}"))
            .to_owned()
    };
    let elements = |start: &str| -> Vec<String> {
        svg.lines()
            .filter(|line| line.starts_with(start))
            .map(str::to_owned)
            .collect()
    };
    let visits = elements("<g class=\"phase\"")
        .iter()
        .map(|group| {
            format!(
                "{} {}",
                attribute(group, "data-phase"),
                attribute(group, "data-attempt")
            )
        })
        .collect();
    let bars = elements("<rect class=\"bar ")
        .iter()
        .map(|bar| {
            let class = attribute(bar, "class");
            format!(
                "{} {}",
                class.trim_start_matches("bar "),
                attribute(bar, "data-phase")
            )
        })
        .collect();
    Timeline { visits, bars, svg }
}
