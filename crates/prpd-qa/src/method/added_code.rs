//! The names a change added to the code. Documentation of a feature names what a user calls:
//! the public function, class, command or option the change added. So, against a base, the
//! README check also looks for the names declared on the code lines added since it (`def
//! multiply`, `pub fn clamp`, `export function wordStats`, `func Clamp`, an `--option`, a
//! sub-command), read from git: the working tree (tracked and untracked files that are not
//! ignored) against the base commit. Test files do not count (a test is not the feature), and
//! private names (`_helper`, `pub(crate) fn`, a lowercase Go function) are no public API.

use std::path::Path;
use std::sync::LazyLock;

use git2::{DiffOptions, Patch, Repository, Tree};
use regex::Regex;

use super::files::is_test_path;
use super::regex;

/// Extensions of source files whose added lines are read.
const CODE_EXTENSIONS: &[&str] = &[
    "py", "pyi", "rb", "rs", "js", "mjs", "cjs", "jsx", "ts", "mts", "cts", "tsx", "go", "java",
    "kt", "kts", "cs", "php", "swift", "scala",
];

/// At most this many changed source files are read, so the cost stays bounded.
const MAX_CODE_FILES: usize = 500;

/// Source files bigger than this are not read.
const MAX_CODE_BYTES: i64 = 1024 * 1024;

/// At most this many names are kept.
const MAX_NAMES: usize = 200;

/// Names too generic to identify a feature.
const GENERIC_NAMES: &[&str] = &[
    "main", "new", "init", "default", "setup", "teardown", "index", "app", "test", "tests",
];

/// A name the change declared, and the file it is in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct CodeName {
    /// The name as declared (`multiply`, `--dry-run`).
    pub(crate) name: String,
    /// The file, relative to the folder the checks judge.
    pub(crate) path: String,
}

/// Declarations of a public name, one capture group each: the name (or, for the `long`
/// patterns, the option without its dashes).
///
/// Names are ASCII words (`[[:word:]]`, not Unicode's `\w`): with Unicode word classes these
/// patterns compiled to 6.5 MB of automata, which a daemon keeps for its whole life, against
/// 0.4 MB now. A name with a non-ASCII letter after its first is cut there, so its README
/// mention is looked for by its ASCII start.
static DECLARATIONS: LazyLock<Vec<Regex>> = LazyLock::new(|| {
    [
        // Python, Ruby: a function or class whose name does not start with `_`.
        r"^\s*(?:async\s+)?def\s+(?:self\.)?([A-Za-z][[:word:]]*)",
        r"^\s*class\s+([A-Za-z][[:word:]]*)",
        // Rust: `pub` items (not `pub(crate)`).
        r#"^\s*pub\s+(?:(?:const|async|unsafe|extern\s+"[^"]*")\s+)*(?:fn|struct|enum|trait|type|const|static|mod|macro)\s+([A-Za-z][[:word:]]*)"#,
        // JavaScript, TypeScript.
        r"^\s*export\s+(?:default\s+)?(?:declare\s+)?(?:abstract\s+)?(?:async\s+)?(?:function\*?|class|const|let|var|interface|type|enum)\s*([A-Za-z$][[:word:]$]*)",
        r"^\s*(?:module\.)?exports\.([A-Za-z$][[:word:]$]*)\s*=",
        // Go: exported (capitalised) functions, methods and types.
        r"^\s*func\s+(?:\([^)]*\)\s*)?([A-Z][[:word:]]*)",
        r"^\s*type\s+([A-Z][[:word:]]*)",
        // Java, Kotlin, C#, PHP, Swift: public members and Kotlin's `fun`.
        r"^\s*public\s+(?:[[:word:]<>\[\],?]+\s+)*?([A-Za-z][[:word:]]*)\s*[({]",
        r"^\s*(?:public\s+)?fun\s+(?:<[^>]*>\s*)?(?:[[:word:].]+\.)?([A-Za-z][[:word:]]*)",
        // Command-line options and sub-commands: argparse, click, commander, cobra, Go's flag.
        r#"add_argument\(\s*['"](--?[A-Za-z][[:word:]-]*)['"]"#,
        r#"add_parser\(\s*['"]([A-Za-z][[:word:]-]*)['"]"#,
        r#"\.option\(\s*['"](?:-[[:word:]],\s*|-[[:word:]]\s+)?(--[A-Za-z][[:word:]-]*)"#,
        r#"\.command\(\s*['"]([A-Za-z][[:word:]-]*)"#,
        r#"\bUse:\s*"([A-Za-z][[:word:]-]*)"#,
        r#"\bflag\.[[:word:]]+\(\s*"([A-Za-z][[:word:]-]*)""#,
    ]
    .into_iter()
    .map(regex)
    .collect()
});

