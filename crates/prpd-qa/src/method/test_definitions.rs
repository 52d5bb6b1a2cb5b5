//! The names of the tests a repository defines, read from its test files, for when the test
//! runner does not name the tests it ran (`pytest` without `-v`, `python -m unittest` without
//! `-v`): F2 then traces requirement ids in the names of defined tests instead. Only a
//! definition counts — `def test_…`, `fn …` in a test file, `func Test…`, `it('…')` /
//! `test('…')` — never a comment or a docstring, and a definition marked to be skipped
//! (`@pytest.mark.skip`, `@unittest.skip`, `#[ignore]`, `it.skip`, `xit`) is left out.

use std::path::Path;
use std::sync::LazyLock;

use regex::Regex;

use super::files::{Reader, extension, is_test_path};
use super::regex;

static PYTHON: LazyLock<Regex> = LazyLock::new(|| regex(r"^\s*(?:async\s+)?def\s+(test\w*)\s*\("));
static RUST: LazyLock<Regex> =
    LazyLock::new(|| regex(r"^\s*(?:pub(?:\([^)]*\))?\s+)?(?:async\s+)?fn\s+(\w+)\s*\("));
/// An attribute that makes the next `fn` a test (`#[test]`, `#[tokio::test]`, `#[rstest]`).
static RUST_TEST_ATTRIBUTE: LazyLock<Regex> =
    LazyLock::new(|| regex(r"^\s*#\[(?:[\w:]*::)?(?:test|rstest)\b"));
static GO: LazyLock<Regex> = LazyLock::new(|| regex(r"^func\s+(Test\w+)\s*\("));
static JAVASCRIPT: LazyLock<Regex> =
    LazyLock::new(|| regex(r#"^\s*(?:it|test)\s*\(\s*(['"`])(.+?)['"`]"#));
static SKIP_MARK: LazyLock<Regex> = LazyLock::new(|| {
    regex(
        r"^\s*(?:@(?:pytest\.mark\.(?:skip|skipif|xfail)|unittest\.(?:skip\w*|expectedFailure))|#\[ignore)",
    )
});

/// One defined test: the file it is in (relative to the repository) and its name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct DefinedTest {
    pub(crate) file: String,
    pub(crate) name: String,
}

/// Every test the test files under `repo` define, skipped ones left out, and — when the
/// reading budget ran out — what was left unread. Prose files and files outside test paths
/// (except Rust files with `#[test]`) are not read.
pub(crate) fn defined_tests(repo: &Path) -> (Vec<DefinedTest>, Option<String>) {
    let mut found = Vec::new();
    let mut reader = Reader::matching(repo, |relative| {
        is_test_path(relative) || extension(relative) == "rs"
    });
    for (path, text) in reader.by_ref() {
        let relative = path.strip_prefix(repo).unwrap_or(&path);
        if !is_test_path(relative) && !text.contains("#[test]") {
            continue;
        }
        let file = relative.display().to_string();
        for name in names_in(&extension(&path), &text) {
            found.push(DefinedTest {
                file: file.clone(),
                name,
            });
        }
    }
    (found, reader.limit())
}

/// The names of the tests `text` (a file with `extension`) defines.
fn names_in(extension: &str, text: &str) -> Vec<String> {
    let pattern: &Regex = match extension {
        "py" => &PYTHON,
        "rs" => &RUST,
        "go" => &GO,
        "js" | "mjs" | "cjs" | "ts" | "mts" | "cts" | "jsx" | "tsx" => &JAVASCRIPT,
        _ => return Vec::new(),
    };
    let lines: Vec<&str> = text.lines().collect();
    let in_strings = python_string_lines(extension, &lines);
    let mut names = Vec::new();
    for (index, line) in lines.iter().enumerate() {
        if in_strings.get(index).copied().unwrap_or(false) {
            continue;
        }
        let Some(found) = pattern.captures(line) else {
            continue;
        };
        let Some(name) = found.get(found.len() - 1) else {
            continue;
        };
        let marks = marks_above(&lines[..index]);
        let skipped = marks.iter().any(|mark| SKIP_MARK.is_match(mark));
        let is_a_test =
            extension != "rs" || marks.iter().any(|mark| RUST_TEST_ATTRIBUTE.is_match(mark));
        if is_a_test && !skipped {
            names.push(name.as_str().to_owned());
        }
    }
    names
}

/// The decorators and attributes right above a definition (a multi-line `@pytest.mark.skip(
/// reason=…)` included), up to the blank line or code above them.
fn marks_above<'a>(above: &[&'a str]) -> Vec<&'a str> {
    let mut marks = Vec::new();
    let mut open_parentheses = 0i32;
    for line in above.iter().rev() {
        let trimmed = line.trim();
        let closes = i32::try_from(trimmed.matches(')').count()).unwrap_or(0);
        let opens = i32::try_from(trimmed.matches('(').count()).unwrap_or(0);
        open_parentheses += closes - opens;
        let is_mark = trimmed.starts_with('@')
            || trimmed.starts_with("#[")
            || trimmed.starts_with("///")
            || trimmed.starts_with("//");
        let outside_marks =
            trimmed.is_empty() || !(is_mark || open_parentheses > 0 || trimmed.starts_with(')'));
        if outside_marks && open_parentheses <= 0 {
            break;
        }
        marks.push(*line);
    }
    marks
}

