//! The `grep_readme` method: a feature is not done until the README tells users about it,
//! so this check looks for the PRP's feature in the README at the repository's root.

use std::path::Path;

use super::feature::Feature;
use super::files::{display, extension, find_file, read_text};
use super::since_base::judged_text;
use super::{MethodContext, MethodOutcome, one_flag};

/// `readme_contains_feature`: README*.md at the root mentions the PRP's feature.
pub(super) fn grep_readme(context: &MethodContext<'_>) -> MethodOutcome {
    const METRIC: &str = "readme_contains_feature";
    let Some(path) = find_file(context.repo, |name| {
        name.starts_with("readme") && extension(Path::new(name)) == "md"
    }) else {
        return one_flag(
            METRIC,
            false,
            "no README*.md at the repository root".to_owned(),
        );
    };
    let name = display(context.repo, &path);
    let Some(text) = read_text(&path) else {
        return one_flag(METRIC, false, format!("{name} could not be read as text"));
    };
    let (text, name) = judged_text(context.base_docs, name, text);
    let Some(prp) = context.prp else {
        let has_content = !text.trim().is_empty();
        let detail = if has_content {
            format!("{name} exists (no PRP was given, so the feature was not looked up)")
        } else {
            format!("{name} is empty")
        };
        return one_flag(METRIC, has_content, detail);
    };
    let feature = Feature::of(prp);
    match feature.find_in(&text) {
        Some((line, found)) => one_flag(
            METRIC,
            true,
            format!("{name} mentions {found} (line {line})"),
        ),
        None => one_flag(
            METRIC,
            false,
            format!(
                "{name} does not mention the feature \"{}\" (looked for the title or its key \
                 words: {})",
                feature.title,
                feature.keywords.join(", ")
            ),
        ),
    }
}

#[cfg(test)]
mod tests {
    use crate::qa::method::Method;
    use crate::qa::method::tests::{Repo, figure, rate_limiter};
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
            detail.contains("does not mention the feature \"Rate Limiter\""),
            "{detail}"
        );

        let (value, detail) = figure(
            &Repo::new().run(Method::GrepReadme, Some(&prp)),
            "readme_contains_feature",
        );
        assert_eq!(value, MetricValue::Bool(false));
        assert_eq!(detail, "no README*.md at the repository root");
    }

    #[test]
    fn grep_readme_without_a_prp_only_needs_a_readme() {
        let repo = Repo::new();
        repo.file("readme.md", "# app\n");
        let (value, detail) = figure(
            &repo.run(Method::GrepReadme, None),
            "readme_contains_feature",
        );
        assert_eq!(value, MetricValue::Bool(true));
        assert!(detail.contains("no PRP was given"), "{detail}");
        let empty = Repo::new();
        empty.file("README.md", "  \n");
        let (value, _) = figure(
            &empty.run(Method::GrepReadme, None),
            "readme_contains_feature",
        );
        assert_eq!(value, MetricValue::Bool(false));
    }
}
