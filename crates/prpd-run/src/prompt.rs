//! The prompt an agent receives: a per-phase Markdown template with `{{placeholder}}`s filled in
//! from the run (the PRP, the feedback of the last iteration, the QA report, the status block the
//! agent must end with).
//!
//! The default templates live in `prompts/` at the root of prpd's repository and are compiled
//! in; a target repository overrides one by placing `.prpd/prompts/<phase>.md` next to its code.
//! Placeholders are filled in one pass, so text that comes from the run (a PRP that happens to
//! contain `{{phase}}`) is never expanded. An unknown placeholder in a template is an error that
//! names the file and the line, because a silently empty section is worse than a refused run.
//! The `{{status_block}}` text is rendered by [`StatusBlock`] itself, so the format agents are
//! told to print cannot drift from the one prpd parses; `{{test_plan}}` (RED's optional
//! `TestPlan`) by `prpd-protocols/src/test_plan`, whose reader knows the example it shows.

use std::path::{Path, PathBuf};
use std::sync::LazyLock;

use regex::Regex;

use prpd_base::phase::Phase;
use prpd_base::status_block::{StatusBlock, Value};
use prpd_protocols::test_plan;
use prpd_prp::{Requirement, RequirementKind};

/// Where a target repository keeps its template overrides, relative to its root.
pub const OVERRIDE_DIR: &str = ".prpd/prompts";

/// Every placeholder a template may use.
pub const PLACEHOLDERS: [&str; 12] = [
    "phase",
    "iteration",
    "attempt",
    "prp_path",
    "prp",
    "feedback",
    "qa_report",
    "test_command",
    "status_block",
    "test_plan",
    "web_plan",
    "requirements",
];

/// What `{{feedback}}` says when there is nothing to report.
const NO_FEEDBACK: &str = "None: this is the first iteration.";

/// What `{{test_command}}` says when prpd found no test command.
const NO_TEST_COMMAND: &str = "not found";

/// Everything a template can refer to.
#[derive(Debug, Clone, Copy)]
pub struct PromptContext<'a> {
    pub phase: Phase,
    pub iteration: u32,
    /// The QA attempt of the run (1..=3).
    pub attempt: u32,
    pub prp_path: &'a Path,
    pub prp_text: &'a str,
    /// The failures, output tails and QA blockers of the last iteration, one entry each.
    pub feedback: &'a [String],
    /// The QA report prpd produced (QA phase).
    pub qa_report: Option<&'a str>,
    /// The test command prpd discovered.
    pub test_command: Option<&'a str>,
    /// The section about the running app's test plan (`[plan]`), empty without one.
    pub web_plan: Option<&'a str>,
    /// The PRP's requirements, each with its id (`{{requirements}}`).
    pub requirements: &'a [Requirement],
}

/// prpd could not build a prompt.
#[derive(Debug, thiserror::Error)]
pub enum PromptError {
    /// A template uses a placeholder prpd does not know.
    #[error(
        "{}:{line}: unknown placeholder `{{{{{name}}}}}`; the known placeholders are {}",
        path.display(),
        known_placeholders()
    )]
    UnknownPlaceholder {
        path: PathBuf,
        line: usize,
        name: String,
    },
    /// The phase runs no agent, so it has no prompt.
    #[error("failed to build a prompt: the {phase} phase runs no agent")]
    NoAgentPhase { phase: Phase },
}

/// Where a repository overrides `phase`'s template, relative to its root
/// (`.prpd/prompts/<phase>.md`).
pub fn override_path(phase: Phase) -> Result<PathBuf, PromptError> {
    let (name, _) = template(phase)?;
    Ok(Path::new(OVERRIDE_DIR).join(format!("{name}.md")))
}

/// Renders the prompt of `context.phase` from `custom` — an override's path and text, as the
/// run's base snapshot holds it, never as an agent may have rewritten it since — or else from
/// the built-in template.
pub fn render(
    custom: Option<(&Path, &str)>,
    context: &PromptContext,
) -> Result<String, PromptError> {
    let (name, builtin) = template(context.phase)?;
    match custom {
        Some((path, text)) => fill(text, path, context),
        None => fill(
            builtin,
            &Path::new("(built-in prompts)").join(format!("{name}.md")),
            context,
        ),
    }
}

