//! Where one test sits in its file, so that prpd can take it out and put it back without
//! understanding the language: a test is found by the last part of the name its runner
//! prints, as a definition (`def test_x(`, `fn x(`, `func TestX(`, `void x(`) or as the title
//! of a `test(…)`/`it(…)` call, and its block runs to the end of its indentation (Python) or to
//! its matching brace (the others), with the decorators, attributes and comments right above
//! it. A name found twice, or a block prpd cannot close, is not a candidate: the driver also
//! runs the tests after the cut and keeps every test visible when they do not come out as
//! expected, so a wrong guess here costs a hold-out, never a verdict.

use std::ops::Range;

/// The part of a runner's test name its source spells: `tests/test_x.py::test_mul[2-3]` →
/// `test_mul`, `calc > multiply > keeps the sign` → `keeps the sign`, `tests::ac_1` → `ac_1`,
/// `tests.test_calc.CalcTest.test_mul` → `test_mul`.
pub fn leaf_name(runner_name: &str) -> &str {
    let mut leaf = runner_name.trim();
    for separator in [" > ", " › ", "::"] {
        if let Some((_, tail)) = leaf.rsplit_once(separator) {
            leaf = tail;
        }
    }
    if let Some((head, _)) = leaf.split_once('[')
        && leaf.ends_with(']')
    {
        leaf = head;
    }
    if let Some((_, tail)) = leaf.rsplit_once('.')
        && is_identifier(tail)
        && leaf.split('.').all(is_identifier)
    {
        leaf = tail;
    }
    leaf
}

fn is_identifier(text: &str) -> bool {
    !text.is_empty()
        && text.chars().all(|c| c.is_alphanumeric() || c == '_')
        && !text.starts_with(|c: char| c.is_ascii_digit())
}

/// The lines (0-based, end exclusive) of the test called `leaf` in `text`, when it is defined
/// there exactly once and its block can be closed.
pub fn find(text: &str, leaf: &str) -> Option<Range<usize>> {
    if leaf.is_empty() {
        return None;
    }
    let lines: Vec<&str> = text.lines().collect();
    let mut found = lines
        .iter()
        .enumerate()
        .filter_map(|(number, line)| starts_here(line, leaf).map(|kind| (number, kind)));
    let (start, kind) = found.next()?;
    if found.next().is_some() {
        return None;
    }
    let end = match kind {
        Kind::Indented => indented_end(&lines, start),
        Kind::Braced => braced_end(&lines, start)?,
    };
    let first = leading_lines(&lines, start, kind);
    Some(first..end)
}

/// How a block ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// Where the indentation returns to the definition's (Python).
    Indented,
    /// At the brace that closes the first one opened.
    Braced,
}

/// Whether `line` starts the test `leaf`, and how its block ends.
fn starts_here(line: &str, leaf: &str) -> Option<Kind> {
    let trimmed = line.trim_start();
    let words: Vec<&str> = trimmed
        .split(|c: char| c.is_whitespace() || c == '(')
        .filter(|word| !word.is_empty())
        .collect();
    let defines = |keyword: &str| {
        words
            .windows(2)
            .any(|pair| pair[0] == keyword && pair[1] == leaf)
    };
    if defines("def") && trimmed.ends_with(':') {
        return Some(Kind::Indented);
    }
    if defines("fn") || defines("func") || defines("void") || defines("fun") {
        return Some(Kind::Braced);
    }
    let titled = ['"', '\'', '`'].iter().any(|quote| {
        let title = format!("{quote}{leaf}{quote}");
        trimmed.find(&title).is_some_and(|at| {
            let before = trimmed[..at].trim_end();
            let call = before.strip_suffix('(').unwrap_or("").trim_end();
            ["test", "it", "specify", "scenario"]
                .iter()
                .any(|name| call == *name || call.ends_with(&format!(".{name}")))
                || call.starts_with("test.")
                || call.starts_with("it.")
        })
    });
    titled.then_some(Kind::Braced)
}

/// The first line of the block that starts at `start`: the decorators, attributes and comments
/// right above it belong to it.
fn leading_lines(lines: &[&str], start: usize, kind: Kind) -> usize {
    let mut first = start;
    while first > 0 {
        let above = lines[first - 1].trim_start();
        let belongs = above.starts_with('@')
            || above.starts_with("#[")
            || above.starts_with("//")
            || (kind == Kind::Indented && above.starts_with('#'));
        if !belongs {
            break;
        }
        first -= 1;
    }
    first
}

fn indentation(line: &str) -> usize {
    line.len() - line.trim_start().len()
}

/// The end of a Python block: the first non-blank line indented no deeper than `def`.
fn indented_end(lines: &[&str], start: usize) -> usize {
    let depth = indentation(lines[start]);
    let mut end = start + 1;
    let mut last_content = start + 1;
    while end < lines.len() {
        let line = lines[end];
        if !line.trim().is_empty() {
            if indentation(line) <= depth {
                break;
            }
            last_content = end + 1;
        }
        end += 1;
    }
    last_content
}

