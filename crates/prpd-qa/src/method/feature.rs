//! How a PRP's feature is recognised in documentation. The README and CHANGELOG checks both
//! ask whether a document tells its reader about the feature under QA, so the rule lives here,
//! once.
//!
//! A feature is known by its **names** and its **title**. The names are what a user calls:
//! the backticked identifiers of the PRP's title, goal and criteria (`multiply(a, b)` gives
//! `multiply`; paths, commands with arguments, literals and tool names such as `pytest` are
//! not names) and, against a base, the public names the change added to the code (`def
//! multiply`, `pub fn clamp`, an `--option`). The title gives key words, matched by stem
//! (`multiply` ~ `multiplication`: the same first five letters, or one word the start of the
//! other).
//!
//! The documents are read as a reader sees them (`visible.rs`) and in paragraphs (blocks of
//! lines; a heading belongs to the block below it). Two readings:
//!
//! - **Documentation** (README, `docs/`): a paragraph documents the feature when it names one
//!   of the feature's names and says something besides the names and the title (a word of its
//!   own, such as `returns` or `product`, or a number of an example). When the feature has no
//!   names, the title (or most of its key words) takes their place, with the same need for a
//!   word of its own. So a README that only gains the title as a sentence, or a bare list of
//!   names and title words, documents nothing, and when the feature has names, the title alone
//!   never stands in for them: keyword stuffing stays caught, while any honest section that
//!   names the function passes whatever its wording.
//! - **Entry** (changelog): a changelog entry is a title by nature, so naming one of the names
//!   (or a word of a name's stem: `multiplies` for `multiply`) or the title (or most of its key
//!   words) is enough.

use std::sync::LazyLock;

use regex::Regex;

use super::added_code::CodeName;
use super::regex;
use prpd_prp::Prp;

/// Words too common to identify a feature.
const STOP_WORDS: &[&str] = &[
    "the",
    "and",
    "for",
    "with",
    "from",
    "into",
    "add",
    "adds",
    "adding",
    "support",
    "feature",
    "implement",
    "implementation",
    "new",
    "prp",
    "use",
    "using",
    "via",
    "para",
    "com",
    "uma",
    "dos",
    "das",
    "que",
    "requirements",
    "requirement",
    "document",
    "specification",
    "spec",
    "scenario",
    "story",
    "user",
];

/// Words that say nothing on their own: a paragraph needs a word besides these, the names and
/// the title to document anything.
const FUNCTION_WORDS: &[&str] = &[
    "a", "an", "the", "of", "in", "on", "to", "for", "and", "or", "is", "are", "was", "be", "it",
    "its", "with", "as", "at", "by", "from", "into", "this", "that", "now", "new", "also",
];

/// Labels that open a title without being part of it (`PRP: …`, `Feature: …`).
const TITLE_LABELS: &[&str] = &[
    "prp",
    "feature",
    "feature specification",
    "scenario",
    "story",
    "user story",
    "spec",
    "specification",
    "epic",
];

/// Backticked words that name a tool or a file of the project, not the feature.
const NOT_FEATURE_NAMES: &[&str] = &[
    "true",
    "false",
    "null",
    "none",
    "nil",
    "undefined",
    "self",
    "this",
    "readme",
    "changelog",
    "pytest",
    "unittest",
    "npm",
    "npx",
    "yarn",
    "pnpm",
    "node",
    "cargo",
    "make",
    "python",
    "python3",
    "pip",
    "poetry",
    "tox",
    "nox",
    "ruff",
    "mypy",
    "black",
    "flake8",
    "pylint",
    "eslint",
    "prettier",
    "jest",
    "mocha",
    "vitest",
    "tsc",
    "deno",
    "bun",
    "gofmt",
    "golangci-lint",
    "clippy",
    "rustfmt",
    "git",
    "prpd",
    "docker",
    "bash",
];

/// Extensions that make a dotted backticked word a file name (`README.md`, `calc.py`).
const FILE_EXTENSIONS: &[&str] = &[
    "md", "rst", "adoc", "txt", "py", "pyi", "rb", "rs", "js", "mjs", "cjs", "jsx", "ts", "tsx",
    "go", "java", "kt", "cs", "php", "swift", "toml", "json", "yml", "yaml", "lock", "cfg", "ini",
    "html", "css", "sh", "xml", "csv",
];

/// A backticked span.
static CODE_SPAN: LazyLock<Regex> = LazyLock::new(|| regex(r"`([^`\n]+)`"));

