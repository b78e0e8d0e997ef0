//! Writing a run's rows and reading them back (the only place that knows the
//! row layout of the typed tables besides the queries themselves).
use rusqlite::types::{Value as Sql, ValueRef};
use rusqlite::{Connection, Statement};
use serde_json::{Map, Value};

use super::raw::{Insert, Select};
use super::tables::{self, split, TableSpec, TABLES};
use super::DbError;
use crate::ingest::decode::Contexts;
use crate::ingest::fast::{Field, Row};
use crate::model::{Request, RunData, Scalar, Sym, SystemSample};
use crate::sql::{self, Query};

/// Where a raw record is stored.
pub fn table_for(raw: &Map<String, Value>, transport: bool) -> Option<&'static TableSpec> {
    let et = raw.get("event_type").and_then(Value::as_str)?;
    if et == "infer.request" {
        // Version-2 requests are the vLLM hook's executions, not client requests.
        let v2 = transport || raw.get("schema_version").and_then(Value::as_i64) == Some(2);
        if v2 {
            return None;
        }
    }
    TABLES.iter().find(|t| t.event_type == et)
}

/// Prepared inserts for one ingest transaction.
pub struct Writer<'c> {
    run_id: String,
    inserts: Vec<Insert<'c>>,
    record: Insert<'c>,
    context: Statement<'c>,
}

impl<'c> Writer<'c> {
    pub fn new(conn: &'c Connection, run_id: &str) -> Result<Self, DbError> {
        let mut inserts = Vec::with_capacity(TABLES.len());
        for t in TABLES {
            inserts.push(Insert::prepare(conn, t.insert.sql).map_err(DbError::query(&t.insert))?);
        }
        Ok(Writer {
            run_id: run_id.to_owned(),
            inserts,
            record: Insert::prepare(conn, sql::INGEST_INSERT_RECORD.sql)
                .map_err(DbError::query(&sql::INGEST_INSERT_RECORD))?,
            context: conn
                .prepare(sql::INGEST_INSERT_CONTEXT.sql)
                .map_err(DbError::query(&sql::INGEST_INSERT_CONTEXT))?,
        })
    }

    pub fn context(&mut self, seq: i64, id: &str, context: &Value) -> Result<(), DbError> {
        self.context
            .execute(rusqlite::params![self.run_id, seq, id, context.to_string()])
            .map_err(DbError::query(&sql::INGEST_INSERT_CONTEXT))?;
        Ok(())
    }

    /// Stores a row the fast path already encoded. Values are bound in place
    /// (text borrowed from the row's line), not collected into a parameter list.
    pub fn row(&mut self, seq: i64, row: Row) -> Result<(), DbError> {
        let line = row.line.as_str();
        let run_id = ValueRef::Text(self.run_id.as_bytes());
        let Some(ti) = row.table else {
            let event_type = row
                .event_type
                .as_deref()
                .map_or(ValueRef::Null, |e| ValueRef::Text(e.as_bytes()));
            let values = [
                run_id,
                ValueRef::Integer(seq),
                event_type,
                row.body.bind(line),
            ];
            return self
                .record
                .run(values)
                .map_err(DbError::query(&sql::INGEST_INSERT_RECORD));
        };
        let spec = &TABLES[ti];
        let file_id = (spec.table == "vllm_spans").then_some(ValueRef::Null);
        let derived = row
            .derived
            .iter()
            .flat_map(|(case_key, status)| [case_key.bind(line), status.bind(line)]);
        let extra = row
            .extra
            .as_deref()
            .map_or(ValueRef::Null, |e| ValueRef::Text(e.as_bytes()));
        let values = [run_id, ValueRef::Integer(seq)]
            .into_iter()
            .chain(file_id)
            .chain(derived)
            .chain([row.schema_version.bind(line)])
            .chain(row.fields.iter().map(|f| f.bind(line)))
            .chain([ValueRef::Integer(row.nulls), extra]);
        self.inserts[ti]
            .run(values)
            .map_err(DbError::query(&spec.insert))
    }

