//! Writing a run's rows and reading them back (the only place that knows the
//! row layout of the typed tables besides the queries themselves).
use rusqlite::types::{Value as Sql, ValueRef};
use rusqlite::{Connection, OptionalExtension, Statement};
use serde_json::{Map, Value};

use super::pack::{self, Fields, Packer};
use super::raw::{Binder, Insert, Select};
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

/// Rows of a typed table stored by one statement. SQLite seeks a table's
/// b-trees from their roots once per statement run and then appends each
/// further row where the last one went: a request row stored alone cost a
/// descent of the `(run_id, seq)` key from the root, cursors opened and
/// closed, and a statement start and halt.
const ROWS_PER_INSERT: usize = 32;

/// `sql`, an `INSERT ... VALUES (:a, :b, ...)` of one row, made to insert
/// `rows` rows: the tuple repeated with positional parameters (a named one
/// names a single parameter however often it appears). None when the text
/// does not end in such a tuple.
fn insert_of_rows(sql: &str, rows: usize) -> Option<String> {
    let at = sql.rfind("VALUES")? + "VALUES".len();
    let tuple = sql[at..].trim().trim_end_matches(';').trim_end();
    let names = tuple.strip_prefix('(')?.strip_suffix(')')?;
    let params = names.split(',').count();
    let plain = |n: &str| {
        let n = n.trim();
        n.len() > 1
            && n.starts_with(':')
            && n[1..]
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_')
    };
    if !names.split(',').all(plain) {
        return None;
    }
    let one = format!("({})", vec!["?"; params].join(", "));
    Some(format!("{} {}", &sql[..at], vec![one; rows].join(",\n")))
}

/// Prepared inserts for one ingest transaction.
pub struct Writer<'c> {
    run_id: String,
    /// One per typed table ([`TABLES`]' order), then `records`.
    targets: Vec<Target<'c>>,
    conn: &'c Connection,
    context: Statement<'c>,
    pack: RequestPacker<'c>,
    /// The fact lines of the execution import's bulk records.
    facts: super::execution::FactWriter<'c>,
    /// Whether every record is stored (a kept database), or only what a
    /// report reads ([`Writer::report_only`]).
    keep_all: bool,
}

/// What no report reads (artifact.md §3.7): `infer.first_content`,
/// `infer.phase_start`, `infer.summary`. A scratch database for one report
/// leaves them out; a kept one stores them like every record.
fn unread_by_report(row: &Row) -> bool {
    let event_type = match row.table {
        Some(t) => Some(TABLES[t].event_type),
        None => row.event_type.as_deref(),
    };
    matches!(
        event_type,
        Some("infer.first_content") | Some("infer.phase_start") | Some("infer.summary")
    )
}

/// A table rows are written to, and the rows waiting for it.
struct Target<'c> {
    /// None for the generic `records` table.
    spec: Option<&'static TableSpec>,
    /// Its insert of one row, and of [`ROWS_PER_INSERT`] rows (prepared
    /// when first needed).
    one: Insert<'c>,
    many: Option<Insert<'c>>,
    /// Rows not yet written, in order.
    queued: Vec<(i64, Row)>,
}

impl<'c> Target<'c> {
    /// The target of `spec`'s rows (`records` for None), its one-row
    /// insert prepared.
    fn new(conn: &'c Connection, spec: Option<&'static TableSpec>) -> Result<Self, DbError> {
        let q = Self::query_of(spec);
        Ok(Target {
            spec,
            one: Insert::prepare(conn, q.sql).map_err(DbError::query(q))?,
            many: None,
            queued: Vec::new(),
        })
    }

    fn query_of(spec: Option<&'static TableSpec>) -> &'static Query {
        spec.map_or(&sql::INGEST_INSERT_RECORD, |s| &s.insert)
    }

    fn query(&self) -> &'static Query {
        Self::query_of(self.spec)
    }
}

/// Runs `insert` once for `rows` (as many as its rows of parameters).
fn store_rows(
    insert: &mut Insert,
    spec: Option<&TableSpec>,
    run_id: &str,
    rows: &[(i64, Row)],
) -> rusqlite::Result<()> {
    match spec {
        Some(spec) => {
            let file_id = spec.table == "vllm_spans";
            insert.run_with(|b| {
                for (seq, row) in rows {
                    push_values(b, run_id, file_id, *seq, row);
                }
            })
        }
        None => insert.run_with(|b| {
            for (seq, row) in rows {
                b.push(ValueRef::Text(run_id.as_bytes()));
                b.push(ValueRef::Integer(*seq));
                b.push(
                    row.event_type
                        .as_deref()
                        .map_or(ValueRef::Null, |e| ValueRef::Text(e.as_bytes())),
                );
                b.push(row.body.bind(&row.line));
            }
        }),
    }
}

/// Stores a run's pack segments in order, numbering them from 0.
struct SegmentWriter<'c> {
    insert: Insert<'c>,
    next: i64,
}

impl<'c> SegmentWriter<'c> {
    fn new(conn: &'c Connection) -> Result<Self, DbError> {
        let q = &sql::INGEST_INSERT_REQUEST_PACK;
        Ok(SegmentWriter {
            insert: Insert::prepare(conn, q.sql).map_err(DbError::query(q))?,
            next: 0,
        })
    }

    /// Stores the next segment: its rows and packed bytes.
    fn store(&mut self, run_id: &str, rows: u64, body: &[u8]) -> Result<(), DbError> {
        let q = &sql::INGEST_INSERT_REQUEST_PACK;
        self.insert
            .run([
                ValueRef::Text(run_id.as_bytes()),
                ValueRef::Integer(self.next),
                ValueRef::Integer(rows as i64),
                ValueRef::Blob(body),
            ])
            .map_err(DbError::query(q))?;
        self.next += 1;
        Ok(())
    }
}

/// Packs the analysis columns of the request rows as they are written, and
/// stores each segment as soon as it is full.
struct RequestPacker<'c> {
    /// The `requests` insert among the writer's.
    table: usize,
    segments: SegmentWriter<'c>,
    /// Where each packed column's value is in a [`Row`], and whether the
    /// column is REAL (where SQLite stores an integer as a real, so the pack
    /// does).
    source: Vec<(Source, bool)>,
    packer: Packer,
}

/// Where a column's value comes from in a request [`Row`].
#[derive(Debug, Clone, Copy)]
enum Source {
    Seq,
    CaseKey,
    StatusKey,
    SchemaVersion,
    Field(usize),
    Nulls,
    Extra,
}

impl<'c> RequestPacker<'c> {
    fn new(conn: &'c Connection, table: usize) -> Result<Self, DbError> {
        let spec = &TABLES[table];
        let names = analysis_columns(conn)?;
        let mut source = Vec::with_capacity(names.len());
        for name in &names {
            let from = match name.as_str() {
                "seq" => Source::Seq,
                "case_key" => Source::CaseKey,
                "status_key" => Source::StatusKey,
                "schema_version" => Source::SchemaVersion,
                "nulls" => Source::Nulls,
                "extra" => Source::Extra,
                field => Source::Field(
                    spec.fields
                        .iter()
                        .position(|(key, _)| *key == field)
                        .ok_or_else(|| {
                            DbError::Other(format!("column {name} of the analysis is not written"))
                        })?,
                ),
            };
            let real = matches!(from, Source::Field(i) if spec.fields[i].1 == tables::Col::Real);
            source.push((from, real));
        }
        Ok(RequestPacker {
            table,
            segments: SegmentWriter::new(conn)?,
            source,
            packer: Packer::new(&names),
        })
    }

    /// Stores a segment the packer closed.
    fn store(&mut self, run_id: &str, segment: Option<(u64, Vec<u8>)>) -> Result<(), DbError> {
        match segment {
            Some((rows, body)) => self.segments.store(run_id, rows, &body),
            None => Ok(()),
        }
    }

    /// Packs a request row: the values its insert binds.
    fn push(&mut self, seq: i64, row: &Row) {
        let line = row.line.as_str();
        self.packer.push(self.source.iter().map(|&(from, real)| {
            let v = match from {
                Source::Seq => ValueRef::Integer(seq),
                Source::CaseKey => row
                    .derived
                    .as_ref()
                    .map_or(ValueRef::Null, |d| d.0.bind(line)),
                Source::StatusKey => row
                    .derived
                    .as_ref()
                    .map_or(ValueRef::Null, |d| d.1.bind(line)),
                Source::SchemaVersion => row.schema_version.bind(line),
                Source::Field(i) => row.fields.get(i).map_or(ValueRef::Null, |f| f.bind(line)),
                Source::Nulls => ValueRef::Integer(row.nulls),
                Source::Extra => row
                    .extra
                    .as_deref()
                    .map_or(ValueRef::Null, |e| ValueRef::Text(e.as_bytes())),
            };
            match v {
                ValueRef::Integer(i) if real => ValueRef::Real(i as f64),
                v => v,
            }
        }));
    }
}

