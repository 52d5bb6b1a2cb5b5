//! Ranking questions within bounded work. bm25 costs a few microseconds for every entry it
//! scores, plus a fixed cost per query that grows with how many entries hold its words, and a
//! word such as "test", "error" or "limit" is in thousands of entries once the store holds
//! 100,000: ranking every entry that shares any word with QA's questions took 50 ms a question
//! on such a store (`benches/memory.rs`). Three rules keep a QA's questions to a few
//! milliseconds together:
//!
//! 1. QA's three text questions are asked in one ranked pass ([`Store::search_each`]): the
//!    words of all three, each question taking the best entries of its own kinds from the one
//!    ranking. (A patterns question's stack names then weigh in for bugs and decisions too: an
//!    entry of the same stack is the closer one anyway.)
//! 2. Each phrase's document count is taken first, capped (counting stops past
//!    [`SELECTIVE_ENTRIES`]); a phrase no entry holds is dropped (it changes no score). The
//!    entries that hold the rarest phrases — rarest first, while together they hold at most
//!    [`SELECTIVE_BUDGET`] entries — are all ranked, however old: an entry that shares a rarer
//!    word with the question is always a candidate.
//! 3. When that leaves a question short, the [`RECENT_WINDOW`] most recent entries that hold
//!    a selective phrase or one of the first [`COMMON_PHRASES`] common ones (in the question's
//!    order: stacks, then the PRP's title, then its goal) are ranked by bm25 over those
//!    phrases, and fill the rest. bm25 first counts every entry of every phrase it ranks with,
//!    so each common phrase costs in proportion to how common it is: four is the bound.
//!
//! What is given up: an old entry that shares only common words with the question, when more
//! than [`RECENT_WINDOW`] newer entries share them too, and the common words past the first
//! four. A finding of step 2 comes before one of step 3; each score is bm25's within its step.

use rusqlite::OptionalExtension as _;

use super::fts_query::{any_of, fts_query};
use super::{Row, Store, StoreError};
use crate::entry::EntryKind;
use crate::finding::Finding;

/// A phrase held by more entries than this is common: only its recent entries are ranked.
pub const SELECTIVE_ENTRIES: usize = 300;

/// The rarest phrases are ranked over all their entries while those number at most this.
pub const SELECTIVE_BUDGET: usize = 1_000;

/// How many of the most recent entries holding a common phrase are ranked.
pub const RECENT_WINDOW: usize = 200;

/// How many common phrases the recent entries are ranked with.
pub const COMMON_PHRASES: usize = 4;

/// One question of a pass: the kinds it wants (every kind when empty) and how many.
#[derive(Debug, Clone, Copy)]
pub struct Wanted<'a> {
    pub kinds: &'a [EntryKind],
    pub limit: usize,
}

impl Wanted<'_> {
    fn takes(&self, kind: &str) -> bool {
        self.kinds.is_empty() || self.kinds.iter().any(|wanted| wanted.as_str() == kind)
    }
}

impl Store {
    /// The entries of `kinds` (every kind when empty) that best match `text`, best first; none
    /// when `text` holds no word.
    pub fn search(
        &self,
        text: &str,
        kinds: &[EntryKind],
        limit: usize,
    ) -> Result<Vec<Finding>, StoreError> {
        let mut found = self.search_each(text, &[Wanted { kinds, limit }])?;
        Ok(found.pop().unwrap_or_default())
    }

    /// For each of `wanted`, the entries of its kinds that best match `text`, best first, from
    /// one ranked pass; empty lists when `text` holds no word.
    pub fn search_each(
        &self,
        text: &str,
        wanted: &[Wanted<'_>],
    ) -> Result<Vec<Vec<Finding>>, StoreError> {
        let mut chosen: Vec<Vec<(i64, f64)>> = vec![Vec::new(); wanted.len()];
        let Some(query) = fts_query(text) else {
            return Ok(vec![Vec::new(); wanted.len()]);
        };
        let mut counted = Vec::new();
        for phrase in &query.phrases {
            let count = self.entries_holding(phrase)?;
            if count > 0 {
                counted.push((count, phrase));
            }
        }
        let mut by_rarity: Vec<usize> = (0..counted.len()).collect();
        by_rarity.sort_by_key(|index| counted[*index].0);
        let mut is_selective = vec![false; counted.len()];
        let mut budget = SELECTIVE_BUDGET;
        for index in by_rarity {
            let count = counted[index].0;
            if count <= SELECTIVE_ENTRIES && count <= budget {
                budget -= count;
                is_selective[index] = true;
            }
        }
        let (selective, common): (Vec<_>, Vec<_>) = counted
            .iter()
            .zip(&is_selective)
            .partition(|(_, selective)| **selective);
        let selective: Vec<&String> = selective.iter().map(|((_, phrase), _)| *phrase).collect();
        let common: Vec<&String> = common
            .iter()
            .take(COMMON_PHRASES)
            .map(|((_, phrase), _)| *phrase)
            .collect();
        if !selective.is_empty() {
            let ranked = self.ranked(&any_of(&selective), None)?;
            self.fill(&mut chosen, wanted, ranked)?;
        }
        let short = chosen
            .iter()
            .zip(wanted)
            .any(|(found, want)| found.len() < want.limit);
        if short && !common.is_empty() {
            let every: Vec<&String> = selective.iter().chain(&common).copied().collect();
            let ranked = self.ranked(&any_of(&every), Some(RECENT_WINDOW))?;
            self.fill(&mut chosen, wanted, ranked)?;
        }
        chosen
            .into_iter()
            .map(|ids| {
                ids.into_iter()
                    .map(|(id, score)| {
                        let row = self.row(id, score)?;
                        self.finding(row, &query.words)
                    })
                    .collect()
            })
            .collect()
    }

    /// How many entries hold `phrase`, counted up to [`SELECTIVE_ENTRIES`] + 1.
    fn entries_holding(&self, phrase: &str) -> Result<usize, StoreError> {
        let failed = self.failed("count a word's entries");
        let mut statement = self
            .connection
            .prepare_cached(
                "SELECT COUNT(*) FROM (
                     SELECT rowid FROM entries_fts WHERE entries_fts MATCH ?1 LIMIT ?2
                 )",
            )
            .map_err(&failed)?;
        let cap = i64::try_from(SELECTIVE_ENTRIES + 1).unwrap_or(i64::MAX);
        let count: i64 = statement
            .query_row((phrase, cap), |row| row.get(0))
            .map_err(&failed)?;
        Ok(usize::try_from(count).unwrap_or_default())
    }

