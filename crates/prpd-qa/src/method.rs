//! The checklist's built-in methods (`metodo`): the documentation and coverage checks that no
//! external tool performs, run in-process against the repository's files.
//!
//! Each method measures one or two named figures ([`Metrics`]) and writes one line a person
//! understands (`README.md mentions "rate limiter" (line 40)`); the check's validation
//! expression then decides pass or fail, exactly as for a command's output. A method that
//! cannot apply (criteria coverage without a PRP, a changelog check in a project that keeps
//! none) says so with [`MethodOutcome::NotApplicable`] and QA skips or fails the check
//! according to its `optional` flag. The documentation checks (README, ADR, CHANGELOG) judge a
//! change, not the repository: with no change under review (no PRP, no base) they report
//! [`MethodOutcome::NoChange`], which QA always skips with that reason. Methods only read files;
//! walks of the tree honour `.gitignore`, skip vendored folders and stop after a bounded number
//! of files, so a method's cost does not grow with `node_modules`.

use std::fmt;
use std::path::Path;
use std::str::FromStr;

use regex::Regex;

use crate::metrics::{Metrics, TestCases};
use prpd_prp::Prp;

mod added_code;
mod adr;
mod changelog;
mod comments;
mod documents;
mod feature;
mod files;
mod openapi;
mod prp_coverage;
mod readme;
mod since_base;
mod test_definitions;
mod visible;
mod written;

pub use files::is_test_path;
pub use prp_coverage::{AcceptanceId, test_files_naming};
pub(crate) use prp_coverage::{Trace, command_checks, requirements_section, trace};
pub(crate) use since_base::folder_in_workdir;
pub use since_base::{BaseDocs, BaseDocsError};

use adr::check_docs_adr;
use changelog::grep_changelog;
use comments::check_complexity_comments;
use openapi::validate_openapi;
use prp_coverage::parse_prp_and_verify;
use readme::grep_readme;

/// A built-in method named by a check's `metodo`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Method {
    /// `grep_readme` → `readme_contains_feature`.
    GrepReadme,
    /// `check_docs_adr` → `adr_file_exists`.
    CheckDocsAdr,
    /// `grep_changelog` → `changelog_has_entry`.
    GrepChangelog,
    /// `parse_prp_and_verify` → `criteria_coverage` (a percentage).
    ParsePrpAndVerify,
    /// `validate_openapi` → `openapi_valid` and `not_applicable`.
    ValidateOpenapi,
    /// `check_complexity_comments` → `complex_funcs_documented`.
    CheckComplexityComments,
}

impl Method {
    /// Every method, in the order of [`Method::NAMES`].
    pub const ALL: [Method; 6] = [
        Method::GrepReadme,
        Method::CheckDocsAdr,
        Method::GrepChangelog,
        Method::ParsePrpAndVerify,
        Method::ValidateOpenapi,
        Method::CheckComplexityComments,
    ];

    /// The names a checklist may use, for error messages.
    pub const NAMES: [&'static str; 6] = [
        "grep_readme",
        "check_docs_adr",
        "grep_changelog",
        "parse_prp_and_verify",
        "validate_openapi",
        "check_complexity_comments",
    ];

    /// The name used in checklists.
    pub fn name(self) -> &'static str {
        match self {
            Method::GrepReadme => "grep_readme",
            Method::CheckDocsAdr => "check_docs_adr",
            Method::GrepChangelog => "grep_changelog",
            Method::ParsePrpAndVerify => "parse_prp_and_verify",
            Method::ValidateOpenapi => "validate_openapi",
            Method::CheckComplexityComments => "check_complexity_comments",
        }
    }
}

impl Method {
    /// Whether the method judges a change (the documentation it added) rather than the
    /// repository as it stands.
    pub fn judges_a_change(self) -> bool {
        match self {
            Method::GrepReadme | Method::CheckDocsAdr | Method::GrepChangelog => true,
            Method::ParsePrpAndVerify
            | Method::ValidateOpenapi
            | Method::CheckComplexityComments => false,
        }
    }
}

impl fmt::Display for Method {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str(self.name())
    }
}

/// A `metodo` that names no built-in method.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "unknown method `{name}`; expected one of {}, {}",
    Method::NAMES.join(", "),
    crate::mutation::METHOD_NAME
)]
pub struct UnknownMethod {
    /// The name as written.
    pub name: String,
}

