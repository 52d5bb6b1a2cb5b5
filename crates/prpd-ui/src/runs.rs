//! What the dashboard knows of the repository's runs, read from the same files `prpd status`
//! reads: each run's sealed record (a record prpd cannot vouch for is listed as refused, never
//! shown as if it were true), the run's lock (a live holder drives it), and the daemon's queue.
//! It asks the daemon nothing, so the pages work whether or not a daemon runs.

use std::path::{Path, PathBuf};

use prpd_base::lock::{self, Holder};
use prpd_base::paths::SessionPaths;
use prpd_base::phase::Phase;
use prpd_run::machine::State;
use prpd_run::record::RunRecord;
use prpd_run::session;
use prpd_watch::queue::Queue;

/// Where a run stands, as a person sorts runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Standing {
    /// A PRP waiting in the daemon's queue; no run yet.
    Queued,
    /// A live prpd drives it.
    Running,
    /// Work is left and nothing drives it (stopped or killed; the daemon resumes it).
    Interrupted,
    /// It waits for a human.
    Escalated,
    Shipped,
    Aborted,
    /// Its record is not the one prpd sealed (edited, or unreadable).
    Refused,
}

impl Standing {
    /// The word on the page, also its CSS class and `data-state`.
    pub fn word(self) -> &'static str {
        match self {
            Standing::Queued => "queued",
            Standing::Running => "running",
            Standing::Interrupted => "interrupted",
            Standing::Escalated => "escalated",
            Standing::Shipped => "shipped",
            Standing::Aborted => "aborted",
            Standing::Refused => "refused",
        }
    }
}

/// One line of the runs page.
#[derive(Debug)]
pub struct Row {
    /// The run's id; `None` for a queued PRP.
    pub run_id: Option<String>,
    pub prp: PathBuf,
    pub standing: Standing,
    /// The phase it works in, or stopped in.
    pub phase: Option<Phase>,
    pub attempt: u32,
    /// When it started, or was queued (Unix seconds).
    pub since: u64,
    /// The known cost, and how many calls of unknown cost it leaves out.
    pub cost: Option<(f64, u32)>,
    /// Why the record is refused.
    pub refused: Option<String>,
}

/// The queued PRPs first (oldest first), then every run, newest first.
pub fn rows(repo: &Path) -> Vec<Row> {
    let session = SessionPaths::new(repo);
    let mut rows: Vec<Row> = match Queue::load(&session.queue()) {
        Ok(queue) => queue
            .waiting
            .into_iter()
            .filter(|queued| queued.run_id.is_none())
            .map(|queued| Row {
                run_id: None,
                prp: queued.prp,
                standing: Standing::Queued,
                phase: None,
                attempt: 0,
                since: queued.queued_at,
                cost: None,
                refused: None,
            })
            .collect(),
        Err(error) => {
            tracing::warn!(%error, "dashboard: the queue cannot be read");
            Vec::new()
        }
    };
    let listed = match session::status(repo) {
        Ok(listed) => listed,
        Err(error) => {
            tracing::warn!(%error, "dashboard: the runs cannot be listed");
            Vec::new()
        }
    };
    for run in listed.into_iter().rev() {
        rows.push(match run.record {
            Ok(record) => Row {
                standing: standing(&session, &record),
                phase: phase(&record),
                attempt: record.machine.qa_attempt(),
                since: record.started_at,
                cost: Some({
                    let totals = record.receipt.totals();
                    (totals.cost_usd, totals.calls_without_cost)
                }),
                prp: record.prp,
                refused: None,
                run_id: Some(run.run_id),
            },
            Err(error) => Row {
                prp: PathBuf::new(),
                standing: Standing::Refused,
                phase: None,
                attempt: 0,
                since: 0,
                cost: None,
                refused: Some(error.to_string()),
                run_id: Some(run.run_id),
            },
        });
    }
    rows
}

/// Where `record` stands: finished and escalated runs by their state, the others by whether a
/// live process holds their lock.
pub fn standing(session: &SessionPaths, record: &RunRecord) -> Standing {
    match record.state() {
        State::Shipped {} => Standing::Shipped,
        State::Aborted {} => Standing::Aborted,
        State::Escalated { .. } => Standing::Escalated,
        State::Red {}
        | State::Green {}
        | State::Refactor {}
        | State::Document {}
        | State::Qa {}
        | State::Ship {} => match lock::holder(&session.run(&record.run_id).lock()) {
            Ok(Holder::Process { .. }) => Standing::Running,
            Ok(Holder::Nobody) | Err(_) => Standing::Interrupted,
        },
    }
}

/// The phase `record` works in, or the one it escalated from.
pub fn phase(record: &RunRecord) -> Option<Phase> {
    match record.state() {
        State::Escalated { from, .. } => Some(*from),
        other => other.phase(),
    }
}

/// The cost as a person reads it: `$0.4210`, `$0.4210 + 2 calls of unknown cost`, `unknown`.
pub fn cost_text(cost: Option<(f64, u32)>) -> String {
    match cost {
        None => String::new(),
        Some((usd, unknown)) if unknown > 0 && usd == 0.0 => {
            format!(
                "unknown ({unknown} call{})",
                if unknown == 1 { "" } else { "s" }
            )
        }
        Some((usd, 0)) => format!("${usd:.4}"),
        Some((usd, unknown)) => format!(
            "${usd:.4} + {unknown} call{} of unknown cost",
            if unknown == 1 { "" } else { "s" }
        ),
    }
}

/// How long ago `since` was, roughly: `42 s`, `7 min`, `3 h`, `2 d`.
pub fn age(since: u64, now: u64) -> String {
    let seconds = now.saturating_sub(since);
    match seconds {
        0..60 => format!("{seconds} s"),
        60..3600 => format!("{} min", seconds / 60),
        3600..86_400 => format!("{} h", seconds / 3600),
        _ => format!("{} d", seconds / 86_400),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn costs_and_ages_read_as_a_person_reads_them() {
        assert_eq!(cost_text(Some((0.42, 0))), "$0.4200");
        assert_eq!(cost_text(Some((0.0, 2))), "unknown (2 calls)");
        assert_eq!(
            cost_text(Some((0.5, 1))),
            "$0.5000 + 1 call of unknown cost"
        );
        assert_eq!(cost_text(None), "");
        assert_eq!(age(100, 142), "42 s");
        assert_eq!(age(0, 7 * 60 + 3), "7 min");
        assert_eq!(age(0, 3 * 3600), "3 h");
        assert_eq!(age(0, 2 * 86_400 + 5), "2 d");
    }
}
