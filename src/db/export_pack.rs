//! `v_requests` rows for `export --parquet` made in Rust from a run's request
//! pack (src/db/pack.rs) instead of by SQLite evaluating the view: the pack
//! holds most columns, a narrow read of the table the rest
//! (queries/export/requests_rest.sql), and the view's derived columns
//! (`ok`, `e2e_from_intended_ms`, `started_at`, `started_s`, `*_at_ms`, ...)
//! are computed here as its SQL computes them, to the bit.
//!
//! Evaluating the view costs SQLite a virtual-machine step per column and a
//! `strftime` per instant; this is several times cheaper. It serves only a
//! run whose pack is whole, lines up row for row (by seq) with the table,
//! and holds values of the types the view's arithmetic expects (an integer
//! past 64 bits is decimal text, which SQLite's arithmetic reads its own
//! way): anything else answers None and the caller reads the view.
use rusqlite::types::ValueRef;
use rusqlite::{named_params, Connection, OptionalExtension};

use super::export::{ReadError, RunCounts, BATCH_ROWS};
use super::pack::{self, Fields};
use super::DbError;
use crate::columnar::{Batch, Cell, CASES, REQUESTS};
use crate::sql;

/// Where an exported column's value comes from.
#[derive(Debug, Clone, Copy)]
enum Src {
    RunId,
    /// A pack column, as stored.
    Pack(usize),
    /// A pack column read as `CAST(CASE WHEN typeof(x) = 'integer' THEN x END AS INTEGER)`.
    PackInt(usize),
    /// A column of the narrow table read, as stored.
    Rest(usize),
    /// The same guarded cast, of a narrow read's column.
    RestInt(usize),
    /// `status = 'ok'`, as 1 or 0.
    Ok,
    /// `(ended_at_ns - intended_at_ns) / 1e6`.
    FromIntended,
    /// `strftime('%Y-%m-%dT%H:%M:%fZ', ns / 1e9, 'unixepoch')` of an instant.
    Stamp(Instant),
    /// `(ns - runs.started_at_ns) / 1e9`.
    Since(Instant),
    /// `ns / 1000000`.
    Millis(Instant),
}

#[derive(Debug, Clone, Copy)]
enum Instant {
    Intended,
    Started,
    Ended,
}

/// The columns of the narrow read, in its order (after seq, column 0); the
/// columns an ingest packs into each segment's `rest` ([`PACKED_REST`]).
const REST: [&str; 10] = [
    "case_key",
    "status_key",
    "http_status",
    "error_type",
    "error_message",
    "finish_reason",
    "concurrency",
    "model",
    "endpoint",
    "trace_id",
];

/// The columns of a pack segment's `rest` (migrations/0015), in order: the
/// `v_requests` columns the analysis pack leaves out.
pub(crate) const PACKED_REST: [&str; REST.len()] = REST;

/// The pack columns read besides those exported as they are.
struct Layout {
    sources: Vec<Src>,
    seq: usize,
    status: usize,
    intended: usize,
    started: usize,
    ended: usize,
    /// What `v_case_summary` sums, as stored.
    phase: usize,
    e2e: usize,
    ttft: usize,
    output_tokens: usize,
}

/// Where the narrow read holds `case_key` and `status_key`.
const REST_CASE_KEY: usize = 1;
const REST_STATUS_KEY: usize = 2;

/// Where every `v_requests` column comes from, given the pack's columns;
/// None when the pack lacks one.
fn layout(names: &[String]) -> Option<Layout> {
    let at = |n: &str| names.iter().position(|x| x == n);
    let rest = |n: &str| REST.iter().position(|x| *x == n).map(|i| i + 1);
    let mut sources = Vec::with_capacity(REQUESTS.columns.len());
    for col in REQUESTS.columns {
        let src = match col.name {
            "run_id" => Src::RunId,
            "ok" => Src::Ok,
            "e2e_from_intended_ms" => Src::FromIntended,
            "started_at" => Src::Stamp(Instant::Started),
            "ended_at" => Src::Stamp(Instant::Ended),
            "started_s" => Src::Since(Instant::Started),
            "ended_s" => Src::Since(Instant::Ended),
            "intended_at_ms" => Src::Millis(Instant::Intended),
            "started_at_ms" => Src::Millis(Instant::Started),
            "ended_at_ms" => Src::Millis(Instant::Ended),
            "e2e_ms" => Src::Pack(at("e2e_latency_ms")?),
            "first_chunk_ms" => Src::Pack(at("first_chunk_latency_ms")?),
            "request_index"
            | "prompt_tokens"
            | "output_tokens"
            | "total_tokens"
            | "in_flight_at_dispatch"
            | "intended_at_ns"
            | "started_at_ns"
            | "ended_at_ns" => Src::PackInt(at(col.name)?),
            "http_status" | "concurrency" => Src::RestInt(rest(col.name)?),
            name => match (rest(name), at(name)) {
                (Some(i), _) => Src::Rest(i),
                (None, Some(i)) => Src::Pack(i),
                (None, None) => return None,
            },
        };
        sources.push(src);
    }
    Some(Layout {
        sources,
        seq: at("seq")?,
        status: at("status")?,
        intended: at("intended_at_ns")?,
        started: at("started_at_ns")?,
        ended: at("ended_at_ns")?,
        phase: at("phase")?,
        e2e: at("e2e_latency_ms")?,
        ttft: at("ttft_ms")?,
        output_tokens: at("output_tokens")?,
    })
}

/// Why the fast path gave up on a run (the caller reads the view).
struct Unserved;

/// A stored value as a cell, as `db::export` turns a view's value into one;
/// a blob is not served.
fn cell<'a>(v: ValueRef<'a>, owned: &'a mut String) -> Result<Cell<'a>, Unserved> {
    Ok(match v {
        ValueRef::Null => Cell::Null,
        ValueRef::Integer(x) => Cell::Int(x),
        ValueRef::Real(x) => Cell::Real(x),
        ValueRef::Text(t) => match std::str::from_utf8(t) {
            Ok(s) => Cell::Text(s),
            Err(_) => {
                *owned = String::from_utf8_lossy(t).into_owned();
                Cell::Text(owned)
            }
        },
        ValueRef::Blob(_) => return Err(Unserved),
    })
}

/// An instant's nanoseconds: None when NULL; a value of another type (text
/// past 64 bits) is not served.
fn instant(v: ValueRef<'_>) -> Result<Option<i64>, Unserved> {
    match v {
        ValueRef::Null => Ok(None),
        ValueRef::Integer(x) => Ok(Some(x)),
        _ => Err(Unserved),
    }
}

