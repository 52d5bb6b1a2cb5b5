//! The one rule for which commands QA may run: nothing that rewrites the working tree,
//! changes git state, publishes, pushes, deploys, runs docker, or watches files and never
//! ends (DESIGN §6.3). QA measures the tree the agent left; a check that "fixes" it would
//! measure something else, and a watcher would hang until its timeout.
//!
//! The judgement is textual and deliberately conservative: a command is split into shell
//! segments (at `;`, `|`, `&`, parentheses, backticks and newlines) and each segment's words
//! are compared with known tools and flags wherever they appear, so wrappers such as `npx`,
//! `uv run`, `python -m` or `$(PYTHON) -m` do not hide a tool. A harmless command that merely
//! mentions a formatter (`echo black`) is refused too; discovery then falls back to the next
//! candidate, which costs little.
//!
//! Plain `jest` runs once, and plain `vitest` runs once when its output is not a terminal,
//! which is how QA runs it; so only an explicit watch flag or subcommand is refused.

use std::fmt;

/// Why a command may not run as a QA check; reads well after "it": "it rewrites files
/// (`--fix`)".
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unsafe(pub String);

impl fmt::Display for Unsafe {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str(&self.0)
    }
}

/// Flags that make a tool rewrite files, whatever the tool.
const REWRITE_FLAGS: &[&str] = &[
    "--fix",
    "--write",
    "--apply",
    "--apply-unsafe",
    "--in-place",
    "--autocorrect",
    "--autocorrect-all",
    "--auto-correct",
    "--auto-correct-all",
    "--update-snapshots",
    "--updateSnapshot",
];

/// Endings of script and task names that fix or write files (`lint:fix`, `format:write`),
/// refused wherever such a name is run.
const FIXING_SCRIPT_SUFFIXES: &[&str] = &[":fix", ":write", "-fix"];

/// Formatters that rewrite files unless given one of their check flags: (words that name the
/// formatter, check flags).
const FORMATTERS: &[(&[&str], &[&str])] = &[
    (&["prettier"], &["--check", "-c", "--list-different", "-l"]),
    (&["black"], &["--check", "--diff"]),
    (&["ruff", "format"], &["--check", "--diff"]),
    (&["isort"], &["--check", "--check-only", "-c", "--diff"]),
    (&["cargo", "fmt"], &["--check"]),
    (&["rustfmt"], &["--check"]),
    (&["stylua"], &["--check", "-c"]),
    (&["deno", "fmt"], &["--check"]),
    (&["mix", "format"], &["--check-formatted"]),
    (&["terraform", "fmt"], &["-check"]),
];

/// Commands that always rewrite files.
const REWRITERS: &[&[&str]] = &[&["go", "fmt"], &["go", "mod", "tidy"], &["dprint", "fmt"]];

/// Tools whose short flag means "rewrite files": (tool, flag).
const REWRITE_SHORT_FLAGS: &[(&str, &str)] = &[
    ("gofmt", "-w"),
    ("goimports", "-w"),
    ("gofumpt", "-w"),
    ("rubocop", "-a"),
    ("rubocop", "-A"),
    ("clang-format", "-i"),
    ("sed", "-i"),
    ("autopep8", "-i"),
    ("yapf", "-i"),
    ("jest", "-u"),
    ("vitest", "-u"),
];

/// Tools whose `-w` means "watch".
const WATCH_SHORT_FLAG_TOOLS: &[&str] = &["tsc", "jest", "vitest", "mocha", "webpack", "rollup"];

/// Programs that exist to watch files.
const WATCHERS: &[&str] = &["nodemon", "watchexec", "entr", "ptw", "cargo-watch"];

/// Test runners that watch unless told not to: (words that name the runner, flags that turn
/// watching off).
const WATCHING_RUNNERS: &[(&[&str], &[&str])] = &[
    (
        &["react-scripts", "test"],
        &["--watchAll=false", "--watch=false"],
    ),
    (&["ng", "test"], &["--watch=false", "--no-watch"]),
];