/// The columns of the analysis query (queries/load/requests_analysis.sql),
/// which a pack holds.
fn analysis_columns(conn: &Connection) -> Result<Vec<String>, DbError> {
    let q = &sql::LOAD_REQUESTS_ANALYSIS;
    let stmt = conn.prepare(q.sql).map_err(DbError::query(q))?;
    Ok(stmt.column_names().into_iter().map(str::to_owned).collect())
}

/// Binds the values a typed table's insert takes for `row`, in parameter
/// order (text borrowed from the row's line); `file_id` for `vllm_spans`,
/// whose rows have one (NULL: not from a collector's file).
fn push_values<'r>(b: &mut Binder<'_, 'r>, run_id: &'r str, file_id: bool, seq: i64, row: &'r Row) {
    let line = row.line.as_str();
    b.push(ValueRef::Text(run_id.as_bytes()));
    b.push(ValueRef::Integer(seq));
    if file_id {
        b.push(ValueRef::Null);
    }
    if let Some((case_key, status)) = &row.derived {
        b.push(case_key.bind(line));
        b.push(status.bind(line));
    }
    b.push(row.schema_version.bind(line));
    for f in &row.fields {
        b.push(f.bind(line));
    }
    b.push(ValueRef::Integer(row.nulls));
    b.push(
        row.extra
            .as_deref()
            .map_or(ValueRef::Null, |e| ValueRef::Text(e.as_bytes())),
    );
}

impl<'c> Writer<'c> {
    pub fn new(conn: &'c Connection, run_id: &str) -> Result<Self, DbError> {
        let targets = TABLES
            .iter()
            .map(Some)
            .chain([None])
            .map(|spec| Target::new(conn, spec))
            .collect::<Result<Vec<_>, _>>()?;
        let table = TABLES
            .iter()
            .position(|t| t.table == "requests")
            .ok_or_else(|| DbError::Other("no requests table".into()))?;
        let pack = RequestPacker::new(conn, table)?;
        Ok(Writer {
            run_id: run_id.to_owned(),
            pack,
            targets,
            conn,
            facts: super::execution::FactWriter::new(conn)?,
            keep_all: true,
            context: conn
                .prepare(sql::INGEST_INSERT_CONTEXT.sql)
                .map_err(DbError::query(&sql::INGEST_INSERT_CONTEXT))?,
        })
    }

    /// The writer of a scratch database for one report (`infer analyze`):
    /// the records no report reads are not stored. The same ingest, with
    /// this one filter; nothing else outlives the command.
    pub fn report_only(mut self, yes: bool) -> Self {
        self.keep_all = !yes;
        self
    }

    pub fn context(&mut self, seq: i64, id: &str, context: &Value) -> Result<(), DbError> {
        self.facts.context(id, context);
        self.context
            .execute(rusqlite::params![self.run_id, seq, id, context.to_string()])
            .map_err(DbError::query(&sql::INGEST_INSERT_CONTEXT))?;
        Ok(())
    }

    /// Stores a row the fast path already encoded. Rows wait until
    /// [`ROWS_PER_INSERT`] of one table can be stored by one statement (or
    /// [`Writer::finish`]); values are bound in place (text borrowed from the
    /// rows' lines), not collected into a parameter list.
    pub fn row(&mut self, seq: i64, row: Row) -> Result<(), DbError> {
        if !self.keep_all && unread_by_report(&row) {
            return Ok(());
        }
        let slot = row.table.unwrap_or(TABLES.len());
        if row.table.is_none() {
            let body = match &row.body {
                Field::Span(s, e) => row.line.get(*s as usize..*e as usize),
                Field::Text(t) => Some(t.as_str()),
                _ => None,
            };
            if let Some(body) = body {
                self.facts.note(seq, row.event_type.as_deref(), body);
            }
        }
        let target = self
            .targets
            .get_mut(slot)
            .ok_or_else(|| DbError::Other(format!("no table {slot}")))?;
        target.queued.push((seq, row));
        if target.queued.len() >= ROWS_PER_INSERT {
            self.store_queued(slot)?;
        }
        Ok(())
    }

    /// Stores the rows waiting for target `slot`: one statement for a full
    /// batch, one per row otherwise.
    fn store_queued(&mut self, slot: usize) -> Result<(), DbError> {
        let target = &mut self.targets[slot];
        let query = target.query();
        let rows = std::mem::take(&mut target.queued);
        if rows.len() == ROWS_PER_INSERT {
            if target.many.is_none() {
                let sql = insert_of_rows(query.sql, ROWS_PER_INSERT).ok_or_else(|| {
                    DbError::Other(format!("{}: not a one-row VALUES insert", query.name))
                })?;
                target.many =
                    Some(Insert::prepare(self.conn, &sql).map_err(DbError::query(query))?);
            }
            if let Some(many) = target.many.as_mut() {
                store_rows(many, target.spec, &self.run_id, &rows)
                    .map_err(DbError::query(query))?;
            }
        } else {
            for row in &rows {
                store_rows(
                    &mut target.one,
                    target.spec,
                    &self.run_id,
                    std::slice::from_ref(row),
                )
                .map_err(DbError::query(query))?;
            }
        }
        if slot == self.pack.table {
            for (seq, row) in &rows {
                self.pack.push(*seq, row);
                let full = self.pack.packer.full();
                self.pack.store(&self.run_id, full)?;
            }
        }
        // Handed back empty, so the queue keeps its capacity.
        let mut rows = rows;
        rows.clear();
        self.targets[slot].queued = rows;
        Ok(())
    }

    /// Ends the writing: stores the rows still waiting, then the last
    /// segment of the request rows' pack.
    pub fn finish(mut self) -> Result<(), DbError> {
        for slot in 0..self.targets.len() {
            self.store_queued(slot)?;
        }
        let rest = self.pack.packer.rest();
        self.pack.store(&self.run_id, rest)?;
        self.facts.finish(&self.run_id)
    }

    /// Stores a record that took the general path: encoded into the same
    /// [`Row`](crate::ingest::fast::Row) the fast path builds, then stored by [`Writer::row`].
    pub fn record(
        &mut self,
        seq: i64,
        raw: &Map<String, Value>,
        transport: bool,
    ) -> Result<(), DbError> {
        self.row(seq, row_of(seq, raw, transport))
    }
}

