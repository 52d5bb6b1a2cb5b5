//! The checklist's built-in methods (`metodo`): the documentation and coverage checks that no
//! external tool performs, run in-process against the repository's files.
//!
//! Each method measures one or two named figures ([`Metrics`]) and writes one line a person
//! understands (`README.md mentions "rate limiter" (line 40)`); the check's validation
//! expression then decides pass or fail, exactly as for a command's output. A method that
//! cannot apply (criteria coverage without a PRP) says so with [`MethodOutcome::NotApplicable`]
//! and QA skips or fails the check according to its `optional` flag. Methods only read files;
//! walks of the tree honour `.gitignore`, skip vendored folders and stop after a bounded number
//! of files, so a method's cost does not grow with `node_modules`.

use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::sync::LazyLock;

use regex::Regex;

use crate::prp::Prp;
use crate::qa::metrics::Metrics;
use crate::qa::stack::SKIPPED_DIRS;

/// A built-in method named by a check's `metodo`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Method {
    /// `grep_readme` → `readme_contains_feature`.
    GrepReadme,
    /// `check_docs_adr` → `adr_file_exists`.
    CheckDocsAdr,
    /// `grep_changelog` → `changelog_has_entry`.
    GrepChangelog,
    /// `parse_prp_and_verify` → `criteria_coverage` (a percentage).
    ParsePrpAndVerify,
    /// `validate_openapi` → `openapi_valid` and `not_applicable`.
    ValidateOpenapi,
    /// `check_complexity_comments` → `complex_funcs_documented`.
    CheckComplexityComments,
}

impl Method {
    /// Every method, in the order of [`Method::NAMES`].
    pub const ALL: [Method; 6] = [
        Method::GrepReadme,
        Method::CheckDocsAdr,
        Method::GrepChangelog,
        Method::ParsePrpAndVerify,
        Method::ValidateOpenapi,
        Method::CheckComplexityComments,
    ];

    /// The names a checklist may use, for error messages.
    pub const NAMES: [&'static str; 6] = [
        "grep_readme",
        "check_docs_adr",
        "grep_changelog",
        "parse_prp_and_verify",
        "validate_openapi",
        "check_complexity_comments",
    ];

    /// The name used in checklists.
    pub fn name(self) -> &'static str {
        match self {
            Method::GrepReadme => "grep_readme",
            Method::CheckDocsAdr => "check_docs_adr",
            Method::GrepChangelog => "grep_changelog",
            Method::ParsePrpAndVerify => "parse_prp_and_verify",
            Method::ValidateOpenapi => "validate_openapi",
            Method::CheckComplexityComments => "check_complexity_comments",
        }
    }
}

impl fmt::Display for Method {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str(self.name())
    }
}

/// A `metodo` that names no built-in method.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown method `{name}`; expected one of {}", Method::NAMES.join(", "))]
pub struct UnknownMethod {
    /// The name as written.
    pub name: String,
}

impl FromStr for Method {
    type Err = UnknownMethod;

    fn from_str(name: &str) -> Result<Method, UnknownMethod> {
        Method::ALL
            .into_iter()
            .find(|method| method.name() == name.trim())
            .ok_or_else(|| UnknownMethod {
                name: name.to_owned(),
            })
    }
}

/// What a method may look at.
#[derive(Debug, Clone, Copy)]
pub struct MethodContext<'a> {
    /// The repository's root.
    pub repo: &'a Path,
    /// The PRP under QA, when one was given.
    pub prp: Option<&'a Prp>,
}

/// What a method found.
#[derive(Debug, Clone, PartialEq)]
pub enum MethodOutcome {
    /// The method measured its figures; the check's validation expression decides.
    Measured {
        /// The figures, named as in the checklist's expressions.
        metrics: Metrics,
        /// One line for the report.
        detail: String,
    },
    /// The method has nothing to measure in this repository; says why.
    NotApplicable {
        /// One line for the report.
        reason: String,
    },
}

/// Runs a built-in method. It only reads files and never fails: unreadable files are
/// reported in the detail and measured as absent.
pub fn run(method: Method, context: &MethodContext<'_>) -> MethodOutcome {
    match method {
        Method::GrepReadme => grep_readme(context),
        Method::CheckDocsAdr => check_docs_adr(context.repo),
        Method::GrepChangelog => grep_changelog(context),
        Method::ParsePrpAndVerify => parse_prp_and_verify(context),
        Method::ValidateOpenapi => validate_openapi(context.repo),
        Method::CheckComplexityComments => check_complexity_comments(context.repo),
    }
}

/// Files bigger than this are not read: no README, test or source file a person maintains is
/// this large, and reading generated blobs would make QA slow.
const MAX_FILE_BYTES: u64 = 1024 * 1024;

/// Walks stop after this many files, so a huge repository costs a bounded time.
const MAX_WALKED_FILES: usize = 20_000;

fn measured(metrics: Metrics, detail: String) -> MethodOutcome {
    MethodOutcome::Measured { metrics, detail }
}

fn one_flag(name: &str, value: bool, detail: String) -> MethodOutcome {
    let mut metrics = Metrics::default();
    metrics.set_bool(name, value);
    measured(metrics, detail)
}

fn regex(pattern: &str) -> Regex {
    Regex::new(pattern).expect("method patterns are valid")
}

/// Reads a text file of bounded size; `None` when it is missing, too big or not text.
fn read_text(path: &Path) -> Option<String> {
    let metadata = std::fs::metadata(path).ok()?;
    if !metadata.is_file() || metadata.len() > MAX_FILE_BYTES {
        return None;
    }
    let bytes = std::fs::read(path).ok()?;
    if bytes.contains(&0) {
        return None;
    }
    Some(String::from_utf8_lossy(&bytes).into_owned())
}

/// The first file directly in `directory` whose lowercase name satisfies `wanted`, by name.
fn find_file(directory: &Path, wanted: impl Fn(&str) -> bool) -> Option<PathBuf> {
    let mut found: Vec<PathBuf> = std::fs::read_dir(directory)
        .ok()?
        .filter_map(Result::ok)
        .filter(|entry| entry.file_type().is_ok_and(|kind| kind.is_file()))
        .filter(|entry| wanted(&entry.file_name().to_string_lossy().to_lowercase()))
        .map(|entry| entry.path())
        .collect();
    found.sort();
    found.into_iter().next()
}

fn display(repo: &Path, path: &Path) -> String {
    path.strip_prefix(repo)
        .unwrap_or(path)
        .display()
        .to_string()
}

/// Every file under `repo` that git would track: `.gitignore` and hidden folders honoured,
/// vendored folders skipped, sorted by name, at most [`MAX_WALKED_FILES`].
pub(crate) fn walk(repo: &Path) -> Vec<PathBuf> {
    ignore::WalkBuilder::new(repo)
        .require_git(false)
        .sort_by_file_name(std::cmp::Ord::cmp)
        .filter_entry(|entry| !SKIPPED_DIRS.contains(&entry.file_name().to_string_lossy().as_ref()))
        .build()
        .filter_map(Result::ok)
        .filter(|entry| entry.file_type().is_some_and(|kind| kind.is_file()))
        .map(ignore::DirEntry::into_path)
        .take(MAX_WALKED_FILES)
        .collect()
}

