//! A prepared insert that binds borrowed text and blobs without copying them.
//!
//! rusqlite binds text as `SQLITE_TRANSIENT`, so SQLite copies every value
//! into memory of its own before the row is written. An ingest binds tens of
//! millions of values it already holds for the whole call; copying them was a
//! tenth of an analyze's CPU. [`Insert::run`] binds them as `SQLITE_STATIC`:
//! SQLite reads them in place during the one step that follows, and every
//! parameter is bound again before any later step, so no stale pointer is
//! ever read.
#![allow(unsafe_code)] // the one module that calls SQLite directly; each block says why it is sound

use std::ffi::{c_int, c_uint, CStr};
use std::marker::PhantomData;
use std::ptr;

use rusqlite::types::ValueRef;
use rusqlite::{ffi, Connection};

/// One prepared statement of a connection, run with borrowed values.
pub struct Insert<'c> {
    db: *mut ffi::sqlite3,
    stmt: *mut ffi::sqlite3_stmt,
    params: usize,
    _conn: PhantomData<&'c Connection>,
}

/// The connection's error for result code `rc`.
fn error(db: *mut ffi::sqlite3, rc: c_int) -> rusqlite::Error {
    // SAFETY: `db` is a live connection; sqlite3_errmsg returns a string it owns
    // until the next call on the connection, copied out here at once.
    let message = unsafe {
        let m = ffi::sqlite3_errmsg(db);
        (!m.is_null()).then(|| CStr::from_ptr(m).to_string_lossy().into_owned())
    };
    rusqlite::Error::SqliteFailure(ffi::Error::new(rc), message)
}

/// An error of ours, in the shape rusqlite's callers expect.
fn misuse(message: String) -> rusqlite::Error {
    rusqlite::Error::SqliteFailure(ffi::Error::new(ffi::SQLITE_MISUSE), Some(message))
}

impl<'c> Insert<'c> {
    /// Prepares `sql` (one statement) on `conn`.
    pub fn prepare(conn: &'c Connection, sql: &str) -> rusqlite::Result<Self> {
        let len = c_int::try_from(sql.len()).map_err(|_| misuse("statement too long".into()))?;
        // SAFETY: the handle is only used while `conn` is borrowed ('c), on the
        // thread that holds it (Connection is !Sync).
        let db = unsafe { conn.handle() };
        let mut stmt = ptr::null_mut();
        // SAFETY: `sql` is valid for `len` bytes; SQLite writes the new statement
        // (or null) to `stmt`.
        let rc = unsafe {
            ffi::sqlite3_prepare_v3(
                db,
                sql.as_ptr().cast(),
                len,
                ffi::SQLITE_PREPARE_PERSISTENT as c_uint,
                &mut stmt,
                ptr::null_mut(),
            )
        };
        if rc != ffi::SQLITE_OK {
            return Err(error(db, rc));
        }
        if stmt.is_null() {
            return Err(misuse("empty statement".into()));
        }
        // SAFETY: `stmt` was just prepared.
        let params = unsafe { ffi::sqlite3_bind_parameter_count(stmt) } as usize;
        Ok(Insert {
            db,
            stmt,
            params,
            _conn: PhantomData,
        })
    }

