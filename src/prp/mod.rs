//! The PRP document model: a run starts from a Markdown feature request, and everything prpd
//! verifies later (critical points, acceptance criteria, `[VERIFY]` tasks) comes from here.
//!
//! A PRP is read leniently, because people and agents write them by hand: the title is the first
//! `# ` heading; sections are found by heading text, case-insensitively, ignoring emoji and extra
//! words (`## 🎯 Goal`, `### Success Criteria (must)`, `## Tasks to Complete`), at any heading
//! level from `##` down, and a section runs until the next heading of the same or a higher level
//! that is not a nested part of it. Fenced code blocks are skipped, so example Markdown inside
//! them is not mistaken for structure. Acceptance criteria are recognised anywhere by their id
//! (`- [ ] AC-1.1 …`, `**AC-2**: …`), and an item with an id is only an acceptance criterion,
//! not also a success criterion; items of an Acceptance Criteria section without an id get the
//! first free `AC-n`. A PRP must give prpd something to verify: success criteria or
//! acceptance criteria.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::LazyLock;

use regex::Regex;
use serde::{Deserialize, Serialize};

mod markdown;

pub(crate) use markdown::unfenced_lines;
use markdown::{heading, list_item, regex};

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
    /// No `# ` heading.
    #[error(
        "{}:{line}: expected a `# Title` heading (a line starting with `# `); found none in \
         the file, which starts with `{first}`",
        path.display()
    )]
    NoTitle {
        /// The PRP file.
        path: PathBuf,
        /// The first line with content.
        line: usize,
        /// That line, shortened.
        first: String,
    },
    /// Neither success criteria nor acceptance criteria.
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

/// The sections prpd reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Section {
    Goal,
    Why,
    SuccessCriteria,
    Tasks,
    Acceptance,
}

impl Section {
    /// Recognises a heading's text, ignoring case, emoji, punctuation and extra words.
    fn from_heading(text: &str) -> Option<Section> {
        let words: Vec<String> = text
            .split(|c: char| !c.is_alphanumeric())
            .filter(|word| !word.is_empty())
            .map(str::to_lowercase)
            .collect();
        let has = |wanted: &[&str]| words.windows(wanted.len()).any(|window| window == wanted);
        let first = words.first().map(String::as_str);
        if has(&["success", "criteria"]) {
            Some(Section::SuccessCriteria)
        } else if has(&["acceptance"]) {
            Some(Section::Acceptance)
        } else if matches!(first, Some("goal" | "goals" | "objective")) {
            Some(Section::Goal)
        } else if first == Some("why") {
            Some(Section::Why)
        } else if first == Some("task") || has(&["tasks"]) {
            Some(Section::Tasks)
        } else {
            None
        }
    }
}

static ACCEPTANCE_ID: LazyLock<Regex> = LazyLock::new(|| {
    regex(r"^(?:\*\*|__)?(AC-\d+(?:\.\d+)*)(?:\*\*|__)?(?:[ \t]*[:.)\-–—][ \t]*|[ \t]+)(.*)$")
});

/// Splits `AC-1.2: text` (also bold, or with `-`, `—`, `)` after the id) into id and text.
fn acceptance_id(text: &str) -> Option<(String, String)> {
    let found = ACCEPTANCE_ID.captures(text)?;
    let id = found.get(1).map_or("", |m| m.as_str()).to_owned();
    let rest = found.get(2).map_or("", |m| m.as_str()).trim().to_owned();
    Some((id, rest))
}