/// What a backticked span must be to be a name: an identifier (maybe qualified with `.` or
/// `::`, maybe called), or an option.
static NAME: LazyLock<Regex> = LazyLock::new(|| {
    regex(r"^(?:--?[A-Za-z][\w-]*|[A-Za-z_$][\w$]*(?:(?:\.|::)[A-Za-z_$][\w$]*)*)$")
});

/// Where a name of the feature comes from, for details.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Origin {
    /// A backticked name in the PRP.
    Prp,
    /// A public name the change added to this file.
    Code(String),
}

/// One name of the feature.
#[derive(Debug, Clone)]
pub(super) struct Name {
    /// As written (`multiply`, `wordStats`, `--dry-run`).
    pub(super) name: String,
    pub(super) origin: Origin,
}

/// How a document is read: as documentation (README, `docs/`) or as a changelog entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Reading {
    /// A paragraph names the feature and says something about it.
    Documentation,
    /// An entry names the feature or its title.
    Entry,
}

/// What was found in one document.
#[derive(Debug)]
pub(super) enum Finding {
    /// The document tells its reader about the feature: the line and what it names.
    Found { line: usize, found: String },
    /// It does not; with what came close (line, what), for the detail.
    NotFound { hints: Vec<(usize, String)> },
}

/// The feature under QA: its names and its title.
#[derive(Debug)]
pub(super) struct Feature {
    /// The title without a leading label such as `PRP:` (for details).
    pub(super) title: String,
    /// The title in normalised form (lowercase words separated by single spaces).
    phrase: String,
    /// The title's distinctive words.
    pub(super) keywords: Vec<String>,
    /// The feature's names: the PRP's first, then the code's.
    pub(super) names: Vec<Name>,
}

impl Feature {
    /// The feature of `prp`, with the public names the change added to the code.
    pub(super) fn of(prp: &Prp, code_names: &[CodeName]) -> Feature {
        let title = strip_label(prp.title.trim()).to_owned();
        let phrase = normalise(&title);
        let mut keywords: Vec<String> = Vec::new();
        for word in phrase.split(' ') {
            if word.chars().count() >= 3
                && !STOP_WORDS.contains(&word)
                && !keywords.iter().any(|known| known == word)
            {
                keywords.push(word.to_owned());
            }
        }
        let mut names: Vec<Name> = Vec::new();
        let prp_texts = std::iter::once(prp.title.as_str())
            .chain(prp.goal.as_deref())
            .chain(prp.requirements.iter().map(|item| item.text.as_str()));
        for text in prp_texts {
            for span in CODE_SPAN.captures_iter(text) {
                if let Some(name) = name_of(&span[1]) {
                    push_name(&mut names, name, Origin::Prp);
                }
            }
        }
        for code in code_names {
            push_name(
                &mut names,
                code.name.clone(),
                Origin::Code(code.path.clone()),
            );
        }
        Feature {
            title,
            phrase,
            keywords,
            names,
        }
    }

    /// Whether there is nothing to look for: no name and no key word.
    pub(super) fn is_empty(&self) -> bool {
        self.names.is_empty() && self.keywords.is_empty()
    }

    /// How many key words a paragraph must mention: all of one or two, about two thirds of more.
    fn keywords_needed(&self) -> usize {
        match self.keywords.len() {
            0..=2 => self.keywords.len(),
            count => (count * 2).div_ceil(3),
        }
    }

    /// Judges `text` (what is read of a document) read as `reading`; `visible` is `text` as a
    /// reader sees it (see `visible.rs`), line for line.
    pub(super) fn find_in(&self, text: &str, visible: &str, reading: Reading) -> Finding {
        let mut hints: Vec<(usize, String)> = Vec::new();
        for paragraph in paragraphs(visible) {
            let named = self.name_in(&paragraph, names);
            let titled = self.title_in(&paragraph);
            match reading {
                Reading::Entry => {
                    let found = named
                        .or(titled)
                        .or_else(|| self.name_in(&paragraph, names_by_stem));
                    if let Some((line, found)) = found {
                        return Finding::Found { line, found };
                    }
                }
                Reading::Documentation => {
                    let own = self.has_own_word(&paragraph);
                    match (named, titled, own) {
                        (Some((line, found)), _, true) => return Finding::Found { line, found },
                        (None, Some((line, found)), true) if self.names.is_empty() => {
                            return Finding::Found { line, found };
                        }
                        (Some((line, found)), _, false) => hints.push((
                            line,
                            format!("names {found} but says nothing more about it"),
                        )),
                        (None, Some((line, _)), _) if !self.names.is_empty() => hints.push((
                            line,
                            "has the title's words but none of the feature's names".to_owned(),
                        )),
                        (None, Some((line, _)), _) => {
                            hints.push((line, "only repeats the title".to_owned()));
                        }
                        (None, None, _) => {}
                    }
                }
            }
        }
        let seen: Vec<&str> = visible.lines().collect();
        for (index, line) in text.lines().enumerate() {
            let shown = seen.get(index).copied().unwrap_or("");
            if let Some(name) = self
                .names
                .iter()
                .find(|name| names(line, &name.name) && !names(shown, &name.name))
            {
                hints.push((
                    index + 1,
                    format!(
                        "names `{}` only where a reader does not see it (a comment, a link target \
                         or an image)",
                        name.name
                    ),
                ));
                break;
            }
        }
        hints.sort_by_key(|(line, _)| *line);
        Finding::NotFound { hints }
    }

