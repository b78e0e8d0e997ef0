//! Storing an imported run (docs/import.md): its requests, cases and windows
//! as artifact rows through the ingest's [`Writer`], its provenance in
//! `imports` and `import_cases`, and its original files in
//! `import_files`/`import_file_chunks` (migrations/0008_imports.sql).

use std::io::Read;
use std::path::PathBuf;

use rusqlite::{Connection, OptionalExtension, TransactionBehavior};
use serde_json::Value;

use super::store::Writer;
use super::tables::{field_index, Col, TABLES};
use super::DbError;
use crate::db::encode::{self as fast, Field, Prepared, Row};
use crate::import::{artifact, Import, Provenance, Request};
use crate::sql;

/// One original file to keep.
#[derive(Debug, Clone)]
pub struct SourceFile {
    pub role: &'static str,
    pub name: String,
    pub path: PathBuf,
    pub sha256: String,
    pub bytes: u64,
    /// Already stored (the per-request file, stored while it was parsed).
    pub blob_id: Option<i64>,
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

/// Bytes per stored chunk of an original file: a chunk fits in one 64 KiB
/// page's cell (at most 65,501 bytes), so it is copied into the page and
/// nowhere else. At 8 MiB a chunk, SQLite's copy of each bound blob and its
/// overflow pages were fresh memory every time: storing a 97.7 MB vLLM
/// result faulted 45,000 more pages and took 0.15 s more CPU (perf stat).
/// Readers concatenate the chunks in order, whatever their size.
const CHUNK: usize = 65_000;

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

/// Rows of requests `range`, in order; `idx` holds each request's index in
/// its case.
fn prepared_requests(
    imp: &Import,
    run_id: &str,
    idx: &[i64],
    cols: &RowCols,
    range: std::ops::Range<usize>,
) -> Vec<Prepared> {
    imp.requests[range.clone()]
        .iter()
        .zip(&idx[range])
        .map(|(r, i)| Prepared::Row(Box::new(request_row(imp, run_id, r, *i, cols))))
        .collect()
}

/// Requests per slice of rows handed from the thread that builds them to
/// the one that writes them.
const SLICE: usize = 2048;

/// Writes the request rows of `imp`: one thread builds them, slice by
/// slice, while this one writes the slice before (building and SQLite's
/// inserts cost about the same, so the two cores share the work); two
/// slices are alive at once, whatever the number of requests.
fn write_requests(
    w: &mut Writer,
    imp: &Import,
    run_id: &str,
    seq: &mut i64,
) -> Result<(), DbError> {
    let Some(table) = TABLES.iter().position(|t| t.table == "requests") else {
        return Ok(());
    };
    let idx = artifact::request_indexes(imp);
    let cols = &RowCols::new(table);
    let n = imp.requests.len();
    std::thread::scope(|scope| {
        let (send, recv) = std::sync::mpsc::sync_channel::<Vec<Prepared>>(1);
        let idx = &idx;
        scope.spawn(move || {
            let mut from = 0;
            while from < n {
                let to = (from + SLICE).min(n);
                if send
                    .send(prepared_requests(imp, run_id, idx, cols, from..to))
                    .is_err()
                {
                    break; // the writer stopped (an error)
                }
                from = to;
            }
        });
        for slice in recv {
            for p in slice {
                write_prepared(w, *seq, p)?;
                *seq += 1;
            }
        }
        Ok(())
    })
}

/// The request table's columns that [`request_row`] fills, looked up once
/// per import rather than once per row (names in the order it fills them).
struct RowCols {
    table: usize,
    texts: [Option<usize>; TEXT_COLS.len()],
    numbers: [Option<usize>; NUMBER_COLS.len()],
    gaps: Option<usize>,
}

const TEXT_COLS: [&str; 15] = [
    "session_id",
    "request_id",
    "x_request_id",
    "case_id",
    "phase",
    "status",
    "output_token_source",
    "prompt_token_source",
    "arrival_mode",
    "endpoint",
    "model",
    "finish_reason",
    "error_type",
    "error_message",
    "response_id",
];

const NUMBER_COLS: [&str; 15] = [
    "request_index",
    "started_at_ns",
    "ended_at_ns",
    "intended_at_ns",
    "timestamp_ns",
    "e2e_latency_ms",
    "ttft_ms",
    "first_chunk_latency_ms",
    "dispatch_lag_ms",
    "stream",
    "prompt_tokens",
    "output_tokens",
    "total_tokens",
    "concurrency",
    "http_status",
];

impl RowCols {
    fn new(table: usize) -> Self {
        RowCols {
            table,
            texts: TEXT_COLS.map(|n| field_index(table, n)),
            numbers: NUMBER_COLS.map(|n| field_index(table, n)),
            gaps: field_index(table, "chunk_interarrival_ms"),
        }
    }
}

/// One request's row, built directly (the row [`fast::prepare`] makes of its
/// `infer.request` line, without writing and re-reading the line): every
/// text of the row is a span of one buffer, a missing value is a null.
fn request_row(imp: &Import, run_id: &str, r: &Request, index: i64, cols: &RowCols) -> Row {
    let table = cols.table;
    let spec = &TABLES[table];
    let mut fields = vec![Field::Null; spec.fields.len()];
    let mut nulls = 0i64;
    let mut line = String::with_capacity(256);
    let case = imp.cases.get(r.case);
    let case_id = case.map_or("unknown", |c| c.case_id.as_str());
    let span = |line: &mut String, text: &str| {
        let a = line.len() as u32;
        line.push_str(text);
        Field::Span(a, line.len() as u32)
    };
    let request_id = artifact::request_id(imp, r, index);
    let texts: [Option<&str>; TEXT_COLS.len()] = [
        Some(run_id),
        Some(&request_id),
        r.x_request_id.as_deref(),
        Some(case_id),
        Some(r.phase),
        Some(r.status.as_str()),
        Some(r.output_token_source),
        Some(r.prompt_token_source),
        case.and_then(|c| c.load.arrival_mode),
        imp.endpoint.as_deref(),
        imp.model.as_deref(),
        r.finish_reason.as_deref(),
        r.error_type.as_deref(),
        r.error_message.as_deref(),
        r.response_id.as_deref(),
    ];
    let put = |fields: &mut Vec<Field>, nulls: &mut i64, col: Option<usize>, v: Option<Field>| {
        if let Some(i) = col {
            match v {
                Some(f) => fields[i] = f,
                None => *nulls |= 1 << i,
            }
        }
    };
    for (col, v) in cols.texts.iter().zip(texts) {
        let f = v.map(|t| span(&mut line, t));
        put(&mut fields, &mut nulls, *col, f);
    }
    let int = |v: Option<i64>| v.map(Field::Int);
    let real = |v: Option<f64>| v.filter(|x| x.is_finite()).map(Field::Real);
    let lag = match (r.started_at_ns, r.intended_at_ns) {
        (Some(s), Some(i)) => Some((s - i) as f64 / 1e6),
        _ => None,
    };
    let numbers: [Option<Field>; NUMBER_COLS.len()] = [
        int(Some(index)),
        int(r.started_at_ns),
        int(r.ended_at_ns),
        int(r.intended_at_ns),
        int(r.started_at_ns),
        real(r.e2e_ms),
        real(r.ttft_ms),
        real(r.ttft_ms),
        real(lag),
        r.stream.map(|b| Field::Int(i64::from(b))),
        int(r.prompt_tokens),
        int(r.output_tokens),
        int(r.total_tokens),
        int(case.and_then(|c| c.load.concurrency)),
        int(r.http_status),
    ];
    for (col, v) in cols.numbers.iter().zip(numbers) {
        put(&mut fields, &mut nulls, *col, v);
    }
    // A list with a value no column keeps (not finite) would go to `extra`
    // on the line path; the tools write finite gaps, so it is left out.
    if let Some(i) = cols.gaps {
        debug_assert_eq!(spec.fields[i].1, Col::RealList);
        if r.chunk_gaps_ms.iter().all(|g| g.is_finite()) {
            let mut b = Vec::with_capacity(r.chunk_gaps_ms.len() * 8);
            for g in &r.chunk_gaps_ms {
                b.extend_from_slice(&g.to_le_bytes());
            }
            fields[i] = Field::Blob(b);
        }
    }
    let case_key = span(&mut line, case_id);
    let status_key = span(&mut line, r.status.as_str());
    Row {
        line,
        table: Some(table),
        event_type: None,
        body: Field::Null,
        derived: Some((case_key, status_key)),
        schema_version: Field::Int(1),
        fields,
        nulls,
        extra: Some(artifact::tool_extra(imp, r)),
        facts: Default::default(),
    }
}

fn write_prepared(w: &mut Writer, seq: i64, p: Prepared) -> Result<(), DbError> {
    match p {
        Prepared::Blank => Ok(()),
        Prepared::Row(row) => w.row(seq, row),
        Prepared::Value(Value::Object(m)) => w.record(seq, &m, false),
        Prepared::Value(_) => Err(DbError::Other("an imported record is not an object".into())),
        Prepared::Error(e) => Err(DbError::Other(format!(
            "an imported record did not encode: {e}"
        ))),
    }
}

/// One import's write transaction. The per-request file's bytes are stored
/// ([`ImportTx::store_original`]) while another thread parses it; then
/// [`ImportTx::finish`] writes the run and commits. Dropped unfinished, it
/// rolls back: nothing is stored.
///
/// The caller runs it with the connection's triggers and foreign-key checks
/// off ([`super::ingest::without_triggers`]), as for an artifact ingest.
pub struct ImportTx<'c> {
    tx: Transaction<'c>,
}

