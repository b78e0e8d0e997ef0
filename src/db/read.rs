//! Opening a project database for a command that only reads it (`runs`,
//! `report`, `export`, `sql`, `compare --db`).
//!
//! Such a command never creates, migrates or reconfigures a file: a missing
//! path, a SQLite file that is not a stormlog database and a database from
//! another schema version are refused before anything is written, with the
//! status for invalid input. What is left is a stormlog database of this
//! version, read through a connection that cannot write (`query_only`).
//!
//! The connection is opened read-write without create on purpose: a
//! read-only SQLite connection to a WAL database leaves its `-wal` and `-shm`
//! files behind (it may not checkpoint), where the last ordinary connection
//! to close removes them. When the directory cannot be written (the `-shm`
//! file cannot be made), the database is read as immutable instead, which
//! needs no file beside it; that is only done when no `-wal` file holds
//! transactions a reader would otherwise miss.
use std::path::{Path, PathBuf};

use rusqlite::{Connection, OpenFlags};

use super::{DbError, SCHEMA_VERSION};

/// Opens the stormlog database at `path` for reading; see the module docs.
pub fn open_for_reading(path: &Path) -> Result<Connection, DbError> {
    if !path.exists() {
        return Err(DbError::Missing {
            path: path.to_owned(),
        });
    }
    let open_err = |source| DbError::Open {
        path: path.to_owned(),
        source,
    };
    let plain = OpenFlags::SQLITE_OPEN_READ_WRITE
        | OpenFlags::SQLITE_OPEN_NO_MUTEX
        | OpenFlags::SQLITE_OPEN_URI;
    let conn = match Connection::open_with_flags(path, plain).and_then(|c| {
        c.busy_timeout(super::BUSY_TIMEOUT)?;
        schema_version(&c).map(|v| (c, v))
    }) {
        Ok((conn, version)) => {
            check_version(path, &conn, version)?;
            conn
        }
        // The directory (or the file) cannot be written: the `-shm` file
        // cannot be made. An immutable reader needs none.
        Err(first) if cannot_write_beside(&first) && !wal_has_content(path) => {
            let conn = Connection::open_with_flags(immutable_uri(path), plain)
                .map_err(|_| refusal(path, first))?;
            let version = schema_version(&conn).map_err(|e| refusal(path, e))?;
            check_version(path, &conn, version)?;
            conn
        }
        Err(e) => return Err(refusal(path, e)),
    };
    conn.pragma_update(None, "query_only", true)
        .map_err(open_err)?;
    conn.busy_timeout(super::BUSY_TIMEOUT).map_err(open_err)?;
    super::functions::register(&conn).map_err(open_err)?;
    Ok(conn)
}

/// Why a file could not be opened: not a database at all, or SQLite's reason.
fn refusal(path: &Path, e: rusqlite::Error) -> DbError {
    match e.sqlite_error_code() {
        Some(rusqlite::ErrorCode::NotADatabase) => DbError::NotStormlog {
            path: path.to_owned(),
        },
        _ => DbError::Open {
            path: path.to_owned(),
            source: e,
        },
    }
}

/// `PRAGMA user_version`, read first: it also makes SQLite read the header,
/// so a file that is not a database fails here, before anything else.
fn schema_version(conn: &Connection) -> rusqlite::Result<i64> {
    conn.pragma_query_value(None, "user_version", |r| r.get(0))
}

fn check_version(path: &Path, conn: &Connection, version: i64) -> Result<(), DbError> {
    if version > SCHEMA_VERSION {
        return Err(DbError::TooNew {
            path: path.to_owned(),
            found: version,
        });
    }
    // Version 0 is a SQLite file that stormlog never migrated: another
    // program's database, or an empty file.
    let ours = version > 0
        && conn
            .query_row(
                "SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = 'runs'",
                [],
                |r| r.get::<_, i64>(0),
            )
            .unwrap_or(0)
            == 1;
    if !ours {
        return Err(DbError::NotStormlog {
            path: path.to_owned(),
        });
    }
    if version < SCHEMA_VERSION {
        return Err(DbError::Older {
            path: path.to_owned(),
            found: version,
        });
    }
    Ok(())
}

/// Whether SQLite failed for want of writing a file (the `-shm` file, in a
/// directory it cannot write), rather than for a lock or a broken file.
fn cannot_write_beside(e: &rusqlite::Error) -> bool {
    matches!(
        e.sqlite_error_code(),
        Some(rusqlite::ErrorCode::CannotOpen | rusqlite::ErrorCode::ReadOnly)
    )
}

/// Whether `path`'s `-wal` file exists with transactions in it.
fn wal_has_content(path: &Path) -> bool {
    let mut wal = path.as_os_str().to_owned();
    wal.push("-wal");
    std::fs::metadata(PathBuf::from(wal)).is_ok_and(|m| m.len() > 0)
}

/// `file:PATH?immutable=1`, with the characters a URI path cannot hold escaped.
fn immutable_uri(path: &Path) -> String {
    let mut uri = String::from("file:");
    for b in path.to_string_lossy().bytes() {
        match b {
            b'?' | b'#' | b'%' | 0x80.. => uri.push_str(&format!("%{b:02X}")),
            _ => uri.push(b as char),
        }
    }
    uri.push_str("?immutable=1");
    uri
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn a_uri_escapes_what_would_end_the_path() {
        assert_eq!(
            immutable_uri(Path::new("a?b#c%d.db")),
            "file:a%3Fb%23c%25d.db?immutable=1"
        );
    }
}
