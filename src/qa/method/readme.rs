//! The `grep_readme` method: a feature is not done until the documentation tells users about
//! it, so this check looks for the change in the README at the repository's root and in the
//! documents under `docs/` or `doc/` (Markdown, reStructuredText, Asciidoc or plain text).

use super::documents::{documents, is_changelog_document, is_readme};
use super::files::display;
use super::since_base::judged_text;
use super::written::{Judged, judge};
use super::{MethodContext, MethodOutcome, one_flag};

/// `readme_contains_feature`: the README (or a document under `docs/`) mentions the PRP's
/// feature, or against a base, documents something new.
pub(super) fn grep_readme(context: &MethodContext<'_>) -> MethodOutcome {
    const METRIC: &str = "readme_contains_feature";
    let files = documents(context.repo);
    let (readmes, docs): (Vec<_>, Vec<_>) = files
        .into_iter()
        .filter(|path| !is_changelog_document(path))
        .partition(|path| path.components().count() == 1);
    let readmes: Vec<_> = readmes
        .into_iter()
        .filter(|path| is_readme(&path.to_string_lossy()))
        .collect();
    if readmes.is_empty() {
        return one_flag(
            METRIC,
            false,
            "no README (README.md, README.rst, README.adoc, README.txt or README) at the \
             repository root"
                .to_owned(),
        );
    }
    let names: Vec<String> = readmes
        .iter()
        .chain(&docs)
        .map(|path| display(context.repo, &context.repo.join(path)))
        .collect();
    let described = describe(readmes.len(), docs.len(), &names[0]);
    match judge(context, &names, |name, text| {
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
            format!("{name} documents the change (line {line})"),
        ),
        Judged::Missing {
            feature: Some(feature),
        } => one_flag(
            METRIC,
            false,
            format!(
                "{described} does not mention the feature \"{}\" (looked for the title or its key \
                 words: {})",
                feature.title,
                feature.keywords.join(", ")
            ),
        ),
        Judged::Missing { feature: None } => one_flag(
            METRIC,
            false,
            format!(
                "{described}: nothing was added {}",
                context
                    .base_docs
                    .map(super::BaseDocs::since)
                    .unwrap_or_default()
            ),
        ),
    }
}

/// `README.md`, or `README.md and 4 documents under docs/`.
fn describe(readmes: usize, docs: usize, first: &str) -> String {
    let readme = if readmes == 1 {
        first.to_owned()
    } else {
        format!("the {readmes} READMEs")
    };
    match docs {
        0 => readme,
        1 => format!("{readme} and 1 document under docs/"),
        count => format!("{readme} and {count} documents under docs/"),
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use crate::qa::method::tests::{Repo, figure, rate_limiter};
    use crate::qa::method::{BaseDocs, Method};
    use crate::qa::metrics::MetricValue;

    #[test]
    fn grep_readme_finds_the_title_or_its_key_words() {
        let prp = rate_limiter();
        let repo = Repo::new();
        repo.file(
            "README.md",
            "# app\n\nUsage.\n\n## Rate limiter\n\nRequests are limited.\n",
        );
        let (value, detail) = figure(
            &repo.run(Method::GrepReadme, Some(&prp)),
            "readme_contains_feature",
        );
        assert_eq!(value, MetricValue::Bool(true));
        assert_eq!(detail, "README.md mentions \"Rate Limiter\" (line 5)");

        let words = Repo::new();
        words.file(
            "README.md",
            "# app\n\nThe limiter caps the request\nrate per key.\n",
        );
        let (value, detail) = figure(
            &words.run(Method::GrepReadme, Some(&prp)),
            "readme_contains_feature",
        );
        assert_eq!(value, MetricValue::Bool(true), "{detail}");
        assert_eq!(detail, "README.md mentions rate, limiter (line 3)");
    }

    #[test]
    fn restructured_text_and_docs_count() {
        let prp = rate_limiter();
        let repo = Repo::new();
        repo.file("README.rst", "app\n===\n\nA web server.\n")
            .file(
                "docs/limits.rst",
                "Limits\n======\n\nThe rate limiter answers 429.\n",
            )
            .file("docs/conf.py", "# rate limiter\n");
        let (value, detail) = figure(
            &repo.run(Method::GrepReadme, Some(&prp)),
            "readme_contains_feature",
        );
        assert_eq!(value, MetricValue::Bool(true), "{detail}");
        assert_eq!(detail, "docs/limits.rst mentions \"Rate Limiter\" (line 4)");
    }

    #[test]
    fn grep_readme_fails_without_a_mention_or_a_readme() {
        let prp = rate_limiter();
        let repo = Repo::new();
        repo.file(
            "README.md",
            "# app\n\nA web server. Rate of change is high.\n\nLimiter-free.\n",
        );
        let (value, detail) = figure(
            &repo.run(Method::GrepReadme, Some(&prp)),
            "readme_contains_feature",
        );
        assert_eq!(value, MetricValue::Bool(false));
        assert!(
            detail.starts_with("README.md does not mention the feature \"Rate Limiter\""),
            "{detail}"
        );

        let (value, detail) = figure(
            &Repo::new().run(Method::GrepReadme, Some(&prp)),
            "readme_contains_feature",
        );
        assert_eq!(value, MetricValue::Bool(false));
        assert!(
            detail.starts_with("no README (README.md, README.rst"),
            "{detail}"
        );
    }

    #[test]
    fn against_a_base_without_a_prp_any_added_documentation_passes() {
        let repo = Repo::new();
        repo.file("README.adoc", "= app\n\nOld text.\n");
        let base = BaseDocs::new(
            "main",
            BTreeMap::from([("README.adoc".to_owned(), "= app\n\nOld text.\n".to_owned())]),
        );
        let (value, detail) = figure(
            &repo.run_since(Method::GrepReadme, None, &base),
            "readme_contains_feature",
        );
        assert_eq!(value, MetricValue::Bool(false));
        assert_eq!(detail, "README.adoc: nothing was added since main");
        repo.file("docs/usage.md", "# Usage\n\nCall it.\n");
        let (value, detail) = figure(
            &repo.run_since(Method::GrepReadme, None, &base),
            "readme_contains_feature",
        );
        assert_eq!(value, MetricValue::Bool(true), "{detail}");
        assert_eq!(
            detail,
            "docs/usage.md (the lines added since main) documents the change (line 1)"
        );
    }
}
