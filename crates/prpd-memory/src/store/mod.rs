//! The embedded memory store: SQLite in `.prp-session/memory.db`, compiled into prpd (no server,
//! no network). Entries sit in a plain table, a full-text index (FTS5, `porter unicode61`,
//! bm25) ranks them against a question, and a table of files answers a file's history exactly.
//!
//! Theory of operation. The file is in WAL mode with a busy timeout, so `prpd memory search`
//! reads while a run writes: a reader sees the last committed state without waiting, and a
//! second writer waits for the first (up to [`BUSY_TIMEOUT`]) instead of failing with
//! `database is locked`. Every write is one `BEGIN IMMEDIATE` transaction. A question is ranked
//! within bounded work ([`search`]). A `Connection` is not `Sync`: one [`Store`] has one owner
//! at a time (the async [`super::embedded`] keeps it behind a mutex and asks from a blocking
//! thread, and stops a slow question through [`Store::interrupt_handle`]). User text reaches
//! `MATCH` only through `fts_query.rs`, which quotes it.

mod fts_query;
pub mod schema;
pub mod search;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::{Connection, ErrorCode, InterruptHandle, TransactionBehavior};
use serde::Serialize;

use crate::entry::{Entry, EntryKind, normalize_file};
use crate::finding::{Finding, excerpt};

/// How long a writer waits for another writer's transaction before it gives up.
pub const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

/// The embedded store could not be opened, read or written.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The file could not be opened as a SQLite database.
    #[error("failed to open the memory store {}", path.display())]
    Open {
        path: PathBuf,
        #[source]
        source: rusqlite::Error,
    },
    /// The file is not a SQLite database.
    #[error("{} is not a SQLite database; move it away and prpd starts an empty memory there", path.display())]
    NotADatabase { path: PathBuf },
    /// The file was written by a newer prpd.
    #[error(
        "{} has memory schema version {found}, newer than this prpd reads (up to {supported}); upgrade prpd, or move the file away to start an empty memory",
        path.display()
    )]
    NewerSchema {
        path: PathBuf,
        found: u32,
        supported: u32,
    },
    /// An older file could not be brought up to date.
    #[error("failed to migrate the memory store {} from schema version {from} to {to}", path.display())]
    Migrate {
        path: PathBuf,
        from: u32,
        to: u32,
        #[source]
        source: rusqlite::Error,
    },
    /// A read or a write failed (or was interrupted because it took too long).
    #[error("failed to {action} in the memory store {}", path.display())]
    Query {
        path: PathBuf,
        action: &'static str,
        #[source]
        source: rusqlite::Error,
    },
}

impl StoreError {
    fn open(path: &Path, source: rusqlite::Error) -> StoreError {
        if source.sqlite_error_code() == Some(ErrorCode::NotADatabase) {
            return StoreError::NotADatabase {
                path: path.to_path_buf(),
            };
        }
        StoreError::Open {
            path: path.to_path_buf(),
            source,
        }
    }

    /// Whether the user can fix it by moving a file (a file that is not a store, or one from a
    /// newer prpd), as opposed to prpd failing.
    pub fn is_users_to_fix(&self) -> bool {
        match self {
            StoreError::NotADatabase { .. } | StoreError::NewerSchema { .. } => true,
            StoreError::Open { .. } | StoreError::Migrate { .. } | StoreError::Query { .. } => {
                false
            }
        }
    }
}

/// What `prpd memory stats` shows of the embedded store.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct StoreStats {
    pub path: PathBuf,
    pub schema_version: u32,
    /// The database file with its write-ahead log and shared-memory index, in bytes.
    pub size_bytes: u64,
    pub entries: u64,
    /// Entries per kind; every kind is listed, 0 included.
    pub per_kind: BTreeMap<EntryKind, u64>,
}

/// An open embedded store.
#[derive(Debug)]
pub struct Store {
    connection: Connection,
    path: PathBuf,
}

impl Store {
    /// Opens (or creates) the store at `path` and brings its schema up to date. Its directory
    /// must exist.
    pub fn open(path: &Path) -> Result<Store, StoreError> {
        let mut connection =
            Connection::open(path).map_err(|source| StoreError::open(path, source))?;
        connection
            .busy_timeout(BUSY_TIMEOUT)
            .map_err(|source| StoreError::open(path, source))?;
        connection
            .pragma_update_and_check(None, "journal_mode", "WAL", |row| row.get::<_, String>(0))
            .map_err(|source| StoreError::open(path, source))?;
        for (pragma, value) in [("synchronous", "NORMAL"), ("foreign_keys", "ON")] {
            connection
                .pragma_update(None, pragma, value)
                .map_err(|source| StoreError::open(path, source))?;
        }
        schema::migrate(&mut connection, path)?;
        Ok(Store {
            connection,
            path: path.to_path_buf(),
        })
    }

    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// A handle that stops the question running on this store (from another thread): it
    /// then fails as interrupted.
    pub fn interrupt_handle(&self) -> InterruptHandle {
        self.connection.get_interrupt_handle()
    }

