//! A human's raise of the budget that stopped a run (`prpd resume --budget +N`): checked against
//! the run's record, where no agent can write, and kept there.

use crate::record::RunRecord;

use super::SessionError;

/// Raises the budget that stopped `record` by `amount` (dollars or tokens, as it counts), for
/// today when it is a daily one: a human's decision, kept in the record.
pub(super) fn raise_budget(record: &mut RunRecord, amount: f64) -> Result<(), SessionError> {
    let stopped_by = budget_to_raise(record)?;
    record.budget_raises.push(crate::budget::Raise {
        budget: stopped_by,
        amount,
        day: crate::budget::day_of(crate::driver::unix_now()),
    });
    record.budget_stop = None;
    tracing::info!(run_id = %record.run_id, budget = stopped_by.key(), amount, "budget raised by a human");
    Ok(())
}

/// The budget `prpd resume --budget` would raise: the one that stopped `record`, which waits
/// for a human; else why there is none.
pub fn budget_to_raise(record: &RunRecord) -> Result<crate::budget::Budget, SessionError> {
    record
        .budget_stop
        .filter(|_| record.awaits_human())
        .ok_or_else(|| SessionError::NotStoppedByBudget {
            run_id: record.run_id.clone(),
        })
}
