//! Requirements: everything a PRP asks for, each with an id that a test carries in its name.
//!
//! prpd never traces a requirement by its sentence (a gate that wants a criterion quoted in a
//! test file teaches agents to paste prose into comments). Every requirement gets an id: the
//! document's own (`AC-3`, `FR-001`, `SC-002`, Kiro's `1.2`, a Gherkin scenario's title) or,
//! where it has none, one prpd assigns (`R1`, `R2`, … in document order). RED's prompt shows
//! each id with the test name it expects, and QA counts a requirement covered when a test that
//! ran and passed carries the id in its name.
//!
//! Not every requirement is for a test to cover. A criterion that names a command
//! (`` `make test` passes ``) is measured by running it; a criterion about the gate itself
//! ("all tests pass", "lint is clean") is judged by the check that measures it; a command that
//! talks to a service prpd does not start (`curl http://localhost:8000/…`) is left for a person.
//! [`RequirementKind`] says which, and the classification is by the shape of the text (a
//! backticked command, a known phrase about the gate), never by whether a file contains it.

use std::sync::LazyLock;

use regex::Regex;
use serde::{Deserialize, Serialize};

use super::markdown::regex;

/// One thing the PRP asks for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Requirement {
    /// Its id: the document's own, or `R1`, `R2`, … assigned by prpd.
    pub id: String,
    /// What it requires, as written (without bullet, checkbox and id).
    pub text: String,
    /// The 1-based line it is on.
    pub line: usize,
    /// Whether the document gave the id.
    pub origin: IdOrigin,
    /// How prpd judges it.
    pub kind: RequirementKind,
}

/// Where a requirement's id comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum IdOrigin {
    /// The document names it (`AC-3`, `FR-001`, `1.2`, a scenario title), or it is an item of
    /// an acceptance-criteria list that prpd numbered: a test must cover it.
    Document,
    /// prpd assigned it to a success criterion or checklist item without an id: covered by a
    /// test that carries it, otherwise left for the QA agent and the human to judge.
    Assigned,
}

/// How a requirement is judged.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RequirementKind {
    /// Behaviour: covered by a test that ran, passed and carries the id in its name.
    Behaviour,
    /// Names a command: prpd runs it (in its check form) as evidence.
    Command {
        /// The command as the PRP gives it.
        command: String,
    },
    /// About the gate itself: judged by the check that measures it.
    Gate {
        /// Which measurement.
        gate: Gate,
    },
    /// A command that needs a service prpd does not start (an HTTP request to a local
    /// server): shown for a person to judge, never run and never passed.
    Manual {
        /// The command as the PRP gives it.
        command: String,
    },
}

/// A criterion about the gate itself, and the check of the built-in checklist that measures it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Gate {
    /// "All tests pass": F1.
    TestsPass,
    /// "No regressions", "existing tests keep passing": F1 (and, inside a run, F2P's
    /// pass-to-pass rule).
    NoRegressions,
    /// "Lint is clean", "no linting errors": C1.
    LintClean,
    /// "No type errors": C5.
    TypesCheck,
    /// "The project builds": F3.
    Builds,
    /// "Code is formatted": C6.
    Formatted,
}

impl Gate {
    /// The id of the built-in check that measures it.
    pub fn check_id(self) -> &'static str {
        match self {
            Gate::TestsPass | Gate::NoRegressions => "F1",
            Gate::LintClean => "C1",
            Gate::TypesCheck => "C5",
            Gate::Builds => "F3",
            Gate::Formatted => "C6",
        }
    }
}

impl Requirement {
    /// How a test's name starts to carry this requirement's id: `ac_3` for `AC-3`, `fr_001`
    /// for `FR-001`, `r2` for `R2`, `req_1_2` for Kiro's `1.2`, the scenario's title in
    /// snake case for a Gherkin scenario.
    pub fn test_name(&self) -> String {
        let words: Vec<String> = self
            .id
            .split(|c: char| !c.is_alphanumeric())
            .filter(|word| !word.is_empty())
            .map(str::to_lowercase)
            .collect();
        let name = words.join("_");
        if name.starts_with(|c: char| c.is_ascii_digit()) {
            format!("req_{name}")
        } else {
            name
        }
    }

