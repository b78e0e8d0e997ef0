//! Prepared statements for the two hot loops, calling SQLite directly.
//!
//! [`Insert`] binds borrowed text and blobs without copying them. rusqlite
//! binds text as `SQLITE_TRANSIENT`, so SQLite copies every value into memory
//! of its own before the row is written. An ingest binds tens of millions of
//! values it already holds for the whole call; copying them was a tenth of an
//! analyze's CPU. [`Insert::run`] binds them as `SQLITE_STATIC`: SQLite reads
//! them in place during the one step that follows, and every parameter is
//! bound again before any later step, or holds a value of its own (below), so
//! no stale pointer is ever read.
//!
//! A parameter that already holds the value of the next run is left bound
//! (SQLite keeps bindings across a reset): request rows repeat many of
//! theirs (status, model, endpoint, token counts, nulls), and a bind call
//! costs about as much as SQLite's own work on the value. Short text is
//! bound from a copy the [`Insert`] keeps, so that the next row's equal text
//! can be recognized and left as it is.
//!
//! [`Select`] reads rows with one type check and one typed read per value.
//! rusqlite's `get_ref` also checks the column count and wraps each value on
//! the way; a report reads millions of values.
#![allow(unsafe_code)] // the one module that calls SQLite directly; each block says why it is sound

use std::ffi::{c_int, c_uint, CStr};
use std::marker::PhantomData;
use std::ptr;

use rusqlite::types::ValueRef;
use rusqlite::{ffi, Connection};

/// A prepared statement, finalized when dropped; the handle of its
/// connection comes along for error messages.
struct Statement {
    db: *mut ffi::sqlite3,
    stmt: *mut ffi::sqlite3_stmt,
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

impl Statement {
    /// Prepares `sql` (one statement) on `conn`. The callers keep `conn`
    /// borrowed for the statement's life.
    fn prepare(conn: &Connection, sql: &str) -> rusqlite::Result<Self> {
        let len = c_int::try_from(sql.len()).map_err(|_| misuse("statement too long".into()))?;
        // SAFETY: the handle is only used while `conn` is borrowed, on the
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
        Ok(Statement { db, stmt })
    }

    fn params(&self) -> usize {
        // SAFETY: `stmt` is live.
        unsafe { ffi::sqlite3_bind_parameter_count(self.stmt) as usize }
    }

    /// Binds `v` to parameter `i` (from 1). Text and blobs are copied by
    /// SQLite when `copy` is set.
    ///
    /// # Safety
    /// Unless `copy` is set, the bytes of a text or blob must stay valid
    /// until the statement has been stepped for the last time with this
    /// binding (every parameter is bound again before any later step).
    #[inline(always)] // on the ingest's hot path: 57 binds per request row
    unsafe fn bind(&self, i: c_int, v: ValueRef<'_>, copy: bool) -> rusqlite::Result<()> {
        let keep = || {
            if copy {
                ffi::SQLITE_TRANSIENT()
            } else {
                ffi::SQLITE_STATIC()
            }
        };
        // SAFETY: `stmt` is live; SQLite checks `i`; the bytes' life is the
        // caller's promise above (or SQLite copies them).
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
                    keep(),
                    ffi::SQLITE_UTF8 as u8,
                ),
                ValueRef::Blob(b) => ffi::sqlite3_bind_blob64(
                    self.stmt,
                    i,
                    b.as_ptr().cast(),
                    b.len() as u64,
                    keep(),
                ),
            }
        };
        if rc != ffi::SQLITE_OK {
            return Err(error(self.db, rc));
        }
        Ok(())
    }
}

impl Drop for Statement {
    fn drop(&mut self) {
        // SAFETY: `stmt` came from sqlite3_prepare_v3 and is finalized once;
        // nothing borrowed from it (rows) outlives its owner.
        unsafe {
            ffi::sqlite3_finalize(self.stmt);
        }
    }
}