/// The words that identify a feature: its title, lowercased, and the title's key words.
#[derive(Debug)]
struct Feature {
    /// The title without a leading `PRP:`, as written (for details).
    title: String,
    /// The title in normalised form (lowercase words separated by single spaces).
    phrase: String,
    /// The title's distinctive words.
    keywords: Vec<String>,
}

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
];

impl Feature {
    fn of(prp: &Prp) -> Feature {
        let title = prp.title.trim();
        let title = title
            .strip_prefix("PRP:")
            .or_else(|| title.strip_prefix("prp:"))
            .unwrap_or(title)
            .trim()
            .to_owned();
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
        Feature {
            title,
            phrase,
            keywords,
        }
    }

    /// How many key words a paragraph must mention: all of one or two, about two thirds of more.
    fn keywords_needed(&self) -> usize {
        match self.keywords.len() {
            0..=2 => self.keywords.len(),
            count => (count * 2).div_ceil(3),
        }
    }

    /// Where `text` mentions the feature: the line and what was found.
    fn find_in(&self, text: &str) -> Option<(usize, String)> {
        for (index, line) in text.lines().enumerate() {
            if !self.phrase.is_empty() && normalise(line).contains(&self.phrase) {
                return Some((index + 1, format!("\"{}\"", self.title)));
            }
        }
        if self.keywords.is_empty() {
            return None;
        }
        let needed = self.keywords_needed();
        paragraphs(text).into_iter().find_map(|paragraph| {
            let mentions =
                |keyword: &str, line: &str| line.split(' ').any(|word| word.starts_with(keyword));
            let mentioned: Vec<&str> = self
                .keywords
                .iter()
                .map(String::as_str)
                .filter(|keyword| paragraph.iter().any(|(_, line)| mentions(keyword, line)))
                .collect();
            if mentioned.len() < needed {
                return None;
            }
            let line = paragraph
                .iter()
                .find(|(_, line)| mentioned.iter().any(|keyword| mentions(keyword, line)))
                .map_or(0, |(number, _)| *number);
            Some((line, mentioned.join(", ")))
        })
    }
}

