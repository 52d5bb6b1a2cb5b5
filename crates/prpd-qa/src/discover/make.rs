//! Makefile targets as commands: `make test`, `make lint`, …
//!
//! The parser reads rule lines (`target another: prerequisites`) at the start of a line and
//! the tab-indented recipe lines under them; it skips special targets (`.PHONY`), pattern
//! rules (`%.o: %.c`), targets built from variables and conditionals (both branches of a
//! conditional are read, so whatever `make` would choose is judged). It keeps variable
//! assignments (`=`, `:=`, `::=`, `?=`, `+=`, `!=`, `define` blocks) and follows `include`d
//! files, because a recipe is judged by what it really runs: [`super::is_safe`] sees the recipe
//! with its variables expanded (`${DOCKER_RUN} go build` is `docker run … go build`) and the
//! recipes of prerequisite targets (`make lint` runs them too). A sub-make a recipe runs
//! (`$(MAKE) fmt`, `make -C sub test`) is followed by `follow.rs`, like every task runner a
//! recipe calls, through [`load`] and [`Makefile::goal_text`]. A variable assigned in several
//! branches expands to every value, each judged. This is `make -n` done by reading
//! rather than running: `make -n` would evaluate `$(shell …)` and run `+` lines, that is, run
//! the project's code while only deciding what to run, and cost a process per target.
//! Expansion does bounded work ([`expand`]): each variable is expanded once, and a Makefile
//! whose variables or includes go past the caps has its targets refused by name, never judged
//! in part.
//!
//! Conventional targets stand in for a kind ([`CommandKind::make_task_names`]): `check` for
//! the tests when there is no `test` (GNU's convention), `all` for the build (never for the
//! tests; and after the toolchain's own build, `go build ./...` or a CI build step, unless
//! what it runs is clearly a build and nothing else: [`super::Precedence::AfterDefaults`]),
//! `fmt`/`format` for the format check only when what it runs is a check
//! ([`super::CheckMode::Required`], decided once the calls are followed).

mod expand;

use std::path::Path;

use expand::Expander;

pub(super) use expand::Unexpandable;

use super::{Candidate, CommandKind, DetectError, Directory, logical_lines};
use crate::safety::Unsafe;

/// GNU make's file names, in the order make itself looks for them.
const FILE_NAMES: &[&str] = &["GNUmakefile", "makefile", "Makefile"];

/// Directives that start a non-rule line.
const DIRECTIVES: &[&str] = &[
    "ifeq", "ifneq", "ifdef", "ifndef", "else", "endif", "include", "-include", "sinclude",
    "export", "unexport", "override", "vpath", "undefine", "private",
];

/// Assignment operators, longest first so that `::=` is not read as `:` + `:=`.
const ASSIGNMENTS: &[&str] = &[":::=", "::=", ":=", "?=", "+=", "!=", "="];

/// How many rounds of `include`s (an included file's own includes are the next round) are
/// followed.
const MAX_NESTING: usize = 8;

/// How many included files one Makefile may read.
const MAX_INCLUDES: usize = 64;

/// What a recipe runs, expanded, or why it could not be.
type Expansion = Result<String, Unexpandable>;

/// A variable set on make's command line (`RUFF_ARGS=--fix`, `FLAGS+=-v`): it wins over the
/// Makefile's own assignments, or adds to them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Override {
    name: String,
    value: String,
    appends: bool,
}

impl Override {
    /// The override a make argument sets, or `None` when the word sets no variable.
    pub(super) fn parse(word: &str) -> Option<Override> {
        let (head, value) = word.split_once('=')?;
        let (name, appends) = match head.strip_suffix('+') {
            Some(name) => (name, true),
            None => (head.trim_end_matches([':', '?', '!']), false),
        };
        let plain = !name.is_empty()
            && !name.starts_with('-')
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'));
        plain.then(|| Override {
            name: name.to_owned(),
            value: value.to_owned(),
            appends,
        })
    }
}

/// One target and what running it involves.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Target {
    pub(super) name: String,
    pub(super) prerequisites: Vec<String>,
    pub(super) recipe: Vec<String>,
}

