//! The rows `export --parquet` writes, read from the documented views
//! (queries/export/) into `columnar` batches, and what a run's content hash
//! covers. The Parquet side never sees a connection (columnar::writer).
use rusqlite::types::ValueRef;
use rusqlite::{named_params, Connection, OptionalExtension};
use sha2::{Digest, Sha256};

use super::DbError;
use crate::columnar::{Batch, Cell, TableDef, TypeMismatch, RUNS};
use crate::sql::{self, Query};

/// Rows per batch (and so per Parquet row group): a run of a few thousand
/// requests is one group; a huge run is several, and memory stays bounded.
pub const BATCH_ROWS: usize = 32_768;

/// Why rows could not be read.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    #[error(transparent)]
    Db(#[from] DbError),
    #[error("run {run_id}: {source}")]
    Type {
        run_id: String,
        source: TypeMismatch,
    },
}

/// The query a table's rows come from.
fn query_of(table: &TableDef) -> &'static Query {
    match table.name {
        "requests" => &sql::EXPORT_REQUESTS,
        "cases" => &sql::EXPORT_CASES,
        "telemetry_samples" => &sql::EXPORT_SERVER_SAMPLES,
        _ => &sql::EXPORT_RUN,
    }
}

/// Puts one row of `row` into `batch`.
fn push_row(batch: &mut Batch, row: &rusqlite::Row<'_>, q: &Query) -> Result<(), PushError> {
    for i in 0..batch.table.columns.len() {
        let v = row.get_ref(i).map_err(DbError::query(q))?;
        let cell = match v {
            ValueRef::Null => Cell::Null,
            ValueRef::Integer(x) => Cell::Int(x),
            ValueRef::Real(x) => Cell::Real(x),
            // The views' text is UTF-8 as stored; bytes that are not (only
            // SQL written by hand can store them) are replaced, not refused.
            ValueRef::Text(t) => match std::str::from_utf8(t) {
                Ok(s) => Cell::Text(s),
                Err(_) => {
                    let owned = String::from_utf8_lossy(t).into_owned();
                    batch.push(i, Cell::Text(&owned))?;
                    continue;
                }
            },
            ValueRef::Blob(_) => {
                return Err(PushError::Type(TypeMismatch {
                    table: batch.table.name,
                    column: batch.table.columns[i].name,
                    found: "blob",
                    expected: batch.table.columns[i].kind,
                }))
            }
        };
        batch.push(i, cell)?;
    }
    batch.end_row();
    Ok(())
}

enum PushError {
    Db(DbError),
    Type(TypeMismatch),
}

impl From<DbError> for PushError {
    fn from(e: DbError) -> Self {
        PushError::Db(e)
    }
}

impl From<TypeMismatch> for PushError {
    fn from(e: TypeMismatch) -> Self {
        PushError::Type(e)
    }
}

/// Reads one run's rows of `table` in batches of at most `BATCH_ROWS`,
/// handing each full batch (and the last, if any rows) to `sink`. Returns
/// the rows read.
pub fn for_each_batch<E>(
    conn: &Connection,
    table: &'static TableDef,
    run_id: &str,
    mut sink: impl FnMut(&Batch) -> Result<(), E>,
) -> Result<u64, E>
where
    E: From<ReadError>,
{
    let q = query_of(table);
    let fail = |e: PushError| -> E {
        match e {
            PushError::Db(e) => ReadError::Db(e).into(),
            PushError::Type(source) => ReadError::Type {
                run_id: run_id.to_owned(),
                source,
            }
            .into(),
        }
    };
    let mut stmt = conn
        .prepare_cached(q.sql)
        .map_err(|e| fail(DbError::query(q)(e).into()))?;
    let mut rows = stmt
        .query(named_params! {":run_id": run_id})
        .map_err(|e| fail(DbError::query(q)(e).into()))?;
    let mut batch = Batch::new(table);
    let mut total = 0u64;
    while let Some(row) = rows.next().map_err(|e| fail(DbError::query(q)(e).into()))? {
        push_row(&mut batch, row, q).map_err(fail)?;
        if batch.rows() == BATCH_ROWS {
            total += batch.rows() as u64;
            sink(&batch)?;
            batch.clear();
        }
    }
    if !batch.is_empty() {
        total += batch.rows() as u64;
        sink(&batch)?;
    }
    Ok(total)
}