/// Lowercase words separated by single spaces; punctuation becomes a separator.
fn normalise(text: &str) -> String {
    text.to_lowercase()
        .split(|character: char| !character.is_alphanumeric())
        .filter(|word| !word.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

/// Blocks of text separated by blank lines, as normalised lines with their 1-based numbers;
/// a heading belongs to the block that follows it.
fn paragraphs(text: &str) -> Vec<Vec<(usize, String)>> {
    let mut blocks = Vec::new();
    let mut current: Vec<(usize, String)> = Vec::new();
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
        current.push((index + 1, normalise(trimmed)));
        only_headings &= trimmed.starts_with('#');
    }
    if !current.is_empty() {
        blocks.push(current);
    }
    blocks
}

/// `readme_contains_feature`: README*.md at the root mentions the PRP's feature.
fn grep_readme(context: &MethodContext<'_>) -> MethodOutcome {
    const METRIC: &str = "readme_contains_feature";
    let Some(path) = find_file(context.repo, |name| {
        name.starts_with("readme") && extension(Path::new(name)) == "md"
    }) else {
        return one_flag(
            METRIC,
            false,
            "no README*.md at the repository root".to_owned(),
        );
    };
    let name = display(context.repo, &path);
    let Some(text) = read_text(&path) else {
        return one_flag(METRIC, false, format!("{name} could not be read as text"));
    };
    let Some(prp) = context.prp else {
        let has_content = !text.trim().is_empty();
        let detail = if has_content {
            format!("{name} exists (no PRP was given, so the feature was not looked up)")
        } else {
            format!("{name} is empty")
        };
        return one_flag(METRIC, has_content, detail);
    };
    let feature = Feature::of(prp);
    match feature.find_in(&text) {
        Some((line, found)) => one_flag(
            METRIC,
            true,
            format!("{name} mentions {found} (line {line})"),
        ),
        None => one_flag(
            METRIC,
            false,
            format!(
                "{name} does not mention the feature \"{}\" (looked for the title or its key \
                 words: {})",
                feature.title,
                feature.keywords.join(", ")
            ),
        ),
    }
}

/// Where projects keep their architecture decision records.
const ADR_DIRECTORIES: &[&str] = &[
    "docs/adr",
    "doc/adr",
    "docs/decisions",
    "adr",
    "docs/architecture/decisions",
];

/// `adr_file_exists`: a decision record exists in one of [`ADR_DIRECTORIES`].
fn check_docs_adr(repo: &Path) -> MethodOutcome {
    const METRIC: &str = "adr_file_exists";
    for directory in ADR_DIRECTORIES {
        let Ok(entries) = std::fs::read_dir(repo.join(directory)) else {
            continue;
        };
        let mut records: Vec<String> = entries
            .filter_map(Result::ok)
            .filter(|entry| entry.file_type().is_ok_and(|kind| kind.is_file()))
            .map(|entry| entry.file_name().to_string_lossy().into_owned())
            .filter(|name| {
                let lower = name.to_lowercase();
                extension(Path::new(&lower)) == "md"
                    && lower != "readme.md"
                    && lower != "index.md"
                    && !lower.contains("template")
            })
            .collect();
        records.sort();
        if let Some(latest) = records.last() {
            let count = records.len();
            let plural = if count == 1 { "" } else { "s" };
            return one_flag(
                METRIC,
                true,
                format!("{directory}/{latest} ({count} decision record{plural} in {directory}/)"),
            );
        }
    }
    one_flag(
        METRIC,
        false,
        format!(
            "no decision record (a .md file other than README, index or a template) in {}",
            ADR_DIRECTORIES.join(", ")
        ),
    )
}

/// `changelog_has_entry`: CHANGELOG.md mentions the feature or lists an unreleased change.
fn grep_changelog(context: &MethodContext<'_>) -> MethodOutcome {
    const METRIC: &str = "changelog_has_entry";
    let Some(path) = find_file(context.repo, |name| name == "changelog.md") else {
        return one_flag(
            METRIC,
            false,
            "no CHANGELOG.md at the repository root".to_owned(),
        );
    };
    let name = display(context.repo, &path);
    let Some(text) = read_text(&path) else {
        return one_flag(METRIC, false, format!("{name} could not be read as text"));
    };
    if let Some(prp) = context.prp {
        // With a PRP the entry must be about the feature: an unrelated item that was already
        // under Unreleased says nothing about this work.
        let feature = Feature::of(prp);
        return match feature.find_in(&text) {
            Some((line, found)) => one_flag(
                METRIC,
                true,
                format!("{name} mentions {found} (line {line})"),
            ),
            None => one_flag(
                METRIC,
                false,
                format!("{name} has no entry mentioning \"{}\"", feature.title),
            ),
        };
    }
    if let Some(line) = unreleased_item(&text) {
        return one_flag(
            METRIC,
            true,
            format!("{name} has an entry under Unreleased (line {line})"),
        );
    }
    one_flag(
        METRIC,
        false,
        format!("{name} has no item under an Unreleased heading (no PRP was given)"),
    )
}

/// The line of the first list item inside an `Unreleased` section.
fn unreleased_item(text: &str) -> Option<usize> {
    let mut section_level: Option<usize> = None;
    for (index, line) in text.lines().enumerate() {
        let trimmed = line.trim_start();
        let level = trimmed
            .chars()
            .take_while(|character| *character == '#')
            .count();
        if level > 0 && trimmed[level..].starts_with(' ') {
            match section_level {
                Some(open) if level > open => {}
                Some(_) | None => {
                    section_level = trimmed
                        .to_lowercase()
                        .contains("unreleased")
                        .then_some(level);
                }
            }
            continue;
        }
        let is_item = ["- ", "* ", "+ "]
            .iter()
            .any(|bullet| trimmed.starts_with(bullet) && trimmed.len() > bullet.len());
        if section_level.is_some() && is_item {
            return Some(index + 1);
        }
    }
    None
}

/// Folders whose files are tests.
const TEST_DIRECTORIES: &[&str] = &["test", "tests", "spec", "specs", "__tests__"];

/// Prose files never count as tests: the PRP itself would otherwise "cover" every criterion.
const PROSE_EXTENSIONS: &[&str] = &["md", "markdown", "rst", "txt", "adoc"];

/// A file that holds tests judged by its path alone: under a test folder, or named like a test
/// (`test_x.py`, `x_test.go`, `x.test.ts`, `x.spec.js`, `x_spec.lua`, `XTest.java`), but not
/// merely containing the letters (`latest.rs`, `contest.go`).
pub(crate) fn is_test_path(relative: &Path) -> bool {
    let in_test_directory = relative.parent().is_some_and(|parent| {
        parent.components().any(|component| {
            TEST_DIRECTORIES.contains(&component.as_os_str().to_string_lossy().as_ref())
        })
    });
    let name = relative
        .file_name()
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_default();
    let stem = name.split('.').next().unwrap_or("");
    let lower = stem.to_lowercase();
    let named_like_a_test = ["test", "tests", "spec"].contains(&lower.as_str())
        || ["test_", "test-"]
            .iter()
            .any(|prefix| lower.starts_with(prefix))
        || ["_test", "-test", "_tests", "_spec", "-spec"]
            .iter()
            .any(|suffix| lower.ends_with(suffix))
        || ["Test", "Tests", "Spec"]
            .iter()
            .any(|suffix| stem.ends_with(suffix))
        || [".test.", ".spec."]
            .iter()
            .any(|infix| name.to_lowercase().contains(infix));
    in_test_directory || named_like_a_test
}

fn extension(path: &Path) -> String {
    path.extension()
        .map(|extension| extension.to_string_lossy().to_lowercase())
        .unwrap_or_default()
}

/// One thing the PRP asks tests to cover, and how a test file refers to it.
struct Requirement {
    label: String,
    pattern: Regex,
}

impl Requirement {
    /// An acceptance id such as `AC-1.2`, found as `AC-1.2` or `ac_1_2`, but not inside
    /// `AC-1.20` or `AC-12`.
    fn acceptance(id: &str) -> Requirement {
        let parts: Vec<String> = id
            .split(['-', '.', '_'])
            .filter(|part| !part.is_empty())
            .map(regex::escape)
            .collect();
        let pattern = format!(
            r"(?i)(?:^|[^a-z0-9]){}(?:$|[^a-z0-9_.-]|[_.-](?:$|[^0-9]))",
            parts.join("[-_.]")
        );
        Requirement {
            label: id.to_owned(),
            pattern: regex(&pattern),
        }
    }

    /// A success criterion, found by its whole text (case and spacing ignored).
    fn criterion(text: &str) -> Requirement {
        let words: Vec<String> = normalise(text).split(' ').map(regex::escape).collect();
        Requirement {
            label: format!("\"{text}\""),
            pattern: regex(&format!(r"(?i){}", words.join(r"[^\p{L}\p{N}]+"))),
        }
    }
}

/// `criteria_coverage`: the percentage of the PRP's criteria that test files reference.
fn parse_prp_and_verify(context: &MethodContext<'_>) -> MethodOutcome {
    let Some(prp) = context.prp else {
        return MethodOutcome::NotApplicable {
            reason: "no PRP was given, so there are no acceptance criteria to trace to tests"
                .to_owned(),
        };
    };
    let (kind, mut open): (&str, Vec<Requirement>) = if prp.acceptance.is_empty() {
        (
            "success criteria",
            prp.success_criteria
                .iter()
                .map(|criterion| Requirement::criterion(&criterion.text))
                .collect(),
        )
    } else {
        (
            "acceptance criteria",
            prp.acceptance
                .iter()
                .map(|acceptance| Requirement::acceptance(&acceptance.id))
                .collect(),
        )
    };
    let total = open.len();
    if total == 0 {
        return MethodOutcome::NotApplicable {
            reason: "the PRP lists no acceptance or success criteria".to_owned(),
        };
    }
    let prp_path = context.repo.join(&prp.path);
    let mut test_files = 0usize;
    for path in walk(context.repo) {
        if open.is_empty() {
            break;
        }
        let relative = path.strip_prefix(context.repo).unwrap_or(&path);
        let extension = extension(&path);
        if PROSE_EXTENSIONS.contains(&extension.as_str()) || path == prp_path || path == prp.path {
            continue;
        }
        let by_path = is_test_path(relative);
        if !by_path && extension != "rs" {
            continue;
        }
        let Some(text) = read_text(&path) else {
            continue;
        };
        if !by_path && !text.contains("#[cfg(test)]") && !text.contains("#[test]") {
            continue;
        }
        test_files += 1;
        open.retain(|requirement| !requirement.pattern.is_match(&text));
    }
    let covered = total - open.len();
    #[expect(
        clippy::cast_precision_loss,
        reason = "criteria counts are tiny; the percentage is rounded for display anyway"
    )]
    let percentage = (covered as f64) * 100.0 / (total as f64);
    let mut metrics = Metrics::default();
    metrics.set_number("criteria_coverage", (percentage * 100.0).round() / 100.0);
    let detail = if open.is_empty() {
        format!("all {total} {kind} are referenced in tests")
    } else {
        let missing: Vec<&str> = open
            .iter()
            .map(|requirement| requirement.label.as_str())
            .collect();
        format!(
            "{covered} of {total} {kind} referenced in {test_files} test file{}; not \
             referenced: {}",
            if test_files == 1 { "" } else { "s" },
            missing.join(", ")
        )
    };
    measured(metrics, detail)
}

