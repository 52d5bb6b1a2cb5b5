//! The PRP document model: a run starts from a Markdown feature request, and everything prpd
//! verifies later (critical points, acceptance criteria, `[VERIFY]` tasks) comes from here.
//!
//! A PRP is read leniently, because people and agents write them by hand and in many formats
//! (the seed's `# PRP`, the PRPs base template, GitHub issues, Gherkin, spec-kit, Kiro): the
//! title comes from whichever the document has (`title.rs`); sections are found by heading
//! text, case-insensitively, ignoring emoji and extra words (`## 🎯 Goal`,
//! `### Success Criteria (must)`), at any heading level from `##` down (`sections.rs`).
//! Fenced code blocks are skipped, so example Markdown inside them is not mistaken for
//! structure. Acceptance criteria are recognised anywhere by their id (`- [ ] AC-1.1 …`,
//! `**AC-2**: …`), and an item with an id is only an acceptance criterion, not also a success
//! criterion; items of an Acceptance Criteria section without an id get the first free `AC-n`.
//! Everything the document asks for becomes a [`Requirement`] with an id. Only a document with
//! nothing to verify is refused.

use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

mod gherkin;
mod markdown;
mod requirement;
mod requirements;
mod sections;
mod title;

pub use requirement::{Gate, IdOrigin, Requirement, RequirementKind};
pub use requirement::{id_tokens, names_id};

pub use markdown::unfenced_lines;
use sections::{Collector, merge_acceptance, section_text};

/// A parsed PRP.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Prp {
    /// The file it was read from (as given to [`parse`]).
    pub path: PathBuf,
    /// The text of the first `# ` heading.
    pub title: String,
    /// The Goal section's text, if the PRP has one.
    pub goal: Option<String>,
    /// The Why section's text, if the PRP has one.
    pub why: Option<String>,
    /// The list items of the Success Criteria section.
    pub success_criteria: Vec<Criterion>,
    /// The top-level list items of the Tasks section.
    pub tasks: Vec<Task>,
    /// Acceptance criteria, from anywhere in the document, in order of appearance.
    pub acceptance: Vec<Acceptance>,
    /// Everything the PRP asks for, each with an id, in document order (see
    /// [`Requirement`]).
    pub requirements: Vec<Requirement>,
}

/// One success criterion.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Criterion {
    /// The item's text, without the bullet and the checkbox.
    pub text: String,
    /// Whether its checkbox is ticked (`[x]`); plain bullets are unticked.
    pub checked: bool,
    /// The 1-based line it starts on.
    pub line: usize,
}

/// One task of the Tasks section.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Task {
    /// The item's text, without the bullet and the checkbox, with any `[VERIFY]` tag kept.
    pub text: String,
    /// Tagged `[VERIFY]`: prpd runs it itself (DESIGN §10).
    pub verify: bool,
    /// The 1-based line it starts on.
    pub line: usize,
}

/// One acceptance criterion.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Acceptance {
    /// Its id, such as `AC-1` or `AC-1.2`.
    pub id: String,
    /// What it requires.
    pub text: String,
    /// The 1-based line it is on.
    pub line: usize,
}

/// Why a PRP could not be used.
#[derive(Debug, thiserror::Error)]
pub enum PrpError {
    /// The file has no content.
    #[error(
        "{}: the file is empty; a PRP needs a `# Title` line and success criteria \
         (`- [ ] …` under `## Success Criteria`) or acceptance criteria (`- [ ] AC-1 …`)",
        path.display()
    )]
    Empty {
        /// The PRP file.
        path: PathBuf,
    },
    /// Nothing the document asks for could be found.
    #[error(
        "{}:{line}: nothing to verify: {detail}; add checkbox items (`- [ ] …`) under \
         `## Success Criteria` or acceptance criteria (`- [ ] AC-1 …`)",
        path.display()
    )]
    NothingToVerify {
        /// The PRP file.
        path: PathBuf,
        /// The Success Criteria heading, or the title when there is none.
        line: usize,
        /// What was found instead.
        detail: String,
    },
}