use rusqlite::Transaction;

/// Begins an import's transaction.
pub fn begin(conn: &mut Connection) -> Result<ImportTx<'_>, DbError> {
    // The statement journal (the pages a statement changes, to undo it
    // alone) in memory, as for an artifact ([`super::ingest::ArtifactTx`]):
    // in a temporary file it was 236 MB written for a 1.1 GB inference-perf
    // import. It holds one statement's pages. Set before the transaction.
    conn.pragma_update(None, "temp_store", "MEMORY")
        .map_err(DbError::query(&sql::INGEST_INSERT_RUN))?;
    let tx = conn
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(DbError::query(&sql::INGEST_INSERT_RUN))?;
    Ok(ImportTx { tx })
}

/// What [`ImportTx::store_original`] stored: its blob id, SHA-256 and size.
#[derive(Debug, Clone)]
pub struct Blob {
    pub blob_id: i64,
    pub sha256: String,
    pub bytes: u64,
}

impl ImportTx<'_> {
    /// Stores the bytes `reader` gives under a fresh blob id, hashing them.
    pub fn store_original(&mut self, reader: impl Read) -> Result<Blob, DbError> {
        store_bytes(&self.tx, reader)
    }

    /// Writes `imp` as run `run_id` and commits; `content_sha` names the
    /// imported content (a repeat of it is a no-op, and rolls back).
    pub fn finish(
        self,
        imp: &Import,
        run_id: &str,
        content_sha: &str,
        files: &[SourceFile],
        replace: bool,
        ingested_at: &str,
    ) -> Result<(Stored, u64), DbError> {
        let done = store_in(
            &self.tx,
            imp,
            run_id,
            content_sha,
            files,
            replace,
            ingested_at,
        )?;
        if matches!(done.0, Stored::Added | Stored::Replaced) {
            self.tx
                .commit()
                .map_err(DbError::query(&sql::INGEST_INSERT_RUN))?;
        }
        Ok(done)
    }
}

