//! The sections of a PRP and the line-by-line pass that reads them: which heading opens which
//! section (by its words, at any level from `##` down, or a bold label such as spec-kit's
//! `**Acceptance Scenarios**:`), the ids an item carries (`AC-1`, `FR-001`, Kiro's `1.2`), and
//! what each section collects. A section runs until the next heading of the same or a higher
//! level.

use std::collections::BTreeSet;
use std::sync::LazyLock;

use regex::Regex;

use super::markdown::{self, heading, list_item, regex};
use super::requirement;
use super::{Acceptance, Criterion, Task};

/// The sections prpd reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Section {
    Goal,
    Why,
    SuccessCriteria,
    Tasks,
    Acceptance,
    /// The PRPs base template's `## Final validation Checklist`.
    FinalChecklist,
    /// The PRPs base template's `## Validation Loop`: its fenced commands are requirements.
    ValidationLoop,
}

impl Section {
    /// Recognises a heading's text, ignoring case, emoji, punctuation and extra words.
    pub(super) fn from_heading(text: &str) -> Option<Section> {
        let words = words(text);
        let has = |wanted: &[&str]| words.windows(wanted.len()).any(|window| window == wanted);
        let first = words.first().map(String::as_str);
        if has(&["success", "criteria"]) {
            Some(Section::SuccessCriteria)
        } else if has(&["acceptance"]) {
            Some(Section::Acceptance)
        } else if has(&["validation", "checklist"]) || has(&["definition", "of", "done"]) {
            Some(Section::FinalChecklist)
        } else if has(&["validation", "loop"]) || has(&["validation", "gates"]) {
            Some(Section::ValidationLoop)
        } else if matches!(
            first,
            Some("goal" | "goals" | "objective" | "summary" | "overview" | "introduction")
        ) {
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

/// Lowercase words of a heading.
fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|word| !word.is_empty())
        .map(str::to_lowercase)
        .collect()
}

static ACCEPTANCE_ID: LazyLock<Regex> = LazyLock::new(|| {
    regex(r"^(?:\*\*|__)?(AC-\d+(?:\.\d+)*)(?:\*\*|__)?(?:[ \t]*[:.)\-–—][ \t]*|[ \t]+)(.*)$")
});
/// The ids of spec-kit (`FR-001`, `SC-001`, `NFR-1`) and of requirement lists (`REQ-7`).
static REQUIREMENT_ID: LazyLock<Regex> = LazyLock::new(|| {
    regex(
        r"^(?:\*\*|__)?((?:FR|NFR|SC|REQ)-\d+(?:\.\d+)*)(?:\*\*|__)?(?:[ \t]*[:.)\-–—][ \t]*|[ \t]+)(.*)$",
    )
});
/// Kiro's `### Requirement 3` (also `### Requirement 3: Sign-in`).
static KIRO_REQUIREMENT: LazyLock<Regex> =
    LazyLock::new(|| regex(r"(?i)^requirement[ \t]+(\d+)\b"));
/// A line that opens a list like a heading would: bold (spec-kit's `**Acceptance
/// Scenarios**:`), or plain and ending with a colon (`Acceptance criteria:`).
static LABEL: LazyLock<Regex> = LazyLock::new(|| {
    regex(
        r"^[ \t]*(?:(?:\*\*|__)([^*_]+?)(?:\*\*|__)[ \t]*:?|([A-Za-z][A-Za-z &/-]{2,60}?)[ \t]*:)[ \t]*$",
    )
});
/// Splits `AC-1.2: text` (also bold, or with `-`, `—`, `)` after the id) into id and text.
fn acceptance_id(text: &str) -> Option<(String, String)> {
    split_id(&ACCEPTANCE_ID, text)
}

fn split_id(pattern: &Regex, text: &str) -> Option<(String, String)> {
    let found = pattern.captures(text)?;
    let id = found.get(1).map_or("", |m| m.as_str()).to_owned();
    let rest = found.get(2).map_or("", |m| m.as_str()).trim().to_owned();
    Some((id, rest))
}

/// What the line-by-line pass over the unfenced lines collects.
#[derive(Debug, Default)]
pub(super) struct Collector<'a> {
    /// The section being read and the level of its heading.
    current: Option<(Section, usize)>,
    /// Kiro's requirement being read (`### Requirement 3` → `3`) and its heading's level.
    kiro_requirement: Option<(String, usize)>,
    pub(super) success_heading: Option<usize>,
    pub(super) goal: Vec<&'a str>,
    pub(super) why: Vec<&'a str>,
    pub(super) success_criteria: Vec<Criterion>,
    pub(super) tasks: Vec<Task>,
    /// The indent of the first task item; deeper items are details of a task, not tasks.
    task_indent: Option<usize>,
    /// A `# ` heading was read (the first one is the title).
    title_seen: bool,
    /// The indent of the first item of the acceptance list being read.
    acceptance_indent: Option<usize>,
    pub(super) explicit_acceptance: Vec<Acceptance>,
    pub(super) unnamed_acceptance: Vec<(usize, String)>,
    /// Items with another id of the document (`FR-001`, `SC-002`, Kiro's `1.2`).
    pub(super) identified: Vec<Acceptance>,
    /// Items of a final validation checklist.
    pub(super) checklist: Vec<Criterion>,
    /// The line ranges of Validation Loop sections (first line, last line).
    validation_loops: Vec<(usize, usize)>,
}

