//! User text turned into a safe FTS5 query. Text handed to `MATCH` is query syntax: a bare `-`,
//! `*`, `:`, `NEAR`, `AND` or an unbalanced `"` is an operator or a syntax error, not a word. So
//! each whitespace-separated piece becomes a quoted string (a `"` inside it doubled), which FTS5
//! reads as a phrase of the tokens the tokenizer finds in it (`"src/app.rs"` is the phrase
//! `src app rs`); a piece with no letter or digit has no token and is left out.
//!
//! The phrases are joined with OR, not AND: QA asks with a PRP's title and goal, and an earlier
//! REJECT that shares three of its ten words must still be found. bm25 then ranks an entry that
//! holds more of the words, and rarer ones, first (`search.rs` decides which phrases go into
//! which ranked query). Common English words are left out unless nothing else is left: they
//! match nearly every entry, cost time and rank nothing.

/// At most this many phrases; a question longer than that is a paragraph, not a search.
const MAX_TERMS: usize = 24;

/// Words too common to tell entries apart.
const STOP_WORDS: &[&str] = &[
    "a", "an", "and", "are", "as", "at", "be", "by", "for", "from", "has", "have", "in", "is",
    "it", "its", "of", "on", "or", "that", "the", "this", "to", "was", "were", "will", "with",
];

/// The phrases of a query, each safe for `MATCH`, and its words for excerpts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct FtsQuery {
    /// `"word"`, `"""quoted"""`, each one a phrase.
    pub(super) phrases: Vec<String>,
    /// The lowercase words of the phrases, to centre an excerpt on.
    pub(super) words: Vec<String>,
}

/// `phrases` OR-joined: `"word" OR "other"`.
pub(super) fn any_of(phrases: &[&String]) -> String {
    phrases
        .iter()
        .map(|phrase| phrase.as_str())
        .collect::<Vec<_>>()
        .join(" OR ")
}

/// The query for `text`; `None` when it holds no word (no `MATCH` then: nothing is found).
pub(super) fn fts_query(text: &str) -> Option<FtsQuery> {
    let pieces: Vec<&str> = text
        .split_whitespace()
        .filter(|piece| piece.chars().any(char::is_alphanumeric))
        .collect();
    let is_stop_word = |piece: &&str| STOP_WORDS.contains(&piece.to_lowercase().as_str());
    let meaningful: Vec<&str> = pieces
        .iter()
        .copied()
        .filter(|piece| !is_stop_word(piece))
        .collect();
    let chosen = if meaningful.is_empty() {
        pieces
    } else {
        meaningful
    };
    let mut seen: Vec<String> = Vec::new();
    let mut phrases = Vec::new();
    for piece in chosen {
        let lower = piece.to_lowercase();
        if seen.contains(&lower) {
            continue;
        }
        seen.push(lower);
        phrases.push(format!("\"{}\"", piece.replace('"', "\"\"")));
        if phrases.len() == MAX_TERMS {
            break;
        }
    }
    if phrases.is_empty() {
        return None;
    }
    let words = seen
        .iter()
        .flat_map(|piece| {
            piece
                .split(|character: char| !character.is_alphanumeric())
                .filter(|word| !word.is_empty())
                .map(str::to_owned)
                .collect::<Vec<_>>()
        })
        .collect();
    Some(FtsQuery { phrases, words })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_piece_is_quoted_and_the_pieces_are_or_joined() {
        let query = fts_query("failing  Tests").expect("words");
        assert_eq!(
            any_of(&query.phrases.iter().collect::<Vec<_>>()),
            "\"failing\" OR \"Tests\""
        );
        assert_eq!(query.words, vec!["failing".to_owned(), "tests".to_owned()]);
    }

    #[test]
    fn quotes_are_doubled_and_operators_become_words_or_go() {
        let query = fts_query("say \"hi\" NEAR a-b - * : col:x").expect("words");
        assert_eq!(
            query.phrases,
            [
                "\"say\"",
                "\"\"\"hi\"\"\"",
                "\"NEAR\"",
                "\"a-b\"",
                "\"col:x\""
            ]
        );
    }

    #[test]
    fn text_without_a_word_is_no_query() {
        assert_eq!(fts_query(""), None);
        assert_eq!(fts_query("  - * : \" ( ) "), None);
    }

    #[test]
    fn common_words_go_unless_nothing_else_is_left_and_repeats_go() {
        assert_eq!(
            fts_query("the timeout of THE Timeout")
                .expect("words")
                .phrases,
            ["\"timeout\""]
        );
        assert_eq!(
            fts_query("the of").expect("words").phrases,
            ["\"the\"", "\"of\""]
        );
    }

    #[test]
    fn a_long_text_is_cut_to_the_first_terms() {
        let text = (0..100)
            .map(|n| format!("w{n}"))
            .collect::<Vec<_>>()
            .join(" ");
        let query = fts_query(&text).expect("words");
        assert_eq!(query.phrases.len(), MAX_TERMS);
    }
}