    /// The ids and scores of the entries that match `expression`, best first, among all of
    /// them or the `window` most recent ones. (Their kinds are read one by one afterwards, and
    /// only as far as needed: joined to the entries table in the same statement, SQLite 3.54
    /// ranked several times as many rows.)
    fn ranked(
        &self,
        expression: &str,
        window: Option<usize>,
    ) -> Result<Vec<(i64, f64)>, StoreError> {
        let failed = self.failed("search");
        let map = |row: &rusqlite::Row<'_>| Ok((row.get(0)?, -row.get::<_, f64>(1)?));
        let rows = match window {
            None => self
                .connection
                .prepare_cached(
                    "SELECT rowid, rank FROM entries_fts WHERE entries_fts MATCH ?1 ORDER BY rank",
                )
                .map_err(&failed)?
                .query_map([expression], map)
                .map_err(&failed)?
                .collect::<Result<Vec<_>, _>>(),
            Some(window) => self
                .connection
                .prepare_cached(
                    "SELECT id, score FROM (
                         SELECT rowid AS id, rank AS score FROM entries_fts
                         WHERE entries_fts MATCH ?1 ORDER BY rowid DESC LIMIT ?2
                     ) ORDER BY score",
                )
                .map_err(&failed)?
                .query_map((expression, i64::try_from(window).unwrap_or(i64::MAX)), map)
                .map_err(&failed)?
                .collect::<Result<Vec<_>, _>>(),
        };
        rows.map_err(&failed)
    }

    /// The kind of entry `id`.
    fn kind_of(&self, id: i64) -> Result<String, StoreError> {
        let failed = self.failed("read an entry's kind");
        self.connection
            .prepare_cached("SELECT kind FROM entries WHERE id = ?1")
            .map_err(&failed)?
            .query_row([id], |row| row.get(0))
            .map_err(&failed)
    }

    /// Appends `ranked`, best first, to each question that takes its kind and is still short,
    /// once per entry; stops reading kinds once no question is short.
    fn fill(
        &self,
        chosen: &mut [Vec<(i64, f64)>],
        wanted: &[Wanted<'_>],
        ranked: Vec<(i64, f64)>,
    ) -> Result<(), StoreError> {
        for (id, score) in ranked {
            let short = |chosen: &[Vec<(i64, f64)>]| {
                chosen
                    .iter()
                    .zip(wanted)
                    .any(|(found, want)| found.len() < want.limit)
            };
            if !short(chosen) {
                break;
            }
            let kind = self.kind_of(id)?;
            for (found, want) in chosen.iter_mut().zip(wanted) {
                if found.len() < want.limit
                    && want.takes(&kind)
                    && found.iter().all(|(chosen_id, _)| *chosen_id != id)
                {
                    found.push((id, score));
                }
            }
        }
        Ok(())
    }

    /// The entry `id`, with `score`.
    fn row(&self, id: i64, score: f64) -> Result<Row, StoreError> {
        let failed = self.failed("read an entry");
        let mut statement = self
            .connection
            .prepare_cached(
                "SELECT kind, run_id, title, body, created_at FROM entries WHERE id = ?1",
            )
            .map_err(&failed)?;
        statement
            .query_row([id], |row| {
                Ok(Row {
                    id,
                    kind: row.get(0)?,
                    run_id: row.get(1)?,
                    title: row.get(2)?,
                    body: row.get(3)?,
                    created_at: row.get(4)?,
                    score,
                })
            })
            .optional()
            .map_err(&failed)?
            .ok_or_else(|| failed(rusqlite::Error::QueryReturnedNoRows))
    }
}