impl<'a> Collector<'a> {
    pub(super) fn line(&mut self, number: usize, line: &'a str) {
        if let Some((level, text)) = heading(line) {
            self.heading(number, level, text);
            return;
        }
        if let Some(label) = LABEL
            .captures(line)
            .and_then(|found| found.get(1).or_else(|| found.get(2)))
        {
            let level = self.current.map_or(6, |(_, level)| level + 1);
            if let Some(section) = Section::from_heading(label.as_str()) {
                self.open(number, section, level);
                return;
            }
        }
        let item = list_item(line);
        let inline_acceptance = match &item {
            Some(item) => acceptance_id(item.text),
            None => acceptance_id(line.trim()),
        };
        let inline_requirement = match &item {
            Some(item) => split_id(&REQUIREMENT_ID, item.text),
            None => split_id(&REQUIREMENT_ID, line.trim()),
        };
        let has_id = inline_acceptance.is_some() || inline_requirement.is_some();
        if let Some((id, text)) = inline_acceptance {
            self.explicit_acceptance.push(Acceptance {
                id,
                text,
                line: number,
            });
        }
        if let Some((id, text)) = inline_requirement {
            self.identified.push(Acceptance {
                id,
                text,
                line: number,
            });
        }
        let section = self.current.map(|(section, _)| section);
        match (section, item) {
            (Some(Section::Goal), _) => self.goal.push(line),
            (Some(Section::Why), _) => self.why.push(line),
            (Some(Section::SuccessCriteria), Some(item)) if !item.text.is_empty() && !has_id => {
                self.success_criteria.push(Criterion {
                    text: item.text.to_owned(),
                    checked: item.checked.unwrap_or(false),
                    line: number,
                });
            }
            (Some(Section::FinalChecklist), Some(item)) if !item.text.is_empty() && !has_id => {
                self.checklist.push(Criterion {
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
            // Only the top-level items of an acceptance list are criteria; deeper items detail
            // them.
            (Some(Section::Acceptance), Some(item))
                if !item.text.is_empty()
                    && !has_id
                    && item.indent <= *self.acceptance_indent.get_or_insert(item.indent) =>
            {
                match (&self.kiro_requirement, item.number) {
                    (Some((requirement, _)), Some(criterion)) => {
                        self.identified.push(Acceptance {
                            id: format!("{requirement}.{criterion}"),
                            text: item.text.to_owned(),
                            line: number,
                        });
                    }
                    (Some(_) | None, _) => {
                        self.unnamed_acceptance.push((number, item.text.to_owned()));
                    }
                }
            }
            (
                Some(
                    Section::SuccessCriteria
                    | Section::FinalChecklist
                    | Section::Tasks
                    | Section::Acceptance
                    | Section::ValidationLoop,
                )
                | None,
                _,
            ) => {}
        }
    }

    fn heading(&mut self, number: usize, level: usize, text: &str) {
        if self
            .kiro_requirement
            .as_ref()
            .is_some_and(|(_, open)| level <= *open)
        {
            self.kiro_requirement = None;
        }
        if let Some(found) = KIRO_REQUIREMENT
            .captures(text.trim())
            .and_then(|found| found.get(1))
        {
            self.kiro_requirement = Some((found.as_str().to_owned(), level));
        }
        // The first `# ` heading is the title; a later one may name a section
        // (`# Acceptance Criteria` in a document whose parts are all top-level).
        let is_title = level == 1 && !self.title_seen;
        self.title_seen |= level == 1;
        match Section::from_heading(text) {
            Some(section) if !is_title => self.open(number, section, level),
            Some(_) | None => {
                if self.current.is_some_and(|(_, open)| level <= open) {
                    self.close(number);
                }
            }
        }
    }

    fn open(&mut self, number: usize, section: Section, level: usize) {
        self.close(number);
        self.current = Some((section, level));
        match section {
            Section::SuccessCriteria if self.success_heading.is_none() => {
                self.success_heading = Some(number);
            }
            Section::Tasks => self.task_indent = None,
            Section::Acceptance => self.acceptance_indent = None,
            Section::ValidationLoop => self.validation_loops.push((number, usize::MAX)),
            Section::SuccessCriteria | Section::Goal | Section::Why | Section::FinalChecklist => {}
        }
    }

    fn close(&mut self, number: usize) {
        if let (Some((Section::ValidationLoop, _)), Some(range)) =
            (self.current, self.validation_loops.last_mut())
        {
            range.1 = number;
        }
        self.current = None;
    }

    /// The command lines of the fenced blocks inside a Validation Loop section (shell blocks
    /// or blocks without a language), comments dropped and `\` continuations joined, each
    /// with whether prpd may run it as a check ([`ValidationCommand`]).
    pub(super) fn validation_commands(
        &self,
        fences: &[markdown::Fence<'_>],
    ) -> Vec<ValidationCommand> {
        let mut found = Vec::new();
        let in_a_loop = |fence: &&markdown::Fence<'_>| {
            matches!(
                fence.language.as_str(),
                "" | "bash" | "sh" | "shell" | "console" | "zsh"
            ) && self
                .validation_loops
                .iter()
                .any(|(first, last)| (*first..=*last).contains(&fence.opened_at))
        };
        for fence in fences.iter().filter(in_a_loop) {
            let mut changes_folder = false;
            let mut pending: Option<(usize, String)> = None;
            for (number, line) in &fence.lines {
                let text = line.trim().trim_start_matches("$ ");
                let text = text.split(" #").next().unwrap_or_default().trim_end();
                let (start, joined) = match pending.take() {
                    Some((start, before)) => (start, format!("{before} {}", text.trim())),
                    None => (*number, text.trim().to_owned()),
                };
                if let Some(continued) = joined.strip_suffix('\\') {
                    pending = Some((start, continued.trim_end().to_owned()));
                    continue;
                }
                if joined.starts_with("cd ") {
                    changes_folder = true;
                    continue;
                }
                if requirement::is_command_line(&joined) {
                    let runnable = !changes_folder && is_a_check(&joined);
                    found.push(ValidationCommand {
                        line: start,
                        command: joined,
                        runnable,
                    });
                }
            }
        }
        found
    }

    /// What was looked for, for a document with nothing to verify.
    pub(super) fn nothing_found(&self) -> String {
        let found = if self.success_heading.is_some() {
            "the Success Criteria section has no list items"
        } else {
            "no section or item was found"
        };
        format!(
            "{found}; looked for success criteria (checkboxes under `## Success Criteria`), \
             acceptance criteria (`AC-1 …` anywhere, or the items of an `## Acceptance \
             Criteria` section), spec-kit ids (`FR-001`, `SC-001`), Kiro requirements \
             (`### Requirement 1` with numbered acceptance criteria), Gherkin `Scenario:` \
             lines, a `## Final validation Checklist` and the commands of a \
             `## Validation Loop`"
        )
    }
}

/// Keeps the first criterion of each explicit id, gives the unnamed ones the first free `AC-n`,
/// and orders all by line.
pub(super) fn merge_acceptance(
    explicit: Vec<Acceptance>,
    unnamed: Vec<(usize, String)>,
) -> Vec<Acceptance> {
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
pub(super) fn section_text(lines: &[&str]) -> Option<String> {
    let text = lines.join("\n").trim().to_owned();
    if text.is_empty() { None } else { Some(text) }
}

/// A command of a Validation Loop block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct ValidationCommand {
    pub(super) line: usize,
    pub(super) command: String,
    /// prpd may run it as a check: it tests, lints, type-checks or builds, runs in the
    /// repository's root (no `cd` before it in its block) and ends by itself (no `&`). A
    /// command that starts a server or works elsewhere is for a person to run.
    pub(super) runnable: bool,
}

/// Words that make a command a check that ends by itself.
const CHECK_WORDS: &[&str] = &[
    "test",
    "tests",
    "pytest",
    "unittest",
    "check",
    "lint",
    "ruff",
    "mypy",
    "pyright",
    "flake8",
    "pylint",
    "eslint",
    "tsc",
    "vet",
    "clippy",
    "fmt",
    "build",
    "compile",
    "py_compile",
    "typecheck",
    "type-check",
    "verify",
    "validate",
    "jest",
    "vitest",
    "mocha",
    "bats",
    "prove",
    "ctest",
    "rspec",
    "phpunit",
    "black",
    "prettier",
    "golangci-lint",
    "nox",
    "tox",
];

/// Whether `command` is a check that ends by itself (see [`ValidationCommand::runnable`]).
fn is_a_check(command: &str) -> bool {
    let backgrounded = command.trim_end().ends_with('&') || command.contains(" & ");
    let words: Vec<&str> = command
        .split(|c: char| c.is_whitespace() || matches!(c, ':' | '/' | '=' | '.' | '_' | '-'))
        .collect();
    !backgrounded
        && words
            .iter()
            .any(|word| CHECK_WORDS.contains(&word.trim_matches(['"', '\''])))
}
