//! What a test file's text says, counted the same way in every language: assertion calls, and
//! the markers that skip a test or expect it to fail. The counts are evidence, not a parse:
//! a line that only imports or comments is not counted, and everything else that reads like
//! an assertion of a common framework is (`assert`, `assert_eq!`, `assertEquals(`,
//! `assert.equal(`, `expect(`, `self.assertTrue(`, testify's `require.Equal(`, Go's
//! `t.Errorf(`). Compared before and after, a falling count says tests lost their teeth.

use std::sync::LazyLock;

use regex::Regex;
use serde::Serialize;

/// Counts over one or more test files.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct TextCounts {
    /// Assertion calls.
    pub assertions: u32,
    /// Markers that skip a test (`it.skip(`, `@pytest.mark.skip`, `#[ignore]`, `t.Skip(`, …).
    pub skip_markers: u32,
    /// Markers that expect a test to fail (`@pytest.mark.xfail`, `@expectedFailure`,
    /// `test.failing(`, …).
    pub xfail_markers: u32,
}

impl TextCounts {
    /// The counts of one file's text.
    pub fn of(text: &str) -> TextCounts {
        let mut counts = TextCounts::default();
        for line in text.lines().filter(|line| counts_as_code(line)) {
            counts.assertions += count(&ASSERTION, line);
            counts.skip_markers += count(&SKIP, line);
            counts.xfail_markers += count(&XFAIL, line);
        }
        counts
    }

    /// The sum of two counts.
    #[must_use]
    pub fn plus(self, other: TextCounts) -> TextCounts {
        TextCounts {
            assertions: self.assertions + other.assertions,
            skip_markers: self.skip_markers + other.skip_markers,
            xfail_markers: self.xfail_markers + other.xfail_markers,
        }
    }
}

static ASSERTION: LazyLock<Regex> = LazyLock::new(|| {
    regex(
        r"\b(?:assert(?:_[a-z_]+)?!\(|assert[A-Za-z_]*\s*\(|assert\.[A-Za-z_]+\s*\(|assert\s+[^\s(=:]|assert_[a-z_]+\s+[^\s(=]|expect\s*\(|t\.(?:Errorf?|Fatalf?|Fail(?:Now)?)\s*\(|require\.[A-Z]\w*\s*\()",
    )
});

static SKIP: LazyLock<Regex> = LazyLock::new(|| {
    regex(
        r"(?:\.skip\s*\(|\bx(?:it|test|describe)\s*\(|@pytest\.mark\.skip(?:if)?\b|@unittest\.skip(?:If|Unless)?\b|\bpytest\.skip\s*\(|#\[ignore\b|\bt\.Skip(?:f|Now)?\s*\(|@Disabled\b|@Ignore\b|\.todo\s*\(|\bskip:\s*true\b)",
    )
});

static XFAIL: LazyLock<Regex> = LazyLock::new(|| {
    regex(
        r"(?:@pytest\.mark\.xfail\b|\bpytest\.xfail\s*\(|@(?:unittest\.)?expectedFailure\b|\.failing\s*\()",
    )
});

#[expect(
    clippy::expect_used,
    reason = "the patterns are constants, tested below"
)]
fn regex(pattern: &str) -> Regex {
    Regex::new(pattern).expect("a valid pattern")
}

fn count(pattern: &Regex, line: &str) -> u32 {
    u32::try_from(pattern.find_iter(line).count()).unwrap_or(u32::MAX)
}

/// Lines that only import or comment, by how they start.
const NOT_CODE: [&str; 8] = [
    "import ", "from ", "use ", "//", "/*", "* ", "#include", "require(",
];

/// Whether a line is code that may assert: not an import and not a comment (a `#` comment,
/// not a Rust attribute).
fn counts_as_code(line: &str) -> bool {
    let line = line.trim_start();
    let not_code = NOT_CODE.iter().any(|start| line.starts_with(start))
        || (line.starts_with('#') && !line.starts_with("#["))
        || line.contains("= require(");
    !not_code
}

#[cfg(test)]
mod tests {
    use super::TextCounts;

    #[test]
    fn assertions_of_the_common_frameworks_are_counted_and_imports_and_comments_are_not() {
        let cases = [
            (
                "import assert from \"node:assert\";\nassert.equal(multiply(6, 7), 42);\nassert(ok);\n",
                2,
            ),
            (
                "const assert = require(\"assert\");\nassert.strictEqual(a, b);\n",
                1,
            ),
            (
                "expect(multiply(2, 3)).toBe(6);\nexpect(() => f()).toThrow();\n",
                2,
            ),
            (
                "def test_x():\n    assert multiply(2, 3) == 6\n    # assert nothing\n    self.assertEqual(a, b)\n",
                2,
            ),
            (
                "#[test]\nfn t() { assert_eq!(multiply(2, 3), 6); assert!(ok); }\n// assert_eq!(1, 2);\n",
                2,
            ),
            (
                "assertEquals(6, multiply(2, 3));\nassertThat(x).isTrue();\n",
                2,
            ),
            (
                "if got != 6 {\n\tt.Errorf(\"got %d\", got)\n}\nrequire.Equal(t, 6, got)\n",
                2,
            ),
            ("assert_equal 6, multiply(2, 3)\n", 1),
            ("let asserted = 1;\nconst assertion = make();\n", 0),
        ];
        for (text, expected) in cases {
            assert_eq!(TextCounts::of(text).assertions, expected, "{text}");
        }
    }

    #[test]
    fn skip_and_xfail_markers_are_counted_apart() {
        let text = "test.skip(\"later\", () => {});\nxit(\"off\", () => {});\n\
                    @pytest.mark.skipif(True, reason=\"x\")\n@pytest.mark.xfail\n\
                    #[ignore]\nt.Skip(\"no network\")\ntest.failing(\"known\", () => {});\n\
                    @unittest.expectedFailure\ntest(\"todo\", { skip: true }, () => {});\n";
        let counts = TextCounts::of(text);
        assert_eq!(counts.skip_markers, 6, "{counts:?}");
        assert_eq!(counts.xfail_markers, 3, "{counts:?}");
        assert_eq!(
            TextCounts::of("test(\"multiplies\", () => {});\n"),
            TextCounts::default()
        );
    }

    #[test]
    fn counts_add_up() {
        let one = TextCounts {
            assertions: 2,
            skip_markers: 1,
            xfail_markers: 0,
        };
        assert_eq!(
            one.plus(one),
            TextCounts {
                assertions: 4,
                skip_markers: 2,
                xfail_markers: 0
            }
        );
    }
}
