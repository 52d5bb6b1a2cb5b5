//! Makefile targets as commands: `make test`, `make lint`, …
//!
//! The parser reads rule lines (`target another: prerequisites`) at the start of a line and
//! the tab-indented recipe lines under them; it skips variable assignments (`=`, `:=`, `::=`,
//! `?=`, `+=`, `!=`), special targets (`.PHONY`), pattern rules (`%.o: %.c`), targets built
//! from variables, conditionals and `define` blocks. It does not expand variables: it only needs
//! target names and the recipe text that [`super::is_safe`] judges, which includes the recipes
//! of prerequisite targets, since `make lint` runs them too.
//!
//! `make check` is taken as the test command when there is no `test` target: by GNU
//! convention `check` runs the test suite.

use super::{Candidate, CommandKind, DetectError, Directory, logical_lines};

/// GNU make's file names, in the order make itself looks for them.
const FILE_NAMES: &[&str] = &["GNUmakefile", "makefile", "Makefile"];

/// Directives that start a non-rule line.
const DIRECTIVES: &[&str] = &[
    "ifeq", "ifneq", "ifdef", "ifndef", "else", "endif", "include", "-include", "sinclude",
    "export", "unexport", "override", "vpath", "undefine", "private",
];

/// One target and what running it involves.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Target {
    pub(super) name: String,
    pub(super) prerequisites: Vec<String>,
    pub(super) recipe: Vec<String>,
}

/// The Makefile targets of `directory` as candidates.
pub(super) fn candidates(directory: &Directory<'_>) -> Result<Vec<Candidate>, DetectError> {
    for name in FILE_NAMES {
        if let Some(text) = directory.read(name)? {
            let file = directory.display(name);
            return Ok(candidates_from(&parse(&text), |target| {
                format!("{file} target {target}")
            }));
        }
    }
    Ok(Vec::new())
}

fn candidates_from(targets: &[Target], source: impl Fn(&str) -> String) -> Vec<Candidate> {
    let mut candidates = Vec::new();
    for kind in CommandKind::ALL {
        for name in kind.make_task_names() {
            let judged = recipe_text(targets, name);
            if !judged.trim().is_empty() {
                candidates.push(Candidate::new(
                    kind,
                    format!("make {name}"),
                    judged,
                    source(name),
                ));
            }
        }
    }
    candidates
}

/// The recipes `make <name>` runs: the target's own and its prerequisites', recursively.
/// Empty when there is no such target or it runs nothing.
fn recipe_text(targets: &[Target], name: &str) -> String {
    let mut lines = Vec::new();
    let mut pending = vec![name.to_owned()];
    let mut visited: Vec<String> = Vec::new();
    while let Some(current) = pending.pop() {
        if visited.contains(&current) {
            continue;
        }
        if let Some(target) = targets.iter().find(|target| target.name == current) {
            lines.extend(target.recipe.iter().cloned());
            pending.extend(target.prerequisites.iter().cloned());
        }
        visited.push(current);
    }
    lines.join("\n")
}

/// The targets of a Makefile, merged when a target appears on several rule lines.
pub(super) fn parse(text: &str) -> Vec<Target> {
    let mut targets: Vec<Target> = Vec::new();
    let mut current: Vec<usize> = Vec::new();
    let mut in_define = false;
    for line in logical_lines(text) {
        let trimmed = line.trim();
        let first_word = trimmed.split_whitespace().next().unwrap_or("");
        if in_define {
            in_define = first_word != "endef";
            continue;
        }
        if let Some(recipe) = line.strip_prefix('\t') {
            let command = recipe.trim().trim_start_matches(['@', '-', '+']).trim();
            if !command.is_empty() && !command.starts_with('#') {
                for index in &current {
                    targets[*index].recipe.push(command.to_owned());
                }
            }
            continue;
        }
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        current.clear();
        if first_word == "define" {
            in_define = true;
            continue;
        }
        if line.starts_with(char::is_whitespace) || DIRECTIVES.contains(&first_word) {
            continue;
        }
        let Some(rule) = parse_rule(&line) else {
            continue;
        };
        for name in rule.names {
            let index = if let Some(index) = targets.iter().position(|target| target.name == name) {
                index
            } else {
                targets.push(Target {
                    name,
                    prerequisites: Vec::new(),
                    recipe: Vec::new(),
                });
                targets.len() - 1
            };
            targets[index]
                .prerequisites
                .extend(rule.prerequisites.iter().cloned());
            targets[index].recipe.extend(rule.inline_recipe.clone());
            current.push(index);
        }
    }
    targets
}

