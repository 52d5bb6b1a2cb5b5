//! The store's schema and its migrations. `PRAGMA user_version` holds the version; opening a
//! store brings an older file up to [`CURRENT`] one step at a time, inside one write
//! transaction, and refuses a file from a newer prpd rather than guess at its tables.
//!
//! Version 1: the entries, with their files in a newline-separated column, and the full-text
//! index over title, body and stacks (`porter unicode61`: "failing" finds "failed"; bm25
//! weighs a title word 4, a stack 2 and a body word 1). Version 2: a file's history is an exact
//! lookup, so the files move to a table of their own with an index, and entries get an index
//! by kind and time.

use std::path::Path;

use rusqlite::{Connection, Transaction, TransactionBehavior};

use super::StoreError;

/// The schema version this prpd writes.
pub const CURRENT: u32 = 2;

/// Brings the store at `path` to [`CURRENT`]; returns the version it found.
pub(super) fn migrate(connection: &mut Connection, path: &Path) -> Result<u32, StoreError> {
    let found = version(connection, path)?;
    if found > CURRENT {
        return Err(StoreError::NewerSchema {
            path: path.to_path_buf(),
            found,
            supported: CURRENT,
        });
    }
    if found == CURRENT {
        return Ok(found);
    }
    let migrate_error = |source| StoreError::Migrate {
        path: path.to_path_buf(),
        from: found,
        to: CURRENT,
        source,
    };
    let transaction = connection
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(migrate_error)?;
    // Another prpd may have migrated between the first read and the write lock.
    let locked: u32 = transaction
        .query_row("PRAGMA user_version", [], |row| row.get(0))
        .map_err(migrate_error)?;
    if locked < CURRENT {
        upgrade(&transaction, locked, CURRENT).map_err(migrate_error)?;
    }
    transaction.commit().map_err(migrate_error)?;
    Ok(found)
}

/// The file's schema version (0: a new, empty file).
pub(super) fn version(connection: &Connection, path: &Path) -> Result<u32, StoreError> {
    connection
        .query_row("PRAGMA user_version", [], |row| row.get(0))
        .map_err(|source| StoreError::open(path, source))
}

/// Applies the steps after `from` up to `to` and records `to`.
pub(super) fn upgrade(
    transaction: &Transaction<'_>,
    from: u32,
    to: u32,
) -> Result<(), rusqlite::Error> {
    for step in from + 1..=to {
        match step {
            1 => version_1(transaction)?,
            2 => version_2(transaction)?,
            _ => {}
        }
    }
    transaction.pragma_update(None, "user_version", to)
}

fn version_1(transaction: &Transaction<'_>) -> Result<(), rusqlite::Error> {
    transaction.execute_batch(
        "CREATE TABLE entries (
             id INTEGER PRIMARY KEY,
             kind TEXT NOT NULL,
             run_id TEXT NOT NULL,
             title TEXT NOT NULL,
             body TEXT NOT NULL,
             stacks TEXT NOT NULL,
             files TEXT NOT NULL,
             created_at INTEGER NOT NULL
         );
         CREATE VIRTUAL TABLE entries_fts USING fts5(
             title, body, stacks,
             content = 'entries', content_rowid = 'id',
             tokenize = 'porter unicode61'
         );
         INSERT INTO entries_fts(entries_fts, rank) VALUES ('rank', 'bm25(4.0, 1.0, 2.0)');",
    )
}

fn version_2(transaction: &Transaction<'_>) -> Result<(), rusqlite::Error> {
    transaction.execute_batch(
        "CREATE TABLE entry_files (
             path TEXT NOT NULL,
             entry_id INTEGER NOT NULL REFERENCES entries(id) ON DELETE CASCADE,
             PRIMARY KEY (path, entry_id)
         ) WITHOUT ROWID;
         CREATE INDEX entry_files_by_entry ON entry_files(entry_id);
         CREATE INDEX entries_by_kind ON entries(kind, created_at);",
    )?;
    let mut rows = Vec::new();
    {
        let mut select = transaction.prepare("SELECT id, files FROM entries")?;
        let mut cursor = select.query([])?;
        while let Some(row) = cursor.next()? {
            rows.push((row.get::<_, i64>(0)?, row.get::<_, String>(1)?));
        }
    }
    let mut insert = transaction
        .prepare("INSERT OR IGNORE INTO entry_files (path, entry_id) VALUES (?1, ?2)")?;
    for (id, files) in rows {
        for file in files.lines().filter(|file| !file.trim().is_empty()) {
            insert.execute((file.trim(), id))?;
        }
    }
    transaction.execute_batch("ALTER TABLE entries DROP COLUMN files;")
}
