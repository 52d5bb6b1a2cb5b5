//! A PRP's title, from whichever format it is written in: the first `# ` heading, the PRPs
//! base template's `name:` header, a front matter's `title:`, a Gherkin `Feature:`, a first
//! heading that is not a section, or the file's stem.

use std::path::Path;
use std::sync::LazyLock;

use regex::Regex;

use super::gherkin::GHERKIN_FEATURE;
use super::markdown::{heading, regex};
use super::sections::Section;

/// The PRPs base template's header (`name: "…"`) or front matter's `title:`.
static NAME_HEADER: LazyLock<Regex> =
    LazyLock::new(|| regex(r#"^(?:name|title)[ \t]*:[ \t]*["']?(.+?)["']?[ \t]*$"#));

/// The title and its line: the first `# ` heading; else the base template's `name:` (or a
/// front matter's `title:`), a Gherkin `Feature:`, the first heading when it does not name a
/// section prpd reads (a GitHub issue starts with `## Summary`); else the file's stem.
pub(super) fn title(path: &Path, text: &str, lines: &[(usize, &str)]) -> (usize, String) {
    let clean = |title: &str| title.trim().trim_matches(['"', '\'']).trim().to_owned();
    let first_heading = |top_only: bool| {
        let (number, text) = lines.iter().find_map(|(number, line)| {
            heading(line)
                .filter(|(level, text)| !text.is_empty() && (!top_only || *level == 1))
                .map(|(_, text)| (*number, text))
        })?;
        (top_only || Section::from_heading(text).is_none()).then(|| (number, clean(text)))
    };
    let header = || {
        text.lines().enumerate().take(10).find_map(|(index, line)| {
            NAME_HEADER
                .captures(line)
                .or_else(|| GHERKIN_FEATURE.captures(line))
                .and_then(|found| found.get(1))
                .map(|m| (index + 1, clean(m.as_str())))
        })
    };
    first_heading(true)
        .or_else(header)
        .or_else(|| first_heading(false))
        .filter(|(_, title)| !title.is_empty())
        .unwrap_or_else(|| {
            let stem = path.file_stem().map_or_else(
                || "PRP".to_owned(),
                |stem| stem.to_string_lossy().into_owned(),
            );
            (1, stem)
        })
}