/// `v_runs` rows of the given runs, in the order given (those no longer
/// stored are skipped), as one batch.
pub fn runs_batch(conn: &Connection, run_ids: &[String]) -> Result<Batch, ReadError> {
    let mut batch = Batch::new(&RUNS);
    for id in run_ids {
        let q = &sql::EXPORT_RUN;
        let mut stmt = conn.prepare_cached(q.sql).map_err(DbError::query(q))?;
        let mut rows = stmt
            .query(named_params! {":run_id": id})
            .map_err(DbError::query(q))?;
        if let Some(row) = rows.next().map_err(DbError::query(q))? {
            push_row(&mut batch, row, q).map_err(|e| match e {
                PushError::Db(e) => ReadError::Db(e),
                PushError::Type(source) => ReadError::Type {
                    run_id: id.clone(),
                    source,
                },
            })?;
        }
    }
    Ok(batch)
}

/// The runs an export covers: every stored run, or those started at or
/// after `since_ns`; by run id.
pub fn select_runs(conn: &Connection, since_ns: Option<i64>) -> Result<Vec<String>, DbError> {
    let q = &sql::EXPORT_SELECT_RUNS;
    let mut stmt = conn.prepare(q.sql).map_err(DbError::query(q))?;
    let rows = stmt
        .query_map(named_params! {":since_ns": since_ns}, |r| r.get(0))
        .map_err(DbError::query(q))?;
    rows.collect::<Result<Vec<_>, _>>()
        .map_err(DbError::query(q))
}

/// A date or date-time as nanoseconds since the epoch (SQLite's date
/// functions read it); None when it is not one.
pub fn since_ns(conn: &Connection, since: &str) -> Result<Option<i64>, DbError> {
    let q = &sql::EXPORT_SINCE_NS;
    conn.query_row(q.sql, named_params! {":since": since}, |r| r.get(0))
        .map_err(DbError::query(q))
}

/// A read transaction: what is read while it lives is one snapshot of the
/// database, however ingests on other connections go meanwhile.
pub struct Snapshot<'c> {
    conn: &'c Connection,
}

impl<'c> Snapshot<'c> {
    pub fn begin(conn: &'c Connection) -> Result<Snapshot<'c>, DbError> {
        conn.execute_batch("BEGIN DEFERRED")
            .map_err(|e| DbError::Other(format!("cannot begin a read transaction: {e}")))?;
        Ok(Snapshot { conn })
    }
}

impl Drop for Snapshot<'_> {
    fn drop(&mut self) {
        let _ = self.conn.execute_batch("COMMIT");
    }
}

/// How many request rows a run has: its pack's count where it has one (a
/// row per segment, not a walk of every row's index entry).
pub fn request_rows(conn: &Connection, run_id: &str) -> Result<u64, DbError> {
    let q = &sql::EXPORT_REQUEST_ROWS;
    let n: i64 = conn
        .query_row(q.sql, named_params! {":run_id": run_id}, |r| r.get(0))
        .map_err(DbError::query(q))?;
    Ok(n.max(0) as u64)
}

/// The database's schema version.
pub fn schema_version(conn: &Connection) -> Result<i64, DbError> {
    let q = &sql::EXPORT_SCHEMA_VERSION;
    conn.query_row(q.sql, [], |r| r.get(0))
        .map_err(DbError::query(q))
}

/// Feeds a row's values to a hasher, each tagged with its type and length so
/// that no two different rows feed the same bytes.
fn hash_row(h: &mut Sha256, row: &rusqlite::Row<'_>, n: usize, q: &Query) -> Result<(), DbError> {
    for i in 0..n {
        hash_value(h, row.get_ref(i).map_err(DbError::query(q))?);
    }
    Ok(())
}

fn hash_value(h: &mut Sha256, v: ValueRef<'_>) {
    match v {
        ValueRef::Null => h.update([0u8]),
        ValueRef::Integer(x) => {
            h.update([1u8]);
            h.update(x.to_le_bytes());
        }
        ValueRef::Real(x) => {
            h.update([2u8]);
            h.update(x.to_bits().to_le_bytes());
        }
        ValueRef::Text(t) | ValueRef::Blob(t) => {
            h.update([3u8]);
            h.update((t.len() as u64).to_le_bytes());
            h.update(t);
        }
    }
}

/// A run's `v_runs` row as its content hash read it: `runs.parquet` is made
/// of these ([`runs_batch_with`]) without evaluating the view again (its
/// counts walk the run's requests four times).
#[derive(Debug, Clone, PartialEq)]
pub struct RunRow(Vec<rusqlite::types::Value>);

