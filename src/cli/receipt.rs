//! `prpd receipt [RUN]`: what each agent call of a run cost and what came of it, as a table or
//! as JSON (`--json`). It reads the run's record, the only place prpd keeps the figures.

use std::io::Write as _;

use serde::Serialize;

use prpd_base::exit::ExitCode;
use prpd_run::machine::State;
use prpd_run::receipt::{Receipt, Totals};
use prpd_run::session;

use super::usage::UsageError;
use super::{ReceiptArgs, repo_dir};

/// What `prpd receipt --json` prints.
#[derive(Debug, Serialize)]
struct Printed<'a> {
    run_id: &'a str,
    prp: &'a std::path::Path,
    state: String,
    guardrail: Option<&'a str>,
    lines: &'a Receipt,
    totals: Totals,
}

/// Prints the receipt of `args.run`, else of the latest unfinished run, else of the latest.
pub fn receipt(args: &ReceiptArgs) -> anyhow::Result<ExitCode> {
    let repo = repo_dir(&args.repo)?;
    let listed = session::status(&repo)?;
    let chosen = if let Some(asked) = &args.run {
        listed
            .into_iter()
            .find(|run| &run.run_id == asked)
            .ok_or_else(|| session::SessionError::NoSuchRun {
                run_id: asked.clone(),
                repo: repo.clone(),
            })?
    } else {
        let unfinished = listed.iter().rposition(|run| {
            run.record
                .as_ref()
                .map_or(true, |record| !record.is_finished())
        });
        let latest = unfinished.or(listed.len().checked_sub(1));
        let Some(chosen) = latest.and_then(|index| listed.into_iter().nth(index)) else {
            return Err(UsageError(format!(
                "no run in {}: `prpd run <PRP>` starts one",
                repo.display()
            ))
            .into());
        };
        chosen
    };
    let record = chosen.record?;
    let printed = Printed {
        run_id: &record.run_id,
        prp: &record.prp,
        state: record.state().to_string(),
        guardrail: record.guardrail.as_deref(),
        lines: &record.receipt,
        totals: record.receipt.totals(),
    };
    let mut stdout = std::io::stdout().lock();
    if args.json {
        serde_json::to_writer_pretty(&mut stdout, &printed)?;
        writeln!(stdout)?;
    } else {
        writeln!(
            stdout,
            "Receipt of run {} ({}, {})\n",
            printed.run_id,
            printed.prp.display(),
            printed.state
        )?;
        write!(stdout, "{}", record.receipt.markdown())?;
        if let State::Escalated { reason, .. } = record.state() {
            writeln!(stdout, "\nEscalated: {reason}")?;
        }
    }
    Ok(ExitCode::Success)
}
