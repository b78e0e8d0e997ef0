//! Storing a run's rows: the ingest's batched writer and request packer, and
//! the migrations that rewrite stored rows (typed tables, wide integers).
#[allow(unused_imports)]
use super::*;
use std::collections::HashMap;

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
/// closed, and a statement start and halt. Each statement kept a statement
/// journal too (a copy of every 64 KiB page it changed), which made 256
/// rows a statement pay (1,726M -> 1,462M instructions of the writer thread
/// at 30,000 requests against 32). Without the journal ([`insert_of_rows`])
/// 64 rows cost the same per row as 256 (1,296M -> 1,279M), and a file
/// prepares its few batched inserts in a quarter of the time: a project's
/// files of 3,000 requests each prepared them for 17% of the writer's
/// instructions (5 files into a database of 5 runs: 807M -> 711M).
pub(crate) const ROWS_PER_INSERT: usize = 64;

/// The rows of a table's last, partial batch stored by one statement (then
/// one by one): a small table's or a small file's rows are not all stored
/// alone. (8 against 32: the same 5 files 711M -> 695M.)
pub(crate) const ROWS_PER_SHORT_INSERT: usize = 8;

/// `sql`, an `INSERT INTO ... VALUES (:a, :b, ...)` of one row, made to
/// insert `rows` rows: the tuple repeated with positional parameters (a
/// named one names a single parameter however often it appears), and
/// `INSERT OR FAIL`. None when the text does not end in such a tuple.
///
/// `OR FAIL`: a statement that may change many rows and may abort midway
/// (a constraint it breaks at the 200th row) keeps a statement journal, a
/// copy of every page it changes, so that SQLite can undo it alone; an
/// ingest undoes the file's whole transaction on any error instead
/// (nothing of a refused file is kept), so the copy is never read. With
/// `OR FAIL` a broken constraint stops the statement where it is, keeps no
/// journal, and fails the same way (the same error), and the ingest then
/// rolls everything back. The writer's foreign-key checks, the other
/// reason for a journal, are off (`crate::db::ingest::without_triggers`).
/// At 30,000 requests the journal was 5% of the writer thread's
/// instructions and the statements' ends (freeing it) 2.4%.
pub(super) fn insert_of_rows(sql: &str, rows: usize) -> Option<String> {
    let insert = sql.find("INSERT INTO ")?;
    let at = sql.rfind("VALUES")? + "VALUES".len();
    if at < insert {
        return None;
    }
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
    Some(format!(
        "{}INSERT OR FAIL INTO {} {}",
        &sql[..insert],
        &sql[insert + "INSERT INTO ".len()..at],
        vec![one; rows].join(",\n")
    ))
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
    facts: crate::db::execution::FactWriter<'c>,
    /// Whether every record is stored (a kept database), or only what a
    /// report reads ([`Writer::report_only`]).
    keep_all: bool,
    /// The dispatch and first-content rows waiting for their request row.
    sharing: Sharing,
    /// A kept database's stored rows go there (started when first needed).
    behind: Option<Behind>,
}

/// Which fields a dispatch or first-content row shares with its request row
/// (migrations/0014), and the rows waiting for that row: an artifact writes
/// a request's `infer.dispatch` and `infer.first_content` before its
/// `infer.request`. A kept database only; a scratch one stores no request rows.
struct Sharing {
    /// The `requests` table's slot and its `request_id` field.
    requests: usize,
    request_id: usize,
    /// Per table slot: for a table whose rows share fields, its `request_id`
    /// field and, per field, the request field of the same name.
    tables: Vec<Option<(usize, Vec<Option<usize>>)>>,
    /// Rows by request_id, in file order: (slot, seq, row). (foldhash:
    /// SipHash was 2% of the writer thread's instructions, one lookup per
    /// request and one per waiting row; foldhash is seeded per process.)
    pending: HashMap<Vec<u8>, Vec<Waiting>, foldhash::fast::RandomState>,
}

/// A row waiting for its request row: its table slot, seq and the row.
type Waiting = (usize, i64, Box<Row>);