/// A record that took the general path, encoded into the same
/// [`Row`](crate::ingest::fast::Row) the fast path builds.
fn row_of(seq: i64, raw: &Map<String, Value>, transport: bool) -> Row {
    match table_for(raw, transport) {
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
            // One of each per request, and never read by the analysis but
            // for the execution block's map (load_dispatches).
            "dispatches" | "first_contents" => {}
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
    super::execution::load(conn, run_id, &contexts, &mut data)?;
    if !data.execution_facts.is_empty() {
        data.execution_contexts = contexts
            .entries()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
    }
    data.records.sort_unstable_by_key(|(seq, _)| *seq);
    if crate::analysis::execution::needs_dispatches(&data) {
        data.dispatches = load_dispatches(conn, run_id)?;
    }
    // The requests come in order (load_requests).
    data.samples.sort_unstable_by_key(|s| s.seq);
    Ok(data)
}

/// A run's `infer.dispatch` records, each cut to the fields the execution
/// block reads (`event_type`, `request_id`, `case_id`, `x_request_id`):
/// there is one per request, and only this map needs them.
pub fn load_dispatches(conn: &Connection, run_id: &str) -> Result<Vec<(i64, Value)>, DbError> {
    let spec =
        tables::spec("dispatches").ok_or_else(|| DbError::Other("no dispatches table".into()))?;
    let mut out = Vec::new();
    load_table(conn, spec, run_id, |seq, fields, nulls, extra, sv| {
        let mut m = tables::rebuild(spec, sv, fields, nulls, extra);
        m.retain(|k, _| {
            matches!(
                k.as_str(),
                "event_type" | "request_id" | "case_id" | "x_request_id"
            )
        });
        out.push((seq, Value::Object(m)));
    })?;
    Ok(out)
}

/// The record types a migration gave typed tables to, moved there from
/// `records` (migrations/0012): each body split as an ingest splits it
/// ([`table_for`], [`split`]), so a moved row is the row an ingest of the
/// same record writes now. A body that does not parse as an object stays
/// where it is (export reads both tables). Returns the rows moved.
pub fn move_to_typed_tables(conn: &Connection, event_types: &[&str]) -> Result<u64, DbError> {
    let (select, delete) = (&sql::MIGRATE_RECORDS_OF_TYPE, &sql::MIGRATE_DELETE_RECORD);
    let mut moved = 0u64;
    for event_type in event_types {
        let rows: Vec<(String, i64, String)> = conn
            .prepare(select.sql)
            .and_then(|mut s| {
                s.query_map(rusqlite::named_params! {":event_type": event_type}, |r| {
                    Ok((r.get(0)?, r.get(1)?, r.get(2)?))
                })?
                .collect()
            })
            .map_err(DbError::query(select))?;
        let mut drop_row = conn.prepare(delete.sql).map_err(DbError::query(delete))?;
        let mut inserts: Vec<Option<Insert>> = (0..TABLES.len()).map(|_| None).collect();
        for (run_id, seq, body) in rows {
            // The body is the line as read (or, from the general path, the
            // record as JSON): prepared as an ingest prepares a line. A body
            // the general path wrote may spell NaN or a big integer as its
            // marked string (pyjson's sentinels): only that path reads it so.
            let marked = body.contains("\\u0001");
            let prepared = match marked {
                false => crate::ingest::fast::prepare(body),
                true => match crate::pyjson::parse(&body) {
                    Ok(v) => crate::ingest::fast::Prepared::Value(v),
                    Err(_) => continue,
                },
            };
            let row = match prepared {
                crate::ingest::fast::Prepared::Row(row) => *row,
                crate::ingest::fast::Prepared::Value(Value::Object(raw)) => {
                    // (Whether it came by the transport matters only to
                    // `infer.request`, which is not moved.)
                    row_of(seq, &raw, false)
                }
                _ => continue,
            };
            let Some(t) = row.table.filter(|&t| TABLES[t].table != "requests") else {
                continue;
            };
            let spec = &TABLES[t];
            let insert = match &mut inserts[t] {
                Some(insert) => insert,
                slot => slot.insert(
                    Insert::prepare(conn, spec.insert.sql).map_err(DbError::query(&spec.insert))?,
                ),
            };
            store_rows(insert, Some(spec), &run_id, &[(seq, row)])
                .map_err(DbError::query(&spec.insert))?;
            drop_row
                .execute(rusqlite::named_params! {":run_id": run_id, ":seq": seq})
                .map_err(DbError::query(delete))?;
            moved += 1;
        }
    }
    Ok(moved)
}

/// Runs at least this large are read by two connections at once, each one
/// half of the sequence range (below it a second connection costs more than
/// it saves).
const PARALLEL_LOAD_MIN: usize = 20_000;

/// Reads the analysis view of a run's requests (only the columns it needs):
/// from the run's pack when it has one that serves ([`read_pack`]), else
/// from the rows. Large runs are read from the rows in two halves on two
/// connections at once, each half filling its own part of the array, so
/// neither a second copy nor a merge is needed; the halves are checked
/// against the count, and any mismatch (the run replaced between the reads)
/// falls back to one sequential read.
fn load_requests(
    conn: &Connection,
    spec: &TableSpec,
    run_id: &str,
    out: &mut Vec<Request>,
) -> Result<(), DbError> {
    if read_pack(conn, spec, run_id, out, rayon::current_num_threads())? {
        return Ok(());
    }
    let n: i64 = conn
        .query_row(
            sql::LOAD_REQUEST_COUNT.sql,
            rusqlite::named_params! {":run_id": run_id},
            |r| r.get(0),
        )
        .map_err(DbError::query(&sql::LOAD_REQUEST_COUNT))?;
    let n = usize::try_from(n).unwrap_or(0);
    blank_slots(out, n);
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
            let (low, high) = out.split_at_mut(half);
            let (a, b) = std::thread::scope(|s| {
                let other =
                    s.spawn(move || read_requests(&second, spec, run_id, mid, i64::MAX, high));
                let mine = read_requests(conn, spec, run_id, i64::MIN, mid, low);
                (mine, other.join())
            });
            let b = b.map_err(|_| DbError::Other("a request reader panicked".into()))?;
            if a? == half && b? == n - half {
                in_order(out);
                return Ok(());
            }
            blank_slots(out, n);
        }
    }
    let got = read_requests(conn, spec, run_id, i64::MIN, i64::MAX, out)?;
    if got > n {
        return Err(DbError::Other(format!(
            "run '{run_id}' changed while it was read; run the command again"
        )));
    }
    out.truncate(got);
    in_order(out);
    Ok(())
}

/// Makes `out` n blank requests, written by the pool's threads (growing by
/// doubling would hold two copies of the array at its largest). The cost is
/// first touching the memory, 90 MB for 300,000 requests.
fn blank_slots(out: &mut Vec<Request>, n: usize) {
    use rayon::prelude::*;
    out.clear();
    // The run's one large array: on huge pages, first touching it costs
    // a sixth as much (see `HugePages`).
    let _huge = crate::util::HugePages::allow();
    // Each job clones a blank of its own: one shared blank's symbols would
    // have both threads counting references on the same few cache lines,
    // here and again when the fill replaces them.
    out.par_extend(
        (0..n)
            .into_par_iter()
            .map_init(|| Request::empty(0), |blank, _| blank.clone()),
    );
}

/// Rows read in key order arrive sorted by sequence number; sorted anyway
/// should they not (a pack is checked as it is read instead).
fn in_order(requests: &mut [Request]) {
    if !requests.is_sorted_by_key(|r| r.seq) {
        requests.sort_unstable_by_key(|r| r.seq);
    }
}

/// The first and last sequence numbers of a run's request rows (none when
/// it has no rows).
fn seq_range(conn: &Connection, run_id: &str) -> Result<Option<(i64, i64)>, DbError> {
    let q = &sql::LOAD_REQUEST_SEQ_RANGE;
    let (first, last): (Option<i64>, Option<i64>) = conn
        .query_row(q.sql, rusqlite::named_params! {":run_id": run_id}, |r| {
            Ok((r.get(0)?, r.get(1)?))
        })
        .map_err(DbError::query(q))?;
    Ok(first.zip(last))
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
    let q = &sql::LOAD_REQUESTS_ANALYSIS;
    let mut rows = analysis_rows(conn, run_id, from, to)?;
    let n = rows.columns();
    if n != ANALYSIS_COLUMNS {
        return Err(DbError::Other(format!(
            "{} reads {n} columns, not {ANALYSIS_COLUMNS}",
            q.name
        )));
    }
    let mut fill = Fill::new(spec);
    let mut filled = 0;
    while let Some(row) = rows.step().map_err(DbError::query(q))? {
        if filled == out.len() {
            return Ok(filled + 1); // more rows than counted: the caller starts over
        }
        let mut values = [ValueRef::Null; ANALYSIS_COLUMNS];
        for (i, v) in values.iter_mut().enumerate() {
            *v = row.get(i);
        }
        // The slot holds a blank request: set the fields in place rather than
        // build a request and move it over the blank (which is then dropped).
        fill.fill(&mut out[filled], &values, u64::MAX);
        filled += 1;
    }
    Ok(filled)
}

/// The analysis columns of a run's requests with `from <= seq < to`, in order.
fn analysis_rows<'c>(
    conn: &'c Connection,
    run_id: &str,
    from: i64,
    to: i64,
) -> Result<Select<'c>, DbError> {
    let q = &sql::LOAD_REQUESTS_ANALYSIS;
    let params = [
        (":run_id", ValueRef::Text(run_id.as_bytes())),
        (":from", ValueRef::Integer(from)),
        (":to", ValueRef::Integer(to)),
    ];
    Select::prepare(conn, q.sql, &params).map_err(DbError::query(q))
}

/// The number of columns of queries/load/requests_analysis.sql.
const ANALYSIS_COLUMNS: usize = 31;

