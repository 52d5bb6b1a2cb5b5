//! REFACTOR's lint result and when it holds the phase back. It stands apart from the other
//! gate facts because a lint command can fail to run for a reason that is no finding of the
//! linter: its tool is not installed. Who chose the command decides what that means
//! (`prpd-qa/src/missing_tool.rs`, the rule QA's checks follow too): prpd's guessed default names a
//! linter the project may not use, so it does not apply; the project's own must run.

/// The lint result of a REFACTOR iteration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Lint {
    /// The stack has no lint command; REFACTOR cannot be held to one (QA's checklist decides
    /// whether a missing linter blocks the release).
    NotConfigured,
    /// The lint command is prpd's guessed default (the tools mapping's, the project declares
    /// none) and its tool is not installed: the project does not use that linter, so the lint
    /// does not apply. The reason says which tool and how prpd knows.
    Skipped { reason: String },
    /// The lint command the project declares could not run its tool (not installed): a
    /// failure, since the project says this linter is how its code is checked.
    ToolMissing { reason: String },
    /// The lint command ran.
    Ran {
        /// Its exit code; `None` when it was killed or could not start.
        exit_code: Option<i32>,
        /// Errors counted in its output, when prpd recognises the format.
        errors: Option<u32>,
    },
}

/// Why the lint holds REFACTOR back, or `None` when it does not.
pub(super) fn lint_shortfall(lint: &Lint) -> Option<String> {
    match lint {
        Lint::NotConfigured | Lint::Skipped { .. } => None,
        Lint::ToolMissing { reason } => Some(format!("lint cannot run: {reason}")),
        Lint::Ran {
            exit_code: None, ..
        } => Some("lint did not finish (killed or timed out)".to_owned()),
        Lint::Ran {
            exit_code: Some(code),
            errors,
        } => match errors {
            Some(count) if *count > 0 => Some(format!("lint fails: {count} error(s)")),
            Some(_) | None if *code != 0 => Some(format!("lint fails: exit code {code}")),
            Some(_) | None => None,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A guessed linter that is not installed is no blocker; the project's own that is not
    /// installed is, and a linter that ran is judged by what it found.
    #[test]
    fn a_missing_guessed_linter_is_skipped_and_a_missing_declared_one_fails() {
        let cases = [
            ("no linter", Lint::NotConfigured, None),
            (
                "prpd's guess, not installed",
                Lint::Skipped {
                    reason: "the tool is missing: `eslint` is neither in node_modules/.bin nor on PATH".to_owned(),
                },
                None,
            ),
            (
                "the project's own, not installed",
                Lint::ToolMissing {
                    reason: "the tool is missing: `npm run lint` could not run its program (exit 127: sh: 1: eslint: not found)".to_owned(),
                },
                Some(
                    "lint cannot run: the tool is missing: `npm run lint` could not run its program (exit 127: sh: 1: eslint: not found)",
                ),
            ),
            (
                "clean",
                Lint::Ran {
                    exit_code: Some(0),
                    errors: Some(0),
                },
                None,
            ),
            (
                "errors counted",
                Lint::Ran {
                    exit_code: Some(1),
                    errors: Some(4),
                },
                Some("lint fails: 4 error(s)"),
            ),
            (
                "an exit code alone",
                Lint::Ran {
                    exit_code: Some(2),
                    errors: None,
                },
                Some("lint fails: exit code 2"),
            ),
            (
                "killed",
                Lint::Ran {
                    exit_code: None,
                    errors: None,
                },
                Some("lint did not finish (killed or timed out)"),
            ),
        ];
        for (name, lint, expected) in cases {
            assert_eq!(lint_shortfall(&lint).as_deref(), expected, "{name}");
        }
    }
}
