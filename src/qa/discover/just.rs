//! justfile recipes as commands: `just test`, `just lint`, …
//!
//! A recipe header is a line at column 0: an optional `@`, the name, parameters, `:` and
//! dependencies; its body is the indented lines below. Settings, aliases, imports, attributes
//! (`[private]`) and assignments (`x := …`) are skipped. A recipe with a parameter that has no
//! default cannot run as plain `just <name>` and is not offered. As with Makefiles, the text
//! judged by [`super::is_safe`] includes the bodies of the dependencies, `check` stands in
//! for a missing `test` recipe, `all` for `build`, and `fmt`/`format` are a format check only
//! when their body is one.

use super::{Candidate, CommandKind, DetectError, Directory};
use crate::qa::safety::formats_in_check_mode;

/// The names just looks for, in its own order.
const FILE_NAMES: &[&str] = &["justfile", "Justfile", ".justfile"];

/// Words that start a justfile line that is not a recipe.
const KEYWORDS: &[&str] = &["set", "alias", "export", "import", "mod", "unexport"];

/// One recipe.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Recipe {
    pub(super) name: String,
    /// Whether `just <name>` runs it: every parameter has a default or is variadic (`*args`).
    pub(super) runs_without_arguments: bool,
    pub(super) dependencies: Vec<String>,
    pub(super) body: Vec<String>,
}

/// The justfile recipes of `directory` as candidates.
pub(super) fn candidates(directory: &Directory<'_>) -> Result<Vec<Candidate>, DetectError> {
    for name in FILE_NAMES {
        if let Some(text) = directory.read(name)? {
            let file = directory.display(name);
            return Ok(candidates_from(&parse(&text), |recipe| {
                format!("{file} recipe {recipe}")
            }));
        }
    }
    Ok(Vec::new())
}

fn candidates_from(recipes: &[Recipe], source: impl Fn(&str) -> String) -> Vec<Candidate> {
    let mut candidates = Vec::new();
    for kind in CommandKind::ALL {
        for name in kind.make_task_names() {
            let Some(recipe) = recipes.iter().find(|recipe| recipe.name == *name) else {
                continue;
            };
            let judged = body_text(recipes, name);
            let not_a_check = kind.needs_check_mode(name) && !formats_in_check_mode(&judged);
            if recipe.runs_without_arguments && !judged.trim().is_empty() && !not_a_check {
                candidates.push(Candidate::new(
                    kind,
                    format!("just {name}"),
                    judged,
                    source(name),
                ));
            }
        }
    }
    candidates
}

/// The bodies `just <name>` runs: the recipe's own and its dependencies', recursively.
fn body_text(recipes: &[Recipe], name: &str) -> String {
    let mut lines = Vec::new();
    let mut pending = vec![name.to_owned()];
    let mut visited: Vec<String> = Vec::new();
    while let Some(current) = pending.pop() {
        if visited.contains(&current) {
            continue;
        }
        if let Some(recipe) = recipes.iter().find(|recipe| recipe.name == current) {
            lines.extend(recipe.body.iter().cloned());
            pending.extend(recipe.dependencies.iter().cloned());
        }
        visited.push(current);
    }
    lines.join("\n")
}

/// The recipes of a justfile.
pub(super) fn parse(text: &str) -> Vec<Recipe> {
    let mut recipes: Vec<Recipe> = Vec::new();
    let mut in_recipe = false;
    for line in text.lines() {
        if line.starts_with([' ', '\t']) {
            let command = line.trim().trim_start_matches(['@', '-']).trim();
            if in_recipe
                && !command.is_empty()
                && !command.starts_with('#')
                && let Some(recipe) = recipes.last_mut()
            {
                recipe.body.push(command.to_owned());
            }
            continue;
        }
        if line.trim().is_empty() {
            continue;
        }
        in_recipe = false;
        if let Some(recipe) = parse_header(line) {
            recipes.push(recipe);
            in_recipe = true;
        }
    }
    recipes
}