/// Checks the prompt overrides of the repository at `repo` before a run starts: a placeholder
/// prpd does not know is the user's mistake, named with its file and line, instead of a run
/// that stops when the phase comes.
pub fn check_overrides(repo: &Path) -> Result<(), PromptError> {
    for phase in Phase::ITERATING {
        let relative = override_path(phase)?;
        let Ok(text) = std::fs::read_to_string(repo.join(&relative)) else {
            continue;
        };
        for (line, found) in placeholders(&text) {
            if !PLACEHOLDERS.contains(&found) {
                return Err(PromptError::UnknownPlaceholder {
                    path: relative,
                    line,
                    name: found.to_owned(),
                });
            }
        }
    }
    Ok(())
}

/// Every `{{name}}` of `template` with its line.
fn placeholders(template: &str) -> Vec<(usize, &str)> {
    placeholder_pattern()
        .captures_iter(template)
        .filter_map(|found| {
            let whole = found.get(0)?;
            let name = found.get(1)?.as_str().trim();
            Some((template[..whole.start()].matches('\n').count() + 1, name))
        })
        .collect()
}

fn placeholder_pattern() -> &'static Regex {
    static PLACEHOLDER: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"\{\{([^{}]*)\}\}").expect("the placeholder pattern is a valid regex")
    });
    &PLACEHOLDER
}

/// The file name (without `.md`) and the built-in text of a phase's template.
fn template(phase: Phase) -> Result<(&'static str, &'static str), PromptError> {
    match phase {
        Phase::Red => Ok(("red", include_str!("../../../prompts/red.md"))),
        Phase::Green => Ok(("green", include_str!("../../../prompts/green.md"))),
        Phase::Refactor => Ok(("refactor", include_str!("../../../prompts/refactor.md"))),
        Phase::Document => Ok(("document", include_str!("../../../prompts/document.md"))),
        Phase::Qa => Ok(("qa", include_str!("../../../prompts/qa.md"))),
        Phase::Ship => Err(PromptError::NoAgentPhase { phase }),
    }
}

/// Replaces every placeholder of `template` in one pass; `path` names the template in errors.
fn fill(template: &str, path: &Path, context: &PromptContext) -> Result<String, PromptError> {
    let mut rendered = String::with_capacity(template.len() + context.prp_text.len());
    let mut copied_up_to = 0;
    for found in placeholder_pattern().captures_iter(template) {
        let (Some(whole), Some(name)) = (found.get(0), found.get(1)) else {
            continue;
        };
        let name = name.as_str().trim();
        let value = value_of(name, context).ok_or_else(|| PromptError::UnknownPlaceholder {
            path: path.to_path_buf(),
            line: template[..whole.start()].matches('\n').count() + 1,
            name: name.to_owned(),
        })?;
        rendered.push_str(&template[copied_up_to..whole.start()]);
        rendered.push_str(&value);
        copied_up_to = whole.end();
    }
    rendered.push_str(&template[copied_up_to..]);
    Ok(rendered)
}

/// The text of one placeholder, `None` when the name is unknown.
fn value_of(name: &str, context: &PromptContext) -> Option<String> {
    let value = match name {
        "phase" => context.phase.to_string(),
        "iteration" => context.iteration.to_string(),
        "attempt" => context.attempt.to_string(),
        "prp_path" => context.prp_path.display().to_string(),
        "prp" => context.prp_text.to_owned(),
        "feedback" => feedback_list(context.feedback),
        "qa_report" => context.qa_report.unwrap_or_default().to_owned(),
        "test_command" => context.test_command.unwrap_or(NO_TEST_COMMAND).to_owned(),
        "status_block" => status_block_template(context).to_string(),
        "test_plan" => test_plan::PROMPT_SECTION.to_owned(),
        "web_plan" => context.web_plan.unwrap_or_default().to_owned(),
        "requirements" => requirements_list(context.requirements),
        _ => return None,
    };
    Some(value)
}

