//! Makefile targets as commands: `make test`, `make lint`, …
//!
//! The parser reads rule lines (`target another: prerequisites`) at the start of a line and
//! the tab-indented recipe lines under them; it skips special targets (`.PHONY`), pattern
//! rules (`%.o: %.c`), targets built from variables and conditionals (both branches of a
//! conditional are read, so whatever `make` would choose is judged). It keeps variable
//! assignments (`=`, `:=`, `::=`, `?=`, `+=`, `!=`, `define` blocks) and follows `include`d
//! files, because a recipe is judged by what it really runs: [`super::is_safe`] sees the recipe
//! with its variables expanded (`${DOCKER_RUN} go build` is `docker run … go build`), the
//! recipes of prerequisite targets (`make lint` runs them too), and the recipes of the targets
//! a recipe runs through a sub-make (`$(MAKE) fmt`, `make -C sub test`). A variable assigned
//! in several branches expands to every value, each judged. This is `make -n` done by reading
//! rather than running: `make -n` would evaluate `$(shell …)` and run `+` lines, that is, run
//! the project's code while only deciding what to run, and cost a process per target.
//! Expansion does bounded work ([`expand`]): each variable is expanded once, and a Makefile
//! whose variables or includes go past the caps has its targets refused by name, never judged
//! in part.
//!
//! Conventional targets stand in for a kind ([`CommandKind::make_task_names`]): `check` for
//! the tests when there is no `test` (GNU's convention), `all` for the build (never for the
//! tests), `fmt`/`format` for the format check only when the recipe is a check.

mod expand;

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use expand::{Expander, Unexpandable};

use super::{Candidate, CommandKind, DetectError, Directory, logical_lines};
use crate::qa::safety::{Unsafe, formats_in_check_mode};

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
    let mut subs = SubMakes::new(directory);
    let mut candidates = Vec::new();
    for kind in CommandKind::ALL {
        for target in kind.make_task_names() {
            let command = format!("make {target}");
            let source = format!("{file} target {target}");
            let expansion = match &makefile.incomplete {
                Some(reason) if makefile.target(target).is_some() => Err(reason.clone()),
                Some(_) | None => {
                    makefile.recipe_text(target, &mut variables, &mut |sub, name| {
                        subs.recipe(sub, name)
                    })?
                }
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
            if judged.trim().is_empty()
                || (kind.needs_check_mode(target) && !formats_in_check_mode(&judged))
            {
                continue;
            }
            candidates.push(Candidate::new(kind, command, judged, source));
        }
    }
    Ok(candidates)
}

/// The Makefiles of the folders recipes run `make -C <folder>` in, each read and each target
/// expanded once.
struct SubMakes<'a> {
    directory: &'a Directory<'a>,
    makefiles: HashMap<String, Option<Makefile>>,
    recipes: HashMap<(String, String), Expansion>,
}

impl<'a> SubMakes<'a> {
    fn new(directory: &'a Directory<'a>) -> SubMakes<'a> {
        SubMakes {
            directory,
            makefiles: HashMap::new(),
            recipes: HashMap::new(),
        }
    }

    /// What `make -C sub target` runs (its own sub-makes are not followed further); empty
    /// when `sub` has no Makefile.
    fn recipe(&mut self, sub: &str, target: &str) -> Result<Expansion, DetectError> {
        let key = (sub.to_owned(), target.to_owned());
        if let Some(known) = self.recipes.get(&key) {
            return Ok(known.clone());
        }
        if !self.makefiles.contains_key(sub) {
            let loaded = load_sub(self.directory, sub)?;
            self.makefiles.insert(sub.to_owned(), loaded);
        }
        let expansion = match &self.makefiles[sub] {
            None => Ok(String::new()),
            Some(nested) => match &nested.incomplete {
                Some(reason) => Err(reason.clone()),
                None => nested.recipe_text(target, &mut Expander::new(nested), &mut |_, _| {
                    Ok(Ok(String::new()))
                })?,
            },
        };
        self.recipes.insert(key, expansion.clone());
        Ok(expansion)
    }
}