/// git subcommands that change the repository or its remote.
const GIT_WRITES: &[&str] = &[
    "add",
    "commit",
    "push",
    "tag",
    "checkout",
    "switch",
    "restore",
    "reset",
    "stash",
    "clean",
    "rm",
    "mv",
    "rebase",
    "merge",
    "pull",
    "am",
    "apply",
    "cherry-pick",
];

/// Words that publish, push or deploy wherever they appear as a subcommand.
const RELEASE_WORDS: &[(&str, &str)] = &[
    ("publish", "publishes"),
    ("push", "pushes"),
    ("deploy", "deploys"),
    ("release", "releases"),
];

/// Programs that publish on their own.
const PUBLISHERS: &[&str] = &["semantic-release", "release-it"];

/// Container engines: a check must not start containers (slow, needs a daemon, and may reach
/// the network).
const CONTAINER_ENGINES: &[&str] = &["docker", "docker-compose", "podman", "nerdctl"];

/// The characters that end a shell segment: a new line, `;`, a pipe or `||`, `&` or `&&`,
/// a subshell's parentheses and command substitution's backticks.
const SEGMENT_ENDS: [char; 7] = ['\n', ';', '|', '&', '(', ')', '`'];

/// One simple command of a shell line, as the rule reads it: the words between two
/// [`SEGMENT_ENDS`], and the character that ended the segment before it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Segment {
    /// The words as written, quotes included (`"npm`, `run`, `lint"`).
    pub raw: Vec<String>,
    /// The character that ended the previous segment; `None` for the first one.
    pub after: Option<char>,
}

impl Segment {
    /// The words with their surrounding quotes trimmed: what the rule compares.
    pub fn words(&self) -> Vec<&str> {
        self.raw.iter().map(|word| unquoted(word)).collect()
    }
}

/// `word` without the quotes around it (`"npm` → `npm`).
pub fn unquoted(word: &str) -> &str {
    word.trim_matches(['"', '\''])
}

/// The segments of `command`, continuation lines joined. Every rule that reads command text
/// (this one, the tools' configuration, discovery following task runners) splits it here, so
/// that they all see the same commands.
pub fn segments(command: &str) -> Vec<Segment> {
    let joined = command.replace("\\\n", " ");
    let mut found = Vec::new();
    let mut after = None;
    let mut rest = joined.as_str();
    loop {
        let end = rest.find(SEGMENT_ENDS);
        let text = end.map_or(rest, |end| &rest[..end]);
        found.push(Segment {
            raw: text.split_whitespace().map(str::to_owned).collect(),
            after,
        });
        let Some(end) = end else {
            return found;
        };
        after = rest[end..].chars().next();
        rest = &rest[end + 1..];
    }
}

/// `Ok` when QA may run `command`; otherwise the reason it may not.
pub fn is_safe(command: &str) -> Result<(), Unsafe> {
    for segment in segments(command) {
        judge_segment(&segment.words())?;
    }
    Ok(())
}

/// `command` with every formatter in it switched to its check mode (`prettier --write .` →
/// `prettier --check .`, `cargo fmt --all` → `cargo fmt --check --all`), or `None` when that
/// does not make it safe. Only a single command is rewritten: in a chain (`black . && git
/// diff`) the formatter's place is not prpd's to change.
pub fn check_mode(command: &str) -> Option<String> {
    if command.contains(SEGMENT_ENDS) || command.contains('$') {
        return None;
    }
    let mut words: Vec<String> = command.split_whitespace().map(str::to_owned).collect();
    words.retain(|word| word != "--write" && word != "-w");
    let (formatter, check_flags) = FORMATTERS.iter().find(|(formatter, _)| {
        contains_sequence(
            &words.iter().map(String::as_str).collect::<Vec<_>>(),
            formatter,
        )
    })?;
    let position = words.windows(formatter.len()).position(|window| {
        window
            .iter()
            .zip(formatter.iter())
            .all(|(word, name)| base(word) == *name)
    })?;
    let end = position + formatter.len();
    if !check_flags
        .iter()
        .any(|flag| words.iter().any(|word| word == flag))
    {
        words.insert(end, check_flags[0].to_owned());
    }
    let rewritten = words.join(" ");
    is_safe(&rewritten).is_ok().then_some(rewritten)
}

