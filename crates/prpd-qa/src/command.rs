//! The kinds of quality command QA needs (test, lint, type-check, build, format check,
//! complexity, duplication) and the task names projects give them. Discovery, the tools
//! mapping and the loop all speak of commands by kind.

use serde::{Deserialize, Serialize};

/// The kinds of command QA needs, in the order reports list them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CommandKind {
    Test,
    Lint,
    Typecheck,
    Build,
    FormatCheck,
    Complexity,
    Duplication,
}

impl CommandKind {
    /// Every kind, in report order.
    pub const ALL: [CommandKind; 7] = [
        CommandKind::Test,
        CommandKind::Lint,
        CommandKind::Typecheck,
        CommandKind::Build,
        CommandKind::FormatCheck,
        CommandKind::Complexity,
        CommandKind::Duplication,
    ];

    /// The kind's name in files and JSON (`format_check`).
    pub fn name(self) -> &'static str {
        match self {
            CommandKind::Test => "test",
            CommandKind::Lint => "lint",
            CommandKind::Typecheck => "typecheck",
            CommandKind::Build => "build",
            CommandKind::FormatCheck => "format_check",
            CommandKind::Complexity => "complexity",
            CommandKind::Duplication => "duplication",
        }
    }

    /// The kind's label in the human table, as in the seed's "Quality Commands" table.
    pub fn label(self) -> &'static str {
        match self {
            CommandKind::Test => "Test",
            CommandKind::Lint => "Lint",
            CommandKind::Typecheck => "TypeCheck",
            CommandKind::Build => "Build",
            CommandKind::FormatCheck => "FormatCheck",
            CommandKind::Complexity => "Complexity",
            CommandKind::Duplication => "Duplication",
        }
    }

    /// The Makefile targets or justfile recipes that stand for this kind, best first: its task
    /// names, then the conventional targets that stand for it too: `check` runs the tests
    /// (GNU's convention) when there is no `test`, `all` builds, and `fmt`/`format` are a
    /// format check only when their recipe runs the formatter in its check mode
    /// ([`CommandKind::needs_check_mode`]). `all` is never a test command.
    pub(crate) fn make_task_names(self) -> impl Iterator<Item = &'static str> {
        let conventional: &[&str] = match self {
            CommandKind::Test => &["check"],
            CommandKind::Build => &["all"],
            CommandKind::FormatCheck => &["fmt", "format"],
            CommandKind::Lint
            | CommandKind::Typecheck
            | CommandKind::Complexity
            | CommandKind::Duplication => &[],
        };
        self.task_names().iter().chain(conventional).copied()
    }

    /// Whether a task called `name` counts as this kind only when it runs a formatter in its
    /// check mode: `make fmt` usually rewrites files.
    pub(crate) fn needs_check_mode(self, name: &str) -> bool {
        self == CommandKind::FormatCheck && matches!(name, "fmt" | "format")
    }

    /// The names projects give a script, target or recipe of this kind, best first.
    /// Never a name that fixes or writes (`lint:fix`, `format:write`): those rewrite the tree.
    pub(crate) fn task_names(self) -> &'static [&'static str] {
        match self {
            CommandKind::Test => &["test", "tests", "test:unit"],
            CommandKind::Lint => &["lint", "check:lint", "lint:check", "lint:all", "eslint"],
            CommandKind::Typecheck => &[
                "typecheck",
                "type-check",
                "check-types",
                "check:type",
                "check:types",
                "types:check",
                "typecheck:all",
                "test:types",
                "test:type",
                "lint:types",
                "types",
                "tsc",
            ],
            CommandKind::Build => &["build"],
            CommandKind::FormatCheck => &[
                "format:check",
                "fmt:check",
                "check:format",
                "check:fmt",
                "prettier:check",
                "lint:format",
                "lint:prettier",
                "testformat",
                "test:format",
                "check-format",
                "format-check",
                "fmt-check",
                "check-fmt",
            ],
            CommandKind::Complexity => &["complexity"],
            CommandKind::Duplication => &["duplication", "jscpd"],
        }
    }
}