    /// Whether the test called `test_name` (as a runner prints it: `tests/test_x.py::test_ac_1`,
    /// `tests::ac_1_clamps`, `TestAC1Clamp`, `ac 1 clamps`) carries this requirement's id.
    pub fn is_named_by(&self, test_name: &str) -> bool {
        names_id(&id_tokens(&self.id), test_name)
    }

    /// Whether a test must cover it (see [`IdOrigin`]).
    pub fn needs_a_test(&self) -> bool {
        self.kind == RequirementKind::Behaviour && self.origin == IdOrigin::Document
    }
}

/// Whether the test name carries the id whose tokens are `id`: the tokens appear in a row,
/// numbers compared by value (`FR-001` ~ `fr_1`), and not followed by another number (`AC-1`
/// is not named by `ac_1_2_…`, `AC-1.2`'s test). A word of the id may be split into humps in
/// the name (`github` ~ `GitHub`'s `git`, `hub`). `requirement` counts as `req`.
pub fn names_id(id: &[String], test_name: &str) -> bool {
    let name: Vec<String> = tokens(test_name)
        .into_iter()
        .map(|token| {
            if token == "requirement" {
                "req".to_owned()
            } else {
                token
            }
        })
        .collect();
    if id.is_empty() {
        return false;
    }
    (0..name.len()).any(|start| {
        matched_until(id, &name, start)
            .is_some_and(|end| !name.get(end).is_some_and(|token| is_number(token)))
    })
}

/// Where the match of `id`'s tokens that starts at `start` of `name` ends, if it matches.
fn matched_until(id: &[String], name: &[String], start: usize) -> Option<usize> {
    /// How many humps of a name one word of an id may span.
    const MAX_HUMPS: usize = 3;
    let mut position = start;
    for wanted in id {
        let humps = (1..=MAX_HUMPS).find(|humps| {
            name.get(position..position + humps).is_some_and(|found| {
                if *humps == 1 {
                    same_token(wanted, &found[0])
                } else {
                    !is_number(wanted) && found.concat() == *wanted
                }
            })
        })?;
        position += humps;
    }
    Some(position)
}

/// The tokens of an id as a test name carries them: its words, split between letters and
/// digits but not at humps (an id is written by a person: `GitHub` is one word). An id that
/// starts with a number (Kiro's `1.2`) gets the prefix `req`, since a name cannot start with
/// a digit.
pub fn id_tokens(id: &str) -> Vec<String> {
    let mut found = Vec::new();
    for word in id
        .split(|c: char| !c.is_alphanumeric())
        .filter(|word| !word.is_empty())
    {
        let mut current = String::new();
        let mut previous_digit = None;
        for char in word.chars() {
            let digit = char.is_ascii_digit();
            if previous_digit.is_some_and(|was| was != digit) {
                push_token(&mut found, &mut current);
            }
            previous_digit = Some(digit);
            current.extend(char.to_lowercase());
        }
        push_token(&mut found, &mut current);
    }
    if found.first().is_some_and(|token| is_number(token)) {
        found.insert(0, "req".to_owned());
    }
    found
}

fn same_token(wanted: &str, found: &str) -> bool {
    if is_number(wanted) && is_number(found) {
        wanted.trim_start_matches('0') == found.trim_start_matches('0')
    } else {
        wanted == found
    }
}

fn is_number(token: &str) -> bool {
    !token.is_empty() && token.bytes().all(|byte| byte.is_ascii_digit())
}

/// Lowercase word tokens of a name: split at anything that is not a letter or digit, between
/// letters and digits, and at camel-case humps (`TestAC1Clamp` → `test`, `ac`, `1`, `clamp`).
pub(crate) fn tokens(text: &str) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    let mut found = Vec::new();
    let mut current = String::new();
    for (index, &char) in chars.iter().enumerate() {
        if !char.is_alphanumeric() {
            push_token(&mut found, &mut current);
            continue;
        }
        if let Some(&previous) = index.checked_sub(1).and_then(|before| chars.get(before)) {
            let next = chars.get(index + 1).copied();
            let digit_edge =
                previous.is_alphanumeric() && (previous.is_ascii_digit() != char.is_ascii_digit());
            let hump = previous.is_lowercase() && char.is_uppercase();
            let acronym_end = previous.is_uppercase()
                && char.is_uppercase()
                && next.is_some_and(char::is_lowercase);
            if digit_edge || hump || acronym_end {
                push_token(&mut found, &mut current);
            }
        }
        current.extend(char.to_lowercase());
    }
    push_token(&mut found, &mut current);
    found
}

