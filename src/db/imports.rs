//! Storing an imported run (docs/import.md): its requests, cases and windows
//! as artifact rows through the ingest's [`Writer`], its provenance in
//! `imports` and `import_cases`, and its original files in
//! `import_files`/`import_file_chunks` (migrations/0005_imports.sql).

use std::io::Read;
use std::path::PathBuf;

use rusqlite::{Connection, OptionalExtension, TransactionBehavior};
use serde_json::Value;

use super::store::Writer;
use super::DbError;
use crate::import::{artifact, Clock, Import, Provenance};
use crate::ingest::fast::{self, Prepared};
use crate::sql;

/// One original file to keep.
#[derive(Debug, Clone)]
pub struct SourceFile {
    pub role: &'static str,
    pub name: String,
    pub path: PathBuf,
    pub sha256: String,
    pub bytes: u64,
}

/// What storing did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stored {
    Added,
    Replaced,
    /// The same content is already stored under this run id.
    Unchanged,
    /// Another content holds the run id (and no --replace).
    Conflict,
}

/// Bytes per stored chunk of an original file (SQLite's blobs stop at 1 GB).
const CHUNK: usize = 8 << 20;

/// The provenance of `run_id`, or None when it was not imported.
pub fn provenance(conn: &Connection, run_id: &str) -> Result<Option<Provenance>, DbError> {
    conn.query_row(
        sql::IMPORTS_FIND.sql,
        rusqlite::named_params! {":run_id": run_id},
        |r| {
            let defs: String = r.get(8)?;
            let notes: String = r.get(9)?;
            Ok(Provenance {
                tool: r.get(0)?,
                tool_version: r.get(1)?,
                format: r.get(2)?,
                format_version: r.get(3)?,
                identity: r.get(4)?,
                clock_kind: r.get(5)?,
                clock_domain: r.get(6)?,
                per_request: r.get::<_, i64>(7)? != 0,
                definitions: serde_json::from_str(&defs).unwrap_or(Value::Null),
                notes: serde_json::from_str(&notes).unwrap_or(Value::Null),
            })
        },
    )
    .optional()
    .map_err(DbError::query(&sql::IMPORTS_FIND))
}

/// The original files of an imported run: (index, role, name).
pub fn files(conn: &Connection, run_id: &str) -> Result<Vec<(i64, String, String)>, DbError> {
    let mut stmt = conn
        .prepare(sql::IMPORTS_FILES.sql)
        .map_err(DbError::query(&sql::IMPORTS_FILES))?;
    let rows = stmt
        .query_map(rusqlite::named_params! {":run_id": run_id}, |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?))
        })
        .map_err(DbError::query(&sql::IMPORTS_FILES))?;
    rows.collect::<Result<Vec<_>, _>>()
        .map_err(DbError::query(&sql::IMPORTS_FILES))
}

/// The bytes of original file `index` of the run.
pub fn original(conn: &Connection, run_id: &str, index: i64) -> Result<Vec<u8>, DbError> {
    let mut stmt = conn
        .prepare(sql::IMPORTS_CHUNKS.sql)
        .map_err(DbError::query(&sql::IMPORTS_CHUNKS))?;
    let mut rows = stmt
        .query(rusqlite::named_params! {":run_id": run_id, ":file_index": index})
        .map_err(DbError::query(&sql::IMPORTS_CHUNKS))?;
    let mut out = Vec::new();
    while let Some(r) = rows.next().map_err(DbError::query(&sql::IMPORTS_CHUNKS))? {
        let b: Vec<u8> = r.get(0).map_err(DbError::query(&sql::IMPORTS_CHUNKS))?;
        out.extend_from_slice(&b);
    }
    Ok(out)
}

/// Rows of requests `range`, prepared in parallel (the same encoding an
/// artifact line gets), in order; `idx` holds each request's index in its case.
fn prepared_requests(
    imp: &Import,
    run_id: &str,
    idx: &[i64],
    range: std::ops::Range<usize>,
) -> Vec<Prepared> {
    use rayon::prelude::*;
    imp.requests[range.clone()]
        .par_iter()
        .zip(idx[range].par_iter())
        .map(|(r, i)| fast::prepare(artifact::request_line(imp, run_id, r, *i)))
        .collect()
}