/// One Makefile's targets and variables (with its `include`d files' merged in).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct Makefile {
    pub(super) targets: Vec<Target>,
    /// Each variable with every value it may take (one per assignment branch).
    variables: Vec<(String, Vec<String>)>,
    includes: Vec<String>,
    /// Why its includes could not all be read, when they could not.
    incomplete: Option<Unexpandable>,
}

/// The Makefile targets of `directory` as candidates.
pub(super) fn candidates(directory: &Directory<'_>) -> Result<Vec<Candidate>, DetectError> {
    let Some((name, makefile)) = load(directory)? else {
        return Ok(Vec::new());
    };
    let file = directory.display(name);
    let mut variables = Expander::new(&makefile);
    let mut candidates = Vec::new();
    for kind in CommandKind::ALL {
        for target in kind.make_task_names() {
            let command = format!("make {target}");
            let source = format!("{file} target {target}");
            let expansion = match &makefile.incomplete {
                Some(reason) if makefile.target(target).is_some() => Err(reason.clone()),
                Some(_) | None => makefile.recipe_text(target, &mut variables),
            };
            let judged = match expansion {
                Ok(judged) => judged,
                Err(reason) => {
                    candidates.push(Candidate::refused(
                        kind,
                        command,
                        source,
                        Unsafe(format!("could not be judged: its variables {reason}")),
                    ));
                    continue;
                }
            };
            if judged.trim().is_empty() {
                continue;
            }
            candidates.push(Candidate::task(kind, target, command, judged, source));
        }
    }
    Ok(candidates)
}

/// The Makefile of `directory` (the first of [`FILE_NAMES`]) with its includes, and the name
/// it has, or `None`.
pub(super) fn load(
    directory: &Directory<'_>,
) -> Result<Option<(&'static str, Makefile)>, DetectError> {
    for name in FILE_NAMES {
        if let Some(makefile) = load_named(directory, name)? {
            return Ok(Some((name, makefile)));
        }
    }
    Ok(None)
}

/// The Makefile called `name` in `directory` (what `make -f name` reads) with its includes,
/// or `None` when there is no such file or `name` leaves the directory.
pub(super) fn load_named(
    directory: &Directory<'_>,
    name: &str,
) -> Result<Option<Makefile>, DetectError> {
    if !is_inside(name) {
        return Ok(None);
    }
    let Some(text) = directory.read(name)? else {
        return Ok(None);
    };
    let mut makefile = parse(&text);
    makefile.incomplete = read_includes(directory, &mut makefile)?.err();
    Ok(Some(makefile))
}

/// Whether `make <goal>` can build `goal` with no rule of the Makefile, through make's
/// built-in and pattern rules or because it is a file already there (`make calc.o`, `make
/// calc` beside `calc.c`): such a goal runs no recipe prpd could read, and is let through as
/// it was before sub-makes were followed.
pub(super) fn is_implicit_goal(directory: &Directory<'_>, goal: &str) -> bool {
    if goal.contains(['.', '/']) || directory.path(goal).exists() {
        return true;
    }
    let prefix = format!("{goal}.");
    std::fs::read_dir(directory.absolute()).is_ok_and(|entries| {
        entries.filter_map(Result::ok).any(|entry| {
            entry
                .file_name()
                .to_str()
                .is_some_and(|name| name.starts_with(&prefix))
        })
    })
}

/// Merges the files `makefile` includes, and theirs, into it; `Err` when they go on past
/// [`MAX_NESTING`] rounds or [`MAX_INCLUDES`] files, or their names cannot be expanded.
fn read_includes(
    directory: &Directory<'_>,
    makefile: &mut Makefile,
) -> Result<Result<(), Unexpandable>, DetectError> {
    let mut included: Vec<String> = Vec::new();
    for _ in 0..=MAX_NESTING {
        let mut pending: Vec<String> = Vec::new();
        let mut variables = Expander::new(makefile);
        for include in &makefile.includes {
            let expanded = match variables.expand(include) {
                Ok(expanded) => expanded,
                Err(reason) => return Ok(Err(reason)),
            };
            for name in expanded.split_whitespace() {
                if !included.iter().chain(&pending).any(|known| known == name) {
                    pending.push(name.to_owned());
                }
            }
        }
        if pending.is_empty() {
            return Ok(Ok(()));
        }
        if included.len() + pending.len() > MAX_INCLUDES {
            return Ok(Err(Unexpandable::Includes));
        }
        for include in pending {
            if is_inside(&include)
                && let Some(text) = directory.read(&include)?
            {
                makefile.merge(parse(&text));
            }
            included.push(include);
        }
    }
    Ok(Err(Unexpandable::Includes))
}