/// Parses PRP Markdown. `path_for_messages` names the file in errors and in [`Prp::path`].
pub fn parse(path_for_messages: &Path, text: &str) -> Result<Prp, PrpError> {
    let path = path_for_messages.to_path_buf();
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    if text.trim().is_empty() {
        return Err(PrpError::Empty { path });
    }
    let lines = unfenced_lines(text);

    let Some((title_line, title)) = lines.iter().find_map(|(number, line)| {
        heading(line)
            .filter(|(level, text)| *level == 1 && !text.is_empty())
            .map(|(_, text)| (*number, text.to_owned()))
    }) else {
        let (line, first) = text
            .lines()
            .enumerate()
            .find(|(_, line)| !line.trim().is_empty())
            .map_or((1, String::new()), |(index, line)| {
                (index + 1, line.trim().chars().take(60).collect())
            });
        return Err(PrpError::NoTitle { path, line, first });
    };

    let mut collector = Collector::default();
    for &(number, line) in &lines {
        collector.line(number, line);
    }
    let acceptance = merge_acceptance(collector.explicit_acceptance, collector.unnamed_acceptance);
    if collector.success_criteria.is_empty() && acceptance.is_empty() {
        let (line, detail) = match collector.success_heading {
            Some(line) => (
                line,
                "the Success Criteria section has no list items and there are no acceptance \
                 criteria"
                    .to_owned(),
            ),
            None => (
                title_line,
                "there is no Success Criteria section and no acceptance criteria".to_owned(),
            ),
        };
        return Err(PrpError::NothingToVerify { path, line, detail });
    }

    Ok(Prp {
        path,
        title,
        goal: section_text(&collector.goal),
        why: section_text(&collector.why),
        success_criteria: collector.success_criteria,
        tasks: collector.tasks,
        acceptance,
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

/// What the line-by-line pass over the unfenced lines collects.
#[derive(Debug, Default)]
struct Collector<'a> {
    /// The section being read and the level of its heading.
    current: Option<(Section, usize)>,
    success_heading: Option<usize>,
    goal: Vec<&'a str>,
    why: Vec<&'a str>,
    success_criteria: Vec<Criterion>,
    tasks: Vec<Task>,
    /// The indent of the first task item; deeper items are details of a task, not tasks.
    task_indent: Option<usize>,
    explicit_acceptance: Vec<Acceptance>,
    unnamed_acceptance: Vec<(usize, String)>,
}

impl<'a> Collector<'a> {
    fn line(&mut self, number: usize, line: &'a str) {
        if let Some((level, text)) = heading(line) {
            self.heading(number, level, text);
            return;
        }
        let item = list_item(line);
        let inline_acceptance = match &item {
            Some(item) => acceptance_id(item.text),
            None => acceptance_id(line.trim()),
        };
        let is_acceptance = inline_acceptance.is_some();
        if let Some((id, text)) = inline_acceptance {
            self.explicit_acceptance.push(Acceptance {
                id,
                text,
                line: number,
            });
        }
        let section = self.current.map(|(section, _)| section);
        match (section, item) {
            (Some(Section::Goal), _) => self.goal.push(line),
            (Some(Section::Why), _) => self.why.push(line),
            (Some(Section::SuccessCriteria), Some(item))
                if !item.text.is_empty() && !is_acceptance =>
            {
                self.success_criteria.push(Criterion {
                    text: item.text.to_owned(),
                    checked: item.checked.unwrap_or(false),
                    line: number,
                });
            }
            (Some(Section::Tasks), Some(item)) if !item.text.is_empty() => {
                let top = *self.task_indent.get_or_insert(item.indent);
                if item.indent <= top {
                    self.tasks.push(Task {
                        text: item.text.to_owned(),
                        verify: item.text.to_ascii_uppercase().contains("[VERIFY]"),
                        line: number,
                    });
                }
            }
            (Some(Section::Acceptance), Some(item)) if !item.text.is_empty() && !is_acceptance => {
                self.unnamed_acceptance.push((number, item.text.to_owned()));
            }
            (Some(Section::SuccessCriteria | Section::Tasks | Section::Acceptance) | None, _) => {}
        }
    }

    fn heading(&mut self, number: usize, level: usize, text: &str) {
        match Section::from_heading(text) {
            Some(section) if level > 1 => {
                self.current = Some((section, level));
                if section == Section::SuccessCriteria && self.success_heading.is_none() {
                    self.success_heading = Some(number);
                }
                if section == Section::Tasks {
                    self.task_indent = None;
                }
            }
            Some(_) | None => {
                if self.current.is_some_and(|(_, open)| level <= open) {
                    self.current = None;
                }
            }
        }
    }
}

/// Keeps the first criterion of each explicit id, gives the unnamed ones the first free `AC-n`,
/// and orders all by line.
fn merge_acceptance(explicit: Vec<Acceptance>, unnamed: Vec<(usize, String)>) -> Vec<Acceptance> {
    let mut used = BTreeSet::new();
    let mut merged: Vec<Acceptance> = explicit
        .into_iter()
        .filter(|criterion| used.insert(criterion.id.clone()))
        .collect();
    let mut next = 1;
    for (line, text) in unnamed {
        while used.contains(&format!("AC-{next}")) {
            next += 1;
        }
        let id = format!("AC-{next}");
        used.insert(id.clone());
        merged.push(Acceptance { id, text, line });
    }
    merged.sort_by_key(|criterion| criterion.line);
    merged
}

/// A section's lines joined, without leading and trailing blank lines; `None` when empty.
fn section_text(lines: &[&str]) -> Option<String> {
    let text = lines.join("\n").trim().to_owned();
    if text.is_empty() { None } else { Some(text) }
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
            (
                "\n\nFeature without a title\n## Success Criteria\n- [ ] works\n",
                "PRPs/feature.md:3: expected a `# Title` heading (a line starting with `# `); \
                 found none in the file, which starts with `Feature without a title`",
            ),
            (
                "Intro\n```\n# a fenced line is not a title\n```\n#Nospace\n",
                "PRPs/feature.md:1: expected a `# Title` heading (a line starting with `# `); \
                 found none in the file, which starts with `Intro`",
            ),
            (
                "# Feature\n\n## Goal\nDo things.\n\n## Success Criteria\n\nTBD\n",
                "PRPs/feature.md:6: nothing to verify: the Success Criteria section has no list \
                 items and there are no acceptance criteria; add checkbox items (`- [ ] …`) \
                 under `## Success Criteria` or acceptance criteria (`- [ ] AC-1 …`)",
            ),
            (
                "\n# Feature\n\n## Goal\nDo things.\n\n## Tasks\n- [ ] build it\n",
                "PRPs/feature.md:2: nothing to verify: there is no Success Criteria section and \
                 no acceptance criteria; add checkbox items (`- [ ] …`) under \
                 `## Success Criteria` or acceptance criteria (`- [ ] AC-1 …`)",
            ),
        ];
        for (text, expected) in cases {
            assert_eq!(error(text), expected, "{text:?}");
        }
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