    /// Stores a record that took the general path: encoded into the same
    /// [`Row`](crate::ingest::fast::Row) the fast path builds, then stored by [`Writer::row`].
    pub fn record(
        &mut self,
        seq: i64,
        raw: &Map<String, Value>,
        transport: bool,
    ) -> Result<(), DbError> {
        let row = match table_for(raw, transport) {
            None => Row {
                line: String::new(),
                table: None,
                event_type: raw
                    .get("event_type")
                    .and_then(Value::as_str)
                    .map(str::to_owned),
                body: Field::Text(Value::Object(raw.clone()).to_string()),
                derived: None,
                schema_version: Field::Null,
                fields: Vec::new(),
                nulls: 0,
                extra: None,
                facts: Default::default(),
            },
            Some(spec) => {
                let enc = split(spec, raw);
                let derived = (spec.table == "requests").then(|| {
                    let view = Request::from_record(seq, raw);
                    (
                        Field::Text(view.case_key.into()),
                        Field::Text(view.status.into()),
                    )
                });
                Row {
                    line: String::new(),
                    table: TABLES.iter().position(|t| t.table == spec.table),
                    event_type: None,
                    body: Field::Null,
                    derived,
                    schema_version: enc.schema_version.into(),
                    fields: enc.fields.into_iter().map(Field::from).collect(),
                    nulls: enc.nulls,
                    extra: enc.extra,
                    facts: Default::default(),
                }
            }
        };
        self.row(seq, row)
    }
}

/// Reads every row of `spec` for the run: (seq, rebuilt raw record, row columns).
fn load_table(
    conn: &Connection,
    spec: &TableSpec,
    run_id: &str,
    mut each: impl FnMut(i64, &[Sql], i64, Option<&str>, &Sql),
) -> Result<(), DbError> {
    let mut stmt = conn
        .prepare(spec.load.sql)
        .map_err(DbError::query(&spec.load))?;
    let n = spec.fields.len();
    let mut rows = stmt
        .query(rusqlite::named_params! {":run_id": run_id})
        .map_err(DbError::query(&spec.load))?;
    let mut fields: Vec<Sql> = Vec::with_capacity(n);
    while let Some(row) = rows.next().map_err(DbError::query(&spec.load))? {
        let seq: i64 = row.get(0).map_err(DbError::query(&spec.load))?;
        let sv: Sql = row.get(1).map_err(DbError::query(&spec.load))?;
        fields.clear();
        for i in 0..n {
            fields.push(row.get(2 + i).map_err(DbError::query(&spec.load))?);
        }
        let nulls: i64 = row.get(2 + n).map_err(DbError::query(&spec.load))?;
        let extra: Option<String> = row.get(3 + n).map_err(DbError::query(&spec.load))?;
        each(seq, &fields, nulls, extra.as_deref(), &sv);
    }
    Ok(())
}

/// A record with its position in the file.
type Positioned = (i64, Map<String, Value>);

/// The bodies of a run's untyped records (`q` selects `seq, body`), parsed.
fn load_bodies(conn: &Connection, q: &Query, run_id: &str) -> Result<Vec<Positioned>, DbError> {
    let mut stmt = conn.prepare(q.sql).map_err(DbError::query(q))?;
    let rows = stmt
        .query_map(rusqlite::named_params! {":run_id": run_id}, |r| {
            Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?))
        })
        .map_err(DbError::query(q))?;
    let mut out = Vec::new();
    for row in rows {
        let (seq, body) = row.map_err(DbError::query(q))?;
        match crate::pyjson::parse(&body) {
            Ok(Value::Object(m)) => out.push((seq, m)),
            Ok(_) => return Err(DbError::Other(format!("records row {seq}: not an object"))),
            Err(e) => return Err(DbError::Other(format!("records row {seq}: {e}"))),
        }
    }
    Ok(out)
}

/// A run's `infer.context` definitions: (seq, context id, context), in file order.
fn load_contexts(conn: &Connection, run_id: &str) -> Result<Vec<(i64, String, Value)>, DbError> {
    let q = &sql::LOAD_CONTEXTS;
    let mut stmt = conn.prepare(q.sql).map_err(DbError::query(q))?;
    let rows = stmt
        .query_map(rusqlite::named_params! {":run_id": run_id}, |r| {
            Ok((
                r.get::<_, i64>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, String>(2)?,
            ))
        })
        .map_err(DbError::query(q))?;
    let mut out = Vec::new();
    for row in rows {
        let (seq, id, ctx) = row.map_err(DbError::query(q))?;
        let ctx: Value =
            serde_json::from_str(&ctx).map_err(|e| DbError::Other(format!("context {id}: {e}")))?;
        out.push((seq, id, ctx));
    }
    Ok(out)
}

