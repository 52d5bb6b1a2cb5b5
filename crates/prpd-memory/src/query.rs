//! What QA asks memory before it validates (seed 004, "Memory Integration"): past bugs and
//! failures, stack patterns, architecture decisions, and the history of each changed file.
//! The four [`Question`]s are built from what the run is about — the PRP's title and goal, the
//! detected stacks, the changed files — by plain text handling, no LLM: a [`MemoryQuery`] is
//! the input, [`MemoryQuery::questions`] the output.

use std::fmt;

use serde::Serialize;

use crate::entry::{EntryKind, normalize_files};
use prpd_prp::Prp;
use prpd_qa::stack::Stack;

/// Longest goal text a question carries; a PRP's goal is a paragraph, not a chapter.
const MAX_GOAL_CHARS: usize = 400;

/// One capability of a memory backend.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Capability {
    /// Past bugs and failures: REJECTs, breaker trips, escalations, lessons.
    Bugs,
    /// How this stack is done here: approved work and lessons of the same stacks.
    Patterns,
    /// Architecture decisions: ADRs, CHANGELOG entries, lessons.
    Decisions,
    /// Everything recorded about one file, newest first.
    File,
}

impl Capability {
    /// The four, in the order QA asks them.
    pub const ALL: [Capability; 4] = [
        Capability::Bugs,
        Capability::Patterns,
        Capability::Decisions,
        Capability::File,
    ];

    /// The name on the command line (`--kind bugs`) and in `[memory.mcp.tools]`.
    pub fn as_str(self) -> &'static str {
        match self {
            Capability::Bugs => "bugs",
            Capability::Patterns => "patterns",
            Capability::Decisions => "decisions",
            Capability::File => "file",
        }
    }

    /// The row's name in the QA report's Memory Context table (seed 004, Appendix A).
    pub fn label(self) -> &'static str {
        match self {
            Capability::Bugs => "Historical Bugs",
            Capability::Patterns => "Stack Patterns",
            Capability::Decisions => "Architecture Decisions",
            Capability::File => "File History",
        }
    }

    /// The entry kinds the embedded store searches for this capability (all, for a file).
    pub fn kinds(self) -> &'static [EntryKind] {
        match self {
            Capability::Bugs => &[
                EntryKind::Reject,
                EntryKind::BreakerTrip,
                EntryKind::Escalation,
                EntryKind::Lesson,
                EntryKind::FlakyTest,
            ],
            Capability::Patterns => &[EntryKind::Approve, EntryKind::Lesson],
            Capability::Decisions => {
                &[EntryKind::Decision, EntryKind::Changelog, EntryKind::Lesson]
            }
            Capability::File => &EntryKind::ALL,
        }
    }

    /// How many findings QA asks for (seed 004: 5 bugs, 5 patterns, 3 decisions, 3 per file).
    pub fn default_limit(self) -> usize {
        match self {
            Capability::Bugs | Capability::Patterns => 5,
            Capability::Decisions | Capability::File => 3,
        }
    }
}

impl fmt::Display for Capability {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str(self.as_str())
    }
}

/// One question to memory: a capability and what it is asked about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Question {
    /// Past bugs and failures about this text.
    Bugs(String),
    /// Patterns of these stacks (and this text).
    Patterns(String),
    /// Architecture decisions about this text.
    Decisions(String),
    /// The history of this file (a path relative to the repository root).
    File(String),
}

impl Question {
    /// The question of `capability` about `subject` (a path for [`Capability::File`]).
    pub fn new(capability: Capability, subject: String) -> Question {
        match capability {
            Capability::Bugs => Question::Bugs(subject),
            Capability::Patterns => Question::Patterns(subject),
            Capability::Decisions => Question::Decisions(subject),
            Capability::File => Question::File(crate::entry::normalize_file(&subject)),
        }
    }

    pub fn capability(&self) -> Capability {
        match self {
            Question::Bugs(_) => Capability::Bugs,
            Question::Patterns(_) => Capability::Patterns,
            Question::Decisions(_) => Capability::Decisions,
            Question::File(_) => Capability::File,
        }
    }

    /// The text or the path asked about.
    pub fn subject(&self) -> &str {
        match self {
            Question::Bugs(text)
            | Question::Patterns(text)
            | Question::Decisions(text)
            | Question::File(text) => text,
        }
    }

    /// The question as a sentence for a semantic search (an MCP server ranks by meaning, so the
    /// capability is said in words, as seed 004's queries do; the embedded store filters by
    /// entry kind instead).
    pub fn phrased(&self) -> String {
        match self {
            Question::Bugs(text) => format!("bugs errors issues {text}"),
            Question::Patterns(text) => format!("{text} patterns conventions"),
            Question::Decisions(text) => format!("architecture decision {text}"),
            Question::File(path) => path.clone(),
        }
    }
}

