//! How a PRP's feature is recognised in prose. The README and CHANGELOG checks both ask
//! whether a document mentions the feature under QA, so the rule for what counts as a mention
//! (the title, or most of its distinctive words in one paragraph) lives here, once.

use crate::prp::Prp;

/// The words that identify a feature: its title, lowercased, and the title's key words.
#[derive(Debug)]
pub(super) struct Feature {
    /// The title without a leading `PRP:`, as written (for details).
    pub(super) title: String,
    /// The title in normalised form (lowercase words separated by single spaces).
    phrase: String,
    /// The title's distinctive words.
    pub(super) keywords: Vec<String>,
}

/// Words too common to identify a feature.
const STOP_WORDS: &[&str] = &[
    "the",
    "and",
    "for",
    "with",
    "from",
    "into",
    "add",
    "adds",
    "adding",
    "support",
    "feature",
    "implement",
    "implementation",
    "new",
    "prp",
    "use",
    "using",
    "via",
    "para",
    "com",
    "uma",
    "dos",
    "das",
    "que",
];

impl Feature {
    pub(super) fn of(prp: &Prp) -> Feature {
        let title = prp.title.trim();
        let title = title
            .strip_prefix("PRP:")
            .or_else(|| title.strip_prefix("prp:"))
            .unwrap_or(title)
            .trim()
            .to_owned();
        let phrase = normalise(&title);
        let mut keywords: Vec<String> = Vec::new();
        for word in phrase.split(' ') {
            if word.chars().count() >= 3
                && !STOP_WORDS.contains(&word)
                && !keywords.iter().any(|known| known == word)
            {
                keywords.push(word.to_owned());
            }
        }
        Feature {
            title,
            phrase,
            keywords,
        }
    }

    /// How many key words a paragraph must mention: all of one or two, about two thirds of more.
    fn keywords_needed(&self) -> usize {
        match self.keywords.len() {
            0..=2 => self.keywords.len(),
            count => (count * 2).div_ceil(3),
        }
    }

    /// Where `text` mentions the feature: the line and what was found.
    pub(super) fn find_in(&self, text: &str) -> Option<(usize, String)> {
        for (index, line) in text.lines().enumerate() {
            if !self.phrase.is_empty() && normalise(line).contains(&self.phrase) {
                return Some((index + 1, format!("\"{}\"", self.title)));
            }
        }
        if self.keywords.is_empty() {
            return None;
        }
        let needed = self.keywords_needed();
        paragraphs(text).into_iter().find_map(|paragraph| {
            let mentions =
                |keyword: &str, line: &str| line.split(' ').any(|word| word.starts_with(keyword));
            let mentioned: Vec<&str> = self
                .keywords
                .iter()
                .map(String::as_str)
                .filter(|keyword| paragraph.iter().any(|(_, line)| mentions(keyword, line)))
                .collect();
            if mentioned.len() < needed {
                return None;
            }
            let line = paragraph
                .iter()
                .find(|(_, line)| mentioned.iter().any(|keyword| mentions(keyword, line)))
                .map_or(0, |(number, _)| *number);
            Some((line, mentioned.join(", ")))
        })
    }
}

/// Lowercase words separated by single spaces; punctuation becomes a separator.
pub(super) fn normalise(text: &str) -> String {
    text.to_lowercase()
        .split(|character: char| !character.is_alphanumeric())
        .filter(|word| !word.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

/// Blocks of text separated by blank lines, as normalised lines with their 1-based numbers;
/// a heading belongs to the block that follows it.
fn paragraphs(text: &str) -> Vec<Vec<(usize, String)>> {
    let mut blocks = Vec::new();
    let mut current: Vec<(usize, String)> = Vec::new();
    let mut only_headings = true;
    for (index, line) in text.lines().enumerate() {
        let trimmed = line.trim();
        if trimmed.is_empty() {
            if !only_headings {
                blocks.push(std::mem::take(&mut current));
                only_headings = true;
            }
            continue;
        }
        current.push((index + 1, normalise(trimmed)));
        only_headings &= trimmed.starts_with('#');
    }
    if !current.is_empty() {
        blocks.push(current);
    }
    blocks
}