fn store_in(
    tx: &Connection,
    imp: &Import,
    run_id: &str,
    content_sha: &str,
    files: &[SourceFile],
    replace: bool,
    ingested_at: &str,
) -> Result<(Stored, u64), DbError> {
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
        // Table by table, the files' chunks before the files: nothing
        // cascades with the foreign-key checks off (ingest::ingest_path_ahead).
        for q in sql::DELETE_ARTIFACT.iter().chain([
            &sql::IMPORTS_DELETE,
            &sql::IMPORTS_DELETE_CASES,
            &sql::IMPORTS_DELETE_CHUNKS,
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
    let mut clock = crate::util::Phases::from_env();
    let mut seq: i64 = 0;
    {
        let mut w = Writer::new(tx, run_id)?;
        for line in artifact::header_lines(imp, run_id) {
            write_prepared(&mut w, seq, fast::prepare(line))?;
            seq += 1;
        }
        write_requests(&mut w, imp, run_id, &mut seq)?;
        w.finish()?;
    }
    clock.mark("rows");
    let started = imp.started_ns();
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
            ":clock_kind": imp.clock.kind(),
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
        store_file(tx, run_id, i as i64, f)?;
    }
    clock.mark("files");
    Ok((outcome, imp.requests.len() as u64))
}

/// Stores the bytes `reader` gives under a fresh blob id, hashing them.
fn store_bytes(tx: &Connection, mut reader: impl Read) -> Result<Blob, DbError> {
    use sha2::{Digest, Sha256};
    let blob_id: i64 = tx
        .query_row(sql::IMPORTS_NEXT_BLOB.sql, [], |r| r.get(0))
        .map_err(DbError::query(&sql::IMPORTS_NEXT_BLOB))?;
    let mut stmt = tx
        .prepare(sql::IMPORTS_INSERT_CHUNK.sql)
        .map_err(DbError::query(&sql::IMPORTS_INSERT_CHUNK))?;
    let mut sha = Sha256::new();
    let mut buf = vec![0u8; CHUNK];
    let (mut chunk, mut bytes) = (0i64, 0u64);
    loop {
        let mut filled = 0;
        while filled < CHUNK {
            let n = reader
                .read(&mut buf[filled..])
                .map_err(|e| DbError::Other(format!("reading the file to store: {e}")))?;
            if n == 0 {
                break;
            }
            filled += n;
        }
        if filled == 0 {
            break;
        }
        sha.update(&buf[..filled]);
        bytes += filled as u64;
        stmt.execute(rusqlite::params![blob_id, chunk, &buf[..filled]])
            .map_err(DbError::query(&sql::IMPORTS_INSERT_CHUNK))?;
        chunk += 1;
        if filled < CHUNK {
            break;
        }
    }
    let sha256 = sha.finalize().iter().map(|b| format!("{b:02x}")).collect();
    Ok(Blob {
        blob_id,
        sha256,
        bytes,
    })
}

/// Records a file of the run; its bytes are stored now unless they already are.
fn store_file(tx: &Connection, run_id: &str, index: i64, f: &SourceFile) -> Result<(), DbError> {
    let blob_id = match f.blob_id {
        Some(id) => id,
        None => {
            let file = std::fs::File::open(&f.path)
                .map_err(|e| DbError::Other(format!("{}: {e}", f.path.display())))?;
            store_bytes(tx, file)?.blob_id
        }
    };
    tx.execute(
        sql::IMPORTS_INSERT_FILE.sql,
        rusqlite::named_params! {
            ":run_id": run_id, ":file_index": index, ":role": f.role, ":name": f.name,
            ":sha256": f.sha256, ":bytes": f.bytes as i64, ":blob_id": blob_id,
        },
    )
    .map_err(DbError::query(&sql::IMPORTS_INSERT_FILE))?;
    Ok(())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::import::{Case, Clock, Load, Status, Tool};

    /// Imported requests take the ingest's fast path (no JSON tree per row).
    #[test]
    fn request_lines_take_the_fast_path() {
        let mut imp = Import::new(Tool::VllmBenchServe, Clock::Monotonic);
        imp.cases.push(Case {
            case_id: "c".into(),
            load: Load::default(),
            started_at_ns: None,
            ended_at_ns: None,
            scheduled_ns: None,
            summary: Value::Null,
        });
        let mut r = Request::new(0, Status::Ok);
        r.ttft_ms = Some(1.5);
        r.chunk_gaps_ms = vec![1.0, 2.0];
        r.tool.tpot_ms = Some(2.0);
        imp.requests.push(r);
        let mut e = Request::new(0, Status::Rejected);
        e.started_at_ns = Some(1_000);
        e.intended_at_ns = Some(400);
        e.ended_at_ns = Some(9_000);
        e.e2e_ms = Some(0.008);
        e.http_status = Some(429);
        e.error_message = Some("Too Many \"Requests\"\n".into());
        e.x_request_id = Some("x-1".into());
        e.prompt_tokens = Some(64);
        e.stream = Some(false);
        imp.requests.push(e);
        imp.model = Some("m".into());
        for (k, req) in imp.requests.iter().enumerate() {
            let line = artifact::request_line(&imp, "run", req, k as i64);
            let via_line = match fast::prepare(line.clone()) {
                Prepared::Row(row) => row,
                other => panic!("{line}: {other:?}"),
            };
            // The row built directly is the row of the line.
            let table = TABLES.iter().position(|t| t.table == "requests").unwrap();
            let direct = request_row(&imp, "run", req, k as i64, &RowCols::new(table));
            assert_eq!(direct.sql_fields(), via_line.sql_fields(), "{line}");
            assert_eq!(direct.nulls, via_line.nulls);
            assert_eq!(direct.schema_version, via_line.schema_version);
            let extra: Value = serde_json::from_str(direct.extra.as_deref().unwrap()).unwrap();
            let want: Value = serde_json::from_str(via_line.extra.as_deref().unwrap()).unwrap();
            assert_eq!(extra, want);
            let key = |r: &Row| {
                let (a, b) = r.derived.as_ref().unwrap();
                (a.to_sql(&r.line), b.to_sql(&r.line))
            };
            assert_eq!(key(&direct), key(&via_line));
        }
    }
}
