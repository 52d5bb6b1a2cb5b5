//! The `check_complexity_comments` method: a long function is hard to follow without a word
//! on what it does, so this check finds the functions longer than a threshold in Rust, Go,
//! JavaScript/TypeScript, Python and Lua sources and asks that each has a comment. It reads
//! the languages with line patterns and a small brace, indent or keyword counter rather than
//! a parser, which is enough to tell where a function ends.

use std::path::Path;
use std::sync::LazyLock;

use regex::Regex;

use super::files::{Budget, Reader, extension, is_test_path};
use super::{MethodOutcome, measured, regex};
use crate::metrics::Metrics;

/// Functions longer than this many lines need a comment or doc saying what they do.
const LONG_FUNCTION_LINES: usize = 40;

/// Source files read by `check_complexity_comments`, at most; its detail says when more were
/// left unread.
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
pub(super) fn check_complexity_comments(repo: &Path) -> MethodOutcome {
    let mut sources = Reader::matching(repo, |relative| {
        let name = relative.to_string_lossy().to_lowercase();
        Language::of(relative).is_some()
            && !is_test_path(relative)
            && !name.ends_with(".min.js")
            && !name.ends_with(".d.ts")
    })
    .within(Budget {
        files: MAX_SOURCE_FILES,
        ..Budget::DEFAULT
    });
    let mut long = Vec::new();
    for (path, text) in sources.by_ref() {
        let Some(language) = Language::of(&path) else {
            continue;
        };
        let relative = path.strip_prefix(repo).unwrap_or(&path).to_path_buf();
        for function in long_functions(&text, language) {
            long.push((relative.clone(), function));
        }
    }
    let scanned = sources.files_read();
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
    match sources.limit() {
        Some(limit) => measured(metrics, format!("{detail}; {limit}")),
        None => measured(metrics, detail),
    }
}

/// The functions of a file that are longer than [`LONG_FUNCTION_LINES`], with whether a
/// comment (or a Python docstring) documents them. Function names are read as ASCII words
/// (`[[:word:]]`): Unicode's `\w` would make these patterns about 1 MB of automata that the
/// daemon keeps for its whole life (see `added_code.rs`).
fn long_functions(text: &str, language: Language) -> Vec<LongFunction> {
    static RUST: LazyLock<Regex> = LazyLock::new(|| {
        regex(
            r#"^\s*(?:pub(?:\([^)]*\))?\s+)?(?:default\s+)?(?:const\s+)?(?:async\s+)?(?:unsafe\s+)?(?:extern\s+"[^"]*"\s+)?fn\s+([A-Za-z_][[:word:]]*)"#,
        )
    });
    static GO: LazyLock<Regex> =
        LazyLock::new(|| regex(r"^func\s+(?:\([^)]*\)\s*)?([A-Za-z_][[:word:]]*)"));
    static JAVASCRIPT: LazyLock<Regex> = LazyLock::new(|| {
        regex(
            r"^\s*(?:export\s+)?(?:default\s+)?(?:async\s+)?function\s*\*?\s*([A-Za-z_$][[:word:]$]*)|^\s*(?:export\s+)?(?:const|let|var)\s+([A-Za-z_$][[:word:]$]*)\s*(?::[^=]+)?=\s*(?:async\s+)?(?:function\b|\([^)]*\)\s*(?::\s*[^=]+)?=>|[A-Za-z_$][[:word:]$]*\s*=>)|^\s*(?:(?:public|private|protected|static|async|override)\s+)*([A-Za-z_$][[:word:]$]*)\s*\([^)]*\)\s*(?::\s*[^{;]+)?\{\s*$",
        )
    });
    static PYTHON: LazyLock<Regex> =
        LazyLock::new(|| regex(r"^(\s*)(?:async\s+)?def\s+([A-Za-z_][[:word:]]*)"));
    static LUA: LazyLock<Regex> = LazyLock::new(|| {
        regex(
            r"^\s*(?:local\s+)?function\s+([[:word:].:]+)|^\s*(?:local\s+)?([[:word:].:]+)\s*=\s*function\b",
        )
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
    use crate::method::tests::{Repo, figure};
    use crate::method::{Method, MethodOutcome};
    use crate::metrics::MetricValue;

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

    #[test]
    fn check_complexity_comments_says_when_it_left_sources_unread() {
        let repo = Repo::new();
        for number in 0..=super::MAX_SOURCE_FILES {
            repo.file(&format!("src/m{number:04}.py"), "x = 1\n");
        }
        let (value, detail) = figure(
            &repo.run(Method::CheckComplexityComments, None),
            "complex_funcs_documented",
        );
        assert_eq!(value, MetricValue::Bool(true));
        assert_eq!(
            detail,
            "no function is longer than 40 lines (2000 source files); stopped reading at the \
             limit of 2000 files or 256 MiB after 2000 files (11 KiB); 1 more matching file was \
             not read"
        );
    }
}
