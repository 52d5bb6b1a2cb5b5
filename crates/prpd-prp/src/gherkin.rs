//! Gherkin scenarios in a PRP: a `Scenario:` (or `Scenario Outline:`, `Example:`) line is a
//! requirement whose id is its title, read inside fences marked `gherkin`, `feature` or
//! `cucumber`, and outside fences only in a document that has a `Feature:` line, so that prose
//! such as "Example: `multiply(2, 3)` returns 6" in an ordinary PRP is not taken for one.

use std::sync::LazyLock;

use regex::Regex;

use super::markdown::{self, regex};

static GHERKIN_SCENARIO: LazyLock<Regex> = LazyLock::new(|| {
    regex(
        r"^[ \t]*(?:Scenario Outline|Scenario Template|Scenario|Example)[ \t]*:[ \t]*(.+?)[ \t]*$",
    )
});
pub(super) static GHERKIN_FEATURE: LazyLock<Regex> =
    LazyLock::new(|| regex(r"^[ \t]*Feature[ \t]*:[ \t]*(.+?)[ \t]*$"));
/// Gherkin scenarios (see the module's doc): (line, title), ordered by line.
pub(super) fn scenarios(
    lines: &[(usize, &str)],
    fences: &[markdown::Fence<'_>],
) -> Vec<(usize, String)> {
    let has_feature = lines.iter().any(|(_, line)| GHERKIN_FEATURE.is_match(line));
    let unfenced = lines.iter().copied().filter(|_| has_feature);
    let gherkin_lines = fences
        .iter()
        .filter(|fence| matches!(fence.language.as_str(), "gherkin" | "feature" | "cucumber"))
        .flat_map(|fence| fence.lines.iter().copied());
    let mut found: Vec<(usize, String)> = unfenced
        .chain(gherkin_lines)
        .filter_map(|(number, line)| {
            let title = GHERKIN_SCENARIO.captures(line)?.get(1)?.as_str().to_owned();
            Some((number, title))
        })
        .collect();
    found.sort();
    found
}