fn write_prepared(w: &mut Writer, seq: i64, p: Prepared) -> Result<(), DbError> {
    match p {
        Prepared::Blank => Ok(()),
        Prepared::Row(row) => w.row(seq, *row),
        Prepared::Value(Value::Object(m)) => w.record(seq, &m, false),
        Prepared::Value(_) => Err(DbError::Other("an imported record is not an object".into())),
        Prepared::Error(e) => Err(DbError::Other(format!(
            "an imported record did not encode: {e}"
        ))),
    }
}

/// Stores `imp` as run `run_id` in one transaction; `content_sha` names the
/// imported content (a repeat of it is a no-op).
#[allow(clippy::too_many_arguments)]
pub fn store(
    conn: &mut Connection,
    imp: &Import,
    run_id: &str,
    content_sha: &str,
    files: &[SourceFile],
    replace: bool,
    ingested_at: &str,
) -> Result<(Stored, u64), DbError> {
    use rusqlite::config::DbConfig::SQLITE_DBCONFIG_ENABLE_TRIGGER as TRIGGERS;
    let config = |e: rusqlite::Error| DbError::Other(format!("cannot switch triggers: {e}"));
    let was = conn.db_config(TRIGGERS).map_err(config)?;
    conn.set_db_config(TRIGGERS, false).map_err(config)?;
    let done = store_in(conn, imp, run_id, content_sha, files, replace, ingested_at);
    let restored = conn.set_db_config(TRIGGERS, was);
    let done = done?;
    restored.map_err(config)?;
    Ok(done)
}