/// The raw records of a run, every table merged back into file order, with the
/// context definitions (for export). Each item: (seq, raw record).
pub fn raw_records(conn: &Connection, run_id: &str) -> Result<Vec<(i64, Value)>, DbError> {
    let mut out: Vec<(i64, Value)> = Vec::new();
    for spec in TABLES {
        load_table(conn, spec, run_id, |seq, fields, nulls, extra, sv| {
            out.push((
                seq,
                Value::Object(tables::rebuild(spec, sv, fields, nulls, extra)),
            ));
        })?;
    }
    for (seq, body) in load_bodies(conn, &sql::LOAD_RECORDS, run_id)? {
        out.push((seq, Value::Object(body)));
    }
    for (seq, id, ctx) in load_contexts(conn, run_id)? {
        out.push((
            seq,
            serde_json::json!({"schema_version": 4, "event_type": "infer.context", "context_id": id, "context": ctx}),
        ));
    }
    out.sort_by_key(|(seq, _)| *seq);
    Ok(out)
}

/// Loads a run for analysis: typed requests and samples, every other record decoded.
pub fn load_run(conn: &Connection, run_id: &str) -> Result<RunData, DbError> {
    let mut contexts = Contexts::default();
    for (_, id, ctx) in load_contexts(conn, run_id)? {
        contexts.insert(id, ctx);
    }
    let mut data = RunData {
        run_id: run_id.to_owned(),
        ..Default::default()
    };
    for spec in TABLES {
        match spec.table {
            "requests" => load_requests(conn, spec, run_id, &mut data.requests)?,
            "system_samples" => load_table(conn, spec, run_id, |seq, fields, _nulls, extra, _| {
                let mut s = SystemSample {
                    seq,
                    ..Default::default()
                };
                for ((key, _), v) in spec.fields.iter().zip(fields) {
                    if let Sql::Integer(i) = v {
                        match *key {
                            "timestamp_ns" => s.timestamp_ns = Some(*i),
                            "device_used_bytes" => s.device_used_bytes = Some(*i),
                            "process_rss_bytes" => s.process_rss_bytes = Some(*i),
                            _ => {}
                        }
                    }
                }
                if let Some(Value::Object(extra)) = extra.and_then(|e| crate::pyjson::parse(e).ok())
                {
                    for (k, v) in &extra {
                        s.apply(k, v);
                    }
                }
                data.samples.push(s);
            })?,
            _ => load_table(conn, spec, run_id, |seq, fields, nulls, extra, sv| {
                let raw = tables::rebuild(spec, sv, fields, nulls, extra);
                data.records
                    .push((seq, Value::Object(contexts.expand(&raw))));
            })?,
        }
    }
    for (seq, body) in load_bodies(conn, &sql::LOAD_RECORDS_ANALYSIS, run_id)? {
        data.records
            .push((seq, Value::Object(contexts.expand(&body))));
    }
    // Sequence numbers are unique within a run, so an unstable sort gives the
    // same order; a stable one would allocate half the requests again as
    // scratch (75 MB at 300,000 requests). The requests arrive in order anyway.
    data.records.sort_unstable_by_key(|(seq, _)| *seq);
    if !data.requests.is_sorted_by_key(|r| r.seq) {
        data.requests.sort_unstable_by_key(|r| r.seq);
    }
    data.samples.sort_unstable_by_key(|s| s.seq);
    Ok(data)
}

/// Runs at least this large are read by two connections at once, each one
/// half of the sequence range (below it a second connection costs more than
/// it saves).
const PARALLEL_LOAD_MIN: usize = 20_000;

