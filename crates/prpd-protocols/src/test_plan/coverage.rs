//! What a `TestPlan` adds to RED's gate: a plan is a promise about tests, so every case it names
//! must have a test in RED's measured test run that exists and fails. Pure: the plan's cases
//! and the failing tests' names in, the unmet conditions out; the loop measures the tests and
//! keeps the plan.
//!
//! The match rule. A case is matched by a failing test when the words of the case's `id`, or
//! else of its `name`, appear one after another among the words of the test's name. Words are
//! runs of letters and digits, lowercased, split where a lowercase letter meets an uppercase
//! one and where letters meet digits; everything else separates. So case `ac-1` matches
//! `ac_1_rejects_an_empty_title`, `AC-1: rejects an empty title`, `testAc1Rejects` and
//! `suite > AC 1 rejects`, but not `ac_12_…` nor `bac_1`; case name `Rejects an empty title`
//! matches `test_rejects_an_empty_title`. A passing or skipped test matches nothing: RED's
//! tests must fail.

use serde::{Deserialize, Serialize};

use super::model::TestCasePlan;

/// At most this many unmatched cases are named in one message.
const NAMED_IN_MESSAGE: usize = 10;

/// A case as the gate needs it: what identifies it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlannedCase {
    pub id: String,
    pub name: String,
}

impl From<&TestCasePlan> for PlannedCase {
    fn from(case: &TestCasePlan) -> PlannedCase {
        PlannedCase {
            id: case.id.clone(),
            name: case.name.clone(),
        }
    }
}

/// The plan RED's tests are held to, as a run keeps it: the cases of the last plan the agent
/// gave that prpd accepted, and why the plan of its latest answer was refused. A plan binds
/// until a later answer brings another: leaving it out of the next answer does not withdraw
/// it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct HeldPlan {
    /// Empty until the agent gives a plan prpd accepts.
    pub cases: Vec<PlannedCase>,
    /// The seed's error for the latest answer's plan, when it was refused.
    pub refused: Option<String>,
}

impl HeldPlan {
    /// The plan judged against the names of the tests that failed in RED's measured run.
    pub fn check(&self, failing_tests: &[&str]) -> PlanCheck {
        PlanCheck {
            refused: self.refused.clone(),
            cases: self.cases.len(),
            uncovered: self
                .cases
                .iter()
                .filter(|case| !failing_tests.iter().any(|test| matches_test(case, test)))
                .cloned()
                .collect(),
        }
    }
}

/// The plan's part of RED's gate for one iteration.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PlanCheck {
    /// Why the latest answer's plan was refused.
    pub refused: Option<String>,
    /// How many cases the held plan has (0: no plan, nothing to check).
    pub cases: usize,
    /// The cases no failing test matches, in the plan's order.
    pub uncovered: Vec<PlannedCase>,
}

impl PlanCheck {
    /// The unmet conditions, as sentences for the agent's feedback; empty when the plan holds
    /// (or there is none).
    pub fn shortfall(&self) -> Vec<String> {
        let mut reasons = Vec::new();
        if let Some(refused) = &self.refused {
            reasons.push(format!(
                "the TestPlan in your answer was refused: {refused}; correct it, or leave the \
                 plan out"
            ));
        }
        if !self.uncovered.is_empty() {
            let mut named: Vec<String> = self
                .uncovered
                .iter()
                .take(NAMED_IN_MESSAGE)
                .map(|case| {
                    if case.name == case.id {
                        format!("`{}`", short(&case.id))
                    } else {
                        format!("`{}` ({})", short(&case.id), short(&case.name))
                    }
                })
                .collect();
            if self.uncovered.len() > NAMED_IN_MESSAGE {
                named.push(format!(
                    "and {} more",
                    self.uncovered.len() - NAMED_IN_MESSAGE
                ));
            }
            reasons.push(format!(
                "{} of the TestPlan's {} case(s) have no failing test whose name holds the \
                 case's id or name: {}",
                self.uncovered.len(),
                self.cases,
                named.join(", ")
            ));
        }
        reasons
    }
}

/// Whether the test called `test_name` is the test of `case` (the rule of the module docs).
pub fn matches_test(case: &PlannedCase, test_name: &str) -> bool {
    let test = words(test_name);
    [&case.id, &case.name].iter().any(|label| {
        let label = words(label);
        !label.is_empty() && test.windows(label.len()).any(|window| window == label)
    })
}