/// `a - b` as SQLite subtracts two integers: exactly, or in floating point
/// when the difference does not fit 64 bits.
fn sub(a: i64, b: i64) -> f64 {
    match a.checked_sub(b) {
        Some(d) => d as f64,
        None => a as f64 - b as f64,
    }
}

/// SQLite's `strftime('%Y-%m-%dT%H:%M:%fZ', ns / 1e9, 'unixepoch')`, by its
/// own steps (date.c of the bundled 3.46): the seconds as a double, to
/// Julian-day milliseconds rounded half up, then the civil date by its
/// Julian-day algorithm. None where SQLite answers NULL.
pub fn sqlite_stamp(ns: i64) -> Option<String> {
    stamp_bytes(ns).map(|b| b.iter().map(|&c| char::from(c)).collect())
}

/// [`sqlite_stamp`] as its 24 ASCII bytes (`YYYY-MM-DDTHH:MM:SS.sssZ`; the
/// range SQLite accepts holds years 0 to 9999 only), without the formatter
/// or an allocation: the export makes two per row.
fn stamp_bytes(ns: i64) -> Option<[u8; 24]> {
    Stamps::default().stamp(ns)
}

/// Makes [`stamp_bytes`] for instants that mostly fall on the day before's:
/// the civil date of a day is worked out once, and the text of a second
/// once (a run's requests end many to a second).
#[derive(Debug, Clone, Copy)]
struct Stamps {
    /// The Julian day whose date `date` holds (i32::MIN: none yet).
    day: i32,
    date: [u8; 10],
    /// The Julian-day second (milliseconds / 1000) whose text `text`
    /// holds, its milliseconds aside (i64::MIN: none yet).
    second: i64,
    text: [u8; 24],
}

impl Default for Stamps {
    fn default() -> Stamps {
        Stamps {
            day: i32::MIN,
            date: *b"0000-00-00",
            second: i64::MIN,
            text: *b"0000-00-00T00:00:00.000Z",
        }
    }
}

/// Writes `v` in decimal into `out[at..at + width]`, zero-padded.
fn put(out: &mut [u8], at: usize, width: usize, v: i32) {
    let mut v = v.clamp(0, 9999) as u32;
    for k in (at..at + width).rev() {
        out[k] = b'0' + (v % 10) as u8;
        v /= 10;
    }
}

impl Stamps {
    fn stamp(&mut self, ns: i64) -> Option<[u8; 24]> {
        let mut out = Vec::with_capacity(24);
        self.stamp_into(ns, &mut out)
            .then(|| out.try_into().ok())
            .flatten()
    }

    /// Appends the stamp of `ns` to `out`; false (nothing appended) where
    /// SQLite answers NULL. The text goes straight where it is kept: made
    /// in a stack array a byte at a time and then copied out whole, its
    /// copy waited on each stamp for the bytes just stored (a tenth of the
    /// export's row making).
    #[inline]
    fn stamp_into(&mut self, ns: i64, out: &mut Vec<u8>) -> bool {
        let s = ns as f64 / 1e9;
        let r = s * 1000.0 + 210_866_760_000_000.0;
        if !(0.0..464_269_060_800_000.0).contains(&r) {
            return false;
        }
        let jd = (r + 0.5) as i64;
        // The day's milliseconds start on a whole second of `jd` (43,200,000
        // and 86,400,000 are whole seconds): within one second only the
        // milliseconds differ.
        if jd / 1000 != self.second {
            self.second_of(jd);
        }
        let at = out.len();
        out.extend_from_slice(&self.text);
        put(&mut out[at..], 20, 3, (jd % 1000) as i32);
        true
    }

    /// Makes `text` the stamp of `jd`'s second.
    fn second_of(&mut self, jd: i64) {
        // computeYMD
        let z = ((jd + 43_200_000) / 86_400_000) as i32;
        if z != self.day {
            let a = ((f64::from(z) - 1_867_216.25) / 36_524.25) as i32;
            let a = z + 1 + a - (a / 4);
            let b = a + 1524;
            let c = ((f64::from(b) - 122.1) / 365.25) as i32;
            let d = (36525 * (c & 32767)) / 100;
            let e = (f64::from(b - d) / 30.6001) as i32;
            let x1 = (30.6001 * f64::from(e)) as i32;
            let day = b - d - x1;
            let month = if e < 14 { e - 1 } else { e - 13 };
            let year = if month > 2 { c - 4716 } else { c - 4715 };
            let mut date = *b"0000-00-00";
            put(&mut date, 0, 4, year);
            put(&mut date, 5, 2, month);
            put(&mut date, 8, 2, day);
            self.day = z;
            self.date = date;
        }
        // computeHMS
        let day_ms = ((jd + 43_200_000) % 86_400_000) as i32;
        let ms = day_ms % 60_000;
        let day_min = day_ms / 60_000;
        let (minute, hour) = (day_min % 60, day_min / 60);
        let mut out = *b"0000-00-00T00:00:00.000Z";
        out[..10].copy_from_slice(&self.date);
        put(&mut out, 11, 2, hour);
        put(&mut out, 14, 2, minute);
        put(&mut out, 17, 2, ms / 1000);
        self.second = jd / 1000;
        self.text = out;
    }
}

/// What [`for_each_request_batch`] read of a run.
pub struct Served {
    /// Request rows handed to the sink.
    pub requests: u64,
    /// The run's `v_case_summary` rows (queries/export/cases.sql), summed
    /// from the same rows; None where a value's SQL reading is not plainly
    /// a number or a text: the caller then reads the view.
    pub cases: Option<Batch>,
    /// The run's `v_runs` request counts from the same rows; None where the
    /// case summary is not served.
    pub counts: Option<RunCounts>,
}

thread_local! {
    /// The request batch a worker thread filled last, kept for its next run
    /// (a run's batch is a few MB: made afresh, every page of it faults in
    /// again).
    static SPARE: std::cell::RefCell<Option<Batch>> = const { std::cell::RefCell::new(None) };
}

/// A batch taken from the thread's spare (or made), given back when dropped
/// unless it grew past a run of ordinary size.
struct Reused(Batch);

impl Reused {
    fn take() -> Reused {
        let mut b = SPARE
            .with(|s| s.borrow_mut().take())
            .unwrap_or_else(|| Batch::new(&REQUESTS));
        b.clear();
        Reused(b)
    }
}