/// For Python, which lines lie inside a triple-quoted string (a docstring that shows
/// `def test_…` is not a definition).
fn python_string_lines(extension: &str, lines: &[&str]) -> Vec<bool> {
    let mut inside = false;
    lines
        .iter()
        .map(|line| {
            let was_inside = inside;
            if extension == "py" {
                let quotes = line.matches("\"\"\"").count() + line.matches("'''").count();
                if quotes % 2 == 1 {
                    inside = !inside;
                }
            }
            was_inside
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn definitions_are_names_and_skipped_ones_are_left_out() {
        let cases: &[(&str, &str, &[&str])] = &[
            (
                "py",
                "class T(unittest.TestCase):\n    def test_ac_1_multiply(self):\n        \"\"\"test_ac_2 in a docstring\"\"\"\n    @unittest.skip(\"later\")\n    def test_ac_3_skipped(self):\n        pass\n# def test_ac_4_comment\n",
                &["test_ac_1_multiply"],
            ),
            (
                "py",
                "@pytest.mark.xfail\ndef test_r1_x():\n    pass\n\n@pytest.mark.parametrize('a', [1])\ndef test_r2_y(a):\n    pass\n",
                &["test_r2_y"],
            ),
            (
                "rs",
                "#[test]\nfn ac_1_clamps() {}\n#[test]\n#[ignore]\nfn ac_2_later() {}\n// fn ac_3_comment()\n\
                 fn ac_4_helper() {}\n#[tokio::test]\nasync fn ac_5_async() {}\n",
                &["ac_1_clamps", "ac_5_async"],
            ),
            (
                "py",
                "def helper():\n    \"\"\"\n    def test_ac_1_in_a_docstring():\n    \"\"\"\n\n\
                 @pytest.mark.skip(\n    reason=\"later\",\n)\ndef test_ac_2_skipped():\n    pass\n\n\
                 def test_ac_3_real():\n    pass\n",
                &["test_ac_3_real"],
            ),
            (
                "go",
                "func TestAC1Clamp(t *testing.T) {}\nfunc helper() {}\n",
                &["TestAC1Clamp"],
            ),
            (
                "js",
                "test('AC-1: doubles', () => {});\nit.skip('AC-2: later', () => {});\nxit('AC-3', () => {});\nit(\"AC-4 works\", () => {});\n// it('AC-5 in a comment', () => {});\n",
                &["AC-1: doubles", "AC-4 works"],
            ),
            ("md", "def test_ac_1():\n", &[]),
        ];
        for (extension, text, expected) in cases {
            assert_eq!(names_in(extension, text), *expected, "{extension}: {text}");
        }
    }
}
