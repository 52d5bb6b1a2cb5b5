//! How one evidence row speaks of one hint. A hint is found as a *whole name*: case and runs of
//! whitespace aside, and where the hint begins or ends with a letter, digit or `_`, the row must
//! not carry that name on (another letter, digit or `_`, or a `-` joined to one). So `test_login`
//! is found in `tests/test_auth.py::test_login PASSED`, `test test_login ... ok` and
//! `ok 1 - test_login`, but not in `test_login_is_not_written_yet`, `test_login_page`,
//! `TestLoginPage` or `test-login-page`; a phrase or a command (`npm test`, `0 problems`) is
//! bounded the same way at its two ends.
//!
//! A row that contains the hint then *supports* it, *contradicts* it (it says the thing failed:
//! `"passed": false`, or, for a row that does not say, a failure marker outside the hint —
//! `FAILED`, `fail`, `not ok`, an upper-case `ERROR`, `✗`, `✕`, `❌` — unless counted as none:
//! `0 failed`, `no failures`, `failures: 0`), or says it *did not run*: skipped, ignored,
//! pending, todo, xfail/xfailed, xpass/xpassed, not (yet) written, not (yet) implemented —
//! `test_login SKIPPED`, `test test_login ... ignored`, `--- SKIP: TestLogin`,
//! `ok 1 - test_login # SKIP`, `✎ todo test_login`, `<skipped/>`. A test that did not run proves
//! nothing, whatever `passed` says; a count of such tests (`2 skipped`, `skipped: 0`) is a
//! summary of others, not a marker. A line quoted from a file the run changed is content, not a
//! report of a run: only a test framework's own way of not running a test counts there
//! (`it.skip(`, `test.todo(`, `@pytest.mark.xfail`, `#[ignore]`, `t.Skip(`, `xit(`).

use super::evidence::Evidence;

/// How a row that contains a hint speaks of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reading {
    /// The row contains the hint and does not say it failed or did not run.
    Supports,
    /// The row contains the hint and says it failed.
    Contradicts,
    /// The row contains the hint and says it did not run (skipped, ignored, pending, todo,
    /// xfail, not written): no support, and no pass.
    NotRun,
}

/// How `row` reads for `hint`, or `None` when it does not contain it as a whole name.
pub fn reading(row: &Evidence, hint: &str) -> Option<Reading> {
    let hint = Folded::new(hint);
    if hint.lower.is_empty() {
        return None;
    }
    let text = Folded::new(&row.text);
    let start = find_whole(&text.lower, &hint.lower)?;
    let end = start + hint.lower.len();
    let outside = |chars: &[char]| -> String {
        let mut joined: String = chars[..start].iter().collect();
        joined.push(' ');
        joined.extend(&chars[end..]);
        joined
    };
    let (lower, original) = (outside(&text.lower), outside(&text.original));
    let not_run = if row.is_file_line {
        has_code_not_run_marker(&lower)
    } else {
        has_not_run_marker(&lower, &original)
    };
    // Upper-case ERROR is a marker; a lower-case "error" is too often prose.
    let text_says_failed = has_failure_marker(&lower) || has_word(&original, "ERROR");
    // The caller's `passed` decides failure unless the row says the test did not run; a row
    // that says so is no support even with `passed: true`, and a failure written in it
    // outweighs the skip.
    let contradicts = match row.passed {
        None => text_says_failed,
        Some(passed) => !passed && (text_says_failed || !not_run),
    };
    Some(if contradicts {
        Reading::Contradicts
    } else if not_run {
        Reading::NotRun
    } else {
        Reading::Supports
    })
}

/// A text with runs of whitespace made one space, in lower case and as written, char for
/// char (a character whose lower case is several keeps its own), so a position in one is the
/// same position in the other.
struct Folded {
    lower: Vec<char>,
    original: Vec<char>,
}

impl Folded {
    fn new(text: &str) -> Folded {
        let original: Vec<char> = text
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
            .chars()
            .collect();
        let lower = original
            .iter()
            .map(|&character| {
                let mut lower = character.to_lowercase();
                match (lower.next(), lower.next()) {
                    (Some(single), None) => single,
                    _ => character,
                }
            })
            .collect();
        Folded { lower, original }
    }
}