impl FromStr for Method {
    type Err = UnknownMethod;

    fn from_str(name: &str) -> Result<Method, UnknownMethod> {
        Method::ALL
            .into_iter()
            .find(|method| method.name() == name.trim())
            .ok_or_else(|| UnknownMethod {
                name: name.to_owned(),
            })
    }
}

/// What a method may look at.
#[derive(Debug, Clone, Copy)]
pub struct MethodContext<'a> {
    /// The repository's root.
    pub repo: &'a Path,
    /// The PRP under QA, when one was given.
    pub prp: Option<&'a Prp>,
    /// Inside a run: the documentation as it was at the run's base, so the README and
    /// CHANGELOG checks judge only what the run added.
    pub base_docs: Option<&'a BaseDocs>,
    /// The PRP's requirements traced to the checks that ran before the methods (commands run
    /// first): what F2 measures, computed once by QA so the report's Requirements table and F2
    /// agree. `None` outside a QA with a PRP.
    pub(crate) trace: Option<&'a Trace>,
}

/// A check that ran before the methods, as F2 reads it.
#[derive(Debug, Clone, Copy)]
pub struct EarlierCheck<'a> {
    /// Its id (`F1`, `F2-R3`).
    pub id: &'a str,
    /// How it ended.
    pub ended: Ended,
    /// Its one-line detail.
    pub detail: &'a str,
    /// It runs the tests (the test command, or a command criterion of the PRP): only such a
    /// check's test names are evidence of a requirement.
    pub runs_tests: bool,
    /// The tests its output named.
    pub cases: &'a TestCases,
}

/// How an earlier check ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ended {
    Passed,
    Failed,
    Warned,
    Skipped,
}

/// What a method found.
#[derive(Debug, Clone, PartialEq)]
pub enum MethodOutcome {
    /// The method measured its figures; the check's validation expression decides.
    Measured {
        /// The figures, named as in the checklist's expressions.
        metrics: Metrics,
        /// One line for the report.
        detail: String,
    },
    /// The method has nothing to measure in this repository; says why.
    NotApplicable {
        /// One line for the report.
        reason: String,
    },
    /// The method judges a change and none is under review (no PRP, no base): there is
    /// nothing to judge, which is neither a pass nor a failure.
    NoChange {
        /// One line for the report.
        reason: String,
    },
}

/// Runs a built-in method. It only reads files and never fails: unreadable files are
/// reported in the detail and measured as absent.
pub fn run(method: Method, context: &MethodContext<'_>) -> MethodOutcome {
    if method.judges_a_change() && context.prp.is_none() && context.base_docs.is_none() {
        return MethodOutcome::NoChange {
            reason: "not applicable: no change is under review, and this check judges the \
                     documentation of a change (give `--prp FILE` or `--base REF` to judge one)"
                .to_owned(),
        };
    }
    match method {
        Method::GrepReadme => grep_readme(context),
        Method::CheckDocsAdr => check_docs_adr(context.repo),
        Method::GrepChangelog => grep_changelog(context),
        Method::ParsePrpAndVerify => parse_prp_and_verify(context),
        Method::ValidateOpenapi => validate_openapi(context.repo),
        Method::CheckComplexityComments => check_complexity_comments(context.repo),
    }
}

fn measured(metrics: Metrics, detail: String) -> MethodOutcome {
    MethodOutcome::Measured { metrics, detail }
}

fn one_flag(name: &str, value: bool, detail: String) -> MethodOutcome {
    let mut metrics = Metrics::default();
    metrics.set_bool(name, value);
    measured(metrics, detail)
}