impl Drop for Reused {
    fn drop(&mut self) {
        let small = self
            .0
            .columns
            .first()
            .is_none_or(|c| c.rows_capacity() <= 8192);
        if small {
            let b = std::mem::replace(&mut self.0, Batch::new(&REQUESTS));
            SPARE.with(|s| *s.borrow_mut() = Some(b));
        }
    }
}

/// One run's `v_requests` rows, in seq order, made from its pack, handed to
/// `sink` in batches of at most `BATCH_ROWS`, as `db::export::for_each_batch`
/// hands the view's. `Ok(None)` when the run has no pack that serves (some
/// batches may have gone to `sink` by then: the caller starts its file
/// again from the view).
pub fn for_each_request_batch<E>(
    conn: &Connection,
    run_id: &str,
    mut sink: impl FnMut(&Batch) -> Result<(), E>,
) -> Result<Option<Served>, E>
where
    E: From<ReadError>,
{
    let db = |q: &'static sql::Query| move |e| E::from(ReadError::Db(DbError::query(q)(e)));
    // The pack's columns are those of the analysis query.
    let q = &sql::LOAD_REQUESTS_ANALYSIS;
    let names: Vec<String> = {
        let stmt = conn.prepare_cached(q.sql).map_err(db(q))?;
        stmt.column_names().into_iter().map(str::to_owned).collect()
    };
    let Some(lay) = layout(&names) else {
        return Ok(None);
    };
    let q = &sql::EXPORT_RUN_STARTED;
    let run_started: Option<Option<i64>> = conn
        .prepare_cached(q.sql)
        .and_then(|mut s| {
            s.query_row(named_params! {":run_id": run_id}, |r| r.get(0))
                .optional()
        })
        .map_err(db(q))?;
    let Some(run_started) = run_started else {
        // No run: the view's join has no rows either; let it say so.
        return Ok(None);
    };
    let q = &sql::EXPORT_REQUEST_PACK;
    let mut packs = conn.prepare_cached(q.sql).map_err(db(q))?;
    let mut segments = packs
        .query(named_params! {":run_id": run_id})
        .map_err(db(q))?;
    // The columns the analysis pack lacks: packed beside it in `rest` by
    // the ingest, else (a pack made before, or again from the rows) read
    // from the table (a query not stepped costs nothing).
    let qr = &sql::EXPORT_REQUESTS_REST;
    let mut rest_stmt = conn.prepare_cached(qr.sql).map_err(db(qr))?;
    let mut table_rest = rest_stmt
        .query(named_params! {":run_id": run_id})
        .map_err(db(qr))?;
    let mut packed_rest: Option<bool> = None;

    let mut reused = Reused::take();
    let batch = &mut reused.0;
    let mut cases = Cases::default();
    let mut total = 0u64;
    let mut next_segment = 0i64;
    let mut last_seq: Option<i64> = None;
    let mut first_seq: Option<i64> = None;
    let mut failed: Option<rusqlite::Error> = None;
    let mut unserved = false;
    let mut sunk: Option<E> = None;
    while let Some(row) = segments.next().map_err(db(q))? {
        let (number, listed, body) = match (row.get_ref(0), row.get_ref(1), row.get_ref(2)) {
            (Ok(ValueRef::Integer(a)), Ok(ValueRef::Integer(b)), Ok(ValueRef::Blob(c))) => {
                (a, b, c)
            }
            _ => return Ok(None),
        };
        let rest_blob = match row.get_ref(3) {
            Ok(ValueRef::Blob(b)) => Some(b),
            Ok(ValueRef::Null) => None,
            _ => return Ok(None),
        };
        if number != next_segment {
            return Ok(None);
        }
        // Every segment has its `rest`, or none has.
        if *packed_rest.get_or_insert(rest_blob.is_some()) != rest_blob.is_some() {
            return Ok(None);
        }

        if next_segment == 0 {
            // Most runs are one batch: room for it at once.
            let rows = usize::try_from(listed).unwrap_or(0).min(BATCH_ROWS);
            batch.reserve(rows, 16);
        }
        next_segment += 1;
        let segment = match pack::segment(body, &names) {
            Ok(s) if usize::try_from(listed).ok() == Some(s.rows) => s,
            _ => return Ok(None),
        };
        let mut rest_cursor = match rest_blob.map(|b| pack::segment(b, &PACKED_REST)) {
            None => None,
            Some(Ok(s)) if s.rows == segment.rows => Some(s.cursor()),
            Some(_) => return Ok(None),
        };
        let mut scratch = Scratch::default();
        let decoded = segment.rows(|p, changed| {
            // The row's other columns: seq, then the narrow read's.
            let mut rest_row = [ValueRef::Null; REST.len() + 1];
            // Which of them may differ from the row before's (bit k: the
            // narrow read's column k, after seq): read from the table, any.
            let mut rest_changed = u64::MAX;
            let t;
            if let Some(c) = rest_cursor.as_mut() {
                // The packed row of the same table row.
                match c.step() {
                    Ok(Some(bits)) => rest_changed = bits,
                    _ => {
                        unserved = true;
                        return false;
                    }
                }
                let r = c.row();
                rest_row[0] = p.get(lay.seq);
                for (k, v) in rest_row[1..].iter_mut().enumerate() {
                    *v = r.get(k);
                }
            } else {
                t = match table_rest.next() {
                    Ok(Some(t)) => t,
                    Ok(None) => {
                        unserved = true;
                        return false;
                    }
                    Err(e) => {
                        failed = Some(e);
                        return false;
                    }
                };
                // The narrow read's values, each read once (a read through
                // rusqlite is a few SQLite calls).
                for (k, v) in rest_row.iter_mut().enumerate() {
                    match t.get_ref(k) {
                        Ok(x) => *v = x,
                        Err(_) => {
                            unserved = true;
                            return false;
                        }
                    }
                }
            }
            // The same row of the table, in the same order.
            let seq = p.int(lay.seq);
            if seq.is_none() || Some(rest_row[0]) != seq.map(ValueRef::Integer) || seq <= last_seq {
                unserved = true;
                return false;
            }
            last_seq = seq;
            first_seq = first_seq.or(seq);
            if push_row(
                batch,
                &lay,
                run_id,
                run_started,
                (&p, changed),
                (&rest_row, rest_changed),
                &mut scratch,
            )
            .is_err()
            {
                unserved = true;
                return false;
            }
            batch.end_row();
            cases.add([
                p.get(lay.phase),
                rest_row[REST_CASE_KEY],
                p.get(lay.status),
                rest_row[REST_STATUS_KEY],
                p.get(lay.e2e),
                p.get(lay.ttft),
                p.get(lay.output_tokens),
            ]);
            if batch.rows() == BATCH_ROWS {
                total += batch.rows() as u64;
                if let Err(e) = sink(batch) {
                    sunk = Some(e);
                    return false;
                }
                batch.clear();
            }
            true
        });
        if let Some(e) = sunk {
            return Err(e);
        }
        if let Some(e) = failed {
            return Err(db(qr)(e));
        }
        if unserved || decoded.is_err() {
            return Ok(None);
        }
        if rest_cursor
            .as_ref()
            .is_some_and(|c| c.left() != 0 || c.end().is_err())
        {
            return Ok(None);
        }
    }
    if next_segment == 0 {
        return Ok(None);
    }
    // The pack spans every row of the table.
    if packed_rest == Some(false) && table_rest.next().map_err(db(qr))?.is_some() {
        return Ok(None);
    }
    // Read beside `rest`, no table row was read: the pack spans the run's
    // rows from the first to the last, as a report checks it (with the
    // triggers that drop a pack when its run's rows change, that stands in
    // for counting them).
    if packed_rest == Some(true) {
        let q = &sql::LOAD_REQUEST_SEQ_RANGE;
        let ends: (Option<i64>, Option<i64>) = conn
            .prepare_cached(q.sql)
            .and_then(|mut s| {
                s.query_row(named_params! {":run_id": run_id}, |r| {
                    Ok((r.get(0)?, r.get(1)?))
                })
            })
            .map_err(db(q))?;
        if ends != (first_seq, last_seq) {
            return Ok(None);
        }
    }
    if !batch.is_empty() {
        total += batch.rows() as u64;
        sink(batch)?;
    }
    let counts = cases.run_counts();
    let cases = if cases.unserved {
        None
    } else {
        case_windows(conn, run_id)
            .map_err(|e| E::from(ReadError::Db(e)))?
            .and_then(|w| cases.batch(run_id, &w))
    };
    Ok(Some(Served {
        requests: total,
        cases,
        counts,
    }))
}

