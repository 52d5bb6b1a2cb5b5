//! What a reader of a document sees. The documentation checks judge what the README, `docs/`
//! and the changelog tell a person, so text a rendered page hides (an HTML comment, a
//! reStructuredText or `AsciiDoc` comment, a link's target, an image, a link reference's URL, a
//! tag's attributes) is removed before they look for the feature: an agent that hides the
//! feature's names in a comment or a URL has documented nothing. The link text, code spans
//! and code blocks stay: a reader sees them. Every line keeps its place (hidden text becomes
//! spaces, never fewer lines), so line numbers in details stay right.

use std::sync::LazyLock;

use regex::Regex;

use super::regex;

/// `![alt](target)` (an image, alt text included) or `(target)` of a link.
static IMAGE_OR_LINK_TARGET: LazyLock<Regex> =
    LazyLock::new(|| regex(r"!\[[^\]\n]*\]\([^)\n]*\)|\]\([^)\n]*\)"));

/// A Markdown link reference definition: `[label]: https://… "title"`.
static LINK_REFERENCE: LazyLock<Regex> = LazyLock::new(|| regex(r"^\s{0,3}\[[^\]]+\]:\s*\S"));

/// An HTML tag with its attributes (`<img alt="…">`, `</a>`) or an autolink (`<https://…>`).
static TAG: LazyLock<Regex> = LazyLock::new(|| regex(r"</?[A-Za-z][^>\n]*>"));

/// The markup a document is written in, which decides what its comments look like.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Markup {
    /// Markdown, plain text and anything else: HTML comments and tags.
    Markdown,
    /// reStructuredText: `.. ` comments, `.. image::` and `.. _target:` lines too.
    RestructuredText,
    /// `AsciiDoc`: `//` comment lines and `////` comment blocks too.
    AsciiDoc,
}

impl Markup {
    fn of(name: &str) -> Markup {
        let extension = std::path::Path::new(name)
            .extension()
            .map(|extension| extension.to_string_lossy().to_lowercase())
            .unwrap_or_default();
        match extension.as_str() {
            "rst" => Markup::RestructuredText,
            "adoc" | "asciidoc" => Markup::AsciiDoc,
            _ => Markup::Markdown,
        }
    }
}

/// Whether `line` of a reStructuredText document is hidden: a comment (`.. text`, `..`), a
/// hyperlink target (`.. _name: url`) or an image or figure directive.
fn rst_hidden(line: &str) -> bool {
    let trimmed = line.trim_start();
    let Some(rest) = trimmed.strip_prefix("..") else {
        return false;
    };
    if !(rest.is_empty() || rest.starts_with(char::is_whitespace)) {
        return false;
    }
    let rest = rest.trim();
    rest.is_empty()
        || rest.starts_with('_')
        || rest.starts_with("image::")
        || rest.starts_with("figure::")
        || !(rest.contains("::") || rest.starts_with('[') || rest.starts_with('|'))
}

/// `text`, the document `name`, with everything a reader does not see replaced by spaces,
/// line for line.
pub(super) fn visible_text(name: &str, text: &str) -> String {
    let markup = Markup::of(name);
    let without_comments = blank_html_comments(text);
    let mut visible = String::with_capacity(without_comments.len());
    let mut in_asciidoc_comment = false;
    for line in without_comments.lines() {
        let trimmed = line.trim();
        if markup == Markup::AsciiDoc
            && trimmed.starts_with("////")
            && trimmed.chars().all(|character| character == '/')
        {
            in_asciidoc_comment = !in_asciidoc_comment;
            visible.push('\n');
            continue;
        }
        let hidden = match markup {
            Markup::Markdown => false,
            Markup::RestructuredText => rst_hidden(line),
            Markup::AsciiDoc => {
                in_asciidoc_comment || (trimmed.starts_with("//") && !trimmed.starts_with("///"))
            }
        } || LINK_REFERENCE.is_match(line);
        if !hidden {
            let line = IMAGE_OR_LINK_TARGET.replace_all(line, |found: &regex::Captures<'_>| {
                let whole = &found[0];
                if whole.starts_with('!') {
                    " ".repeat(whole.len())
                } else {
                    // Keep the `]` that closes the link text, hide the target.
                    format!("]{}", " ".repeat(whole.len() - 1))
                }
            });
            let line = TAG.replace_all(&line, |found: &regex::Captures<'_>| {
                " ".repeat(found[0].len())
            });
            visible.push_str(&line);
        }
        visible.push('\n');
    }
    visible
}

/// `text` with each `<!-- … -->` (over any number of lines) replaced by spaces, newlines kept.
fn blank_html_comments(text: &str) -> String {
    let mut result = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("<!--") {
        result.push_str(&rest[..start]);
        let after = &rest[start..];
        let end = after.find("-->").map_or(after.len(), |end| end + 3);
        result.extend(after[..end].chars().map(
            |character| {
                if character == '\n' { '\n' } else { ' ' }
            },
        ));
        rest = &after[end..];
    }
    result.push_str(rest);
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hidden_text_is_blanked_and_lines_stay_in_place() {
        for (text, seen) in [
            (
                "# calc\n<!-- `multiply(a, b)` -->\nSee [the guide](docs/multiply.md).\n",
                "# calc\n\nSee [the guide] .\n",
            ),
            ("<!--\nmultiply\n-->\nAdds.\n", "\n\n\nAdds.\n"),
            ("![multiply](img/multiply.png)\n", "\n"),
            ("[multiply]: https://example.com/multiply\n", "\n"),
            (
                "<img alt=\"multiply\" src=\"m.png\"> Product.\n",
                "Product.\n",
            ),
            (
                "`multiply(a, b)`: the product.\n",
                "`multiply(a, b)`: the product.\n",
            ),
            (
                "    >>> multiply(2, 3)\n    6\n",
                "    >>> multiply(2, 3)\n    6\n",
            ),
            (
                "// multiply(a, b) in a code block\n",
                "// multiply(a, b) in a code block\n",
            ),
        ] {
            check("README.md", text, seen);
        }
        check(
            "docs/usage.rst",
            ".. multiply is here\n..\n.. note:: multiply\n.. image:: multiply.png\n.. _multiply: https://x.org\nCall `multiply <https://x.org/multiply>`_.\n",
            "\n\n.. note:: multiply\n\n\nCall `multiply `_.\n",
        );
        check(
            "README.adoc",
            "// multiply\n////\nmultiply\n////\nText.\n",
            "\n\n\n\nText.\n",
        );
    }

    /// `text` of the document `name` shows `seen` (compared without runs of spaces).
    fn check(name: &str, text: &str, seen: &str) {
        let squeeze = |text: &str| -> Vec<String> {
            text.lines()
                .map(|line| line.split_whitespace().collect::<Vec<_>>().join(" "))
                .collect()
        };
        let visible = visible_text(name, text);
        assert_eq!(visible.lines().count(), text.lines().count(), "{text:?}");
        assert_eq!(squeeze(&visible), squeeze(seen), "{name}: {text:?}");
    }
}