/// Where `OpenAPI` documents usually live, and their usual names.
const OPENAPI_DIRECTORIES: &[&str] = &["", "docs", "api"];
const OPENAPI_NAMES: &[&str] = &[
    "openapi.yaml",
    "openapi.yml",
    "openapi.json",
    "swagger.yaml",
    "swagger.yml",
    "swagger.json",
];

/// `openapi_valid` and `not_applicable`: the `OpenAPI` document, if any, is well formed.
fn validate_openapi(repo: &Path) -> MethodOutcome {
    let found = OPENAPI_DIRECTORIES.iter().find_map(|directory| {
        OPENAPI_NAMES.iter().find_map(|name| {
            let path = repo.join(directory).join(name);
            path.is_file().then_some(path)
        })
    });
    let mut metrics = Metrics::default();
    let Some(path) = found else {
        metrics.set_bool("openapi_valid", false);
        metrics.set_bool("not_applicable", true);
        return measured(
            metrics,
            "no OpenAPI document (openapi.yaml/.yml/.json or swagger.*) at the root, docs/ or \
             api/; the repository has no HTTP API description to check"
                .to_owned(),
        );
    };
    let name = display(repo, &path);
    let verdict = match read_text(&path) {
        None => Err("could not be read as text (or is larger than 1 MiB)".to_owned()),
        Some(text) if extension(&path) == "json" => {
            serde_json::from_str::<serde_json::Value>(&text)
                .map_err(|error| format!("is not valid JSON: {error}"))
                .and_then(|document| describe_openapi_json(&document))
        }
        Some(text) => yaml_serde::from_str::<yaml_serde::Value>(&text)
            .map_err(|error| format!("is not valid YAML: {error}"))
            .and_then(|document| describe_openapi_yaml(&document)),
    };
    metrics.set_bool("not_applicable", false);
    match verdict {
        Ok(description) => {
            metrics.set_bool("openapi_valid", true);
            measured(metrics, format!("{name}: {description}"))
        }
        Err(problem) => {
            metrics.set_bool("openapi_valid", false);
            measured(metrics, format!("{name} {problem}"))
        }
    }
}

fn describe_openapi_json(document: &serde_json::Value) -> Result<String, String> {
    let version = ["openapi", "swagger"].iter().find_map(|key| {
        let value = document.get(key)?;
        Some((
            *key,
            value
                .as_str()
                .map_or_else(|| value.to_string(), str::to_owned),
        ))
    });
    let paths = document.get("paths").and_then(serde_json::Value::as_object);
    describe_openapi(version, paths.map(serde_json::Map::len))
}

fn describe_openapi_yaml(document: &yaml_serde::Value) -> Result<String, String> {
    let version = ["openapi", "swagger"].iter().find_map(|key| {
        let value = document.get(key)?;
        let text = match value {
            yaml_serde::Value::String(text) => text.clone(),
            yaml_serde::Value::Number(number) => number.to_string(),
            other => format!("{other:?}"),
        };
        Some((*key, text))
    });
    let paths = document
        .get("paths")
        .and_then(yaml_serde::Value::as_mapping);
    describe_openapi(version, paths.map(yaml_serde::Mapping::len))
}

fn describe_openapi(
    version: Option<(&str, String)>,
    paths: Option<usize>,
) -> Result<String, String> {
    let Some((key, version)) = version else {
        return Err("has no top-level `openapi` or `swagger` version field".to_owned());
    };
    let Some(paths) = paths else {
        return Err("has no top-level `paths` mapping".to_owned());
    };
    let kind = if key == "openapi" {
        "OpenAPI"
    } else {
        "Swagger"
    };
    let plural = if paths == 1 { "" } else { "s" };
    Ok(format!("{kind} {version} with {paths} path{plural}"))
}

/// Functions longer than this many lines need a comment or doc saying what they do.
const LONG_FUNCTION_LINES: usize = 40;

/// Source files read by `check_complexity_comments`, at most.
const MAX_SOURCE_FILES: usize = 2_000;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Language {
    Rust,
    Go,
    JavaScript,
    Python,
    Lua,
}

impl Language {
    fn of(path: &Path) -> Option<Language> {
        match extension(path).as_str() {
            "rs" => Some(Language::Rust),
            "go" => Some(Language::Go),
            "js" | "jsx" | "mjs" | "cjs" | "ts" | "tsx" | "mts" | "cts" => {
                Some(Language::JavaScript)
            }
            "py" => Some(Language::Python),
            "lua" => Some(Language::Lua),
            _ => None,
        }
    }

    fn comment_markers(self) -> &'static [&'static str] {
        match self {
            Language::Rust | Language::Go | Language::JavaScript => &["//", "/*", "*"],
            Language::Python => &["#"],
            Language::Lua => &["--"],
        }
    }

    /// Lines between a doc comment and the function that belong to the function
    /// (attributes, decorators).
    fn is_annotation(self, line: &str) -> bool {
        match self {
            Language::Rust => line.starts_with("#["),
            Language::JavaScript | Language::Python => line.starts_with('@'),
            Language::Go | Language::Lua => false,
        }
    }
}

/// A function longer than [`LONG_FUNCTION_LINES`].
#[derive(Debug, Clone, PartialEq, Eq)]
struct LongFunction {
    name: String,
    line: usize,
    documented: bool,
}

/// `complex_funcs_documented`: every long function has a comment; see [`long_functions`].
fn check_complexity_comments(repo: &Path) -> MethodOutcome {
    let mut scanned = 0usize;
    let mut long = Vec::new();
    for path in walk(repo) {
        if scanned == MAX_SOURCE_FILES {
            break;
        }
        let Some(language) = Language::of(&path) else {
            continue;
        };
        let relative = path.strip_prefix(repo).unwrap_or(&path).to_path_buf();
        let name = relative.to_string_lossy().to_lowercase();
        if is_test_path(&relative) || name.ends_with(".min.js") || name.ends_with(".d.ts") {
            continue;
        }
        let Some(text) = read_text(&path) else {
            continue;
        };
        scanned += 1;
        for function in long_functions(&text, language) {
            long.push((relative.clone(), function));
        }
    }
    if scanned == 0 {
        return MethodOutcome::NotApplicable {
            reason: "no Rust, Go, JavaScript/TypeScript, Python or Lua source files outside \
                     tests and vendored folders"
                .to_owned(),
        };
    }
    let undocumented: Vec<String> = long
        .iter()
        .filter(|(_, function)| !function.documented)
        .map(|(path, function)| format!("{}:{} `{}`", path.display(), function.line, function.name))
        .collect();
    let mut metrics = Metrics::default();
    metrics.set_bool("complex_funcs_documented", undocumented.is_empty());
    #[expect(
        clippy::cast_precision_loss,
        reason = "function counts are far below 2^52"
    )]
    {
        metrics.set_number("long_functions", long.len() as f64);
        metrics.set_number("undocumented_long_functions", undocumented.len() as f64);
    }
    let files = format!(
        "{scanned} source file{}",
        if scanned == 1 { "" } else { "s" }
    );
    let detail = match (long.len(), undocumented.len()) {
        (0, _) => format!("no function is longer than {LONG_FUNCTION_LINES} lines ({files})"),
        (count, 0) => format!(
            "all {count} functions longer than {LONG_FUNCTION_LINES} lines have a comment ({files})"
        ),
        (count, missing) => {
            let shown: Vec<&str> = undocumented.iter().take(5).map(String::as_str).collect();
            let more = if missing > shown.len() {
                format!(" and {} more", missing - shown.len())
            } else {
                String::new()
            };
            format!(
                "{missing} of {count} functions longer than {LONG_FUNCTION_LINES} lines have no \
                 comment above them: {}{more}",
                shown.join(", ")
            )
        }
    };
    measured(metrics, detail)
}