#[derive(Debug)]
struct Rule {
    names: Vec<String>,
    prerequisites: Vec<String>,
    inline_recipe: Option<String>,
}

/// A rule line's targets, prerequisites and `; recipe`, or `None` when the line is not a rule
/// prpd can use.
fn parse_rule(line: &str) -> Option<Rule> {
    let colon = line.find(':')?;
    let (head, rest) = (&line[..colon], &line[colon + 1..]);
    let rest = rest.strip_prefix(':').unwrap_or(rest);
    if head.contains('=') || rest.starts_with('=') {
        return None;
    }
    let (prerequisites, inline_recipe) = match rest.split_once(';') {
        Some((prerequisites, recipe)) => (prerequisites, Some(recipe.trim().to_owned())),
        None => (rest, None),
    };
    if prerequisites.contains('=') {
        return None;
    }
    let names: Vec<String> = head
        .split_whitespace()
        .filter(|name| !name.starts_with('.') && !name.contains(['%', '$']))
        .map(str::to_owned)
        .collect();
    if names.is_empty() {
        return None;
    }
    Some(Rule {
        names,
        prerequisites: prerequisites
            .split_whitespace()
            .filter(|name| *name != "|")
            .map(str::to_owned)
            .collect(),
        inline_recipe: inline_recipe.filter(|recipe| !recipe.is_empty()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const MAKEFILE: &str = "\
# Build and check.
PYTHON ?= python3
SRC := src
LDFLAGS = -X main.version=$(VERSION)
export GOFLAGS=-mod=mod

.PHONY: test lint check fmt build

test: build
\t@$(PYTHON) -m pytest \\
\t  -q
lint:
\truff check $(SRC)
fmt:
\t-black $(SRC)
check: lint fmt test
build: ; go build ./...
%.o: %.c
\tcc -c $<
ifeq ($(CI),true)
ci: test
endif
define HELP
test: not a rule
endef
empty:
";

    #[test]
    fn parses_targets_recipes_and_prerequisites_and_skips_the_rest() {
        let targets = parse(MAKEFILE);
        let names: Vec<&str> = targets.iter().map(|target| target.name.as_str()).collect();
        assert_eq!(
            names,
            ["test", "lint", "fmt", "check", "build", "ci", "empty"]
        );
        assert_eq!(
            targets[0],
            Target {
                name: "test".to_owned(),
                prerequisites: vec!["build".to_owned()],
                recipe: vec!["$(PYTHON) -m pytest -q".to_owned()],
            }
        );
        assert_eq!(targets[2].recipe, ["black $(SRC)"]);
        assert_eq!(targets[4].recipe, ["go build ./..."]);
    }

    #[test]
    fn candidates_include_prerequisite_recipes_and_check_as_test_fallback() {
        let targets = parse(MAKEFILE);
        let candidates = candidates_from(&targets, |name| format!("Makefile target {name}"));
        let summary: Vec<(CommandKind, &str, &str)> = candidates
            .iter()
            .map(|candidate| {
                (
                    candidate.kind,
                    candidate.command.as_str(),
                    candidate.judged.as_str(),
                )
            })
            .collect();
        assert_eq!(
            summary,
            [
                (
                    CommandKind::Test,
                    "make test",
                    "$(PYTHON) -m pytest -q\ngo build ./..."
                ),
                (
                    CommandKind::Test,
                    "make check",
                    "$(PYTHON) -m pytest -q\ngo build ./...\nblack $(SRC)\nruff check $(SRC)"
                ),
                (CommandKind::Lint, "make lint", "ruff check $(SRC)"),
                (CommandKind::Build, "make build", "go build ./..."),
            ]
        );
        assert_eq!(candidates[2].source, "Makefile target lint");
    }
}
