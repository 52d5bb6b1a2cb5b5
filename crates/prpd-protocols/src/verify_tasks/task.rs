//! A task list's `[VERIFY]` tasks, read from Markdown (pure). The same reader takes a PRP and a
//! ralph-specum `tasks.md`: a task is a list item anywhere outside fenced code whose text, after
//! the bullet or number and an optional checkbox, is `[VERIFY]` or an id and then `[VERIFY]`:
//!
//! ```text
//! - [ ] V4 [VERIFY] Full local CI: npm run lint && npm test
//!   - **Do**: Run complete local CI suite
//!   - **Done when**: Build succeeds, all tests pass
//! 4. V4 [VERIFY] Full local CI: npm run lint && npm test
//! ```
//!
//! The words before the first `: ` are the title, what follows are the commands, split on
//! top-level `&&` (`commands.rs`). The title says what kind of task it is: `CI pipeline`, an
//! `AC checklist` (or `acceptance criteria`), `Full local CI` (`local CI`), else plain
//! commands. The item's deeper lines are its body (`**Do**`, `**Verify**`, `**Done when**`,
//! `**Commit**`). A `[VERIFY]` in prose, or not at the start of an item, is not a task.

use std::sync::LazyLock;

use regex::Regex;

use super::commands::split_commands;
use prpd_prp::unfenced_lines;

/// One `[VERIFY]` task.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VerifyTask {
    /// How the task is named.
    pub id: TaskId,
    /// The words between `[VERIFY]` and the colon: `Full local CI`.
    pub title: String,
    /// What prpd runs for it.
    pub kind: TaskKind,
    /// The 1-based line of the item.
    pub line: usize,
    /// That line as written, so the checkbox is marked only while the line is still this one.
    pub line_text: String,
    /// The item's checkbox.
    pub checkbox: Checkbox,
    /// The `**Name**: text` lines of its body, in order.
    pub body: Vec<BodyField>,
}

/// How a task is named: `--task` selects by it and QA's check id carries it (`verify:V4`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TaskId {
    /// The id written before `[VERIFY]`: `V4`, `1.4`.
    Written(String),
    /// No id written: the number of a numbered item (`3.`).
    Numbered(String),
    /// Neither: the line the item is on.
    Line(usize),
}

impl TaskId {
    /// The id as `--task` takes it and checks show it: `V4`, `3`, `L12`.
    pub fn label(&self) -> String {
        match self {
            TaskId::Written(id) | TaskId::Numbered(id) => id.clone(),
            TaskId::Line(line) => format!("L{line}"),
        }
    }
}

/// The checkbox of a task's item.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Checkbox {
    /// A plain or numbered item without one: nothing to mark.
    Absent,
    /// `[ ]`.
    Open,
    /// `[x]` or `[X]`.
    Ticked,
}

/// What a task asks prpd to verify.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TaskKind {
    /// Commands after the colon, each run and reported on its own, in order.
    Commands(Vec<String>),
    /// `Full local CI`: the commands after its colon, or (none given, or only the template's
    /// `<lint>` placeholders) the project's discovered lint, typecheck, test and build commands.
    LocalCi(Vec<String>),
    /// `CI pipeline passes`: the remote checks of the current commit.
    Pipeline,
    /// `AC checklist`: every acceptance criterion traced to tests that passed.
    AcceptanceChecklist,
    /// A title prpd does not know and no command after a colon: nothing it could run.
    NothingToRun,
}

/// One `- **Name**: text` line of a task's body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BodyField {
    /// `Do`, `Verify`, `Done when`, `Commit`, …
    pub name: String,
    pub text: String,
}

impl VerifyTask {
    /// The task as the seed's output names it: `V4 [VERIFY] Full local CI`.
    pub fn heading(&self) -> String {
        let title = if self.title.is_empty() {
            String::new()
        } else {
            format!(" {}", self.title)
        };
        match &self.id {
            TaskId::Written(id) | TaskId::Numbered(id) => format!("{id} [VERIFY]{title}"),
            TaskId::Line(line) => format!("[VERIFY]{title} (line {line})"),
        }
    }

    /// The text of the body field `name` (case ignored), if the task has one.
    pub fn field(&self, name: &str) -> Option<&str> {
        self.body
            .iter()
            .find(|field| field.name.eq_ignore_ascii_case(name))
            .map(|field| field.text.as_str())
    }

    /// The commands written on the task's line: none for a remote CI, an AC checklist, or a
    /// local CI left to discovery. The loop freezes what they run through with the test harness.
    pub fn written_commands(&self) -> &[String] {
        match &self.kind {
            TaskKind::Commands(commands) | TaskKind::LocalCi(commands) => commands,
            TaskKind::Pipeline | TaskKind::AcceptanceChecklist | TaskKind::NothingToRun => &[],
        }
    }