fn regex(pattern: &str) -> Regex {
    Regex::new(pattern).expect("method patterns are valid")
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::metrics::MetricValue;

    pub(super) struct Repo(tempfile::TempDir);

    impl Repo {
        pub(super) fn new() -> Repo {
            Repo(tempfile::tempdir().expect("temporary directory"))
        }

        pub(super) fn file(&self, path: &str, text: &str) -> &Repo {
            let path = self.0.path().join(path);
            std::fs::create_dir_all(path.parent().expect("test fixture")).expect("test fixture");
            std::fs::write(path, text).expect("test fixture");
            self
        }

        pub(super) fn path(&self) -> &Path {
            self.0.path()
        }

        pub(super) fn run(&self, method: Method, prp: Option<&Prp>) -> MethodOutcome {
            run(
                method,
                &MethodContext {
                    repo: self.0.path(),
                    prp,
                    base_docs: None,
                    trace: None,
                },
            )
        }

        /// Runs `method` on the change since `base`.
        pub(super) fn run_since(
            &self,
            method: Method,
            prp: Option<&Prp>,
            base: &BaseDocs,
        ) -> MethodOutcome {
            run(
                method,
                &MethodContext {
                    repo: self.0.path(),
                    prp,
                    base_docs: Some(base),
                    trace: None,
                },
            )
        }

        /// Runs F2 with the checks that ran before it.
        pub(super) fn run_with_checks(
            &self,
            prp: &Prp,
            checks: &[EarlierCheck<'_>],
        ) -> MethodOutcome {
            let trace = trace(prp, checks, self.0.path());
            run(
                Method::ParsePrpAndVerify,
                &MethodContext {
                    repo: self.0.path(),
                    prp: Some(prp),
                    base_docs: None,
                    trace: Some(&trace),
                },
            )
        }

        /// Runs `method` on a change whose base had no documentation at all.
        pub(super) fn run_changed(&self, method: Method) -> MethodOutcome {
            self.run_since(method, None, &BaseDocs::new("main", BTreeMap::new()))
        }
    }

    pub(super) fn prp(text: &str) -> Prp {
        prpd_prp::parse(Path::new("PRPs/feature.md"), text).expect("test fixture")
    }

    /// A PRP whose title says "multiplication" and whose goal names `multiply(a, b)`.
    pub(super) const MULTIPLICATION: &str = "# Multiplication in the calculator\n\n## Goal\n\nAdd `multiply(a, b)` to the calculator.\n\n## Success Criteria\n\n- [ ] `multiply(2, 3)` returns 6\n- [ ] `pytest` passes\n";

    pub(super) fn rate_limiter() -> Prp {
        prp(
            "# PRP: Rate Limiter\n\n## Success Criteria\n\n- [ ] Requests over the limit get HTTP 429\n\n## Acceptance Criteria\n\n- [ ] AC-1 over the limit returns 429\n- [ ] AC-2 the limit resets every minute\n- [ ] AC-10 limits are per API key\n",
        )
    }

    /// The figure `name` and the detail of a measured outcome.
    pub(super) fn figure(outcome: &MethodOutcome, name: &str) -> (MetricValue, String) {
        match outcome {
            MethodOutcome::Measured { metrics, detail } => (
                metrics
                    .get(name)
                    .unwrap_or_else(|| panic!("{name} missing: {metrics:?}")),
                detail.clone(),
            ),
            MethodOutcome::NotApplicable { reason } | MethodOutcome::NoChange { reason } => {
                panic!("not applicable: {reason}")
            }
        }
    }

    #[test]
    fn documentation_checks_without_a_change_have_nothing_to_judge() {
        let repo = Repo::new();
        repo.file("README.md", "# app\n")
            .file("CHANGELOG.md", "- x\n")
            .file("docs/adr/0001-x.md", "# X\n");
        for method in [
            Method::GrepReadme,
            Method::CheckDocsAdr,
            Method::GrepChangelog,
        ] {
            match repo.run(method, None) {
                MethodOutcome::NoChange { reason } => {
                    assert!(reason.contains("no change is under review"), "{reason}");
                }
                other => panic!("{method}: expected no change, got {other:?}"),
            }
        }
        assert!(matches!(
            repo.run(Method::ValidateOpenapi, None),
            MethodOutcome::Measured { .. }
        ));
    }

    #[test]
    fn names_round_trip_and_unknown_names_list_the_known_ones() {
        for (method, name) in Method::ALL.into_iter().zip(Method::NAMES) {
            assert_eq!(method.name(), name);
            assert_eq!(name.parse::<Method>(), Ok(method));
        }
        let error = "grep_docs".parse::<Method>().expect_err("an error");
        assert_eq!(
            error.to_string(),
            "unknown method `grep_docs`; expected one of grep_readme, check_docs_adr, \
             grep_changelog, parse_prp_and_verify, validate_openapi, check_complexity_comments, \
             mutation_testing"
        );
    }
}
