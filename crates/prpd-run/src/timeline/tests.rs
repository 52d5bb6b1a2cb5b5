//! The timeline's tests: bars and visits from a run's receipt, how each call's ending is read,
//! and the SVG's geometry, escaping and size.

use std::path::PathBuf;

use super::svg::widths;
use super::*;
use crate::config::Config;
use crate::machine::Event;
use crate::receipt::{CostSource, LineStop};

fn record() -> RunRecord {
    RunRecord::new(
        "run-7".to_owned(),
        PathBuf::from("PRPs/x.md"),
        0,
        &Config::default().breaker,
    )
}

fn line(phase: Phase, iteration: u32, attempt: u32, verdict: Option<&str>) -> ReceiptLine {
    ReceiptLine {
        phase,
        iteration,
        attempt,
        started_at: 1_700_000_000,
        role: None,
        agent: "codex".to_owned(),
        model: Some("gpt-5-codex".to_owned()),
        model_reported: true,
        tokens: None,
        cost_usd: None,
        cost: CostSource::NotReported,
        wall_seconds: 10.0,
        verdict: verdict.map(str::to_owned),
        reasons: Vec::new(),
        prepared_seconds: None,
        measured_seconds: Some(2.0),
        stop: None,
    }
}

fn stopped_by(mut line: ReceiptLine, by: StopKind, reason: &str) -> ReceiptLine {
    line.stop = Some(LineStop {
        by,
        reason: reason.to_owned(),
    });
    line
}

fn timeline(lines: Vec<ReceiptLine>) -> Timeline {
    let mut record = record();
    record.receipt.lines = lines;
    Timeline::of(&record)
}

fn endings(timeline: &Timeline) -> Vec<Ending> {
    timeline.bars.iter().map(|bar| bar.ending).collect()
}

/// The record of a run escalated for `reason` (a human's turn: nothing is running).
fn escalated(lines: Vec<ReceiptLine>) -> RunRecord {
    let mut record = record();
    record.receipt.lines = lines;
    record.machine.handle(&Event::GuardrailReached {
        name: "max_agent_invocations = 3".to_owned(),
    });
    record
}

#[test]
fn a_reject_sends_the_run_back_to_a_new_visit_of_green_in_time_order() {
    let mut examiner = line(Phase::Red, 1, 1, Some("done"));
    examiner.role = Some("examiner".to_owned());
    examiner.measured_seconds = None;
    let timeline = timeline(vec![
        line(Phase::Red, 1, 1, Some("done")),
        examiner,
        line(Phase::Green, 1, 1, Some("again")),
        line(Phase::Green, 2, 1, Some("done")),
        line(Phase::Qa, 1, 1, Some("REJECT")),
        line(Phase::Green, 1, 2, Some("done")),
        line(Phase::Qa, 1, 2, Some("APPROVE")),
    ]);
    let visits: Vec<(Phase, u32, usize, usize)> = timeline
        .visits
        .iter()
        .map(|visit| (visit.phase, visit.attempt, visit.first_bar, visit.bar_count))
        .collect();
    assert_eq!(
        visits,
        [
            (Phase::Red, 1, 0, 2),
            (Phase::Green, 1, 2, 2),
            (Phase::Qa, 1, 4, 1),
            (Phase::Green, 2, 5, 1),
            (Phase::Qa, 2, 6, 1),
        ]
    );
    assert_eq!(timeline.bars[1].role.as_deref(), Some("examiner"));
    assert_eq!(timeline.bars[1].seconds.to_string(), "10");
    assert_eq!(timeline.bars[0].seconds.to_string(), "12");
    assert_eq!(timeline.visits[1].seconds.to_string(), "24");

    let svg = timeline.svg();
    let groups: Vec<&str> = svg
        .lines()
        .filter(|line| line.starts_with("<g class=\"phase\""))
        .collect();
    assert_eq!(
        groups,
        [
            "<g class=\"phase\" data-phase=\"RED\" data-attempt=\"1\">",
            "<g class=\"phase\" data-phase=\"GREEN\" data-attempt=\"1\">",
            "<g class=\"phase\" data-phase=\"QA\" data-attempt=\"1\">",
            "<g class=\"phase\" data-phase=\"GREEN\" data-attempt=\"2\">",
            "<g class=\"phase\" data-phase=\"QA\" data-attempt=\"2\">",
        ]
    );
    assert!(
        svg.contains("<rect class=\"bar reject\" data-phase=\"QA\" data-iteration=\"1\" x="),
        "{svg}"
    );
    assert!(
        svg.contains("data-phase=\"RED\" data-iteration=\"1\" data-role=\"examiner\""),
        "{svg}"
    );
    assert!(
        svg.contains("<title>RED examiner (attempt 1) · 10.0 s"),
        "{svg}"
    );
    assert!(
        svg.contains(">4. GREEN, attempt 2: 1 call, 12.0 s</text>"),
        "the visit's summary reads without hovering: {svg}"
    );
    assert!(svg.contains(">2. GREEN, attempt 1: 2 calls, 24.0 s</text>"));
    assert!(svg.contains(">Run run-7 · RED · 1 min 22 s in 7 agent calls</text>"));
}

