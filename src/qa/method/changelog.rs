//! The `grep_changelog` method: a change users can notice belongs in the CHANGELOG, so this
//! check looks for the feature there, or without a PRP for any item under `Unreleased`.

use super::feature::Feature;
use super::files::{display, find_file, read_text};
use super::since_base::judged_text;
use super::{MethodContext, MethodOutcome, one_flag};

/// `changelog_has_entry`: CHANGELOG.md mentions the feature or lists an unreleased change.
pub(super) fn grep_changelog(context: &MethodContext<'_>) -> MethodOutcome {
    const METRIC: &str = "changelog_has_entry";
    let Some(path) = find_file(context.repo, |name| name == "changelog.md") else {
        return one_flag(
            METRIC,
            false,
            "no CHANGELOG.md at the repository root".to_owned(),
        );
    };
    let name = display(context.repo, &path);
    let Some(text) = read_text(&path) else {
        return one_flag(METRIC, false, format!("{name} could not be read as text"));
    };
    let (text, name) = judged_text(context.base_docs, name, text);
    if let Some(prp) = context.prp {
        // With a PRP the entry must be about the feature: an unrelated item that was already
        // under Unreleased says nothing about this work.
        let feature = Feature::of(prp);
        return match feature.find_in(&text) {
            Some((line, found)) => one_flag(
                METRIC,
                true,
                format!("{name} mentions {found} (line {line})"),
            ),
            None => one_flag(
                METRIC,
                false,
                format!("{name} has no entry mentioning \"{}\"", feature.title),
            ),
        };
    }
    if let Some(line) = unreleased_item(&text) {
        return one_flag(
            METRIC,
            true,
            format!("{name} has an entry under Unreleased (line {line})"),
        );
    }
    one_flag(
        METRIC,
        false,
        format!("{name} has no item under an Unreleased heading (no PRP was given)"),
    )
}

/// The line of the first list item inside an `Unreleased` section.
fn unreleased_item(text: &str) -> Option<usize> {
    let mut section_level: Option<usize> = None;
    for (index, line) in text.lines().enumerate() {
        let trimmed = line.trim_start();
        let level = trimmed
            .chars()
            .take_while(|character| *character == '#')
            .count();
        if level > 0 && trimmed[level..].starts_with(' ') {
            match section_level {
                Some(open) if level > open => {}
                Some(_) | None => {
                    section_level = trimmed
                        .to_lowercase()
                        .contains("unreleased")
                        .then_some(level);
                }
            }
            continue;
        }
        let is_item = ["- ", "* ", "+ "]
            .iter()
            .any(|bullet| trimmed.starts_with(bullet) && trimmed.len() > bullet.len());
        if section_level.is_some() && is_item {
            return Some(index + 1);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use crate::qa::method::Method;
    use crate::qa::method::tests::{Repo, figure, rate_limiter};
    use crate::qa::metrics::MetricValue;

    #[test]
    fn grep_changelog_accepts_the_feature_or_an_unreleased_item() {
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

        let unreleased = Repo::new();
        unreleased.file("CHANGELOG.md", "# Changelog\n\n## [Unreleased]\n\n### Added\n\n- Per-key quotas\n\n## [1.0.0]\n\n- First release\n");
        let (value, detail) = figure(
            &unreleased.run(Method::GrepChangelog, None),
            "changelog_has_entry",
        );
        assert_eq!(value, MetricValue::Bool(true));
        assert_eq!(
            detail,
            "CHANGELOG.md has an entry under Unreleased (line 7)"
        );

        // With a PRP, an unrelated item under Unreleased is not an entry for the feature.
        let (value, _) = figure(
            &unreleased.run(Method::GrepChangelog, Some(&prp)),
            "changelog_has_entry",
        );
        assert_eq!(value, MetricValue::Bool(false));
    }

    #[test]
    fn grep_changelog_fails_on_an_empty_unreleased_section_or_no_file() {
        let prp = rate_limiter();
        let repo = Repo::new();
        repo.file(
            "CHANGELOG.md",
            "# Changelog\n\n## [Unreleased]\n\n## [1.0.0]\n\n- First release\n",
        );
        let (value, detail) = figure(
            &repo.run(Method::GrepChangelog, Some(&prp)),
            "changelog_has_entry",
        );
        assert_eq!(value, MetricValue::Bool(false));
        assert_eq!(
            detail,
            "CHANGELOG.md has no entry mentioning \"Rate Limiter\""
        );
        let (value, detail) = figure(
            &Repo::new().run(Method::GrepChangelog, None),
            "changelog_has_entry",
        );
        assert_eq!(value, MetricValue::Bool(false));
        assert_eq!(detail, "no CHANGELOG.md at the repository root");
    }
}