/// clap's `long = "name"` or `.long("name")`: the option is `--name`.
static CLAP_LONG: LazyLock<Regex> =
    LazyLock::new(|| regex(r#"\blong\s*(?:=\s*|\(\s*)"([A-Za-z][[:word:]-]*)""#));

/// The public names `line` (an added line of source code) declares.
pub(super) fn declared_names(line: &str) -> Vec<String> {
    let mut names: Vec<String> = DECLARATIONS
        .iter()
        .filter_map(|pattern| pattern.captures(line))
        .map(|captures| captures[1].to_owned())
        .collect();
    names.extend(
        CLAP_LONG
            .captures_iter(line)
            .map(|captures| format!("--{}", &captures[1])),
    );
    names.retain(|name| {
        let bare = name.trim_start_matches('-');
        bare.chars().count() >= 3 && !GENERIC_NAMES.contains(&bare.to_lowercase().as_str())
    });
    names
}

/// The public names declared on the source lines added to the working tree of `repository`
/// since `base`, in files under `folder` (relative to the working tree; empty for all), with
/// paths relative to `folder`.
pub(super) fn added_code_names(
    repository: &Repository,
    base: &Tree<'_>,
    folder: &Path,
) -> Result<Vec<CodeName>, git2::Error> {
    let mut options = DiffOptions::new();
    options
        .include_untracked(true)
        .recurse_untracked_dirs(true)
        .show_untracked_content(true)
        .ignore_submodules(true)
        .context_lines(0)
        .max_size(MAX_CODE_BYTES);
    for extension in CODE_EXTENSIONS {
        options.pathspec(format!("*.{extension}"));
    }
    let diff = repository.diff_tree_to_workdir_with_index(Some(base), Some(&mut options))?;
    let mut names: Vec<CodeName> = Vec::new();
    for index in 0..diff.deltas().len().min(MAX_CODE_FILES) {
        let Some(delta) = diff.get_delta(index) else {
            continue;
        };
        let Some(relative) = delta
            .new_file()
            .path()
            .and_then(|path| path.strip_prefix(folder).ok())
        else {
            continue;
        };
        if is_test_path(relative) {
            continue;
        }
        let file = relative.display().to_string();
        let Some(patch) = Patch::from_diff(&diff, index)? else {
            continue;
        };
        for hunk in 0..patch.num_hunks() {
            for number in 0..patch.num_lines_in_hunk(hunk)? {
                let line = patch.line_in_hunk(hunk, number)?;
                if line.origin() != '+' {
                    continue;
                }
                let text = String::from_utf8_lossy(line.content());
                for name in declared_names(&text) {
                    if names.len() >= MAX_NAMES {
                        return Ok(names);
                    }
                    if !names.iter().any(|known| known.name == name) {
                        names.push(CodeName {
                            name,
                            path: file.clone(),
                        });
                    }
                }
            }
        }
    }
    Ok(names)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn public_declarations_in_every_common_language() {
        for (line, names) in [
            ("def multiply(a, b):", &["multiply"][..]),
            ("    async def fetch_all(self):", &["fetch_all"]),
            ("def _helper(x):", &[]),
            ("class Calculator:", &["Calculator"]),
            ("pub fn clamp(value: i32) -> i32 {", &["clamp"]),
            ("pub const fn clamp_all() {}", &["clamp_all"]),
            ("pub(crate) fn clamp(value: i32) {", &[]),
            ("pub struct Limits {", &["Limits"]),
            ("export function wordStats(text) {", &["wordStats"]),
            ("export default async function handler(req) {", &["handler"]),
            ("export const slugify = (text) => text;", &["slugify"]),
            ("module.exports.multiply = multiply;", &["multiply"]),
            ("func Clamp(value, low, high int) int {", &["Clamp"]),
            ("func (c *Calc) Multiply(a, b int) int {", &["Multiply"]),
            ("func clamp(value int) int {", &[]),
            (
                "    public static int multiply(int a, int b) {",
                &["multiply"],
            ),
            ("fun multiply(a: Int, b: Int): Int =", &["multiply"]),
            (
                "parser.add_argument(\"--dry-run\", action=\"store_true\")",
                &["--dry-run"],
            ),
            ("sub.add_parser('stats', help='…')", &["stats"]),
            ("@click.option('--precision', default=2)", &["--precision"]),
            ("program.option('-p, --precision <n>')", &["--precision"]),
            ("#[arg(long = \"dry-run\")]", &["--dry-run"]),
            ("def main():", &[]),
            ("let total = multiply(2, 3);", &[]),
        ] {
            assert_eq!(declared_names(line), names, "{line}");
        }
    }
}