/// The tables whose rows share fields with their request row.
const SHARING_TABLES: [&str; 2] = ["dispatches", "first_contents"];

impl Sharing {
    fn new(requests: usize) -> Result<Self, DbError> {
        let field = |spec: &TableSpec, name: &str| spec.fields.iter().position(|(k, _)| *k == name);
        let request_spec = &TABLES[requests];
        let request_id = field(request_spec, "request_id")
            .ok_or_else(|| DbError::Other("requests: no request_id".into()))?;
        let tables = TABLES
            .iter()
            .map(|spec| {
                if !SHARING_TABLES.contains(&spec.table) {
                    return None;
                }
                let own = field(spec, "request_id")?;
                let with = spec
                    .fields
                    .iter()
                    .map(|(name, _)| field(request_spec, name))
                    .collect();
                Some((own, with))
            })
            .collect();
        Ok(Sharing {
            requests,
            request_id,
            tables,
            pending: HashMap::default(),
        })
    }
}

/// The text a row's field `i` holds, if it holds one.
fn text_of(row: &Row, i: usize) -> Option<&[u8]> {
    match row.fields.get(i)?.bind(&row.line) {
        ValueRef::Text(t) => Some(t),
        _ => None,
    }
}

/// Whether two bound values are the same SQL value (type and value): only
/// text and integers are shared.
fn same(a: ValueRef, b: ValueRef) -> bool {
    match (a, b) {
        (ValueRef::Integer(x), ValueRef::Integer(y)) => x == y,
        (ValueRef::Text(x), ValueRef::Text(y)) => x == y,
        _ => false,
    }
}

/// Leaves out of `row` the values its request row `req` holds (NULL in their
/// columns) and returns their bits: bit 0 the schema version, bit i + 1
/// field i (`with[i]`: the request field of the same name).
fn share(row: &mut Row, req: &Row, with: &[Option<usize>]) -> i64 {
    let mut mask = 0;
    if same(
        row.schema_version.bind(&row.line),
        req.schema_version.bind(&req.line),
    ) {
        row.schema_version = Field::Null;
        mask |= 1;
    }
    for (i, w) in with.iter().enumerate() {
        let (Some(j), true) = (*w, i < 62) else {
            continue;
        };
        let shared = match (row.fields.get(i), req.fields.get(j)) {
            (Some(f), Some(g)) => same(f.bind(&row.line), g.bind(&req.line)),
            _ => false,
        };
        if shared {
            row.fields[i] = Field::Null;
            mask |= 2 << i;
        }
    }
    mask
}

/// What no report reads (no analysis pass reads these record types):
/// `infer.first_content`, `infer.phase_start`, `infer.summary`. A scratch
/// database for one report leaves them out; a kept one stores them like
/// every record.
pub(crate) fn unread_by_report(row: &Row) -> bool {
    let event_type = match row.table {
        Some(t) => Some(TABLES[t].event_type),
        None => row.event_type.as_deref(),
    };
    event_type.is_some_and(unread_event)
}

/// Whether no report reads records of this event type ([`unread_by_report`]).
pub(crate) fn unread_event(event_type: &str) -> bool {
    matches!(
        event_type,
        "infer.first_content" | "infer.phase_start" | "infer.summary"
    )
}

/// A table rows are written to, and the rows waiting for it.
pub(super) struct Target<'c> {
    /// None for the generic `records` table.
    spec: Option<&'static TableSpec>,
    /// Its insert of one row, of [`ROWS_PER_INSERT`] rows and of
    /// [`ROWS_PER_SHORT_INSERT`] rows, each prepared when first needed: a
    /// file writes to a few of the tables, and a project's ingest of many
    /// files prepares them again for each.
    one: Option<Insert<'c>>,
    many: Option<Insert<'c>>,
    some: Option<Insert<'c>>,
    /// Rows not yet written, in order (boxed: a row moves as a pointer
    /// into the queue, within it and off to the packing thread).
    queued: Vec<(i64, Box<Row>)>,
    /// For a table whose rows share fields with their request row
    /// ([`SHARING_TABLES`]): each queued row's request seq and shared bits
    /// (0, 0: none).
    links: Option<Vec<(i64, i64)>>,
}

