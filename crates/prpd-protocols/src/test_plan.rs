//! Agent test plans (seed `001_…`, DESIGN §10): an agent may end its answer with a `TestPlan` in
//! JSON — flows, and cases with a type, a priority, preconditions and steps — and prpd reads it,
//! keeps it as files a human (or a test runner) can use, and holds the agent to it.
//!
//! Theory of operation. The plan is data an agent wrote, so every step distrusts it:
//!
//! 1. `extract.rs` finds the plan in the agent's final message, whatever surrounds it: prose,
//!    other code blocks, an echo of the prompt's example, a JSON object that is not a plan.
//!    Only the last [`MAX_PLAN_BYTES`] of the message are read.
//! 2. `normalise.rs` turns the JSON into the model of `model.rs` with the seed's rules: at
//!    least one case, the seed's six types and three priorities, defaults for what is missing
//!    or invalid (each one a warning naming the case and the value), a spec path that stays
//!    under `specs/`, at most [`MAX_CASES`] cases.
//! 3. `render.rs` writes one Markdown spec per case (a pure function; placeholders such as
//!    `{{PASSWORD}}` are kept as written, never filled), and `write.rs` writes the specs and
//!    `test-plan.json` atomically into a plan directory it empties first.
//! 4. `coverage.rs` is the rule the loop adds to RED's gate: every case must be matched by a
//!    failing test of RED's measured test run.
//!
//! The errors are the seed's, word for word ([`PlanError`]); they go into the agent's feedback
//! as they are, so that an agent that knows the seed's planner recognises them.

mod coverage;
mod extract;
mod model;
mod normalise;
mod render;
mod write;

pub use coverage::{HeldPlan, PlanCheck, PlannedCase, matches_test};
pub use extract::{MAX_PLAN_BYTES, extract_plan, find_plan, plan_window};
pub use model::{
    CaseType, FlowPlan, PlanAuth, PlanConfig, PlanGuardrails, Priority, StepPlan, TestCasePlan,
    TestPlan,
};
pub use normalise::{MAX_CASES, Normalised, normalise};
pub use render::{PROMPT_SECTION, markdown};
pub use write::{PLAN_DIR, PLAN_FILE, SPECS_DIR, WriteError, Written, write_plan};

/// Why an agent's answer gave no usable `TestPlan`. The messages are the seed's own (hence
/// capitalised, unlike prpd's other errors); the last variant is prpd's bound on a plan.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PlanError {
    /// The answer has a `"cases":` key but no complete JSON object around it.
    #[error("Failed to extract JSON TestPlan from planner output")]
    Extract,
    /// The JSON that holds the plan does not parse, or its `cases` is not an array.
    #[error("Failed to parse TestPlan JSON: {0}")]
    Parse(String),
    /// The plan has no case (or none that is an object).
    #[error("Planner Agent returned no test cases in TestPlan")]
    NoCases,
    /// More cases than prpd reads.
    #[error("TestPlan has {count} test cases; prpd reads at most {MAX_CASES}")]
    TooManyCases { count: usize },
}

/// The `TestPlan` of an agent's final message, normalised: `Ok(None)` when the message holds
/// none and names none (an agent that gives no plan is judged as if plans did not exist).
pub fn read_answer(answer: &str) -> Result<Option<Normalised>, PlanError> {
    match find_plan(answer)? {
        None => Ok(None),
        Some(object) => normalise(&object).map(Some),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The seed's messages, word for word.
    #[test]
    fn the_errors_are_the_seeds() {
        assert_eq!(
            PlanError::Extract.to_string(),
            "Failed to extract JSON TestPlan from planner output"
        );
        assert_eq!(
            PlanError::Parse("EOF while parsing".to_owned()).to_string(),
            "Failed to parse TestPlan JSON: EOF while parsing"
        );
        assert_eq!(
            PlanError::NoCases.to_string(),
            "Planner Agent returned no test cases in TestPlan"
        );
    }

    #[test]
    fn an_answer_reads_to_a_plan_nothing_or_the_seeds_error() {
        let answer = "Wrote the tests.\n```json\n{\"cases\": [{\"id\": \"ac-1\", \"name\": \
                      \"Multiplies\", \"type\": \"functional\", \"priority\": \"p0\"}]}\n```\n";
        let plan = read_answer(answer).expect("reads").expect("a plan");
        assert_eq!(plan.cases[0].id, "ac-1");
        assert_eq!(read_answer("Wrote the tests. {no plan}"), Ok(None));
        assert_eq!(read_answer("{\"cases\": []}"), Err(PlanError::NoCases));
        assert!(matches!(
            read_answer("```json\n{\"cases\": [\n```"),
            Err(PlanError::Parse(_))
        ));
    }
}