/// What a run's exported files are made from, hashed: its `v_runs` row (the
/// artifact's hash and ingest time among it, so a re-ingest changes it) and
/// its attached files with their sample counts; `salt` adds what else the
/// files depend on (the export format, the SLO policy). None when the run
/// is not stored.
pub fn content_hash(
    conn: &Connection,
    run_id: &str,
    salt: &[u8],
) -> Result<Option<String>, DbError> {
    Ok(content_hash_and_row(conn, run_id, salt)?.map(|(hash, _)| hash))
}

/// [`content_hash`], with the `v_runs` row it read.
pub fn content_hash_and_row(
    conn: &Connection,
    run_id: &str,
    salt: &[u8],
) -> Result<Option<(String, RunRow)>, DbError> {
    let Some(values) = run_row(conn, run_id)? else {
        return Ok(None);
    };
    let row = RunRow(values);
    Ok(Some((hash_of(conn, run_id, salt, &row)?, row)))
}

/// The content hash of a run whose `v_runs` row is `row`
/// ([`content_hash`]).
pub fn hash_of(
    conn: &Connection,
    run_id: &str,
    salt: &[u8],
    row: &RunRow,
) -> Result<String, DbError> {
    let mut h = Sha256::new();
    h.update((salt.len() as u64).to_le_bytes());
    h.update(salt);
    for v in &row.0 {
        hash_value(&mut h, ValueRef::from(v));
    }
    let q = &sql::EXPORT_RUN_FILES;
    let mut stmt = conn.prepare_cached(q.sql).map_err(DbError::query(q))?;
    let mut rows = stmt
        .query(named_params! {":run_id": run_id})
        .map_err(DbError::query(q))?;
    while let Some(row) = rows.next().map_err(DbError::query(q))? {
        h.update([9u8]);
        hash_row(&mut h, row, 9, q)?;
    }
    let digest = h.finalize();
    let mut hex = String::with_capacity(71);
    hex.push_str("sha256:");
    for b in digest {
        hex.push_str(&format!("{b:02x}"));
    }
    Ok(hex)
}

/// Where the `v_runs` row holds `cases`, `requests`, `ok` and `failed`.
const RUN_COUNTS: std::ops::Range<usize> = 7..11;

/// A run's `v_runs` row without its four request counts; None when the run
/// is not stored. [`RunRow::with_counts`] completes it.
pub fn run_base(conn: &Connection, run_id: &str) -> Result<Option<RunBase>, DbError> {
    let q = &sql::EXPORT_RUN_BASE;
    let mut stmt = conn.prepare_cached(q.sql).map_err(DbError::query(q))?;
    let values = stmt
        .query_row(named_params! {":run_id": run_id}, |row| {
            (0..RUNS.columns.len())
                .map(|i| row.get_ref(i).map(rusqlite::types::Value::from))
                .collect::<Result<Vec<_>, _>>()
        })
        .optional()
        .map_err(DbError::query(q))?;
    Ok(values.map(RunBase))
}

/// A run's `v_runs` row short of its request counts ([`run_base`]).
#[derive(Debug, Clone)]
pub struct RunBase(Vec<rusqlite::types::Value>);

/// A run's measured requests counted as `v_runs` counts them
/// (queries/export/run.sql): distinct case keys, requests, those whose
/// status is `ok`, those whose status key is not.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RunCounts {
    pub cases: i64,
    pub requests: i64,
    pub ok: i64,
    pub failed: i64,
}

impl RunBase {
    /// The whole row, the view's to the value (and so to the hash).
    pub fn with_counts(self, c: RunCounts) -> RunRow {
        let mut values = self.0;
        for (i, n) in RUN_COUNTS.zip([c.cases, c.requests, c.ok, c.failed]) {
            if let Some(v) = values.get_mut(i) {
                *v = rusqlite::types::Value::Integer(n);
            }
        }
        RunRow(values)
    }
}

/// A run's whole `v_runs` row, read by the view's counts
/// (queries/export/run.sql); None when the run is not stored.
pub fn run_row_of(conn: &Connection, run_id: &str) -> Result<Option<RunRow>, DbError> {
    Ok(run_row(conn, run_id)?.map(RunRow))
}