/// Whether `path` is a plain relative path that stays below its directory.
fn is_inside(path: &str) -> bool {
    !path.is_empty()
        && !path.contains('$')
        && Path::new(path)
            .components()
            .all(|component| matches!(component, std::path::Component::Normal(_)))
}

impl Makefile {
    /// What `make <name>` runs, expanded: the target's recipe and its prerequisites',
    /// recursively (`""` names the default goal, the first target). Empty when there is no
    /// such target or it runs nothing. A sub-make in a recipe (`$(MAKE) fmt`, `make -C docs
    /// check`) stays in the text, expanded: discovery follows it as it follows every task
    /// runner a recipe calls (`follow.rs`).
    pub(super) fn recipe_text(&self, name: &str, variables: &mut Expander<'_>) -> Expansion {
        let mut lines = Vec::new();
        let mut size = 0;
        let mut pending = vec![name.to_owned()];
        let mut visited: Vec<String> = Vec::new();
        while let Some(current) = pending.pop() {
            if visited.contains(&current) {
                continue;
            }
            let default_target = self.targets.first().map(|target| target.name.as_str());
            let wanted = if current.is_empty() {
                default_target.unwrap_or("")
            } else {
                current.as_str()
            };
            if let Some(target) = self.target(wanted) {
                for line in &target.recipe {
                    let expanded = variables.expand(line)?;
                    size += expanded.len();
                    lines.push(expanded);
                }
                for prerequisite in &target.prerequisites {
                    let expanded = variables.expand(prerequisite)?;
                    pending.extend(expanded.split_whitespace().map(str::to_owned));
                }
                if size > expand::MAX_EXPANDED {
                    return Err(Unexpandable::Size);
                }
            }
            visited.push(current);
        }
        Ok(lines.join("\n"))
    }

    /// What `make <goal> NAME=value…` runs: [`Makefile::recipe_text`] with the command line's
    /// variables in place of the Makefile's own (make lets them win), or `None` when the
    /// Makefile has no such target (nor any target, for the default goal `""`).
    pub(super) fn goal_text(&self, goal: &str, overrides: &[Override]) -> Option<Expansion> {
        let known = if goal.is_empty() {
            !self.targets.is_empty()
        } else {
            self.target(goal).is_some()
        };
        if !known {
            return None;
        }
        if let Some(reason) = &self.incomplete {
            return Some(Err(reason.clone()));
        }
        if overrides.is_empty() {
            return Some(self.recipe_text(goal, &mut Expander::new(self)));
        }
        let mut overridden = self.clone();
        for Override {
            name,
            value,
            appends,
        } in overrides
        {
            let known = overridden
                .variables
                .iter_mut()
                .find(|(known, _)| known == name);
            match known {
                Some((_, values)) if *appends => {
                    for known_value in values.iter_mut() {
                        known_value.push(' ');
                        known_value.push_str(value);
                    }
                }
                Some((_, values)) => *values = vec![value.clone()],
                None => overridden
                    .variables
                    .push((name.clone(), vec![value.clone()])),
            }
        }
        Some(overridden.recipe_text(goal, &mut Expander::new(&overridden)))
    }

    /// The target called `name`.
    fn target(&self, name: &str) -> Option<&Target> {
        self.targets.iter().find(|target| target.name == name)
    }

    /// The variable called `name`, as the Makefile spells it, with every value it may take.
    fn variable(&self, name: &str) -> Option<(&str, &[String])> {
        self.variables
            .iter()
            .find(|(variable, _)| variable == name)
            .map(|(variable, values)| (variable.as_str(), values.as_slice()))
    }

    fn assign(&mut self, name: &str, operator: &str, value: String) {
        let index = if let Some(index) = self.variables.iter().position(|(known, _)| known == name)
        {
            index
        } else {
            self.variables.push((name.to_owned(), Vec::new()));
            self.variables.len() - 1
        };
        let values = &mut self.variables[index].1;
        match operator {
            "+=" => match values.last_mut() {
                Some(last) => {
                    last.push(' ');
                    last.push_str(&value);
                }
                None => values.push(value),
            },
            "?=" if !values.is_empty() => {}
            _ => values.push(value),
        }
    }

