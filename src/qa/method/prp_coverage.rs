//! The `parse_prp_and_verify` method: a PRP's acceptance criteria are only trustworthy when
//! tests exercise them, so this check traces each criterion to a test file that names it and
//! reports the share that is covered.

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

impl Requirement {
    /// An acceptance id such as `AC-1.2`, found as `AC-1.2` or `ac_1_2`, but not inside
    /// `AC-1.20` or `AC-12`.
    fn acceptance(id: &str) -> Requirement {
        let parts: Vec<String> = id
            .split(['-', '.', '_'])
            .filter(|part| !part.is_empty())
            .map(regex::escape)
            .collect();
        let pattern = format!(
            r"(?i)(?:^|[^a-z0-9]){}(?:$|[^a-z0-9_.-]|[_.-](?:$|[^0-9]))",
            parts.join("[-_.]")
        );
        Requirement {
            label: id.to_owned(),
            pattern: regex(&pattern),
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
    let prp_path = context.repo.join(&prp.path);
    let mut test_files = 0usize;
    for path in walk(context.repo) {
        if open.is_empty() {
            break;
        }
        let relative = path.strip_prefix(context.repo).unwrap_or(&path);
        let extension = extension(&path);
        if PROSE_EXTENSIONS.contains(&extension.as_str()) || path == prp_path || path == prp.path {
            continue;
        }
        let by_path = is_test_path(relative);
        if !by_path && extension != "rs" {
            continue;
        }
        let Some(text) = read_text(&path) else {
            continue;
        };
        if !by_path && !text.contains("#[cfg(test)]") && !text.contains("#[test]") {
            continue;
        }
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