impl Prp {
    /// A branch-safe name for the PRP: its title in lowercase ASCII words joined by `-`,
    /// without a leading `PRP:`, at most 50 characters; the file stem when the title has no
    /// ASCII word; `prp` when neither has one.
    pub fn slug(&self) -> String {
        let from_title = slugify(&self.title);
        let from_title = from_title
            .strip_prefix("prp-")
            .map_or(from_title.as_str(), |rest| rest);
        if !from_title.is_empty() && from_title != "prp" {
            return from_title.to_owned();
        }
        let from_stem = self
            .path
            .file_stem()
            .map(|stem| slugify(&stem.to_string_lossy()))
            .unwrap_or_default();
        if from_stem.is_empty() {
            "prp".to_owned()
        } else {
            from_stem
        }
    }
}

/// Lowercase ASCII words of `text` joined by `-`, cut at a word boundary to 50 characters.
fn slugify(text: &str) -> String {
    const MAX: usize = 50;
    let mut slug = String::new();
    for word in text
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|word| !word.is_empty())
    {
        let separator = usize::from(!slug.is_empty());
        if slug.len() + separator + word.len() > MAX {
            if slug.is_empty() {
                slug.push_str(&word[..MAX]);
            }
            break;
        }
        if separator == 1 {
            slug.push('-');
        }
        slug.push_str(&word.to_ascii_lowercase());
    }
    slug
}

/// Parses PRP Markdown. `path_for_messages` names the file in errors and in [`Prp::path`].
///
/// The formats people write are all read: the seed's `# PRP: …` with `## Success Criteria`
/// and `AC-*` ids, the PRPs base template (`name:` header, `## Goal`, `### Success Criteria`,
/// `## Validation Loop`, `## Final validation Checklist`), a GitHub issue's
/// `## Acceptance criteria` checklist, Gherkin scenarios, spec-kit's `spec.md` (`FR-001`,
/// `SC-001`, acceptance scenarios) and Kiro's `requirements.md` (`### Requirement N` with
/// numbered acceptance criteria `N.M`). Only a document with nothing to verify is refused.
pub fn parse(path_for_messages: &Path, text: &str) -> Result<Prp, PrpError> {
    let path = path_for_messages.to_path_buf();
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    if text.trim().is_empty() {
        return Err(PrpError::Empty { path });
    }
    let lines = unfenced_lines(text);
    let (title_line, title) = title::title(&path, text, &lines);

    let mut collector = Collector::default();
    for &(number, line) in &lines {
        collector.line(number, line);
    }
    let fences = markdown::fences(text);
    let scenarios = gherkin::scenarios(&lines, &fences);
    let validation_commands = collector.validation_commands(&fences);
    let acceptance = merge_acceptance(
        collector.explicit_acceptance.clone(),
        collector.unnamed_acceptance.clone(),
    );
    let requirements = requirements::assemble(&requirements::Found {
        acceptance: &acceptance,
        identified: &collector.identified,
        scenarios: &scenarios,
        success_criteria: &collector.success_criteria,
        checklist: &collector.checklist,
        validation_commands: &validation_commands,
    });
    if requirements.is_empty() {
        return Err(PrpError::NothingToVerify {
            path,
            line: collector.success_heading.unwrap_or(title_line),
            detail: collector.nothing_found(),
        });
    }

    Ok(Prp {
        path,
        title,
        goal: section_text(&collector.goal),
        why: section_text(&collector.why),
        success_criteria: collector.success_criteria,
        tasks: collector.tasks,
        acceptance,
        requirements,
    })
}

/// The acceptance criteria of any Markdown document, by the rules of [`parse`] (ids anywhere,
/// unnamed items of an Acceptance Criteria section numbered), without asking for a title or
/// success criteria: a ralph-specum `requirements.md` beside a task list is such a document.
pub fn acceptance_criteria(text: &str) -> Vec<Acceptance> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut collector = Collector::default();
    for (number, line) in unfenced_lines(text) {
        collector.line(number, line);
    }
    merge_acceptance(collector.explicit_acceptance, collector.unnamed_acceptance)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parsed(text: &str) -> Prp {
        parse(Path::new("PRPs/feature.md"), text).expect("the PRP parses")
    }

    fn error(text: &str) -> String {
        parse(Path::new("PRPs/feature.md"), text)
            .expect_err("the PRP is refused")
            .to_string()
    }

    const REALISTIC: &str = "\
# 🚀 PRP: Password reset by e-mail

## 🎯 Goal

Let users reset a forgotten password through a one-time link.

It must not reveal whether an address has an account.

## Why

- Support gets 30 reset tickets a week.

