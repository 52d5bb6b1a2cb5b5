//! Commands from CI configuration, at the repository root: GitHub workflow `run:` steps
//! ([`github`]), `.gitlab-ci.yml` job scripts ([`gitlab`]), `.travis.yml` ([`travis`]) and
//! sourcehut `.build.yml` / `.builds/*.yml` tasks ([`sourcehut`]).
//!
//! A CI step often runs several commands (`run: |` blocks); prpd takes the individual line that
//! matches a kind (a line with `cargo test`, `pytest` or `npm test` for `test`), never the
//! whole block, so that a lint check does not also run the tests. CI runs on machines prpd is
//! not, so each line is cleaned ([`clean`]) before it is matched: environment prefixes
//! (`RUSTFLAGS=-Dwarnings cargo test`, `env CI=1 npm test`, `SOURCE_DATE_EPOCH=$(git log -1
//! --pretty=%ct) python -m build`: words are read as the shell reads them, quotes and command
//! substitutions included) are dropped, and so are cross-compilation targets (`cargo test
//! --target aarch64-…`; `cross test` runs as `cargo test`) and the release profile of a test
//! run (`cargo test --release` runs as `cargo test`): the tests are the same ones, the release
//! profile only makes each phase's measurement rebuild every dependency optimised, several
//! times slower, and turns off the overflow checks and `debug_assert!`s that the plain run
//! keeps, so the plain run is the stricter one and the one a developer runs. Setup lines (installs, downloads) and lines that still hold CI expressions
//! (`${{ matrix.features }}`), which cannot run locally, are never taken, and neither are
//! jobs and steps for another operating system (a Windows or macOS runner, `if: runner.os ==
//! 'Windows'`, a PowerShell step, a FreeBSD image). A file that does not parse is skipped with
//! a warning: CI syntax goes beyond what prpd needs from it, and CI itself reports a broken
//! workflow.

mod github;
mod gitlab;
mod sourcehut;
mod travis;

use std::sync::LazyLock;

use regex::Regex;

use super::{Candidate, CommandKind, DetectError, Directory, logical_lines};