/// What the run is about: the input of the four QA questions.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MemoryQuery {
    /// The PRP's title.
    pub title: String,
    /// The PRP's goal (may be empty).
    pub goal: String,
    /// The detected stacks' ids (`node`, `python`).
    pub stacks: Vec<String>,
    /// The files the run changed, relative to the repository root.
    pub changed_files: Vec<String>,
}

impl MemoryQuery {
    /// What a run of `prp` on `stacks` that changed `changed_files` is about.
    pub fn of_run(prp: &Prp, stacks: &[Stack], changed_files: &[String]) -> MemoryQuery {
        let mut stack_ids: Vec<String> = Vec::new();
        for stack in stacks {
            if !stack_ids.contains(&stack.id) {
                stack_ids.push(stack.id.clone());
            }
        }
        MemoryQuery {
            title: prp.title.clone(),
            goal: prp.goal.clone().unwrap_or_default(),
            stacks: stack_ids,
            changed_files: changed_files.to_vec(),
        }
    }

    /// The questions QA asks, in order: bugs, patterns, decisions, then one per changed file.
    pub fn questions(&self) -> Vec<Question> {
        let about = self.about();
        let patterns = if self.stacks.is_empty() {
            self.title.trim().to_owned()
        } else {
            format!("{} {}", self.stacks.join(" "), self.title.trim())
        };
        let mut questions = vec![
            Question::Bugs(about.clone()),
            Question::Patterns(patterns.trim().to_owned()),
            Question::Decisions(about),
        ];
        questions.extend(
            normalize_files(&self.changed_files)
                .into_iter()
                .map(Question::File),
        );
        questions
    }

    /// The title and the start of the goal, on one line.
    fn about(&self) -> String {
        let goal: String = self
            .goal
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
            .chars()
            .take(MAX_GOAL_CHARS)
            .collect();
        format!("{} {goal}", self.title.trim()).trim().to_owned()
    }
}

#[cfg(test)]
mod tests {
    use std::path::{Path, PathBuf};

    use super::*;

    #[test]
    fn a_run_asks_the_four_questions_and_one_per_changed_file() {
        let prp = prpd_prp::parse(
            Path::new("PRPs/stats.md"),
            "# PRP: Word statistics\n\n## Goal\n\nCount the words\nof a text.\n\n## Success Criteria\n\n- [ ] counts\n",
        )
        .expect("prp");
        let stacks = [
            Stack {
                id: "node".to_owned(),
                path: PathBuf::from("."),
            },
            Stack {
                id: "node".to_owned(),
                path: PathBuf::from("web"),
            },
        ];
        let query = MemoryQuery::of_run(
            &prp,
            &stacks,
            &["./src/stats.js".to_owned(), "test/stats.test.js".to_owned()],
        );
        assert_eq!(query.stacks, vec!["node".to_owned()]);
        let questions = query.questions();
        let title = &prp.title;
        assert_eq!(
            questions,
            vec![
                Question::Bugs(format!("{title} Count the words of a text.")),
                Question::Patterns(format!("node {title}")),
                Question::Decisions(format!("{title} Count the words of a text.")),
                Question::File("src/stats.js".to_owned()),
                Question::File("test/stats.test.js".to_owned()),
            ]
        );
        assert_eq!(
            questions
                .iter()
                .map(Question::capability)
                .collect::<Vec<_>>(),
            [
                Capability::Bugs,
                Capability::Patterns,
                Capability::Decisions,
                Capability::File,
                Capability::File
            ]
        );
    }

    #[test]
    fn a_long_goal_is_cut_and_the_semantic_phrasing_names_the_capability() {
        let query = MemoryQuery {
            title: "Rate limit".to_owned(),
            goal: "word ".repeat(500),
            stacks: Vec::new(),
            changed_files: Vec::new(),
        };
        let questions = query.questions();
        assert_eq!(questions.len(), 3);
        assert!(questions[0].subject().chars().count() <= "Rate limit ".len() + MAX_GOAL_CHARS);
        assert_eq!(questions[1], Question::Patterns("Rate limit".to_owned()));
        assert!(
            questions[0]
                .phrased()
                .starts_with("bugs errors issues Rate limit")
        );
        assert_eq!(
            Question::Patterns("go".to_owned()).phrased(),
            "go patterns conventions"
        );
        assert_eq!(
            Question::new(Capability::File, "./a.go".to_owned()).phrased(),
            "a.go"
        );
    }
}