/// The Makefile of `directory` (the first of [`FILE_NAMES`]) with its includes, or `None`.
fn load(directory: &Directory<'_>) -> Result<Option<(&'static str, Makefile)>, DetectError> {
    for name in FILE_NAMES {
        if let Some(text) = directory.read(name)? {
            let mut makefile = parse(&text);
            makefile.incomplete = read_includes(directory, &mut makefile)?.err();
            return Ok(Some((name, makefile)));
        }
    }
    Ok(None)
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

/// The Makefile of `sub`, a folder a recipe runs `make -C sub` in.
fn load_sub(directory: &Directory<'_>, sub: &str) -> Result<Option<Makefile>, DetectError> {
    if !is_inside(sub) {
        return Ok(None);
    }
    let relative: PathBuf = directory.relative().join(sub);
    let nested = Directory::new(directory.repo(), &relative);
    Ok(load(&nested)?.map(|(_, makefile)| makefile))
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
    /// What `make <name>` runs, expanded: the target's recipe and its prerequisites', and
    /// the recipes of the targets its sub-makes run (`sub_recipe(folder, target)` for a
    /// `make -C folder`), recursively. Empty when there is no such target or it runs nothing.
    fn recipe_text(
        &self,
        name: &str,
        variables: &mut Expander<'_>,
        sub_recipe: &mut dyn FnMut(&str, &str) -> Result<Expansion, DetectError>,
    ) -> Result<Expansion, DetectError> {
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
                    let expanded = match variables.expand(line) {
                        Ok(expanded) => expanded,
                        Err(reason) => return Ok(Err(reason)),
                    };
                    for invocation in sub_makes(&expanded) {
                        match invocation.directory {
                            None => pending.extend(invocation.targets),
                            Some(sub) => {
                                for nested_target in &invocation.targets {
                                    match sub_recipe(&sub, nested_target)? {
                                        Ok(nested) => {
                                            size += nested.len();
                                            lines.push(nested);
                                        }
                                        Err(reason) => return Ok(Err(reason)),
                                    }
                                }
                            }
                        }
                    }
                    size += expanded.len();
                    lines.push(expanded);
                }
                for prerequisite in &target.prerequisites {
                    match variables.expand(prerequisite) {
                        Ok(expanded) => {
                            pending.extend(expanded.split_whitespace().map(str::to_owned));
                        }
                        Err(reason) => return Ok(Err(reason)),
                    }
                }
                if size > expand::MAX_EXPANDED {
                    return Ok(Err(Unexpandable::Size));
                }
            }
            visited.push(current);
        }
        Ok(Ok(lines.join("\n")))
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

/// A `make` a recipe line runs: the folder it runs in (`-C dir`) and the targets it names.
#[derive(Debug, PartialEq, Eq)]
struct SubMake {
    directory: Option<String>,
    targets: Vec<String>,
}

/// The sub-makes of an expanded recipe line (`make fmt`, `make -C docs check`).
fn sub_makes(line: &str) -> Vec<SubMake> {
    let mut found = Vec::new();
    for segment in line.split(['\n', ';', '|', '&', '(', ')', '`']) {
        let words: Vec<&str> = segment.split_whitespace().collect();
        let Some(start) = words
            .iter()
            .position(|word| matches!(word.rsplit('/').next(), Some("make" | "gmake")))
        else {
            continue;
        };
        let mut directory = None;
        let mut targets = Vec::new();
        let mut rest = words[start + 1..].iter();
        while let Some(word) = rest.next() {
            if *word == "-C" {
                directory = rest.next().map(|dir| (*dir).to_owned());
            } else if let Some(dir) = word.strip_prefix("--directory=") {
                directory = Some(dir.to_owned());
            } else if matches!(*word, "-f" | "--file" | "-I" | "-j" | "-o" | "-W") {
                rest.next();
            } else if !word.starts_with('-') && !word.contains('=') {
                targets.push((*word).to_owned());
            }
        }
        if targets.is_empty() {
            targets.push(String::new());
        }
        found.push(SubMake { directory, targets });
    }
    found
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
            .recipe_text(name, &mut Expander::new(makefile), &mut |_, _| {
                Ok(Ok(String::new()))
            })
            .expect("no sub-make to load")
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
    fn sub_makes_are_followed_into_their_targets() {
        let makefile = parse("test:\n\t$(MAKE) unit\n\t$(MAKE) -C docs check\nunit:\n\tpytest\n");
        let text = makefile
            .recipe_text("test", &mut Expander::new(&makefile), &mut |sub, target| {
                assert_eq!((sub, target), ("docs", "check"));
                Ok(Ok("sphinx-build -W docs out".to_owned()))
            })
            .expect("loads")
            .expect("expands");
        assert_eq!(
            text,
            "make unit\nsphinx-build -W docs out\nmake -C docs check\npytest"
        );
        assert_eq!(
            sub_makes("cd x && make -s -j4 lint test V=1"),
            [SubMake {
                directory: None,
                targets: vec!["lint".to_owned(), "test".to_owned()],
            }]
        );
    }
}
