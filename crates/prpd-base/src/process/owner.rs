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

use std::future::Future;

/// The variable that names a process's run.
pub const RUN_ID_VARIABLE: &str = "PRPD_RUN_ID";

/// A run, as the processes it starts see it.
#[derive(Debug, Clone)]
pub struct RunScope {
    pub run_id: String,
    /// Variables every process of the run gets (unless the process sets them itself).
    pub env: Vec<(String, String)>,
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
}