/// Each `(case_key, phase)`'s `window_s`.
type Windows = std::collections::HashMap<(Vec<u8>, Vec<u8>), Option<f64>>;

/// Each `(case_key, phase)`'s `window_s` of a run, as `v_case_summary`
/// looks it up; None when a key is not text or appears twice (the view's
/// scalar subquery would pick one its own way) or a window is not a number.
fn case_windows(conn: &Connection, run_id: &str) -> Result<Option<Windows>, DbError> {
    let q = &sql::EXPORT_CASE_WINDOWS;
    let mut stmt = conn.prepare_cached(q.sql).map_err(DbError::query(q))?;
    let mut rows = stmt
        .query(named_params! {":run_id": run_id})
        .map_err(DbError::query(q))?;
    let mut out = std::collections::HashMap::new();
    while let Some(r) = rows.next().map_err(DbError::query(q))? {
        let get = |i| r.get_ref(i).map_err(DbError::query(q));
        let (case, phase) = match (get(0)?, get(1)?) {
            (ValueRef::Text(c), ValueRef::Text(p)) => (c.to_vec(), p.to_vec()),
            // A NULL key matches no request (`=`, not `IS`).
            (ValueRef::Null, _) | (_, ValueRef::Null) => continue,
            _ => return Ok(None),
        };
        let window = match get(2)? {
            ValueRef::Null => None,
            ValueRef::Integer(x) => Some(x as f64),
            ValueRef::Real(x) => Some(x),
            _ => return Ok(None),
        };
        if out.insert((case, phase), window).is_some() {
            return Ok(None);
        }
    }
    Ok(Some(out))
}

/// SQLite's `sum()`/`avg()` accumulator (func.c, `SumCtx`, 3.43 and later):
/// integers summed exactly until the first real or an overflow, then a
/// Kahan-Babuska-Neumaier sum of doubles.
#[derive(Debug, Default, Clone, Copy)]
struct SqlSum {
    count: i64,
    approx: bool,
    int: i64,
    sum: f64,
    err: f64,
}

impl SqlSum {
    fn kbn(&mut self, r: f64) {
        let s = self.sum;
        let t = s + r;
        if s.abs() > r.abs() {
            self.err += (s - t) + r;
        } else {
            self.err += (r - t) + s;
        }
        self.sum = t;
    }

    fn kbn_int(&mut self, v: i64) {
        if !(-4_503_599_627_370_495..=4_503_599_627_370_495).contains(&v) {
            let small = v % 16384;
            self.kbn((v - small) as f64);
            self.kbn(small as f64);
        } else {
            self.kbn(v as f64);
        }
    }

    fn start_approx(&mut self) {
        let v = self.int;
        if !(-4_503_599_627_370_495..=4_503_599_627_370_495).contains(&v) {
            let small = v % 16384;
            self.sum = (v - small) as f64;
            self.err = small as f64;
        } else {
            self.sum = v as f64;
            self.err = 0.0;
        }
        self.approx = true;
    }

    fn int(&mut self, v: i64) {
        self.count += 1;
        if self.approx {
            self.kbn_int(v);
        } else if let Some(x) = self.int.checked_add(v) {
            self.int = x;
        } else {
            self.start_approx();
            self.kbn_int(v);
        }
    }

    fn real(&mut self, v: f64) {
        self.count += 1;
        if !self.approx {
            self.start_approx();
        }
        self.kbn(v);
    }

    /// `avg()`: NULL over no values.
    fn avg(&self) -> Option<f64> {
        if self.count == 0 {
            return None;
        }
        let total = if self.approx {
            if self.err.is_nan() {
                self.sum
            } else {
                self.sum + self.err
            }
        } else {
            self.int as f64
        };
        Some(total / self.count as f64)
    }
}

/// `min()` and `max()` of numbers, as SQLite keeps them (the first of equal
/// values), then `CAST(... AS REAL)`.
#[derive(Debug, Default, Clone, Copy)]
struct MinMax {
    min: Option<f64>,
    max: Option<f64>,
}

impl MinMax {
    fn add(&mut self, v: f64) {
        if self.min.is_none_or(|m| v < m) {
            self.min = Some(v);
        }
        if self.max.is_none_or(|m| v > m) {
            self.max = Some(v);
        }
    }
}