## ✅ Success Criteria (must all hold)

- [ ] `POST /reset` answers 202 for known and unknown addresses
- [x] Reset links expire after 30 minutes
  and can be used once
* [ ] AC-3 The old password stops working after a reset

```markdown
## Success Criteria
- [ ] this example inside a fence is not a criterion
```

## Implementation Tasks

1. CREATE src/reset.rs: token generation
   - use the existing `Clock` trait
2. MODIFY src/routes.rs: add `POST /reset`
- [ ] V1 [VERIFY] Quality check: cargo clippy && cargo test
- [x] V6 [verify] AC checklist

### Notes for the implementer

- keep tokens out of logs

## Acceptance Criteria

- [ ] AC-1: an unknown address gets the same answer as a known one
- [ ] **AC-2** — the link expires after 30 minutes
- a second use of the link is refused

**AC-1.1**: tokens are 32 random bytes

## Out of scope

- [ ] SMS reset
";

    #[test]
    fn a_realistic_prp() {
        let prp = parsed(REALISTIC);
        assert_eq!(prp.title, "🚀 PRP: Password reset by e-mail");
        assert_eq!(prp.slug(), "password-reset-by-e-mail");
        assert_eq!(
            prp.goal.as_deref(),
            Some(
                "Let users reset a forgotten password through a one-time link.\n\n\
                 It must not reveal whether an address has an account."
            )
        );
        assert_eq!(
            prp.why.as_deref(),
            Some("- Support gets 30 reset tickets a week.")
        );
        assert_eq!(
            prp.success_criteria,
            vec![
                Criterion {
                    text: "`POST /reset` answers 202 for known and unknown addresses".to_owned(),
                    checked: false,
                    line: 15,
                },
                Criterion {
                    text: "Reset links expire after 30 minutes".to_owned(),
                    checked: true,
                    line: 16,
                },
            ]
        );
        let tasks: Vec<(&str, bool)> = prp
            .tasks
            .iter()
            .map(|task| (task.text.as_str(), task.verify))
            .collect();
        assert_eq!(
            tasks,
            vec![
                ("CREATE src/reset.rs: token generation", false),
                ("MODIFY src/routes.rs: add `POST /reset`", false),
                (
                    "V1 [VERIFY] Quality check: cargo clippy && cargo test",
                    true
                ),
                ("V6 [verify] AC checklist", true),
                ("keep tokens out of logs", false),
            ]
        );
        let acceptance: Vec<(&str, &str, usize)> = prp
            .acceptance
            .iter()
            .map(|ac| (ac.id.as_str(), ac.text.as_str(), ac.line))
            .collect();
        assert_eq!(
            acceptance,
            vec![
                ("AC-3", "The old password stops working after a reset", 18),
                (
                    "AC-1",
                    "an unknown address gets the same answer as a known one",
                    39
                ),
                ("AC-2", "the link expires after 30 minutes", 40),
                ("AC-4", "a second use of the link is refused", 41),
                ("AC-1.1", "tokens are 32 random bytes", 43),
            ]
        );
    }

    /// A shortened excerpt of seed `004_258a7bc12e599dfd.txt`, which is itself a PRP: Success
    /// Criteria is a `###` under `## What`, and the fenced blocks hold `#` lines and Markdown
    /// headings that must not be read as structure.
    const SEED_004_EXCERPT: &str = "\
# PRP: QA Agent & Memory Integration

**Version:** 1.0.0
**Status:** ✅ Implemented

---

## Goal

Implement a **QA Agent** that acts as an autonomous quality gate, validating all AI-generated code before shipping.

## Why

- **Quality Assurance**: AI-generated code needs AI review before shipping

## What

### User-Visible Behavior

1. After DOCUMENT phase completes, QA Agent automatically runs
6. On REJECT: Return to GREEN phase with feedback (max 3 attempts)

### Success Criteria

- [ ] QA Agent validates 100% of features before shipping
- [ ] Memory queries complete in <3s total
- [ ] Human escalation after 3 QA rejections

---

## All Needed Context

```yaml
# MUST READ - Include these in your context window
- file: claude/agents/green-implementer.md
  why: Agent structure pattern to follow
```

## Implementation Blueprint

### Tasks to Complete

```yaml
Task 1:
CREATE claude/agents/qa-agent.md:
  - MIRROR structure from: claude/agents/green-implementer.md
```