/// Reads the analysis view of a run's requests (only the columns it needs).
/// Large runs are read in two halves on two connections at once, each half
/// filling its own part of the array, so neither a second copy nor a merge
/// is needed; the halves are checked against the count, and any mismatch
/// (the run replaced between the reads) falls back to one sequential read.
fn load_requests(
    conn: &Connection,
    spec: &TableSpec,
    run_id: &str,
    out: &mut Vec<Request>,
) -> Result<(), DbError> {
    let n: i64 = conn
        .query_row(
            sql::LOAD_REQUEST_COUNT.sql,
            rusqlite::named_params! {":run_id": run_id},
            |r| r.get(0),
        )
        .map_err(DbError::query(&sql::LOAD_REQUEST_COUNT))?;
    let n = usize::try_from(n).unwrap_or(0);
    // Room for every request at once: growing by doubling would hold two
    // copies of the array at its largest.
    out.reserve_exact(n);
    if n >= PARALLEL_LOAD_MIN {
        if let Some(second) = reader_beside(conn) {
            let half = n / 2;
            let mid: i64 = conn
                .query_row(
                    sql::LOAD_REQUEST_SEQ_AT.sql,
                    rusqlite::named_params! {":run_id": run_id, ":offset": half as i64},
                    |r| r.get(0),
                )
                .map_err(DbError::query(&sql::LOAD_REQUEST_SEQ_AT))?;
            out.resize(n, Request::empty(0));
            let (low, high) = out.split_at_mut(half);
            let (a, b) = std::thread::scope(|s| {
                let other =
                    s.spawn(move || read_requests(&second, spec, run_id, mid, i64::MAX, high));
                let mine = read_requests(conn, spec, run_id, i64::MIN, mid, low);
                (mine, other.join())
            });
            let b = b.map_err(|_| DbError::Other("a request reader panicked".into()))?;
            if a? == half && b? == n - half {
                return Ok(());
            }
            out.clear();
        }
    }
    out.resize(n, Request::empty(0));
    let got = read_requests(conn, spec, run_id, i64::MIN, i64::MAX, out)?;
    if got > n {
        return Err(DbError::Other(format!(
            "run '{run_id}' changed while it was read; run the command again"
        )));
    }
    out.truncate(got);
    Ok(())
}

/// A second, read-only connection to the database behind `conn`, when it
/// lives in a file (an in-memory database has no second connection).
fn reader_beside(conn: &Connection) -> Option<Connection> {
    use rusqlite::OpenFlags;
    let path = conn.path().filter(|p| !p.is_empty())?;
    let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let second = Connection::open_with_flags(path, flags).ok()?;
    second.busy_timeout(super::BUSY_TIMEOUT).ok()?;
    Some(second)
}