/// The functions of a file that are longer than [`LONG_FUNCTION_LINES`], with whether a
/// comment (or a Python docstring) documents them.
fn long_functions(text: &str, language: Language) -> Vec<LongFunction> {
    static RUST: LazyLock<Regex> = LazyLock::new(|| {
        regex(
            r#"^\s*(?:pub(?:\([^)]*\))?\s+)?(?:default\s+)?(?:const\s+)?(?:async\s+)?(?:unsafe\s+)?(?:extern\s+"[^"]*"\s+)?fn\s+([A-Za-z_]\w*)"#,
        )
    });
    static GO: LazyLock<Regex> =
        LazyLock::new(|| regex(r"^func\s+(?:\([^)]*\)\s*)?([A-Za-z_]\w*)"));
    static JAVASCRIPT: LazyLock<Regex> = LazyLock::new(|| {
        regex(
            r"^\s*(?:export\s+)?(?:default\s+)?(?:async\s+)?function\s*\*?\s*([A-Za-z_$][\w$]*)|^\s*(?:export\s+)?(?:const|let|var)\s+([A-Za-z_$][\w$]*)\s*(?::[^=]+)?=\s*(?:async\s+)?(?:function\b|\([^)]*\)\s*(?::\s*[^=]+)?=>|[A-Za-z_$][\w$]*\s*=>)|^\s*(?:(?:public|private|protected|static|async|override)\s+)*([A-Za-z_$][\w$]*)\s*\([^)]*\)\s*(?::\s*[^{;]+)?\{\s*$",
        )
    });
    static PYTHON: LazyLock<Regex> =
        LazyLock::new(|| regex(r"^(\s*)(?:async\s+)?def\s+([A-Za-z_]\w*)"));
    static LUA: LazyLock<Regex> = LazyLock::new(|| {
        regex(r"^\s*(?:local\s+)?function\s+([\w.:]+)|^\s*(?:local\s+)?([\w.:]+)\s*=\s*function\b")
    });
    const NOT_FUNCTIONS: &[&str] = &[
        "if", "for", "while", "switch", "catch", "function", "return",
    ];

    let lines: Vec<&str> = text.lines().collect();
    let mut found = Vec::new();
    for (index, line) in lines.iter().enumerate() {
        if language == Language::Rust && line.trim_start().starts_with("#[cfg(test)]") {
            break;
        }
        let (name, end) = match language {
            Language::Rust | Language::Go | Language::JavaScript => {
                let pattern = match language {
                    Language::Rust => &*RUST,
                    Language::Go => &*GO,
                    Language::JavaScript | Language::Python | Language::Lua => &*JAVASCRIPT,
                };
                let Some(captures) = pattern.captures(line) else {
                    continue;
                };
                let Some(name) = captures.iter().skip(1).flatten().next() else {
                    continue;
                };
                if NOT_FUNCTIONS.contains(&name.as_str()) {
                    continue;
                }
                let Some(end) = brace_body_end(&lines, index, language) else {
                    continue;
                };
                (name.as_str().to_owned(), end)
            }
            Language::Python => {
                let Some(captures) = PYTHON.captures(line) else {
                    continue;
                };
                (
                    captures[2].to_owned(),
                    indented_body_end(&lines, index, captures[1].len()),
                )
            }
            Language::Lua => {
                let Some(captures) = LUA.captures(line) else {
                    continue;
                };
                let Some(name) = captures.iter().skip(1).flatten().next() else {
                    continue;
                };
                (name.as_str().to_owned(), lua_body_end(&lines, index))
            }
        };
        if end + 1 - index <= LONG_FUNCTION_LINES {
            continue;
        }
        let Some(documented) = documented(&lines, index, end, language) else {
            continue;
        };
        found.push(LongFunction {
            name,
            line: index + 1,
            documented,
        });
    }
    found
}

/// Whether the function starting at `start` has a comment just above it (annotations in
/// between are allowed), or for Python a docstring; `None` for Rust test functions, which
/// are not held to this rule.
fn documented(lines: &[&str], start: usize, end: usize, language: Language) -> Option<bool> {
    let mut above = start;
    while above > 0 {
        above -= 1;
        let line = lines[above].trim();
        if language.is_annotation(line) {
            if language == Language::Rust && line.contains("test") {
                return None;
            }
            continue;
        }
        if language
            .comment_markers()
            .iter()
            .any(|marker| line.starts_with(marker))
        {
            return Some(true);
        }
        break;
    }
    if language == Language::Python {
        let signature_end = lines[start..=end]
            .iter()
            .position(|line| {
                line.split('#')
                    .next()
                    .unwrap_or("")
                    .trim_end()
                    .ends_with(':')
            })
            .map_or(start, |offset| start + offset);
        let body = lines[signature_end + 1..=end]
            .iter()
            .map(|line| line.trim())
            .find(|line| !line.is_empty());
        return Some(body.is_some_and(|line| {
            ["\"\"\"", "'''", "r\"\"\"", "\"", "'", "#"]
                .iter()
                .any(|marker| line.starts_with(marker))
        }));
    }
    Some(false)
}

