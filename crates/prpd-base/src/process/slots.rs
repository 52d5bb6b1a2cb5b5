//! How many agents and checks run at once across all runs of a daemon. Several runs on a small
//! machine must not start six test suites and three agents together: each process that
//! [`super::run`] starts as an agent or as a measurement first takes a slot of its kind and
//! gives it back when it ends. Without [`limit`] (a foreground `prpd run`) nothing waits. The
//! wait for a slot is not part of the process's timeout.

use std::sync::{Arc, Mutex, OnceLock};

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// What a process is, for its slot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A coding agent's CLI.
    Agent,
    /// A test run or a QA check.
    Check,
}

/// The slots of each kind.
struct Slots {
    agents: Pool,
    checks: Pool,
}

/// A number of slots that can be changed while they are in use.
struct Pool {
    semaphore: Arc<Semaphore>,
    /// The slots the pool holds, taken or not.
    size: Mutex<usize>,
}

impl Pool {
    fn new() -> Pool {
        Pool {
            semaphore: Arc::new(Semaphore::new(0)),
            size: Mutex::new(0),
        }
    }

    /// Grows or shrinks the pool to `wanted`; slots in use when it shrinks are dropped at the
    /// next resize after they come back.
    fn resize(&self, wanted: usize) {
        let Ok(mut size) = self.size.lock() else {
            return;
        };
        if wanted >= *size {
            self.semaphore.add_permits(wanted - *size);
            *size = wanted;
        } else {
            *size -= self.semaphore.forget_permits(*size - wanted);
        }
    }

    async fn take(&self) -> Option<OwnedSemaphorePermit> {
        Arc::clone(&self.semaphore).acquire_owned().await.ok()
    }
}

static SLOTS: OnceLock<Slots> = OnceLock::new();

/// Sets how many agents and checks may run at once (the daemon's `[watch] max_agents` and
/// `max_checks`); a later call changes the limits.
pub fn limit(agents: usize, checks: usize) {
    let slots = SLOTS.get_or_init(|| Slots {
        agents: Pool::new(),
        checks: Pool::new(),
    });
    slots.agents.resize(agents.max(1));
    slots.checks.resize(checks.max(1));
}

/// Waits for a slot of `kind`, when limits are set; the slot is held until the returned value
/// is dropped.
pub async fn take(kind: Kind) -> Option<OwnedSemaphorePermit> {
    let slots = SLOTS.get()?;
    match kind {
        Kind::Agent => slots.agents.take().await,
        Kind::Check => slots.checks.take().await,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_pool_holds_as_many_slots_as_it_was_given_and_shrinks_as_they_come_back() {
        let pool = Pool::new();
        pool.resize(2);
        let first = pool.take().await.expect("first");
        let _second = pool.take().await.expect("second");
        let third = tokio::time::timeout(std::time::Duration::from_millis(50), pool.take()).await;
        assert!(third.is_err(), "a third waits");
        pool.resize(1);
        drop(first);
        pool.resize(1);
        assert_eq!(pool.semaphore.available_permits(), 0, "one slot, in use");
        pool.resize(3);
        assert_eq!(pool.semaphore.available_permits(), 2);
    }
}