fn push_token(found: &mut Vec<String>, current: &mut String) {
    if !current.is_empty() {
        found.push(std::mem::take(current));
    }
}

/// Programs a criterion's backticked span may start with to count as a command.
const COMMAND_PROGRAMS: &[&str] = &[
    "make",
    "just",
    "npm",
    "npx",
    "pnpm",
    "yarn",
    "bun",
    "bunx",
    "node",
    "deno",
    "tsc",
    "eslint",
    "prettier",
    "vitest",
    "jest",
    "python",
    "python3",
    "pytest",
    "uv",
    "poetry",
    "pdm",
    "hatch",
    "tox",
    "nox",
    "ruff",
    "mypy",
    "pyright",
    "flake8",
    "black",
    "cargo",
    "go",
    "gofmt",
    "golangci-lint",
    "bash",
    "sh",
    "mvn",
    "gradle",
    "./gradlew",
    "./mvnw",
    "ctest",
    "cmake",
    "bundle",
    "rake",
    "rspec",
    "mix",
    "dotnet",
    "php",
    "composer",
    "phpunit",
    "swift",
    "lua",
    "busted",
    "bats",
    "prove",
    "curl",
    "wget",
    "http",
    "httpie",
];

/// Programs that do nothing useful without an argument (a bare `sh` reads its input).
const INTERPRETERS: &[&str] = &[
    "bash", "sh", "node", "deno", "python", "python3", "lua", "php",
];

/// Programs whose commands talk to a service: prpd does not start one, so it does not run them.
const SERVICE_PROGRAMS: &[&str] = &["curl", "wget", "http", "httpie"];

static BACKTICKED: LazyLock<Regex> = LazyLock::new(|| regex(r"`([^`]+)`"));
static ENV_ASSIGNMENT: LazyLock<Regex> = LazyLock::new(|| regex(r"^[A-Za-z_][A-Za-z0-9_]*="));
/// What the rest of a command criterion says when it asks the command to pass.
static PASS_PHRASE: LazyLock<Regex> = LazyLock::new(|| {
    regex(
        r"\b(?:pass|passes|passing|passed|succeed|succeeds|success|successful|successfully|exits? (?:with )?(?:0|zero|cleanly)|clean|green|no (?:errors?|warnings?|failures?)|works|ok)\b|\b(?:all )?tests pass|^[^a-z]*$",
    )
});

/// Phrases about the gate itself, each with the measurement that judges it, tried in order
/// on the criterion's lowercase text without its backticked spans.
static GATE_PHRASES: LazyLock<Vec<(Regex, Gate)>> = LazyLock::new(|| {
    // Each phrase must open the criterion: "Checklist covers: … lint clean …" is about a
    // checklist, not a statement about the gate.
    [
        (
            r"^(?:there are )?no (?:test )?regressions?\b|^(?:all |the )?existing tests? (?:still |keep |continue to )?(?:pass|passing|green)\b|^(?:it )?does(?: not|n't) break (?:any )?(?:existing )?tests?\b",
            Gate::NoRegressions,
        ),
        (
            r"^(?:all |the )?(?:the )?(?:unit |integration )?tests? (?:suite )?(?:pass(?:es)?|are passing|is green|green)\b",
            Gate::TestsPass,
        ),
        (
            r"^no lint(?:ing|er)? (?:errors|warnings|issues)\b|^(?:the )?lint(?:ing|er)? (?:is clean|passes|is green)",
            Gate::LintClean,
        ),
        (
            r"^no type(?:[- ]?check(?:ing)?)? errors\b|^(?:the )?types? checks? (?:pass|clean)|^(?:the )?type[- ]?check(?:ing)? passes",
            Gate::TypesCheck,
        ),
        (
            r"^(?:the )?(?:project|code|build) (?:builds|compiles|passes|succeeds)\b",
            Gate::Builds,
        ),
        (
            r"^(?:the )?code is formatted\b|^(?:the )?formatting (?:passes|is clean)\b|^no formatting (?:errors|issues)\b",
            Gate::Formatted,
        ),
    ]
    .into_iter()
    // The phrase is the whole criterion, or is followed only by a colon and what measures it
    // ("All tests pass: `pytest`"): "Tests pass with an empty input" is behaviour.
    .map(|(pattern, gate)| (regex(&format!(r"(?:{pattern})\s*(?:[.!:;].*)?$")), gate))
    .collect()
});