    /// Adds an included file's targets and variables.
    fn merge(&mut self, other: Makefile) {
        for (name, values) in other.variables {
            for value in values {
                self.assign(&name, "=", value);
            }
        }
        for target in other.targets {
            match self
                .targets
                .iter_mut()
                .find(|known| known.name == target.name)
            {
                Some(known) => {
                    known.prerequisites.extend(target.prerequisites);
                    known.recipe.extend(target.recipe);
                }
                None => self.targets.push(target),
            }
        }
        self.includes.extend(other.includes);
    }
}

/// The targets, variables and includes of one Makefile's text.
pub(super) fn parse(text: &str) -> Makefile {
    let mut makefile = Makefile::default();
    let mut current: Vec<usize> = Vec::new();
    let mut define: Option<(String, Vec<String>)> = None;
    for line in logical_lines(text) {
        let trimmed = line.trim();
        let first_word = trimmed.split_whitespace().next().unwrap_or("");
        if let Some((name, body)) = &mut define {
            if first_word == "endef" {
                let name = std::mem::take(name);
                let value = std::mem::take(body).join("\n");
                makefile.assign(&name, "=", value);
                define = None;
            } else {
                body.push(line.trim().to_owned());
            }
            continue;
        }
        if let Some(recipe) = line.strip_prefix('\t') {
            let command = recipe.trim().trim_start_matches(['@', '-', '+']).trim();
            if !command.is_empty() && !command.starts_with('#') {
                for index in &current {
                    makefile.targets[*index].recipe.push(command.to_owned());
                }
            }
            continue;
        }
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        current.clear();
        let unprefixed = strip_prefixes(trimmed);
        if let Some(name) = unprefixed.strip_prefix("define ") {
            let name = name.split_whitespace().next().unwrap_or("").to_owned();
            define = Some((name, Vec::new()));
            continue;
        }
        if let Some(rest) = ["include ", "-include ", "sinclude "]
            .iter()
            .find_map(|directive| trimmed.strip_prefix(directive))
        {
            makefile
                .includes
                .extend(rest.split_whitespace().map(str::to_owned));
            continue;
        }
        if let Some((name, operator, value)) = parse_assignment(unprefixed) {
            makefile.assign(name, operator, value.to_owned());
            continue;
        }
        if line.starts_with(char::is_whitespace) || DIRECTIVES.contains(&first_word) {
            continue;
        }
        let Some(rule) = parse_rule(&line) else {
            continue;
        };
        for name in rule.names {
            let index = if let Some(index) = makefile
                .targets
                .iter()
                .position(|target| target.name == name)
            {
                index
            } else {
                makefile.targets.push(Target {
                    name,
                    prerequisites: Vec::new(),
                    recipe: Vec::new(),
                });
                makefile.targets.len() - 1
            };
            makefile.targets[index]
                .prerequisites
                .extend(rule.prerequisites.iter().cloned());
            makefile.targets[index]
                .recipe
                .extend(rule.inline_recipe.clone());
            current.push(index);
        }
    }
    makefile
}

/// A line without its `export`/`override`/`private` prefixes.
fn strip_prefixes(line: &str) -> &str {
    let mut line = line;
    loop {
        let Some(rest) = ["export ", "override ", "private "]
            .iter()
            .find_map(|prefix| line.strip_prefix(prefix))
        else {
            return line;
        };
        line = rest.trim_start();
    }
}

