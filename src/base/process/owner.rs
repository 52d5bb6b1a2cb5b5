//! Which run a process belongs to. The daemon drives several runs in one prpd, so "every
//! process that descends from prpd" is no longer one run's: a run that stops what its agent
//! left running must not stop another run's agent or test suite. Each run's future is scoped
//! with its id ([`scope`]); [`super::run`] gives every process started inside the scope the
//! variable `PRPD_RUN_ID=<run>` (agents already had it), which everything the process starts
//! inherits, and [`super::stop_leftovers`] of a run stops only what carries its id.
//!
//! The id lives in a tokio task-local: work that spawns a task of its own (the QA runner's
//! parallel checks) takes the id along with [`carried`].

use std::future::Future;

/// The variable that names a process's run.
pub const RUN_ID_VARIABLE: &str = "PRPD_RUN_ID";

tokio::task_local! {
    static RUN: String;
}

/// Runs `work` as run `run_id`'s: the processes it starts carry the id.
pub async fn scope<F: Future>(run_id: String, work: F) -> F::Output {
    RUN.scope(run_id, work).await
}

/// The run the current task works for, if any.
pub fn current() -> Option<String> {
    RUN.try_with(Clone::clone).ok()
}

/// `work` as the current task's run's, for a task spawned apart from it.
pub fn carried<F: Future>(work: F) -> impl Future<Output = F::Output> {
    let run = current();
    async move {
        match run {
            Some(run_id) => RUN.scope(run_id, work).await,
            None => work.await,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_scope_names_its_run_and_a_spawned_task_keeps_it_when_carried() {
        assert_eq!(current(), None);
        scope("run-7".to_owned(), async {
            assert_eq!(current().as_deref(), Some("run-7"));
            let lost = tokio::spawn(async { current() }).await.expect("join");
            assert_eq!(lost, None, "a plain spawn loses the run");
            let kept = tokio::spawn(carried(async { current() }))
                .await
                .expect("join");
            assert_eq!(kept.as_deref(), Some("run-7"));
        })
        .await;
    }
}
