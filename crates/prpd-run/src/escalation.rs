//! The report a human gets when a run escalates (`runs/<id>/escalation.md`): why it stopped,
//! every QA verdict with its blocking items, the breaker history, the last status blocks, and
//! the commands to resume or abort, with the run's timeline written beside it. Pure: rendered
//! from the run record.

use std::fmt::Write as _;
use std::path::Path;

use crate::machine::EscalationReason;
use crate::record::{AgentObstacles, RunRecord};

/// The Markdown escalation report of `record`, stopped for `reason`.
pub fn render(
    record: &RunRecord,
    reason: &EscalationReason,
    repo: &Path,
    last_blocks: &[String],
) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "# Run {} escalated\n", record.run_id);
    let _ = writeln!(out, "**PRP:** {}", record.prp.display());
    let _ = writeln!(out, "**Stopped in:** {}", stopped_in(record));
    let _ = writeln!(
        out,
        "**Iterations:** {} ({} agent invocations)\n",
        record.total_iterations(),
        record.usage.invocations
    );
    let _ = writeln!(out, "## Why\n\n{reason}\n");
    if let Some(guardrail) = &record.guardrail {
        let _ = writeln!(out, "Guardrail reached: `{guardrail}`.\n");
    }

    let _ = writeln!(out, "## QA verdicts\n");
    if record.verdicts.is_empty() {
        let _ = writeln!(out, "QA has not run in this run.\n");
    }
    for verdict in &record.verdicts {
        let report = verdict.report.as_ref().map_or_else(String::new, |path| {
            format!(" — report: `{}`", path.display())
        });
        let _ = writeln!(
            out,
            "- Attempt {}: **{:?}**{report}",
            verdict.attempt, verdict.verdict
        );
        for blocking in &verdict.blocking {
            let _ = writeln!(out, "  - {blocking}");
        }
    }
    let _ = writeln!(out);

    let _ = writeln!(out, "## Circuit breakers\n");
    let _ = writeln!(out, "| Phase | State | Transitions |");
    let _ = writeln!(out, "|-------|-------|-------------|");
    for (phase, breaker) in &record.breakers {
        let transitions: Vec<String> = breaker
            .history
            .iter()
            .map(|transition| {
                format!(
                    "iteration {}: {} → {} ({})",
                    transition.iteration, transition.from, transition.to, transition.reason
                )
            })
            .collect();
        let _ = writeln!(
            out,
            "| {phase} | {} | {} |",
            breaker.state,
            if transitions.is_empty() {
                "none".to_owned()
            } else {
                transitions.join("<br>")
            }
        );
    }
    let _ = writeln!(out);

    obstacles(&mut out, &record.agent_obstacles);

    let _ = writeln!(out, "## Receipt\n\n{}", record.receipt.markdown());

    let _ = writeln!(out, "## Last status blocks\n");
    if last_blocks.is_empty() {
        let _ = writeln!(out, "None recorded.\n");
    }
    for block in last_blocks {
        let _ = writeln!(out, "```text\n{}\n```\n", block.trim_end());
    }

    let repo = repo.display();
    let _ = writeln!(out, "## What to do\n");
    if let Some(worktree) = &record.worktree {
        let _ = writeln!(
            out,
            "- The run's work is in its worktree, kept for you: `{}`.",
            worktree.display()
        );
    }
    let _ = writeln!(
        out,
        "- Read the iteration logs under `.prp-session/runs/{}/iterations/`.",
        record.run_id
    );
    let _ = writeln!(
        out,
        "- The run's timeline, where it spent its time and how each agent call ended: `.prp-session/runs/{}/timeline.svg` (open it in a browser).",
        record.run_id
    );
    let _ = writeln!(
        out,
        "- Resume after fixing the cause: `prpd resume {} --repo {repo}`",
        record.run_id
    );
    let _ = writeln!(
        out,
        "- Or give up on this run: `prpd abort {} --repo {repo}`",
        record.run_id
    );
    out
}

/// What stood in the last agent's way: the tool calls its CLI refused and its own blockers.
fn obstacles(out: &mut String, obstacles: &AgentObstacles) {
    if !obstacles.denials.is_empty() || !obstacles.blockers.is_empty() {
        let phase = obstacles
            .phase
            .map_or_else(String::new, |phase| format!(" ({phase})"));
        let _ = writeln!(out, "## What stood in the last agent's way{phase}\n");
        if !obstacles.denials.is_empty() {
            let _ = writeln!(
                out,
                "Its CLI refused these tool calls (allow them in the agent's `command` in prpd.toml, e.g. Claude Code's `--allowedTools`, if the agent needs them):\n"
            );
            for denial in &obstacles.denials {
                let _ = writeln!(out, "- `{denial}`");
            }
            let _ = writeln!(out);
        }
        if !obstacles.blockers.is_empty() {
            let _ = writeln!(out, "The blockers it reported:\n");
            for blocker in &obstacles.blockers {
                let _ = writeln!(out, "- {blocker}");
            }
            let _ = writeln!(out);
        }
    }
}

fn stopped_in(record: &RunRecord) -> String {
    match record.state() {
        crate::machine::State::Escalated { from, .. } => from.to_string(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::*;
    use crate::config::Config;
    use prpd_base::phase::Phase;

    #[test]
    fn the_report_names_what_the_agents_cli_refused_and_its_blockers() {
        let config = Config::default();
        let mut record = RunRecord::new(
            "run-1".to_owned(),
            PathBuf::from("PRPs/x.md"),
            0,
            &config.breaker,
        );
        let reason = EscalationReason::FatalAgent {
            message: "stopped".to_owned(),
        };
        let quiet = render(&record, &reason, Path::new("/repo"), &[]);
        assert!(!quiet.contains("stood in the last agent's way"), "{quiet}");

        record.agent_obstacles = AgentObstacles {
            phase: Some(Phase::Red),
            denials: vec!["Bash(npm test)".to_owned()],
            blockers: vec!["npm test requires approval".to_owned()],
        };
        let report = render(&record, &reason, Path::new("/repo"), &[]);
        assert!(
            report.contains("## What stood in the last agent's way (RED)"),
            "{report}"
        );
        assert!(report.contains("- `Bash(npm test)`"), "{report}");
        assert!(report.contains("- npm test requires approval"), "{report}");
        let feedback = record.agent_obstacles.feedback();
        assert_eq!(feedback.len(), 2);
        assert!(feedback[0].contains("Bash(npm test)"), "{feedback:?}");
    }

    #[test]
    fn the_report_points_to_the_runs_timeline() {
        let record = RunRecord::new(
            "run-1".to_owned(),
            PathBuf::from("PRPs/x.md"),
            0,
            &Config::default().breaker,
        );
        let reason = EscalationReason::Guardrail {
            name: "max_agent_invocations = 1".to_owned(),
        };
        let report = render(&record, &reason, Path::new("/repo"), &[]);
        assert!(
            report.contains("`.prp-session/runs/run-1/timeline.svg`"),
            "{report}"
        );
    }
}