/// The analysis columns of one request read from the rows, as a [`Fill`]
/// reads them (or a pack's `pack::Row`).
impl<'v> Fields<'v> for [ValueRef<'v>; ANALYSIS_COLUMNS] {
    fn int(&self, i: usize) -> Option<i64> {
        match self.get(i) {
            Some(ValueRef::Integer(n)) => Some(*n),
            _ => None,
        }
    }

    fn real(&self, i: usize) -> Option<f64> {
        match self.get(i) {
            Some(ValueRef::Real(f)) => Some(*f),
            Some(ValueRef::Integer(n)) => Some(*n as f64),
            _ => None,
        }
    }

    fn text(&self, i: usize) -> Option<&'v [u8]> {
        match self.get(i) {
            Some(ValueRef::Text(t)) => Some(t),
            _ => None,
        }
    }

    fn blob(&self, i: usize) -> Option<&'v [u8]> {
        match self.get(i) {
            Some(ValueRef::Blob(b)) => Some(b),
            _ => None,
        }
    }
}

/// Sets a blank request's fields from the values of the analysis columns
/// (queries/load/requests_analysis.sql, in its order), read from the rows or
/// from a pack.
struct Fill<'s> {
    spec: &'s TableSpec,
    /// Values that repeat across requests are stored once.
    interner: crate::model::Interner,
    /// Text columns repeat row after row (one case, one status, ...): each
    /// symbol column remembers its last value, so most rows share it without
    /// hashing.
    last: [Option<(Vec<u8>, Sym)>; 9],
    /// The fields whose null reads differently from their absence.
    null_matters: i64,
    /// The first and last sequence numbers filled, and whether each was
    /// above the one before.
    seqs: Option<(i64, i64)>,
    increasing: bool,
}

impl<'s> Fill<'s> {
    fn new(spec: &'s TableSpec) -> Self {
        let blank = Request::empty(0);
        let null_matters = spec
            .fields
            .iter()
            .enumerate()
            .filter(|(_, (key, _))| {
                let mut r = blank.clone();
                r.apply(key, &Value::Null);
                r != blank
            })
            .fold(0, |m, (i, _)| m | (1 << i));
        Fill {
            spec,
            interner: Default::default(),
            last: Default::default(),
            null_matters,
            seqs: None,
            increasing: true,
        }
    }

    /// A fill of the same table with nothing interned yet (one per thread).
    fn fresh(&self) -> Self {
        Fill {
            spec: self.spec,
            interner: Default::default(),
            last: Default::default(),
            null_matters: self.null_matters,
            seqs: None,
            increasing: true,
        }
    }

    /// The symbol of text `t`, remembered in `slot`; `unchanged` when `t` is
    /// known to be the row before's.
    fn sym(&mut self, slot: usize, t: Option<&[u8]>, unchanged: bool) -> Option<Sym> {
        let t = t?;
        if let Some((bytes, sym)) = &self.last[slot] {
            // Unchanged text is the row before's, which this slot holds.
            if unchanged || bytes.as_slice() == t {
                return Some(sym.clone());
            }
        }
        let sym = self.interner.get(&String::from_utf8_lossy(t));
        self.last[slot] = Some((t.to_vec(), sym.clone()));
        Some(sym)
    }

    /// `changed`: a bit per column, clear when the value is the row before's
    /// (a pack says so; rows read through SQLite have every bit set).
    fn fill<'v>(&mut self, r: &mut Request, v: &impl Fields<'v>, changed: u64) {
        let unchanged = |column: usize| changed & (1 << column) == 0;
        let text = |i: usize| {
            v.text(i).map(|t| match std::str::from_utf8(t) {
                Ok(s) => s.to_owned(),
                Err(_) => String::from_utf8_lossy(t).into_owned(),
            })
        };
        r.seq = v.int(0).unwrap_or_default();
        self.seqs = Some(match self.seqs {
            None => (r.seq, r.seq),
            Some((first, last)) => {
                self.increasing &= r.seq > last;
                (first, r.seq)
            }
        });
        if let Some(s) = self.sym(0, v.text(1), unchanged(1)) {
            r.case_key = s;
        }
        if let Some(s) = self.sym(1, v.text(2), unchanged(2)) {
            r.status = s;
        }
        r.phase = self.sym(2, v.text(3), unchanged(3));
        r.session_id = self
            .sym(3, v.text(4), unchanged(4))
            .map_or(Scalar::Null, Scalar::Str);
        r.request_id = text(5).map_or(Value::Null, Value::String);
        r.x_request_id = text(6).map_or(Value::Null, Value::String);
        r.set_request_index(v.int(7));
        r.set_started_at_ns(v.int(8));
        r.set_ended_at_ns(v.int(9));
        r.set_intended_at_ns(v.int(10));
        r.set_e2e_latency_ms(v.real(11));
        r.set_ttft_ms(v.real(12));
        r.set_first_chunk_latency_ms(v.real(13));
        r.set_dispatch_lag_ms(v.real(14));
        if let Some(b) = v.blob(15) {
            r.chunk_gaps = tables::f64s(b).collect();
            r.chunk_list_len = u32::try_from(r.chunk_gaps.len()).unwrap_or(u32::MAX);
        }
        r.stream = v.int(16).is_some_and(|i| i != 0);
        r.set_prompt_tokens(v.real(17));
        r.set_output_tokens(v.real(18));
        r.output_tokens_is_int = r.output_tokens().is_some();
        r.set_total_tokens(v.real(19));
        // An integer column past 2^53 reads inexactly as a float: the
        // request keeps its exact value too.
        for (column, key) in [
            (18, "output_tokens"),
            (19, "total_tokens"),
            (23, "in_flight_at_dispatch"),
        ] {
            if let Some(i) = v.int(column).filter(|i| i.unsigned_abs() > 1 << 53) {
                r.apply(key, &Value::from(i));
            }
        }
        if let Some(s) = self.sym(4, v.text(20), unchanged(20)) {
            r.output_token_source = s;
        }
        if let Some(s) = self.sym(5, v.text(21), unchanged(21)) {
            r.arrival_mode = s;
        }
        r.held_for_slot = v.int(22).is_some_and(|i| i != 0);
        r.set_in_flight_at_dispatch(v.real(23));
        if let Some(s) = self.sym(6, v.text(24), unchanged(24)) {
            r.prompt_mode = s;
        }
        r.prompt_digest = self
            .sym(8, v.text(25), unchanged(25))
            .map_or(Scalar::Null, Scalar::Str);
        r.prefix_group = v
            .int(26)
            .map_or(Scalar::Null, |i| Scalar::of(&Value::from(i)));
        r.set_shared_prefix_tokens(v.real(27));
        r.task = self.sym(7, v.text(28), unchanged(28));
        let nulls = v.int(29).unwrap_or(0);
        if nulls & self.null_matters != 0 {
            // A field present as null reads differently from an absent one (e.g. a
            // null case_id groups as "None", an absent one as "unknown").
            for (i, (key, _)) in self.spec.fields.iter().enumerate() {
                if nulls & self.null_matters & (1 << i) != 0 {
                    r.apply(key, &Value::Null);
                }
            }
        }
        // An integer column holds text only for an integer past i64
        // (`Col::AnyInt`): the request reads it as it would from `extra`.
        for (column, key) in [
            (7, "request_index"),
            (8, "started_at_ns"),
            (9, "ended_at_ns"),
            (10, "intended_at_ns"),
            (17, "prompt_tokens"),
            (18, "output_tokens"),
            (19, "total_tokens"),
            (23, "in_flight_at_dispatch"),
            (26, "prefix_group"),
            (27, "shared_prefix_tokens"),
        ] {
            if let Some(wide) = v.text(column).and_then(tables::wide_int) {
                r.apply(key, &wide);
            }
        }
        if let Some(extra) = text(30) {
            if let Ok(Value::Object(extra)) = crate::pyjson::parse(&extra) {
                for (k, v) in &extra {
                    r.apply(k, v);
                }
            }
        }
    }
}

