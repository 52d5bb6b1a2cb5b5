//! justfile recipes as commands: `just test`, `just lint`, …
//!
//! A recipe header is a line at column 0: an optional `@`, the name, parameters, `:` and
//! dependencies; its body is the indented lines below. Settings, aliases, imports and
//! attributes (`[private]`) are skipped; assignments (`fmt_cmd := "black ."`) are kept, because
//! a recipe is judged by what it really runs: its body with every `{{…}}` filled in from the
//! variables, the parameters' defaults and `just_executable()` ([`Justfile::body_text`]). A
//! value prpd cannot compute (a function call, an `if`, a backtick) stays as written, so its
//! words are still judged. Filling in does bounded work: each variable is computed once, and a
//! text past [`MAX_EXPANDED`] bytes is refused by name, never judged in part. A recipe with a
//! parameter that has no default cannot run as plain `just <name>` and is not offered. As with
//! Makefiles, the text judged by [`super::is_safe`] includes the bodies of the dependencies,
//! `check` stands in for a missing `test` recipe, `all` for `build` (after the toolchain's own
//! build unless it clearly is one, as for `make all`), and `fmt`/`format` are a
//! format check only when what they run is one. A body that runs `just` again (`just fmt`,
//! `{{just_executable()}} fmt`) is followed by `follow.rs`, like every task runner a recipe
//! calls.

use std::collections::HashMap;
use std::fmt;

use super::{Candidate, CommandKind, DetectError, Directory};
use crate::safety::Unsafe;

/// The names just looks for, in its own order.
pub(super) const FILE_NAMES: &[&str] = &["justfile", "Justfile", ".justfile"];

/// Words that start a justfile line that is not a recipe.
const KEYWORDS: &[&str] = &["set", "alias", "export", "import", "mod", "unexport"];

/// The most bytes one recipe's text may reach once its `{{…}}` are filled in: far above any
/// real recipe, far below what would slow discovery.
const MAX_EXPANDED: usize = 64 * 1024;

/// How deep variables may refer to one another before the rest is kept as written.
const MAX_DEPTH: usize = 32;

/// A recipe's text grew past [`MAX_EXPANDED`] bytes; reads after "its variables".
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct TooLarge;

impl fmt::Display for TooLarge {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(formatter, "expand to more than {} KiB", MAX_EXPANDED / 1024)
    }
}

/// One recipe.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Recipe {
    pub(super) name: String,
    /// Whether `just <name>` runs it: every parameter has a default or is variadic (`*args`).
    pub(super) runs_without_arguments: bool,
    /// Each parameter's name and default expression, if it has one.
    pub(super) parameters: Vec<(String, Option<String>)>,
    pub(super) dependencies: Vec<String>,
    pub(super) body: Vec<String>,
}

/// A justfile's recipes and variables.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct Justfile {
    pub(super) recipes: Vec<Recipe>,
    /// Each assignment's name and expression, as written.
    variables: Vec<(String, String)>,
}

/// The justfile of `directory` (the first of [`FILE_NAMES`]) and the name it has, or `None`.
pub(super) fn load(
    directory: &Directory<'_>,
) -> Result<Option<(&'static str, Justfile)>, DetectError> {
    for name in FILE_NAMES {
        if let Some(text) = directory.read(name)? {
            return Ok(Some((name, parse(&text))));
        }
    }
    Ok(None)
}

/// The justfile called `name` in `directory` (what `just -f name` reads), or `None` when there
/// is no such file or `name` leaves the directory.
pub(super) fn load_named(
    directory: &Directory<'_>,
    name: &str,
) -> Result<Option<Justfile>, DetectError> {
    let inside = !name.is_empty()
        && std::path::Path::new(name)
            .components()
            .all(|component| matches!(component, std::path::Component::Normal(_)));
    if !inside {
        return Ok(None);
    }
    Ok(directory.read(name)?.map(|text| parse(&text)))
}

/// The justfile recipes of `directory` as candidates.
pub(super) fn candidates(directory: &Directory<'_>) -> Result<Vec<Candidate>, DetectError> {
    let Some((name, justfile)) = load(directory)? else {
        return Ok(Vec::new());
    };
    let file = directory.display(name);
    Ok(candidates_from(&justfile, |recipe| {
        format!("{file} recipe {recipe}")
    }))
}