/// The end of a braced block: the line after the one whose brace closes the first brace opened
/// at or after `start`, skipping braces in strings and comments.
fn braced_end(lines: &[&str], start: usize) -> Option<usize> {
    let mut depth = 0_usize;
    let mut opened = false;
    let mut block_comment = false;
    for (number, line) in lines.iter().enumerate().skip(start) {
        let chars: Vec<char> = line.chars().collect();
        let mut at = 0;
        while at < chars.len() {
            let c = chars[at];
            let next = chars.get(at + 1).copied();
            if block_comment {
                if c == '*' && next == Some('/') {
                    block_comment = false;
                    at += 1;
                }
            } else if c == '/' && next == Some('/') {
                break;
            } else if c == '/' && next == Some('*') {
                block_comment = true;
                at += 1;
            } else if c == '"' || c == '`' {
                at = string_end(&chars, at, c)?;
            } else if c == '\'' {
                // A char literal closes within a few characters; a Rust lifetime does not.
                if let Some(end) = (at + 2..(at + 12).min(chars.len()))
                    .find(|end| chars[*end] == '\'' && chars[end - 1] != '\\')
                {
                    at = end;
                }
            } else if c == '{' {
                depth += 1;
                opened = true;
            } else if c == '}' {
                depth = depth.checked_sub(1)?;
                if opened && depth == 0 {
                    return Some(number + 1);
                }
            }
            at += 1;
        }
    }
    None
}

/// Where the string that opens at `start` with `quote` closes on its line; a template or raw
/// string that runs over lines is not followed (the block cannot be closed then).
fn string_end(chars: &[char], start: usize, quote: char) -> Option<usize> {
    let mut at = start + 1;
    while at < chars.len() {
        if chars[at] == '\\' {
            at += 2;
            continue;
        }
        if chars[at] == quote {
            return Some(at);
        }
        at += 1;
    }
    None
}

/// `text` without the lines in `blocks`.
pub fn cut(text: &str, blocks: &[Range<usize>]) -> String {
    let mut kept = String::with_capacity(text.len());
    for (number, line) in text.split_inclusive('\n').enumerate() {
        if !blocks.iter().any(|block| block.contains(&number)) {
            kept.push_str(line);
        }
    }
    kept
}

#[cfg(test)]
mod tests {
    use super::*;

    const NODE: &str = r#"import { test } from "node:test";
import assert from "node:assert/strict";

test("AC-1: multiply returns the product", () => {
  assert.equal(multiply(6, 7), 42);
});

// Signs matter.
test("AC-1: multiply keeps the sign", () => {
  assert.equal(multiply(6, -2), -12, "a '{' in a message");
});
"#;

    #[test]
    fn runner_names_come_down_to_what_the_source_spells() {
        assert_eq!(leaf_name("tests/test_x.py::test_mul[2-3]"), "test_mul");
        assert_eq!(
            leaf_name("calc > multiply > keeps the sign"),
            "keeps the sign"
        );
        assert_eq!(leaf_name("calc › keeps the sign"), "keeps the sign");
        assert_eq!(leaf_name("tests::ac_1_clamps"), "ac_1_clamps");
        assert_eq!(leaf_name("tests.test_calc.CalcTest.test_mul"), "test_mul");
        assert_eq!(
            leaf_name("AC-1: multiply(1.5, 2)"),
            "AC-1: multiply(1.5, 2)"
        );
    }

    #[test]
    fn a_titled_test_runs_to_its_closing_brace_with_its_comment() {
        let block = find(NODE, "AC-1: multiply keeps the sign").expect("found");
        assert_eq!(block, 7..11);
        let left = cut(NODE, &[block]);
        assert!(left.contains("multiply(6, 7)"), "{left}");
        assert!(!left.contains("-12") && !left.contains("Signs"), "{left}");
        assert_eq!(find(NODE, "AC-1: multiply returns the product"), Some(3..6));
    }

    #[test]
    fn a_python_test_runs_to_its_dedent_with_its_decorators() {
        let text = "import pytest\n\n\ndef test_ac_1_product():\n    assert mul(6, 7) == 42\n\n\n\
                    @pytest.mark.parametrize(\"a\", [1, 2])\ndef test_ac_1_sign(a):\n    x = mul(a, -2)\n\n    assert x < 0\n\n\
                    class TestMore:\n    def test_ac_2(self):\n        assert True\n";
        let block = find(text, "test_ac_1_sign").expect("found");
        let left = cut(text, &[block]);
        assert!(
            !left.contains("parametrize") && !left.contains("x < 0"),
            "{left}"
        );
        assert!(
            left.contains("class TestMore") && left.contains("42"),
            "{left}"
        );
        let method = find(text, "test_ac_2").expect("a method");
        assert!(cut(text, &[method]).ends_with("class TestMore:\n"));
    }

    #[test]
    fn rust_and_go_tests_take_their_attributes_and_skip_braces_in_strings() {
        let rust = "#[cfg(test)]\nmod tests {\n    #[test]\n    fn ac_1_sign() {\n        let s: &'static str = \"}\";\n        assert_eq!(mul(6, -2), -12, \"{s}\");\n    }\n\n    #[test]\n    fn ac_1_product() {\n        assert_eq!(mul(6, 7), 42);\n    }\n}\n";
        let block = find(rust, "ac_1_sign").expect("found");
        assert_eq!(block, 2..7);
        let left = cut(rust, &[block]);
        assert!(
            left.contains("fn ac_1_product") && left.ends_with("}\n"),
            "{left}"
        );
        assert!(!left.contains("-12"), "{left}");
        let go =
            "func TestSign(t *testing.T) {\n\tif Mul(6, -2) != -12 {\n\t\tt.Fatal(\"}\")\n\t}\n}\n";
        assert_eq!(find(go, "TestSign"), Some(0..5));
    }

    #[test]
    fn a_name_defined_twice_or_a_block_that_never_closes_is_not_found() {
        let twice = "test(\"x\", () => {});\ntest(\"x\", () => {});\n";
        assert_eq!(find(twice, "x"), None);
        let open = "test(\"y\", () => {\n  assert.ok(true);\n";
        assert_eq!(find(open, "y"), None);
        assert_eq!(find(NODE, "absent"), None);
    }
}
