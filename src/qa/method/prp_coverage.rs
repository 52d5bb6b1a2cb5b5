//! The `parse_prp_and_verify` method: a PRP's acceptance criteria are only trustworthy when
//! tests exercise them, so this check traces each criterion to a test file that names it and
//! reports the share that is covered. The same trace ([`AcceptanceId`], [`test_files_naming`])
//! serves the `[VERIFY] AC checklist` task, which also needs the tests named after an id.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use regex::Regex;

use super::feature::normalise;
use super::files::{extension, is_test_path, read_text, walk};
use super::{MethodContext, MethodOutcome, measured, regex};
use crate::qa::metrics::Metrics;

/// Prose files never count as tests: the PRP itself would otherwise "cover" every criterion.
const PROSE_EXTENSIONS: &[&str] = &["md", "markdown", "rst", "txt", "adoc"];

/// One thing the PRP asks tests to cover, and how a test file refers to it.
struct Requirement {
    label: String,
    pattern: Regex,
}

/// An acceptance id such as `AC-1.2` as a text names it: `AC-1.2`, `ac_1_2` or `AC 1.2`'s
/// test name `ac_1_2_…`, but not `AC-1.20` or `AC-12`.
#[derive(Debug, Clone)]
pub struct AcceptanceId {
    id: String,
    pattern: Regex,
}

impl AcceptanceId {
    /// The pattern of `id`.
    pub fn new(id: &str) -> AcceptanceId {
        let parts: Vec<String> = id
            .split(['-', '.', '_'])
            .filter(|part| !part.is_empty())
            .map(regex::escape)
            .collect();
        let pattern = format!(
            r"(?i)(?:^|[^a-z0-9]){}(?:$|[^a-z0-9_.-]|[_.-](?:$|[^0-9]))",
            parts.join("[-_.]")
        );
        AcceptanceId {
            id: id.to_owned(),
            pattern: regex(&pattern),
        }
    }

    /// The id as written.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// Whether `text` (a file, a test's name) names the id.
    pub fn is_named_in(&self, text: &str) -> bool {
        self.pattern.is_match(text)
    }
}

/// For each of `ids`, the test files under `repo` that name it (relative paths, sorted), by the
/// rules of `parse_prp_and_verify`: test files by path, or Rust files with tests in them;
/// prose (the PRP, a `requirements.md`) never counts.
pub fn test_files_naming(repo: &Path, ids: &[AcceptanceId]) -> BTreeMap<String, Vec<PathBuf>> {
    let mut named: BTreeMap<String, Vec<PathBuf>> =
        ids.iter().map(|id| (id.id.clone(), Vec::new())).collect();
    for path in walk(repo) {
        let Some(text) = test_file_text(repo, &path, None) else {
            continue;
        };
        let relative = path.strip_prefix(repo).unwrap_or(&path);
        for id in ids.iter().filter(|id| id.is_named_in(&text)) {
            named
                .entry(id.id.clone())
                .or_default()
                .push(relative.to_path_buf());
        }
    }
    named
}

/// The text of `path` when it holds tests (see [`test_files_naming`]); `prp` is skipped too.
fn test_file_text(repo: &Path, path: &Path, prp: Option<&Path>) -> Option<String> {
    let relative = path.strip_prefix(repo).unwrap_or(path);
    let extension = extension(path);
    if PROSE_EXTENSIONS.contains(&extension.as_str())
        || prp.is_some_and(|prp| path == repo.join(prp) || path == prp)
    {
        return None;
    }
    let by_path = is_test_path(relative);
    if !by_path && extension != "rs" {
        return None;
    }
    let text = read_text(path)?;
    if !by_path && !text.contains("#[cfg(test)]") && !text.contains("#[test]") {
        return None;
    }
    Some(text)
}

impl Requirement {
    fn acceptance(id: &str) -> Requirement {
        let id = AcceptanceId::new(id);
        Requirement {
            label: id.id,
            pattern: id.pattern,
        }
    }

    /// A success criterion, found by its whole text (case and spacing ignored).
    fn criterion(text: &str) -> Requirement {
        let words: Vec<String> = normalise(text).split(' ').map(regex::escape).collect();
        Requirement {
            label: format!("\"{text}\""),
            pattern: regex(&format!(r"(?i){}", words.join(r"[^\p{L}\p{N}]+"))),
        }
    }
}

/// `criteria_coverage`: the percentage of the PRP's criteria that test files reference.
pub(super) fn parse_prp_and_verify(context: &MethodContext<'_>) -> MethodOutcome {
    let Some(prp) = context.prp else {
        return MethodOutcome::NotApplicable {
            reason: "no PRP was given, so there are no acceptance criteria to trace to tests"
                .to_owned(),
        };
    };
    let (kind, mut open): (&str, Vec<Requirement>) = if prp.acceptance.is_empty() {
        (
            "success criteria",
            prp.success_criteria
                .iter()
                .map(|criterion| Requirement::criterion(&criterion.text))
                .collect(),
        )
    } else {
        (
            "acceptance criteria",
            prp.acceptance
                .iter()
                .map(|acceptance| Requirement::acceptance(&acceptance.id))
                .collect(),
        )
    };
    let total = open.len();
    if total == 0 {
        return MethodOutcome::NotApplicable {
            reason: "the PRP lists no acceptance or success criteria".to_owned(),
        };
    }
    let mut test_files = 0usize;
    for path in walk(context.repo) {
        if open.is_empty() {
            break;
        }
        let Some(text) = test_file_text(context.repo, &path, Some(&prp.path)) else {
            continue;
        };
        test_files += 1;
        open.retain(|requirement| !requirement.pattern.is_match(&text));
    }
    let covered = total - open.len();
    #[expect(
        clippy::cast_precision_loss,
        reason = "criteria counts are tiny; the percentage is rounded for display anyway"
    )]
    let percentage = (covered as f64) * 100.0 / (total as f64);
    let mut metrics = Metrics::default();
    metrics.set_number("criteria_coverage", (percentage * 100.0).round() / 100.0);
    let detail = if open.is_empty() {
        format!("all {total} {kind} are referenced in tests")
    } else {
        let missing: Vec<&str> = open
            .iter()
            .map(|requirement| requirement.label.as_str())
            .collect();
        format!(
            "{covered} of {total} {kind} referenced in {test_files} test file{}; not \
             referenced: {}",
            if test_files == 1 { "" } else { "s" },
            missing.join(", ")
        )
    };
    measured(metrics, detail)
}