/// A run's `v_runs` row, its values owned; None when the run is not stored.
fn run_row(
    conn: &Connection,
    run_id: &str,
) -> Result<Option<Vec<rusqlite::types::Value>>, DbError> {
    let q = &sql::EXPORT_RUN;
    let mut stmt = conn.prepare_cached(q.sql).map_err(DbError::query(q))?;
    stmt.query_row(named_params! {":run_id": run_id}, |row| {
        (0..RUNS.columns.len())
            .map(|i| row.get_ref(i).map(rusqlite::types::Value::from))
            .collect::<Result<Vec<_>, _>>()
    })
    .optional()
    .map_err(DbError::query(q))
}

/// [`runs_batch`], taking the rows of `known` as they are and reading the
/// view only for the others.
pub fn runs_batch_with(
    conn: &Connection,
    run_ids: &[String],
    known: &std::collections::BTreeMap<String, RunRow>,
) -> Result<Batch, ReadError> {
    let mut batch = Batch::new(&RUNS);
    for id in run_ids {
        let read;
        let values = match known.get(id) {
            Some(RunRow(values)) => values,
            None => match run_row(conn, id)? {
                Some(values) => {
                    read = values;
                    &read
                }
                None => continue,
            },
        };
        for (i, v) in values.iter().enumerate() {
            let cell = match ValueRef::from(v) {
                ValueRef::Null => Cell::Null,
                ValueRef::Integer(x) => Cell::Int(x),
                ValueRef::Real(x) => Cell::Real(x),
                ValueRef::Text(t) => {
                    let s = String::from_utf8_lossy(t);
                    batch
                        .push(i, Cell::Text(&s))
                        .map_err(|source| ReadError::Type {
                            run_id: id.clone(),
                            source,
                        })?;
                    continue;
                }
                ValueRef::Blob(_) => {
                    return Err(ReadError::Type {
                        run_id: id.clone(),
                        source: TypeMismatch {
                            table: RUNS.name,
                            column: RUNS.columns[i].name,
                            found: "blob",
                            expected: RUNS.columns[i].kind,
                        },
                    })
                }
            };
            batch.push(i, cell).map_err(|source| ReadError::Type {
                run_id: id.clone(),
                source,
            })?;
        }
        batch.end_row();
    }
    Ok(batch)
}

/// Every table's column names as its source view has them, for the test
/// that keeps `columnar`'s lists and the views in step.
pub fn view_columns(conn: &Connection, table: &TableDef) -> Result<Vec<String>, DbError> {
    let q = query_of(table);
    let stmt = conn.prepare(q.sql).map_err(DbError::query(q))?;
    Ok(stmt
        .column_names()
        .iter()
        .map(|s| (*s).to_owned())
        .collect())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::columnar::{Values, CASES, REQUESTS, TELEMETRY_SAMPLES};

    #[test]
    fn every_exported_column_is_its_views_column() {
        let conn = crate::db::open_memory().unwrap();
        for table in [&REQUESTS, &CASES, &TELEMETRY_SAMPLES, &RUNS] {
            let ours: Vec<&str> = table.columns.iter().map(|c| c.name).collect();
            assert_eq!(view_columns(&conn, table).unwrap(), ours, "{}", table.name);
            // The query lists every column of the view, in its order.
            let view = conn
                .prepare(&format!("SELECT * FROM {}", table.source))
                .unwrap();
            assert_eq!(view.column_names(), ours, "{}", table.source);
        }
    }

    #[test]
    fn dates_are_read_by_sqlite_and_nonsense_is_none() {
        let conn = crate::db::open_memory().unwrap();
        assert_eq!(
            since_ns(&conn, "2026-11-29").unwrap(),
            Some(1_795_910_400_000_000_000)
        );
        assert_eq!(
            since_ns(&conn, "2026-11-29T14:07:48.5Z").unwrap(),
            Some(1_795_961_268_500_000_000)
        );
        assert_eq!(since_ns(&conn, "last tuesday").unwrap(), None);
    }

    #[test]
    fn a_batch_is_read_column_by_column() {
        let conn = crate::db::open_memory().unwrap();
        let mut seen = 0;
        let n = for_each_batch::<ReadError>(&conn, &REQUESTS, "none", |_| {
            seen += 1;
            Ok(())
        })
        .unwrap();
        assert_eq!((n, seen), (0, 0));
        let b = runs_batch(&conn, &["none".to_owned()]).unwrap();
        assert!(b.is_empty());
        assert!(matches!(b.columns[0].values, Values::Text { .. }));
    }
}
