//! When the daemon gives an open breaker its probe. A run escalated because a phase's breaker
//! opened gets one probe iteration once `[breaker] cooldown` has passed since the breaker
//! opened (the spinning may have been a passing outage: a rate limit, a flaky service). Every
//! other escalation (a guardrail, a third REJECT, a fatal agent error, a failed SHIP) waits for
//! a human. Pure: the record says when the breaker opened.

use std::time::Duration;

use prpd_run::breaker::BreakerState;
use prpd_run::machine::{EscalationReason, State};
use prpd_run::record::RunRecord;

/// When (seconds since the Unix epoch) the cooldown of `record`'s open breaker ends; `None`
/// when the run does not wait for one.
pub fn ends_at(record: &RunRecord, cooldown: Duration) -> Option<u64> {
    if !record.awaits_human() {
        return None;
    }
    let State::Escalated {
        from,
        reason: EscalationReason::BreakerOpen { .. },
    } = record.state()
    else {
        return None;
    };
    let breaker = record.breakers.get(from)?;
    let opened = breaker
        .history
        .iter()
        .rev()
        .find(|transition| transition.to == BreakerState::Open)?;
    Some(opened.at.saturating_add(cooldown.as_secs()))
}