/// Fills `out`, blank requests (`Request::empty`), with the requests of
/// `from <= seq < to`, in order; returns how many there were (reading stops
/// when `out` is full).
fn read_requests(
    conn: &Connection,
    spec: &TableSpec,
    run_id: &str,
    from: i64,
    to: i64,
    out: &mut [Request],
) -> Result<usize, DbError> {
    use rusqlite::types::ValueRef;
    let q = &sql::LOAD_REQUESTS_ANALYSIS;
    let params = [
        (":run_id", ValueRef::Text(run_id.as_bytes())),
        (":from", ValueRef::Integer(from)),
        (":to", ValueRef::Integer(to)),
    ];
    let mut rows = Select::prepare(conn, q.sql, &params).map_err(DbError::query(q))?;
    let n = rows.columns();
    let text = |v: ValueRef| match v {
        ValueRef::Text(t) => Some(match std::str::from_utf8(t) {
            Ok(s) => s.to_owned(),
            Err(_) => String::from_utf8_lossy(t).into_owned(),
        }),
        _ => None,
    };
    // Values that repeat across requests are stored once.
    let mut interner = crate::model::Interner::default();
    let int = |v: ValueRef| match v {
        ValueRef::Integer(i) => Some(i),
        _ => None,
    };
    let real = |v: ValueRef| match v {
        ValueRef::Real(f) => Some(f),
        ValueRef::Integer(i) => Some(i as f64),
        _ => None,
    };
    // Text columns repeat row after row (one case, one status, ...): each
    // symbol column remembers its last value, so most rows share it without
    // hashing. Column order as in the query.
    let mut last: [Option<(Vec<u8>, Sym)>; 9] = Default::default();
    let mut cached = |slot: usize, v: ValueRef| -> Option<Sym> {
        let ValueRef::Text(t) = v else { return None };
        if let Some((bytes, sym)) = &last[slot] {
            if bytes.as_slice() == t {
                return Some(sym.clone());
            }
        }
        let sym = interner.get(&String::from_utf8_lossy(t));
        last[slot] = Some((t.to_vec(), sym.clone()));
        Some(sym)
    };
    let blank = Request::empty(0);
    // The fields whose null reads differently from their absence.
    let null_matters: i64 = spec
        .fields
        .iter()
        .enumerate()
        .filter(|(_, (key, _))| {
            let mut r = blank.clone();
            r.apply(key, &Value::Null);
            r != blank
        })
        .fold(0, |m, (i, _)| m | (1 << i));
    let mut filled = 0;
    while let Some(row) = rows.step().map_err(DbError::query(q))? {
        if filled == out.len() {
            return Ok(filled + 1); // more rows than counted: the caller starts over
        }
        // The slot holds a blank request: set the fields in place rather than
        // build a request and move it over the blank (which is then dropped).
        let r = &mut out[filled];
        r.seq = int(row.get(0)).unwrap_or_default();
        if let Some(s) = cached(0, row.get(1)) {
            r.case_key = s;
        }
        if let Some(s) = cached(1, row.get(2)) {
            r.status = s;
        }
        r.phase = cached(2, row.get(3));
        r.session_id = cached(3, row.get(4)).map_or(Scalar::Null, Scalar::Str);
        r.request_id = text(row.get(5)).map_or(Value::Null, Value::String);
        r.x_request_id = text(row.get(6)).map_or(Value::Null, Value::String);
        r.set_request_index(int(row.get(7)));
        r.set_started_at_ns(int(row.get(8)));
        r.set_ended_at_ns(int(row.get(9)));
        r.set_intended_at_ns(int(row.get(10)));
        r.set_e2e_latency_ms(real(row.get(11)));
        r.set_ttft_ms(real(row.get(12)));
        r.set_first_chunk_latency_ms(real(row.get(13)));
        r.set_dispatch_lag_ms(real(row.get(14)));
        if let ValueRef::Blob(b) = row.get(15) {
            r.chunk_gaps = tables::f64s(b).collect();
            r.chunk_list_len = u32::try_from(r.chunk_gaps.len()).unwrap_or(u32::MAX);
        }
        r.stream = int(row.get(16)).is_some_and(|i| i != 0);
        r.set_prompt_tokens(real(row.get(17)));
        r.set_output_tokens(real(row.get(18)));
        r.output_tokens_is_int = r.output_tokens().is_some();
        r.set_total_tokens(real(row.get(19)));
        if let Some(s) = cached(4, row.get(20)) {
            r.output_token_source = s;
        }
        if let Some(s) = cached(5, row.get(21)) {
            r.arrival_mode = s;
        }
        r.held_for_slot = int(row.get(22)).is_some_and(|i| i != 0);
        r.set_in_flight_at_dispatch(real(row.get(23)));
        if let Some(s) = cached(6, row.get(24)) {
            r.prompt_mode = s;
        }
        r.prompt_digest = cached(8, row.get(25)).map_or(Scalar::Null, Scalar::Str);
        r.prefix_group = int(row.get(26)).map_or(Scalar::Null, |i| Scalar::of(&Value::from(i)));
        r.set_shared_prefix_tokens(real(row.get(27)));
        r.task = cached(7, row.get(28));
        let nulls = int(row.get(n - 2)).unwrap_or(0);
        if nulls & null_matters != 0 {
            // A field present as null reads differently from an absent one (e.g. a
            // null case_id groups as "None", an absent one as "unknown").
            for (i, (key, _)) in spec.fields.iter().enumerate() {
                if nulls & null_matters & (1 << i) != 0 {
                    r.apply(key, &Value::Null);
                }
            }
        }
        if let Some(extra) = text(row.get(n - 1)) {
            if let Ok(Value::Object(extra)) = crate::pyjson::parse(&extra) {
                for (k, v) in &extra {
                    r.apply(k, v);
                }
            }
        }
        filled += 1;
    }
    Ok(filled)
}

