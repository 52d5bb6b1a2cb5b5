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
    /// The number of an ordered item (`3.` or `3)`).
    pub(super) number: Option<u32>,
    pub(super) text: &'a str,
}

/// A fenced code block: its info string's first word (`bash`, `gherkin`; empty when none),
/// the line its opening fence is on, and its lines with their 1-based numbers.
#[derive(Debug)]
pub(super) struct Fence<'a> {
    pub(super) language: String,
    pub(super) opened_at: usize,
    pub(super) lines: Vec<(usize, &'a str)>,
}

static HEADING: LazyLock<Regex> = LazyLock::new(|| regex(r"^ {0,3}(#{1,6})[ \t]+(.*?)[ \t#]*$"));
static LIST_ITEM: LazyLock<Regex> =
    LazyLock::new(|| regex(r"^(\s*)(?:[-*+]|(\d+)[.)])[ \t]+(?:\[([ xX])\][ \t]*)?(.*)$"));
static FENCE: LazyLock<Regex> =
    LazyLock::new(|| regex(r"^ {0,3}(`{3,}|~{3,})[ \t]*([A-Za-z0-9_+-]*)"));

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
    let number = found.get(2).and_then(|m| m.as_str().parse().ok());
    let checked = found.get(3).map(|m| m.as_str() != " ");
    let text = found.get(4).map_or("", |m| m.as_str().trim());
    Some(ListItem {
        indent,
        checked,
        number,
        text,
    })
}

/// The lines outside fenced code blocks, with their 1-based numbers: what every reader of a
/// task list or PRP looks at, so example Markdown inside a fence is never taken as structure.
pub fn unfenced_lines(text: &str) -> Vec<(usize, &str)> {
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

/// The fenced code blocks of `text`, in order; a fence left open runs to the end.
pub(super) fn fences(text: &str) -> Vec<Fence<'_>> {
    let mut found: Vec<Fence<'_>> = Vec::new();
    let mut open: Option<(String, Fence<'_>)> = None;
    for (index, line) in text.lines().enumerate() {
        let marker = FENCE.captures(line);
        let fence = marker.as_ref().and_then(|m| m.get(1)).map(|m| m.as_str());
        match (open.take(), fence) {
            (None, Some(fence)) => {
                let language = marker
                    .as_ref()
                    .and_then(|m| m.get(2))
                    .map_or("", |m| m.as_str())
                    .to_ascii_lowercase();
                open = Some((
                    fence.to_owned(),
                    Fence {
                        language,
                        opened_at: index + 1,
                        lines: Vec::new(),
                    },
                ));
            }
            (Some((marker, block)), Some(fence))
                if fence.starts_with(&marker[..1]) && fence.len() >= marker.len() =>
            {
                found.push(block);
            }
            (Some((marker, mut block)), _) => {
                block.lines.push((index + 1, line));
                open = Some((marker, block));
            }
            (None, None) => {}
        }
    }
    found.extend(open.map(|(_, block)| block));
    found
}
