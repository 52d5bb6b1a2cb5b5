//! Which run a process belongs to. The daemon drives several runs in one prpd, so "every
//! process that descends from prpd" is no longer one run's: a run that stops what its agent
//! left running must not stop another run's agent or test suite. Each run's future is scoped
//! with its id ([`scope`]); [`super::run`] gives every process started inside the scope the
//! variable `PRPD_RUN_ID=<run>` (agents already had it), which everything the process starts
//! inherits, and [`super::stop_leftovers`] of a run stops only what carries its id. The scope
//! also carries the variables every process of the run gets (`CARGO_TARGET_DIR` of a Rust
//! project in a worktree), which the process environment of prpd itself cannot hold for
//! several runs at once.
//!
//! The id lives in a tokio task-local: work that spawns a task of its own (the QA runner's
//! parallel checks) takes the id along with [`carried`].
//!
//! The scope also keeps the run's [`ProcessClock`]: how long the run's agents and measurements
//! kept it waiting, which is what tells prpd's own time in an iteration from theirs.

use std::future::Future;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

/// The variable that names a process's run.
pub const RUN_ID_VARIABLE: &str = "PRPD_RUN_ID";

/// A run, as the processes it starts see it.
#[derive(Debug, Clone)]
pub struct RunScope {
    pub run_id: String,
    /// Variables every process of the run gets (unless the process sets them itself).
    pub env: Vec<(String, String)>,
    /// How long the run's agents and measurements have run.
    pub clock: ProcessClock,
}

/// The wall time during which at least one of a run's agents or measurements ran: parallel
/// checks count once, and the time between them (prpd's own) not at all.
#[derive(Debug, Clone, Default)]
pub struct ProcessClock(Arc<Mutex<Busy>>);

#[derive(Debug, Default)]
struct Busy {
    /// How many processes were started in all.
    started: u64,
    /// `started` when a look for leftovers last found none.
    clean_at: Option<u64>,
    running: u32,
    /// When `running` last went from 0 to 1.
    since: Option<Instant>,
    /// The closed stretches of time with something running.
    total: Duration,
}

impl ProcessClock {
    /// The time counted so far, the stretch still running included.
    pub fn elapsed(&self) -> Duration {
        let busy = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        busy.total + busy.since.map_or(Duration::ZERO, |since| since.elapsed())
    }

    /// How many processes the run has started.
    pub fn started(&self) -> u64 {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .started
    }

    /// Whether a look for leftovers found none and the run has started no process since:
    /// then none can have appeared.
    pub(super) fn clean(&self) -> bool {
        let busy = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        busy.clean_at == Some(busy.started)
    }

    /// Records a look for leftovers that began when `started` processes had been started and
    /// found `none` or some.
    pub(super) fn swept(&self, started: u64, none: bool) {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clean_at = none.then_some(started);
    }

    /// Counts a process started now; an agent or a measurement (`work`) is counted as running
    /// until the returned guard is dropped.
    pub fn start(&self, work: bool) -> Running {
        let mut busy = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        busy.started += 1;
        if work {
            if busy.running == 0 {
                busy.since = Some(Instant::now());
            }
            busy.running += 1;
        }
        Running {
            clock: self.clone(),
            work,
        }
    }
}

/// A process of the run that is running: see [`ProcessClock::start`].
#[derive(Debug)]
pub struct Running {
    clock: ProcessClock,
    work: bool,
}

impl Drop for Running {
    fn drop(&mut self) {
        if !self.work {
            return;
        }
        let mut busy = self.clock.0.lock().unwrap_or_else(PoisonError::into_inner);
        busy.running -= 1;
        if busy.running == 0
            && let Some(since) = busy.since.take()
        {
            busy.total += since.elapsed();
        }
    }
}

tokio::task_local! {
    static RUN: RunScope;
}

/// Runs `work` as `run`'s: the processes it starts carry its id and variables.
pub async fn scope<F: Future>(run: RunScope, work: F) -> F::Output {
    RUN.scope(run, work).await
}

/// The run the current task works for, if any.
pub fn current() -> Option<RunScope> {
    RUN.try_with(Clone::clone).ok()
}

/// The process clock of the run the current task works for, if any.
pub fn clock() -> Option<ProcessClock> {
    RUN.try_with(|run| run.clock.clone()).ok()
}

/// `work` as the current task's run's, for a task spawned apart from it.
pub fn carried<F: Future>(work: F) -> impl Future<Output = F::Output> {
    let run = current();
    async move {
        match run {
            Some(run) => RUN.scope(run, work).await,
            None => work.await,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_scope_names_its_run_and_a_spawned_task_keeps_it_when_carried() {
        let id = || current().map(|run| run.run_id);
        assert_eq!(id(), None);
        let run = RunScope {
            run_id: "run-7".to_owned(),
            env: Vec::new(),
            clock: ProcessClock::default(),
        };
        scope(run, async {
            assert_eq!(id().as_deref(), Some("run-7"));
            let lost = tokio::spawn(async { current().map(|run| run.run_id) })
                .await
                .expect("join");
            assert_eq!(lost, None, "a plain spawn loses the run");
            let kept = tokio::spawn(carried(async { current().map(|run| run.run_id) }))
                .await
                .expect("join");
            assert_eq!(kept.as_deref(), Some("run-7"));
        })
        .await;
    }

    #[test]
    fn a_clean_look_for_leftovers_holds_until_the_run_starts_a_process() {
        let clock = ProcessClock::default();
        assert!(!clock.clean(), "no look yet");
        clock.swept(clock.started(), true);
        assert!(clock.clean());
        drop(clock.start(false));
        assert!(!clock.clean(), "a process started since");
        clock.swept(clock.started(), false);
        assert!(!clock.clean(), "the last look found some");
    }

    #[test]
    fn the_clock_counts_overlapping_processes_once_and_the_time_between_them_not_at_all() {
        let clock = ProcessClock::default();
        let nap = Duration::from_millis(30);
        {
            let _first = clock.start(true);
            std::thread::sleep(nap);
            let _second = clock.start(true);
            let _helper = clock.start(false);
            std::thread::sleep(nap);
        }
        assert_eq!(clock.started(), 3);
        let after_overlap = clock.elapsed();
        assert!(after_overlap >= 2 * nap, "{after_overlap:?}");
        std::thread::sleep(4 * nap);
        assert_eq!(clock.elapsed(), after_overlap, "idle time is not counted");
        let _helper = clock.start(false);
        std::thread::sleep(nap);
        assert_eq!(
            clock.elapsed(),
            after_overlap,
            "a helper of prpd's is prpd's time"
        );
        let _third = clock.start(true);
        std::thread::sleep(nap);
        assert!(
            clock.elapsed() >= after_overlap + nap,
            "a running stretch counts as it goes"
        );
    }
}