/// One prepared statement of a connection, run with borrowed values.
pub struct Insert<'c> {
    /// Declared first, so it is finalized before the texts it may point
    /// into are freed.
    st: Statement,
    params: usize,
    /// What each parameter holds from the last run, where a later run can
    /// reuse it.
    bound: Vec<Bound>,
    /// Per parameter: the text it is bound to when `bound` says `Text`.
    texts: Vec<Vec<u8>>,
    _conn: PhantomData<&'c Connection>,
}

/// A parameter's binding as far as a later run can reuse it.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Bound {
    /// Nothing reusable: never bound, or bound to borrowed text or a blob.
    Other,
    Null,
    Integer(i64),
    /// The bits of the real (so that a NaN or -0.0 is reused only as itself).
    Real(u64),
    /// The insert's own copy of a text (`Insert::texts`).
    Text,
}

/// Text up to this long is bound from a kept copy (field values, ids);
/// longer text (JSON, messages) rarely repeats and is bound where it is.
const KEPT_TEXT: usize = 64;

impl<'c> Insert<'c> {
    /// Prepares `sql` (one statement) on `conn`.
    pub fn prepare(conn: &'c Connection, sql: &str) -> rusqlite::Result<Self> {
        let st = Statement::prepare(conn, sql)?;
        let params = st.params();
        Ok(Insert {
            params,
            bound: vec![Bound::Other; params],
            texts: vec![Vec::new(); params],
            st,
            _conn: PhantomData,
        })
    }

    /// Binds `values` to the parameters in order, runs the statement once and
    /// resets it. The number of values must equal the number of parameters.
    pub fn run<'v>(
        &mut self,
        values: impl IntoIterator<Item = ValueRef<'v>>,
    ) -> rusqlite::Result<()> {
        self.run_with(|b| values.into_iter().for_each(|v| b.push(v)))
    }

    /// Runs the statement once with the parameters `fill` binds, in order,
    /// and resets it. The number of values must equal the number of
    /// parameters. Binding value by value costs less than walking an
    /// iterator of many chained parts (the rows of a multi-row insert).
    pub fn run_with<'v>(&mut self, fill: impl FnOnce(&mut Binder<'_, 'v>)) -> rusqlite::Result<()> {
        let mut b = Binder {
            st: &self.st,
            bound: &mut self.bound,
            texts: &mut self.texts,
            n: 0,
            failed: None,
            _values: PhantomData,
        };
        fill(&mut b);
        let (n, failed) = (b.n, b.failed);
        if let Some(e) = failed {
            return Err(e);
        }
        if n != self.params {
            return Err(misuse(format!("{n} values for {} parameters", self.params)));
        }
        let stmt = self.st.stmt;
        // SAFETY: every parameter is bound to a value that outlives this call
        // ('v outlives it) or to a kept text (see Binder::push).
        let rc = unsafe { ffi::sqlite3_step(stmt) };
        // SAFETY: as above; reset keeps the bindings, which are never read again
        // before they are replaced.
        let reset = unsafe { ffi::sqlite3_reset(stmt) };
        match rc {
            ffi::SQLITE_DONE => Ok(()),
            ffi::SQLITE_ROW => Err(misuse("an insert returned a row".into())),
            _ => Err(error(
                self.st.db,
                if reset != ffi::SQLITE_OK { reset } else { rc },
            )),
        }
    }
}

/// The parameters of one run of an [`Insert`], bound in order by
/// [`Binder::push`]. Values borrowed for `'v` are bound in place and read by
/// the step that ends the run, which `'v` outlives.
pub struct Binder<'i, 'v> {
    st: &'i Statement,
    bound: &'i mut [Bound],
    texts: &'i mut [Vec<u8>],
    /// Values pushed so far (also past the parameters, to report the count).
    n: usize,
    failed: Option<rusqlite::Error>,
    _values: PhantomData<ValueRef<'v>>,
}

