//! What the README and CHANGELOG checks share: read a list of documents as the change left
//! them (whole, or only the lines added since a base) and find either the PRP's feature or,
//! without a PRP, anything added at all. Keeping the rule in one place keeps the two checks
//! judging the same way.

use super::MethodContext;
use super::feature::Feature;
use super::files::read_text;

/// What the documents say about the change.
#[derive(Debug)]
pub(super) enum Judged {
    /// A document mentions the PRP's feature.
    Mentions {
        name: String,
        line: usize,
        found: String,
    },
    /// Without a PRP, against a base: a document has a new non-blank line.
    Added { name: String, line: usize },
    /// Nothing that counts; with the feature looked for, when there was a PRP.
    Missing { feature: Option<Feature> },
}

/// Judges `names` (paths relative to the repository, in order of preference); `judged` turns a
/// file's name and text into what is read of it and the name details use.
pub(super) fn judge(
    context: &MethodContext<'_>,
    names: &[String],
    judged: impl Fn(String, String) -> (String, String),
) -> Judged {
    let feature = context.prp.map(Feature::of);
    for name in names {
        let Some(text) = read_text(&context.repo.join(name)) else {
            continue;
        };
        let (text, shown) = judged(name.clone(), text);
        match &feature {
            Some(feature) => {
                if let Some((line, found)) = feature.find_in(&text) {
                    return Judged::Mentions {
                        name: shown,
                        line,
                        found,
                    };
                }
            }
            None => {
                if let Some(index) = text.lines().position(|line| !line.trim().is_empty()) {
                    return Judged::Added {
                        name: shown,
                        line: index + 1,
                    };
                }
            }
        }
    }
    Judged::Missing { feature }
}