/// Fills `out` from the run's pack, when it has one that serves: false when
/// it has none, or its segments do not hold the run's rows in the layout
/// read here (`out` may then be partly filled; the caller blanks it again
/// and reads the rows).
///
/// The segments are shared out in runs of about equal rows among up to
/// `readers` readers (at most [`MAX_PACK_READERS`]), on
/// connections of their own, each decoding the bodies as it steps through
/// them, straight from SQLite's buffer into its part of `out`: no body is
/// copied or held past its decoding (at 300,000 requests, 32 MB of fresh
/// memory fewer to touch), and the reads are spread over the threads too.
/// Each reader reads within a transaction of its own and checks the run's
/// stamp (`queries/load/run_stamp.sql`) against the first's, so that all read
/// the same ingest of the run.
fn read_pack(
    conn: &Connection,
    spec: &TableSpec,
    run_id: &str,
    out: &mut Vec<Request>,
    readers: usize,
) -> Result<bool, DbError> {
    let _snapshot = Snapshot::begin(conn)?;
    let q = &sql::LOAD_REQUEST_PACK_SEGMENTS;
    let mut stmt = conn.prepare(q.sql).map_err(DbError::query(q))?;
    let listed: Vec<(i64, i64)> = stmt
        .query_map(rusqlite::named_params! {":run_id": run_id}, |r| {
            Ok((r.get(0)?, r.get(1)?))
        })
        .and_then(|rows| rows.collect())
        .map_err(DbError::query(q))?;
    // Segments numbered 0, 1, ... in order, each with its row count.
    let mut segments = Vec::with_capacity(listed.len());
    for (i, (number, rows)) in listed.into_iter().enumerate() {
        match usize::try_from(rows) {
            Ok(rows) if number == i as i64 => segments.push(rows),
            _ => return Ok(false),
        }
    }
    if segments.is_empty() {
        return Ok(false);
    }
    let stamp = run_stamp(conn, run_id)?;
    let names = analysis_columns(conn)?;
    if names.len() != ANALYSIS_COLUMNS {
        // A fill reads the columns by position.
        return Ok(false);
    }
    let slots = segments.iter().sum();
    let wanted = readers.clamp(1, MAX_PACK_READERS).min(segments.len());
    // The slots are blanked while this thread reads the run's first and
    // last sequence numbers and opens the other readers' connections.
    let (mut ends, mut readers) = (Ok(None), Vec::new());
    rayon::in_place_scope(|s| {
        s.spawn(|_| blank_slots(out, slots));
        ends = seq_range(conn, run_id);
        readers = (1..wanted).map_while(|_| reader_beside(conn)).collect();
    });
    let Some(ends) = ends? else {
        return Ok(false);
    };
    let groups = runs_of_rows(&segments, readers.len() + 1);
    let mut parts = Vec::with_capacity(groups.len());
    let mut rest = &mut out[..];
    for group in &groups {
        let (part, tail) = rest.split_at_mut(segments[group.clone()].iter().sum());
        parts.push(part);
        rest = tail;
    }
    let template = Fill::new(spec);
    let job = |conn: &Connection, group: std::ops::Range<usize>, part: &mut [Request]| {
        let read = Segments {
            conn,
            template: &template,
            names: &names,
            run_id,
            rows: &segments,
        };
        read.read_into(group, part)
    };
    let mut jobs = groups.into_iter().zip(parts);
    let Some((first, first_part)) = jobs.next() else {
        return Ok(false);
    };
    let read: Vec<Result<Option<(i64, i64)>, DbError>> = std::thread::scope(|s| {
        let others: Vec<_> = jobs
            .zip(readers)
            .map(|((group, part), reader)| {
                let (job, stamp) = (&job, &stamp);
                s.spawn(move || {
                    let _snapshot = Snapshot::begin(&reader)?;
                    if run_stamp(&reader, run_id)? != *stamp {
                        return Ok(None);
                    }
                    job(&reader, group, part)
                })
            })
            .collect();
        let mut read = vec![job(conn, first, first_part)];
        for other in others {
            read.push(
                other
                    .join()
                    .unwrap_or_else(|_| Err(DbError::Other("a request reader panicked".into()))),
            );
        }
        read
    });
    // The runs follow one another, and the pack spans the run's rows from
    // the first to the last. With the triggers that drop a pack when its
    // run's rows change, this stands in for counting the rows (a walk over
    // the run's key, 40 ms at 300,000 requests), which would not see a row
    // changed with the triggers off either.
    let spans: Option<Vec<(i64, i64)>> = read.into_iter().collect::<Result<_, _>>()?;
    Ok(spans.is_some_and(|spans| {
        spans.windows(2).all(|w| w[0].1 < w[1].0)
            && spans.first().map(|s| s.0) == Some(ends.0)
            && spans.last().map(|s| s.1) == Some(ends.1)
    }))
}

/// At most this many connections read a pack at once.
const MAX_PACK_READERS: usize = 8;

/// Splits segments of `rows` rows each into at most `parts` runs of
/// neighbouring segments, of about equal rows (none empty): each run ends at
/// the segment boundary nearest its share of the rows.
fn runs_of_rows(rows: &[usize], parts: usize) -> Vec<std::ops::Range<usize>> {
    let parts = parts.clamp(1, rows.len().max(1));
    let mut before = Vec::with_capacity(rows.len() + 1);
    before.push(0);
    for n in rows {
        before.push(before.last().copied().unwrap_or(0) + n);
    }
    let total = before.last().copied().unwrap_or(0);
    let mut runs = Vec::with_capacity(parts);
    let mut start = 0;
    for k in 1..parts {
        let share = total * k / parts;
        // The first boundary at or past the share, or the one before it if
        // nearer; leaving a segment at least for each run still to come.
        let mut end = (start + 1..rows.len())
            .find(|&b| before[b] >= share)
            .unwrap_or(rows.len());
        if end > start + 1 && share - before[end - 1] < before[end].saturating_sub(share) {
            end -= 1;
        }
        let end = end.min(rows.len() - (parts - k));
        if end > start {
            runs.push(start..end);
            start = end;
        }
    }
    if start < rows.len() {
        runs.push(start..rows.len());
    }
    runs
}

/// What a reader of a run's pack segments needs.
struct Segments<'a> {
    conn: &'a Connection,
    template: &'a Fill<'a>,
    names: &'a [String],
    run_id: &'a str,
    /// Every segment's rows, as listed.
    rows: &'a [usize],
}

impl Segments<'_> {
    /// Decodes the segments numbered `group` into `part`, which holds their
    /// rows: the first and last sequence numbers read, when each segment
    /// was there, whole and as listed, each number above the one before.
    fn read_into(
        self,
        group: std::ops::Range<usize>,
        part: &mut [Request],
    ) -> Result<Option<(i64, i64)>, DbError> {
        let q = &sql::LOAD_REQUEST_PACK;
        let mut stmt = self.conn.prepare(q.sql).map_err(DbError::query(q))?;
        let mut rows = stmt
            .query(rusqlite::named_params! {
                ":run_id": self.run_id,
                ":from": group.start as i64,
                ":to": group.end as i64,
            })
            .map_err(DbError::query(q))?;
        let mut fill = self.template.fresh();
        let (mut next, mut filled) = (group.start, 0);
        while let Some(row) = rows.next().map_err(DbError::query(q))? {
            let (number, listed, body) = match (row.get_ref(0), row.get_ref(1), row.get_ref(2)) {
                (Ok(ValueRef::Integer(a)), Ok(ValueRef::Integer(b)), Ok(ValueRef::Blob(c))) => {
                    (a, b, c)
                }
                _ => return Ok(None),
            };
            let Some(&rows_here) = self.rows.get(next) else {
                return Ok(None);
            };
            // The query returns only the group's numbers, so one equal to
            // `next` is within the group.
            if number != next as i64 || usize::try_from(listed).ok() != Some(rows_here) {
                return Ok(None);
            }
            let segment = match pack::segment(body, self.names) {
                Ok(segment) if segment.rows == rows_here => segment,
                _ => return Ok(None),
            };
            let Some(slots) = part.get_mut(filled..filled + rows_here) else {
                return Ok(None);
            };
            let mut i = 0;
            let done = segment.rows(|row, changed| {
                let Some(r) = slots.get_mut(i) else {
                    return false;
                };
                fill.fill(r, &row, changed);
                i += 1;
                true
            });
            if done.is_err() || i != rows_here {
                return Ok(None);
            }
            filled += rows_here;
            next += 1;
        }
        let whole = next == group.end && filled == part.len() && fill.increasing;
        Ok(fill.seqs.filter(|_| whole))
    }
}

/// The stamp of a run's ingest ([`read_pack`]); none when there is no run.
fn run_stamp(conn: &Connection, run_id: &str) -> Result<Option<(Option<String>, String)>, DbError> {
    let q = &sql::LOAD_RUN_STAMP;
    conn.query_row(q.sql, rusqlite::named_params! {":run_id": run_id}, |r| {
        Ok((r.get(0)?, r.get(1)?))
    })
    .optional()
    .map_err(DbError::query(q))
}