/// How a criterion's text is judged: a command it asks to pass, a phrase about the gate, or
/// behaviour. A command counts only when the rest of the criterion says it should pass
/// (`` `make test` passes ``, `` All tests pass: `pytest` ``): `` `python -m calc 6 7` prints
/// 42 `` asks for more than an exit code, and stays behaviour for a test to show.
pub(crate) fn classify(text: &str) -> RequirementKind {
    let prose = BACKTICKED.replace_all(text, " ").to_lowercase();
    let prose = prose.trim();
    if let Some(command) = named_command(text)
        && (prose.is_empty() || PASS_PHRASE.is_match(prose))
    {
        let program = program_of(&command);
        return if SERVICE_PROGRAMS.contains(&program.as_str()) {
            RequirementKind::Manual { command }
        } else {
            RequirementKind::Command { command }
        };
    }
    GATE_PHRASES
        .iter()
        .find(|(pattern, _)| pattern.is_match(prose))
        .map_or(RequirementKind::Behaviour, |(_, gate)| {
            RequirementKind::Gate { gate: *gate }
        })
}

/// The backticked spans of `text` that are command lines (a known program followed by at
/// least one argument, after any `NAME=value` prefixes; a lone `make` or `pytest` too), joined
/// with `&&`: `` `npm run lint` and `npm test` pass `` asks for both.
pub(crate) fn named_command(text: &str) -> Option<String> {
    let commands: Vec<&str> = BACKTICKED
        .captures_iter(text)
        .filter_map(|found| found.get(1))
        .map(|span| span.as_str().trim())
        .filter(|span| is_command_line(span))
        .collect();
    (!commands.is_empty()).then(|| commands.join(" && "))
}

/// Whether `line` starts with a program prpd knows as a command (see [`COMMAND_PROGRAMS`]);
/// of the shells and interpreters, only with an argument (a bare `sh` runs nothing).
pub(crate) fn is_command_line(line: &str) -> bool {
    let program = program_of(line);
    let has_argument = line
        .split_whitespace()
        .filter(|word| !ENV_ASSIGNMENT.is_match(word))
        .nth(1)
        .is_some();
    COMMAND_PROGRAMS.contains(&program.as_str())
        && (has_argument || !INTERPRETERS.contains(&program.as_str()))
}