/// The last line of a brace-delimited body whose signature starts at `start`, or `None` when
/// a `;` ends the signature first (a declaration without a body).
fn brace_body_end(lines: &[&str], start: usize, language: Language) -> Option<usize> {
    let mut depth = 0usize;
    let mut opened = false;
    let mut in_block_comment = false;
    let mut in_backtick = false;
    for (index, line) in lines.iter().enumerate().skip(start) {
        if !opened && index > start + 20 {
            return None;
        }
        let characters: Vec<char> = line.chars().collect();
        let mut quote: Option<char> = None;
        let mut position = 0;
        while position < characters.len() {
            let character = characters[position];
            let next = characters.get(position + 1).copied();
            position += 1;
            if in_block_comment {
                if character == '*' && next == Some('/') {
                    position += 1;
                    in_block_comment = false;
                }
                continue;
            }
            if in_backtick {
                in_backtick = character != '`';
                continue;
            }
            if let Some(open_quote) = quote {
                if character == '\\' {
                    position += 1;
                } else if character == open_quote {
                    quote = None;
                }
                continue;
            }
            match character {
                '/' if next == Some('/') => break,
                '/' if next == Some('*') => {
                    position += 1;
                    in_block_comment = true;
                }
                '"' => quote = Some('"'),
                '\'' if language == Language::Rust => {
                    position += rust_char_literal_length(&characters[position..]);
                }
                '\'' => quote = Some('\''),
                '`' => in_backtick = true,
                ';' if !opened => return None,
                '{' => {
                    depth += 1;
                    opened = true;
                }
                '}' if opened => {
                    depth = depth.saturating_sub(1);
                    if depth == 0 {
                        return Some(index);
                    }
                }
                _ => {}
            }
        }
    }
    opened.then(|| lines.len().saturating_sub(1))
}

/// After a `'` in Rust: the length of the rest of a char literal (`{'`, `\n'`), or 0 for a
/// lifetime (`'a`), which has no closing quote.
fn rust_char_literal_length(rest: &[char]) -> usize {
    match rest {
        ['\\', ..] => rest
            .iter()
            .position(|character| *character == '\'')
            .map_or(0, |closing| closing + 1),
        [_, '\'', ..] => 2,
        _ => 0,
    }
}

/// The last non-blank line indented deeper than `indent` after a Python `def` at `start`.
fn indented_body_end(lines: &[&str], start: usize, indent: usize) -> usize {
    let signature_end = lines[start..]
        .iter()
        .take(20)
        .position(|line| {
            line.split('#')
                .next()
                .unwrap_or("")
                .trim_end()
                .ends_with(':')
        })
        .map_or(start, |offset| start + offset);
    let mut end = signature_end;
    for (index, line) in lines.iter().enumerate().skip(signature_end + 1) {
        if line.trim().is_empty() {
            continue;
        }
        let line_indent = line.len() - line.trim_start().len();
        if line_indent <= indent {
            break;
        }
        end = index;
    }
    end
}