/// A recipe header line, or `None` for any other top-level line.
fn parse_header(line: &str) -> Option<Recipe> {
    if line.starts_with(['#', '[']) {
        return None;
    }
    let first_word = line.split_whitespace().next().unwrap_or("");
    if KEYWORDS.contains(&first_word) {
        return None;
    }
    let line = line.strip_prefix('@').unwrap_or(line);
    let name_end = line
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '-'))
        .unwrap_or(line.len());
    let (name, rest) = line.split_at(name_end);
    if name.is_empty() || rest.trim_start().starts_with(":=") {
        return None;
    }
    let colon = header_colon(rest)?;
    let parameters = split_outside_quotes(&rest[..colon]);
    let runs_without_arguments = parameters.iter().all(|parameter| {
        parameter.contains('=') || parameter.starts_with('*') || parameter.starts_with("$*")
    });
    let dependencies = rest[colon + 1..]
        .split_whitespace()
        .map(|word| word.trim_matches(['(', ')']))
        .filter(|word| {
            !word.is_empty()
                && *word != "&&"
                && word
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        })
        .map(str::to_owned)
        .collect();
    Some(Recipe {
        name: name.to_owned(),
        runs_without_arguments,
        dependencies,
        body: Vec::new(),
    })
}

/// The byte index of the `:` that ends a header's parameters: outside quotes and not part
/// of `:=`.
fn header_colon(rest: &str) -> Option<usize> {
    let mut quote: Option<char> = None;
    let bytes: Vec<(usize, char)> = rest.char_indices().collect();
    for (position, (index, c)) in bytes.iter().enumerate() {
        match quote {
            Some(open) if *c == open => quote = None,
            None if matches!(c, '"' | '\'') => quote = Some(*c),
            None if *c == ':' => {
                let next = bytes.get(position + 1).map(|(_, next)| *next);
                return (next != Some('=')).then_some(*index);
            }
            Some(_) | None => {}
        }
    }
    None
}

/// Whitespace-separated words, keeping quoted defaults (`name="a b"`) in one word.
fn split_outside_quotes(text: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut quote: Option<char> = None;
    for c in text.chars() {
        match quote {
            Some(open) => {
                word.push(c);
                if c == open {
                    quote = None;
                }
            }
            None if c.is_whitespace() => {
                if !word.is_empty() {
                    words.push(std::mem::take(&mut word));
                }
            }
            None => {
                if matches!(c, '"' | '\'') {
                    quote = Some(c);
                }
                word.push(c);
            }
        }
    }
    if !word.is_empty() {
        words.push(word);
    }
    words
}

#[cfg(test)]
mod tests {
    use super::*;

    const JUSTFILE: &str = "\
set shell := [\"bash\", \"-c\"]
alias t := test
version := \"1.0\"

# Run the tests.
test *args: build
    cargo test {{args}}

[private]
@build:
    cargo build

lint target=\"a b:c\":
    # comment
    cargo clippy -- -D warnings

fmt:
    cargo fmt

check: lint fmt
bench filter:
    cargo bench {{filter}}
";

    #[test]
    fn parses_recipes_parameters_dependencies_and_bodies() {
        let recipes = parse(JUSTFILE);
        let summary: Vec<(&str, bool, Vec<&str>, Vec<&str>)> = recipes
            .iter()
            .map(|recipe| {
                (
                    recipe.name.as_str(),
                    recipe.runs_without_arguments,
                    recipe.dependencies.iter().map(String::as_str).collect(),
                    recipe.body.iter().map(String::as_str).collect(),
                )
            })
            .collect();
        assert_eq!(
            summary,
            [
                ("test", true, vec!["build"], vec!["cargo test {{args}}"]),
                ("build", true, vec![], vec!["cargo build"]),
                ("lint", true, vec![], vec!["cargo clippy -- -D warnings"]),
                ("fmt", true, vec![], vec!["cargo fmt"]),
                ("check", true, vec!["lint", "fmt"], vec![]),
                ("bench", false, vec![], vec!["cargo bench {{filter}}"]),
            ]
        );
    }

    #[test]
    fn candidates_skip_recipes_needing_arguments() {
        let recipes = parse("bench filter:\n    cargo bench {{filter}}\nbuild:\n    cargo build\n");
        let candidates = candidates_from(&recipes, |name| format!("justfile recipe {name}"));
        assert_eq!(
            candidates,
            [Candidate::new(
                CommandKind::Build,
                "just build".to_owned(),
                "cargo build".to_owned(),
                "justfile recipe build".to_owned()
            )]
        );
    }
}