/// Operating systems prpd does not run on, as CI files name them (lowercase).
const OTHER_SYSTEMS: &[&str] = &[
    "windows", "macos", "osx", "darwin", "freebsd", "openbsd", "netbsd", "win32", "win64",
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
                r"\b(?:cargo {toolchain}fmt|gofmt -l|prettier|black|ruff format|stylua|isort|{JS_RUN} (?:format:check|fmt:check|check:format|prettier:check|check-format)|(?:make|just) (?:format-check|fmt-check|check-format|check-fmt))\b"
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
pub(super) fn kinds_of(line: &str) -> Vec<CommandKind> {
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

/// Every CI file's candidates, in this order: GitHub workflows (sorted by file name), GitLab,
/// Travis, sourcehut.
pub(super) fn candidates(directory: &Directory<'_>) -> Result<Vec<Candidate>, DetectError> {
    let mut candidates = github::candidates(directory)?;
    candidates.extend(gitlab::candidates(directory)?);
    candidates.extend(travis::candidates(directory)?);
    candidates.extend(sourcehut::candidates(directory)?);
    Ok(candidates)
}

/// The candidates of one script line, cleaned, each labelled with `source`; `prefix` runs it
/// in a directory (`cd web && `).
fn line_candidates(line: &str, source: &str, directory: Option<&str>) -> Vec<Candidate> {
    let Some(cleaned) = clean(line) else {
        return Vec::new();
    };
    let command = match directory {
        Some(directory) => super::in_directory(std::path::Path::new(directory), &cleaned),
        None => cleaned.clone(),
    };
    kinds_of(&cleaned)
        .into_iter()
        .map(|kind| Candidate::plain(kind, &command, source.to_owned()))
        .collect()
}

/// The names of the files in `folder` (relative to `directory`) that end in `.yml` or
/// `.yaml`, sorted.
fn yaml_files(directory: &Directory<'_>, folder: &str) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(directory.path(folder)) else {
        return Vec::new();
    };
    let mut names: Vec<String> = entries
        .filter_map(Result::ok)
        .filter_map(|entry| entry.file_name().into_string().ok())
        .filter(|name| {
            std::path::Path::new(name)
                .extension()
                .is_some_and(|extension| {
                    extension.eq_ignore_ascii_case("yml") || extension.eq_ignore_ascii_case("yaml")
                })
        })
        .collect();
    names.sort();
    names
}

/// Whether `text` (a runner label, an image, a condition) names another operating system.
fn names_other_system(text: &str) -> bool {
    let lower = text.to_ascii_lowercase();
    OTHER_SYSTEMS.iter().any(|system| lower.contains(system))
}

/// Whether a step condition (`if:`) limits the step to another operating system:
/// `runner.os == 'Windows'`, `startsWith(matrix.os, 'macos')`. A condition that excludes one
/// (`runner.os != 'Windows'`) keeps the step.
fn condition_is_for_other_system(condition: &str) -> bool {
    let lower = condition.to_ascii_lowercase();
    let about_os = [
        "runner.os",
        "matrix.os",
        "matrix.platform",
        "matrix.target",
        "runner.arch",
    ]
    .iter()
    .any(|subject| lower.contains(subject));
    about_os && names_other_system(&lower) && !lower.contains("!=")
}

/// What a shell word is inside of, innermost last, while [`words_with_spans`] reads it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Open {
    /// `'…'`: nothing is special until the closing quote.
    Single,
    /// `"…"`: substitutions still nest inside.
    Double,
    /// `` `…` ``, an old-style command substitution.
    Backtick,
    /// `$(…)`, or a `(` inside one.
    Parenthesis,
    /// `${…}`, a parameter expansion.
    Brace,
    /// `${{ … }}`, a CI expression.
    Expression,
}

/// A shell word of `line` with its byte span. Quotes, command substitutions (`$(git log -1
/// --pretty=%ct)`, backticks), parameter expansions (`${VERSION:-dev}`), backslash escapes and
/// CI expressions (`${{ matrix.os }}`) keep spaces inside one word, nested in any order, as
/// the shell reads them.
fn words_with_spans(line: &str) -> Vec<(usize, usize)> {
    let mut spans = Vec::new();
    let mut start = None;
    let mut open: Vec<Open> = Vec::new();
    let mut index = 0;
    while let Some(c) = line[index..].chars().next() {
        let rest = &line[index..];
        let inner = open.last().copied();
        if inner.is_none() && c.is_whitespace() {
            if let Some(begin) = start.take() {
                spans.push((begin, index));
            }
            index += c.len_utf8();
            continue;
        }
        if start.is_none() {
            start = Some(index);
        }
        let mut step = c.len_utf8();
        match inner {
            Some(Open::Single) if c == '\'' => {
                open.pop();
            }
            Some(Open::Expression) if rest.starts_with("}}") => {
                open.pop();
                step = 2;
            }
            Some(Open::Single | Open::Expression) => {}
            _ if c == '\\' => {
                step += rest[1..].chars().next().map_or(0, char::len_utf8);
            }
            _ if rest.starts_with("${{") => {
                open.push(Open::Expression);
                step = 3;
            }
            _ if rest.starts_with("$(") => {
                open.push(Open::Parenthesis);
                step = 2;
            }
            _ if rest.starts_with("${") => {
                open.push(Open::Brace);
                step = 2;
            }
            Some(Open::Double) if c == '"' => {
                open.pop();
            }
            Some(Open::Backtick) if c == '`' => {
                open.pop();
            }
            Some(Open::Parenthesis) if c == ')' => {
                open.pop();
            }
            Some(Open::Brace) if c == '}' => {
                open.pop();
            }
            Some(Open::Parenthesis) if c == '(' => open.push(Open::Parenthesis),
            Some(Open::Double) if c == '`' => open.push(Open::Backtick),
            Some(Open::Double) => {}
            _ if c == '"' => open.push(Open::Double),
            _ if c == '\'' => open.push(Open::Single),
            _ if c == '`' => open.push(Open::Backtick),
            _ => {}
        }
        index = (index + step).min(line.len());
    }
    if let Some(begin) = start {
        spans.push((begin, line.len()));
    }
    spans
}

