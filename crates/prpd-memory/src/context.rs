//! The memory context of one QA: the answers to the four questions (one per changed file for
//! the fourth) and the warnings about those that got none. It is what the QA report's "Memory
//! Context" table, the QA status block's `MEMORY_CONTEXT` counts and the prompts' recalled
//! failures are made from.

use serde::Serialize;

use crate::finding::Finding;
use crate::query::{Capability, Question};

/// One question and what it found.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Answer {
    pub capability: Capability,
    /// The text or the path asked about.
    pub subject: String,
    pub findings: Vec<Finding>,
}

/// The answers of one QA, and why some questions got none.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct MemoryContext {
    /// The questions that were answered (with no finding, possibly), in the order asked.
    pub answers: Vec<Answer>,
    /// One sentence per question that was not answered or not asked.
    pub warnings: Vec<String>,
}

impl MemoryContext {
    /// Adds the answer to `question`.
    pub fn answered(&mut self, question: &Question, findings: Vec<Finding>) {
        self.answers.push(Answer {
            capability: question.capability(),
            subject: question.subject().to_owned(),
            findings,
        });
    }

    /// How many of the four capabilities were asked and answered (the status block's
    /// `QUERIES_EXECUTED`; the file history counts once, however many files it covered).
    pub fn queries_executed(&self) -> usize {
        Capability::ALL
            .into_iter()
            .filter(|capability| {
                self.answers
                    .iter()
                    .any(|answer| answer.capability == *capability)
            })
            .count()
    }

    /// The findings of `capability`, in the order found.
    pub fn findings(&self, capability: Capability) -> impl Iterator<Item = &Finding> {
        self.answers
            .iter()
            .filter(move |answer| answer.capability == capability)
            .flat_map(|answer| answer.findings.iter())
    }

    /// How many findings `capability` gave; for [`Capability::File`], how many files have a
    /// history (the seed's "{count} files").
    pub fn count(&self, capability: Capability) -> usize {
        match capability {
            Capability::File => self
                .answers
                .iter()
                .filter(|answer| answer.capability == capability && !answer.findings.is_empty())
                .count(),
            Capability::Bugs | Capability::Patterns | Capability::Decisions => {
                self.findings(capability).count()
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn finding(title: &str) -> Finding {
        Finding {
            score: 1.0,
            created_at: Some(1),
            run_id: Some("run-1".to_owned()),
            kind: "reject".to_owned(),
            title: title.to_owned(),
            excerpt: String::new(),
            files: Vec::new(),
        }
    }

    #[test]
    fn counts_per_capability_and_files_with_a_history() {
        let mut context = MemoryContext::default();
        context.answered(
            &Question::Bugs("x".to_owned()),
            vec![finding("a"), finding("b")],
        );
        context.answered(&Question::Decisions("x".to_owned()), Vec::new());
        context.answered(
            &Question::File("a.rs".to_owned()),
            vec![finding("c"), finding("d")],
        );
        context.answered(&Question::File("b.rs".to_owned()), Vec::new());
        context.answered(&Question::File("c.rs".to_owned()), vec![finding("e")]);
        assert_eq!(context.count(Capability::Bugs), 2);
        assert_eq!(context.count(Capability::Patterns), 0);
        assert_eq!(context.count(Capability::Decisions), 0);
        assert_eq!(context.count(Capability::File), 2);
        assert_eq!(context.findings(Capability::File).count(), 3);
        assert_eq!(context.queries_executed(), 3, "patterns was not asked");
    }
}
