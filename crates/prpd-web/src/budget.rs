//! The guardrails of one planning run (seed `001_…`: `maxAgentTurnsPerRun`,
//! `maxSnapshotsPerRun`, `maxTokenPerRun`): counters that refuse the step that would go past a
//! limit. A refused step ends the phase; the hit, with its count, goes into `plan-summary.json`
//! and the command exits 1 naming it.
//!
//! What is counted: a turn is one tool call of an agent (`prpd mcp`'s planner tools), a
//! snapshot is one page read (screenshot, accessibility tree, elements), and tokens are what
//! prpd *sent* to the planner (tool results, the planning prompt) and what the planner answered,
//! estimated at four bytes a token: prpd cannot see an MCP client's own bill, so this is the
//! part of it prpd causes.

use serde::{Deserialize, Serialize};

use prpd_protocols::test_plan::PlanGuardrails;

/// A guardrail that stopped a phase.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, thiserror::Error)]
#[error("guardrail {guardrail} hit: {count} of at most {limit} {unit}")]
pub struct GuardrailHit {
    /// The seed's name: `maxAgentTurnsPerRun`, `maxSnapshotsPerRun` or `maxTokenPerRun`.
    pub guardrail: String,
    pub limit: u64,
    /// The count when it was refused (the refused step included).
    pub count: u64,
    #[serde(skip)]
    unit: &'static str,
}

/// The counters of one run.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Budget {
    #[serde(skip)]
    limits: PlanGuardrails,
    pub agent_turns: u64,
    pub snapshots: u64,
    pub tokens: u64,
    /// The first hit, once there was one.
    pub hit: Option<GuardrailHit>,
}

impl Budget {
    pub fn new(limits: PlanGuardrails) -> Budget {
        Budget {
            limits,
            ..Budget::default()
        }
    }

    /// One more agent tool call.
    pub fn take_turn(&mut self) -> Result<(), GuardrailHit> {
        self.agent_turns += 1;
        let limit = self.limits.max_agent_turns_per_run.map(u64::from);
        self.check(
            "maxAgentTurnsPerRun",
            "agent turns",
            limit,
            self.agent_turns,
        )
    }

    /// One more page snapshot.
    pub fn take_snapshot(&mut self) -> Result<(), GuardrailHit> {
        self.snapshots += 1;
        let limit = self.limits.max_snapshots_per_run.map(u64::from);
        self.check("maxSnapshotsPerRun", "snapshots", limit, self.snapshots)
    }

    /// `text` sent to or received from the planner.
    pub fn spend_tokens(&mut self, text: &str) -> Result<(), GuardrailHit> {
        self.spend(estimate_tokens(text))
    }

    /// `tokens` the planner used (as its CLI reported them).
    pub fn spend(&mut self, tokens: u64) -> Result<(), GuardrailHit> {
        self.tokens += tokens;
        let limit = self.limits.max_token_per_run;
        self.check("maxTokenPerRun", "tokens", limit, self.tokens)
    }

    fn check(
        &mut self,
        guardrail: &str,
        unit: &'static str,
        limit: Option<u64>,
        count: u64,
    ) -> Result<(), GuardrailHit> {
        match limit {
            Some(limit) if count > limit => {
                let hit = GuardrailHit {
                    guardrail: guardrail.to_owned(),
                    limit,
                    count,
                    unit,
                };
                self.hit.get_or_insert_with(|| hit.clone());
                Err(hit)
            }
            _ => Ok(()),
        }
    }
}

/// Tokens of `text`, at four bytes a token (rounded up).
pub fn estimate_tokens(text: &str) -> u64 {
    (text.len() as u64).div_ceil(4)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_step_past_a_limit_is_refused_and_the_first_hit_kept() {
        let mut budget = Budget::new(PlanGuardrails {
            max_snapshots_per_run: Some(2),
            max_token_per_run: Some(3),
            ..PlanGuardrails::default()
        });
        assert!(budget.take_snapshot().is_ok());
        assert!(budget.take_snapshot().is_ok());
        let hit = budget.take_snapshot().expect_err("third");
        assert_eq!(
            (hit.guardrail.as_str(), hit.limit, hit.count),
            ("maxSnapshotsPerRun", 2, 3)
        );
        assert_eq!(
            hit.to_string(),
            "guardrail maxSnapshotsPerRun hit: 3 of at most 2 snapshots"
        );
        assert!(budget.spend_tokens("twelve bytes").is_ok(), "3 tokens");
        assert!(budget.spend_tokens("x").is_err());
        assert_eq!(
            budget.hit.as_ref().map(|hit| hit.guardrail.as_str()),
            Some("maxSnapshotsPerRun")
        );
        for _ in 0..100 {
            assert!(budget.take_turn().is_ok(), "no turn limit");
        }
    }
}
