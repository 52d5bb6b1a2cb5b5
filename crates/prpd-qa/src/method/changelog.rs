//! The `grep_changelog` method: a change users can notice belongs in the changelog, where the
//! project keeps one. The changelog is a file (`CHANGELOG.md`, `CHANGES.rst`, `HISTORY.md`,
//! `NEWS`, at the root or in `docs/`) or a folder of fragments (`changelog.d/`,
//! `newsfragments/`, `.changeset/`, …); a project that keeps none is not asked for an entry.

use super::documents::{FRAGMENT_FOLDERS, documents, fragment_folders, is_changelog_document};
use super::feature::Reading;
use super::files::display;
use super::since_base::judged_text;
use super::written::{Judged, judge, near_misses_text};
use super::{MethodContext, MethodOutcome, one_flag};

/// `changelog_has_entry`: the changelog has an entry naming the feature (one of its names, or
/// its title), or against a base without a PRP, has something new.
pub(super) fn grep_changelog(context: &MethodContext<'_>) -> MethodOutcome {
    const METRIC: &str = "changelog_has_entry";
    let names: Vec<String> = documents(context.repo)
        .into_iter()
        .filter(|path| is_changelog_document(path))
        .map(|path| display(context.repo, &context.repo.join(path)))
        .collect();
    let folders = fragment_folders(context.repo);
    if names.is_empty() && folders.is_empty() {
        return MethodOutcome::NotApplicable {
            reason: format!(
                "the project keeps no changelog (no CHANGELOG, CHANGES, HISTORY or NEWS file at \
                 the root or in docs/, and none of the fragment folders {}), so no entry is asked for",
                FRAGMENT_FOLDERS.join(", ")
            ),
        };
    }
    let kept = if names.is_empty() {
        format!("{}/ (no fragment yet)", folders.join("/, "))
    } else if names.len() <= 3 {
        names.join(", ")
    } else {
        format!("{}, … ({} files)", names[..3].join(", "), names.len())
    };
    let since = context
        .base_docs
        .map(|base| format!(" (the lines added {})", base.since()))
        .unwrap_or_default();
    match judge(context, &names, Reading::Entry, |name, text| {
        judged_text(context.base_docs, name, text)
    }) {
        Judged::Mentions { name, line, found } => one_flag(
            METRIC,
            true,
            format!("{name} mentions {found} (line {line})"),
        ),
        Judged::Added { name, line } => one_flag(
            METRIC,
            true,
            format!("{name} has an entry for the change (line {line})"),
        ),
        Judged::Missing {
            feature: Some(feature),
            near_misses,
        } => one_flag(
            METRIC,
            false,
            format!(
                "{kept}{since}: no entry names the feature \"{}\": looked for {}{}",
                feature.title,
                feature.looked_for(Reading::Entry),
                near_misses_text(&near_misses)
            ),
        ),
        Judged::Missing { feature: None, .. } => one_flag(
            METRIC,
            false,
            format!(
                "{kept}: no entry was added {}",
                context
                    .base_docs
                    .map(super::BaseDocs::since)
                    .unwrap_or_default()
            ),
        ),
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use crate::method::tests::{MULTIPLICATION, Repo, figure, prp, rate_limiter};
    use crate::method::{BaseDocs, Method, MethodOutcome};
    use crate::metrics::MetricValue;

    #[test]
    fn grep_changelog_looks_for_the_feature() {
        let prp = rate_limiter();
        let repo = Repo::new();
        repo.file(
            "CHANGELOG.md",
            "# Changelog\n\n## [1.0.0]\n\n### Added\n\n- Rate limiter for the API\n",
        );
        let (value, detail) = figure(
            &repo.run(Method::GrepChangelog, Some(&prp)),
            "changelog_has_entry",
        );
        assert_eq!(value, MetricValue::Bool(true));
        assert_eq!(detail, "CHANGELOG.md mentions \"Rate Limiter\" (line 7)");

        let other = Repo::new();
        other.file(
            "CHANGELOG.md",
            "# Changelog\n\n## [Unreleased]\n\n- Per-key quotas\n",
        );
        let (value, detail) = figure(
            &other.run(Method::GrepChangelog, Some(&prp)),
            "changelog_has_entry",
        );
        assert_eq!(value, MetricValue::Bool(false));
        assert_eq!(
            detail,
            "CHANGELOG.md: no entry names the feature \"Rate Limiter\": looked for the title \
             \"Rate Limiter\" or its key words (rate, limiter, or words of the same stem) in an \
             entry a reader sees"
        );
    }

    #[test]
    fn every_common_changelog_form_counts() {
        let prp = rate_limiter();
        for (file, text) in [
            ("CHANGES.rst", "1.1\n---\n\n* Rate limiter.\n"),
            ("HISTORY.md", "## 1.1\n\n- rate limiter\n"),
            ("NEWS", "1.1: the rate limiter\n"),
            ("docs/changelog.rst", "* Added the rate limiter\n"),
            ("changelog.d/12.feature.md", "A rate limiter for the API.\n"),
            (
                ".changeset/brave-lions.md",
                "---\n\"app\": minor\n---\n\nRate limiter\n",
            ),
        ] {
            let repo = Repo::new();
            repo.file(file, text);
            let (value, detail) = figure(
                &repo.run(Method::GrepChangelog, Some(&prp)),
                "changelog_has_entry",
            );
            assert_eq!(value, MetricValue::Bool(true), "{file}: {detail}");
            assert!(detail.starts_with(file), "{detail}");
        }
    }

    #[test]
    fn a_project_without_a_changelog_is_not_asked_for_an_entry() {
        let prp = rate_limiter();
        let repo = Repo::new();
        repo.file("README.md", "# app\n");
        match repo.run(Method::GrepChangelog, Some(&prp)) {
            MethodOutcome::NotApplicable { reason } => {
                assert!(
                    reason.starts_with("the project keeps no changelog"),
                    "{reason}"
                );
            }
            other => panic!("expected not applicable, got {other:?}"),
        }
        let fragments = Repo::new();
        fragments.file("newsfragments/.gitkeep", "");
        let (value, detail) = figure(
            &fragments.run(Method::GrepChangelog, Some(&prp)),
            "changelog_has_entry",
        );
        assert_eq!(value, MetricValue::Bool(false));
        assert!(
            detail.starts_with(
                "newsfragments/ (no fragment yet): no entry names the feature \"Rate Limiter\""
            ),
            "{detail}"
        );
    }

    #[test]
    fn an_entry_naming_the_feature_or_its_title_counts() {
        let prp = prp(MULTIPLICATION);
        let base_text = "# Changelog\n\n## [Unreleased]\n\n## [1.0.0]\n\n- `add`.\n";
        for (entry, passes, detail) in [
            (
                "- Multiply numbers with `multiply(a, b)`.",
                true,
                "CHANGELOG.md (the lines added since the run started) mentions `multiply` (line 4)",
            ),
            (
                "- Multiplication in the calculator.",
                true,
                "CHANGELOG.md (the lines added since the run started) mentions \"Multiplication \
                 in the calculator\" (line 4)",
            ),
            (
                "- Multiplies numbers.",
                true,
                "CHANGELOG.md (the lines added since the run started) mentions `multiply` (line 4)",
            ),
            (
                "- Misc. <!-- multiply -->",
                false,
                "CHANGELOG.md (the lines added since the run started): no entry names the \
                 feature \"Multiplication in the calculator\": looked for one of the feature's \
                 names (`multiply` from the PRP) or the title \"Multiplication in the \
                 calculator\" or its key words (multiplication, calculator, or words of the same \
                 stem) in an entry a reader sees; CHANGELOG.md line 4 names `multiply` only \
                 where a reader does not see it (a comment, a link target or an image)",
            ),
        ] {
            let repo = Repo::new();
            repo.file(
                "CHANGELOG.md",
                &base_text.replace("## [Unreleased]\n", &format!("## [Unreleased]\n{entry}\n")),
            );
            let base = BaseDocs::new(
                "the run started",
                BTreeMap::from([("CHANGELOG.md".to_owned(), base_text.to_owned())]),
            );
            let (value, shown) = figure(
                &repo.run_since(Method::GrepChangelog, Some(&prp), &base),
                "changelog_has_entry",
            );
            assert_eq!(value, MetricValue::Bool(passes), "{entry}: {shown}");
            assert_eq!(shown, detail, "{entry}");
        }
    }

    #[test]
    fn against_a_base_only_new_entries_count() {
        let repo = Repo::new();
        repo.file("CHANGES.rst", "1.0\n---\n\n* first\n")
            .file("changelog.d/1.feature", "Old fragment.\n");
        let base = BaseDocs::new(
            "main",
            BTreeMap::from([
                ("CHANGES.rst".to_owned(), "1.0\n---\n\n* first\n".to_owned()),
                (
                    "changelog.d/1.feature".to_owned(),
                    "Old fragment.\n".to_owned(),
                ),
            ]),
        );
        let (value, detail) = figure(
            &repo.run_since(Method::GrepChangelog, None, &base),
            "changelog_has_entry",
        );
        assert_eq!(value, MetricValue::Bool(false));
        assert_eq!(
            detail,
            "CHANGES.rst, changelog.d/1.feature: no entry was added since main"
        );
        repo.file("changelog.d/2.bugfix", "Fixes the parser.\n");
        let (value, detail) = figure(
            &repo.run_since(Method::GrepChangelog, None, &base),
            "changelog_has_entry",
        );
        assert_eq!(value, MetricValue::Bool(true), "{detail}");
        assert_eq!(
            detail,
            "changelog.d/2.bugfix (the lines added since main) has an entry for the change (line 1)"
        );
    }
}
