//! The Markdown a PRP is read from, line by line: headings, list items, and the lines outside
//! fenced code blocks. People and agents write PRPs by hand, so these readers are lenient
//! (any heading level, `-`/`*`/`+`/numbered bullets, checkboxes) and never take example
//! Markdown inside a fence for structure.

use std::sync::LazyLock;

use regex::Regex;

/// A Markdown list item.
#[derive(Debug)]
pub(super) struct ListItem<'a> {
    pub(super) indent: usize,
    pub(super) checked: Option<bool>,
    pub(super) text: &'a str,
}

static HEADING: LazyLock<Regex> = LazyLock::new(|| regex(r"^ {0,3}(#{1,6})[ \t]+(.*?)[ \t#]*$"));
static LIST_ITEM: LazyLock<Regex> =
    LazyLock::new(|| regex(r"^(\s*)(?:[-*+]|\d+[.)])[ \t]+(?:\[([ xX])\][ \t]*)?(.*)$"));
static FENCE: LazyLock<Regex> = LazyLock::new(|| regex(r"^ {0,3}(`{3,}|~{3,})"));

/// Compiles one of this module's fixed patterns.
pub(super) fn regex(pattern: &str) -> Regex {
    Regex::new(pattern).expect("the PRP parser's patterns are valid regexes")
}

pub(super) fn heading(line: &str) -> Option<(usize, &str)> {
    let found = HEADING.captures(line)?;
    let level = found.get(1).map_or(0, |m| m.as_str().len());
    let text = found.get(2).map_or("", |m| m.as_str());
    Some((level, text))
}

pub(super) fn list_item(line: &str) -> Option<ListItem<'_>> {
    let found = LIST_ITEM.captures(line)?;
    let indent = found
        .get(1)
        .map_or(0, |m| m.as_str().replace('\t', "    ").len());
    let checked = found.get(2).map(|m| m.as_str() != " ");
    let text = found.get(3).map_or("", |m| m.as_str().trim());
    Some(ListItem {
        indent,
        checked,
        text,
    })
}

/// The lines outside fenced code blocks, with their 1-based numbers: what every reader of a
/// task list or PRP looks at, so example Markdown inside a fence is never taken as structure.
pub(crate) fn unfenced_lines(text: &str) -> Vec<(usize, &str)> {
    let mut lines = Vec::new();
    let mut open_fence: Option<String> = None;
    for (index, line) in text.lines().enumerate() {
        let fence = FENCE
            .captures(line)
            .and_then(|found| found.get(1))
            .map(|m| m.as_str());
        match (&open_fence, fence) {
            (None, Some(fence)) => open_fence = Some(fence.to_owned()),
            (Some(open), Some(fence))
                if fence.starts_with(&open[..1]) && fence.len() >= open.len() =>
            {
                open_fence = None;
            }
            (Some(_), _) => {}
            (None, None) => lines.push((index + 1, line)),
        }
    }
    lines
}