/// One `(phase, case_key)` group of `v_case_summary`, being summed.
#[derive(Debug, Default, Clone)]
struct CaseSum {
    requests: i64,
    /// `sum(status = 'ok')`, `sum(status_key <> 'ok')`: None while every
    /// value was NULL.
    ok: Option<i64>,
    failed: Option<i64>,
    e2e: SqlSum,
    e2e_range: MinMax,
    ttft: SqlSum,
    ttft_range: MinMax,
    output_tokens: Option<i64>,
}

type CaseKey = (Option<Vec<u8>>, Option<Vec<u8>>);

/// A run's `v_case_summary` rows made from the rows the export reads anyway.
/// Any value whose SQL reading is not plainly a number or a text (a blob, a
/// number stored as text, an integer sum past 64 bits) gives up: the caller
/// reads the view.
#[derive(Debug, Default)]
struct Cases {
    groups: Vec<(CaseKey, CaseSum)>,
    index: std::collections::HashMap<CaseKey, usize>,
    last: Option<usize>,
    unserved: bool,
}

/// A value as text or NULL; anything else is not served.
fn text_or_null(v: ValueRef<'_>) -> Result<Option<&[u8]>, Unserved> {
    match v {
        ValueRef::Null => Ok(None),
        ValueRef::Text(t) => Ok(Some(t)),
        _ => Err(Unserved),
    }
}

impl Cases {
    fn group(&mut self, phase: Option<&[u8]>, case: Option<&[u8]>) -> usize {
        if let Some(i) = self.last {
            let (p, c) = &self.groups[i].0;
            if p.as_deref() == phase && c.as_deref() == case {
                return i;
            }
        }
        let key = (phase.map(<[u8]>::to_vec), case.map(<[u8]>::to_vec));
        let next = self.groups.len();
        let i = *self.index.entry(key.clone()).or_insert(next);
        if i == next {
            self.groups.push((key, CaseSum::default()));
        }
        self.last = Some(i);
        i
    }

    /// Adds one request row: `phase`, `status`, `e2e_latency_ms`, `ttft_ms`
    /// and `output_tokens` as the table stores them, `case_key` and
    /// `status_key` likewise.
    fn add(&mut self, row: [ValueRef<'_>; 7]) {
        if self.unserved {
            return;
        }
        if self.try_add(row).is_err() {
            self.unserved = true;
        }
    }

    fn try_add(&mut self, row: [ValueRef<'_>; 7]) -> Result<(), Unserved> {
        let [phase, case, status, status_key, e2e, ttft, tokens] = row;
        let phase = text_or_null(phase)?;
        let case = text_or_null(case)?;
        let status = text_or_null(status)?;
        let status_key = text_or_null(status_key)?;
        let i = self.group(phase, case);
        let g = &mut self.groups[i].1;
        g.requests += 1;
        if let Some(s) = status {
            *g.ok.get_or_insert(0) += i64::from(s == b"ok");
        }
        if let Some(s) = status_key {
            *g.failed.get_or_insert(0) += i64::from(s != b"ok");
        }
        match tokens {
            ValueRef::Null => {}
            ValueRef::Integer(x) => {
                let sum = g
                    .output_tokens
                    .unwrap_or(0)
                    .checked_add(x)
                    .ok_or(Unserved)?;
                g.output_tokens = Some(sum);
            }
            _ => return Err(Unserved),
        }
        if status == Some(b"ok") {
            for (v, sum, range) in [
                (e2e, &mut g.e2e, &mut g.e2e_range),
                (ttft, &mut g.ttft, &mut g.ttft_range),
            ] {
                match v {
                    ValueRef::Null => {}
                    // Compared and cast exactly only within 2^53.
                    ValueRef::Integer(x) if x.unsigned_abs() <= 1 << 53 => {
                        sum.int(x);
                        range.add(x as f64);
                    }
                    ValueRef::Real(x) => {
                        sum.real(x);
                        range.add(x);
                    }
                    _ => return Err(Unserved),
                }
            }
        }
        Ok(())
    }

    /// The run's `v_runs` counts (queries/export/run.sql) from the groups:
    /// over the `measured` ones, their distinct case keys (NULL not
    /// counted), requests, `status = 'ok'` and `status_key <> 'ok'`.
    fn run_counts(&self) -> Option<RunCounts> {
        if self.unserved {
            return None;
        }
        let mut c = RunCounts::default();
        for ((phase, case), g) in &self.groups {
            if phase.as_deref() != Some(b"measured".as_slice()) {
                continue;
            }
            // One group per (phase, case_key): each a distinct key.
            c.cases += i64::from(case.is_some());
            c.requests += g.requests;
            c.ok += g.ok.unwrap_or(0);
            c.failed += g.failed.unwrap_or(0);
        }
        Some(c)
    }

    /// The rows, ordered as queries/export/cases.sql orders them (phase,
    /// then case_key, NULL first, bytes compared); `windows` holds each
    /// `(case_key, phase)`'s `window_s`. None when not served.
    fn batch(mut self, run_id: &str, windows: &Windows) -> Option<Batch> {
        if self.unserved {
            return None;
        }
        self.groups.sort_by(|a, b| a.0.cmp(&b.0));
        let mut batch = Batch::new(&CASES);
        let text = |b: &Option<Vec<u8>>| -> Option<String> {
            b.as_ref().map(|v| String::from_utf8_lossy(v).into_owned())
        };
        for ((phase, case), g) in &self.groups {
            let phase_s = text(phase);
            let case_s = text(case);
            let window = match (case, phase) {
                (Some(c), Some(p)) => windows.get(&(c.clone(), p.clone())).copied().flatten(),
                _ => None,
            };
            let int = |x: Option<i64>| x.map_or(Cell::Null, Cell::Int);
            let real = |x: Option<f64>| x.map_or(Cell::Null, Cell::Real);
            let failure_rate = g.failed.map(|f| f as f64 / g.requests as f64);
            let cells = [
                Cell::Text(run_id),
                phase_s.as_deref().map_or(Cell::Null, Cell::Text),
                case_s.as_deref().map_or(Cell::Null, Cell::Text),
                Cell::Int(g.requests),
                int(g.ok),
                int(g.failed),
                real(failure_rate),
                real(g.e2e.avg()),
                real(g.e2e_range.min),
                real(g.e2e_range.max),
                real(g.ttft.avg()),
                real(g.ttft_range.min),
                real(g.ttft_range.max),
                int(g.output_tokens),
                real(window),
            ];
            for (i, c) in cells.into_iter().enumerate() {
                batch.push(i, c).ok()?;
            }
            batch.end_row();
        }
        Some(batch)
    }
}

/// What [`push_row`] keeps from row to row: room for a value made UTF-8,
/// the stamps' day.
#[derive(Default)]
struct Scratch {
    owned: String,
    stamps: Stamps,
}

/// Puts a stored text value into column `i` as its bytes (the writer checks
/// them a column at a time), as a repeat of the row before's where
/// `repeat`; None when it did, the value itself for the caller to put
/// otherwise.
#[inline(always)]
fn push_text<'v>(
    batch: &mut Batch,
    i: usize,
    v: ValueRef<'v>,
    repeat: bool,
) -> Result<Option<ValueRef<'v>>, Unserved> {
    let ValueRef::Text(b) = v else {
        return Ok(Some(v));
    };
    match repeat {
        true => batch.push_repeat(i, b),
        false => batch.push_bytes(i, b),
    }
    .map_err(|_| Unserved)?;
    Ok(None)
}