    /// The first line of `paragraph` that names one of the feature's names, as `matches` tells,
    /// and that name.
    fn name_in(
        &self,
        paragraph: &[(usize, &str)],
        matches: fn(&str, &str) -> bool,
    ) -> Option<(usize, String)> {
        paragraph.iter().find_map(|(number, line)| {
            self.names
                .iter()
                .find(|name| matches(line, &name.name))
                .map(|name| (*number, format!("`{}`", name.name)))
        })
    }

    /// Where `paragraph` mentions the title: a line with the whole title, or most of the key
    /// words (by stem) in the paragraph; the line and what was found.
    fn title_in(&self, paragraph: &[(usize, &str)]) -> Option<(usize, String)> {
        if let Some((number, _)) = paragraph
            .iter()
            .find(|(_, line)| !self.phrase.is_empty() && normalise(line).contains(&self.phrase))
        {
            return Some((*number, format!("\"{}\"", self.title)));
        }
        if self.keywords.is_empty() {
            return None;
        }
        let mentions = |keyword: &str, line: &str| {
            normalise(line)
                .split(' ')
                .any(|word| same_stem(word, keyword))
        };
        let mentioned: Vec<&str> = self
            .keywords
            .iter()
            .map(String::as_str)
            .filter(|keyword| paragraph.iter().any(|(_, line)| mentions(keyword, line)))
            .collect();
        if mentioned.len() < self.keywords_needed() {
            return None;
        }
        let line = paragraph
            .iter()
            .find(|(_, line)| mentioned.iter().any(|keyword| mentions(keyword, line)))
            .map_or(0, |(number, _)| *number);
        Some((line, mentioned.join(", ")))
    }

    /// Whether `paragraph` has a word besides the feature's names, the title's words and words
    /// that say nothing on their own.
    fn has_own_word(&self, paragraph: &[(usize, &str)]) -> bool {
        let name_words: Vec<String> = self
            .names
            .iter()
            .flat_map(|name| {
                normalise(&name.name)
                    .split(' ')
                    .map(str::to_owned)
                    .collect::<Vec<_>>()
            })
            .collect();
        let title_words: Vec<&str> = self.phrase.split(' ').collect();
        paragraph.iter().any(|(_, line)| {
            normalise(line).split(' ').any(|word| {
                let meaningful = word.chars().count() >= 2
                    || word.chars().all(|character| character.is_ascii_digit());
                meaningful
                    && !word.is_empty()
                    && !FUNCTION_WORDS.contains(&word)
                    && !STOP_WORDS.contains(&word)
                    && !name_words.iter().any(|name| name == word)
                    && !title_words.iter().any(|title| same_stem(word, title))
            })
        })
    }

    /// What was looked for, for a detail: the names and where they come from, or the title.
    pub(super) fn looked_for(&self, reading: Reading) -> String {
        if self.is_empty() {
            return format!(
                "the title \"{}\" (the PRP backticks no name and its title has no key word; \
                 against a base, `--base REF`, any documentation added counts)",
                self.title
            );
        }
        let title = if self.keywords.is_empty() {
            format!("the title \"{}\"", self.title)
        } else {
            format!(
                "the title \"{}\" or its key words ({}, or words of the same stem)",
                self.title,
                self.keywords.join(", ")
            )
        };
        if self.names.is_empty() {
            return match reading {
                Reading::Documentation => format!(
                    "{title} in a paragraph a reader sees that says more than the title (no name \
                     of the feature is known: none is backticked in the PRP, and none was seen \
                     added to the code)"
                ),
                Reading::Entry => format!("{title} in an entry a reader sees"),
            };
        }
        let from_prp: Vec<String> = self
            .names
            .iter()
            .filter(|name| name.origin == Origin::Prp)
            .map(|name| format!("`{}`", name.name))
            .collect();
        let mut from_code: Vec<String> = Vec::new();
        for name in &self.names {
            if let Origin::Code(path) = &name.origin {
                from_code.push(format!("`{}` ({path})", name.name));
            }
        }
        let mut sources = Vec::new();
        if !from_prp.is_empty() {
            sources.push(format!("{} from the PRP", shorten(&from_prp)));
        }
        if !from_code.is_empty() {
            sources.push(format!("{} added to the code", shorten(&from_code)));
        }
        let names = sources.join("; ");
        match reading {
            Reading::Documentation => format!(
                "one of the feature's names ({names}) in a paragraph a reader sees that says \
                 more than the names and the title"
            ),
            Reading::Entry => {
                format!("one of the feature's names ({names}) or {title} in an entry a reader sees")
            }
        }
    }
}