fn candidates_from(justfile: &Justfile, source: impl Fn(&str) -> String) -> Vec<Candidate> {
    let mut candidates = Vec::new();
    for kind in CommandKind::ALL {
        for name in kind.make_task_names() {
            let Some(recipe) = justfile.recipe(name) else {
                continue;
            };
            if !recipe.runs_without_arguments {
                continue;
            }
            let command = format!("just {name}");
            let judged = match justfile.body_text(name, &[]) {
                Ok(judged) => judged,
                Err(reason) => {
                    candidates.push(Candidate::refused(
                        kind,
                        command,
                        source(name),
                        Unsafe(format!("could not be judged: its variables {reason}")),
                    ));
                    continue;
                }
            };
            if judged.trim().is_empty() {
                continue;
            }
            candidates.push(Candidate::task(kind, name, command, judged, source(name)));
        }
    }
    candidates
}

impl Justfile {
    /// The recipe called `name`.
    pub(super) fn recipe(&self, name: &str) -> Option<&Recipe> {
        self.recipes.iter().find(|recipe| recipe.name == name)
    }

    /// The recipe plain `just` runs: the first one.
    pub(super) fn default_recipe(&self) -> Option<&Recipe> {
        self.recipes.first()
    }

    /// The bodies `just <name>` runs, each `{{…}}` filled in (`overrides` are the command
    /// line's `NAME=value`): the recipe's own and its dependencies', recursively.
    pub(super) fn body_text(
        &self,
        name: &str,
        overrides: &[(String, String)],
    ) -> Result<String, TooLarge> {
        let mut interpolation = Filler {
            justfile: self,
            overrides,
            known: HashMap::new(),
            active: Vec::new(),
        };
        let mut lines = Vec::new();
        let mut size = 0;
        let mut pending = vec![name.to_owned()];
        let mut visited: Vec<String> = Vec::new();
        while let Some(current) = pending.pop() {
            if visited.contains(&current) {
                continue;
            }
            if let Some(recipe) = self.recipe(&current) {
                for line in &recipe.body {
                    let filled = interpolation.line(line, &recipe.parameters)?;
                    size += filled.len();
                    if size > MAX_EXPANDED {
                        return Err(TooLarge);
                    }
                    lines.push(filled);
                }
                pending.extend(recipe.dependencies.iter().cloned());
            }
            visited.push(current);
        }
        Ok(lines.join("\n"))
    }
}

/// Fills in the `{{…}}` of one justfile's recipes, each variable computed once.
struct Filler<'a> {
    justfile: &'a Justfile,
    overrides: &'a [(String, String)],
    /// Each variable computed so far.
    known: HashMap<String, String>,
    /// The variables being computed right now, outermost first.
    active: Vec<String>,
}

