//! What memory answers: [`Finding`]s, each with a score, when it was recorded, the run it came
//! from, its kind and a short excerpt; and [`Recall`], an answer that carries warnings instead
//! of failing. A memory that is slow, missing a tool or gone must never stop QA (DESIGN §6.1):
//! the caller gets what could be found and the reasons for what could not.

use serde::Serialize;

/// Longest excerpt a finding carries, in characters.
pub const EXCERPT_CHARS: usize = 240;

/// One thing memory recalled.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Finding {
    /// Higher is closer. The embedded store gives bm25's relevance (its negated rank), a
    /// file's history gives 1 for every exact match, an MCP server its own score (0 when it
    /// gives none): scores compare within one answer, not across backends.
    pub score: f64,
    /// When it was recorded, in Unix seconds, when known.
    pub created_at: Option<u64>,
    /// The run (or lesson, or conversation) it came from, when known.
    pub run_id: Option<String>,
    /// The entry kind (`reject`, `lesson`, …) for the embedded store; the tool that answered
    /// (`csr_reflect_on_past`) for an MCP server.
    pub kind: String,
    /// One line that says what it is.
    pub title: String,
    /// A short excerpt of the details, at most [`EXCERPT_CHARS`] characters.
    pub excerpt: String,
    /// The files it involved, when known.
    pub files: Vec<String>,
}

/// An answer and what went wrong while getting it.
#[derive(Debug, Clone, PartialEq)]
pub struct Recall<T> {
    pub value: T,
    /// One sentence each: what could not be asked or answered, and why.
    pub warnings: Vec<String>,
}

impl<T> Recall<T> {
    /// An answer without a warning.
    pub fn clean(value: T) -> Recall<T> {
        Recall {
            value,
            warnings: Vec::new(),
        }
    }

    /// A fallback answer with the warning that explains it.
    pub fn warned(value: T, warning: String) -> Recall<T> {
        Recall {
            value,
            warnings: vec![warning],
        }
    }
}

/// Why a question got no answer. A timeout is told apart because a memory that did not answer
/// once is not asked again in the same context (each further question would wait as long).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unanswered {
    /// It took longer than `[memory] timeout`; the sentence says what and how long.
    TimedOut(String),
    /// The backend cannot answer this at all (an MCP server without a tool for it, memory
    /// that is off or could not be opened): the configuration's to fix.
    NoTool(String),
    /// Anything else: a dead server, an error answer, a failed query.
    Failed(String),
}

impl Unanswered {
    /// The sentence for a warning.
    pub fn message(&self) -> &str {
        match self {
            Unanswered::TimedOut(message)
            | Unanswered::NoTool(message)
            | Unanswered::Failed(message) => message,
        }
    }
}

/// `error` and its sources, joined with `: ` (as `{:#}` shows an `anyhow` chain).
pub fn with_sources(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

/// At most [`EXCERPT_CHARS`] characters of `text` on one line, around the first word of
/// `terms` it holds (lowercase words), with `…` where it was cut.
pub fn excerpt(text: &str, terms: &[String]) -> String {
    let flat: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let chars: Vec<char> = flat.chars().collect();
    if chars.len() <= EXCERPT_CHARS {
        return flat;
    }
    let lower = flat.to_lowercase();
    let hit = terms
        .iter()
        .filter(|term| !term.is_empty())
        .filter_map(|term| lower.find(term.as_str()))
        .min()
        .map_or(0, |byte| lower[..byte].chars().count());
    // Lowercasing can change lengths; a hit past the text's end starts the window at its end.
    let start = hit
        .saturating_sub(EXCERPT_CHARS / 4)
        .min(chars.len() - EXCERPT_CHARS);
    let end = start + EXCERPT_CHARS;
    let mut window: String = chars[start..end].iter().collect();
    if start > 0 {
        window.insert(0, '…');
    }
    if end < chars.len() {
        window.push('…');
    }
    window
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_short_text_is_kept_whole_on_one_line() {
        assert_eq!(excerpt("a\n  b\tc", &[]), "a b c");
    }

    #[test]
    fn a_long_text_is_cut_around_the_first_term_it_holds() {
        let text = format!("{} needle here {}", "x ".repeat(300), "y ".repeat(300));
        let cut = excerpt(&text, &["needle".to_owned()]);
        assert!(cut.contains("needle here"), "{cut}");
        assert!(cut.starts_with('…') && cut.ends_with('…'), "{cut}");
        assert_eq!(cut.chars().count(), EXCERPT_CHARS + 2);
        let head = excerpt(&text, &["absent".to_owned()]);
        assert!(head.starts_with("x x") && head.ends_with('…'), "{head}");
    }
}