#[test]
fn endings_come_from_the_verdicts_and_what_escalated_the_run() {
    let mut running = line(Phase::Document, 1, 1, None);
    running.measured_seconds = None;
    let timeline = timeline(vec![
        line(Phase::Red, 1, 1, Some("done")),
        line(Phase::Green, 1, 1, Some("again")),
        stopped_by(
            line(Phase::Green, 2, 1, Some("again")),
            StopKind::Breaker,
            "the GREEN breaker opened",
        ),
        line(Phase::Green, 3, 1, Some("stopped")),
        line(Phase::Qa, 1, 1, Some("REJECT")),
        stopped_by(
            line(Phase::Qa, 1, 3, Some("REJECT")),
            StopKind::QaRejectedThrice,
            "QA rejected the work 3 times",
        ),
        stopped_by(
            line(Phase::Green, 1, 1, Some("stopped")),
            StopKind::Guardrail,
            "the run reached its guardrail",
        ),
        stopped_by(
            line(Phase::Green, 2, 1, Some("stopped")),
            StopKind::Budget,
            "max_cost_usd = 1",
        ),
        stopped_by(
            line(Phase::Green, 3, 1, Some("stopped")),
            StopKind::Agent,
            "the agent failed",
        ),
        stopped_by(
            line(Phase::Qa, 1, 1, Some("APPROVE")),
            StopKind::Ship,
            "shipping failed",
        ),
        line(Phase::Qa, 2, 1, Some("APPROVE")),
        line(Phase::Refactor, 1, 1, None),
        running,
    ]);
    assert_eq!(
        endings(&timeline),
        [
            Ending::Passed,
            Ending::Failed,
            Ending::Breaker,
            Ending::Stopped,
            Ending::Reject,
            Ending::Reject,
            Ending::Guardrail,
            Ending::Budget,
            Ending::Stopped,
            Ending::Stopped,
            Ending::Approve,
            Ending::Stopped,
            Ending::Running,
        ],
        "a call never measured before a later one is stopped; the last of a working run runs"
    );
    assert_eq!(
        timeline.bars[2].reasons,
        ["the GREEN breaker opened"],
        "the stop is among the reasons"
    );
    assert!(timeline.svg().contains("class=\"bar running\""));
}

#[test]
fn a_breaker_after_a_failed_gate_shows_the_breaker_with_both_reasons() {
    let mut failed = line(Phase::Green, 2, 1, Some("again"));
    failed.reasons = vec!["tests failing: 2".to_owned()];
    failed.prepared_seconds = Some(3.0);
    let breaker = stopped_by(failed, StopKind::Breaker, "the GREEN breaker opened");
    let record = escalated(vec![line(Phase::Green, 1, 1, Some("again")), breaker]);
    let timeline = Timeline::of(&record);
    assert_eq!(endings(&timeline), [Ending::Failed, Ending::Breaker]);
    assert_eq!(timeline.state, "ESCALATED");
    assert!(timeline.escalation.is_some());
    let svg = timeline.svg();
    assert!(
        svg.contains(
            "<title>GREEN iteration 2 (attempt 1) · 15.0 s (prpd before 3.0 s, agent 10.0 s, \
             prpd after 2.0 s) · \
             codex, gpt-5-codex · breaker opened: tests failing: 2; the GREEN breaker opened\
             </title>"
        ),
        "{svg}"
    );
    assert!(
        svg.contains(">Escalated: the run reached its guardrail"),
        "{svg}"
    );
}

#[test]
fn the_last_call_of_a_run_that_stopped_is_not_running() {
    let record = escalated(vec![line(Phase::Green, 1, 1, None)]);
    assert_eq!(endings(&Timeline::of(&record)), [Ending::Stopped]);
}