    /// Whether `wanted` (from `--task`) names this task, case ignored.
    pub fn is_named(&self, wanted: &str) -> bool {
        self.id.label().eq_ignore_ascii_case(wanted.trim())
    }
}

static ITEM: LazyLock<Regex> = LazyLock::new(|| {
    regex(r"^(\s*)(?:[-*+]|(\d+(?:\.\d+)*)[.)])[ \t]+(?:\[([ xX])\][ \t]*)?(.*?)\s*$")
});
static TAGGED: LazyLock<Regex> = LazyLock::new(|| {
    regex(
        r"^(?:(?:\*\*|__)?([A-Za-z]{0,4}\d+(?:[.\-]\d+)*[A-Za-z]?)(?:\*\*|__)?:?[ \t]+)?(?i:\[verify\])(.*)$",
    )
});
static FIELD: LazyLock<Regex> = LazyLock::new(|| {
    regex(r"^\s*(?:[-*+]|\d+[.)])?[ \t]*(?:\*\*|__)([^*_]+?):?(?:\*\*|__):?[ \t]*(.*?)\s*$")
});
static HEADING: LazyLock<Regex> = LazyLock::new(|| regex(r"^ {0,3}#{1,6}(?:[ \t]|$)"));

/// Compiles one of this module's fixed patterns.
fn regex(pattern: &str) -> Regex {
    Regex::new(pattern).expect("the task list reader's patterns are valid regexes")
}

/// Every `[VERIFY]` task of `text`, in order.
pub fn parse(text: &str) -> Vec<VerifyTask> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let lines = unfenced_lines(text);
    let mut tasks = Vec::new();
    for (index, &(number, line)) in lines.iter().enumerate() {
        let Some(item) = ITEM.captures(line) else {
            continue;
        };
        let Some(tagged) = TAGGED.captures(item.get(4).map_or("", |m| m.as_str())) else {
            continue;
        };
        let indent = item
            .get(1)
            .map_or(0, |m| m.as_str().replace('\t', "    ").len());
        let id = match (tagged.get(1), item.get(2)) {
            (Some(written), _) => TaskId::Written(written.as_str().to_owned()),
            (None, Some(ordinal)) => TaskId::Numbered(ordinal.as_str().to_owned()),
            (None, None) => TaskId::Line(number),
        };
        let checkbox = match item.get(3).map(|m| m.as_str()) {
            None => Checkbox::Absent,
            Some(" ") => Checkbox::Open,
            Some(_) => Checkbox::Ticked,
        };
        let (title, commands) = title_and_commands(tagged.get(2).map_or("", |m| m.as_str()));
        tasks.push(VerifyTask {
            id,
            kind: kind(&title, commands),
            title,
            line: number,
            line_text: line.to_owned(),
            checkbox,
            body: body(&lines[index + 1..], indent),
        });
    }
    tasks
}

/// `Full local CI: npm run lint && npm test` → the title and the commands. The first colon
/// followed by a space (or ending the text) separates them, so `http://…` in a title does not.
fn title_and_commands(rest: &str) -> (String, Vec<String>) {
    let rest = rest.trim();
    let colon = rest
        .char_indices()
        .find(|&(at, character)| {
            character == ':'
                && rest[at + 1..]
                    .chars()
                    .next()
                    .is_none_or(char::is_whitespace)
        })
        .map(|(at, _)| at);
    let (title, commands) = match colon {
        Some(at) => (&rest[..at], &rest[at + 1..]),
        None => (rest, ""),
    };
    let title = title.trim().trim_matches(['*', '_']).trim().to_owned();
    (title, split_commands(commands))
}

/// The kind a title names; `commands` are what followed its colon.
fn kind(title: &str, commands: Vec<String>) -> TaskKind {
    let words: Vec<String> = title
        .split(|character: char| !character.is_alphanumeric())
        .filter(|word| !word.is_empty())
        .map(str::to_lowercase)
        .collect();
    let has = |wanted: &[&str]| {
        words
            .windows(wanted.len())
            .any(|window| window.iter().zip(wanted).all(|(word, want)| word == want))
    };
    if has(&["ci", "pipeline"]) || has(&["remote", "ci"]) {
        TaskKind::Pipeline
    } else if has(&["ac", "checklist"])
        || has(&["acceptance", "criteria"])
        || has(&["acceptance", "checklist"])
    {
        TaskKind::AcceptanceChecklist
    } else if has(&["local", "ci"]) {
        let given = if commands.iter().all(|command| is_placeholder(command)) {
            Vec::new()
        } else {
            commands
        };
        TaskKind::LocalCi(given)
    } else if commands.is_empty() {
        TaskKind::NothingToRun
    } else {
        TaskKind::Commands(commands)
    }
}

