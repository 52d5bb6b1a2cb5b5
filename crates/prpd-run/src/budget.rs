//! Budgets: how much a run, and a repository in one day, may spend on agents, in dollars
//! (`max_cost_usd`, `max_cost_usd_per_day`) and in tokens (`max_tokens`, `max_tokens_per_day`).
//! Pure: the driver passes in what was spent and the agent's streamed usage.
//!
//! A budget is checked before each agent call and, while the agent runs, against the usage its
//! CLI streams (`agent/stream.rs`): the call is stopped within one usage report of crossing a
//! limit, not after its turn. A human raises the budget that stopped a run with
//! `prpd resume --budget +N` (dollars for a cost budget, tokens for a token budget); the raise
//! is kept in the run's record, and a daily raise holds for the day it was given.
//!
//! Usage a CLI does not report is unknown: it cannot be counted, the receipt says which calls
//! it leaves out, and no figure stands in for it.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::config::Guardrails;

/// Seconds in a day: days are UTC days, numbered from the Unix epoch.
const DAY: u64 = 24 * 3600;

/// The UTC day of `unix_seconds`.
pub fn day_of(unix_seconds: u64) -> u64 {
    unix_seconds / DAY
}

/// One of the four budgets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Budget {
    RunCost,
    RunTokens,
    DayCost,
    DayTokens,
}

impl Budget {
    /// Its key in `[guardrails]` of prpd.toml.
    pub fn key(self) -> &'static str {
        match self {
            Budget::RunCost => "max_cost_usd",
            Budget::RunTokens => "max_tokens",
            Budget::DayCost => "max_cost_usd_per_day",
            Budget::DayTokens => "max_tokens_per_day",
        }
    }

    /// Whether it counts dollars (else tokens).
    pub fn is_cost(self) -> bool {
        matches!(self, Budget::RunCost | Budget::DayCost)
    }

    fn is_daily(self) -> bool {
        matches!(self, Budget::DayCost | Budget::DayTokens)
    }

    fn scope(self) -> &'static str {
        if self.is_daily() {
            "for this repository today (UTC, every run)"
        } else {
            "for this run"
        }
    }

    /// `$1.2345` or `12345 tokens`.
    fn amount(self, value: f64) -> String {
        if self.is_cost() {
            format!("${value:.4}")
        } else {
            format!("{value:.0} tokens")
        }
    }
}

/// A human's raise of a budget (`prpd resume --budget +N`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Raise {
    pub budget: Budget,
    /// Dollars or tokens, as the budget counts.
    pub amount: f64,
    /// The UTC day it was given: a daily budget's raise holds for that day only.
    pub day: u64,
}

/// What was spent before a call, for one budget.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Spent {
    pub run_cost: f64,
    pub run_tokens: u64,
    /// Every run of the repository today, this one included.
    pub day_cost: f64,
    pub day_tokens: u64,
}

/// One budget that applies to a call: its limit with the raises, and what was spent before.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Allowance {
    pub budget: Budget,
    pub limit: f64,
    pub spent: f64,
}

/// The budgets that apply on `day`, with what `spent` holds; budgets prpd.toml leaves unset
/// are not among them.
pub fn allowances(
    limits: &Guardrails,
    raises: &[Raise],
    spent: &Spent,
    day: u64,
) -> Vec<Allowance> {
    #[expect(
        clippy::cast_precision_loss,
        reason = "token counts stay far below 2^52"
    )]
    let tokens = |count: u64| count as f64;
    [
        (Budget::RunCost, limits.max_cost_usd, spent.run_cost),
        (
            Budget::RunTokens,
            limits.max_tokens.map(tokens),
            tokens(spent.run_tokens),
        ),
        (Budget::DayCost, limits.max_cost_usd_per_day, spent.day_cost),
        (
            Budget::DayTokens,
            limits.max_tokens_per_day.map(tokens),
            tokens(spent.day_tokens),
        ),
    ]
    .into_iter()
    .filter_map(|(budget, limit, spent)| {
        let lifted_by: f64 = raises
            .iter()
            .filter(|raise| raise.budget == budget && (!budget.is_daily() || raise.day == day))
            .map(|raise| raise.amount)
            .sum();
        Some(Allowance {
            budget,
            limit: limit? + lifted_by,
            spent,
        })
    })
    .collect()
}

/// A budget a run has used up: which, its limit and how far past it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Crossing {
    pub budget: Budget,
    pub limit: f64,
    /// Spent with the call that crossed it.
    pub spent: f64,
    /// Whether a running call was stopped for it (`false`: it was used up before a call).
    pub mid_call: bool,
}