impl Filler<'_> {
    /// `line` with each `{{expression}}` replaced by its value (`{{{{` is a literal `{{`).
    fn line(
        &mut self,
        line: &str,
        parameters: &[(String, Option<String>)],
    ) -> Result<String, TooLarge> {
        let mut out = String::with_capacity(line.len());
        let mut rest = line;
        while let Some(open) = rest.find("{{") {
            out.push_str(&rest[..open]);
            let after = &rest[open + 2..];
            if let Some(escaped) = after.strip_prefix("{{") {
                out.push_str("{{");
                rest = escaped;
                continue;
            }
            let Some(close) = after.find("}}") else {
                out.push_str(&rest[open..]);
                rest = "";
                break;
            };
            let value = self.expression(&after[..close], parameters, 0)?;
            out.push_str(&value);
            if out.len() > MAX_EXPANDED {
                return Err(TooLarge);
            }
            rest = &after[close + 2..];
        }
        out.push_str(rest);
        Ok(out)
    }

    /// The value of a just expression: string literals, variables and parameters joined by
    /// `+` and `/`; anything else (a function call, an `if`) as written.
    fn expression(
        &mut self,
        expression: &str,
        parameters: &[(String, Option<String>)],
        depth: usize,
    ) -> Result<String, TooLarge> {
        let expression = expression.trim();
        if depth > MAX_DEPTH || expression.starts_with("if ") {
            return Ok(expression.to_owned());
        }
        let mut out = String::new();
        for (operator, term) in split_terms(expression) {
            if operator == Some('/') {
                out.push('/');
            }
            let value = self.term(term.trim(), parameters, depth)?;
            out.push_str(&value);
            if out.len() > MAX_EXPANDED {
                return Err(TooLarge);
            }
        }
        Ok(out)
    }

    fn term(
        &mut self,
        term: &str,
        parameters: &[(String, Option<String>)],
        depth: usize,
    ) -> Result<String, TooLarge> {
        if let Some(literal) = string_literal(term) {
            return Ok(literal.to_owned());
        }
        if let Some(inner) = term
            .strip_prefix('(')
            .and_then(|rest| rest.strip_suffix(')'))
        {
            return self.expression(inner, parameters, depth + 1);
        }
        if term == "just_executable()" {
            return Ok("just".to_owned());
        }
        if !is_identifier(term) {
            return Ok(term.to_owned());
        }
        if let Some((_, default)) = parameters.iter().find(|(name, _)| name == term) {
            return match default {
                Some(default) => self.expression(default, &[], depth + 1),
                None => Ok(format!("{{{{{term}}}}}")),
            };
        }
        if let Some((_, value)) = self.overrides.iter().find(|(name, _)| name == term) {
            return Ok(value.clone());
        }
        self.variable(term, depth)
    }

    /// The value of variable `name`, computed once; a variable met again while it is being
    /// computed, or not assigned at all, stays as written.
    fn variable(&mut self, name: &str, depth: usize) -> Result<String, TooLarge> {
        if let Some(known) = self.known.get(name) {
            return Ok(known.clone());
        }
        let justfile = self.justfile;
        let assigned = justfile
            .variables
            .iter()
            .rev()
            .find(|(variable, _)| variable == name);
        let Some((_, expression)) = assigned else {
            return Ok(format!("{{{{{name}}}}}"));
        };
        if self.active.iter().any(|active| active == name) {
            return Ok(format!("{{{{{name}}}}}"));
        }
        self.active.push(name.to_owned());
        let value = self.expression(expression, &[], depth + 1);
        self.active.pop();
        let value = value?;
        self.known.insert(name.to_owned(), value.clone());
        Ok(value)
    }
}

/// The terms of an expression with the operator before each (`"a" + b / "c"`), split outside
/// quotes, backticks and parentheses.
fn split_terms(expression: &str) -> Vec<(Option<char>, &str)> {
    let mut terms = Vec::new();
    let mut quote: Option<char> = None;
    let mut depth = 0usize;
    let mut start = 0;
    let mut operator = None;
    for (index, c) in expression.char_indices() {
        match quote {
            Some(open) if c == open => quote = None,
            Some(_) => {}
            None => match c {
                '"' | '\'' | '`' => quote = Some(c),
                '(' => depth += 1,
                ')' => depth = depth.saturating_sub(1),
                '+' | '/' if depth == 0 => {
                    terms.push((operator, &expression[start..index]));
                    operator = Some(c);
                    start = index + 1;
                }
                _ => {}
            },
        }
    }
    terms.push((operator, &expression[start..]));
    terms
}

/// The text of a quoted just string (`"black ."`, `'x'`, `"""…"""`), escapes left as written.
fn string_literal(term: &str) -> Option<&str> {
    ["\"\"\"", "'''", "\"", "'"].iter().find_map(|quote| {
        term.strip_prefix(quote)?
            .strip_suffix(quote)
            .filter(|_| term.len() >= 2 * quote.len())
    })
}