#[test]
fn bars_are_as_wide_as_their_time_and_never_thinner_than_three_pixels() {
    let proportional = widths(&[10.0, 30.0], 400.0, 3.0);
    assert_eq!(proportional, [100.0, 300.0]);

    let thin = widths(&[0.4, 1000.0, 0.0], 603.0, 3.0);
    assert_eq!(thin, [3.0, 597.0, 3.0], "a 0.4 s and an empty bar show");

    let many = widths(&[1.0; 200], 900.0, 3.0);
    assert!(
        many.iter().all(|width| (width - 4.5).abs() < 1e-9),
        "{many:?}"
    );

    let too_many = widths(&[1.0; 600], 900.0, 3.0);
    assert!(
        too_many.iter().all(|width| (width - 1.5).abs() < 1e-9),
        "bars that cannot all have three pixels share the width: {too_many:?}"
    );
}

#[test]
fn the_svgs_bars_fill_the_width_in_proportion() {
    let mut short = line(Phase::Red, 1, 1, Some("done"));
    short.wall_seconds = 8.0;
    let mut long = line(Phase::Red, 2, 1, Some("done"));
    long.wall_seconds = 28.0;
    let svg = timeline(vec![short, long]).svg();
    assert!(svg.contains("x=\"12.0\" y=\"56\" width=\"234.0\""), "{svg}");
    assert!(
        svg.contains("x=\"246.0\" y=\"56\" width=\"702.0\""),
        "{svg}"
    );
}

#[test]
fn what_comes_from_a_run_is_escaped() {
    let mut hostile = line(Phase::Qa, 1, 1, Some("REJECT"));
    hostile.reasons = vec!["<script>alert(1)</script> \"quoted\" & 'single'\u{1b}[31m".to_owned()];
    hostile.model = Some("m<odel>".to_owned());
    hostile.agent = "a&b".to_owned();
    let mut record = record();
    record.run_id = "run\"><script>".to_owned();
    record.receipt.lines = vec![hostile];
    let svg = Timeline::of(&record).svg();
    assert!(!svg.contains("<script"), "{svg}");
    assert!(
        svg.contains(
            "&lt;script&gt;alert(1)&lt;/script&gt; &quot;quoted&quot; &amp; &apos;single&apos;\u{fffd}[31m"
        ),
        "{svg}"
    );
    assert!(svg.contains("a&amp;b, m&lt;odel&gt;"), "{svg}");
    assert!(
        svg.contains("data-run=\"run&quot;&gt;&lt;script&gt;\""),
        "{svg}"
    );
    assert!(!svg.contains('\u{1b}'));
}

#[test]
fn two_hundred_bars_stay_small_and_self_contained() {
    let lines: Vec<ReceiptLine> = (1..=200)
        .map(|iteration| {
            let mut line = line(Phase::Green, iteration, 1, Some("again"));
            line.wall_seconds = 1.0;
            line.reasons = vec![
                "tests failing: 2 (calc::adds_two_numbers, calc::divides)".to_owned(),
                "x".repeat(500),
            ];
            line
        })
        .collect();
    let svg = timeline(lines).svg();
    assert_eq!(svg.matches("<rect class=\"bar failed\"").count(), 200);
    assert!(svg.len() < 72 * 1024, "{} bytes", svg.len());
    assert!(svg.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"timeline\""));
    for external in ["href", "<script", "<image", "@import", "url(http"] {
        assert!(!svg.contains(external), "{external}");
    }
}

#[test]
fn a_run_without_calls_says_so_and_keeps_its_legend() {
    let svg = timeline(Vec::new()).svg();
    assert!(svg.contains(">No agent was called.</text>"), "{svg}");
    for ending in Ending::ALL {
        assert!(
            svg.contains(&format!("class=\"key {}\"", ending.class())),
            "{ending:?}"
        );
        assert!(svg.contains(&format!(">{}</text>", ending.label())));
    }
}

#[test]
fn the_timeline_serialises_for_a_web_page() {
    let json =
        serde_json::to_value(timeline(vec![line(Phase::Red, 1, 1, Some("done"))])).expect("json");
    assert_eq!(json["bars"][0]["ending"], "passed");
    assert_eq!(json["bars"][0]["phase"], "RED");
    assert_eq!(json["bars"][0]["seconds"], 12.0);
    assert_eq!(json["visits"][0]["bar_count"], 1);
}