fn store_in(
    conn: &mut Connection,
    imp: &Import,
    run_id: &str,
    content_sha: &str,
    files: &[SourceFile],
    replace: bool,
    ingested_at: &str,
) -> Result<(Stored, u64), DbError> {
    let tx = conn
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(DbError::query(&sql::INGEST_INSERT_RUN))?;
    let existing: Option<(Option<String>, Option<String>)> = tx
        .query_row(
            sql::RUNS_FIND.sql,
            rusqlite::named_params! {":run_id": run_id},
            |r| Ok((r.get(1)?, r.get(2)?)),
        )
        .optional()
        .map_err(DbError::query(&sql::RUNS_FIND))?;
    let mut outcome = Stored::Added;
    if let Some((Some(sha), _)) = &existing {
        if sha == content_sha {
            return Ok((Stored::Unchanged, 0));
        }
        if !replace {
            return Ok((Stored::Conflict, 0));
        }
        for q in sql::DELETE_ARTIFACT.iter().chain([
            &sql::IMPORTS_DELETE,
            &sql::IMPORTS_DELETE_CASES,
            &sql::IMPORTS_DELETE_FILES,
        ]) {
            tx.execute(q.sql, rusqlite::named_params! {":run_id": run_id})
                .map_err(DbError::query(q))?;
        }
        outcome = Stored::Replaced;
    }
    tx.execute(
        sql::INGEST_INSERT_PLACEHOLDER_RUN.sql,
        rusqlite::named_params! {":run_id": run_id, ":ingested_at": ingested_at},
    )
    .map_err(DbError::query(&sql::INGEST_INSERT_PLACEHOLDER_RUN))?;
    let mut seq: i64 = 0;
    {
        let mut w = Writer::new(&tx, run_id)?;
        for line in artifact::header_lines(imp, run_id) {
            write_prepared(&mut w, seq, fast::prepare(line))?;
            seq += 1;
        }
        // In slices, so the prepared rows of a large import stay bounded.
        let idx = artifact::request_indexes(imp);
        let mut from = 0;
        while from < imp.requests.len() {
            let to = (from + 16_384).min(imp.requests.len());
            for p in prepared_requests(imp, run_id, &idx, from..to) {
                write_prepared(&mut w, seq, p)?;
                seq += 1;
            }
            from = to;
        }
        w.finish()?;
    }
    let started = imp
        .requests
        .iter()
        .filter_map(|r| r.started_at_ns)
        .chain(imp.cases.iter().filter_map(|c| c.started_at_ns))
        .min();
    let (name, bytes) = files
        .first()
        .map(|f| (f.name.clone(), f.bytes as i64))
        .unwrap_or_default();
    tx.execute(
        sql::INGEST_INSERT_RUN.sql,
        rusqlite::named_params! {
            ":run_id": run_id,
            ":session_id": run_id,
            ":started_at_ns": started,
            ":model": imp.model,
            ":endpoint": imp.endpoint,
            ":artifact_name": name,
            ":artifact_sha256": content_sha,
            ":artifact_bytes": bytes,
            ":record_count": seq,
            ":line_count": Option::<i64>::None,
            ":ingested_at": ingested_at,
        },
    )
    .map_err(DbError::query(&sql::INGEST_INSERT_RUN))?;
    let json = |v: &Value| (!v.is_null()).then(|| v.to_string());
    tx.execute(
        sql::IMPORTS_INSERT_IMPORT.sql,
        rusqlite::named_params! {
            ":run_id": run_id,
            ":tool": imp.tool.name(),
            ":tool_version": imp.tool_version,
            ":format": imp.tool.format(),
            ":format_version": imp.format_version,
            ":identity": imp.identity,
            ":clock_kind": match imp.clock { Clock::UnixEpoch => "unix_epoch", Clock::Monotonic => "monotonic" },
            ":clock_domain": imp.clock.domain(imp.tool),
            ":per_request": imp.per_request,
            ":definitions": serde_json::to_string(&imp.definitions).unwrap_or_default(),
            ":config": json(&imp.config),
            ":summary": json(&imp.summary),
            ":notes": Value::from(imp.notes.clone()).to_string(),
            ":ingested_at": ingested_at,
        },
    )
    .map_err(DbError::query(&sql::IMPORTS_INSERT_IMPORT))?;
    for (i, c) in imp.cases.iter().enumerate() {
        tx.execute(
            sql::IMPORTS_INSERT_CASE.sql,
            rusqlite::named_params! {
                ":run_id": run_id,
                ":case_index": i as i64,
                ":case_id": c.case_id,
                ":arrival_mode": c.load.arrival_mode,
                ":tool_mode": c.load.tool_mode,
                ":rate_per_second": c.load.rate_per_second,
                ":concurrency": c.load.concurrency,
                ":declared": serde_json::to_string(&c.load.detail).ok(),
                ":summary": json(&c.summary),
            },
        )
        .map_err(DbError::query(&sql::IMPORTS_INSERT_CASE))?;
    }
    for (i, f) in files.iter().enumerate() {
        store_file(&tx, run_id, i as i64, f)?;
    }
    tx.commit()
        .map_err(DbError::query(&sql::INGEST_INSERT_RUN))?;
    Ok((outcome, imp.requests.len() as u64))
}

fn store_file(tx: &Connection, run_id: &str, index: i64, f: &SourceFile) -> Result<(), DbError> {
    tx.execute(
        sql::IMPORTS_INSERT_FILE.sql,
        rusqlite::named_params! {
            ":run_id": run_id, ":file_index": index, ":role": f.role, ":name": f.name,
            ":sha256": f.sha256, ":bytes": f.bytes as i64,
        },
    )
    .map_err(DbError::query(&sql::IMPORTS_INSERT_FILE))?;
    let mut file = std::fs::File::open(&f.path)
        .map_err(|e| DbError::Other(format!("{}: {e}", f.path.display())))?;
    let mut stmt = tx
        .prepare(sql::IMPORTS_INSERT_CHUNK.sql)
        .map_err(DbError::query(&sql::IMPORTS_INSERT_CHUNK))?;
    let mut buf = vec![0u8; CHUNK];
    let mut chunk = 0i64;
    loop {
        let mut filled = 0;
        while filled < CHUNK {
            let n = file
                .read(&mut buf[filled..])
                .map_err(|e| DbError::Other(format!("{}: {e}", f.path.display())))?;
            if n == 0 {
                break;
            }
            filled += n;
        }
        if filled == 0 {
            break;
        }
        stmt.execute(rusqlite::params![run_id, index, chunk, &buf[..filled]])
            .map_err(DbError::query(&sql::IMPORTS_INSERT_CHUNK))?;
        chunk += 1;
        if filled < CHUNK {
            break;
        }
    }
    Ok(())
}