/// A command of the seed's template that was never filled in: `<lint>`, `<actual test command>`.
pub fn is_placeholder(command: &str) -> bool {
    let command = command.trim();
    command.len() > 2
        && command.starts_with('<')
        && command.ends_with('>')
        && !command[1..command.len() - 1].contains(['<', '>'])
}

/// The `**Name**: text` fields among the lines under an item at `indent`: they end at the first
/// line with content that is not deeper, or at a heading.
fn body(following: &[(usize, &str)], indent: usize) -> Vec<BodyField> {
    let mut fields = Vec::new();
    for &(_, line) in following {
        if line.trim().is_empty() {
            continue;
        }
        let depth = line.len() - line.trim_start().len();
        let depth = line[..depth].replace('\t', "    ").len();
        if depth <= indent || HEADING.is_match(line) {
            break;
        }
        if let Some(field) = FIELD.captures(line) {
            fields.push(BodyField {
                name: field.get(1).map_or("", |m| m.as_str()).trim().to_owned(),
                text: field.get(2).map_or("", |m| m.as_str()).to_owned(),
            });
        }
    }
    fields
}

#[cfg(test)]
mod tests {
    use super::*;

    fn commands(list: &[&str]) -> Vec<String> {
        list.iter().map(|command| (*command).to_owned()).collect()
    }

    /// A task's heading, line and body fields.
    type Summary<'a> = (String, usize, Vec<(&'a str, &'a str)>);