/// Whether `text` runs a formatter in its check mode (`cargo fmt --check`, `prettier -c .`,
/// `gofmt -l .`): what makes a task called `fmt` a format check rather than a formatter.
pub fn formats_in_check_mode(text: &str) -> bool {
    segments(text).iter().any(|segment| {
        let words = segment.words();
        let listing = [
            ("gofmt", "-l"),
            ("gofmt", "-d"),
            ("shfmt", "-d"),
            ("shfmt", "-l"),
        ]
        .iter()
        .any(|(tool, flag)| contains_sequence(&words, &[tool]) && words.contains(flag));
        listing
            || FORMATTERS.iter().any(|(formatter, check_flags)| {
                contains_sequence(&words, formatter)
                    && check_flags.iter().any(|flag| words.contains(flag))
            })
    })
}

/// The last path component of a word: `./node_modules/.bin/prettier` → `prettier`.
fn base(word: &str) -> &str {
    word.rsplit('/').next().unwrap_or(word)
}

/// Whether `sequence` occurs in `words` as consecutive words (by base name).
fn contains_sequence(words: &[&str], sequence: &[&str]) -> bool {
    words.windows(sequence.len()).any(|window| {
        window
            .iter()
            .zip(sequence)
            .all(|(word, name)| base(word) == *name)
    })
}

fn unsafe_because(reason: String) -> Result<(), Unsafe> {
    Err(Unsafe(reason))
}

fn judge_segment(words: &[&str]) -> Result<(), Unsafe> {
    let has = |flag: &str| words.contains(&flag);
    for word in words {
        let flag = word.split('=').next().unwrap_or(word);
        if REWRITE_FLAGS.contains(&flag) {
            return unsafe_because(format!("rewrites files (`{flag}`)"));
        }
        if word.starts_with("--watch") && !word.ends_with("=false") {
            return unsafe_because(format!("watches files (`{word}`)"));
        }
        if *word == "watch" || word.ends_with(":watch") {
            return unsafe_because(format!("watches files (`{word}`)"));
        }
        if !word.starts_with('-')
            && FIXING_SCRIPT_SUFFIXES
                .iter()
                .any(|suffix| word.len() > suffix.len() && word.ends_with(suffix))
        {
            return unsafe_because(format!("rewrites files (`{word}`)"));
        }
        if WATCHERS.contains(&base(word)) {
            return unsafe_because(format!("watches files (`{}`)", base(word)));
        }
        if CONTAINER_ENGINES.contains(&base(word)) {
            return unsafe_because(format!("runs containers (`{}`)", base(word)));
        }
        if PUBLISHERS.contains(&base(word)) {
            return unsafe_because(format!("publishes (`{}`)", base(word)));
        }
    }
    for (formatter, check_flags) in FORMATTERS {
        if contains_sequence(words, formatter) && !check_flags.iter().any(|flag| has(flag)) {
            return unsafe_because(format!(
                "formats files (`{}` without `{}`)",
                formatter.join(" "),
                check_flags[0]
            ));
        }
    }
    for rewriter in REWRITERS {
        if contains_sequence(words, rewriter) {
            return unsafe_because(format!("rewrites files (`{}`)", rewriter.join(" ")));
        }
    }
    for (tool, flag) in REWRITE_SHORT_FLAGS {
        if contains_sequence(words, &[tool]) && has(flag) {
            return unsafe_because(format!("rewrites files (`{tool} {flag}`)"));
        }
    }
    for tool in WATCH_SHORT_FLAG_TOOLS {
        if contains_sequence(words, &[tool]) && has("-w") {
            return unsafe_because(format!("watches files (`{tool} -w`)"));
        }
    }
    for (runner, off_flags) in WATCHING_RUNNERS {
        if contains_sequence(words, runner) && !off_flags.iter().any(|flag| has(flag)) {
            return unsafe_because(format!(
                "watches files (`{}` without `{}`)",
                runner.join(" "),
                off_flags[0]
            ));
        }
    }
    judge_git(words)?;
    for (index, pair) in words.windows(2).enumerate() {
        let through = || words[..=index + 1].join(" ");
        for (word, effect) in RELEASE_WORDS {
            if pair[1] == *word && !pair[0].starts_with('-') {
                return unsafe_because(format!("{effect} (`{}`)", through()));
            }
        }
        if matches!(base(pair[0]), "twine" | "luarocks") && pair[1] == "upload" {
            return unsafe_because(format!("publishes (`{}`)", through()));
        }
    }
    Ok(())
}