/// At most eight items, then how many more.
fn shorten(items: &[String]) -> String {
    const SHOWN: usize = 8;
    if items.len() <= SHOWN {
        items.join(", ")
    } else {
        format!(
            "{}, and {} more",
            items[..SHOWN].join(", "),
            items.len() - SHOWN
        )
    }
}

fn push_name(names: &mut Vec<Name>, name: String, origin: Origin) {
    if !names
        .iter()
        .any(|known| known.name.eq_ignore_ascii_case(&name))
    {
        names.push(Name { name, origin });
    }
}

/// The title without a label such as `PRP:` or `Feature:`.
fn strip_label(title: &str) -> &str {
    if let Some((label, rest)) = title.split_once(':')
        && TITLE_LABELS.contains(&label.trim().to_lowercase().as_str())
        && !rest.trim().is_empty()
    {
        return rest.trim();
    }
    title
}

/// The name a backticked span gives, if it is one: `multiply(a, b)` → `multiply`,
/// `Calculator.multiply` → `multiply`, `--dry-run`; not a path, a file, a command with
/// arguments, a literal or a tool.
fn name_of(span: &str) -> Option<String> {
    let span = span.trim();
    let called = span
        .split_once('(')
        .map_or(span, |(callee, _)| callee.trim_end());
    if !NAME.is_match(called) {
        return None;
    }
    let last = called.rsplit(['.', ':']).next().unwrap_or(called);
    if called.contains('.') && FILE_EXTENSIONS.contains(&last.to_lowercase().as_str()) {
        return None;
    }
    let bare = last.trim_start_matches('-');
    let lower = bare.to_lowercase();
    if bare.chars().count() < 3 || NOT_FEATURE_NAMES.contains(&lower.as_str()) {
        return None;
    }
    Some(if called.starts_with('-') {
        called.to_owned()
    } else {
        last.to_owned()
    })
}

/// Whether `line` names `name`: the name as a whole word (any case), not part of a longer one.
fn names(line: &str, name: &str) -> bool {
    let line = line.to_lowercase();
    let name = name.to_lowercase();
    let is_option = name.starts_with('-');
    let part_of_name =
        |character: char| character.is_alphanumeric() || character == '_' || character == '$';
    let joins = |character: char| part_of_name(character) || (is_option && character == '-');
    line.match_indices(&name).any(|(start, _)| {
        let before = line[..start].chars().next_back();
        let after = line[start + name.len()..].chars().next();
        !before.is_some_and(joins) && !after.is_some_and(joins)
    })
}

/// Whether `line` has a word of the same stem as `name`, a one-word name of five letters or
/// more (`multiplies` ~ `multiply`): how a changelog entry names a function in prose.
fn names_by_stem(line: &str, name: &str) -> bool {
    let name = normalise(name);
    name.chars().count() >= 5
        && !name.contains(' ')
        && normalise(line)
            .split(' ')
            .any(|word| same_stem(word, &name))
}

/// Whether two words share a stem: one is the start of the other, or they share their first
/// five letters (`limit` ~ `limiter`, `multiply` ~ `multiplication`).
fn same_stem(word: &str, other: &str) -> bool {
    let shorter = word.chars().count().min(other.chars().count());
    if shorter < 3 {
        return word == other;
    }
    let common = word
        .chars()
        .zip(other.chars())
        .take_while(|(left, right)| left == right)
        .count();
    common >= shorter.min(5)
}