/// A read transaction on a connection for as long as it lives, so that the
/// reads it spans see one state of the database. A savepoint, so that it
/// nests in a transaction the caller has open.
struct Snapshot<'c>(&'c Connection);

impl<'c> Snapshot<'c> {
    fn begin(conn: &'c Connection) -> Result<Self, DbError> {
        conn.execute_batch("SAVEPOINT stormlog_read")
            .map_err(|e| DbError::Other(format!("could not begin a read: {e}")))?;
        Ok(Snapshot(conn))
    }
}

impl Drop for Snapshot<'_> {
    fn drop(&mut self) {
        // Only reads happened since the savepoint: releasing it cannot lose
        // anything, and a failure to (the connection closing) changes nothing.
        let _ = self.0.execute_batch("RELEASE stormlog_read");
    }
}

/// Packs a run's request rows as they are stored (what the ingest packs as it
/// writes them): the segments, each with its row count.
pub fn pack_rows(conn: &Connection, run_id: &str) -> Result<Vec<(u64, Vec<u8>)>, DbError> {
    let q = &sql::LOAD_REQUESTS_ANALYSIS;
    let names = analysis_columns(conn)?;
    let mut rows = analysis_rows(conn, run_id, i64::MIN, i64::MAX)?;
    let mut packer = Packer::new(&names);
    let mut segments = Vec::new();
    while let Some(row) = rows.step().map_err(DbError::query(q))? {
        packer.push((0..names.len()).map(|i| row.get(i)));
        segments.extend(packer.full());
    }
    segments.extend(packer.rest());
    Ok(segments)
}

/// Moves the integers past 64 bits that rows of an earlier schema kept in
/// `extra` into their columns, now `Col::AnyInt` (a migration's backfill,
/// migrations/0010_wide_integers.sql), and packs again the runs whose
/// request rows changed. Every other value of `extra` stays as it was.
pub fn widen_integers(conn: &Connection) -> Result<(), DbError> {
    let tables = [
        (
            "requests",
            &sql::MIGRATE_REQUESTS_WITH_EXTRA,
            &sql::MIGRATE_WIDEN_REQUESTS,
        ),
        (
            "phase_windows",
            &sql::MIGRATE_PHASE_WINDOWS_WITH_EXTRA,
            &sql::MIGRATE_WIDEN_PHASE_WINDOWS,
        ),
    ];
    for (table, rows_q, update_q) in tables {
        let spec = tables::spec(table)
            .ok_or_else(|| DbError::Other(format!("no table spec for {table}")))?;
        let rows: Vec<(String, i64, String)> = conn
            .prepare(rows_q.sql)
            .and_then(|mut s| {
                s.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?
                    .collect()
            })
            .map_err(DbError::query(rows_q))?;
        let mut update = conn
            .prepare(update_q.sql)
            .map_err(DbError::query(update_q))?;
        let mut touched: Vec<String> = Vec::new();
        for (run_id, seq, extra) in rows {
            let Ok(Value::Object(mut rest)) = crate::pyjson::parse(&extra) else {
                continue;
            };
            let mut moved: Vec<(&str, String)> = Vec::new();
            for (key, col) in spec.fields {
                if *col != tables::Col::AnyInt {
                    continue;
                }
                if let Some(Sql::Text(digits)) =
                    rest.get(*key).and_then(|v| tables::encode(*col, v))
                {
                    rest.remove(*key);
                    moved.push((key, digits));
                }
            }
            if moved.is_empty() {
                continue;
            }
            let extra = (!rest.is_empty()).then(|| Value::Object(rest).to_string());
            let bind = |update: &mut Statement, name: &str, v: ValueRef| -> rusqlite::Result<()> {
                match update.parameter_index(name)? {
                    Some(i) => {
                        update.raw_bind_parameter(i, rusqlite::types::ToSqlOutput::Borrowed(v))
                    }
                    None => Err(rusqlite::Error::InvalidParameterName(name.to_owned())),
                }
            };
            let run = (|| {
                for (key, col) in spec.fields {
                    if *col == tables::Col::AnyInt {
                        let v = moved.iter().find(|(k, _)| k == key);
                        let v = v.map_or(ValueRef::Null, |(_, d)| ValueRef::Text(d.as_bytes()));
                        bind(&mut update, &format!(":{key}"), v)?;
                    }
                }
                let extra = extra
                    .as_deref()
                    .map_or(ValueRef::Null, |e| ValueRef::Text(e.as_bytes()));
                bind(&mut update, ":extra", extra)?;
                bind(&mut update, ":run_id", ValueRef::Text(run_id.as_bytes()))?;
                bind(&mut update, ":seq", ValueRef::Integer(seq))?;
                update.raw_execute()
            })();
            run.map_err(DbError::query(update_q))?;
            if touched.last() != Some(&run_id) {
                touched.push(run_id);
            }
        }
        if table == "requests" {
            // The update dropped these runs' packs (their trigger).
            for run_id in touched {
                store_pack(conn, &run_id, &pack_rows(conn, &run_id)?)?;
            }
        }
    }
    Ok(())
}