    fn failed(&self, action: &'static str) -> impl Fn(rusqlite::Error) -> StoreError + '_ {
        move |source| StoreError::Query {
            path: self.path.clone(),
            action,
            source,
        }
    }

    /// Records `entry`; returns its id.
    pub fn record(&mut self, entry: &Entry) -> Result<i64, StoreError> {
        let ids = self.record_all(std::slice::from_ref(entry))?;
        Ok(ids.first().copied().unwrap_or_default())
    }

    /// Records `entries` in one transaction; returns their ids in order.
    pub fn record_all(&mut self, entries: &[Entry]) -> Result<Vec<i64>, StoreError> {
        let path = self.path.clone();
        let failed = |source| StoreError::Query {
            path: path.clone(),
            action: "record an entry",
            source,
        };
        let transaction = self
            .connection
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(failed)?;
        let mut ids = Vec::with_capacity(entries.len());
        {
            let mut insert_entry = transaction
                .prepare_cached(
                    "INSERT INTO entries (kind, run_id, title, body, stacks, created_at)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                )
                .map_err(failed)?;
            let mut insert_text = transaction
                .prepare_cached(
                    "INSERT INTO entries_fts (rowid, title, body, stacks) VALUES (?1, ?2, ?3, ?4)",
                )
                .map_err(failed)?;
            let mut insert_file = transaction
                .prepare_cached(
                    "INSERT OR IGNORE INTO entry_files (path, entry_id) VALUES (?1, ?2)",
                )
                .map_err(failed)?;
            for entry in entries {
                let stacks = entry.stacks.join(" ");
                let created_at = i64::try_from(entry.created_at).unwrap_or(i64::MAX);
                insert_entry
                    .execute((
                        entry.kind.as_str(),
                        &entry.run_id,
                        &entry.title,
                        &entry.body,
                        &stacks,
                        created_at,
                    ))
                    .map_err(failed)?;
                let id = transaction.last_insert_rowid();
                insert_text
                    .execute((id, &entry.title, &entry.body, &stacks))
                    .map_err(failed)?;
                for file in &entry.files {
                    let file = normalize_file(file);
                    if !file.is_empty() {
                        insert_file.execute((file, id)).map_err(failed)?;
                    }
                }
                ids.push(id);
            }
        }
        transaction.commit().map_err(failed)?;
        Ok(ids)
    }

    /// Every entry that involved `file` (exactly that path), newest first.
    pub fn file_history(&self, file: &str, limit: usize) -> Result<Vec<Finding>, StoreError> {
        let failed = self.failed("read a file's history");
        let mut statement = self
            .connection
            .prepare_cached(
                "SELECT e.id, e.kind, e.run_id, e.title, e.body, e.created_at
                 FROM entry_files f JOIN entries e ON e.id = f.entry_id
                 WHERE f.path = ?1
                 ORDER BY e.created_at DESC, e.id DESC LIMIT ?2",
            )
            .map_err(&failed)?;
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let rows = statement
            .query_map((normalize_file(file), limit), |row| {
                Ok(Row {
                    id: row.get(0)?,
                    kind: row.get(1)?,
                    run_id: row.get(2)?,
                    title: row.get(3)?,
                    body: row.get(4)?,
                    created_at: row.get(5)?,
                    score: 1.0,
                })
            })
            .map_err(&failed)?
            .collect::<Result<Vec<_>, _>>()
            .map_err(&failed)?;
        rows.into_iter().map(|row| self.finding(row, &[])).collect()
    }

    fn finding(&self, row: Row, words: &[String]) -> Result<Finding, StoreError> {
        let failed = self.failed("read an entry's files");
        let mut statement = self
            .connection
            .prepare_cached("SELECT path FROM entry_files WHERE entry_id = ?1 ORDER BY path")
            .map_err(&failed)?;
        let files = statement
            .query_map([row.id], |file| file.get::<_, String>(0))
            .map_err(&failed)?
            .collect::<Result<Vec<_>, _>>()
            .map_err(&failed)?;
        Ok(Finding {
            score: row.score,
            created_at: u64::try_from(row.created_at).ok(),
            run_id: Some(row.run_id),
            kind: row.kind,
            title: row.title,
            excerpt: excerpt(&row.body, words),
            files,
        })
    }

    /// Counts per kind, the size on disk and the schema version.
    pub fn stats(&self) -> Result<StoreStats, StoreError> {
        let failed = self.failed("count the entries");
        let mut per_kind: BTreeMap<EntryKind, u64> =
            EntryKind::ALL.into_iter().map(|kind| (kind, 0)).collect();
        let mut statement = self
            .connection
            .prepare_cached("SELECT kind, COUNT(*) FROM entries GROUP BY kind")
            .map_err(&failed)?;
        let counts = statement
            .query_map([], |row| {
                Ok((row.get::<_, String>(0)?, row.get::<_, i64>(1)?))
            })
            .map_err(&failed)?
            .collect::<Result<Vec<_>, _>>()
            .map_err(&failed)?;
        for (kind, count) in counts {
            if let Some(kind) = EntryKind::from_name(&kind) {
                per_kind.insert(kind, u64::try_from(count).unwrap_or_default());
            }
        }
        let size_bytes = ["", "-wal", "-shm"]
            .iter()
            .filter_map(|suffix| {
                let mut name = self.path.as_os_str().to_owned();
                name.push(suffix);
                std::fs::metadata(PathBuf::from(name)).ok()
            })
            .map(|metadata| metadata.len())
            .sum();
        Ok(StoreStats {
            path: self.path.clone(),
            schema_version: schema::version(&self.connection, &self.path)?,
            size_bytes,
            entries: per_kind.values().sum(),
            per_kind,
        })
    }
}

/// One entry as a query reads it.
struct Row {
    id: i64,
    kind: String,
    run_id: String,
    title: String,
    body: String,
    created_at: i64,
    score: f64,
}

#[cfg(test)]
mod tests;
