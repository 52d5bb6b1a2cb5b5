//! Error signatures: error output rewritten so that the same failure in two iterations reads the
//! same. The classifier compares signatures to spot an agent stuck on one error, while the agent,
//! measurement and driver code build them from the output they capture; the rewriting rules are
//! their own concern, so they live here with the tests that pin them.

use std::sync::LazyLock;

use regex::Regex;

/// Rewrites error output so that the same error in two runs has the same signature: timestamps,
/// UUIDs, hex ids, temp-dir names and standalone numbers (line:col, counts, durations, pids)
/// become placeholders, and whitespace runs become one space. Numbers glued to letters are kept,
/// so `E0308` and `E0599` stay different errors.
pub fn normalise_error(text: &str) -> String {
    static TIMESTAMP: LazyLock<Regex> = LazyLock::new(|| {
        regex(r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:[.,]\d+)?(?:Z|[+-]\d{2}:?\d{2})?")
    });
    static CLOCK: LazyLock<Regex> = LazyLock::new(|| regex(r"\b\d{1,2}:\d{2}:\d{2}(?:[.,]\d+)?\b"));
    static UUID: LazyLock<Regex> = LazyLock::new(|| {
        regex(r"(?i)\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b")
    });
    static HEX: LazyLock<Regex> = LazyLock::new(|| regex(r"(?i)\b(?:0x[0-9a-f]+|[0-9a-f]{7,})\b"));
    static TEMP_DIR: LazyLock<Regex> = LazyLock::new(|| regex(r"\.tmp[A-Za-z0-9]{6}\b"));
    static NUMBER: LazyLock<Regex> = LazyLock::new(|| regex(r"\b\d+(?:\.\d+)?"));
    static SPACE: LazyLock<Regex> = LazyLock::new(|| regex(r"\s+"));

    let text = TIMESTAMP.replace_all(text, "<time>");
    let text = CLOCK.replace_all(&text, "<time>");
    let text = UUID.replace_all(&text, "<uuid>");
    let text = HEX.replace_all(&text, |found: &regex::Captures<'_>| {
        let word = &found[0];
        let is_id = word.starts_with("0x")
            || word.starts_with("0X")
            || (word.bytes().any(|b| b.is_ascii_digit())
                && word.bytes().any(|b| b.is_ascii_alphabetic()));
        if is_id {
            "<hex>".to_owned()
        } else {
            word.to_owned()
        }
    });
    let text = TEMP_DIR.replace_all(&text, ".tmp<id>");
    let text = NUMBER.replace_all(&text, "<n>");
    SPACE.replace_all(&text, " ").trim().to_owned()
}

/// Compiles one of this module's fixed patterns.
fn regex(pattern: &str) -> Regex {
    Regex::new(pattern).expect("the breaker's error patterns are valid regexes")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalise_error_gives_the_same_error_the_same_signature() {
        let first = "2024-05-01T10:00:01.123Z thread 'main' panicked at src/lib.rs:42:9:\n  \
                     assertion failed: left == right (left: 3, right: 4)\n\
                     commit 3f2a9c1d pid 4242 took 0.53s in /tmp/.tmpAb12Cd/x";
        let second = "2024-06-11T23:59:59Z thread 'main' panicked at src/lib.rs:57:13:\n\
                      assertion failed: left == right (left: 10, right: 11)\n\
                      commit 9e8d7c6b pid 17 took 12.01s in /tmp/.tmpZz99Qq/x";
        assert_eq!(normalise_error(first), normalise_error(second));
        assert_eq!(
            normalise_error(first),
            "<time> thread 'main' panicked at src/lib.rs:<n>:<n>: assertion failed: left == \
             right (left: <n>, right: <n>) commit <hex> pid <n> took <n>s in /tmp/.tmp<id>/x"
        );
    }

    #[test]
    fn normalise_error_keeps_different_errors_apart() {
        let pairs = [
            (
                "error[E0308]: mismatched types --> src/a.rs:1:2",
                "error[E0599]: no method named `x` --> src/a.rs:1:2",
            ),
            (
                "FAILED tests/test_login.py::test_ok",
                "FAILED tests/test_login.py::test_logout",
            ),
            ("cannot find value `id2`", "cannot find value `id3`"),
        ];
        for (one, other) in pairs {
            assert_ne!(
                normalise_error(one),
                normalise_error(other),
                "{one} / {other}"
            );
        }
        assert_eq!(
            normalise_error("id 550e8400-e29b-41d4-a716-446655440000 at 0x7ffd5e8c"),
            "id <uuid> at <hex>"
        );
    }
}