/// Lowercase words separated by single spaces; punctuation becomes a separator.
pub(super) fn normalise(text: &str) -> String {
    text.to_lowercase()
        .split(|character: char| !character.is_alphanumeric())
        .filter(|word| !word.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

/// Blocks of text separated by blank lines, as trimmed lines with their 1-based numbers;
/// a heading belongs to the block that follows it.
fn paragraphs(text: &str) -> Vec<Vec<(usize, &str)>> {
    let mut blocks = Vec::new();
    let mut current: Vec<(usize, &str)> = Vec::new();
    let mut only_headings = true;
    for (index, line) in text.lines().enumerate() {
        let trimmed = line.trim();
        if trimmed.is_empty() {
            if !only_headings {
                blocks.push(std::mem::take(&mut current));
                only_headings = true;
            }
            continue;
        }
        current.push((index + 1, trimmed));
        only_headings &= trimmed.starts_with('#');
    }
    if !current.is_empty() {
        blocks.push(current);
    }
    blocks
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::method::tests::prp;

    fn feature(prp_text: &str, code: &[(&str, &str)]) -> Feature {
        let code: Vec<CodeName> = code
            .iter()
            .map(|(name, path)| CodeName {
                name: (*name).to_owned(),
                path: (*path).to_owned(),
            })
            .collect();
        Feature::of(&prp(prp_text), &code)
    }

    #[test]
    fn names_come_from_backticks_of_the_goal_and_criteria_and_from_the_code() {
        for (prp_text, code, expected) in [
            (
                "# Multiplication in the calculator\n\n## Goal\n\nAdd `multiply(a, b)` to `calc.py`.\n\n## Success Criteria\n\n- [ ] `pytest` passes\n- [ ] `multiply(2, 3)` returns 6\n- [ ] `python3 -m pytest -q` passes\n",
                &[][..],
                &["multiply"][..],
            ),
            (
                "# Word statistics\n\n## Goal\n\nAdd `wordStats(text)`.\n\n## Acceptance Criteria\n\n- AC-1: returns `{ words, characters }`: `words` equals `textkit.wordCount(text)`; see `README.md`\n",
                &[("averageWordLength", "src/textkit.js")],
                &["wordStats", "words", "wordCount", "averageWordLength"],
            ),
            (
                "# CLI: `--dry-run` flag\n\n## Success Criteria\n\n- [ ] `true` is printed with `--dry-run`\n",
                &[("--dry-run", "cli.py")],
                &["--dry-run"],
            ),
            (
                "# Rate Limiter\n\n## Success Criteria\n\n- [ ] over the limit get HTTP 429\n",
                &[],
                &[],
            ),
        ] {
            let feature = feature(prp_text, code);
            let names: Vec<&str> = feature
                .names
                .iter()
                .map(|name| name.name.as_str())
                .collect();
            assert_eq!(names, expected, "{prp_text}");
        }
    }

    #[test]
    fn titles_lose_their_label_and_keep_their_key_words() {
        for (title, shown, keywords) in [
            (
                "PRP: Rate Limiter",
                "Rate Limiter",
                &["rate", "limiter"][..],
            ),
            (
                "Feature: Multiplying two numbers",
                "Multiplying two numbers",
                &["multiplying", "two", "numbers"],
            ),
            (
                "Feature Specification: Multiplication",
                "Multiplication",
                &["multiplication"],
            ),
            ("Requirements Document", "Requirements Document", &[]),
        ] {
            let feature = feature(&format!("# {title}\n\n- [ ] AC-1 works\n"), &[]);
            assert_eq!(feature.title, shown);
            assert_eq!(feature.keywords, keywords, "{title}");
        }
    }

    #[test]
    fn stems_and_whole_names() {
        for (word, other, same) in [
            ("multiply", "multiplication", true),
            ("limit", "limiter", true),
            ("limiters", "limiter", true),
            ("rate", "rates", true),
            ("rate", "ratio", false),
            ("calculator", "calculate", true),
            ("add", "address", true),
            ("of", "off", false),
        ] {
            assert_eq!(same_stem(word, other), same, "{word} ~ {other}");
        }
        for (line, name, named) in [
            ("- `multiply(a, b)`: the product", "multiply", true),
            ("Multiply two numbers.", "multiply", true),
            ("calc.multiply(2, 3)", "multiply", true),
            ("multiplyAll(xs)", "multiply", false),
            ("the wordStats call", "wordStats", true),
            ("Pass `--dry-run`.", "--dry-run", true),
            ("Pass `--dry-run-all`.", "--dry-run", false),
            ("_multiply", "multiply", false),
        ] {
            assert_eq!(names(line, name), named, "{line} / {name}");
        }
    }
}