#[cfg(test)]
mod tests {
    use super::{AcceptanceId, test_files_naming};
    use crate::qa::method::tests::{Repo, figure, prp, rate_limiter};
    use crate::qa::method::{Method, MethodOutcome};
    use crate::qa::metrics::MetricValue;

    #[test]
    fn parse_prp_and_verify_traces_acceptance_ids_to_tests() {
        let prp = rate_limiter();
        let repo = Repo::new();
        repo.file(
            "PRPs/feature.md",
            "# PRP: Rate Limiter\n- [ ] AC-1 x\n- [ ] AC-2 y\n- [ ] AC-10 z\n",
        )
        .file(
            "src/limiter.rs",
            "// AC-2 is implemented here, but this is not a test\nfn f() {}\n",
        )
        .file(
            "tests/limits.rs",
            "#[test]\nfn ac_1_over_the_limit_returns_429() {}\n",
        )
        .file(
            "web/limiter.test.ts",
            "it('resets every minute (AC-10)', () => {});\n",
        )
        .file("node_modules/dep/test.js", "// AC-2\n");
        let (value, detail) = figure(
            &repo.run(Method::ParsePrpAndVerify, Some(&prp)),
            "criteria_coverage",
        );
        assert_eq!(value, MetricValue::Number(66.67));
        assert_eq!(
            detail,
            "2 of 3 acceptance criteria referenced in 2 test files; not referenced: AC-2"
        );
        repo.file(
            "src/limiter.rs",
            "fn f() {}\n#[cfg(test)]\nmod tests {\n    // AC-2\n}\n",
        );
        let (value, detail) = figure(
            &repo.run(Method::ParsePrpAndVerify, Some(&prp)),
            "criteria_coverage",
        );
        assert_eq!(value, MetricValue::Number(100.0));
        assert_eq!(detail, "all 3 acceptance criteria are referenced in tests");
    }

    #[test]
    fn test_files_naming_traces_each_id_to_its_test_files_only() {
        let repo = Repo::new();
        repo.file("PRPs/feature.md", "- [ ] AC-1 x\n- [ ] AC-2 y\n")
            .file("specs/x/requirements.md", "AC-1 AC-2\n")
            .file("src/lib.js", "// AC-2 implemented here, not a test\n")
            .file("test/a.test.js", "test('AC-1: works', () => {});\n")
            .file("test/b.test.js", "test('AC-10 and ac_1_case', () => {});\n");
        let ids = [AcceptanceId::new("AC-1"), AcceptanceId::new("AC-2")];
        let named = test_files_naming(repo.path(), &ids);
        assert_eq!(
            named["AC-1"],
            [
                std::path::PathBuf::from("test/a.test.js"),
                std::path::PathBuf::from("test/b.test.js")
            ]
        );
        assert!(named["AC-2"].is_empty(), "{named:?}");
        assert!(ids[0].is_named_in("AC-1: wordStats counts words"));
        assert!(ids[0].is_named_in("tests::ac_1_over_the_limit"));
        assert!(!ids[0].is_named_in("AC-10: something else"));
        assert!(!ids[0].is_named_in("AC-1.2 nested"));
        assert_eq!(ids[1].id(), "AC-2");
    }

    #[test]
    fn parse_prp_and_verify_does_not_confuse_ac_1_with_ac_10() {
        let prp = prp("# Limits\n\n- [ ] AC-1 a\n- [ ] AC-10 b\n");
        let repo = Repo::new();
        repo.file(
            "spec/limits_spec.lua",
            "describe('AC-10 per key', function() end)\n",
        );
        let (value, detail) = figure(
            &repo.run(Method::ParsePrpAndVerify, Some(&prp)),
            "criteria_coverage",
        );
        assert_eq!(value, MetricValue::Number(50.0));
        assert!(detail.ends_with("not referenced: AC-1"), "{detail}");
    }

    #[test]
    fn parse_prp_and_verify_uses_success_criteria_without_ids_and_needs_a_prp() {
        let prp = prp(
            "# Limits\n\n## Success Criteria\n\n- [ ] Requests over the limit get HTTP 429\n- [ ] Limits reset\n",
        );
        let repo = Repo::new();
        repo.file(
            "tests/test_limits.py",
            "def test_429():\n    \"\"\"requests over the limit get HTTP-429\"\"\"\n",
        );
        let (value, detail) = figure(
            &repo.run(Method::ParsePrpAndVerify, Some(&prp)),
            "criteria_coverage",
        );
        assert_eq!(value, MetricValue::Number(50.0));
        assert!(
            detail.ends_with("not referenced: \"Limits reset\""),
            "{detail}"
        );
        assert!(matches!(
            repo.run(Method::ParsePrpAndVerify, None),
            MethodOutcome::NotApplicable { .. }
        ));
    }
}