/// Puts one row into `batch` (every column; the caller ends the row): the
/// pack's row and the rest's, each with its bits of the columns that may
/// differ from the row before's ([`pack::Segment::rows`]).
fn push_row(
    batch: &mut Batch,
    lay: &Layout,
    run_id: &str,
    run_started: Option<i64>,
    (p, changed): (&pack::Row<'_>, u64),
    (rest, rest_changed): (&[ValueRef<'_>; REST.len() + 1], u64),
    scratch: &mut Scratch,
) -> Result<(), Unserved> {
    // A text value the pack marks as the row before's goes in as a repeat
    // (a dictionary column then takes the row before's index without
    // comparing the bytes).
    let same = |bits: u64, k: usize| k < 64 && bits & (1 << k) == 0;
    let Scratch { owned, stamps } = scratch;
    let ns = |i: usize| instant(p.get(i));
    let intended = ns(lay.intended)?;
    let started = ns(lay.started)?;
    let ended = ns(lay.ended)?;
    let of = |w: Instant| match w {
        Instant::Intended => intended,
        Instant::Started => started,
        Instant::Ended => ended,
    };
    for (i, src) in lay.sources.iter().enumerate() {
        let c = match *src {
            Src::RunId => Cell::Text(run_id),
            Src::Pack(k) => match push_text(batch, i, p.get(k), same(changed, k))? {
                Some(v) => cell(v, owned)?,
                None => continue,
            },
            Src::PackInt(k) => p.int(k).map_or(Cell::Null, Cell::Int),
            Src::Rest(k) => {
                let v = rest.get(k).copied().ok_or(Unserved)?;
                // `rest` holds seq first: the narrow read's column k - 1.
                let repeat = k > 0 && same(rest_changed, k - 1);
                match push_text(batch, i, v, repeat)? {
                    Some(v) => cell(v, owned)?,
                    None => continue,
                }
            }
            Src::RestInt(k) => match rest.get(k).copied().ok_or(Unserved)? {
                ValueRef::Integer(x) => Cell::Int(x),
                _ => Cell::Null,
            },
            Src::Ok => Cell::Int(i64::from(p.text(lay.status) == Some(b"ok"))),
            Src::FromIntended => match (ended, intended) {
                (Some(e), Some(s)) => Cell::Real(sub(e, s) / 1e6),
                _ => Cell::Null,
            },
            Src::Stamp(w) => {
                batch
                    .push_text_with(i, |out| of(w).is_some_and(|ns| stamps.stamp_into(ns, out)))
                    .map_err(|_| Unserved)?;
                continue;
            }
            Src::Since(w) => match (of(w), run_started) {
                (Some(x), Some(r)) => Cell::Real(sub(x, r) / 1e9),
                _ => Cell::Null,
            },
            Src::Millis(w) => of(w).map_or(Cell::Null, |x| Cell::Int(x / 1_000_000)),
        };
        batch.push(i, c).map_err(|_| Unserved)?;
    }
    Ok(())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    /// The instants' text is SQLite's, to the millisecond and its rounding.
    #[test]
    fn stamps_are_sqlites() {
        let conn = crate::db::open_memory().unwrap();
        let mut stmt = conn
            .prepare("SELECT strftime('%Y-%m-%dT%H:%M:%fZ', ?1 / 1e9, 'unixepoch')")
            .unwrap();
        let mut cases: Vec<i64> = vec![
            0,
            1,
            -1,
            499_999,
            500_000,
            999_999_999,
            1_795_961_268_500_000_000,
            1_795_961_268_999_500_000,
            1_795_961_268_999_499_999,
            951_782_400_000_000_000, // 2000-02-29
            i64::MAX,
            i64::MIN,
            -86_400_000_000_000,
        ];
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        for _ in 0..20_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            cases.push(x as i64);
            cases.push((x % 4_000_000_000_000_000_000) as i64);
        }
        // Instants a few hours apart, crossing days, through one cache.
        cases.extend((0..2_000).map(|k| 1_795_961_268_500_000_000 + k * 9_876_543_210_987));
        // Many to a second, and milliseconds rounding up into the next one.
        cases.extend((0..3_000).map(|k| 1_795_961_268_000_000_000 + k * 37_000_123));
        cases.extend((0..500).map(|k| 1_795_961_268_999_499_999 + (k % 2) + k * 1_000_000_000));
        let mut stamps = Stamps::default();
        for ns in cases {
            let theirs: Option<String> = stmt.query_row([ns], |r| r.get(0)).unwrap();
            assert_eq!(sqlite_stamp(ns), theirs, "{ns}");
            let cached = stamps
                .stamp(ns)
                .map(|b| String::from_utf8(b.to_vec()).unwrap());
            assert_eq!(cached, theirs, "{ns} cached");
        }
    }

    fn batches(
        read: impl FnOnce(&mut dyn FnMut(&Batch) -> Result<(), ReadError>) -> Option<u64>,
    ) -> Option<Vec<Batch>> {
        let mut out = Vec::new();
        read(&mut |b: &Batch| {
            out.push(b.clone());
            Ok(())
        })
        .map(|_| out)
    }

    fn fast(conn: &Connection, run: &str) -> Option<Vec<Batch>> {
        batches(|sink| {
            for_each_request_batch(conn, run, sink)
                .unwrap()
                .map(|s| s.requests)
        })
    }

    /// The run's case summary as the export makes it beside its requests.
    fn fast_cases(conn: &Connection, run: &str) -> Option<Batch> {
        for_each_request_batch::<ReadError>(conn, run, |_| Ok(()))
            .unwrap()
            .and_then(|s| s.cases)
    }

    fn view_cases(conn: &Connection, run: &str) -> Vec<Batch> {
        batches(|sink| Some(super::super::export::for_each_batch(conn, &CASES, run, sink).unwrap()))
            .unwrap()
    }

    fn view(conn: &Connection, run: &str) -> Vec<Batch> {
        batches(|sink| {
            Some(super::super::export::for_each_batch(conn, &REQUESTS, run, sink).unwrap())
        })
        .unwrap()
    }

    /// Column by column, every value the same, reals to the bit.
    fn assert_same(a: &[Batch], b: &[Batch], run: &str) {
        let table = a.first().or(b.first()).map_or(&REQUESTS, |x| x.table);
        use crate::columnar::Values;
        assert_eq!(a.len(), b.len(), "{run}: batches");
        for (x, y) in a.iter().zip(b) {
            assert_eq!(x.rows(), y.rows(), "{run}");
            for (k, (cx, cy)) in x.columns.iter().zip(&y.columns).enumerate() {
                let name = table.columns[k].name;
                assert_eq!(
                    cx.defined_flags(),
                    cy.defined_flags(),
                    "{run}: {name}: nulls"
                );
                match (&cx.values, &cy.values) {
                    (Values::Int(p), Values::Int(q)) => assert_eq!(p, q, "{run}: {name}"),
                    (Values::Real(p), Values::Real(q)) => {
                        let bits = |v: &[f64]| v.iter().map(|f| f.to_bits()).collect::<Vec<_>>();
                        assert_eq!(bits(p), bits(q), "{run}: {name}");
                    }
                    (Values::Text { data: p, ends: e }, Values::Text { data: q, ends: f }) => {
                        assert!(p == q && e == f, "{run}: {name}")
                    }
                    (Values::Dict(p), Values::Dict(q)) => {
                        assert!(p.expand() == q.expand(), "{run}: {name}")
                    }
                    _ => panic!("{run}: {name}: not the same kind"),
                }
            }
        }
    }

    fn ingest_all(db: &std::path::Path) -> Connection {
        let cases = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/conformance/cases");
        let mut conn = crate::db::open(db, crate::db::Mode::ReadWrite).unwrap();
        let mut dirs: Vec<_> = std::fs::read_dir(cases)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        dirs.sort();
        for d in dirs {
            let a = d.join("artifact.jsonl");
            if a.exists() {
                // A case whose artifact does not ingest has no run to compare.
                let _ = crate::ingest::ingest_artifact(&mut conn, &a, &Default::default());
            }
        }
        conn
    }

    fn run_ids(conn: &Connection) -> Vec<String> {
        let mut stmt = conn
            .prepare("SELECT run_id FROM runs ORDER BY run_id")
            .unwrap();
        let ids = stmt.query_map([], |r| r.get(0)).unwrap();
        ids.map(Result::unwrap).collect()
    }

    /// Every conformance run's rows made from its pack are the view's, value
    /// for value and bit for bit; a run without a pack, or with one holding a
    /// value the view's arithmetic reads its own way, is left to the view.
    #[test]
    fn packed_rows_are_the_views_rows() {
        let tmp = tempfile::tempdir().unwrap();
        let conn = ingest_all(&tmp.path().join("p.db"));
        let runs = run_ids(&conn);
        let mut served = 0;
        let mut rows = 0;
        for run in &runs {
            let view = view(&conn, run);
            if let Some(fast) = fast(&conn, run) {
                assert_same(&fast, &view, run);
                let cases = fast_cases(&conn, run).expect("a case summary");
                let cases: Vec<Batch> = Some(cases).filter(|c| !c.is_empty()).into_iter().collect();
                assert_same(&cases, &view_cases(&conn, run), run);
                // The v_runs counts from the same walk are the view's.
                let counts = for_each_request_batch::<ReadError>(&conn, run, |_| Ok(()))
                    .unwrap()
                    .and_then(|s| s.counts)
                    .expect("counts");
                let base = super::super::export::run_base(&conn, run).unwrap().unwrap();
                assert_eq!(
                    Some(base.with_counts(counts)),
                    super::super::export::run_row_of(&conn, run).unwrap(),
                    "{run}"
                );
                served += 1;
                rows += fast.iter().map(Batch::rows).sum::<usize>();
            }
        }
        assert!(
            runs.len() >= 30 && served == runs.len(),
            "{served} of {}",
            runs.len()
        );
        assert!(rows > 5_000, "{rows} rows");

        let run = &runs[0];
        // A value past 64 bits, packed as the text it is stored as.
        conn.execute(
            "UPDATE requests SET started_at_ns = '123456789012345678901234' WHERE run_id = ?1 AND seq = (SELECT max(seq) FROM requests WHERE run_id = ?1)",
            [run],
        )
        .unwrap();
        assert!(fast(&conn, run).is_none(), "the edit dropped the pack");
        let segments = super::super::store::pack_rows(&conn, run).unwrap();
        super::super::store::store_pack(&conn, run, &segments).unwrap();
        assert!(fast(&conn, run).is_none(), "a wide integer is the view's");
        // Packed again without it, the run is served again.
        conn.execute(
            "UPDATE requests SET started_at_ns = NULL WHERE run_id = ?1 AND typeof(started_at_ns) = 'text'",
            [run],
        )
        .unwrap();
        let segments = super::super::store::pack_rows(&conn, run).unwrap();
        super::super::store::store_pack(&conn, run, &segments).unwrap();
        assert_same(&fast(&conn, run).unwrap(), &view(&conn, run), run);
        // A pack short of the table's rows is not read.
        conn.execute(
            "DELETE FROM request_packs WHERE run_id = ?1 AND segment = (SELECT max(segment) FROM request_packs WHERE run_id = ?1)",
            [run],
        )
        .unwrap();
        assert!(fast(&conn, run).is_none());
    }

    /// The ingest packs the export's other columns into every segment's
    /// `rest`; read from there or (where a pack has none) from the table,
    /// the rows are the same, and a damaged `rest` leaves the run to the
    /// view.
    #[test]
    fn rest_packed_or_read_from_the_table_alike() {
        let tmp = tempfile::tempdir().unwrap();
        let conn = ingest_all(&tmp.path().join("p.db"));
        let count = |q: &str| -> i64 { conn.query_row(q, [], |r| r.get(0)).unwrap() };
        assert!(count("SELECT count(*) FROM request_packs") >= 30);
        assert_eq!(
            count("SELECT count(*) FROM request_packs WHERE rest IS NULL"),
            0
        );
        let runs = run_ids(&conn);
        let packed: Vec<Vec<Batch>> = runs.iter().map(|r| fast(&conn, r).unwrap()).collect();
        conn.execute("UPDATE request_packs SET rest = NULL", [])
            .unwrap();
        for (run, packed) in runs.iter().zip(&packed) {
            let read = fast(&conn, run).expect("served from the table");
            assert_same(packed, &read, run);
        }
        let run = &runs[0];
        for damaged in ["x'00'", "x'534C504B01'", "body"] {
            conn.execute(
                &format!("UPDATE request_packs SET rest = {damaged} WHERE run_id = ?1"),
                [run],
            )
            .unwrap();
            assert!(fast(&conn, run).is_none(), "{damaged}");
        }
    }

    /// A row added behind the pack's back (triggers off, so the pack stays)
    /// is seen: read beside `rest` no table row is read, so the pack's ends
    /// are checked against the run's rows'.
    #[test]
    fn a_row_added_with_the_triggers_off_leaves_the_run_to_the_view() {
        let tmp = tempfile::tempdir().unwrap();
        let conn = ingest_all(&tmp.path().join("p.db"));
        let run = &run_ids(&conn)[0];
        assert!(fast(&conn, run).is_some());
        conn.set_db_config(crate::db::DbConfig::SQLITE_DBCONFIG_ENABLE_TRIGGER, false)
            .unwrap();
        conn.execute(
            "INSERT INTO requests (run_id, seq, case_key, status_key)
             SELECT run_id, max(seq) + 1, 'c', 'ok' FROM requests WHERE run_id = ?1",
            [run],
        )
        .unwrap();
        let kept: i64 = conn
            .query_row(
                "SELECT count(*) FROM request_packs WHERE run_id = ?1 AND rest IS NOT NULL",
                [run],
                |r| r.get(0),
            )
            .unwrap();
        assert!(kept >= 1, "the pack stayed");
        assert!(fast(&conn, run).is_none());
    }

    /// A database of schema version 14 (packs without `rest`) is migrated:
    /// its packs get the column, NULL, and its rows are still served.
    #[test]
    fn packs_from_before_0015_are_served_from_the_table() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("v14.db");
        let runs = {
            let conn = ingest_all(&path);
            conn.execute_batch(
                "ALTER TABLE request_packs DROP COLUMN rest; PRAGMA user_version = 14;",
            )
            .unwrap();
            run_ids(&conn)
        };
        let conn = crate::db::open(&path, crate::db::Mode::ReadWrite).unwrap();
        let nulls: i64 = conn
            .query_row(
                "SELECT count(*) FROM request_packs WHERE rest IS NULL",
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert!(nulls >= 30, "{nulls}");
        for run in &runs {
            assert_same(&fast(&conn, run).expect("served"), &view(&conn, run), run);
        }
    }

    /// Differences are SQLite's too, where they overflow as well.
    #[test]
    fn differences_are_sqlites() {
        let conn = crate::db::open_memory().unwrap();
        let mut stmt = conn.prepare("SELECT (?1 - ?2) / 1e9").unwrap();
        for (a, b) in [
            (5i64, 3i64),
            (i64::MAX, -1),
            (i64::MIN, 1),
            (i64::MIN, i64::MAX),
            (1_795_961_268_500_000_123, 1_795_961_268_000_000_000),
        ] {
            let theirs: f64 = stmt.query_row([a, b], |r| r.get(0)).unwrap();
            assert_eq!((sub(a, b) / 1e9).to_bits(), theirs.to_bits(), "{a} {b}");
        }
    }

    /// `avg`, `min` and `max` of mixed integers and reals, huge and tiny,
    /// are SQLite's to the bit.
    #[test]
    fn sums_are_sqlites() {
        let conn = crate::db::open_memory().unwrap();
        conn.execute_batch("CREATE TEMP TABLE t (g INTEGER, v)")
            .unwrap();
        let mut x: u64 = 0x2545_F491_4F6C_DD1D;
        let mut groups: Vec<Vec<rusqlite::types::Value>> = vec![Vec::new(); 40];
        for (g, vals) in groups.iter_mut().enumerate() {
            for k in 0..(50 + g * 7) {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                let v = match (g % 5, k % 3) {
                    (0, _) => rusqlite::types::Value::Real((x % 100_000) as f64 / 7.0),
                    (1, 0) => rusqlite::types::Value::Integer((x % 1000) as i64 - 500),
                    (1, _) => rusqlite::types::Value::Real(f64::from_bits(x >> 2) * 1e-300),
                    (2, _) => rusqlite::types::Value::Integer((x >> 12) as i64 - (1 << 51)),
                    (3, 2) => rusqlite::types::Value::Real(1e16 + (x % 10) as f64),
                    (3, _) => rusqlite::types::Value::Integer(i64::MAX / 3 + (x % 99) as i64),
                    _ => rusqlite::types::Value::Real(((x % 2000) as f64 - 1000.0) * 0.1),
                };
                vals.push(v);
            }
        }
        for (g, vals) in groups.iter().enumerate() {
            for v in vals {
                conn.execute(
                    "INSERT INTO t VALUES (?1, ?2)",
                    rusqlite::params![g as i64, v],
                )
                .unwrap();
            }
            let (avg, min, max): (Option<f64>, Option<f64>, Option<f64>) = conn
                .query_row(
                    "SELECT avg(v), CAST(min(v) AS REAL), CAST(max(v) AS REAL) FROM t WHERE g = ?1",
                    [g as i64],
                    |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
                )
                .unwrap();
            let mut sum = SqlSum::default();
            let mut range = MinMax::default();
            for v in vals {
                match *v {
                    rusqlite::types::Value::Integer(i) => {
                        sum.int(i);
                        range.add(i as f64);
                    }
                    rusqlite::types::Value::Real(r) => {
                        sum.real(r);
                        range.add(r);
                    }
                    _ => unreachable!(),
                }
            }
            let bits = |o: Option<f64>| o.map(f64::to_bits);
            assert_eq!(bits(sum.avg()), bits(avg), "group {g} avg");
            if g % 5 != 3 {
                assert_eq!(bits(range.min), bits(min), "group {g} min");
                assert_eq!(bits(range.max), bits(max), "group {g} max");
            }
        }
    }
}
