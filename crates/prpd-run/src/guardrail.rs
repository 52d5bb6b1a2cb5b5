//! Guardrails of a run (seed 001): limits on agent invocations and wall time, and the hourly
//! rate limit of agent calls (the budgets of tokens and cost are `budget.rs`'s). Pure: the
//! driver passes in the counts and the time.

use std::time::Duration;

use crate::config::Guardrails;
use crate::record::RunUsage;

/// One hour, the window of the rate limit.
const HOUR: u64 = 3600;

/// The guardrail the run has reached, named as `prpd.toml` names it with its limit, e.g.
/// `max_agent_invocations = 40`; `None` while every limit holds.
pub fn reached(limits: &Guardrails, usage: &RunUsage, active_seconds: u64) -> Option<String> {
    if usage.invocations >= limits.max_agent_invocations {
        return Some(format!(
            "max_agent_invocations = {} (the run made {} agent invocations)",
            limits.max_agent_invocations, usage.invocations
        ));
    }
    if active_seconds >= limits.max_wall_time.as_secs() {
        return Some(format!(
            "max_wall_time = \"{}\" (the run has been active for {})",
            humantime::format_duration(limits.max_wall_time),
            humantime::format_duration(Duration::from_secs(active_seconds))
        ));
    }
    None
}

/// How long to wait before the next agent call so that at most `max_calls_per_hour` calls start
/// in any hour; `None` when a call may start now.
pub fn rate_limit_wait(limits: &Guardrails, usage: &RunUsage, now: u64) -> Option<Duration> {
    let recent: Vec<u64> = usage
        .recent_calls
        .iter()
        .copied()
        .filter(|started| now.saturating_sub(*started) < HOUR)
        .collect();
    let allowed = usize::try_from(limits.max_calls_per_hour).unwrap_or(usize::MAX);
    if recent.len() < allowed {
        return None;
    }
    let oldest = recent.iter().min().copied().unwrap_or(now);
    Some(Duration::from_secs(
        (oldest + HOUR).saturating_sub(now).max(1),
    ))
}

/// The longest prpd waits for a usage limit's reset time; a later one is not trusted (it would
/// stall the run for longer than any provider's window) and `quota_wait` applies instead.
pub const MAX_RESET_WAIT: Duration = Duration::from_secs(6 * 3600);

/// How long to wait after a transient provider failure before the next call: until the
/// usage limit's reset time when the agent named one (and it lies within
/// [`MAX_RESET_WAIT`]), else `quota_wait` (`[breaker] quota_wait`).
pub fn quota_wait(quota_wait: Duration, reset_at: Option<u64>, now: u64) -> Duration {
    match reset_at {
        Some(reset) if reset > now && reset - now <= MAX_RESET_WAIT.as_secs() => {
            Duration::from_secs(reset - now + 1)
        }
        Some(_) | None => quota_wait,
    }
}

/// Records a call started at `now`, forgetting calls older than the rate-limit window.
pub fn record_call(usage: &mut RunUsage, now: u64) {
    usage
        .recent_calls
        .retain(|started| now.saturating_sub(*started) < HOUR);
    usage.recent_calls.push(now);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;

    fn limits() -> Guardrails {
        Guardrails {
            max_agent_invocations: 3,
            max_wall_time: Duration::from_secs(600),
            max_tokens: Some(1000),
            max_cost_usd: Some(1.0),
            max_cost_usd_per_day: None,
            max_tokens_per_day: None,
            max_calls_per_hour: 2,
        }
    }

    #[test]
    fn each_guardrail_is_named_when_reached() {
        let cases = [
            (
                RunUsage {
                    invocations: 3,
                    ..RunUsage::default()
                },
                0,
                Some("max_agent_invocations = 3"),
            ),
            (RunUsage::default(), 600, Some("max_wall_time = \"10m\"")),
            (
                RunUsage {
                    invocations: 2,
                    tokens: 999,
                    ..RunUsage::default()
                },
                599,
                None,
            ),
        ];
        for (usage, active, expected) in cases {
            let reached = reached(&limits(), &usage, active);
            match expected {
                Some(prefix) => assert!(
                    reached
                        .as_deref()
                        .is_some_and(|name| name.starts_with(prefix)),
                    "{reached:?} should start with {prefix}"
                ),
                None => assert_eq!(reached, None),
            }
        }
    }

    #[test]
    fn the_defaults_hold_for_a_new_run() {
        let defaults = Config::default().guardrails;
        assert_eq!(reached(&defaults, &RunUsage::default(), 0), None);
    }

    #[test]
    fn rate_limit_waits_for_the_oldest_call_to_leave_the_hour() {
        let mut usage = RunUsage::default();
        record_call(&mut usage, 100);
        assert_eq!(rate_limit_wait(&limits(), &usage, 200), None);
        record_call(&mut usage, 200);
        assert_eq!(
            rate_limit_wait(&limits(), &usage, 300),
            Some(Duration::from_secs(3400))
        );
        assert_eq!(rate_limit_wait(&limits(), &usage, 3700), None);
        record_call(&mut usage, 3700);
        assert_eq!(usage.recent_calls, vec![200, 3700]);
    }

    #[test]
    fn a_usage_limit_waits_for_its_reset_time_within_reason() {
        let wait = Duration::from_secs(300);
        assert_eq!(quota_wait(wait, None, 1000), wait);
        assert_eq!(
            quota_wait(wait, Some(1000 + 3600), 1000),
            Duration::from_secs(3601)
        );
        assert_eq!(
            quota_wait(wait, Some(500), 1000),
            wait,
            "a reset in the past"
        );
        assert_eq!(
            quota_wait(wait, Some(1000 + 7 * 3600), 1000),
            wait,
            "a reset too far away"
        );
    }
}