impl<'v> Binder<'_, 'v> {
    /// Binds the next parameter to `v` (nothing after a failed bind: the run
    /// reports that failure).
    #[inline]
    pub fn push(&mut self, v: ValueRef<'v>) {
        let i = self.n;
        self.n += 1;
        if self.failed.is_some() {
            return;
        }
        let (Some(bound), Some(kept)) = (self.bound.get_mut(i), self.texts.get_mut(i)) else {
            return; // more values than parameters: the run says so
        };
        let now = match v {
            ValueRef::Null => Bound::Null,
            ValueRef::Integer(i) => Bound::Integer(i),
            ValueRef::Real(f) => Bound::Real(f.to_bits()),
            ValueRef::Text(t) if t.len() <= KEPT_TEXT => {
                if *bound == Bound::Text && kept.as_slice() == t {
                    return; // already bound to this very text
                }
                Bound::Text
            }
            ValueRef::Text(_) | ValueRef::Blob(_) => Bound::Other,
        };
        if now == *bound && now != Bound::Other && now != Bound::Text {
            return; // already holds this very value
        }
        // Whatever happens below, the parameter must be bound again before
        // a later step unless the binding succeeds.
        *bound = Bound::Other;
        let v = match (now, v) {
            (Bound::Text, ValueRef::Text(t)) => {
                kept.clear();
                kept.extend_from_slice(t);
                ValueRef::Text(kept.as_slice())
            }
            (_, v) => v,
        };
        // SAFETY: bound in place (not copied). Borrowed values are read only
        // by the step that ends this run, which 'v outlives, and are bound
        // again before any later step (`bound` never marks them reusable). A
        // kept text lives in the insert's `texts`, which is changed only
        // here, right before the parameter is bound to the new bytes, and is
        // freed after the statement is finalized. The run checks the count
        // before stepping.
        match unsafe { self.st.bind((i + 1) as c_int, v, false) } {
            Ok(()) => *bound = now,
            Err(e) => self.failed = Some(e),
        }
    }
}

/// A prepared query, read row by row.
pub struct Select<'c> {
    st: Statement,
    columns: usize,
    _conn: PhantomData<&'c Connection>,
}

/// The current row of a [`Select`]; its values live until the next step.
pub struct Row<'s> {
    stmt: *mut ffi::sqlite3_stmt,
    columns: usize,
    _select: PhantomData<&'s mut ()>,
}