/// A character that carries a name on: a letter, a digit or `_`.
fn is_name_char(character: char) -> bool {
    character.is_alphanumeric() || character == '_'
}

/// The first place `hint` occurs in `text` as a whole name.
fn find_whole(text: &[char], hint: &[char]) -> Option<usize> {
    if hint.len() > text.len() {
        return None;
    }
    (0..=text.len() - hint.len()).find(|&start| {
        let end = start + hint.len();
        text[start..end] == *hint
            && (!is_name_char(hint[0]) || !name_goes_on_before(&text[..start]))
            && (!is_name_char(hint[hint.len() - 1]) || !name_goes_on_after(&text[end..]))
    })
}

/// Whether the text before a match ends inside a name: a name character, or a `-` right
/// after one (`e2e-login`).
fn name_goes_on_before(before: &[char]) -> bool {
    match before {
        [.., last] if is_name_char(*last) => true,
        [.., joined, '-'] => is_name_char(*joined),
        _ => false,
    }
}

/// Whether the text after a match carries the name on: a name character, or a `-` followed
/// by one (`test-login-page`).
fn name_goes_on_after(after: &[char]) -> bool {
    match after {
        [first, ..] if is_name_char(*first) => true,
        ['-', joined, ..] => is_name_char(*joined),
        _ => false,
    }
}

/// Each occurrence of `word` in `text` that stands as a word of its own, with the text before
/// and after it.
fn word_matches<'text>(
    text: &'text str,
    word: &'text str,
) -> impl Iterator<Item = (&'text str, &'text str)> + 'text {
    text.match_indices(word).filter_map(move |(at, _)| {
        let (before, after) = (&text[..at], &text[at + word.len()..]);
        let starts = before.chars().next_back().is_none_or(|c| !is_name_char(c));
        let ends = after.chars().next().is_none_or(|c| !is_name_char(c));
        (starts && ends).then_some((before, after))
    })
}

fn has_word(text: &str, word: &str) -> bool {
    word_matches(text, word).next().is_some()
}

const MARKER_WORDS: &[&str] = &[
    "fail", "failed", "fails", "failure", "failures", "failing", "not ok",
];
const MARKER_SYMBOLS: &[char] = &['✗', '✕', '❌', '✘'];

/// Whether lower-cased `text` says something failed (`0 failed`, `no failures` and
/// `failures: 0` do not).
fn has_failure_marker(text: &str) -> bool {
    if text.contains(MARKER_SYMBOLS) {
        return true;
    }
    MARKER_WORDS.iter().any(|word| {
        word_matches(text, word)
            .any(|(before, after)| !counted_as_none(before) && !followed_by_zero(after))
    })
}

/// Whether the word before a marker makes it a count of none: `0 failed`, `no failures`.
fn counted_as_none(before: &str) -> bool {
    let last_word = last_word(before);
    last_word == "0" || last_word == "no"
}

/// Whether a marker is followed by a count of zero: `failures: 0`, `# fail 0`, `failed=0`.
fn followed_by_zero(after: &str) -> bool {
    count_after(after).is_some_and(|count| count.chars().all(|digit| digit == '0'))
}

/// The number right after a marker (`: 2`, ` 0`, `=1`), when there is one.
fn count_after(after: &str) -> Option<&str> {
    let rest = after.trim_start_matches([':', '=', ' ']);
    let digits = rest
        .split(|c: char| !c.is_ascii_digit())
        .next()
        .unwrap_or("");
    (!digits.is_empty() && rest.len() < after.len()).then_some(digits)
}

fn last_word(before: &str) -> &str {
    before
        .trim_end()
        .rsplit(|c: char| !c.is_alphanumeric())
        .next()
        .unwrap_or("")
}

/// Words a test runner prints for a test it did not run, or ran without holding it to its
/// result (xfail, xpass).
const NOT_RUN_WORDS: &[&str] = &[
    "skip",
    "skipped",
    "skipping",
    "ignored",
    "pending",
    "xfail",
    "xfailed",
    "xpass",
    "xpassed",
    "not written",
    "not yet written",
    "not implemented",
    "not yet implemented",
    "unimplemented",
];