    /// A task line, and its id, title, kind and checkbox.
    type Case = (&'static str, &'static str, &'static str, TaskKind, Checkbox);

    fn task_lines() -> [Case; 14] {
        [
            (
                "- [ ] V4 [VERIFY] Full local CI: npm run lint && npm test",
                "V4",
                "Full local CI",
                TaskKind::LocalCi(commands(&["npm run lint", "npm test"])),
                Checkbox::Open,
            ),
            (
                "4. V4 [VERIFY] Full local CI: npm run lint && npm test",
                "V4",
                "Full local CI",
                TaskKind::LocalCi(commands(&["npm run lint", "npm test"])),
                Checkbox::Absent,
            ),
            (
                "- [x] V4 [VERIFY] Full local CI: <lint> && <typecheck> && <test> && <build>",
                "V4",
                "Full local CI",
                TaskKind::LocalCi(Vec::new()),
                Checkbox::Ticked,
            ),
            (
                "- [ ] V4 [VERIFY] Full local CI",
                "V4",
                "Full local CI",
                TaskKind::LocalCi(Vec::new()),
                Checkbox::Open,
            ),
            (
                "- [ ] V5 [VERIFY] CI pipeline passes",
                "V5",
                "CI pipeline passes",
                TaskKind::Pipeline,
                Checkbox::Open,
            ),
            (
                "- [ ] V6 [VERIFY] AC checklist",
                "V6",
                "AC checklist",
                TaskKind::AcceptanceChecklist,
                Checkbox::Open,
            ),
            (
                "* [ ] V6 [verify] Acceptance criteria all met",
                "V6",
                "Acceptance criteria all met",
                TaskKind::AcceptanceChecklist,
                Checkbox::Open,
            ),
            (
                "- [ ] 1.4 [VERIFY] Quality checkpoint: `pnpm lint` && `pnpm check-types`",
                "1.4",
                "Quality checkpoint",
                TaskKind::Commands(commands(&["pnpm lint", "pnpm check-types"])),
                Checkbox::Open,
            ),
            (
                "3. [VERIFY] Quality check: make lint",
                "3",
                "Quality check",
                TaskKind::Commands(commands(&["make lint"])),
                Checkbox::Absent,
            ),
            (
                "- [ ] [VERIFY] Quality check: cd web && npm test && npm run build",
                "L1",
                "Quality check",
                TaskKind::Commands(commands(&["cd web && npm test", "cd web && npm run build"])),
                Checkbox::Open,
            ),
            (
                "- [ ] **V1** [VERIFY] Quality check: pytest -k 'a && b'",
                "V1",
                "Quality check",
                TaskKind::Commands(commands(&["pytest -k 'a && b'"])),
                Checkbox::Open,
            ),
            (
                "- [ ] V2 [VERIFY] Review the docs",
                "V2",
                "Review the docs",
                TaskKind::NothingToRun,
                Checkbox::Open,
            ),
            (
                "- [ ] V3 [VERIFY] Smoke test: <run the app>",
                "V3",
                "Smoke test",
                TaskKind::Commands(commands(&["<run the app>"])),
                Checkbox::Open,
            ),
            (
                "  - [ ] V7 [VERIFY] See http://example.com: curl -fsS http://localhost:8080/health",
                "V7",
                "See http://example.com",
                TaskKind::Commands(commands(&["curl -fsS http://localhost:8080/health"])),
                Checkbox::Open,
            ),
        ]
    }

    #[test]
    fn task_lines_and_what_they_ask() {
        for (line, id, title, kind, checkbox) in task_lines() {
            let tasks = parse(line);
            assert_eq!(tasks.len(), 1, "{line}");
            let task = &tasks[0];
            assert_eq!(task.id.label(), id, "{line}");
            assert_eq!(task.title, title, "{line}");
            assert_eq!(task.kind, kind, "{line}");
            assert_eq!(task.checkbox, checkbox, "{line}");
            assert_eq!(task.line_text, line, "{line}");
        }
    }

    #[test]
    fn verify_outside_the_start_of_an_item_or_inside_a_fence_is_no_task() {
        for text in [
            "[VERIFY] tasks are run by prpd: npm test",
            "- [ ] Support [VERIFY] tasks: npm test",
            "- [ ] the V4 task is [VERIFY] Full local CI: npm test",
            "```markdown\n- [ ] V4 [VERIFY] Full local CI: npm test\n```",
            "> - [ ] V4 [VERIFY] quoted: npm test",
        ] {
            assert_eq!(parse(text), vec![], "{text}");
        }
    }

    #[test]
    fn a_task_list_with_bodies_headings_and_plain_tasks() {
        let text = "\
# Tasks: qa-verification

## Phase 1: Make It Work

- [x] 1.1 Create the agent file
  - **Do**: write it
- [ ] 1.2 [VERIFY] Quality checkpoint: npm run lint
  - **Do**: Run quality commands and verify all pass
  - **Verify**: All commands exit 0
  - **Done when**: No lint errors, no type errors
  - **Commit**: `chore(scope): pass quality checkpoint` (if fixes needed)

## Phase 4: Quality Gates

- [ ] V4 [VERIFY] Full local CI: npm run lint && npm test
  - **Do:** Run complete local CI suite

  - **Verify**: All commands pass
- [ ] V5 [VERIFY] CI pipeline passes
- [ ] V6 [VERIFY] AC checklist
  - **Do**: Read requirements.md, verify each AC-* is satisfied
";
        let tasks = parse(text);
        let summary: Vec<Summary> = tasks
            .iter()
            .map(|task| {
                (
                    task.heading(),
                    task.line,
                    task.body
                        .iter()
                        .map(|field| (field.name.as_str(), field.text.as_str()))
                        .collect(),
                )
            })
            .collect();
        assert_eq!(
            summary,
            vec![
                (
                    "1.2 [VERIFY] Quality checkpoint".to_owned(),
                    7,
                    vec![
                        ("Do", "Run quality commands and verify all pass"),
                        ("Verify", "All commands exit 0"),
                        ("Done when", "No lint errors, no type errors"),
                        (
                            "Commit",
                            "`chore(scope): pass quality checkpoint` (if fixes needed)"
                        ),
                    ]
                ),
                (
                    "V4 [VERIFY] Full local CI".to_owned(),
                    15,
                    vec![
                        ("Do", "Run complete local CI suite"),
                        ("Verify", "All commands pass"),
                    ]
                ),
                ("V5 [VERIFY] CI pipeline passes".to_owned(), 19, vec![]),
                (
                    "V6 [VERIFY] AC checklist".to_owned(),
                    20,
                    vec![("Do", "Read requirements.md, verify each AC-* is satisfied")]
                ),
            ]
        );
        assert_eq!(
            tasks[0].field("done WHEN"),
            Some("No lint errors, no type errors")
        );
        assert_eq!(tasks[1].written_commands(), ["npm run lint", "npm test"]);
        assert!(
            tasks[2].written_commands().is_empty(),
            "a remote CI runs nothing"
        );
        assert!(tasks[1].is_named("v4"));
        assert!(!tasks[1].is_named("V5"));
    }

    #[test]
    fn a_task_without_an_id_is_named_by_its_line() {
        let tasks = parse("# T\n\n- [ ] [VERIFY] Quality check: make test\n");
        assert_eq!(tasks[0].id, TaskId::Line(3));
        assert_eq!(tasks[0].heading(), "[VERIFY] Quality check (line 3)");
        assert!(tasks[0].is_named("L3"));
    }

    #[test]
    fn placeholders_are_whole_angle_bracketed_words() {
        assert!(is_placeholder("<lint>"));
        assert!(is_placeholder(" <actual test command> "));
        assert!(!is_placeholder("<>"));
        assert!(!is_placeholder("cat <in >out"));
        assert!(!is_placeholder("npm test"));
    }
}
