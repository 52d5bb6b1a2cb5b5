//! What the README and CHANGELOG checks share: read a list of documents as the change left
//! them (whole, or only the lines added since a base), as a reader sees them (`visible.rs`),
//! and find either the PRP's feature (`feature.rs`) or, without a PRP, anything added at all.
//! Keeping the rule in one place keeps the two checks judging the same way.

use super::MethodContext;
use super::feature::{Feature, Finding, Reading};
use super::files::read_text;
use super::visible::visible_text;

/// At most this many near misses are shown in a detail.
const MAX_HINTS: usize = 3;

/// What the documents say about the change.
#[derive(Debug)]
pub(super) enum Judged {
    /// A document tells its reader about the PRP's feature.
    Mentions {
        name: String,
        line: usize,
        found: String,
    },
    /// Without a PRP (or with one that names nothing to look for), against a base: a document
    /// has a new line a reader sees.
    Added { name: String, line: usize },
    /// Nothing that counts; with the feature looked for, when there was a PRP, and what came
    /// close (`README.md line 5 only repeats the title`).
    Missing {
        feature: Option<Feature>,
        near_misses: Vec<String>,
    },
}

/// Judges `names` (paths relative to the repository, in order of preference) read as
/// `reading`; `judged` turns a file's name and text into what is read of it and the name
/// details use.
pub(super) fn judge(
    context: &MethodContext<'_>,
    names: &[String],
    reading: Reading,
    judged: impl Fn(String, String) -> (String, String),
) -> Judged {
    let code_names = context
        .base_docs
        .map(super::BaseDocs::code_names)
        .unwrap_or_default();
    let feature = context
        .prp
        .map(|prp| Feature::of(prp, code_names))
        // A PRP that names nothing to look for is judged, against a base, as a change without one.
        .filter(|feature| !feature.is_empty() || context.base_docs.is_none());
    let mut near_misses = Vec::new();
    for name in names {
        let Some(text) = read_text(&context.repo.join(name)) else {
            continue;
        };
        let (text, shown) = judged(name.clone(), text);
        let visible = visible_text(name, &text);
        match &feature {
            Some(feature) => match feature.find_in(&text, &visible, reading) {
                Finding::Found { line, found } => {
                    return Judged::Mentions {
                        name: shown,
                        line,
                        found,
                    };
                }
                Finding::NotFound { hints } => {
                    near_misses.extend(
                        hints
                            .into_iter()
                            .map(|(line, hint)| format!("{name} line {line} {hint}")),
                    );
                }
            },
            None => {
                if let Some(index) = visible.lines().position(|line| !line.trim().is_empty()) {
                    return Judged::Added {
                        name: shown,
                        line: index + 1,
                    };
                }
            }
        }
    }
    near_misses.truncate(MAX_HINTS);
    Judged::Missing {
        feature,
        near_misses,
    }
}

/// `; README.md line 5 only repeats the title; …`, or nothing.
pub(super) fn near_misses_text(near_misses: &[String]) -> String {
    if near_misses.is_empty() {
        String::new()
    } else {
        format!("; {}", near_misses.join("; "))
    }
}