/// `{{requirements}}`: one line per requirement with its id and how prpd judges it; for
/// behaviour, the test name prpd looks for, so the tests carry ids rather than sentences.
fn requirements_list(requirements: &[Requirement]) -> String {
    if requirements.is_empty() {
        return "None found.".to_owned();
    }
    requirements
        .iter()
        .map(|requirement| {
            let how = match &requirement.kind {
                RequirementKind::Behaviour if requirement.needs_a_test() => {
                    format!("test name `{}_…` (required)", requirement.test_name())
                }
                RequirementKind::Behaviour => {
                    format!("test name `{}_…`", requirement.test_name())
                }
                RequirementKind::Command { command } => {
                    format!("prpd runs `{command}` itself; no test needed")
                }
                RequirementKind::Gate { gate } => {
                    format!("judged by prpd's check {}; no test needed", gate.check_id())
                }
                RequirementKind::Manual { .. } => "judged by a person; no test needed".to_owned(),
            };
            format!(
                "- `{}` ({how}): {}",
                requirement.id,
                requirement.text.replace('\n', " ")
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn known_placeholders() -> String {
    PLACEHOLDERS
        .iter()
        .map(|name| format!("{{{{{name}}}}}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// A Markdown bullet list; the continuation lines of a multi-line entry are indented under it.
pub(crate) fn feedback_list(feedback: &[String]) -> String {
    if feedback.is_empty() {
        return NO_FEEDBACK.to_owned();
    }
    feedback
        .iter()
        .map(|entry| format!("- {}", entry.trim_end().replace('\n', "\n  ")))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The block the agent must end its answer with, known values filled in and the others shown
/// as `<choices>`.
///
/// It asks only for what the agent can know: the circuit breaker and the dual gate are prpd's
/// own measurements, which prpd adds to the blocks it prints itself.
fn status_block_template(context: &PromptContext) -> StatusBlock {
    let count = || Value::from("<integer>");
    let paths = || Value::List(vec!["<path>".to_owned()]);
    let mut block = StatusBlock::new();
    block
        .set("TIMESTAMP", "<ISO-8601 time, e.g. 2025-01-15T10:30:00Z>")
        .set("PHASE", context.phase.to_string())
        .set("STATUS", "<IN_PROGRESS|BLOCKED|COMPLETE>")
        .set("ITERATION", context.iteration)
        .set("PROGRESS_PERCENT", "<0-100>");
    match context.phase {
        Phase::Qa => {
            block
                .set(
                    "QA_METRICS",
                    Value::Map(
                        [
                            "CHECKS_TOTAL",
                            "CHECKS_PASSING",
                            "CHECKS_FAILING",
                            "BLOCKING_ISSUES",
                            "WARNING_ISSUES",
                        ]
                        .map(|key| (key.to_owned(), count()))
                        .to_vec(),
                    ),
                )
                .set("VERDICT", "<APPROVE|REJECT>")
                .set("ATTEMPT", context.attempt);
        }
        Phase::Red | Phase::Green | Phase::Refactor | Phase::Document | Phase::Ship => {
            block
                .set(
                    "TESTS",
                    Value::Map(
                        ["TOTAL", "PASSING", "FAILING", "SKIPPED"]
                            .map(|key| (key.to_owned(), count()))
                            .to_vec(),
                    ),
                )
                .set(
                    "FILES",
                    Value::Map(vec![
                        ("CREATED".to_owned(), paths()),
                        ("MODIFIED".to_owned(), paths()),
                        ("DELETED".to_owned(), paths()),
                    ]),
                );
        }
    }
    block
        .set(
            "BLOCKERS",
            vec!["<one line per blocker; write `BLOCKERS: []` when there is none>"],
        )
        .set("EXIT_SIGNAL", "<true|false>")
        .set("RECOMMENDATION", "<one line: what should happen next>");
    block
}

#[cfg(test)]
mod tests {
    use super::*;
    use prpd_base::status_block::{Found, find_last};

    const AGENT_PHASES: [Phase; 5] = [
        Phase::Red,
        Phase::Green,
        Phase::Refactor,
        Phase::Document,
        Phase::Qa,
    ];

    fn context(phase: Phase) -> PromptContext<'static> {
        PromptContext {
            phase,
            iteration: 4,
            attempt: 2,
            prp_path: Path::new("PRPs/slugify.md"),
            prp_text: "# Slugify\n\n## Acceptance criteria\n- AC-1: lowercases the title",
            feedback: &[],
            qa_report: Some("# QA report\nVERDICT: REJECT (clippy: 3 warnings)"),
            test_command: Some("cargo test"),
            web_plan: None,
            requirements: &[],
        }
    }

    #[test]
    fn red_carries_the_web_plan_section_only_when_there_is_one() {
        let mut with = context(Phase::Red);
        with.web_plan = Some("## The web app's test plan\n\nthe signup spec");
        assert!(
            render(None, &with)
                .expect("renders")
                .contains("the signup spec")
        );
        let without = render(None, &context(Phase::Red)).expect("renders");
        assert!(!without.contains("web app"), "{without}");
    }

    #[test]
    fn every_default_template_renders_without_leftover_placeholders() {
        for phase in AGENT_PHASES {
            let rendered = render(None, &context(phase)).expect("renders");
            // The test plan's section shows `{{PASSWORD}}`-style placeholders on purpose.
            let prompt = rendered.replace(test_plan::PROMPT_SECTION, "");
            assert_eq!(
                rendered != prompt,
                phase == Phase::Red,
                "{phase}: only RED asks for a test plan"
            );
            assert!(!prompt.contains("{{"), "{phase}: {prompt}");
            assert!(!prompt.contains("}}"), "{phase}: {prompt}");
            assert!(prompt.contains("AC-1: lowercases the title"), "{phase}");
            assert!(prompt.contains("PRPs/slugify.md"), "{phase}");
            assert!(prompt.contains(NO_FEEDBACK), "{phase}");
            assert!(prompt.contains("EXIT_SIGNAL: true"), "{phase}");
            assert!(prompt.contains("verifies independently"), "{phase}");
        }
    }

    #[test]
    fn the_status_block_in_the_prompt_is_the_phase_variant_and_parses() {
        for phase in AGENT_PHASES {
            let prompt = render(None, &context(phase)).expect("renders");
            let Found::Block(block) = find_last(&prompt) else {
                panic!("{phase}: no block in {prompt}");
            };
            assert_eq!(block.phase(), Some(phase.to_string().as_str()));
            assert_eq!(block.int("ITERATION"), Some(4));
            assert!(block.get("EXIT_SIGNAL").is_some());
            assert_eq!(
                block.exit_signal(),
                None,
                "a template must not say true or false"
            );
            let is_qa = phase == Phase::Qa;
            assert_eq!(block.get("VERDICT").is_some(), is_qa, "{phase}");
            assert_eq!(block.int("ATTEMPT").is_some(), is_qa, "{phase}");
            assert_eq!(block.get("QA_METRICS").is_some(), is_qa, "{phase}");
            assert_eq!(block.get("TESTS").is_none(), is_qa, "{phase}");
        }
    }

    #[test]
    fn only_the_qa_prompt_carries_the_qa_report() {
        let qa = render(None, &context(Phase::Qa)).expect("renders");
        assert!(qa.contains("VERDICT: REJECT (clippy: 3 warnings)"));
        let green = render(None, &context(Phase::Green)).expect("renders");
        assert!(!green.contains("clippy: 3 warnings"));
    }

    #[test]
    fn feedback_is_a_bullet_list_and_missing_values_have_fallbacks() {
        let feedback = [
            "test ac_1 failed".to_owned(),
            "output tail:\nline one\nline two\n".to_owned(),
        ];
        let mut given = context(Phase::Green);
        given.feedback = &feedback;
        given.test_command = None;
        let prompt = render(None, &given).expect("renders");
        assert!(
            prompt.contains("- test ac_1 failed\n- output tail:\n  line one\n  line two\n"),
            "{prompt}"
        );
        assert!(!prompt.contains(NO_FEEDBACK));
        assert!(prompt.contains("and the linter): not found"));
    }

    #[test]
    fn an_override_in_the_repo_wins_and_run_text_is_not_expanded() {
        let path = override_path(Phase::Green).expect("GREEN has a template");
        assert_eq!(path, Path::new(".prpd/prompts/green.md"));
        let text = "Custom {{phase}} #{{iteration}}/{{ attempt }}\n{{prp}}\n[{{qa_report}}]";
        let mut given = context(Phase::Green);
        given.prp_text = "literal {{phase}}";
        given.qa_report = None;
        let prompt = render(Some((&path, text)), &given).expect("renders");
        assert_eq!(prompt, "Custom GREEN #4/2\nliteral {{phase}}\n[]");
        let red = render(None, &context(Phase::Red)).expect("renders");
        assert!(red.contains("RED phase"), "other phases keep the default");
    }

    #[test]
    fn an_unknown_placeholder_names_file_line_and_the_known_ones() {
        let path = override_path(Phase::Qa).expect("QA has a template");
        let error = render(
            Some((&path, "Review {{prp}}\n\nthen {{verdict}} it\n")),
            &context(Phase::Qa),
        )
        .expect_err("unknown placeholder");
        match &error {
            PromptError::UnknownPlaceholder {
                path: at,
                line,
                name,
            } => {
                assert_eq!(at, &path);
                assert_eq!(*line, 3);
                assert_eq!(name, "verdict");
            }
            other @ PromptError::NoAgentPhase { .. } => panic!("unexpected {other:?}"),
        }
        let message = error.to_string();
        assert!(
            message.contains(&format!("{}:3:", path.display())),
            "{message}"
        );
        assert!(message.contains("`{{verdict}}`"), "{message}");
        assert!(message.contains("{{status_block}}"), "{message}");
    }

    #[test]
    fn ship_has_no_prompt() {
        assert!(matches!(
            render(None, &context(Phase::Ship)),
            Err(PromptError::NoAgentPhase { phase: Phase::Ship })
        ));
    }
}
