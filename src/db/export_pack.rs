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

use super::export::{ReadError, BATCH_ROWS};
use super::pack::{self, Fields};
use super::DbError;
use crate::columnar::{Batch, Cell, REQUESTS};
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

/// The columns of the narrow read, in its order (after seq, column 0).
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

/// The pack columns read besides those exported as they are.
struct Layout {
    sources: Vec<Src>,
    seq: usize,
    status: usize,
    intended: usize,
    started: usize,
    ended: usize,
}

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
    let s = ns as f64 / 1e9;
    let r = s * 1000.0 + 210_866_760_000_000.0;
    if !(0.0..464_269_060_800_000.0).contains(&r) {
        return None;
    }
    let jd = (r + 0.5) as i64;
    // computeYMD
    let z = ((jd + 43_200_000) / 86_400_000) as i32;
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
    // computeHMS
    let day_ms = ((jd + 43_200_000) % 86_400_000) as i32;
    let ms = day_ms % 60_000;
    let day_min = day_ms / 60_000;
    let (minute, hour) = (day_min % 60, day_min / 60);
    let mut out = *b"0000-00-00T00:00:00.000Z";
    let mut put = |at: usize, width: usize, v: i32| {
        let mut v = v.clamp(0, 9999) as u32;
        for k in (at..at + width).rev() {
            out[k] = b'0' + (v % 10) as u8;
            v /= 10;
        }
    };
    put(0, 4, year);
    put(5, 2, month);
    put(8, 2, day);
    put(11, 2, hour);
    put(14, 2, minute);
    put(17, 2, ms / 1000);
    put(20, 3, ms % 1000);
    Some(out)
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
) -> Result<Option<u64>, E>
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
    let q = &sql::LOAD_REQUEST_PACK;
    let mut packs = conn.prepare_cached(q.sql).map_err(db(q))?;
    let mut segments = packs
        .query(named_params! {":run_id": run_id, ":from": 0i64, ":to": i64::MAX})
        .map_err(db(q))?;
    let qr = &sql::EXPORT_REQUESTS_REST;
    let mut rest_stmt = conn.prepare_cached(qr.sql).map_err(db(qr))?;
    let mut rest = rest_stmt
        .query(named_params! {":run_id": run_id})
        .map_err(db(qr))?;

    let mut batch = Batch::new(&REQUESTS);
    let mut total = 0u64;
    let mut next_segment = 0i64;
    let mut last_seq: Option<i64> = None;
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
        if number != next_segment {
            return Ok(None);
        }
        next_segment += 1;
        let segment = match pack::segment(body, &names) {
            Ok(s) if usize::try_from(listed).ok() == Some(s.rows) => s,
            _ => return Ok(None),
        };
        let mut owned = String::new();
        let decoded = segment.rows(|p, _| {
            let t = match rest.next() {
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
            // The same row of the table, in the same order.
            let seq = p.int(lay.seq);
            if seq.is_none() || t.get_ref(0).ok() != seq.map(ValueRef::Integer) || seq <= last_seq {
                unserved = true;
                return false;
            }
            last_seq = seq;
            if push_row(&mut batch, &lay, run_id, run_started, &p, t, &mut owned).is_err() {
                unserved = true;
                return false;
            }
            batch.end_row();
            if batch.rows() == BATCH_ROWS {
                total += batch.rows() as u64;
                if let Err(e) = sink(&batch) {
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
    }
    if next_segment == 0 {
        return Ok(None);
    }
    // The pack spans every row of the table.
    if rest.next().map_err(db(qr))?.is_some() {
        return Ok(None);
    }
    if !batch.is_empty() {
        total += batch.rows() as u64;
        sink(&batch)?;
    }
    Ok(Some(total))
}

/// Puts one row into `batch` (every column; the caller ends the row).
fn push_row(
    batch: &mut Batch,
    lay: &Layout,
    run_id: &str,
    run_started: Option<i64>,
    p: &pack::Row<'_>,
    t: &rusqlite::Row<'_>,
    owned: &mut String,
) -> Result<(), Unserved> {
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
            Src::Pack(k) => cell(p.get(k), owned)?,
            Src::PackInt(k) => p.int(k).map_or(Cell::Null, Cell::Int),
            Src::Rest(k) => cell(t.get_ref(k).map_err(|_| Unserved)?, owned)?,
            Src::RestInt(k) => match t.get_ref(k).map_err(|_| Unserved)? {
                ValueRef::Integer(x) => Cell::Int(x),
                _ => Cell::Null,
            },
            Src::Ok => Cell::Int(i64::from(p.text(lay.status) == Some(b"ok"))),
            Src::FromIntended => match (ended, intended) {
                (Some(e), Some(s)) => Cell::Real(sub(e, s) / 1e6),
                _ => Cell::Null,
            },
            Src::Stamp(w) => match of(w).and_then(stamp_bytes) {
                Some(b) => {
                    let s = std::str::from_utf8(&b).map_err(|_| Unserved)?;
                    batch.push(i, Cell::Text(s)).map_err(|_| Unserved)?;
                    continue;
                }
                None => Cell::Null,
            },
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
        for ns in cases {
            let theirs: Option<String> = stmt.query_row([ns], |r| r.get(0)).unwrap();
            assert_eq!(sqlite_stamp(ns), theirs, "{ns}");
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
        batches(|sink| for_each_request_batch(conn, run, sink).unwrap())
    }

    fn view(conn: &Connection, run: &str) -> Vec<Batch> {
        batches(|sink| {
            Some(super::super::export::for_each_batch(conn, &REQUESTS, run, sink).unwrap())
        })
        .unwrap()
    }

    /// Column by column, every value the same, reals to the bit.
    fn assert_same(a: &[Batch], b: &[Batch], run: &str) {
        use crate::columnar::Values;
        assert_eq!(a.len(), b.len(), "{run}: batches");
        for (x, y) in a.iter().zip(b) {
            assert_eq!(x.rows(), y.rows(), "{run}");
            for (k, (cx, cy)) in x.columns.iter().zip(&y.columns).enumerate() {
                let name = REQUESTS.columns[k].name;
                assert_eq!(cx.defined, cy.defined, "{run}: {name}: nulls");
                match (&cx.values, &cy.values) {
                    (Values::Int(p), Values::Int(q)) => assert_eq!(p, q, "{run}: {name}"),
                    (Values::Real(p), Values::Real(q)) => {
                        let bits = |v: &[f64]| v.iter().map(|f| f.to_bits()).collect::<Vec<_>>();
                        assert_eq!(bits(p), bits(q), "{run}: {name}");
                    }
                    (Values::Text { data: p, ends: e }, Values::Text { data: q, ends: f }) => {
                        assert!(p == q && e == f, "{run}: {name}")
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
}