    /// Binds `values` to the parameters in order, runs the statement once and
    /// resets it. The number of values must equal the number of parameters.
    pub fn run<'v>(
        &mut self,
        values: impl IntoIterator<Item = ValueRef<'v>>,
    ) -> rusqlite::Result<()> {
        let mut n = 0;
        for v in values {
            n += 1;
            if n > self.params {
                break;
            }
            let i = n as c_int;
            // SAFETY: `stmt` is live and `i` is a parameter index. Text and blobs
            // are bound SQLITE_STATIC: they are read only by the step below,
            // while `values` still borrows them; a later step rebinds all
            // parameters first (the count is checked before stepping).
            let rc = unsafe {
                match v {
                    ValueRef::Null => ffi::sqlite3_bind_null(self.stmt, i),
                    ValueRef::Integer(x) => ffi::sqlite3_bind_int64(self.stmt, i, x),
                    ValueRef::Real(x) => ffi::sqlite3_bind_double(self.stmt, i, x),
                    ValueRef::Text(t) => ffi::sqlite3_bind_text64(
                        self.stmt,
                        i,
                        t.as_ptr().cast(),
                        t.len() as u64,
                        ffi::SQLITE_STATIC(),
                        ffi::SQLITE_UTF8 as u8,
                    ),
                    ValueRef::Blob(b) => ffi::sqlite3_bind_blob64(
                        self.stmt,
                        i,
                        b.as_ptr().cast(),
                        b.len() as u64,
                        ffi::SQLITE_STATIC(),
                    ),
                }
            };
            if rc != ffi::SQLITE_OK {
                return Err(error(self.db, rc));
            }
        }
        if n != self.params {
            return Err(misuse(format!("{n} values for {} parameters", self.params)));
        }
        // SAFETY: every parameter is bound to a value that outlives this call.
        let rc = unsafe { ffi::sqlite3_step(self.stmt) };
        // SAFETY: as above; reset keeps the bindings, which are never read again
        // before they are replaced.
        let reset = unsafe { ffi::sqlite3_reset(self.stmt) };
        match rc {
            ffi::SQLITE_DONE => Ok(()),
            ffi::SQLITE_ROW => Err(misuse("an insert returned a row".into())),
            _ => Err(error(
                self.db,
                if reset != ffi::SQLITE_OK { reset } else { rc },
            )),
        }
    }
}

impl Drop for Insert<'_> {
    fn drop(&mut self) {
        // SAFETY: `stmt` came from sqlite3_prepare_v3 and is finalized once.
        unsafe {
            ffi::sqlite3_finalize(self.stmt);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn binds_each_kind_and_checks_the_count() {
        let conn = Connection::open_in_memory().expect("open");
        conn.execute_batch("CREATE TABLE t (a, b, c, d, e)")
            .expect("create");
        let mut ins =
            Insert::prepare(&conn, "INSERT INTO t VALUES (?, ?, ?, ?, ?)").expect("prepare");
        for k in 0..3 {
            let text = format!("row {k}");
            let blob = vec![k as u8; 3];
            let values = [
                ValueRef::Null,
                ValueRef::Integer(k),
                ValueRef::Real(k as f64 / 2.0),
                ValueRef::Text(text.as_bytes()),
                ValueRef::Blob(&blob),
            ];
            ins.run(values).expect("insert");
        }
        let too_few = ins.run([ValueRef::Null]);
        assert!(too_few.is_err(), "{too_few:?}");
        let too_many = ins.run([ValueRef::Null; 6]);
        assert!(too_many.is_err(), "{too_many:?}");
        type Row = (Option<i64>, i64, f64, String, Vec<u8>);
        let rows: Vec<Row> = conn
            .prepare("SELECT a, b, c, d, e FROM t ORDER BY b")
            .expect("select")
            .query_map([], |r| {
                Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?))
            })
            .expect("query")
            .collect::<Result<_, _>>()
            .expect("rows");
        assert_eq!(rows.len(), 3);
        assert_eq!(rows[2], (None, 2, 1.0, "row 2".to_owned(), vec![2, 2, 2]));
    }

    #[test]
    fn a_constraint_failure_is_reported_and_the_statement_stays_usable() {
        let conn = Connection::open_in_memory().expect("open");
        conn.execute_batch("CREATE TABLE t (a INTEGER PRIMARY KEY)")
            .expect("create");
        let mut ins = Insert::prepare(&conn, "INSERT INTO t VALUES (?)").expect("prepare");
        ins.run([ValueRef::Integer(1)]).expect("first");
        let dup = ins.run([ValueRef::Integer(1)]).expect_err("duplicate key");
        assert!(dup.to_string().contains("UNIQUE"), "{dup}");
        ins.run([ValueRef::Integer(2)]).expect("after the failure");
        let n: i64 = conn
            .query_row("SELECT count(*) FROM t", [], |r| r.get(0))
            .expect("count");
        assert_eq!(n, 2);
    }
}