/// Spans from span files attached to the run (`ingest --run RUN spans.jsonl`),
/// as stamped span records, files in attach order.
pub fn attached_spans(conn: &Connection, run_id: &str) -> Result<Vec<Value>, DbError> {
    let q = &sql::LOAD_ATTACHED_SPANS;
    let spec =
        tables::spec("vllm_spans").ok_or_else(|| DbError::Other("no vllm_spans table".into()))?;
    let mut stmt = conn.prepare(q.sql).map_err(DbError::query(q))?;
    let n = spec.fields.len();
    let mut rows = stmt
        .query(rusqlite::named_params! {":run_id": run_id})
        .map_err(DbError::query(q))?;
    let mut out = Vec::new();
    while let Some(row) = rows.next().map_err(DbError::query(q))? {
        let sv: Sql = row.get(1).map_err(DbError::query(q))?;
        let mut fields = Vec::with_capacity(n);
        for i in 0..n {
            fields.push(row.get::<_, Sql>(2 + i).map_err(DbError::query(q))?);
        }
        let nulls: i64 = row.get(2 + n).map_err(DbError::query(q))?;
        let extra: Option<String> = row.get(3 + n).map_err(DbError::query(q))?;
        out.push(Value::Object(tables::rebuild(
            spec,
            &sv,
            &fields,
            nulls,
            extra.as_deref(),
        )));
    }
    Ok(out)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    /// A run above the parallel threshold is read in two halves on two
    /// connections; the result is the sequential read, request for request.
    #[test]
    fn halves_read_at_once_equal_one_sequential_read() {
        let dir = tempfile::tempdir().unwrap();
        let artifact = dir.path().join("big.jsonl");
        let mut text = String::from(
            r#"{"event_type": "infer.session", "schema_version": 1, "session_id": "s", "status": "running", "timestamp_ns": 1}"#,
        );
        text.push('\n');
        let n = PARALLEL_LOAD_MIN + 1001;
        for i in 0..n {
            // Vary the symbols and leave some fields out or null.
            let status = ["ok", "ok", "error", "timeout"][i % 4];
            let ttft = if i % 7 == 0 {
                "null".to_owned()
            } else {
                format!("{}.25", i % 97)
            };
            text.push_str(&format!(
                r#"{{"event_type": "infer.request", "schema_version": 1, "case_id": "c{}", "phase": "measured", "status": "{status}", "request_id": "r{i}", "x_request_id": "x{i}", "request_index": {i}, "started_at_ns": {}, "ended_at_ns": {}, "ttft_ms": {ttft}, "chunk_interarrival_ms": [1.5, {i}]}}"#,
                i % 3,
                1_000 + i,
                2_000 + i
            ));
            text.push('\n');
        }
        std::fs::write(&artifact, text).unwrap();
        let db = dir.path().join("p.db");
        let mut conn = crate::db::open(&db, crate::db::Mode::ReadWrite).unwrap();
        let done =
            crate::ingest::ingest_artifact(&mut conn, &artifact, &Default::default()).unwrap();
        let data = load_run(&conn, &done.run_id).unwrap();
        assert_eq!(data.requests.len(), n);
        let spec = tables::spec("requests").unwrap();
        let mut one = vec![Request::empty(0); n];
        let got = read_requests(&conn, spec, &done.run_id, i64::MIN, i64::MAX, &mut one).unwrap();
        assert_eq!(got, n);
        assert_eq!(data.requests, one);
        assert_eq!(
            data.requests[n - 1].x_request_id,
            Value::from(format!("x{}", n - 1))
        );
        assert_eq!(data.requests[7].ttft_ms(), None);
        assert_eq!(data.requests[8].ttft_ms(), Some(8.25));
        assert!(data.requests.windows(2).all(|w| w[0].seq < w[1].seq));
    }

    /// A scratch ingest skips the digest only: the run reads back the same.
    #[test]
    fn an_ingest_without_digest_stores_the_same_run() {
        let dir = tempfile::tempdir().unwrap();
        let artifact = dir.path().join("a.jsonl");
        std::fs::write(
            &artifact,
            concat!(
                r#"{"event_type": "infer.session", "schema_version": 1, "session_id": "s1", "status": "running", "timestamp_ns": 1}"#,
                "\n",
                r#"{"event_type": "infer.request", "schema_version": 1, "case_id": "c", "phase": "measured", "status": "ok", "ttft_ms": 2.5}"#,
                "\n",
            ),
        )
        .unwrap();
        let mut loaded = Vec::new();
        for skip_digest in [false, true] {
            let mut conn = crate::db::open_memory().unwrap();
            let opts = crate::ingest::Options {
                skip_digest,
                ..Default::default()
            };
            let done = crate::ingest::ingest_artifact(&mut conn, &artifact, &opts).unwrap();
            let sha: Option<String> = conn
                .query_row("SELECT artifact_sha256 FROM runs", [], |r| r.get(0))
                .unwrap();
            let want = (!skip_digest).then(|| crate::util::sha256_file(&artifact).unwrap());
            assert_eq!(sha, want);
            let data = load_run(&conn, &done.run_id).unwrap();
            loaded.push((done.run_id, format!("{:?}", data.requests)));
        }
        assert_eq!(loaded[0], loaded[1]);
    }
}