/// The line of the `end` that closes a Lua function starting at `start`, counting the block
/// keywords in between (strings and `--` comments ignored).
fn lua_body_end(lines: &[&str], start: usize) -> usize {
    static STRING: LazyLock<Regex> =
        LazyLock::new(|| regex(r#""(?:\\.|[^"\\])*"|'(?:\\.|[^'\\])*'"#));
    static KEYWORD: LazyLock<Regex> =
        LazyLock::new(|| regex(r"\b(function|if|do|repeat|end|until)\b"));
    let mut depth = 0usize;
    for (index, line) in lines.iter().enumerate().skip(start) {
        let code = line.split("--").next().unwrap_or("");
        let code = STRING.replace_all(code, "\"\"");
        for keyword in KEYWORD.find_iter(&code) {
            match keyword.as_str() {
                "end" | "until" => {
                    depth = depth.saturating_sub(1);
                    if depth == 0 {
                        return index;
                    }
                }
                _ => depth += 1,
            }
        }
    }
    lines.len().saturating_sub(1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::qa::metrics::MetricValue;

    #[test]
    fn test_paths_are_recognised_by_folder_or_name() {
        for test in [
            "tests/limits.rs",
            "src/__tests__/a.js",
            "pkg/limiter_test.go",
            "test_app.py",
            "web/a.test.ts",
            "web/a.spec.js",
            "spec/x_spec.lua",
            "src/main/java/LimiterTest.java",
        ] {
            assert!(is_test_path(Path::new(test)), "{test}");
        }
        for source in [
            "src/latest.rs",
            "contest.go",
            "src/attestation.py",
            "web/app.ts",
        ] {
            assert!(!is_test_path(Path::new(source)), "{source}");
        }
    }

    struct Repo(tempfile::TempDir);

    impl Repo {
        fn new() -> Repo {
            Repo(tempfile::tempdir().expect("temporary directory"))
        }

        fn file(&self, path: &str, text: &str) -> &Repo {
            let path = self.0.path().join(path);
            std::fs::create_dir_all(path.parent().expect("test fixture")).expect("test fixture");
            std::fs::write(path, text).expect("test fixture");
            self
        }

        fn run(&self, method: Method, prp: Option<&Prp>) -> MethodOutcome {
            run(
                method,
                &MethodContext {
                    repo: self.0.path(),
                    prp,
                },
            )
        }
    }

    fn prp(text: &str) -> Prp {
        crate::prp::parse(Path::new("PRPs/feature.md"), text).expect("test fixture")
    }

    fn rate_limiter() -> Prp {
        prp(
            "# PRP: Rate Limiter\n\n## Success Criteria\n\n- [ ] Requests over the limit get HTTP 429\n\n## Acceptance Criteria\n\n- [ ] AC-1 over the limit returns 429\n- [ ] AC-2 the limit resets every minute\n- [ ] AC-10 limits are per API key\n",
        )
    }

    /// The figure `name` and the detail of a measured outcome.
    fn figure(outcome: &MethodOutcome, name: &str) -> (MetricValue, String) {
        match outcome {
            MethodOutcome::Measured { metrics, detail } => (
                metrics
                    .get(name)
                    .unwrap_or_else(|| panic!("{name} missing: {metrics:?}")),
                detail.clone(),
            ),
            MethodOutcome::NotApplicable { reason } => panic!("not applicable: {reason}"),
        }
    }

    #[test]
    fn names_round_trip_and_unknown_names_list_the_known_ones() {
        for (method, name) in Method::ALL.into_iter().zip(Method::NAMES) {
            assert_eq!(method.name(), name);
            assert_eq!(name.parse::<Method>(), Ok(method));
        }
        let error = "grep_docs".parse::<Method>().expect_err("an error");
        assert_eq!(
            error.to_string(),
            "unknown method `grep_docs`; expected one of grep_readme, check_docs_adr, \
             grep_changelog, parse_prp_and_verify, validate_openapi, check_complexity_comments"
        );
    }

    #[test]
    fn grep_readme_finds_the_title_or_its_key_words() {
        let prp = rate_limiter();
        let repo = Repo::new();
        repo.file(
            "README.md",
            "# app\n\nUsage.\n\n## Rate limiter\n\nRequests are limited.\n",
        );
        let (value, detail) = figure(
            &repo.run(Method::GrepReadme, Some(&prp)),
            "readme_contains_feature",
        );
        assert_eq!(value, MetricValue::Bool(true));
        assert_eq!(detail, "README.md mentions \"Rate Limiter\" (line 5)");

        let words = Repo::new();
        words.file(
            "README.md",
            "# app\n\nThe limiter caps the request\nrate per key.\n",
        );
        let (value, detail) = figure(
            &words.run(Method::GrepReadme, Some(&prp)),
            "readme_contains_feature",
        );
        assert_eq!(value, MetricValue::Bool(true), "{detail}");
        assert_eq!(detail, "README.md mentions rate, limiter (line 3)");
    }

    #[test]
    fn grep_readme_fails_without_a_mention_or_a_readme() {
        let prp = rate_limiter();
        let repo = Repo::new();
        repo.file(
            "README.md",
            "# app\n\nA web server. Rate of change is high.\n\nLimiter-free.\n",
        );
        let (value, detail) = figure(
            &repo.run(Method::GrepReadme, Some(&prp)),
            "readme_contains_feature",
        );
        assert_eq!(value, MetricValue::Bool(false));
        assert!(
            detail.contains("does not mention the feature \"Rate Limiter\""),
            "{detail}"
        );

        let (value, detail) = figure(
            &Repo::new().run(Method::GrepReadme, Some(&prp)),
            "readme_contains_feature",
        );
        assert_eq!(value, MetricValue::Bool(false));
        assert_eq!(detail, "no README*.md at the repository root");
    }

    #[test]
    fn grep_readme_without_a_prp_only_needs_a_readme() {
        let repo = Repo::new();
        repo.file("readme.md", "# app\n");
        let (value, detail) = figure(
            &repo.run(Method::GrepReadme, None),
            "readme_contains_feature",
        );
        assert_eq!(value, MetricValue::Bool(true));
        assert!(detail.contains("no PRP was given"), "{detail}");
        let empty = Repo::new();
        empty.file("README.md", "  \n");
        let (value, _) = figure(
            &empty.run(Method::GrepReadme, None),
            "readme_contains_feature",
        );
        assert_eq!(value, MetricValue::Bool(false));
    }

    #[test]
    fn check_docs_adr_needs_a_record_not_a_template() {
        let repo = Repo::new();
        repo.file("docs/adr/README.md", "# ADRs\n")
            .file("docs/adr/0000-template.md", "# Title\n");
        let (value, detail) = figure(&repo.run(Method::CheckDocsAdr, None), "adr_file_exists");
        assert_eq!(value, MetricValue::Bool(false));
        assert!(detail.starts_with("no decision record"), "{detail}");

        repo.file("docs/adr/0001-use-sqlite.md", "# Use SQLite\n")
            .file("docs/adr/0002-rate-limits.md", "# Rate limits\n");
        let (value, detail) = figure(&repo.run(Method::CheckDocsAdr, None), "adr_file_exists");
        assert_eq!(value, MetricValue::Bool(true));
        assert_eq!(
            detail,
            "docs/adr/0002-rate-limits.md (2 decision records in docs/adr/)"
        );

        let other = Repo::new();
        other.file("docs/architecture/decisions/0001-x.md", "# X\n");
        let (value, _) = figure(&other.run(Method::CheckDocsAdr, None), "adr_file_exists");
        assert_eq!(value, MetricValue::Bool(true));
    }

    #[test]
    fn grep_changelog_accepts_the_feature_or_an_unreleased_item() {
        let prp = rate_limiter();
        let repo = Repo::new();
        repo.file(
            "CHANGELOG.md",
            "# Changelog\n\n## [1.0.0]\n\n### Added\n\n- Rate limiter for the API\n",
        );
        let (value, detail) = figure(
            &repo.run(Method::GrepChangelog, Some(&prp)),
            "changelog_has_entry",
        );
        assert_eq!(value, MetricValue::Bool(true));
        assert_eq!(detail, "CHANGELOG.md mentions \"Rate Limiter\" (line 7)");

        let unreleased = Repo::new();
        unreleased.file("CHANGELOG.md", "# Changelog\n\n## [Unreleased]\n\n### Added\n\n- Per-key quotas\n\n## [1.0.0]\n\n- First release\n");
        let (value, detail) = figure(
            &unreleased.run(Method::GrepChangelog, None),
            "changelog_has_entry",
        );
        assert_eq!(value, MetricValue::Bool(true));
        assert_eq!(
            detail,
            "CHANGELOG.md has an entry under Unreleased (line 7)"
        );

        // With a PRP, an unrelated item under Unreleased is not an entry for the feature.
        let (value, _) = figure(
            &unreleased.run(Method::GrepChangelog, Some(&prp)),
            "changelog_has_entry",
        );
        assert_eq!(value, MetricValue::Bool(false));
    }

    #[test]
    fn grep_changelog_fails_on_an_empty_unreleased_section_or_no_file() {
        let prp = rate_limiter();
        let repo = Repo::new();
        repo.file(
            "CHANGELOG.md",
            "# Changelog\n\n## [Unreleased]\n\n## [1.0.0]\n\n- First release\n",
        );
        let (value, detail) = figure(
            &repo.run(Method::GrepChangelog, Some(&prp)),
            "changelog_has_entry",
        );
        assert_eq!(value, MetricValue::Bool(false));
        assert_eq!(
            detail,
            "CHANGELOG.md has no entry mentioning \"Rate Limiter\""
        );
        let (value, detail) = figure(
            &Repo::new().run(Method::GrepChangelog, None),
            "changelog_has_entry",
        );
        assert_eq!(value, MetricValue::Bool(false));
        assert_eq!(detail, "no CHANGELOG.md at the repository root");
    }

    #[test]
    fn parse_prp_and_verify_traces_acceptance_ids_to_tests() {
        let prp = rate_limiter();
        let repo = Repo::new();
        repo.file(
            "PRPs/feature.md",
            "# PRP: Rate Limiter\n- [ ] AC-1 x\n- [ ] AC-2 y\n- [ ] AC-10 z\n",
        )
        .file(
            "src/limiter.rs",
            "// AC-2 is implemented here, but this is not a test\nfn f() {}\n",
        )
        .file(
            "tests/limits.rs",
            "#[test]\nfn ac_1_over_the_limit_returns_429() {}\n",
        )
        .file(
            "web/limiter.test.ts",
            "it('resets every minute (AC-10)', () => {});\n",
        )
        .file("node_modules/dep/test.js", "// AC-2\n");
        let (value, detail) = figure(
            &repo.run(Method::ParsePrpAndVerify, Some(&prp)),
            "criteria_coverage",
        );
        assert_eq!(value, MetricValue::Number(66.67));
        assert_eq!(
            detail,
            "2 of 3 acceptance criteria referenced in 2 test files; not referenced: AC-2"
        );
        repo.file(
            "src/limiter.rs",
            "fn f() {}\n#[cfg(test)]\nmod tests {\n    // AC-2\n}\n",
        );
        let (value, detail) = figure(
            &repo.run(Method::ParsePrpAndVerify, Some(&prp)),
            "criteria_coverage",
        );
        assert_eq!(value, MetricValue::Number(100.0));
        assert_eq!(detail, "all 3 acceptance criteria are referenced in tests");
    }

    #[test]
    fn parse_prp_and_verify_does_not_confuse_ac_1_with_ac_10() {
        let prp = prp("# Limits\n\n- [ ] AC-1 a\n- [ ] AC-10 b\n");
        let repo = Repo::new();
        repo.file(
            "spec/limits_spec.lua",
            "describe('AC-10 per key', function() end)\n",
        );
        let (value, detail) = figure(
            &repo.run(Method::ParsePrpAndVerify, Some(&prp)),
            "criteria_coverage",
        );
        assert_eq!(value, MetricValue::Number(50.0));
        assert!(detail.ends_with("not referenced: AC-1"), "{detail}");
    }

    #[test]
    fn parse_prp_and_verify_uses_success_criteria_without_ids_and_needs_a_prp() {
        let prp = prp(
            "# Limits\n\n## Success Criteria\n\n- [ ] Requests over the limit get HTTP 429\n- [ ] Limits reset\n",
        );
        let repo = Repo::new();
        repo.file(
            "tests/test_limits.py",
            "def test_429():\n    \"\"\"requests over the limit get HTTP-429\"\"\"\n",
        );
        let (value, detail) = figure(
            &repo.run(Method::ParsePrpAndVerify, Some(&prp)),
            "criteria_coverage",
        );
        assert_eq!(value, MetricValue::Number(50.0));
        assert!(
            detail.ends_with("not referenced: \"Limits reset\""),
            "{detail}"
        );
        assert!(matches!(
            repo.run(Method::ParsePrpAndVerify, None),
            MethodOutcome::NotApplicable { .. }
        ));
    }

    #[test]
    fn validate_openapi_checks_version_and_paths() {
        let repo = Repo::new();
        repo.file("docs/openapi.yaml", "openapi: 3.0.3\ninfo:\n  title: x\n  version: '1'\npaths:\n  /limits:\n    get:\n      responses:\n        200:\n          description: ok\n");
        let outcome = repo.run(Method::ValidateOpenapi, None);
        let (value, detail) = figure(&outcome, "openapi_valid");
        assert_eq!(value, MetricValue::Bool(true));
        assert_eq!(detail, "docs/openapi.yaml: OpenAPI 3.0.3 with 1 path");
        assert_eq!(
            figure(&outcome, "not_applicable").0,
            MetricValue::Bool(false)
        );

        let json = Repo::new();
        json.file("swagger.json", "{\"swagger\": \"2.0\", \"info\": {}}");
        let (value, detail) = figure(&json.run(Method::ValidateOpenapi, None), "openapi_valid");
        assert_eq!(value, MetricValue::Bool(false));
        assert_eq!(detail, "swagger.json has no top-level `paths` mapping");

        let broken = Repo::new();
        broken.file("api/openapi.json", "{\"openapi\": ");
        let (value, detail) = figure(&broken.run(Method::ValidateOpenapi, None), "openapi_valid");
        assert_eq!(value, MetricValue::Bool(false));
        assert!(
            detail.starts_with("api/openapi.json is not valid JSON"),
            "{detail}"
        );
    }

    #[test]
    fn validate_openapi_without_a_document_is_not_applicable() {
        let outcome = Repo::new().run(Method::ValidateOpenapi, None);
        assert_eq!(
            figure(&outcome, "not_applicable").0,
            MetricValue::Bool(true)
        );
        assert_eq!(
            figure(&outcome, "openapi_valid").0,
            MetricValue::Bool(false)
        );
    }

    fn long_body(prefix: &str, count: usize) -> String {
        (0..count)
            .flat_map(|index| [prefix.to_owned(), format!("x{index} = {index}\n")])
            .collect()
    }

    #[test]
    fn check_complexity_comments_flags_long_undocumented_functions() {
        let repo = Repo::new();
        let rust_body = long_body("    let ", 45);
        repo.file(
            "src/lib.rs",
            &format!(
                "/// Parses the thing.\n#[must_use]\npub fn documented() -> char {{\n{rust_body}    '{{'\n}}\n\npub(crate) fn bare(\n    a: u32,\n) -> u32 {{\n{rust_body}    a\n}}\n\nfn short() {{}}\n\n#[cfg(test)]\nmod tests {{\n    fn helper() {{\n{rust_body}    }}\n}}\n"
            ),
        );
        let go_body = long_body("\t", 45);
        repo.file("server.go", &format!("package main\n\n// Run serves.\nfunc (s *Server) Run() {{\n{go_body}}}\n\nfunc helper() {{\n{go_body}}}\n"));
        let python_body = long_body("    ", 45);
        repo.file(
            "app/views.py",
            &format!("def documented():\n    \"\"\"Renders.\"\"\"\n{python_body}\n\ndef bare(\n    a,\n):\n{python_body}"),
        );
        let lua_body = long_body("  local ", 45);
        repo.file("lua/mod.lua", &format!("-- Loads.\nlocal function load()\n  if x then\n{lua_body}  end\nend\n\nfunction M.bare()\n{lua_body}end\n"));
        let js_body = long_body("  const ", 45);
        repo.file("web/app.ts", &format!("/** Fetches. */\nexport async function fetchAll(): Promise<void> {{\n{js_body}}}\n\nexport const bare = (a: number) => {{\n  const s = `}}`;\n{js_body}}};\n"));
        repo.file(
            "tests/long_test.rs",
            &format!("fn long_test() {{\n{rust_body}}}\n"),
        );
        repo.file("vendor/dep.go", &format!("func Dep() {{\n{go_body}}}\n"));
        let outcome = repo.run(Method::CheckComplexityComments, None);
        let (value, detail) = figure(&outcome, "complex_funcs_documented");
        assert_eq!(value, MetricValue::Bool(false));
        assert_eq!(
            detail,
            "5 of 10 functions longer than 40 lines have no comment above them: app/views.py:50 `bare`, lua/mod.lua:52 `M.bare`, server.go:52 `helper`, src/lib.rs:52 `bare`, web/app.ts:50 `bare`"
        );
        assert_eq!(
            figure(&outcome, "undocumented_long_functions").0,
            MetricValue::Number(5.0)
        );
    }

    #[test]
    fn check_complexity_comments_passes_short_or_documented_code() {
        let repo = Repo::new();
        repo.file(
            "main.go",
            &format!(
                "package main\n\n// Main runs.\nfunc main() {{\n{}}}\n\nfunc f() {{}}\n",
                long_body("\t", 45)
            ),
        );
        let (value, detail) = figure(
            &repo.run(Method::CheckComplexityComments, None),
            "complex_funcs_documented",
        );
        assert_eq!(value, MetricValue::Bool(true));
        assert_eq!(
            detail,
            "all 1 functions longer than 40 lines have a comment (1 source file)"
        );
        assert!(matches!(
            Repo::new().run(Method::CheckComplexityComments, None),
            MethodOutcome::NotApplicable { .. }
        ));
    }
}
