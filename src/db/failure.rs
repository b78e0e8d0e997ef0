//! What a failure of the storage itself means to the user: a full disk, a
//! read-only file or directory, a database held by another process, a file
//! that is no database. These are no bugs (exit 1) and no bad input (exit
//! 5): they exit [`Exit::Database`] with a sentence saying what to do.
use rusqlite::ErrorCode;

use super::DbError;
use crate::exit::Exit;

/// The SQLite error code beneath a database error, if any.
fn code(e: &DbError) -> Option<ErrorCode> {
    let source = match e {
        DbError::Open { source, .. }
        | DbError::Migration { source, .. }
        | DbError::Query { source, .. } => source,
        _ => return None,
    };
    source.sqlite_error_code()
}

/// What to do about a failure of the storage, when `e` is one.
pub fn advice(e: &DbError) -> Option<&'static str> {
    Some(match code(e)? {
        ErrorCode::DiskFull => {
            "the disk holding the database is full: free some space (or pass another --db) and run the command again"
        }
        ErrorCode::ReadOnly => {
            "the database cannot be written here: check the permissions of the file and of its directory, or pass another --db"
        }
        ErrorCode::CannotOpen | ErrorCode::PermissionDenied => {
            "the database file cannot be opened: check that its directory exists and is writable, or pass another --db"
        }
        ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked => {
            "another process holds the database: wait for it to finish and run the command again"
        }
        ErrorCode::NotADatabase | ErrorCode::DatabaseCorrupt => {
            "the file is not a stormlog database, or it is damaged: pass another --db"
        }
        ErrorCode::SystemIoFailure => {
            "the system could not read or write the database file (a disk or file system error): check the disk, then run the command again"
        }
        _ => return None,
    })
}

/// The exit status of a database error: [`Exit::Database`] for a failure
/// of the storage, [`Exit::Unexpected`] for anything else.
pub fn exit_of(e: &DbError) -> Exit {
    match advice(e) {
        Some(_) => Exit::Database,
        None => Exit::Unexpected,
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    /// A real SQLITE_FULL: the database may not grow past its pages.
    #[test]
    fn a_full_database_is_a_storage_failure() {
        let conn = rusqlite::Connection::open_in_memory().unwrap();
        conn.execute_batch("CREATE TABLE t (x BLOB); PRAGMA max_page_count = 2;")
            .unwrap();
        let err = conn
            .execute("INSERT INTO t VALUES (zeroblob(100000))", [])
            .unwrap_err();
        let e = DbError::Query {
            query: "t",
            source: err,
        };
        assert_eq!(exit_of(&e), Exit::Database);
        assert!(advice(&e).unwrap().contains("full"));
        assert_eq!(exit_of(&DbError::Other("x".into())), Exit::Unexpected);
    }
}
