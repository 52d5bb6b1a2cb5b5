//! Commands from CI configuration: GitHub workflow `run:` steps and `.gitlab-ci.yml` job
//! scripts, at the repository root.
//!
//! A CI step often runs several commands (`run: |` blocks); prpd takes the individual line that
//! matches a kind (a line with `cargo test`, `pytest` or `npm test` for `test`), never the
//! whole block, so that a lint check does not also run the tests. Setup lines (installs,
//! downloads) and lines with CI expressions (`${{ matrix.os }}`), which cannot run locally,
//! are never taken. A step's `working-directory` (or the job's or workflow's default) becomes
//! a `cd` prefix. A file that does not parse is skipped with a warning: CI syntax goes beyond
//! what prpd needs from it, and CI itself reports a broken workflow.

use std::sync::LazyLock;

use regex::Regex;
use serde::Deserialize;

use super::{Candidate, CommandKind, DetectError, Directory, in_directory, logical_lines};
use crate::qa::tools_mapping::Ordered;

/// Where GitHub keeps workflows.
const WORKFLOW_DIR: &str = ".github/workflows";

/// GitLab's CI file.
const GITLAB_FILE: &str = ".gitlab-ci.yml";

/// Top-level `.gitlab-ci.yml` keys that are not jobs.
const GITLAB_RESERVED: &[&str] = &[
    "default",
    "include",
    "stages",
    "variables",
    "workflow",
    "image",
    "services",
    "cache",
    "before_script",
    "after_script",
];

/// Words that mark a line as environment setup rather than a check.
const SETUP_WORDS: &[&str] = &[
    "install", "ci", "add", "sync", "setup", "curl", "wget", "apt", "apt-get", "brew", "choco",
    "rustup", "corepack",
];

/// The JS package managers' `run` forms, shared by several patterns.
const JS_RUN: &str = r"(?:npm|pnpm|yarn|bun)(?: run)?";

/// One pattern per kind; a line matching it is a command of that kind.
static PATTERNS: LazyLock<Vec<(CommandKind, Regex)>> = LazyLock::new(|| {
    let toolchain = r"(?:\+\S+ )?";
    let sources = [
        (
            CommandKind::Test,
            format!(
                r"\b(?:cargo {toolchain}(?:test|nextest run)|go test|pytest|{JS_RUN} test|jest|vitest|busted|(?:make|just) (?:test|tests|check)|mvnw? .*\b(?:test|verify)|gradlew? .*\btest|rspec|rake test|mix test|dotnet test|ctest|deno test)\b"
            ),
        ),
        (
            CommandKind::Lint,
            format!(
                r"\b(?:cargo {toolchain}clippy|golangci-lint|go vet|staticcheck|ruff check|flake8|pylint|eslint|{JS_RUN} lint|luacheck|rubocop|(?:make|just) lint)\b"
            ),
        ),
        (
            CommandKind::Typecheck,
            format!(
                r"\b(?:mypy|pyright|tsc\b.*--noEmit|{JS_RUN} (?:typecheck|type-check|check-types|tsc)|(?:make|just) typecheck|cargo {toolchain}check)\b"
            ),
        ),
        (
            CommandKind::Build,
            format!(
                r"\b(?:cargo {toolchain}build|go build|{JS_RUN} build|(?:make|just) build|python3? -m build|mvnw? .*\bpackage|gradlew? .*\b(?:build|assemble)|dotnet build)\b"
            ),
        ),
        (
            CommandKind::FormatCheck,
            format!(
                r"\b(?:cargo {toolchain}fmt\b.*--check|gofmt -l|prettier\b.*(?:--check|--list-different)|black\b.*--check|ruff format\b.*--check|stylua\b.*--check|isort\b.*--check|{JS_RUN} (?:format:check|fmt:check|prettier:check|check-format)|(?:make|just) (?:format-check|fmt-check|check-format|check-fmt))\b"
            ),
        ),
        (
            CommandKind::Complexity,
            r"\b(?:radon|gocyclo|lizard|(?:make|just) complexity)\b".to_owned(),
        ),
        (
            CommandKind::Duplication,
            r"\b(?:jscpd|dupl|(?:make|just) duplication)\b".to_owned(),
        ),
    ];
    sources
        .into_iter()
        .map(|(kind, source)| {
            let regex = Regex::new(&source).expect("the CI patterns are valid regexes (tested)");
            (kind, regex)
        })
        .collect()
});