/// `NAME op value` when `line` assigns a variable.
fn parse_assignment(line: &str) -> Option<(&str, &'static str, &str)> {
    let name_end = line
        .find(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-')))
        .unwrap_or(line.len());
    let name = &line[..name_end];
    let rest = line[name_end..].trim_start();
    if name.is_empty() {
        return None;
    }
    ASSIGNMENTS.iter().find_map(|operator| {
        rest.strip_prefix(operator)
            .map(|value| (name, *operator, value.trim()))
    })
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

    fn recipe(makefile: &Makefile, name: &str) -> String {
        makefile
            .recipe_text(name, &mut Expander::new(makefile))
            .expect("expands")
    }

    #[test]
    fn parses_targets_recipes_and_prerequisites_and_skips_the_rest() {
        let makefile = parse(MAKEFILE);
        let names: Vec<&str> = makefile
            .targets
            .iter()
            .map(|target| target.name.as_str())
            .collect();
        assert_eq!(
            names,
            ["test", "lint", "fmt", "check", "build", "ci", "empty"]
        );
        assert_eq!(
            makefile.targets[0],
            Target {
                name: "test".to_owned(),
                prerequisites: vec!["build".to_owned()],
                recipe: vec!["$(PYTHON) -m pytest -q".to_owned()],
            }
        );
        assert_eq!(makefile.targets[2].recipe, ["black $(SRC)"]);
        assert_eq!(makefile.targets[4].recipe, ["go build ./..."]);
        assert_eq!(
            makefile.variable("HELP"),
            Some(("HELP", ["test: not a rule".to_owned()].as_slice()))
        );
        assert_eq!(
            makefile.variable("GOFLAGS"),
            Some(("GOFLAGS", ["-mod=mod".to_owned()].as_slice()))
        );
    }

    #[test]
    fn recipes_are_judged_expanded_with_their_prerequisites() {
        let makefile = parse(MAKEFILE);
        assert_eq!(
            recipe(&makefile, "test"),
            "python3 -m pytest -q\ngo build ./..."
        );
        assert_eq!(
            recipe(&makefile, "check"),
            "python3 -m pytest -q\ngo build ./...\nblack src\nruff check src"
        );
        assert_eq!(recipe(&makefile, "lint"), "ruff check src");
        assert_eq!(recipe(&makefile, "missing"), "");
    }

    #[test]
    fn prerequisites_named_by_a_variable_are_followed_one_by_one() {
        let makefile = parse(
            "CHECKS = lint $(WRAPPED)\nWRAPPED = fmt\ntest: $(CHECKS)\n\tpytest\nlint:\n\truff check .\nfmt:\n\tblack .\n",
        );
        assert_eq!(recipe(&makefile, "test"), "pytest\nblack .\nruff check .");
    }

    #[test]
    fn variables_expand_every_branch_and_leave_unknown_ones() {
        let makefile = parse(
            "ifeq ($(CI),)\nDOCKER_RUN = docker run --rm -v $(PWD):/src golang:1.22\nelse\nDOCKER_RUN =\nendif\nGO ?= go\nGO ?= gccgo\nFLAGS := -v\nFLAGS += -race\nbuild:\n\t${DOCKER_RUN} $(GO) build $(FLAGS) -o $$HOME/bin ./...\n",
        );
        assert_eq!(
            recipe(&makefile, "build"),
            "docker run --rm -v $(PWD):/src golang:1.22\n go build -v -race -o $HOME/bin ./..."
        );
    }

    #[test]
    fn sub_makes_stay_in_the_text_and_command_line_variables_win() {
        let makefile = parse(
            "ARGS = --check\ntest:\n\t$(MAKE) unit\n\t$(MAKE) -C docs check\nunit:\n\tblack $(ARGS) .\n",
        );
        assert_eq!(recipe(&makefile, "test"), "make unit\nmake -C docs check");
        let overrides = [Override::parse("ARGS=--quiet").expect("an override")];
        assert_eq!(
            makefile.goal_text("unit", &overrides),
            Some(Ok("black --quiet .".to_owned()))
        );
        let appended = [Override::parse("ARGS+=--fix").expect("an override")];
        assert_eq!(
            makefile.goal_text("unit", &appended),
            Some(Ok("black --check --fix .".to_owned()))
        );
        assert_eq!(Override::parse("--jobs=2"), None);
        assert_eq!(
            makefile.goal_text("unit", &[]),
            Some(Ok("black --check .".to_owned()))
        );
        assert_eq!(
            makefile.goal_text("", &[]),
            Some(Ok("make unit\nmake -C docs check".to_owned()))
        );
        assert_eq!(makefile.goal_text("missing", &[]), None);
        assert_eq!(parse("X = 1\n").goal_text("", &[]), None);
    }
}
