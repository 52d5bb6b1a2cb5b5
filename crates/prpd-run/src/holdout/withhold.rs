//! Keeping the held-out tests' source out of what GREEN can read: runners quote the failing
//! line of a test (pytest's traceback, a Rust panic's location, an agent's own output), and a
//! log that does is as good as the test to an agent that special-cases inputs. A line of a
//! held-out test that is long enough to say something, and that no visible test has too, is a
//! *held line*; any text that holds one has that line replaced before GREEN may see it. What
//! stays is behaviour: the test's name, and the assertion's message as the runner prints it.

/// What a withheld line reads in place of the original.
pub const WITHHELD: &str = "[prpd: a line of a held-out test, withheld until the run ships]";

/// A held line shorter than this says nothing (`});`, `end`, `pass`).
const SHORTEST: usize = 8;

/// The held lines of a run's held-out tests.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HeldLines {
    lines: Vec<String>,
}

impl HeldLines {
    /// The held lines of `held` (the held-out blocks' text) that `visible` (the files as GREEN
    /// sees them) does not also hold.
    pub fn new<'a>(
        held: impl IntoIterator<Item = &'a str>,
        visible: impl IntoIterator<Item = &'a str>,
    ) -> HeldLines {
        let seen: std::collections::BTreeSet<&str> = visible
            .into_iter()
            .flat_map(str::lines)
            .map(str::trim)
            .collect();
        let mut lines: Vec<String> = held
            .into_iter()
            .flat_map(str::lines)
            .map(str::trim)
            .filter(|line| line.chars().count() >= SHORTEST && !seen.contains(line))
            .map(str::to_owned)
            .collect();
        lines.sort();
        lines.dedup();
        HeldLines { lines }
    }

    /// Whether there is nothing to withhold.
    pub fn is_empty(&self) -> bool {
        self.lines.is_empty()
    }

    /// `text` with every line that holds a held line replaced by [`WITHHELD`]; `None` when no
    /// line does.
    pub fn redact(&self, text: &str) -> Option<String> {
        if self.lines.is_empty() {
            return None;
        }
        let mut changed = false;
        let mut out = String::with_capacity(text.len());
        for line in text.split_inclusive('\n') {
            if self.lines.iter().any(|held| line.contains(held.as_str())) {
                changed = true;
                let indent = &line[..line.len() - line.trim_start().len()];
                out.push_str(indent);
                out.push_str(WITHHELD);
                if line.ends_with('\n') {
                    out.push('\n');
                }
            } else {
                out.push_str(line);
            }
        }
        changed.then_some(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_quoted_line_of_a_held_out_test_is_withheld_and_its_message_stays() {
        let held = HeldLines::new(
            ["def test_ac_1_sign():\n    assert mul(6, -2) == -12\n"],
            ["def test_ac_1_product():\n    assert mul(6, 7) == 42\n"],
        );
        let log = "    def test_ac_1_sign():\n>       assert mul(6, -2) == -12\nE       assert 12 == -12\n\
                   FAILED tests/test_calc.py::test_ac_1_sign - assert 12 == -12\n";
        let redacted = held.redact(log).expect("redacted");
        assert!(!redacted.contains("mul(6, -2)"), "{redacted}");
        assert!(
            redacted.contains("E       assert 12 == -12")
                && redacted.contains("FAILED tests/test_calc.py::test_ac_1_sign"),
            "{redacted}"
        );
        assert_eq!(held.redact("all good\n"), None);
    }

    #[test]
    fn short_lines_and_lines_a_visible_test_has_too_are_not_held() {
        let held = HeldLines::new(
            ["});\n  const calc = load();\n  assert.equal(calc.mul(6, -2), -12);\n"],
            ["  const calc = load();\n"],
        );
        assert_eq!(held.redact("});\nconst calc = load();\n"), None);
        assert!(
            held.redact("at assert.equal(calc.mul(6, -2), -12);")
                .is_some()
        );
        assert!(HeldLines::new([""], [""]).is_empty());
    }
}