/// Whether `word` names a variable or parameter.
fn is_identifier(word: &str) -> bool {
    !word.is_empty()
        && !word.starts_with(|c: char| c.is_ascii_digit())
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

/// The recipes and variables of a justfile.
pub(super) fn parse(text: &str) -> Justfile {
    let mut justfile = Justfile::default();
    let mut in_recipe = false;
    for line in text.lines() {
        if line.starts_with([' ', '\t']) {
            let command = line.trim().trim_start_matches(['@', '-']).trim();
            if in_recipe
                && !command.is_empty()
                && !command.starts_with('#')
                && let Some(recipe) = justfile.recipes.last_mut()
            {
                recipe.body.push(command.to_owned());
            }
            continue;
        }
        if line.trim().is_empty() {
            continue;
        }
        in_recipe = false;
        if let Some((name, expression)) = parse_assignment(line) {
            justfile
                .variables
                .push((name.to_owned(), expression.to_owned()));
        } else if let Some(recipe) = parse_header(line) {
            justfile.recipes.push(recipe);
            in_recipe = true;
        }
    }
    justfile
}

/// `name := expression` (or `export name := expression`) when `line` assigns a variable.
fn parse_assignment(line: &str) -> Option<(&str, &str)> {
    let line = line.strip_prefix("export ").unwrap_or(line).trim_start();
    let (name, expression) = line.split_once(":=")?;
    let name = name.trim();
    is_identifier(name).then(|| (name, expression.trim()))
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
    let written = split_outside_quotes(&rest[..colon]);
    let runs_without_arguments = written.iter().all(|parameter| {
        parameter.contains('=') || parameter.starts_with('*') || parameter.starts_with("$*")
    });
    let parameters = written
        .iter()
        .map(|parameter| {
            let parameter = parameter.trim_start_matches(['$', '*', '+']);
            match parameter.split_once('=') {
                Some((name, default)) => (name.to_owned(), Some(default.to_owned())),
                None => (parameter.to_owned(), None),
            }
        })
        .collect();
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
        parameters,
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

/// Whitespace-separated words, keeping quoted and parenthesised defaults (`name="a b"`,
/// `target=("a" + src)`) in one word.
fn split_outside_quotes(text: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut quote: Option<char> = None;
    let mut depth = 0usize;
    for c in text.chars() {
        match quote {
            Some(open) => {
                word.push(c);
                if c == open {
                    quote = None;
                }
            }
            None if c.is_whitespace() && depth == 0 => {
                if !word.is_empty() {
                    words.push(std::mem::take(&mut word));
                }
            }
            None => {
                match c {
                    '"' | '\'' => quote = Some(c),
                    '(' => depth += 1,
                    ')' => depth = depth.saturating_sub(1),
                    _ => {}
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
        let justfile = parse(JUSTFILE);
        let summary: Vec<(&str, bool, Vec<&str>, Vec<&str>)> = justfile
            .recipes
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
        let justfile =
            parse("bench filter:\n    cargo bench {{filter}}\nbuild:\n    cargo build\n");
        let candidates = candidates_from(&justfile, |name| format!("justfile recipe {name}"));
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

    #[test]
    fn bodies_are_filled_in_from_variables_parameters_and_just_executable() {
        let justfile = parse(
            "fmt_cmd := \"black .\"\nexport tool := fmt_cmd + ' --quiet'\nsrc := \"src\" / \"app\"\nloop := loop + \"x\"\n\ntest:\n    {{just_executable()}} fmt\n    {{tool}} {{src}}\n\nfmt target=(\"a\" + src) *rest:\n    {{fmt_cmd}} {{target}} {{rest}} {{{{literal}} {{ if os() == \"linux\" { \"x\" } else { \"y\" } }}\n\nodd:\n    echo {{loop}} {{missing}} {{env_var('HOME')}}\n",
        );
        assert_eq!(
            justfile.body_text("test", &[]),
            Ok("just fmt\nblack . --quiet src/app".to_owned())
        );
        assert_eq!(
            justfile.body_text("fmt", &[]),
            Ok("black . asrc/app {{rest}} {{literal}} if os() == \"linux\" { \"x\" } else { \"y\" }".to_owned())
        );
        assert_eq!(
            justfile.body_text("fmt", &[("fmt_cmd".to_owned(), "ruff format".to_owned())]),
            Ok("ruff format asrc/app {{rest}} {{literal}} if os() == \"linux\" { \"x\" } else { \"y\" }".to_owned())
        );
        assert_eq!(
            justfile.body_text("odd", &[]),
            Ok("echo {{loop}}x {{missing}} env_var('HOME')".to_owned())
        );
    }

    #[test]
    fn variables_that_double_at_each_level_are_refused_fast() {
        let mut lines: Vec<String> = (0..40)
            .map(|level| {
                let next = level + 1;
                format!("v{level} := v{next} + v{next}")
            })
            .collect();
        lines.push(String::new());
        let mut text = lines.join("\n");
        text.push_str("v40 := \"go\"\ntest:\n    {{v0}} test\nshort:\n    {{v30}}\n");
        let justfile = parse(&text);
        let started = std::time::Instant::now();
        assert_eq!(justfile.body_text("test", &[]), Err(TooLarge));
        assert_eq!(
            justfile.body_text("short", &[]).map(|text| text.len()),
            Ok(2048)
        );
        assert!(started.elapsed() < std::time::Duration::from_secs(2));
        let candidates = candidates_from(&justfile, |name| format!("justfile recipe {name}"));
        assert_eq!(
            candidates[0].refused,
            Some(Unsafe(
                "could not be judged: its variables expand to more than 64 KiB".to_owned()
            ))
        );
    }
}