/// The kinds `line` is a command of; none for setup lines and CI expressions.
fn kinds_of(line: &str) -> Vec<CommandKind> {
    let is_setup = line
        .split_whitespace()
        .any(|word| SETUP_WORDS.contains(&word));
    if is_setup || line.contains("${{") {
        return Vec::new();
    }
    PATTERNS
        .iter()
        .filter(|(_, pattern)| pattern.is_match(line))
        .map(|(kind, _)| *kind)
        .collect()
}

/// The command lines of a script: continuations joined, comments and blanks dropped.
fn command_lines(script: &str) -> Vec<String> {
    logical_lines(script)
        .into_iter()
        .map(|line| line.trim().to_owned())
        .filter(|line| !line.is_empty() && !line.starts_with('#'))
        .collect()
}

/// Candidates from every workflow (sorted by file name), then from GitLab CI.
pub(super) fn candidates(directory: &Directory<'_>) -> Result<Vec<Candidate>, DetectError> {
    let mut candidates = Vec::new();
    let workflows = directory.path(WORKFLOW_DIR);
    if let Ok(entries) = std::fs::read_dir(&workflows) {
        let mut names: Vec<String> = entries
            .filter_map(Result::ok)
            .filter_map(|entry| entry.file_name().into_string().ok())
            .filter(|name| {
                std::path::Path::new(name)
                    .extension()
                    .is_some_and(|extension| {
                        extension.eq_ignore_ascii_case("yml")
                            || extension.eq_ignore_ascii_case("yaml")
                    })
            })
            .collect();
        names.sort();
        for name in names {
            let relative = format!("{WORKFLOW_DIR}/{name}");
            if let Some(text) = directory.read(&relative)? {
                candidates.extend(github_candidates(&relative, &text));
            }
        }
    }
    if let Some(text) = directory.read(GITLAB_FILE)? {
        candidates.extend(gitlab_candidates(&text));
    }
    Ok(candidates)
}

#[derive(Debug, Deserialize)]
struct Workflow {
    #[serde(default)]
    jobs: Ordered<Job>,
    defaults: Option<Defaults>,
}

#[derive(Debug, Deserialize)]
struct Job {
    #[serde(default)]
    steps: Vec<Step>,
    defaults: Option<Defaults>,
}

#[derive(Debug, Deserialize)]
struct Defaults {
    run: Option<RunDefaults>,
}

#[derive(Debug, Deserialize)]
struct RunDefaults {
    #[serde(rename = "working-directory")]
    working_directory: Option<String>,
}

#[derive(Debug, Deserialize)]
struct Step {
    name: Option<String>,
    run: Option<String>,
    #[serde(rename = "working-directory")]
    working_directory: Option<String>,
}

fn default_directory(defaults: Option<&Defaults>) -> Option<&str> {
    defaults?.run.as_ref()?.working_directory.as_deref()
}

/// The candidates of one workflow file, `file` being its path from the root.
fn github_candidates(file: &str, text: &str) -> Vec<Candidate> {
    let workflow: Workflow = match yaml_serde::from_str(text) {
        Ok(workflow) => workflow,
        Err(error) => {
            tracing::warn!(file, %error, "skipping a CI workflow prpd cannot parse");
            return Vec::new();
        }
    };
    let mut candidates = Vec::new();
    for (_, job) in &workflow.jobs.0 {
        for step in &job.steps {
            let Some(run) = &step.run else {
                continue;
            };
            let directory = step
                .working_directory
                .as_deref()
                .or_else(|| default_directory(job.defaults.as_ref()))
                .or_else(|| default_directory(workflow.defaults.as_ref()));
            for line in command_lines(run) {
                let label = step.name.as_deref().unwrap_or(&line);
                let source = format!("{file} step \"{label}\"");
                let command = match directory {
                    Some(directory) => in_directory(std::path::Path::new(directory), &line),
                    None => line.clone(),
                };
                for kind in kinds_of(&line) {
                    candidates.push(Candidate::plain(kind, &command, source.clone()));
                }
            }
        }
    }
    candidates
}