/// Whether `word` assigns an environment variable (`FOO=1`, `RUSTFLAGS="-D warnings"`).
fn is_assignment(word: &str) -> bool {
    let Some((name, _)) = word.split_once('=') else {
        return false;
    };
    !name.is_empty()
        && !name.starts_with(|c: char| c.is_ascii_digit())
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// A CI line as prpd can run it here: without environment prefixes and cross-compilation
/// targets, or `None` when it still holds a CI expression.
pub(super) fn clean(line: &str) -> Option<String> {
    let spans = words_with_spans(line);
    let mut first = 0;
    while let Some((start, end)) = spans.get(first) {
        let word = &line[*start..*end];
        if is_assignment(word) || word == "env" {
            first += 1;
        } else {
            break;
        }
    }
    let mut words: Vec<&str> = spans[first..]
        .iter()
        .map(|(start, end)| &line[*start..*end])
        .collect();
    if words.first() == Some(&"cross") {
        words[0] = "cargo";
    }
    if words.first().is_some_and(|word| *word == "cargo") {
        let tests = runs_cargo_tests(&words);
        let mut kept = Vec::with_capacity(words.len());
        let mut skip_next = false;
        let mut in_first_command = true;
        for word in words {
            in_first_command &= !matches!(word, "&&" | "||" | ";" | "|");
            if skip_next {
                skip_next = false;
            } else if word == "--target" {
                skip_next = true;
            } else if word.starts_with("--target=")
                || (tests && in_first_command && word == "--release")
            {
                // Dropped: see the module docs.
            } else {
                kept.push(word);
            }
        }
        words = kept;
    }
    let cleaned = without_downloads(&words).join(" ");
    (!cleaned.is_empty() && !cleaned.contains("${{")).then_some(cleaned)
}

/// Whether `words` (a line starting with `cargo`) runs the tests: `cargo test`, `cargo
/// +nightly test`, `cargo nextest run`.
fn runs_cargo_tests(words: &[&str]) -> bool {
    let subcommand = words
        .iter()
        .skip(1)
        .find(|word| !word.starts_with('+'))
        .copied();
    matches!(subcommand, Some("test" | "nextest"))
}

/// `words` with every package runner told never to download (`npx eslint` → `npx --no
/// eslint`, `npx -y tsc` → `npx --no tsc`, `bunx x` → `bunx --no-install x`, `pnpm dlx x` →
/// `pnpm exec x`, `yarn dlx x` → `yarn run x`). CI installs what its steps need; here a tool
/// that is not installed must fail fast as missing, not be fetched from the network.
fn without_downloads(words: &[&str]) -> Vec<String> {
    let mut out: Vec<String> = Vec::with_capacity(words.len() + 1);
    let mut index = 0;
    while let Some(word) = words.get(index) {
        let starts_segment = index == 0 || matches!(words[index - 1], "&&" | "||" | ";" | "|");
        let next = words.get(index + 1).copied();
        match (*word, next) {
            ("npx", _) if starts_segment => {
                out.push("npx".to_owned());
                out.push("--no".to_owned());
                index += 1;
                while let Some(flag) = words.get(index) {
                    if matches!(*flag, "--no" | "-y" | "--yes" | "--no-install") {
                        index += 1;
                    } else {
                        break;
                    }
                }
            }
            ("bunx", _) if starts_segment => {
                out.push("bunx".to_owned());
                if next != Some("--no-install") {
                    out.push("--no-install".to_owned());
                }
                index += 1;
            }
            ("pnpm", Some("dlx")) if starts_segment => {
                out.extend(["pnpm".to_owned(), "exec".to_owned()]);
                index += 2;
            }
            ("yarn", Some("dlx")) if starts_segment => {
                out.extend(["yarn".to_owned(), "run".to_owned()]);
                index += 2;
            }
            _ => {
                out.push((*word).to_owned());
                index += 1;
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn package_runners_never_download() {
        let cases = [
            ("npx tsc --noEmit", "npx --no tsc --noEmit"),
            (
                "npx --yes prettier --check .",
                "npx --no prettier --check .",
            ),
            ("npx -y jscpd src", "npx --no jscpd src"),
            ("npx --no eslint .", "npx --no eslint ."),
            (
                "npm ci && npx eslint . && echo npx",
                "npm ci && npx --no eslint . && echo npx",
            ),
            ("bunx tsc --noEmit", "bunx --no-install tsc --noEmit"),
            ("bunx --no-install tsc", "bunx --no-install tsc"),
            (
                "pnpm dlx prettier --check .",
                "pnpm exec prettier --check .",
            ),
            ("yarn dlx eslint .", "yarn run eslint ."),
        ];
        for (line, expected) in cases {
            assert_eq!(clean(line).as_deref(), Some(expected), "{line}");
        }
    }

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

    #[test]
    fn lines_are_cleaned_of_environment_and_cross_targets() {
        let cases = [
            ("cargo test --workspace", Some("cargo test --workspace")),
            ("RUSTFLAGS=\"-D warnings\" cargo test", Some("cargo test")),
            ("env CI=1 NODE_ENV=test npm test", Some("npm test")),
            ("FOO=1 BAR='a b' pytest -q", Some("pytest -q")),
            (
                "cargo test --target aarch64-unknown-linux-gnu --all",
                Some("cargo test --all"),
            ),
            (
                "cross test --target=armv7-unknown-linux-gnueabihf",
                Some("cargo test"),
            ),
            (
                "cargo test --target ${{ matrix.target }}",
                Some("cargo test"),
            ),
            ("cargo test --features ${{ matrix.features }}", None),
            (
                "tsc --target es2019 --noEmit",
                Some("tsc --target es2019 --noEmit"),
            ),
            (
                "SOURCE_DATE_EPOCH=$(git log -1 --pretty=%ct) python -m build",
                Some("python -m build"),
            ),
            (
                "VERSION=`git describe --tags` GOFLAGS=\"-ldflags=-X main.v=$(git rev-parse \\\"HEAD\\\")\" go build ./...",
                Some("go build ./..."),
            ),
            (
                "TAG=${GITHUB_REF#refs/tags/} STAMP=$(date -d \"$(git log -1 --format=%cI)\" +%s) make build",
                Some("make build"),
            ),
            ("A=it\\ is\\ one B='x y' pytest", Some("pytest")),
            (
                "cargo test --release --all-features",
                Some("cargo test --all-features"),
            ),
            (
                "cargo +stable test --workspace --release",
                Some("cargo +stable test --workspace"),
            ),
            ("cargo nextest run --release", Some("cargo nextest run")),
            ("cargo build --release", Some("cargo build --release")),
            (
                "cargo test --release && cargo build --release",
                Some("cargo test && cargo build --release"),
            ),
        ];
        for (line, expected) in cases {
            assert_eq!(clean(line).as_deref(), expected, "{line}");
        }
    }

    #[test]
    fn conditions_for_other_systems_are_recognised() {
        for condition in [
            "runner.os == 'Windows'",
            "matrix.os == 'macos-latest'",
            "startsWith(matrix.os, 'windows')",
        ] {
            assert!(condition_is_for_other_system(condition), "{condition}");
        }
        for condition in [
            "runner.os != 'Windows'",
            "runner.os == 'Linux'",
            "github.event_name == 'push'",
        ] {
            assert!(!condition_is_for_other_system(condition), "{condition}");
        }
    }
}
