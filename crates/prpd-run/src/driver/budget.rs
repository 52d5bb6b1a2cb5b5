//! The driver's side of the budgets (`budget.rs`): what the run and the repository spent today,
//! the budgets of the next agent call, and the stop of a run whose budget is used up, before a
//! call or while it ran. It stands apart so that the iteration reads as steps and the counting
//! of money lives with the receipt's.

use crate::agent::CallBudget;
use crate::budget::{self, Crossing, Spent};
use crate::machine::Event;
use crate::record::RunRecord;

use super::{Driver, unix_now};

impl Driver {
    /// The budgets the next agent call may not cross, with what was spent before it.
    pub(super) fn call_budget(&self) -> CallBudget {
        let day = budget::day_of(unix_now());
        CallBudget {
            allowances: budget::allowances(
                &self.context.config.guardrails,
                &self.record.budget_raises,
                &self.spent(day),
                day,
            ),
            prices: self.context.config.prices.clone(),
        }
    }

    /// A budget the run has used up before its next call, as the event that stops it.
    pub(super) fn budget_used_up(&mut self) -> Option<Event> {
        let crossing = budget::crossed(&self.call_budget().allowances, Some(0.0), 0, false)?;
        Some(self.stopped_by_budget(crossing))
    }

    /// Records that `crossing` stops the run, and the event that escalates it.
    pub(super) fn stopped_by_budget(&mut self, crossing: Crossing) -> Event {
        let name = crossing.to_string();
        self.record.guardrail = Some(name.clone());
        self.record.budget_stop = Some(crossing.budget);
        Event::GuardrailReached { name }
    }

    /// What this run spent, and what every run of the repository spent on `day`: the receipts
    /// of the others as their records hold them now, and this run's own. The other records are
    /// read only when a daily budget is set.
    fn spent(&self, day: u64) -> Spent {
        let mut spent = Spent {
            run_cost: self.record.usage.cost_usd,
            run_tokens: self.record.usage.tokens,
            ..Spent::default()
        };
        let limits = &self.context.config.guardrails;
        if limits.max_cost_usd_per_day.is_none() && limits.max_tokens_per_day.is_none() {
            return spent;
        }
        let others = self
            .context
            .session
            .run_ids()
            .unwrap_or_default()
            .into_iter()
            .filter(|run_id| *run_id != self.record.run_id)
            .filter_map(|run_id| {
                RunRecord::load(&self.context.session.run(&run_id).record())
                    .ok()
                    .flatten()
            });
        let mut add = |receipt: &crate::receipt::Receipt| {
            for line in &receipt.lines {
                if budget::day_of(line.started_at) == day {
                    spent.day_cost += line.cost_usd.unwrap_or(0.0);
                    spent.day_tokens += line.billed_tokens();
                }
            }
        };
        for record in others {
            add(&record.receipt);
        }
        add(&self.record.receipt);
        spent
    }
}