### Per Task Pseudocode

```markdown
# Purpose
## Exit Conditions (Dual-Gate)
Gate 1 (Objective): blocking_failed == 0
```

## Final Validation Checklist

- [x] QA Agent spec created: `claude/agents/qa-agent.md`
- [x] Human escalation works after 3 rejections

## Appendix B: Circuit Breaker Thresholds

| Phase | NO_PROGRESS_THRESHOLD | SAME_ERROR_THRESHOLD |
|-------|----------------------|---------------------|
| RED | 3 | 5 |
";

    #[test]
    fn the_seed_004_prp() {
        let prp = parsed(SEED_004_EXCERPT);
        assert_eq!(prp.title, "PRP: QA Agent & Memory Integration");
        assert_eq!(prp.slug(), "qa-agent-memory-integration");
        assert!(
            prp.goal
                .as_deref()
                .is_some_and(|goal| goal.starts_with("Implement a **QA Agent**"))
        );
        assert!(prp.why.is_some());
        let criteria: Vec<&str> = prp
            .success_criteria
            .iter()
            .map(|criterion| criterion.text.as_str())
            .collect();
        assert_eq!(
            criteria,
            [
                "QA Agent validates 100% of features before shipping",
                "Memory queries complete in <3s total",
                "Human escalation after 3 QA rejections",
            ]
        );
        assert_eq!(prp.success_criteria[0].line, 25);
        assert_eq!(
            prp.tasks,
            vec![],
            "the seed's tasks are inside a fenced block"
        );
        assert_eq!(prp.acceptance, vec![]);
        // Prose criteria get ids a test can carry; the final checklist is read too.
        let ids: Vec<(&str, &str)> = prp
            .requirements
            .iter()
            .map(|requirement| (requirement.id.as_str(), requirement.text.as_str()))
            .collect();
        assert_eq!(
            ids,
            [
                ("R1", "QA Agent validates 100% of features before shipping"),
                ("R2", "Memory queries complete in <3s total"),
                ("R3", "Human escalation after 3 QA rejections"),
                ("R4", "QA Agent spec created: `claude/agents/qa-agent.md`"),
                ("R5", "Human escalation works after 3 rejections"),
            ]
        );
        assert_eq!(prp.requirements[2].test_name(), "r3");
    }

    #[test]
    fn acceptance_criteria_alone_are_enough_to_verify() {
        let prp = parsed("# Export\n\nSome intro.\n\n- [ ] AC-1 CSV export works\n");
        assert_eq!(prp.success_criteria, vec![]);
        assert_eq!(prp.acceptance.len(), 1);
        assert_eq!(prp.acceptance[0].id, "AC-1");
    }

    #[test]
    fn the_title_may_follow_front_matter_and_blank_lines() {
        let prp = parsed(
            "\u{feff}---\nauthor: me\n---\n\n# Feature X\n\n## Success Criteria\n- [ ] works\n",
        );
        assert_eq!(prp.title, "Feature X");
        assert_eq!(prp.goal, None);
    }

    #[test]
    fn errors_name_file_line_and_what_was_expected() {
        let cases = [
            (
                "",
                "PRPs/feature.md: the file is empty; a PRP needs a `# Title` line and success \
                 criteria (`- [ ] …` under `## Success Criteria`) or acceptance criteria \
                 (`- [ ] AC-1 …`)",
            ),
            (
                "\n  \n\t\n",
                "PRPs/feature.md: the file is empty; a PRP needs a `# Title` line and success \
                 criteria (`- [ ] …` under `## Success Criteria`) or acceptance criteria \
                 (`- [ ] AC-1 …`)",
            ),
        ];
        for (text, expected) in cases {
            assert_eq!(error(text), expected, "{text:?}");
        }
        let nothing = [
            (
                "# Feature\n\n## Goal\nDo things.\n\n## Success Criteria\n\nTBD\n",
                "PRPs/feature.md:6: nothing to verify: the Success Criteria section has no list \
                 items; looked for success criteria",
            ),
            (
                "\n# Feature\n\n## Goal\nDo things.\n\n## Tasks\n- [ ] build it\n",
                "PRPs/feature.md:2: nothing to verify: no section or item was found; looked for",
            ),
            (
                "no title here\n",
                "PRPs/feature.md:1: nothing to verify: no section or item was found; looked for",
            ),
        ];
        for (text, expected) in nothing {
            let message = error(text);
            assert!(message.starts_with(expected), "{text:?}: {message}");
            for looked_for in [
                "`FR-001`",
                "`### Requirement 1`",
                "`Scenario:`",
                "`## Validation Loop`",
            ] {
                assert!(message.contains(looked_for), "{message}");
            }
        }
    }

    /// A PRP of each format people write, all asking for `multiply` in the Python `calc`
    /// fixture (the same files drive `tests/it/formats.rs`), and what prpd reads in each: its
    /// title, and every requirement as `id kind` (kind: `test` for behaviour a test must
    /// cover, `test?` for behaviour a test may cover, `run` for a command prpd runs, `F1`…
    /// for the check that judges it, `person` for what a person judges).
    #[test]
    fn every_format_people_write_yields_requirements_with_ids() {
        let cases: &[(&str, &str, &str, &[&str])] = &[
            (
                "seed.md",
                include_str!("../../../tests/fixtures/prp/seed.md"),
                "PRP: Multiply numbers",
                &["R1 test?", "R2 F1", "R3 run", "AC-1 test", "AC-2 test"],
            ),
            (
                "prps-base.md",
                include_str!("../../../tests/fixtures/prp/prps-base.md"),
                "Multiply numbers in calc",
                &[
                    "R1 test?",
                    "R2 test?",
                    "R3 run",
                    "R4 run",
                    "R5 person",
                    "R6 run",
                    "R7 C1",
                    "R8 test?",
                ],
            ),
            (
                "github-issue.md",
                include_str!("../../../tests/fixtures/prp/github-issue.md"),
                "github-issue",
                &["AC-1 test", "AC-2 test", "AC-3 test"],
            ),
            (
                "gherkin.md",
                include_str!("../../../tests/fixtures/prp/gherkin.md"),
                "Multiply numbers",
                &[
                    "Multiply two positive numbers test",
                    "Multiply with a negative number test",
                ],
            ),
            (
                "spec-kit.md",
                include_str!("../../../tests/fixtures/prp/spec-kit.md"),
                "Feature Specification: Multiply numbers",
                &[
                    "AC-1 test",
                    "AC-2 test",
                    "FR-001 test",
                    "FR-002 test",
                    "SC-001 test",
                ],
            ),
            (
                "kiro.md",
                include_str!("../../../tests/fixtures/prp/kiro.md"),
                "Requirements Document",
                &["1.1 test", "1.2 test", "2.1 test"],
            ),
        ];
        for (file, text, title, expected) in cases {
            let prp =
                parse(Path::new(file), text).unwrap_or_else(|error| panic!("{file}: {error}"));
            assert_eq!(prp.title, *title, "{file}");
            let found: Vec<String> = prp
                .requirements
                .iter()
                .map(|requirement| {
                    let kind = match &requirement.kind {
                        RequirementKind::Behaviour if requirement.needs_a_test() => "test",
                        RequirementKind::Behaviour => "test?",
                        RequirementKind::Command { .. } => "run",
                        RequirementKind::Gate { gate } => gate.check_id(),
                        RequirementKind::Manual { .. } => "person",
                    };
                    format!("{} {kind}", requirement.id)
                })
                .collect();
            assert_eq!(found, *expected, "{file}");
        }
    }

    #[test]
    fn a_top_level_section_or_a_plain_label_opens_a_list() {
        let cases = [
            "# Multiply\n\nAdd `multiply`.\n\n# Acceptance Criteria\n\n- multiplies integers\n",
            "# Multiply\n\nAdd `multiply`.\n\nAcceptance criteria:\n\n- multiplies integers\n",
            "# Multiply\n\n**Acceptance criteria**\n- multiplies integers\n",
        ];
        for text in cases {
            let prp = parsed(text);
            assert_eq!(prp.title, "Multiply", "{text}");
            let ids: Vec<(&str, &str)> = prp
                .requirements
                .iter()
                .map(|requirement| (requirement.id.as_str(), requirement.text.as_str()))
                .collect();
            assert_eq!(ids, [("AC-1", "multiplies integers")], "{text}");
        }
        // A sentence that ends with a colon is no label.
        let error = error("# Multiply\n\nThe tests we want are these:\n\n- multiplies integers\n");
        assert!(error.contains("nothing to verify"), "{error}");
    }

    #[test]
    fn prose_examples_are_not_gherkin_and_nested_items_detail_their_criterion() {
        let prp = parsed(
            "# Multiply\n\nExample: `multiply(2, 3)` returns 6\n\n## Acceptance Criteria\n\n\
             - multiplies integers\n  - including zero\n  - and negatives\n- multiplies floats\n",
        );
        let ids: Vec<(&str, &str)> = prp
            .requirements
            .iter()
            .map(|requirement| (requirement.id.as_str(), requirement.text.as_str()))
            .collect();
        assert_eq!(
            ids,
            [
                ("AC-1", "multiplies integers"),
                ("AC-2", "multiplies floats")
            ]
        );
    }

    #[test]
    fn only_validation_loop_checks_that_end_by_themselves_in_the_root_are_run() {
        let prp = parsed(
            "# Server\n\n## Success Criteria\n\n- [ ] it serves\n\n## Validation Loop\n\n\
             ```bash\nuv run pytest tests/ \\\n    -v\nuv run python -m src.main --dev\n\
             python3 main.py &\nruff check src/ --fix  # style\n```\n\n\
             ```bash\ncd backend/\nuv run pytest\n```\n",
        );
        let commands: Vec<(&str, bool)> = prp
            .requirements
            .iter()
            .filter_map(|requirement| match &requirement.kind {
                RequirementKind::Command { command } => Some((command.as_str(), true)),
                RequirementKind::Manual { command } => Some((command.as_str(), false)),
                RequirementKind::Behaviour | RequirementKind::Gate { .. } => None,
            })
            .collect();
        assert_eq!(
            commands,
            [
                ("uv run pytest tests/ -v", true),
                ("uv run python -m src.main --dev", false),
                ("python3 main.py &", false),
                ("ruff check src/ --fix", true),
                ("uv run pytest", false),
            ]
        );
    }

    #[test]
    fn the_base_templates_validation_loop_commands_are_requirements() {
        let prp = parse(
            Path::new("prps-base.md"),
            include_str!("../../../tests/fixtures/prp/prps-base.md"),
        )
        .expect("parses");
        let commands: Vec<&str> = prp
            .requirements
            .iter()
            .filter_map(|requirement| match &requirement.kind {
                RequirementKind::Command { command } | RequirementKind::Manual { command } => {
                    Some(command.as_str())
                }
                RequirementKind::Behaviour | RequirementKind::Gate { .. } => None,
            })
            .collect();
        assert_eq!(
            commands,
            [
                "python3 -m py_compile calc.py",
                "python3 run_tests.py",
                "curl -X POST http://localhost:8000/multiply -d '{\"a\": 6, \"b\": 7}'",
                "python3 run_tests.py",
            ]
        );
        assert!(
            prp.goal
                .as_deref()
                .is_some_and(|goal| goal.starts_with("Add `multiply(a, b)`"))
        );
    }

    #[test]
    fn acceptance_criteria_of_a_requirements_file_need_no_title() {
        let text = "### US-1\n- [ ] AC-1.1: tagged tasks\n```\n- [ ] AC-9: fenced\n```\n\
                    ## Acceptance Criteria\n- the report lists every criterion\n";
        let found: Vec<(String, String, usize)> = acceptance_criteria(text)
            .into_iter()
            .map(|ac| (ac.id, ac.text, ac.line))
            .collect();
        let expected = [
            ("AC-1.1", "tagged tasks", 2),
            ("AC-1", "the report lists every criterion", 7),
        ];
        let expected: Vec<(String, String, usize)> = expected
            .iter()
            .map(|(id, text, line)| ((*id).to_owned(), (*text).to_owned(), *line))
            .collect();
        assert_eq!(found, expected);
    }

    #[test]
    fn slug_falls_back_to_the_file_stem() {
        let mut prp = parsed("# 🚀✨\n\n## Success Criteria\n- [ ] works\n");
        assert_eq!(prp.slug(), "feature");
        prp.title = "PRP".to_owned();
        prp.path = PathBuf::from("PRPs/🚀.md");
        assert_eq!(prp.slug(), "prp");
        prp.title =
            "A very long title that goes on and on about many many different things".to_owned();
        assert_eq!(
            prp.slug(),
            "a-very-long-title-that-goes-on-and-on-about-many"
        );
    }
}