/// Stores a run's pack (its segments, with their row counts), replacing any.
pub fn store_pack(
    conn: &Connection,
    run_id: &str,
    segments: &[(u64, Vec<u8>)],
) -> Result<(), DbError> {
    let q = &sql::INGEST_DELETE_REQUEST_PACK;
    conn.execute(q.sql, rusqlite::named_params! {":run_id": run_id})
        .map_err(DbError::query(q))?;
    let mut writer = SegmentWriter::new(conn)?;
    for (rows, body) in segments {
        writer.store(run_id, *rows, body)?;
    }
    Ok(())
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

    /// The first line of the test artifacts: a session `s`.
    fn session_line() -> String {
        let mut text = String::from(
            r#"{"event_type": "infer.session", "schema_version": 1, "session_id": "s", "status": "running", "timestamp_ns": 1}"#,
        );
        text.push('\n');
        text
    }

    #[test]
    fn a_one_row_insert_becomes_an_insert_of_many_rows() {
        let sql = "-- A comment (with a paren).\nINSERT INTO t (a, b_2)\nVALUES (:a, :b_2);\n";
        assert_eq!(
            insert_of_rows(sql, 3).unwrap(),
            "-- A comment (with a paren).\nINSERT INTO t (a, b_2)\nVALUES (?, ?),\n(?, ?),\n(?, ?)"
        );
        // Anything but a tuple of named parameters is not rewritten.
        assert_eq!(insert_of_rows("INSERT INTO t VALUES (:a, 1)", 2), None);
        assert_eq!(
            insert_of_rows("INSERT INTO t VALUES (ifnull(:a, :b))", 2),
            None
        );
        assert_eq!(insert_of_rows(sql::INGEST_INSERT_RUN.sql, 2), None);
        // Every table the writer batches: the statement takes the rows'
        // parameters and stores that many rows.
        let conn = crate::db::open_memory().unwrap();
        for q in TABLES
            .iter()
            .map(|t| &t.insert)
            .chain([&sql::INGEST_INSERT_RECORD])
        {
            let one = conn.prepare(q.sql).unwrap().parameter_count();
            let many = insert_of_rows(q.sql, ROWS_PER_INSERT).expect(q.name);
            let stmt = conn.prepare(&many).expect(q.name);
            assert_eq!(stmt.parameter_count(), one * ROWS_PER_INSERT, "{}", q.name);
        }
    }

    /// Rows of a table stored in batches of [`ROWS_PER_INSERT`], the rest
    /// one by one, with rows of other tables in between, are the rows of
    /// the file, in order.
    #[test]
    fn rows_stored_in_batches_keep_their_order_and_values() {
        let dir = tempfile::tempdir().unwrap();
        let artifact = dir.path().join("mixed.jsonl");
        let mut text = session_line();
        let n = 2 * ROWS_PER_INSERT + 5;
        for i in 0..n {
            text.push_str(&format!(
                r#"{{"event_type": "infer.request", "schema_version": 1, "session_id": "s", "request_id": "r{i}", "case_id": "c", "status": "{}", "ttft_ms": {}, "request_index": {i}}}"#,
                if i % 3 == 0 { "ok" } else { "error" },
                if i % 4 == 0 { "null".to_owned() } else { format!("{i}.5") },
            ));
            text.push('\n');
            if i % 5 == 0 {
                text.push_str(&format!(
                    r#"{{"event_type": "infer.dispatch", "schema_version": 1, "request_id": "r{i}"}}"#
                ));
                text.push('\n');
            }
        }
        std::fs::write(&artifact, &text).unwrap();
        let mut conn = crate::db::open_memory().unwrap();
        crate::ingest::ingest_artifact(&mut conn, &artifact, &Default::default()).unwrap();
        let requests: Vec<(i64, String, Option<f64>, i64)> = conn
            .prepare("SELECT seq, request_id, ttft_ms, nulls FROM requests ORDER BY rowid")
            .unwrap()
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        let dispatches: Vec<(i64, String)> = conn
            .prepare("SELECT seq, request_id FROM dispatches ORDER BY rowid")
            .unwrap()
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(requests.len(), n);
        assert_eq!(dispatches.len(), n.div_ceil(5));
        // Sequence numbers count every record of the file in order.
        let mut seq = 1; // the session is record 0
        for (i, (s, id, ttft, nulls)) in requests.iter().enumerate() {
            assert_eq!((*s, id.as_str()), (seq, format!("r{i}").as_str()));
            assert_eq!(*ttft, (i % 4 != 0).then_some(i as f64 + 0.5), "request {i}");
            assert_eq!(*nulls != 0, i % 4 == 0, "request {i}");
            seq += 1;
            if i % 5 == 0 {
                let (ds, id) = &dispatches[i / 5];
                assert_eq!((*ds, id.as_str()), (seq, format!("r{i}").as_str()));
                seq += 1;
            }
        }
    }

    /// A scratch database for one report leaves out what no report reads;
    /// a kept one stores every record.
    #[test]
    fn a_report_only_ingest_leaves_out_what_no_report_reads() {
        let dir = tempfile::tempdir().unwrap();
        let artifact = dir.path().join("a.jsonl");
        let mut text = session_line();
        for line in [
            r#"{"event_type": "infer.phase_start", "schema_version": 1, "case_id": "c"}"#,
            r#"{"event_type": "infer.dispatch", "schema_version": 1, "request_id": "r0", "x_request_id": "x0"}"#,
            r#"{"event_type": "infer.first_content", "schema_version": 1, "request_id": "r0"}"#,
            r#"{"event_type": "infer.request", "schema_version": 1, "request_id": "r0", "status": "ok"}"#,
            r#"{"event_type": "infer.summary", "schema_version": 1, "summary": {}}"#,
            r#"{"event_type": "infer.note", "schema_version": 1}"#,
        ] {
            text.push_str(line);
            text.push('\n');
        }
        std::fs::write(&artifact, &text).unwrap();
        let count =
            |c: &Connection, sql: &str| -> i64 { c.query_row(sql, [], |r| r.get(0)).unwrap() };
        for analyze in [false, true] {
            let mut conn = crate::db::open_memory().unwrap();
            let opts = crate::ingest::Options {
                analyze,
                ..Default::default()
            };
            crate::ingest::ingest_artifact(&mut conn, &artifact, &opts).unwrap();
            let kept = i64::from(!analyze);
            assert_eq!(count(&conn, "SELECT count(*) FROM first_contents"), kept);
            assert_eq!(count(&conn, "SELECT count(*) FROM records"), 1 + 2 * kept);
            assert_eq!(count(&conn, "SELECT count(*) FROM dispatches"), 1);
            assert_eq!(count(&conn, "SELECT count(*) FROM requests"), 1);
            // The run's record count is the file's either way.
            assert_eq!(count(&conn, "SELECT record_count FROM runs"), 7);
        }
    }

    /// A run above the parallel threshold is read in two halves on two
    /// connections, or from its pack's segments at once; either result is
    /// the sequential read, request for request.
    #[test]
    fn halves_read_at_once_equal_one_sequential_read() {
        let dir = tempfile::tempdir().unwrap();
        let artifact = dir.path().join("big.jsonl");
        let mut text = session_line();
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
        // Through the pack (segments decoded in parallel), then the rows.
        let packed = load_run(&conn, &done.run_id).unwrap();
        conn.execute("DELETE FROM request_packs", []).unwrap();
        let data = load_run(&conn, &done.run_id).unwrap();
        assert_eq!(data.requests.len(), n);
        let spec = tables::spec("requests").unwrap();
        let mut one = vec![Request::empty(0); n];
        let got = read_requests(&conn, spec, &done.run_id, i64::MIN, i64::MAX, &mut one).unwrap();
        assert_eq!(got, n);
        assert_eq!(data.requests, one);
        assert_eq!(packed.requests, one);
        assert_eq!(
            data.requests[n - 1].x_request_id,
            Value::from(format!("x{}", n - 1))
        );
        assert_eq!(data.requests[7].ttft_ms(), None);
        assert_eq!(data.requests[8].ttft_ms(), Some(8.25));
        assert!(data.requests.windows(2).all(|w| w[0].seq < w[1].seq));
    }

    /// A small run with a pack, in a kept database (triggers on).
    fn packed_run(dir: &std::path::Path) -> (Connection, String) {
        let artifact = dir.join("a.jsonl");
        let mut text = session_line();
        for i in 0..5 {
            text.push_str(&format!(
                r#"{{"event_type": "infer.request", "schema_version": 1, "case_id": "c", "phase": "measured", "status": "ok", "request_id": "r{i}", "ttft_ms": {i}.5}}"#
            ));
            text.push('\n');
        }
        std::fs::write(&artifact, text).unwrap();
        let mut conn = crate::db::open(&dir.join("p.db"), crate::db::Mode::ReadWrite).unwrap();
        let done =
            crate::ingest::ingest_artifact(&mut conn, &artifact, &Default::default()).unwrap();
        (conn, done.run_id)
    }

    fn has_pack(conn: &Connection, run_id: &str) -> bool {
        conn.query_row(
            "SELECT count(*) FROM request_packs WHERE run_id = ?1",
            [run_id],
            |r| r.get::<_, i64>(0),
        )
        .unwrap()
            > 0
    }

    /// An edit of the rows made with SQL drops the run's pack, so the next
    /// report reads the edited rows; the ingest's own writes do not (it
    /// writes the pack itself, with triggers off), and its connection gets
    /// its triggers back.
    #[test]
    fn an_edit_made_with_sql_drops_the_pack() {
        let dir = tempfile::tempdir().unwrap();
        let (conn, run) = packed_run(dir.path());
        assert!(has_pack(&conn, &run));
        use rusqlite::config::DbConfig::SQLITE_DBCONFIG_ENABLE_TRIGGER;
        assert!(conn.db_config(SQLITE_DBCONFIG_ENABLE_TRIGGER).unwrap());
        conn.execute(
            "UPDATE requests SET ttft_ms = 99.0 WHERE request_id = 'r2'",
            [],
        )
        .unwrap();
        assert!(!has_pack(&conn, &run));
        let data = load_run(&conn, &run).unwrap();
        assert_eq!(data.requests[2].ttft_ms(), Some(99.0));
        for edit in [
            "DELETE FROM requests WHERE request_id = 'r4'",
            "INSERT INTO requests (run_id, seq, case_key, status_key, request_id) SELECT run_id, 100, 'c', 'ok', 'r9' FROM runs",
        ] {
            store_pack(&conn, &run, &pack_rows(&conn, &run).unwrap()).unwrap();
            assert!(has_pack(&conn, &run));
            conn.execute(edit, []).unwrap();
            assert!(!has_pack(&conn, &run), "{edit}");
        }
        let data = load_run(&conn, &run).unwrap();
        let ids: Vec<&str> = data
            .requests
            .iter()
            .filter_map(|r| r.request_id.as_str())
            .collect();
        assert_eq!(ids, ["r0", "r1", "r2", "r3", "r9"]);
    }

    /// The analysis reads every record but the four types it never needs,
    /// whatever sorts around them (the query takes index ranges between
    /// them), a record without an event type included, in file order.
    #[test]
    fn the_analysis_reads_all_records_but_four_types() {
        let dir = tempfile::tempdir().unwrap();
        let artifact = dir.path().join("a.jsonl");
        let mut text = session_line();
        let types = [
            "infer.capabilities",
            "infer.dispatch",
            "infer.dispatch_note",
            "infer.first_content",
            "infer.iteration",
            "infer.phase_start",
            "infer.server_probe",
            "infer.summary",
            "infer.summaryx",
            "infer.zzz",
            "infer.dispatch",
        ];
        for t in types {
            text.push_str(&format!(
                r#"{{"event_type": "{t}", "schema_version": 1, "timestamp_ns": 2}}"#
            ));
            text.push('\n');
        }
        text.push_str(r#"{"schema_version": 1, "note": "no type"}"#);
        text.push('\n');
        std::fs::write(&artifact, text).unwrap();
        let mut conn =
            crate::db::open(&dir.path().join("r.db"), crate::db::Mode::ReadWrite).unwrap();
        let done =
            crate::ingest::ingest_artifact(&mut conn, &artifact, &Default::default()).unwrap();
        let data = load_run(&conn, &done.run_id).unwrap();
        let got: Vec<String> = data
            .records
            .iter()
            .map(|(_, r)| match r.get("event_type") {
                Some(Value::String(t)) => t.clone(),
                _ => "(none)".to_owned(),
            })
            .filter(|t| t != "infer.session")
            .collect();
        assert_eq!(
            got,
            [
                "infer.capabilities",
                "infer.dispatch_note",
                "infer.iteration",
                "infer.server_probe",
                "infer.summaryx",
                "infer.zzz",
                "(none)"
            ]
        );
        assert!(data.records.windows(2).all(|w| w[0].0 < w[1].0));
    }

    /// A run of three pack segments (two whole, one of 7 rows), in a file.
    fn three_segment_run(dir: &std::path::Path) -> (Connection, String, usize) {
        let artifact = dir.join("s.jsonl");
        let mut text = session_line();
        let n = pack::SEGMENT_ROWS as usize * 2 + 7;
        for i in 0..n {
            let status = ["ok", "error", "ok"][i % 3];
            text.push_str(&format!(
                r#"{{"event_type": "infer.request", "schema_version": 1, "case_id": "c{}", "phase": "measured", "status": "{status}", "request_id": "r{i}", "x_request_id": "x{i}", "ttft_ms": {}.5, "chunk_interarrival_ms": [{i}]}}"#,
                i % 5,
                i % 89
            ));
            text.push('\n');
        }
        std::fs::write(&artifact, text).unwrap();
        let mut conn = crate::db::open(&dir.join("s.db"), crate::db::Mode::ReadWrite).unwrap();
        let done =
            crate::ingest::ingest_artifact(&mut conn, &artifact, &Default::default()).unwrap();
        (conn, done.run_id, n)
    }

    #[test]
    fn segments_are_shared_out_in_runs_of_about_equal_rows() {
        let whole = pack::SEGMENT_ROWS as usize;
        assert_eq!(runs_of_rows(&[whole, whole, 7], 1), vec![(0..3)]);
        // The boundary nearest half the rows, not the first past it.
        assert_eq!(runs_of_rows(&[whole, whole, 7], 2), [0..1, 1..3]);
        assert_eq!(runs_of_rows(&[whole, whole, 7], 3), [0..1, 1..2, 2..3]);
        assert_eq!(runs_of_rows(&[whole, whole, 7], 8), [0..1, 1..2, 2..3]);
        assert_eq!(runs_of_rows(&[10, 10, 10, 10], 2), [0..2, 2..4]);
        assert_eq!(runs_of_rows(&[100, 10_000, 100], 3), [0..1, 1..2, 2..3]);
        assert_eq!(runs_of_rows(&[5], 4), vec![(0..1)]);
        assert!(runs_of_rows(&[], 2).is_empty());
    }

    /// However many readers share a pack out, they read what the rows hold.
    #[test]
    fn a_pack_read_by_several_readers_equals_its_rows() {
        let dir = tempfile::tempdir().unwrap();
        let (conn, run, n) = three_segment_run(dir.path());
        let spec = tables::spec("requests").unwrap();
        let mut rows = vec![Request::empty(0); n];
        let got = read_requests(&conn, spec, &run, i64::MIN, i64::MAX, &mut rows).unwrap();
        assert_eq!(got, n);
        for readers in [1, 2, 3, 8] {
            let mut out = Vec::new();
            assert!(read_pack(&conn, spec, &run, &mut out, readers).unwrap());
            assert_eq!(out, rows, "{readers} readers");
        }
        assert_eq!(rows[n - 1].x_request_id, Value::from(format!("x{}", n - 1)));
    }

    /// A pack whose segments are not the ones listed, or not all there, is
    /// passed over by one reader and by several, and the rows are read.
    #[test]
    fn a_pack_missing_a_segment_or_miscounted_is_passed_over() {
        let dir = tempfile::tempdir().unwrap();
        let spec = tables::spec("requests").unwrap();
        for (i, edit) in [
            "DELETE FROM request_packs WHERE segment = 1",
            "DELETE FROM request_packs WHERE segment = 2",
            "UPDATE request_packs SET requests = requests - 1 WHERE segment = 0",
            "UPDATE request_packs SET segment = 3 WHERE segment = 2",
            "UPDATE request_packs SET body = x'00' WHERE segment = 1",
        ]
        .into_iter()
        .enumerate()
        {
            let at = dir.path().join(i.to_string());
            std::fs::create_dir(&at).unwrap();
            let (conn, run, n) = three_segment_run(&at);
            conn.execute(edit, []).unwrap();
            for readers in [1, 2, 3] {
                let mut out = Vec::new();
                assert!(
                    !read_pack(&conn, spec, &run, &mut out, readers).unwrap(),
                    "{edit}"
                );
            }
            let data = load_run(&conn, &run).unwrap();
            assert_eq!(data.requests.len(), n, "{edit}");
            assert_eq!(
                data.requests[n - 1].request_id,
                Value::from(format!("r{}", n - 1))
            );
        }
    }

    /// Rows deleted with the triggers off leave the pack in place; one that
    /// no longer starts or ends where the rows do is passed over for them.
    #[test]
    fn a_pack_past_the_ends_of_the_rows_is_passed_over() {
        let dir = tempfile::tempdir().unwrap();
        let (conn, run) = packed_run(dir.path());
        use rusqlite::config::DbConfig::SQLITE_DBCONFIG_ENABLE_TRIGGER;
        conn.set_db_config(SQLITE_DBCONFIG_ENABLE_TRIGGER, false)
            .unwrap();
        let ids = |conn: &Connection| -> Vec<String> {
            let data = load_run(conn, &run).unwrap();
            data.requests
                .iter()
                .filter_map(|r| r.request_id.as_str().map(str::to_owned))
                .collect()
        };
        assert_eq!(ids(&conn), ["r0", "r1", "r2", "r3", "r4"]);
        conn.execute("DELETE FROM requests WHERE request_id = 'r4'", [])
            .unwrap();
        assert!(has_pack(&conn, &run));
        assert_eq!(ids(&conn), ["r0", "r1", "r2", "r3"]);
        conn.execute("DELETE FROM requests WHERE request_id = 'r0'", [])
            .unwrap();
        assert_eq!(ids(&conn), ["r1", "r2", "r3"]);
    }

    /// A pack that does not fit the run (another row count, damaged bytes, a
    /// segment missing) is passed over for the rows.
    #[test]
    fn a_pack_that_does_not_fit_is_passed_over() {
        let dir = tempfile::tempdir().unwrap();
        let (conn, run) = packed_run(dir.path());
        let want = format!("{:?}", load_run(&conn, &run).unwrap().requests);
        let good = pack_rows(&conn, &run).unwrap();
        assert_eq!(good.len(), 1);
        let (rows, body) = good[0].clone();
        let mut damaged = body.clone();
        let last = damaged.len() - 1;
        damaged[last] ^= 0x55;
        let mut cut = body.clone();
        cut.truncate(body.len() - 3);
        let wrong: Vec<Vec<(u64, Vec<u8>)>> = vec![
            vec![(rows + 1, body.clone())],
            vec![(rows, damaged)],
            vec![(rows, cut)],
            vec![(rows, Vec::new())],
            vec![(rows, body.clone()), (rows, body.clone())],
        ];
        for pack in wrong {
            store_pack(&conn, &run, &pack).unwrap();
            assert!(has_pack(&conn, &run));
            let got = format!("{:?}", load_run(&conn, &run).unwrap().requests);
            assert_eq!(got, want);
        }
        // A segment numbered out of order.
        store_pack(&conn, &run, &good).unwrap();
        conn.execute("UPDATE request_packs SET segment = 1", [])
            .unwrap();
        let got = format!("{:?}", load_run(&conn, &run).unwrap().requests);
        assert_eq!(got, want);
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