/// Whether a report row (lower-cased `text`, and `original` as written) says the thing did not
/// run. A count (`2 skipped`, `no pending`, `skipped: 0`) summarises other tests and is none.
fn has_not_run_marker(text: &str, original: &str) -> bool {
    let counted = |before: &str, after: &str| {
        let last = last_word(before);
        last == "no"
            || (!last.is_empty() && last.chars().all(|c| c.is_ascii_digit()))
            || count_after(after).is_some()
    };
    let marked = NOT_RUN_WORDS
        .iter()
        .any(|word| word_matches(text, word).any(|(before, after)| !counted(before, after)));
    // "todo" is also an ordinary word (a todo app): only a runner's forms count — `TODO`,
    // TAP's `# todo`, Jest's `✎ todo`, `[todo]`, `(todo)`.
    marked
        || word_matches(original, "TODO").any(|(before, after)| !counted(before, after))
        || word_matches(text, "todo").any(|(before, after)| {
            let previous = before.trim_end().chars().next_back();
            let next = after.trim_start().chars().next();
            !counted(before, after)
                && (matches!(previous, Some('#' | '✎' | '[' | '('))
                    || matches!(next, Some(']' | ')')))
        })
}

/// Words a test framework's code uses to not run a test.
const CODE_NOT_RUN_WORDS: &[&str] = &["skip", "skipif", "todo", "xfail", "ignore", "disabled"];

