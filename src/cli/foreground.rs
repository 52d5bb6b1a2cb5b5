//! Driving a run in the foreground (`prpd run`, `resume`, `demo`): until it stops, or until
//! Ctrl-C or SIGTERM drops it (the agent's process group dies with it, and what escaped the
//! group is stopped), then the summary and the exit code of how it ended.

use std::io::Write as _;

use anyhow::Context as _;

use prpd_base::exit::ExitCode;
use prpd_base::{process, shutdown};
use prpd_run::driver::Summary;
use prpd_run::machine::State;
use prpd_run::record::RunRecord;
use prpd_run::session::SessionFailure;

/// Drives `work` and prints its summary (JSON or text); the exit code says how the run ended.
pub(super) fn drive_in_foreground(
    json: bool,
    work: impl Future<Output = Result<RunRecord, SessionFailure>>,
) -> anyhow::Result<ExitCode> {
    let Some(record) = drive(work)? else {
        return Ok(ExitCode::NotShipped);
    };
    print_summary(&record, json)?;
    Ok(exit_code_of(&record))
}

/// Drives a run until it stops or the process is asked to stop (Ctrl-C, SIGTERM): then the
/// running agent's process group is killed with the run future, the processes that escaped it
/// are stopped, and the saved record lets `prpd resume` continue (`None`).
pub(super) fn drive(
    work: impl Future<Output = Result<RunRecord, SessionFailure>>,
) -> anyhow::Result<Option<RunRecord>> {
    let runtime = tokio::runtime::Runtime::new().context("failed to start the async runtime")?;
    let record = runtime.block_on(async {
        tokio::select! {
            result = work => result.map(Some),
            () = shutdown::requested() => Ok(None),
        }
    });
    // However the run ended (a dropped run killed the agent's group), nothing that escaped an
    // agent's or a measurement's group may outlive prpd.
    let leftovers = runtime.block_on(process::stop_leftovers());
    for (started_by, stopped) in process::by_starter(&leftovers) {
        tracing::warn!(%stopped, "{}", started_by.stopped_message());
    }
    let record = record?;
    if record.is_none() {
        eprintln!("prpd: interrupted; the run is saved and `prpd resume` continues it");
    }
    Ok(record)
}

pub(super) fn exit_code_of(record: &RunRecord) -> ExitCode {
    match record.state() {
        State::Shipped {} => ExitCode::Success,
        State::Escalated { .. } => ExitCode::Escalated,
        State::Aborted {}
        | State::Red {}
        | State::Green {}
        | State::Refactor {}
        | State::Document {}
        | State::Qa {}
        | State::Ship {} => ExitCode::NotShipped,
    }
}

pub(super) fn print_summary(record: &RunRecord, json: bool) -> anyhow::Result<()> {
    let summary = Summary::of(record);
    let mut stdout = std::io::stdout().lock();
    if json {
        serde_json::to_writer_pretty(&mut stdout, &summary)?;
        writeln!(stdout)?;
        return Ok(());
    }
    writeln!(
        stdout,
        "\nRun {}: {} after {} iterations ({} agent invocations).",
        summary.run_id, summary.state, summary.iterations, summary.agent_invocations
    )?;
    for verdict in &summary.verdicts {
        writeln!(
            stdout,
            "  QA attempt {}: {:?}{}",
            verdict.attempt,
            verdict.verdict,
            if verdict.blocking.is_empty() {
                String::new()
            } else {
                format!(" ({})", verdict.blocking.join("; "))
            }
        )?;
    }
    if let Some(reason) = &summary.escalation_reason {
        writeln!(stdout, "Escalated: {reason}")?;
    }
    if let Some(report) = &summary.escalation_report {
        writeln!(stdout, "Escalation report: {}", report.display())?;
    }
    Ok(())
}