/// The words of `text`: letter and digit runs, lowercased, split at lowercase-to-uppercase
/// and letter-digit boundaries.
fn words(text: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut current = String::new();
    let mut previous: Option<char> = None;
    for c in text.chars() {
        if !c.is_alphanumeric() {
            if !current.is_empty() {
                words.push(std::mem::take(&mut current));
            }
            previous = None;
            continue;
        }
        if let Some(before) = previous {
            let case_turn = before.is_lowercase() && c.is_uppercase();
            let kind_turn = before.is_numeric() != c.is_numeric();
            if (case_turn || kind_turn) && !current.is_empty() {
                words.push(std::mem::take(&mut current));
            }
        }
        current.extend(c.to_lowercase());
        previous = Some(c);
    }
    if !current.is_empty() {
        words.push(current);
    }
    words
}

/// `text` cut to 60 characters for a message.
fn short(text: &str) -> String {
    if text.chars().count() <= 60 {
        text.to_owned()
    } else {
        format!("{}…", text.chars().take(59).collect::<String>())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn case(id: &str, name: &str) -> PlannedCase {
        PlannedCase {
            id: id.to_owned(),
            name: name.to_owned(),
        }
    }

    /// The match rule: case id, case name, test name, whether they match.
    #[test]
    fn the_match_rule() {
        let rows = [
            ("ac-1", "Multiplies", "ac_1_rejects_an_empty_title", true),
            ("ac-1", "Multiplies", "AC-1: rejects an empty title", true),
            ("ac-1", "Multiplies", "testAc1Rejects", true),
            ("ac-1", "Multiplies", "suite > AC 1 rejects", true),
            (
                "AC_1",
                "Multiplies",
                "test/multiply.test.js > ac-1 works",
                true,
            ),
            ("ac-1", "Multiplies", "ac_12_rejects", false),
            ("ac-1", "Multiplies", "bac_1_rejects", false),
            ("ac-1", "Multiplies", "ac_rejects_1", false),
            (
                "x9",
                "Rejects an empty title",
                "test_rejects_an_empty_title",
                true,
            ),
            (
                "x9",
                "Rejects an empty title",
                "test_rejects_an_title",
                false,
            ),
            ("x9", "Rejects an empty title", "RejectsAnEmptyTitle", true),
            (
                "login-ok",
                "Connexion réussie",
                "connexion_réussie_avec_mot_de_passe",
                true,
            ),
            ("!!", "??", "anything", false),
        ];
        for (id, name, test, expected) in rows {
            assert_eq!(
                matches_test(&case(id, name), test),
                expected,
                "case {id} / {name} against {test}"
            );
        }
    }

    #[test]
    fn words_split_at_separators_case_and_digits() {
        assert_eq!(
            words("testAc1Rejects_an-EMPTY title2x"),
            [
                "test", "ac", "1", "rejects", "an", "empty", "title", "2", "x"
            ]
        );
        assert!(words("--__  ").is_empty());
    }

    #[test]
    fn a_held_plan_against_the_failing_tests() {
        let held = HeldPlan {
            cases: vec![
                case("ac-1", "Multiplies"),
                case("ac-2", "Divides by zero"),
                case("edge", "edge"),
            ],
            refused: None,
        };
        let check = held.check(&["AC-1: multiplies two numbers", "unrelated"]);
        assert_eq!(check.cases, 3);
        assert_eq!(
            check.uncovered,
            [case("ac-2", "Divides by zero"), case("edge", "edge")]
        );
        assert_eq!(
            check.shortfall(),
            [
                "2 of the TestPlan's 3 case(s) have no failing test whose name holds the case's \
              id or name: `ac-2` (Divides by zero), `edge`"
            ]
        );
        let all = held.check(&["ac 1", "ac_2 x", "the edge case"]);
        assert!(all.shortfall().is_empty(), "{all:?}");
    }

    #[test]
    fn no_plan_asks_nothing_and_a_refused_one_says_why() {
        assert!(HeldPlan::default().check(&[]).shortfall().is_empty());
        let refused = HeldPlan {
            cases: vec![],
            refused: Some("Planner Agent returned no test cases in TestPlan".to_owned()),
        };
        assert_eq!(
            refused.check(&["a"]).shortfall(),
            [
                "the TestPlan in your answer was refused: Planner Agent returned no test cases in \
              TestPlan; correct it, or leave the plan out"
            ]
        );
    }

    #[test]
    fn a_long_list_is_cut() {
        let held = HeldPlan {
            cases: (1..=13)
                .map(|n| case(&format!("c{n}"), &format!("c{n}")))
                .collect(),
            refused: None,
        };
        let reasons = held.check(&[]).shortfall();
        assert_eq!(reasons.len(), 1);
        assert!(
            reasons[0].starts_with("13 of the TestPlan's 13 case(s)"),
            "{reasons:?}"
        );
        assert!(reasons[0].ends_with("`c10`, and 3 more"), "{reasons:?}");
    }
}