/// Whether a line of a file (lower-cased) holds a test framework's way of not running a test:
/// one of [`CODE_NOT_RUN_WORDS`] as an annotation (`@Disabled`, `#[ignore]`,
/// `@pytest.mark.xfail`), or called on a test function (`it.skip(`, `test.todo(`, `t.Skip(`),
/// or `xit(` / `xtest(` / `xdescribe(`. `opts.skip` or `button.disabled` is code, not that.
fn has_code_not_run_marker(text: &str) -> bool {
    let annotated_or_called = CODE_NOT_RUN_WORDS.iter().any(|word| {
        word_matches(text, word).any(|(before, after)| {
            let called = before.ends_with('.') && after.trim_start().starts_with('(');
            before.ends_with('@') || before.ends_with('[') || before.ends_with("mark.") || called
        })
    });
    annotated_or_called
        || ["xit", "xtest", "xdescribe"].iter().any(|word| {
            word_matches(text, word).any(|(_, after)| after.trim_start().starts_with('('))
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read_as(text: &str, passed: Option<bool>, hint: &str) -> Option<Reading> {
        let row = Evidence {
            text: text.to_owned(),
            source: None,
            passed,
            is_file_line: false,
        };
        reading(&row, hint)
    }

    #[test]
    fn how_a_row_reads_for_a_hint() {
        use Reading::{Contradicts, Supports};
        let cases: &[(&str, Option<bool>, &str, Option<Reading>)] = &[
            ("test login ... ok", None, "test login", Some(Supports)),
            ("test  LOGIN ... ok", None, "Test login", Some(Supports)),
            (
                "test login ... FAILED",
                None,
                "test login",
                Some(Contradicts),
            ),
            (
                "FAILED tests/test_x.py::test_login",
                None,
                "test_login",
                Some(Contradicts),
            ),
            (
                "--- FAIL: TestLogin (0.01s)",
                None,
                "TestLogin",
                Some(Contradicts),
            ),
            (
                "not ok 3 - login works",
                None,
                "login works",
                Some(Contradicts),
            ),
            (
                "✕ login works (5 ms)",
                None,
                "login works",
                Some(Contradicts),
            ),
            ("✓ login works (5 ms)", None, "login works", Some(Supports)),
            ("15 passed, 0 failed", None, "15 passed", Some(Supports)),
            ("15 passed, 10 failed", None, "15 passed", Some(Contradicts)),
            (
                "Tests run: 15, Failures: 0, Errors: 0, Skipped: 0",
                None,
                "Tests run: 15",
                Some(Supports),
            ),
            ("# fail 0", None, "# fail 0", Some(Supports)),
            (
                "scan finished with no failures",
                None,
                "scan finished",
                Some(Supports),
            ),
            ("ERROR in src/app.ts", None, "src/app.ts", Some(Contradicts)),
            (
                "shows an error message ok",
                None,
                "shows an error message",
                Some(Supports),
            ),
            (
                "the failing test is fixed",
                Some(true),
                "test is fixed",
                Some(Supports),
            ),
            ("all good", Some(false), "all good", Some(Contradicts)),
            ("something else", None, "login", None),
            ("ok", None, "  ", None),
            (
                "login fails with a wrong password: ok",
                None,
                "login fails with a wrong password",
                Some(Supports),
            ),
            (
                "İstanbul test_login ... ok",
                None,
                "test_login",
                Some(Supports),
            ),
        ];
        for &(text, passed, hint, expected) in cases {
            assert_eq!(
                read_as(text, passed, hint),
                expected,
                "{text:?} for {hint:?}"
            );
        }
    }

    /// Real rows of each runner for a test that ran and passed: each supports `test_login`
    /// (or the runner's spelling of it).
    #[test]
    fn honest_rows_of_each_runner_support_their_test() {
        let honest: &[(&str, &str, &str)] = &[
            (
                "pytest -v",
                "tests/test_auth.py::test_login PASSED [ 50%]",
                "test_login",
            ),
            (
                "pytest -rA",
                "PASSED tests/test_auth.py::test_login",
                "test_login",
            ),
            (
                "pytest, parametrized",
                "tests/test_auth.py::test_login[admin] PASSED",
                "test_login",
            ),
            ("cargo", "test auth::tests::test_login ... ok", "test_login"),
            ("go", "--- PASS: TestLogin (0.00s)", "TestLogin"),
            ("go -v", "=== RUN   TestLogin", "TestLogin"),
            ("node TAP", "ok 1 - test_login", "test_login"),
            ("node spec", "✔ test_login (1.2ms)", "test_login"),
            ("jest", "✓ test_login (3 ms)", "test_login"),
            (
                "JUnit XML",
                r#"<testcase classname="tests.test_auth" name="test_login" time="0.003"/>"#,
                "test_login",
            ),
            ("gradle", "AuthTest > test_login() PASSED", "test_login"),
            (
                "prpd's own test row",
                "test test_login: passed",
                "test_login",
            ),
            (
                "a command",
                "check C2 `npm test`: pass: Tests pass",
                "npm test",
            ),
            (
                "a command with flags",
                "$ cargo test --release: ok",
                "cargo test",
            ),
            (
                "a phrase",
                "✔ login works with a valid password",
                "login works",
            ),
            ("a file", "file src/app.ts (modified)", "src/app.ts"),
            (
                "a summary with skipped others",
                "test result: ok. 15 passed; 0 failed; 2 ignored",
                "test result: ok",
            ),
            (
                "pytest summary",
                "==== 15 passed, 2 skipped in 0.12s ====",
                "15 passed",
            ),
        ];
        for &(runner, text, hint) in honest {
            assert_eq!(
                read_as(text, None, hint),
                Some(Reading::Supports),
                "{runner}: {text:?} for {hint:?}"
            );
        }
    }

    /// What an agent that cheats shows for a test it did not write or did not run: none of
    /// it supports the hint; a row that names it says it did not run.
    #[test]
    #[expect(clippy::too_many_lines, reason = "one table")]
    fn skipped_ignored_pending_and_prefix_named_rows_do_not_support() {
        use Reading::NotRun;
        let cheating: &[(&str, Option<bool>, &str, Option<Reading>)] = &[
            ("test_login SKIPPED", None, "test_login", Some(NotRun)),
            (
                "tests/test_auth.py::test_login SKIPPED (not written yet)",
                None,
                "test_login",
                Some(NotRun),
            ),
            (
                "SKIPPED tests/test_auth.py::test_login",
                None,
                "test_login",
                Some(NotRun),
            ),
            (
                "tests/test_auth.py::test_login XFAIL",
                None,
                "test_login",
                Some(NotRun),
            ),
            (
                "tests/test_auth.py::test_login xfailed",
                None,
                "test_login",
                Some(NotRun),
            ),
            (
                "tests/test_auth.py::test_login XPASS",
                None,
                "test_login",
                Some(NotRun),
            ),
            (
                "test test_login ... ignored",
                None,
                "test_login",
                Some(NotRun),
            ),
            (
                "test test_login ... ignored, not yet implemented",
                None,
                "test_login",
                Some(NotRun),
            ),
            (
                "--- SKIP: TestLogin (0.00s)",
                None,
                "TestLogin",
                Some(NotRun),
            ),
            (
                "ok 2 - test_login # SKIP not written yet",
                None,
                "test_login",
                Some(NotRun),
            ),
            ("ok 3 - test_login # TODO", None, "test_login", Some(NotRun)),
            (
                "﹣ test_login (0.2ms) # SKIP",
                None,
                "test_login",
                Some(NotRun),
            ),
            ("○ skipped test_login", None, "test_login", Some(NotRun)),
            ("✎ todo test_login", None, "test_login", Some(NotRun)),
            (
                "test_login (PENDING: Not yet implemented)",
                None,
                "test_login",
                Some(NotRun),
            ),
            ("test_login: pending", None, "test_login", Some(NotRun)),
            ("test_login: not written", None, "test_login", Some(NotRun)),
            (
                r#"<testcase name="test_login" time="0"><skipped message="todo"/></testcase>"#,
                None,
                "test_login",
                Some(NotRun),
            ),
            (
                "AuthTest > test_login() SKIPPED",
                None,
                "test_login",
                Some(NotRun),
            ),
            // The caller's `passed` does not outweigh a row that says the test did not run.
            ("test_login SKIPPED", Some(true), "test_login", Some(NotRun)),
            (
                "test test_login: skipped",
                Some(false),
                "test_login",
                Some(NotRun),
            ),
            // A longer name that starts with the hint is another test.
            (
                "test_login_is_not_written_yet PASSED",
                None,
                "test_login",
                None,
            ),
            (
                "test test_login_is_not_written_yet ... ok",
                None,
                "test_login",
                None,
            ),
            (
                "tests/test_ui.py::test_login_page PASSED",
                None,
                "test_login",
                None,
            ),
            ("--- PASS: TestLoginPage (0.00s)", None, "TestLogin", None),
            ("✓ test-login-page (2 ms)", None, "test-login", None),
            ("ok 1 - pre_test_login", None, "test_login", None),
            (
                "check C2 `npm test:unit`: pass",
                None,
                "npm test:unit",
                Some(Reading::Supports),
            ),
        ];
        for &(text, passed, hint, expected) in cheating {
            assert_eq!(
                read_as(text, passed, hint),
                expected,
                "{text:?} for {hint:?}"
            );
        }
    }

    #[test]
    fn a_todo_app_is_not_a_todo_test_and_a_failure_outweighs_a_skip() {
        assert_eq!(
            read_as("✓ adds a todo item (3 ms)", None, "adds a todo item"),
            Some(Reading::Supports)
        );
        assert_eq!(
            read_as(
                "test todo_list_adds_item ... ok",
                None,
                "todo_list_adds_item"
            ),
            Some(Reading::Supports)
        );
        assert_eq!(
            read_as("test_login FAILED (was skipped before)", None, "test_login"),
            Some(Reading::Contradicts)
        );
    }

    #[test]
    fn a_changed_file_line_is_content_unless_it_skips_a_test() {
        let line = |text: &str| Evidence::file_line(text, "src/orders.py");
        assert_eq!(
            reading(
                &line("src/orders.py: + if order.status == \"pending\": cancel(order)"),
                "cancel"
            ),
            Some(Reading::Supports),
            "a word of the code is not a report"
        );
        assert_eq!(
            reading(
                &line("src/form.js: + if (opts.skip || button.disabled) return submit(form);"),
                "submit"
            ),
            Some(Reading::Supports)
        );
        for skipped in [
            "tests/login.test.js: + it.skip('test_login', () => {})",
            "tests/login.test.js: + test.todo('test_login')",
            "tests/login.test.js: + xit('test_login', () => {})",
            "tests/test_auth.py: + @pytest.mark.xfail def test_login():",
            "src/lib.rs: + #[ignore] fn test_login() {}",
            "src/AuthTest.java: + @Disabled void test_login() {}",
        ] {
            assert_eq!(
                reading(&line(skipped), "test_login"),
                Some(Reading::NotRun),
                "{skipped}"
            );
        }
    }
}