/// The candidates of `.gitlab-ci.yml`: each job's `script` lines, jobs in file order.
fn gitlab_candidates(text: &str) -> Vec<Candidate> {
    let document: yaml_serde::Value = match yaml_serde::from_str(text) {
        Ok(document) => document,
        Err(error) => {
            tracing::warn!(file = GITLAB_FILE, %error, "skipping a CI file prpd cannot parse");
            return Vec::new();
        }
    };
    let Some(jobs) = document.as_mapping() else {
        return Vec::new();
    };
    let mut candidates = Vec::new();
    for (name, job) in jobs {
        let Some(name) = name.as_str() else {
            continue;
        };
        if name.starts_with('.') || GITLAB_RESERVED.contains(&name) {
            continue;
        }
        let scripts: Vec<&str> = match job.get("script") {
            Some(yaml_serde::Value::String(script)) => vec![script.as_str()],
            Some(yaml_serde::Value::Sequence(lines)) => {
                lines.iter().filter_map(yaml_serde::Value::as_str).collect()
            }
            _ => Vec::new(),
        };
        let source = format!("{GITLAB_FILE} job {name}");
        for line in scripts.into_iter().flat_map(command_lines) {
            for kind in kinds_of(&line) {
                candidates.push(Candidate::plain(kind, &line, source.clone()));
            }
        }
    }
    candidates
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_classified_by_kind() {
        use CommandKind::{Build, Complexity, Duplication, FormatCheck, Lint, Test, Typecheck};
        let cases: &[(&str, &[CommandKind])] = &[
            ("cargo test --workspace", &[Test]),
            (
                "cargo +nightly clippy --all-targets -- -D warnings",
                &[Lint],
            ),
            ("cargo fmt --all -- --check", &[FormatCheck]),
            ("cargo build --release", &[Build]),
            ("go test -race ./...", &[Test]),
            ("python -m pytest -q", &[Test]),
            ("pnpm run lint", &[Lint]),
            ("npm test", &[Test]),
            ("yarn typecheck", &[Typecheck]),
            ("npx tsc --noEmit", &[Typecheck]),
            ("npx prettier --check .", &[FormatCheck]),
            ("mypy src", &[Typecheck]),
            ("radon cc . -a", &[Complexity]),
            ("npx jscpd src", &[Duplication]),
            ("make test", &[Test]),
            ("busted --coverage", &[Test]),
            ("pip install pytest ruff", &[]),
            ("npm ci", &[]),
            ("cargo install cargo-nextest", &[]),
            ("cargo test --target ${{ matrix.target }}", &[]),
            ("echo done", &[]),
        ];
        for (line, expected) in cases {
            assert_eq!(kinds_of(line), *expected, "{line}");
        }
    }

    const WORKFLOW: &str = r"
name: CI
on: [push]
defaults:
  run:
    working-directory: .
jobs:
  build:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - name: Install
        run: pip install -r requirements.txt
      - name: Run tests
        run: |
          # the suite
          python -m pytest \
            -q
          ruff check .
      - run: cargo fmt --check
  web:
    defaults:
      run:
        working-directory: web
    steps:
      - run: npm test
";

    #[test]
    fn workflow_steps_give_lines_with_step_names_and_directories() {
        let candidates = github_candidates(".github/workflows/ci.yml", WORKFLOW);
        let summary: Vec<(CommandKind, &str, &str)> = candidates
            .iter()
            .map(|candidate| {
                (
                    candidate.kind,
                    candidate.command.as_str(),
                    candidate.source.as_str(),
                )
            })
            .collect();
        assert_eq!(
            summary,
            [
                (
                    CommandKind::Test,
                    "python -m pytest -q",
                    ".github/workflows/ci.yml step \"Run tests\""
                ),
                (
                    CommandKind::Lint,
                    "ruff check .",
                    ".github/workflows/ci.yml step \"Run tests\""
                ),
                (
                    CommandKind::FormatCheck,
                    "cargo fmt --check",
                    ".github/workflows/ci.yml step \"cargo fmt --check\""
                ),
                (
                    CommandKind::Test,
                    "cd web && npm test",
                    ".github/workflows/ci.yml step \"npm test\""
                ),
            ]
        );
    }

    #[test]
    fn unparsable_workflow_is_skipped() {
        assert!(github_candidates("ci.yml", "jobs: [unclosed").is_empty());
    }

    #[test]
    fn gitlab_jobs_give_their_script_lines() {
        let text = "stages: [test]\nvariables:\n  X: 1\n.template:\n  script: [pytest]\nlint:\n  script:\n    - pip install ruff\n    - ruff check .\ntest:\n  script: go test ./...\n";
        let candidates = gitlab_candidates(text);
        assert_eq!(
            candidates,
            [
                Candidate::plain(
                    CommandKind::Lint,
                    "ruff check .",
                    ".gitlab-ci.yml job lint".to_owned()
                ),
                Candidate::plain(
                    CommandKind::Test,
                    "go test ./...",
                    ".gitlab-ci.yml job test".to_owned()
                ),
            ]
        );
    }
}