impl<'c> Target<'c> {
    /// The target of `spec`'s rows (`records` for None); nothing prepared.
    fn new(spec: Option<&'static TableSpec>) -> Self {
        let shares = spec.is_some_and(|s| SHARING_TABLES.contains(&s.table));
        Target {
            spec,
            one: None,
            many: None,
            some: None,
            queued: Vec::new(),
            links: shares.then(Vec::new),
        }
    }

    fn query_of(spec: Option<&'static TableSpec>) -> &'static Query {
        match spec.map(|s| s.table) {
            None => &sql::INGEST_INSERT_RECORD,
            Some("dispatches") => &sql::INSERT_DISPATCHES_SHARED,
            Some("first_contents") => &sql::INSERT_FIRST_CONTENTS_SHARED,
            Some(_) => spec.map_or(&sql::INGEST_INSERT_RECORD, |s| &s.insert),
        }
    }

    fn query(&self) -> &'static Query {
        Self::query_of(self.spec)
    }

    /// Its insert of `size` rows: one, [`ROWS_PER_SHORT_INSERT`] or
    /// [`ROWS_PER_INSERT`] (prepared when first asked for).
    fn insert_of(&mut self, conn: &'c Connection, size: usize) -> Result<&mut Insert<'c>, DbError> {
        let query = self.query();
        let slot = match size {
            ROWS_PER_INSERT => &mut self.many,
            ROWS_PER_SHORT_INSERT => &mut self.some,
            _ => &mut self.one,
        };
        let insert = match slot.take() {
            Some(insert) => insert,
            None if size == 1 => Insert::prepare(conn, query.sql).map_err(DbError::query(query))?,
            None => {
                let sql = insert_of_rows(query.sql, size).ok_or_else(|| {
                    DbError::Other(format!("{}: not a one-row VALUES insert", query.name))
                })?;
                Insert::prepare(conn, &sql).map_err(DbError::query(query))?
            }
        };
        Ok(slot.insert(insert))
    }
}

/// Runs `insert` once for `rows` (as many as its rows of parameters), each
/// row followed by its request seq and shared bits where `links` has them.
fn store_linked(
    insert: &mut Insert,
    spec: Option<&TableSpec>,
    run_id: &str,
    rows: &[(i64, Box<Row>)],
    links: Option<&[(i64, i64)]>,
) -> rusqlite::Result<()> {
    match (spec, links) {
        (Some(_), Some(links)) => insert.run_with(|b| {
            for ((seq, row), &(link, shared)) in rows.iter().zip(links) {
                push_values(b, run_id, false, *seq, row);
                b.push(if shared == 0 {
                    ValueRef::Null
                } else {
                    ValueRef::Integer(link)
                });
                b.push(ValueRef::Integer(shared));
            }
        }),
        _ => store_rows(insert, spec, run_id, rows),
    }
}

/// Runs `insert` once for `rows` (as many as its rows of parameters).
pub(super) fn store_rows<R: std::borrow::Borrow<Row>>(
    insert: &mut Insert,
    spec: Option<&TableSpec>,
    run_id: &str,
    rows: &[(i64, R)],
) -> rusqlite::Result<()> {
    match spec {
        Some(spec) => {
            let file_id = spec.table == "vllm_spans";
            insert.run_with(|b| {
                for (seq, row) in rows {
                    push_values(b, run_id, file_id, *seq, row.borrow());
                }
            })
        }
        None => insert.run_with(|b| {
            for (seq, row) in rows {
                let row: &Row = row.borrow();
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
pub(super) struct SegmentWriter<'c> {
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

    /// Stores the next segment: its rows, packed bytes, and the same rows'
    /// export columns packed ([`Segment`] has them where the ingest packed
    /// them).
    fn store(
        &mut self,
        run_id: &str,
        rows: u64,
        body: &[u8],
        rest: Option<&[u8]>,
    ) -> Result<(), DbError> {
        let q = &sql::INGEST_INSERT_REQUEST_PACK;
        self.insert
            .run([
                ValueRef::Text(run_id.as_bytes()),
                ValueRef::Integer(self.next),
                ValueRef::Integer(rows as i64),
                ValueRef::Blob(body),
                rest.map_or(ValueRef::Null, ValueRef::Blob),
            ])
            .map_err(DbError::query(q))?;
        self.next += 1;
        Ok(())
    }
}

/// Packs the analysis columns of the request rows as they are written, and
/// stores each segment as soon as it is full.
pub(super) struct RequestPacker<'c> {
    /// The `requests` insert among the writer's.
    table: usize,
    segments: SegmentWriter<'c>,
    /// Where each packed column's value is in a [`Row`], and whether the
    /// column is REAL (where SQLite stores an integer as a real, so the pack
    /// does).
    source: Vec<(Source, bool)>,
    packer: Packer,
    /// The packed columns' names (a [`Behind`] thread's packer is made of them).
    names: Vec<String>,
    /// Where each column of a segment's `rest` is (`db::export_pack::PACKED_REST`).
    rest_source: Vec<(Source, bool)>,
}

/// One segment of a run's pack, as a packer closed it: its rows, the
/// analysis columns' bytes and, in a kept database, the export's others.
pub(super) struct Packed {
    rows: u64,
    body: Vec<u8>,
    rest: Option<Vec<u8>>,
}

/// Where a column's value comes from in a request [`Row`].
#[derive(Debug, Clone, Copy)]
pub(super) enum Source {
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
        let sources = |names: &[&str]| -> Result<Vec<(Source, bool)>, DbError> {
            names.iter().map(|name| source_of(spec, name)).collect()
        };
        let source = sources(&names.iter().map(String::as_str).collect::<Vec<_>>())?;
        Ok(RequestPacker {
            table,
            segments: SegmentWriter::new(conn)?,
            source,
            packer: Packer::new(&names),
            names,
            rest_source: sources(&crate::db::export_pack::PACKED_REST)?,
        })
    }

    /// Stores a segment the packer closed.
    fn store(&mut self, run_id: &str, segment: Option<(u64, Vec<u8>)>) -> Result<(), DbError> {
        match segment {
            Some((rows, body)) => self.segments.store(run_id, rows, &body, None),
            None => Ok(()),
        }
    }

    /// Packs a request row: the values its insert binds.
    fn push(&mut self, seq: i64, row: &Row) {
        pack_row(&mut self.packer, &self.source, seq, row);
    }
}

/// Where request column `name`'s value is in a [`Row`] of `spec`'s table,
/// and whether the column is REAL.
fn source_of(spec: &tables::TableSpec, name: &str) -> Result<(Source, bool), DbError> {
    let from = match name {
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
                .ok_or_else(|| DbError::Other(format!("packed column {name} is not written")))?,
        ),
    };
    let real = matches!(from, Source::Field(i) if spec.fields[i].1 == tables::Col::Real);
    Ok((from, real))
}

/// Packs request row `row` into `packer`, its columns' values taken from
/// where `source` says.
fn pack_row(packer: &mut Packer, source: &[(Source, bool)], seq: i64, row: &Row) {
    {
        let line = row.line.as_str();
        packer.push(source.iter().map(|&(from, real)| {
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

/// Rows a statement stored (seq, row), and whether they are request rows
/// to pack.
type Stored = (Vec<(i64, Box<Row>)>, bool);

/// Stored rows handed to the packing thread at a time. Handed a statement's
/// rows at a time (64), a 100,000-request import woke that thread 1,560
/// times, and each wake-up is a futex call and an inter-processor interrupt
/// on a virtual machine: 9% of the writer thread's time while it wrote the
/// request rows (perf, vLLM import).
const HAND_ROWS: usize = 1024;

/// Rows already stored, sent off the writer's thread: a kept database's
/// request rows are packed there, and every row is freed there. The writer
/// thread is the ingest's bottleneck (the reading and preparing threads
/// wait on it), so what it need not do itself goes to a thread that the
/// other core has time for: at 30,000 requests packing was 6% of the writer
/// thread's instructions and dropping the rows 3% more.
struct Behind {
    /// Stored rows, and whether they are request rows to pack.
    send: Option<std::sync::mpsc::SyncSender<Vec<Stored>>>,
    /// Stored rows not yet handed over, and how many rows they hold.
    pending: Vec<Stored>,
    pending_rows: usize,
    /// The pack's segments as they fill, in order.
    segments: std::sync::mpsc::Receiver<Packed>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Behind {
    /// Packs the analysis columns `names` (from `source`), and beside them
    /// the export's others (from `rest_source`) into each segment's `rest`.
    fn start(
        names: &[String],
        source: &[(Source, bool)],
        rest_source: &[(Source, bool)],
    ) -> Result<Self, DbError> {
        let (send, recv) = std::sync::mpsc::sync_channel::<Vec<Stored>>(2);
        let (out, segments) = std::sync::mpsc::channel();
        let mut packer = Packer::new(names);
        let mut rest_packer = Packer::new(&crate::db::export_pack::PACKED_REST);
        let source = source.to_vec();
        let rest_source = rest_source.to_vec();
        // Both packers get every row, so they fill at once.
        let close = |(rows, body): (u64, Vec<u8>), rest: Option<(u64, Vec<u8>)>| Packed {
            rows,
            body,
            rest: rest.filter(|r| r.0 == rows).map(|r| r.1),
        };
        let thread = std::thread::Builder::new()
            .name("stormlog-pack".into())
            .spawn(move || {
                for (rows, pack) in recv.into_iter().flatten() {
                    if !pack {
                        continue;
                    }
                    for (seq, row) in &rows {
                        pack_row(&mut packer, &source, *seq, row);
                        pack_row(&mut rest_packer, &rest_source, *seq, row);
                        if let Some(segment) = packer.full() {
                            if out.send(close(segment, rest_packer.full())).is_err() {
                                return; // the writer stopped (an error)
                            }
                        }
                    }
                }
                if let Some(segment) = packer.rest() {
                    let _ = out.send(close(segment, rest_packer.rest()));
                }
            })
            .map_err(|e| DbError::Other(format!("cannot start the packing thread: {e}")))?;
        Ok(Behind {
            send: Some(send),
            pending: Vec::new(),
            pending_rows: 0,
            segments,
            thread: Some(thread),
        })
    }

    /// Queues stored rows for the thread, handing them over [`HAND_ROWS`]
    /// at a time.
    fn hand(&mut self, rows: Vec<(i64, Box<Row>)>, pack: bool) -> Result<(), DbError> {
        self.pending_rows += rows.len();
        self.pending.push((rows, pack));
        if self.pending_rows >= HAND_ROWS {
            self.hand_pending()?;
        }
        Ok(())
    }

    fn hand_pending(&mut self) -> Result<(), DbError> {
        if self.pending.is_empty() {
            return Ok(());
        }
        let stopped = || DbError::Other("the packing thread stopped".into());
        let send = self.send.as_ref().ok_or_else(stopped)?;
        self.pending_rows = 0;
        send.send(std::mem::take(&mut self.pending))
            .map_err(|_| stopped())
    }

    /// Waits for the thread to pack everything handed to it; the segments
    /// not yet taken.
    fn end(&mut self) -> Result<Vec<Packed>, DbError> {
        self.hand_pending()?;
        self.send = None;
        if let Some(thread) = self.thread.take() {
            thread
                .join()
                .map_err(|_| DbError::Other("the packing thread panicked".into()))?;
        }
        Ok(self.segments.try_iter().collect())
    }
}

/// The columns of the analysis query (queries/load/requests_analysis.sql),
/// which a pack holds.
pub(super) fn analysis_columns(conn: &Connection) -> Result<Vec<String>, DbError> {
    let q = &sql::LOAD_REQUESTS_ANALYSIS;
    let stmt = conn.prepare(q.sql).map_err(DbError::query(q))?;
    Ok(stmt.column_names().into_iter().map(str::to_owned).collect())
}

/// Binds the values a typed table's insert takes for `row`, in parameter
/// order (text borrowed from the row's line); `file_id` for `vllm_spans`,
/// whose rows have one (NULL: not from a collector's file).
pub(super) fn push_values<'r>(
    b: &mut Binder<'_, 'r>,
    run_id: &'r str,
    file_id: bool,
    seq: i64,
    row: &'r Row,
) {
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
            .map(Target::new)
            .collect();
        let table = TABLES
            .iter()
            .position(|t| t.table == "requests")
            .ok_or_else(|| DbError::Other("no requests table".into()))?;
        let pack = RequestPacker::new(conn, table)?;
        let sharing = Sharing::new(table)?;
        Ok(Writer {
            sharing,
            run_id: run_id.to_owned(),
            pack,
            targets,
            conn,
            facts: crate::db::execution::FactWriter::new(conn)?,
            keep_all: true,
            behind: None,
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
    pub fn row(&mut self, seq: i64, row: Box<Row>) -> Result<(), DbError> {
        if !self.keep_all && unread_by_report(&row) {
            return Ok(());
        }
        let slot = row.table.unwrap_or(TABLES.len());
        if !self.keep_all && slot == self.pack.table {
            // A scratch database's report reads its requests from the pack
            // alone (`load_run_packed`): their rows are packed, not stored.
            self.pack.push(seq, &row);
            let full = self.pack.packer.full();
            return self.pack.store(&self.run_id, full);
        }
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
        if self.keep_all {
            if let Some(Some((own, _))) = self.sharing.tables.get(slot) {
                if let Some(key) = text_of(&row, *own) {
                    // Waits for its request row (or the end).
                    let key = key.to_vec();
                    self.sharing
                        .pending
                        .entry(key)
                        .or_default()
                        .push((slot, seq, row));
                    return Ok(());
                }
            } else if slot == self.sharing.requests && !self.sharing.pending.is_empty() {
                let waiting = text_of(&row, self.sharing.request_id)
                    .and_then(|key| self.sharing.pending.remove(key));
                for (at, s, mut r) in waiting.unwrap_or_default() {
                    let mask = match self.sharing.tables.get(at) {
                        Some(Some((_, with))) => share(&mut r, &row, with),
                        _ => 0,
                    };
                    self.queue(at, s, r, (seq, mask))?;
                }
            }
        }
        self.queue(slot, seq, row, (0, 0))
    }

    /// Queues a row for target `slot` (with its request seq and shared
    /// bits, for a table that has them), storing the queue once full.
    fn queue(
        &mut self,
        slot: usize,
        seq: i64,
        row: Box<Row>,
        link: (i64, i64),
    ) -> Result<(), DbError> {
        let target = self
            .targets
            .get_mut(slot)
            .ok_or_else(|| DbError::Other(format!("no table {slot}")))?;
        target.queued.push((seq, row));
        if let Some(links) = target.links.as_mut() {
            links.push(link);
            // A sharing table's rows are queued as their request rows
            // arrive (a request's dispatch and first content wait for it,
            // `Writer::row`): in the order requests end, not in file order.
            // 2,183 of a 3,000-request file's dispatch rows came before the
            // row stored just ahead of them, and each such row cost the
            // table's `(run_id, seq)` index a binary search of its leaf
            // page (SQLite's shortcut for a key past the last cell did not
            // apply) and a cell inserted amid the others. Each queued row
            // moves back past those with a later seq (a few swaps: the
            // order is nearly right), so a statement's rows go in key order
            // and 316 rows in such a file come before the row ahead of them.
            // The rows are the same; only their insertion order (their
            // rowids) follows seq.
            let queued = &mut target.queued;
            let mut at = queued.len() - 1;
            while at > 0 && queued[at - 1].0 > queued[at].0 && at < links.len() {
                queued.swap(at - 1, at);
                links.swap(at - 1, at);
                at -= 1;
            }
        }
        if target.queued.len() >= ROWS_PER_INSERT {
            self.store_queued(slot)?;
        }
        Ok(())
    }

    /// Stores the rows waiting for target `slot`: [`ROWS_PER_INSERT`] a
    /// statement, what is left [`ROWS_PER_SHORT_INSERT`] a statement, then
    /// one a statement.
    fn store_queued(&mut self, slot: usize) -> Result<(), DbError> {
        let target = &mut self.targets[slot];
        let query = target.query();
        let mut rows = std::mem::take(&mut target.queued);
        let links = target.links.take();
        let mut at = 0;
        while at < rows.len() {
            let left = rows.len() - at;
            let size = [ROWS_PER_INSERT, ROWS_PER_SHORT_INSERT]
                .into_iter()
                .find(|&size| left >= size)
                .unwrap_or(1);
            let spec = target.spec;
            store_linked(
                target.insert_of(self.conn, size)?,
                spec,
                &self.run_id,
                &rows[at..at + size],
                links.as_ref().and_then(|l| l.get(at..at + size)),
            )
            .map_err(DbError::query(query))?;
            at += size;
        }
        self.targets[slot].links = links.map(|mut l| {
            l.clear();
            l
        });
        let pack = slot == self.pack.table;
        if self.keep_all {
            if rows.is_empty() {
                return Ok(());
            }
            // Packed (request rows) and freed off this thread; the segments
            // packed so far are stored now.
            let behind = match &mut self.behind {
                Some(behind) => behind,
                none => none.insert(Behind::start(
                    &self.pack.names,
                    &self.pack.source,
                    &self.pack.rest_source,
                )?),
            };
            behind.hand(rows, pack)?;
            let ready: Vec<_> = behind.segments.try_iter().collect();
            for p in ready {
                self.pack
                    .segments
                    .store(&self.run_id, p.rows, &p.body, p.rest.as_deref())?;
            }
            return Ok(());
        }
        if pack {
            for (seq, row) in &rows {
                self.pack.push(*seq, row);
                let full = self.pack.packer.full();
                self.pack.store(&self.run_id, full)?;
            }
        }
        // Handed back empty, so the queue keeps its capacity.
        rows.clear();
        self.targets[slot].queued = rows;
        Ok(())
    }

    /// Ends the writing: stores the rows still waiting, then the last
    /// segment of the request rows' pack.
    pub fn finish(mut self) -> Result<(), DbError> {
        // Rows whose request row never came keep all their values.
        let mut waiting: Vec<_> = self.sharing.pending.drain().flat_map(|(_, v)| v).collect();
        waiting.sort_by_key(|&(_, seq, _)| seq);
        for (slot, seq, row) in waiting {
            self.queue(slot, seq, row, (0, 0))?;
        }
        for slot in 0..self.targets.len() {
            self.store_queued(slot)?;
        }
        if let Some(mut behind) = self.behind.take() {
            for p in behind.end()? {
                self.pack
                    .segments
                    .store(&self.run_id, p.rows, &p.body, p.rest.as_deref())?;
            }
        }
        let rest = self.pack.packer.rest();
        self.pack.store(&self.run_id, rest)?;
        // The aggregate's request-to-case map reads the request rows, which
        // a scratch database leaves out: its report reads the fact lines.
        self.facts.finish(&self.run_id, self.keep_all)
    }

    /// Stores a record that took the general path: encoded into the same
    /// [`Row`](crate::db::encode::Row) the fast path builds, then stored by [`Writer::row`].
    pub fn record(
        &mut self,
        seq: i64,
        raw: &Map<String, Value>,
        transport: bool,
    ) -> Result<(), DbError> {
        self.row(seq, Box::new(row_of(seq, raw, transport)))
    }
}

/// A record that took the general path, encoded into the same
/// [`Row`](crate::db::encode::Row) the fast path builds.
pub(super) fn row_of(seq: i64, raw: &Map<String, Value>, transport: bool) -> Row {
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
                false => crate::db::encode::prepare(body),
                true => match crate::py::json::parse(&body) {
                    Ok(v) => crate::db::encode::Prepared::Value(v),
                    Err(_) => continue,
                },
            };
            let row = match prepared {
                crate::db::encode::Prepared::Row(row) => *row,
                crate::db::encode::Prepared::Value(Value::Object(raw)) => {
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
pub(crate) const PARALLEL_LOAD_MIN: usize = 20_000;

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
            let Ok(Value::Object(mut rest)) = crate::py::json::parse(&extra) else {
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
        writer.store(run_id, *rows, body, None)?;
    }
    Ok(())
}