/// The program a command line runs, past `NAME=value` prefixes.
fn program_of(line: &str) -> String {
    line.split_whitespace()
        .find(|word| !ENV_ASSIGNMENT.is_match(word))
        .unwrap_or_default()
        .to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn requirement(id: &str) -> Requirement {
        Requirement {
            id: id.to_owned(),
            text: "t".to_owned(),
            line: 1,
            origin: IdOrigin::Document,
            kind: RequirementKind::Behaviour,
        }
    }

    #[test]
    fn ids_are_named_by_the_tests_runners_print() {
        let cases: &[(&str, &str, bool)] = &[
            ("AC-1", "tests/test_calc.py::test_ac_1_multiply", true),
            ("AC-1", "tests::ac_1_clamps_low_values", true),
            ("AC-1", "TestAC1Clamp", true),
            ("AC-1", "TestAc1Clamp/negative", true),
            ("AC-1", "ac 1: multiply returns the product", true),
            ("AC-1", "AC-1 multiply returns the product", true),
            ("AC-1", "test_ac_10_other", false),
            ("AC-1", "test_ac_1_2_refines", false),
            ("AC-1.2", "test_ac_1_2_refines", true),
            ("AC-1", "test_multiply", false),
            ("AC-1", "test_bac_1", false),
            ("FR-001", "test_fr_001_creates_account", true),
            ("FR-001", "TestFR001CreatesAccount", true),
            ("FR-001", "test_fr_1_creates", true),
            ("FR-001", "test_fr_010", false),
            ("SC-002", "sc_002 completes quickly", true),
            ("R2", "test_r2_multiply_by_zero", true),
            ("R2", "TestR2Multiply", true),
            ("R2", "test_r20_other", false),
            ("R2", "test_bar2", false),
            ("1.2", "test_req_1_2_rejects_empty", true),
            ("1.2", "test_requirement_1_2_rejects_empty", true),
            ("1.2", "test_1_2", false),
            ("Multiply two numbers", "test_multiply_two_numbers", true),
            ("Multiply two numbers", "test_multiply_numbers", false),
            (
                "Sign in with GitHub",
                "test_sign_in_with_github_oauth",
                true,
            ),
            ("Sign in with GitHub", "TestSignInWithGitHub", true),
            ("Sign in with GitHub", "TestSignInWithGit", false),
        ];
        for (id, name, expected) in cases {
            assert_eq!(
                requirement(id).is_named_by(name),
                *expected,
                "{id} named by {name}"
            );
        }
    }

    #[test]
    fn the_expected_test_name_carries_the_id() {
        let cases = [
            ("AC-3", "ac_3"),
            ("FR-001", "fr_001"),
            ("R2", "r2"),
            ("1.2", "req_1_2"),
            ("Multiply two numbers", "multiply_two_numbers"),
        ];
        for (id, name) in cases {
            assert_eq!(requirement(id).test_name(), name, "{id}");
            assert!(
                requirement(id).is_named_by(&format!("test_{name}_x")),
                "{id}"
            );
        }
    }

    #[test]
    fn criteria_are_classified_by_their_shape() {
        let command = |command: &str| RequirementKind::Command {
            command: command.to_owned(),
        };
        let gate = |gate| RequirementKind::Gate { gate };
        let cases = [
            ("`make test` passes", command("make test")),
            (
                "`npm run lint` and `npm test` pass",
                command("npm run lint && npm test"),
            ),
            (
                "All tests pass: `uv run pytest tests/ -v`",
                command("uv run pytest tests/ -v"),
            ),
            (
                "`python3 -c \"import calc; assert calc.multiply(2, 3) == 6\"` succeeds",
                command("python3 -c \"import calc; assert calc.multiply(2, 3) == 6\""),
            ),
            (
                "`SOURCE_DATE_EPOCH=1 python -m build` works",
                command("SOURCE_DATE_EPOCH=1 python -m build"),
            ),
            ("`multiply(2, 3)` returns 6", RequirementKind::Behaviour),
            ("All tests pass", gate(Gate::TestsPass)),
            ("Tests pass", gate(Gate::TestsPass)),
            ("No regressions", gate(Gate::NoRegressions)),
            ("Existing tests keep passing", gate(Gate::NoRegressions)),
            ("No linting errors", gate(Gate::LintClean)),
            ("Lint is clean", gate(Gate::LintClean)),
            ("No type errors", gate(Gate::TypesCheck)),
            ("The project builds", gate(Gate::Builds)),
            (
                "Auto-SHIP triggers on QA approval",
                RequirementKind::Behaviour,
            ),
            (
                "Human escalation after 3 QA rejections",
                RequirementKind::Behaviour,
            ),
            (
                "Manual test successful: `curl -X POST http://localhost:8000/feature`",
                RequirementKind::Manual {
                    command: "curl -X POST http://localhost:8000/feature".to_owned(),
                },
            ),
            (
                "A user whose tests pass sees a green badge",
                RequirementKind::Behaviour,
            ),
            (
                "Checklist covers: tests passing, lint clean, complexity <10, docs updated",
                RequirementKind::Behaviour,
            ),
            ("Tests pass with an empty input", RequirementKind::Behaviour),
            (
                "AC-2: the `sh` wrapper quotes its arguments",
                RequirementKind::Behaviour,
            ),
            ("`python -m calc 6 7` prints 42", RequirementKind::Behaviour),
            (
                "`http` and `https` URLs are accepted",
                RequirementKind::Behaviour,
            ),
            ("`pytest` passes", command("pytest")),
            (
                "BATS tests pass: `bats tests/bats/qa_agent.bats` (51/51 tests passing)",
                command("bats tests/bats/qa_agent.bats"),
            ),
        ];
        for (text, expected) in cases {
            assert_eq!(classify(text), expected, "{text}");
        }
    }

    #[test]
    fn only_behaviour_with_the_documents_id_needs_a_test() {
        let mut found = requirement("AC-1");
        assert!(found.needs_a_test());
        found.origin = IdOrigin::Assigned;
        assert!(!found.needs_a_test());
        found.origin = IdOrigin::Document;
        found.kind = RequirementKind::Gate {
            gate: Gate::TestsPass,
        };
        assert!(!found.needs_a_test());
        assert_eq!(Gate::LintClean.check_id(), "C1");
    }
}
