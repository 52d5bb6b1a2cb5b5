//! The `grep_readme` method: a feature is not done until the documentation tells users about
//! it, so this check looks for the change in the README at the repository's root and in the
//! documents under `docs/` or `doc/` (Markdown, reStructuredText, Asciidoc or plain text). What
//! counts as documenting the feature (its names, in text a reader sees, with something said
//! about them) is `feature.rs`'s rule.

use super::documents::{documents, is_changelog_document, is_readme};
use super::feature::Reading;
use super::files::display;
use super::since_base::judged_text;
use super::written::{Judged, judge, near_misses_text};
use super::{MethodContext, MethodOutcome, one_flag};

/// `readme_contains_feature`: the README (or a document under `docs/`) documents the PRP's
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
    let mut described = describe(readmes.len(), docs.len(), &names[0]);
    if let Some(base) = context.base_docs {
        described = format!("{described} (the lines added {})", base.since());
    }
    match judge(context, &names, Reading::Documentation, |name, text| {
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
            near_misses,
        } => one_flag(
            METRIC,
            false,
            format!(
                "{described} does not document the feature \"{}\": looked for {}{}",
                feature.title,
                feature.looked_for(Reading::Documentation),
                near_misses_text(&near_misses)
            ),
        ),
        Judged::Missing { feature: None, .. } => one_flag(
            METRIC,
            false,
            format!("{described}: nothing a reader sees was added"),
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

    use crate::method::tests::{MULTIPLICATION, Repo, figure, prp, rate_limiter};
    use crate::method::{BaseDocs, Method};
    use crate::metrics::MetricValue;

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
        assert_eq!(
            detail,
            "README.md does not document the feature \"Rate Limiter\": looked for the title \
             \"Rate Limiter\" or its key words (rate, limiter, or words of the same stem) in a \
             paragraph a reader sees that says more than the title (no name of the feature is \
             known: none is backticked in the PRP, and none was seen added to the code)"
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
        assert_eq!(
            detail,
            "README.adoc (the lines added since main): nothing a reader sees was added"
        );
        repo.file("README.adoc", "= app\n\nOld text.\n\n// a comment only\n");
        let (value, detail) = figure(
            &repo.run_since(Method::GrepReadme, None, &base),
            "readme_contains_feature",
        );
        assert_eq!(value, MetricValue::Bool(false), "{detail}");
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

    /// The README of the calculator the PRPs below change.
    const CALC_README: &str =
        "# calc\n\nSmall number helpers.\n\n- `add(a, b)`: the sum of two numbers.\n";

    /// A Gherkin feature's title; the PRP backticks nothing.
    const GHERKIN: &str = "# Feature: Multiplying two numbers\n\n## Acceptance Criteria\n\n- [ ] AC-1 Scenario: the product of two numbers is returned\n";

    /// A spec-kit title; no name anywhere.
    const SPEC_KIT: &str = "# Feature Specification: Multiplication\n\n## Success Criteria\n\n- [ ] SC-001 users can get the product of two numbers\n";

    /// A PRP that names nothing; the code the change added names `clamp`.
    const CLAMP: &str =
        "# Clamp values\n\n## Success Criteria\n\n- [ ] values outside the range are clamped\n";

    #[test]
    #[expect(clippy::too_many_lines, reason = "one table, a row per case")]
    fn the_lines_added_must_document_the_feature_by_its_names() {
        let since = "README.md (the lines added since the run started)";
        for (case, prp_text, code, added, passes, detail) in [
            (
                "an honest section on `multiply(a, b)` for a title that says multiplication",
                MULTIPLICATION,
                &[][..],
                "\n## Multiplication\n\n- `multiply(a, b)`: the product of two numbers.\n",
                true,
                format!("{since} mentions `multiply` (line 9)"),
            ),
            (
                "the function named in prose, with an example of its own",
                MULTIPLICATION,
                &[],
                "\n## Multiply\n\n    >>> multiply(2, 3)\n    6\n",
                true,
                format!("{since} mentions `multiply` (line 7)"),
            ),
            (
                "a Gherkin title and the name the change added to the code",
                GHERKIN,
                &[("multiply", "calc.py")],
                "\n### multiply\n\nReturns the product of its two arguments.\n",
                true,
                format!("{since} mentions `multiply` (line 7)"),
            ),
            (
                "a Go function the change exported",
                CLAMP,
                &[("Clamp", "numkit.go")],
                "\nUse `numkit.Clamp(v, lo, hi)` to keep a value inside a range.\n",
                true,
                format!("{since} mentions `Clamp` (line 7)"),
            ),
            (
                "a spec-kit title without names: the title's stem and something said",
                SPEC_KIT,
                &[],
                "\n## Multiply\n\nThe calculator gives the product of two numbers.\n",
                true,
                format!("{since} mentions multiplication (line 7)"),
            ),
            (
                "the title stuffed in as a sentence, when the feature has names",
                MULTIPLICATION,
                &[],
                "\nMultiplication in the calculator.\n",
                false,
                format!(
                    "{since} does not document the feature \"Multiplication in the calculator\": \
                     looked for one of the feature's names (`multiply` from the PRP) in a \
                     paragraph a reader sees that says more than the names and the title; \
                     README.md line 7 has the title's words but none of the feature's names"
                ),
            ),
            (
                "the title and the name, nothing more",
                MULTIPLICATION,
                &[],
                "\nMultiplication in the calculator: `multiply`.\n",
                false,
                format!(
                    "{since} does not document the feature \"Multiplication in the calculator\": \
                     looked for one of the feature's names (`multiply` from the PRP) in a \
                     paragraph a reader sees that says more than the names and the title; \
                     README.md line 7 names `multiply` but says nothing more about it"
                ),
            ),
            (
                "the Gherkin title stuffed in when the code names `multiply`",
                GHERKIN,
                &[("multiply", "calc.py")],
                "\nMultiplying two numbers: the product of two numbers is returned.\n",
                false,
                format!(
                    "{since} does not document the feature \"Multiplying two numbers\": looked \
                     for one of the feature's names (`multiply` (calc.py) added to the code) in \
                     a paragraph a reader sees that says more than the names and the title; \
                     README.md line 7 has the title's words but none of the feature's names"
                ),
            ),
            (
                "the names only in an HTML comment",
                MULTIPLICATION,
                &[],
                "\n<!-- `multiply(a, b)`: multiplies two numbers -->\n",
                false,
                format!(
                    "{since} does not document the feature \"Multiplication in the calculator\": \
                     looked for one of the feature's names (`multiply` from the PRP) in a \
                     paragraph a reader sees that says more than the names and the title; \
                     README.md line 7 names `multiply` only where a reader does not see it (a \
                     comment, a link target or an image)"
                ),
            ),
            (
                "the name only in a link target",
                MULTIPLICATION,
                &[],
                "\nSee [the guide](docs/multiply.md) for more.\n",
                false,
                format!(
                    "{since} does not document the feature \"Multiplication in the calculator\": \
                     looked for one of the feature's names (`multiply` from the PRP) in a \
                     paragraph a reader sees that says more than the names and the title; \
                     README.md line 7 names `multiply` only where a reader does not see it (a \
                     comment, a link target or an image)"
                ),
            ),
            (
                "the name only in an image's alt text",
                MULTIPLICATION,
                &[],
                "\n![multiply two numbers](img/product.png)\n",
                false,
                format!(
                    "{since} does not document the feature \"Multiplication in the calculator\": \
                     looked for one of the feature's names (`multiply` from the PRP) in a \
                     paragraph a reader sees that says more than the names and the title; \
                     README.md line 7 names `multiply` only where a reader does not see it (a \
                     comment, a link target or an image)"
                ),
            ),
            (
                "a spec-kit title repeated alone",
                SPEC_KIT,
                &[],
                "\n## Multiplication\n",
                false,
                format!(
                    "{since} does not document the feature \"Multiplication\": looked for the \
                     title \"Multiplication\" or its key words (multiplication, or words of the \
                     same stem) in a paragraph a reader sees that says more than the title (no \
                     name of the feature is known: none is backticked in the PRP, and none was \
                     seen added to the code); README.md line 7 only repeats the title"
                ),
            ),
        ] {
            let repo = Repo::new();
            repo.file("README.md", &format!("{CALC_README}{added}"));
            let base = BaseDocs::new(
                "the run started",
                BTreeMap::from([("README.md".to_owned(), CALC_README.to_owned())]),
            )
            .with_code_names(code.iter().copied());
            let (value, shown) = figure(
                &repo.run_since(Method::GrepReadme, Some(&prp(prp_text)), &base),
                "readme_contains_feature",
            );
            assert_eq!(value, MetricValue::Bool(passes), "{case}: {shown}");
            assert_eq!(shown, detail, "{case}");
        }
    }

    #[test]
    fn names_that_were_already_documented_do_not_count() {
        let readme = format!("{CALC_README}\n- `multiply(a, b)`: the product of two numbers.\n");
        let repo = Repo::new();
        repo.file(
            "README.md",
            &format!("{readme}\nMultiplication in the calculator.\n"),
        );
        let base = BaseDocs::new(
            "the run started",
            BTreeMap::from([("README.md".to_owned(), readme)]),
        );
        let (value, detail) = figure(
            &repo.run_since(Method::GrepReadme, Some(&prp(MULTIPLICATION)), &base),
            "readme_contains_feature",
        );
        assert_eq!(value, MetricValue::Bool(false), "{detail}");
    }

    #[test]
    fn a_prp_that_names_nothing_to_look_for_is_judged_on_what_was_added() {
        // A Kiro requirements document: a generic title, criteria without backticks.
        let kiro = prp(
            "# Requirements Document\n\n## Acceptance Criteria\n\n- [ ] AC-1 WHEN two numbers are given THEN the system SHALL return their product\n",
        );
        let repo = Repo::new();
        repo.file(
            "README.md",
            &format!("{CALC_README}\nThe product of two numbers, too.\n"),
        );
        let base = BaseDocs::new(
            "the run started",
            BTreeMap::from([("README.md".to_owned(), CALC_README.to_owned())]),
        );
        let (value, detail) = figure(
            &repo.run_since(Method::GrepReadme, Some(&kiro), &base),
            "readme_contains_feature",
        );
        assert_eq!(value, MetricValue::Bool(true), "{detail}");
        assert_eq!(
            detail,
            "README.md (the lines added since the run started) documents the change (line 7)"
        );
        let (value, detail) = figure(
            &repo.run(Method::GrepReadme, Some(&kiro)),
            "readme_contains_feature",
        );
        assert_eq!(value, MetricValue::Bool(false), "{detail}");
        assert!(
            detail.ends_with(
                "(the PRP backticks no name and its title has no key word; against a base, \
                 `--base REF`, any documentation added counts)"
            ),
            "{detail}"
        );
    }
}