/// The first budget that `call_cost` (when known) and `call_tokens` take to or past its limit;
/// `None` while every budget holds. Without a call (zeros), a budget already used up.
pub fn crossed(
    allowances: &[Allowance],
    call_cost: Option<f64>,
    call_tokens: u64,
    mid_call: bool,
) -> Option<Crossing> {
    #[expect(
        clippy::cast_precision_loss,
        reason = "token counts stay far below 2^52"
    )]
    let call_tokens = call_tokens as f64;
    allowances.iter().find_map(|allowance| {
        let call = if allowance.budget.is_cost() {
            call_cost?
        } else {
            call_tokens
        };
        let spent = allowance.spent + call;
        let used_up = if mid_call {
            spent > allowance.limit
        } else {
            spent >= allowance.limit
        };
        used_up.then_some(Crossing {
            budget: allowance.budget,
            limit: allowance.limit,
            spent,
            mid_call,
        })
    })
}

impl fmt::Display for Crossing {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        let budget = self.budget;
        let limit = if budget.is_cost() {
            format!("{}", self.limit)
        } else {
            format!("{:.0}", self.limit)
        };
        write!(
            formatter,
            "{} = {limit} {} ({} spent, {} over{}; `prpd resume --budget +N` raises it by N {})",
            budget.key(),
            budget.scope(),
            budget.amount(self.spent),
            budget.amount((self.spent - self.limit).max(0.0)),
            if self.mid_call {
                "; the agent was stopped mid-call"
            } else {
                ""
            },
            if budget.is_cost() {
                "dollars"
            } else {
                "tokens"
            }
        )
    }
}

/// `+N` or `N` of `prpd resume --budget`, a positive amount.
pub fn parse_raise(text: &str) -> Result<f64, String> {
    let number = text.trim().trim_start_matches('+').trim_start_matches('$');
    match number.parse::<f64>() {
        Ok(amount) if amount.is_finite() && amount > 0.0 => Ok(amount),
        _ => Err(format!(
            "--budget {text}: expected a positive amount such as +5 (dollars for a cost budget, tokens for a token budget)"
        )),
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    fn limits() -> Guardrails {
        Guardrails {
            max_agent_invocations: 40,
            max_wall_time: Duration::from_secs(3600),
            max_tokens: Some(10_000),
            max_cost_usd: Some(1.0),
            max_cost_usd_per_day: Some(5.0),
            max_tokens_per_day: None,
            max_calls_per_hour: 100,
        }
    }

    #[test]
    fn a_call_crosses_the_first_budget_its_streamed_usage_takes_past_the_limit() {
        let spent = Spent {
            run_cost: 0.9,
            run_tokens: 2000,
            day_cost: 4.0,
            day_tokens: 0,
        };
        let allowances = allowances(&limits(), &[], &spent, 7);
        assert_eq!(
            allowances.len(),
            3,
            "the unset daily token budget is not one"
        );
        assert_eq!(crossed(&allowances, Some(0.05), 100, true), None);
        let crossing = crossed(&allowances, Some(0.15), 100, true).expect("crossed");
        assert_eq!(crossing.budget, Budget::RunCost);
        assert!((crossing.spent - 1.05).abs() < 1e-9);
        let text = crossing.to_string();
        assert!(
            text.starts_with("max_cost_usd = 1 for this run ($1.0500 spent, $0.0500 over; the agent was stopped mid-call; `prpd resume --budget +N` raises it by N dollars)"),
            "{text}"
        );
        let tokens = crossed(&allowances, None, 8001, true).expect("tokens");
        assert_eq!(
            tokens.budget,
            Budget::RunTokens,
            "an unknown cost crosses no cost budget"
        );
    }

    #[test]
    fn before_a_call_a_budget_used_up_exactly_stops_the_run() {
        let spent = Spent {
            day_cost: 5.0,
            ..Spent::default()
        };
        let allowances = allowances(&limits(), &[], &spent, 7);
        let crossing = crossed(&allowances, Some(0.0), 0, false).expect("used up");
        assert_eq!(crossing.budget, Budget::DayCost);
        assert!(crossing.to_string().contains("for this repository today"));
    }

    #[test]
    fn a_raise_lifts_its_budget_and_a_daily_raise_holds_for_its_day() {
        let spent = Spent {
            run_cost: 1.2,
            day_cost: 5.5,
            ..Spent::default()
        };
        let raises = [
            Raise {
                budget: Budget::RunCost,
                amount: 1.0,
                day: 3,
            },
            Raise {
                budget: Budget::DayCost,
                amount: 2.0,
                day: 7,
            },
        ];
        assert_eq!(
            crossed(
                &allowances(&limits(), &raises, &spent, 7),
                Some(0.0),
                0,
                false
            ),
            None
        );
        let next_day = crossed(
            &allowances(&limits(), &raises, &spent, 8),
            Some(0.0),
            0,
            false,
        );
        assert_eq!(
            next_day.map(|crossing| crossing.budget),
            Some(Budget::DayCost)
        );
    }

    #[test]
    fn a_raise_is_a_positive_amount() {
        assert_eq!(parse_raise("+5"), Ok(5.0));
        assert_eq!(parse_raise("2.5"), Ok(2.5));
        assert_eq!(parse_raise("+$3"), Ok(3.0));
        assert!(parse_raise("-1").is_err());
        assert!(parse_raise("lots").is_err());
        assert_eq!(day_of(86_400 * 3 + 5), 3);
    }
}