/// Refuses `git <subcommand>` when the subcommand writes; `git -C dir diff` is looked through.
fn judge_git(words: &[&str]) -> Result<(), Unsafe> {
    let Some(start) = words.iter().position(|word| base(word) == "git") else {
        return Ok(());
    };
    let mut rest = words[start + 1..].iter();
    let subcommand = loop {
        match rest.next() {
            Some(&("-C" | "-c")) => {
                rest.next();
            }
            Some(word) if word.starts_with('-') => {}
            Some(word) => break *word,
            None => return Ok(()),
        }
    };
    if subcommand == "push" {
        return unsafe_because("pushes (`git push`)".to_owned());
    }
    if GIT_WRITES.contains(&subcommand) {
        return unsafe_because(format!("changes git state (`git {subcommand}`)"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn safe_commands_pass() {
        let safe = [
            "npm test",
            "pnpm run lint",
            "eslint .",
            "eslint . --fix-dry-run",
            "cargo test --workspace",
            "cargo clippy --all-targets -- -D warnings",
            "cargo fmt --check",
            "cargo fmt --all -- --check",
            "prettier --check .",
            "npx --no prettier -c src",
            "black --check .",
            "python -m black --diff src",
            "ruff check .",
            "ruff format --check .",
            "isort --check-only .",
            "gofmt -l .",
            "! gofmt -l . | grep .",
            "go test ./...",
            "go vet ./...",
            "vitest run",
            "vitest",
            "jest --ci",
            "jest --watch=false",
            "react-scripts test --watchAll=false",
            "ng test --no-watch",
            "tsc --noEmit",
            "git diff --exit-code",
            "git -C sub status",
            "stylua --check .",
            "luacheck . --max-cyclomatic-complexity 10",
            "npx --no eslint . --rule 'complexity: [error, 10]'",
            "pytest -x 2>&1",
            "make -C sub test",
            "rm -rf dist && tsc -p .",
            "twine check dist/*",
            "cargo build --release",
            "ruff check --no-fix .",
        ];
        for command in safe {
            assert_eq!(is_safe(command), Ok(()), "{command}");
        }
    }

    #[test]
    fn unsafe_commands_are_refused_with_a_reason() {
        let cases = [
            ("eslint --fix .", "rewrites files (`--fix`)"),
            ("eslint . --fix", "rewrites files (`--fix`)"),
            ("ruff check --fix=true .", "rewrites files (`--fix`)"),
            ("prettier --write .", "rewrites files (`--write`)"),
            ("biome check --apply .", "rewrites files (`--apply`)"),
            ("prettier .", "formats files (`prettier` without `--check`)"),
            ("black .", "formats files (`black` without `--check`)"),
            (
                "$(PYTHON) -m black src",
                "formats files (`black` without `--check`)",
            ),
            (
                "uv run ruff format .",
                "formats files (`ruff format` without `--check`)",
            ),
            ("cargo fmt", "formats files (`cargo fmt` without `--check`)"),
            (
                "cargo fmt --all",
                "formats files (`cargo fmt` without `--check`)",
            ),
            ("isort src", "formats files (`isort` without `--check`)"),
            ("stylua .", "formats files (`stylua` without `--check`)"),
            ("go fmt ./...", "rewrites files (`go fmt`)"),
            ("go mod tidy", "rewrites files (`go mod tidy`)"),
            ("gofmt -w .", "rewrites files (`gofmt -w`)"),
            ("bundle exec rubocop -A", "rewrites files (`rubocop -A`)"),
            ("jest -u", "rewrites files (`jest -u`)"),
            ("jest --watch", "watches files (`--watch`)"),
            ("vitest --watchAll", "watches files (`--watchAll`)"),
            ("tsc -w", "watches files (`tsc -w`)"),
            ("vitest watch", "watches files (`watch`)"),
            ("npm run test:watch", "watches files (`test:watch`)"),
            ("nodemon src/index.js", "watches files (`nodemon`)"),
            ("cargo watch -x test", "watches files (`watch`)"),
            (
                "react-scripts test",
                "watches files (`react-scripts test` without `--watchAll=false`)",
            ),
            (
                "git add -A && git commit -m wip",
                "changes git state (`git add`)",
            ),
            ("cargo test && git push", "pushes (`git push`)"),
            ("git -C . commit", "changes git state (`git commit`)"),
            ("npm publish", "publishes (`npm publish`)"),
            ("cargo publish --dry-run", "publishes (`cargo publish`)"),
            ("twine upload dist/*", "publishes (`twine upload`)"),
            ("npx semantic-release", "publishes (`semantic-release`)"),
            ("gem push pkg.gem", "pushes (`gem push`)"),
            ("npm run deploy", "deploys (`npm run deploy`)"),
            ("docker compose run tests", "runs containers (`docker`)"),
            ("docker-compose up", "runs containers (`docker-compose`)"),
            ("pytest; docker build .", "runs containers (`docker`)"),
            (
                "make test \\\n && prettier --write .",
                "rewrites files (`--write`)",
            ),
            ("npm run lint:fix", "rewrites files (`lint:fix`)"),
            ("run-s format:write test", "rewrites files (`format:write`)"),
            ("yarn lint-fix", "rewrites files (`lint-fix`)"),
        ];
        for (command, reason) in cases {
            assert_eq!(
                is_safe(command),
                Err(Unsafe(reason.to_owned())),
                "{command}"
            );
        }
    }

    #[test]
    fn formatters_are_switched_to_their_check_mode() {
        let cases = [
            ("prettier --write .", Some("prettier --check .")),
            ("npx prettier -w src", Some("npx prettier --check src")),
            ("black .", Some("black --check .")),
            ("cargo fmt --all", Some("cargo fmt --check --all")),
            (
                "cargo fmt -- --config x=y",
                Some("cargo fmt --check -- --config x=y"),
            ),
            (
                "uv run ruff format src",
                Some("uv run ruff format --check src"),
            ),
            ("isort src", Some("isort --check src")),
            ("black --check .", Some("black --check .")),
            ("black . && git diff --exit-code", None),
            ("eslint --fix .", None),
            ("go fmt ./...", None),
        ];
        for (command, expected) in cases {
            assert_eq!(check_mode(command).as_deref(), expected, "{command}");
        }
    }

    #[test]
    fn a_check_mode_formatter_is_recognised() {
        for text in [
            "cargo fmt --all -- --check",
            "gofmt -l .",
            "echo x\nprettier -c src",
            "black --diff .",
        ] {
            assert!(formats_in_check_mode(text), "{text}");
        }
        for text in [
            "cargo fmt",
            "gofmt -w .",
            "prettier --write .",
            "echo check",
        ] {
            assert!(!formats_in_check_mode(text), "{text}");
        }
    }

    #[test]
    fn segments_keep_the_words_as_written_and_what_ended_the_segment_before() {
        let found: Vec<(Option<char>, Vec<String>)> =
            segments("(cd web; npm run \"lint\") \\\n && make")
                .into_iter()
                .map(|segment| (segment.after, segment.raw))
                .collect();
        let words = |list: &[&str]| list.iter().map(|word| (*word).to_owned()).collect();
        assert_eq!(
            found,
            [
                (None, words(&[])),
                (Some('('), words(&["cd", "web"])),
                (Some(';'), words(&["npm", "run", "\"lint\""])),
                (Some(')'), words(&[])),
                (Some('&'), words(&[])),
                (Some('&'), words(&["make"])),
            ]
        );
        assert_eq!(
            segments("npm run \"lint\"")[0].words(),
            ["npm", "run", "lint"]
        );
    }
}