impl<'c> Select<'c> {
    /// Prepares `sql` (one statement) on `conn` and binds `params` by name
    /// (`:name`); every parameter of the statement must be given.
    pub fn prepare(
        conn: &'c Connection,
        sql: &str,
        params: &[(&str, ValueRef<'_>)],
    ) -> rusqlite::Result<Self> {
        let st = Statement::prepare(conn, sql)?;
        let wanted = st.params();
        if wanted != params.len() {
            return Err(misuse(format!(
                "{} values for {wanted} parameters",
                params.len()
            )));
        }
        for (name, v) in params {
            let cname = std::ffi::CString::new(*name)
                .map_err(|_| misuse(format!("bad parameter name {name}")))?;
            // SAFETY: `stmt` is live and `cname` a NUL-terminated string.
            let i = unsafe { ffi::sqlite3_bind_parameter_index(st.stmt, cname.as_ptr()) };
            if i == 0 {
                return Err(misuse(format!("no parameter {name}")));
            }
            // SAFETY: copied by SQLite, so `v` need not outlive this call.
            unsafe { st.bind(i, *v, true)? };
        }
        Ok(Select {
            // SAFETY: `stmt` is live.
            columns: unsafe { ffi::sqlite3_column_count(st.stmt) } as usize,
            st,
            _conn: PhantomData,
        })
    }

    /// How many columns each row has.
    pub fn columns(&self) -> usize {
        self.columns
    }

    /// Steps to the next row (None after the last one).
    pub fn step(&mut self) -> rusqlite::Result<Option<Row<'_>>> {
        // SAFETY: `stmt` is live with every parameter bound.
        match unsafe { ffi::sqlite3_step(self.st.stmt) } {
            ffi::SQLITE_ROW => Ok(Some(Row {
                stmt: self.st.stmt,
                columns: self.columns,
                _select: PhantomData,
            })),
            ffi::SQLITE_DONE => Ok(None),
            rc => Err(error(self.st.db, rc)),
        }
    }
}

impl Row<'_> {
    /// Column `i` (from 0); null past the last column.
    pub fn get(&self, i: usize) -> ValueRef<'_> {
        if i >= self.columns {
            return ValueRef::Null;
        }
        // SAFETY: the statement is on a row (it was just stepped, and the row
        // borrows the statement, so no other step can happen) and `i` is one
        // of its columns. The value is the row's own: it is read only here,
        // by the thread that holds the connection (the "unprotected" values
        // of sqlite3_column_value are unsafe only under concurrent use). Each
        // sqlite3_column_* call would check the statement again; reading the
        // value once halves the calls. Text and blob pointers stay valid
        // until the next step, which the borrow rules out while the returned
        // value lives; the length is read after the pointer, as SQLite asks.
        unsafe {
            let v = ffi::sqlite3_column_value(self.stmt, i as c_int);
            match ffi::sqlite3_value_type(v) {
                ffi::SQLITE_INTEGER => ValueRef::Integer(ffi::sqlite3_value_int64(v)),
                ffi::SQLITE_FLOAT => ValueRef::Real(ffi::sqlite3_value_double(v)),
                ffi::SQLITE_TEXT => {
                    // UTF-8 text is read as the bytes it is: sqlite3_value_text
                    // would first copy each value to add a terminating NUL.
                    // Other encodings (a UTF-16 database) are converted.
                    let p = if ffi::sqlite3_value_encoding(v) == ffi::SQLITE_UTF8 {
                        ffi::sqlite3_value_blob(v).cast()
                    } else {
                        ffi::sqlite3_value_text(v)
                    };
                    let n = ffi::sqlite3_value_bytes(v) as usize;
                    if p.is_null() {
                        ValueRef::Text(&[])
                    } else {
                        ValueRef::Text(std::slice::from_raw_parts(p, n))
                    }
                }
                ffi::SQLITE_BLOB => {
                    let p = ffi::sqlite3_value_blob(v);
                    let n = ffi::sqlite3_value_bytes(v) as usize;
                    if p.is_null() {
                        ValueRef::Blob(&[])
                    } else {
                        ValueRef::Blob(std::slice::from_raw_parts(p.cast(), n))
                    }
                }
                _ => ValueRef::Null,
            }
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

    /// A parameter left bound because it already holds the next value gives
    /// the same rows as binding every value: through every change of kind,
    /// equal integers and reals of different types, -0.0 and 0.0, short
    /// text from buffers freed after each run, long text and blobs.
    #[test]
    fn values_left_bound_store_the_same_rows_as_values_bound_again() {
        use rusqlite::types::Value as V;
        let long = "l".repeat(KEPT_TEXT + 1);
        let column: Vec<V> = vec![
            V::Null,
            V::Null,
            V::Integer(1),
            V::Integer(1),
            V::Real(1.0),
            V::Real(1.0),
            V::Integer(1),
            V::Real(-0.0),
            V::Real(0.0),
            V::Text("x".into()),
            V::Text("x".into()),
            V::Text("y".into()),
            V::Null,
            V::Text("y".into()),
            V::Text(long.clone()),
            V::Text(long.clone()),
            V::Text("y".into()),
            V::Blob(vec![1, 2]),
            V::Blob(vec![1, 2]),
            V::Text("".into()),
            V::Text("".into()),
            V::Integer(7),
        ];
        let conn = Connection::open_in_memory().expect("open");
        conn.execute_batch("CREATE TABLE t (k, a, b)")
            .expect("create");
        let mut ins = Insert::prepare(&conn, "INSERT INTO t VALUES (?, ?, ?)").expect("prepare");
        for (k, v) in column.iter().enumerate() {
            // Fresh copies each run, dropped right after it: a kept text
            // must not point into them.
            let owned = v.clone();
            let other = column[column.len() - 1 - k].clone();
            ins.run([
                ValueRef::Integer(k as i64),
                ValueRef::from(&owned),
                ValueRef::from(&other),
            ])
            .expect("insert");
            drop((owned, other));
        }
        let rows: Vec<(V, V)> = conn
            .prepare("SELECT a, b FROM t ORDER BY k")
            .expect("select")
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
            .expect("query")
            .collect::<Result<_, _>>()
            .expect("rows");
        let want: Vec<(V, V)> = column
            .iter()
            .cloned()
            .zip(column.iter().rev().cloned())
            .collect();
        assert_eq!(rows, want);
        // -0.0 came back as itself, not as the 1.0 or 0.0 around it.
        let signs: Vec<bool> = conn
            .prepare("SELECT a FROM t WHERE typeof(a) = 'real' ORDER BY k")
            .expect("select")
            .query_map([], |r| r.get::<_, f64>(0).map(f64::is_sign_negative))
            .expect("query")
            .collect::<Result<_, _>>()
            .expect("rows");
        assert_eq!(signs, [false, false, true, false]);
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

    #[test]
    fn select_reads_each_kind_by_named_parameters() {
        let conn = Connection::open_in_memory().expect("open");
        conn.execute_batch(
            "CREATE TABLE t (k, a, b, c, d, e);
             INSERT INTO t VALUES (1, NULL, 7, 0.5, 'text é', x'0102');
             INSERT INTO t VALUES (2, -1, 2.0, '', x'', NULL);
             INSERT INTO t VALUES (3, 0, 0, 0, 0, 0);",
        )
        .expect("create");
        let sql = "SELECT a, b, c, d, e FROM t WHERE k >= :lo AND k < :hi ORDER BY k";
        let params = [(":lo", ValueRef::Integer(1)), (":hi", ValueRef::Integer(3))];
        let mut sel = Select::prepare(&conn, sql, &params).expect("prepare");
        assert_eq!(sel.columns(), 5);
        let mut rows = Vec::new();
        while let Some(row) = sel.step().expect("step") {
            rows.push(
                (0..6)
                    .map(|i| row.get(i).into())
                    .collect::<Vec<rusqlite::types::Value>>(),
            );
        }
        use rusqlite::types::Value as V;
        assert_eq!(
            rows,
            [
                vec![
                    V::Null,
                    V::Integer(7),
                    V::Real(0.5),
                    V::Text("text é".into()),
                    V::Blob(vec![1, 2]),
                    V::Null
                ],
                vec![
                    V::Integer(-1),
                    V::Real(2.0),
                    V::Text(String::new()),
                    V::Blob(vec![]),
                    V::Null,
                    V::Null
                ],
            ]
        );
        // A UTF-16 database's text arrives as UTF-8.
        let wide = Connection::open_in_memory().expect("open");
        wide.execute_batch(
            "PRAGMA encoding = 'UTF-16le'; CREATE TABLE w (t); INSERT INTO w VALUES ('wide é');",
        )
        .expect("utf-16");
        let mut sel = Select::prepare(&wide, "SELECT t FROM w", &[]).expect("prepare");
        let row = sel.step().expect("step").expect("a row");
        assert_eq!(row.get(0), ValueRef::Text("wide é".as_bytes()));
        // Every parameter must be given, each by a name the statement has.
        assert!(Select::prepare(&conn, sql, &params[..1]).is_err());
        let wrong = [
            (":lo", ValueRef::Integer(1)),
            (":top", ValueRef::Integer(3)),
        ];
        assert!(Select::prepare(&conn, sql, &wrong).is_err());
    }
}
