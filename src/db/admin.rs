//! The database as a whole, for the commands that look after it (`migrate`,
//! `runs delete`): opening an existing one to change it, and its schema version.
use std::path::Path;

use super::{open, Connection, DbError, Mode};

/// The database at `path` for a command that changes an existing one: never
/// created (a missing one is the read commands' refusal), migrated if older.
pub fn open_existing(path: &Path) -> Result<Connection, DbError> {
    if !path.exists() {
        return Err(DbError::Missing {
            path: path.to_owned(),
        });
    }
    open(path, Mode::ReadWrite)
}

/// The schema version the database records (`PRAGMA user_version`); the
/// error is SQLite's, for the caller to word.
pub fn schema_version(conn: &Connection) -> Result<i64, rusqlite::Error> {
    conn.pragma_query_value(None, "user_version", |r| r.get(0))
}
