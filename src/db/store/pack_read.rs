//! Reading a run's requests for the analysis: from its request pack, shared
//! out over threads in runs of segments, or from the rows (two halves on two
//! connections for a large run).
#[allow(unused_imports)]
use super::*;

/// Reads the analysis view of a run's requests (only the columns it needs):
/// from the run's pack when it has one that serves ([`read_pack`]), else
/// from the rows. Large runs are read from the rows in two halves on two
/// connections at once, each half filling its own part of the array, so
/// neither a second copy nor a merge is needed; the halves are checked
/// against the count, and any mismatch (the run replaced between the reads)
/// falls back to one sequential read.
pub(super) fn load_requests(
    conn: &Connection,
    spec: &TableSpec,
    run_id: &str,
    out: &mut Vec<Request>,
    rows: Rows,
) -> Result<(), DbError> {
    let readers = rayon::current_num_threads();
    if read_segments(conn, spec, run_id, out, readers, rows)? {
        return Ok(());
    }
    if rows == Rows::PackOnly && !pack_segments(conn, run_id)?.is_empty() {
        return Err(DbError::Other(format!(
            "the request pack of run '{run_id}' does not read"
        )));
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
/// first touching the memory, 90 MB for 300,000 requests: its pages are
/// mapped first, by the pool's threads ([`map_pages`]), instead of one
/// fault per 4 KiB page as the blanks are written.
pub(super) fn blank_slots(out: &mut Vec<Request>, n: usize) {
    use rayon::prelude::*;
    out.clear();
    out.reserve_exact(n);
    map_pages(out.spare_capacity_mut());
    // Each job clones a blank of its own: one shared blank's symbols would
    // have both threads counting references on the same few cache lines,
    // here and again when the fill replaces them.
    out.par_extend(
        (0..n)
            .into_par_iter()
            .map_init(|| Request::empty(0), |blank, _| blank.clone()),
    );
}

/// Maps the pages under `room` (memory not yet written) ahead of their
/// first write, in `madvise(MADV_POPULATE_WRITE)` calls on the pool's
/// threads. On the virtual machines we measure on, 100 MB took 50-56 ms so,
/// against 77-121 ms faulted in page by page, and 290-390 ms on huge pages
/// (the slots' pages before): a free 2 MiB block is soon handed back to the
/// host (free page reporting), so a huge page is fast only when a process
/// freed it a moment before, as in back-to-back runs (14-22 ms), and first
/// touching a large run's slots was the superlinear part of a 300,000-request
/// load (docs/performance.md). Where the call is not known (a kernel before
/// 5.14, another system), the pages fault in as they are written.
fn map_pages<T>(room: &mut [std::mem::MaybeUninit<T>]) {
    #[cfg(target_os = "linux")]
    {
        use rayon::prelude::*;
        let Some((first, last)) = whole_pages(room) else {
            return;
        };
        let pages = (last - first) / PAGE;
        // Many more parts than threads, taken as threads come free: part of
        // the room may be mapped already (memory the allocator had), so
        // equal address ranges need not be equal work.
        let parts = 16 * rayon::current_num_threads().clamp(1, 8);
        let per = pages.div_ceil(parts).max(1);
        (0..parts).into_par_iter().for_each(|k| {
            let from = first + (k * per).min(pages) * PAGE;
            let to = first + ((k + 1) * per).min(pages) * PAGE;
            if to > from {
                populate(from, to - from);
            }
        });
    }
    #[cfg(not(target_os = "linux"))]
    let _ = room;
}

/// The size of a page [`populate`] maps.
#[cfg(target_os = "linux")]
const PAGE: usize = 4096;

/// The first and end address of the whole pages inside `room`, if any.
#[cfg(target_os = "linux")]
fn whole_pages<T>(room: &mut [std::mem::MaybeUninit<T>]) -> Option<(usize, usize)> {
    let start = room.as_mut_ptr() as usize;
    let end = start + std::mem::size_of_val(room);
    let (first, last) = (start.div_ceil(PAGE) * PAGE, end / PAGE * PAGE);
    (last > first).then_some((first, last))
}

/// `madvise(addr, len, MADV_POPULATE_WRITE)`; a refusal changes nothing.
#[cfg(target_os = "linux")]
#[allow(unsafe_code)]
fn populate(addr: usize, len: usize) {
    // SAFETY: [addr, addr + len) is whole pages inside the spare capacity
    // of a live Vec this thread's caller holds mutably: memory this process
    // owns and that nothing reads before writing it. MADV_POPULATE_WRITE
    // only maps those pages writable (as a write fault would, zero-filled
    // where not yet mapped); it neither frees, moves nor changes any byte
    // that is already there, and fails harmlessly (EINVAL on older kernels).
    let _ = unsafe { libc::madvise(addr as *mut libc::c_void, len, libc::MADV_POPULATE_WRITE) };
}

/// Rows read in key order arrive sorted by sequence number; sorted anyway
/// should they not (a pack is checked as it is read instead).
pub(super) fn in_order(requests: &mut [Request]) {
    if !requests.is_sorted_by_key(|r| r.seq) {
        requests.sort_unstable_by_key(|r| r.seq);
    }
}

/// The first and last sequence numbers of a run's request rows (none when
/// it has no rows).
pub(super) fn seq_range(conn: &Connection, run_id: &str) -> Result<Option<(i64, i64)>, DbError> {
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
pub(super) fn reader_beside(conn: &Connection) -> Option<Connection> {
    use rusqlite::OpenFlags;
    let path = conn.path().filter(|p| !p.is_empty())?;
    let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let second = Connection::open_with_flags(path, flags).ok()?;
    second.busy_timeout(crate::db::BUSY_TIMEOUT).ok()?;
    Some(second)
}

/// Fills `out`, blank requests (`Request::empty`), with the requests of
/// `from <= seq < to`, in order; returns how many there were (reading stops
/// when `out` is full).
pub(crate) fn read_requests(
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
pub(super) fn analysis_rows<'c>(
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
pub(super) const ANALYSIS_COLUMNS: usize = 31;

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
pub(super) struct Fill<'s> {
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
        let syms = self.syms(r, v, changed);
        let mut made = syms.request();
        self.set(&mut made, v);
        *r = made;
    }

    /// [`Fill::fill`] of a slot not yet written: the request is made in the
    /// slot itself rather than on the stack and copied in (320 bytes, twice).
    fn fill_slot<'v, 'r>(
        &mut self,
        slot: &'r mut std::mem::MaybeUninit<Request>,
        blank: &Request,
        v: &impl Fields<'v>,
        changed: u64,
    ) -> &'r mut Request {
        let syms = self.syms(blank, v, changed);
        let r = slot.write(syms.request());
        self.set(r, v);
        r
    }

    /// The sequence number and the shared symbols of the values `v`, made
    /// from `blank` (`Request::empty`): its string-form fields where a column
    /// is null, each shared symbol referenced once, not once for the blank
    /// and again for the value that replaces it. All nine references are
    /// counted here, one after another, before any field of the request is
    /// written: each atomic increment waits for the stores before it, and
    /// between the writes into fresh slots it was the dearest instruction of
    /// the load (`perf`: 5% of a 90,000-request report's samples).
    fn syms<'v>(&mut self, blank: &Request, v: &impl Fields<'v>, changed: u64) -> Syms {
        let unchanged = |column: usize| changed & (1 << column) == 0;
        let seq = v.int(0).unwrap_or_default();
        self.seqs = Some(match self.seqs {
            None => (seq, seq),
            Some((first, last)) => {
                self.increasing &= seq > last;
                (first, seq)
            }
        });
        let mut named = |slot: usize, column: usize, default: &Sym| {
            self.sym(slot, v.text(column), unchanged(column))
                .unwrap_or_else(|| default.clone())
        };
        let case_key = named(0, 1, &blank.case_key);
        let status = named(1, 2, &blank.status);
        let output_token_source = named(4, 20, &blank.output_token_source);
        let arrival_mode = named(5, 21, &blank.arrival_mode);
        let prompt_mode = named(6, 24, &blank.prompt_mode);
        Syms {
            seq,
            case_key,
            status,
            output_token_source,
            arrival_mode,
            prompt_mode,
            phase: self.sym(2, v.text(3), unchanged(3)),
            session_id: self.sym(3, v.text(4), unchanged(4)),
            prompt_digest: self.sym(8, v.text(25), unchanged(25)),
            task: self.sym(7, v.text(28), unchanged(28)),
        }
    }

    /// Sets the fields of `r`, made of the values' [`Syms`], from the rest
    /// of the values `v`.
    fn set<'v>(&self, r: &mut Request, v: &impl Fields<'v>) {
        let text = |i: usize| v.text(i).map(string_of);
        if let Some(t) = v.text(5) {
            set_text(&mut r.request_id, t);
        }
        if let Some(t) = v.text(6) {
            set_text(&mut r.x_request_id, t);
        }
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
        r.held_for_slot = v.int(22).is_some_and(|i| i != 0);
        r.set_in_flight_at_dispatch(v.real(23));
        r.prefix_group = v
            .int(26)
            .map_or(Scalar::Null, |i| Scalar::of(&Value::from(i)));
        r.set_shared_prefix_tokens(v.real(27));
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
            if let Ok(Value::Object(extra)) = crate::py::json::parse(&extra) {
                for (k, v) in &extra {
                    r.apply(k, v);
                }
            }
        }
    }
}

/// Sets `dst` to the string of the text `t`. Out of line: made in the
/// middle of [`Fill::set`], the `String` went through an unaligned copy on
/// the stack that its next read could not take from the store (`perf`: the
/// two ids' moves were a third of the fill's own samples).
#[inline(never)]
fn set_text(dst: &mut Value, t: &[u8]) {
    *dst = Value::String(string_of(t));
}

/// The text `t` as a string, invalid UTF-8 replaced by U+FFFD; valid text
/// (the common case) is checked by `from_utf8`'s fast validation and copied
/// once.
fn string_of(t: &[u8]) -> String {
    match std::str::from_utf8(t) {
        Ok(s) => s.to_owned(),
        Err(_) => String::from_utf8_lossy(t).into_owned(),
    }
}

/// What [`Fill::syms`] made of a row: its sequence number and its shared
/// symbols, each referenced once for the request.
struct Syms {
    seq: i64,
    case_key: Sym,
    status: Sym,
    output_token_source: Sym,
    arrival_mode: Sym,
    prompt_mode: Sym,
    phase: Option<Sym>,
    session_id: Option<Sym>,
    prompt_digest: Option<Sym>,
    task: Option<Sym>,
}

impl Syms {
    /// The request of these symbols, every other field absent.
    fn request(self) -> Request {
        let mut r = Request::empty_with(
            self.seq,
            self.case_key,
            self.status,
            self.output_token_source,
            self.arrival_mode,
            self.prompt_mode,
        );
        r.phase = self.phase;
        r.session_id = self.session_id.map_or(Scalar::Null, Scalar::Str);
        r.prompt_digest = self.prompt_digest.map_or(Scalar::Null, Scalar::Str);
        r.task = self.task;
        r
    }
}

/// Where a run's requests are stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rows {
    /// In their rows, and packed beside them (a kept database).
    Stored,
    /// Only in the pack: a scratch database for one report, whose ingest
    /// packs the request rows without storing them (`Writer::report_only`).
    PackOnly,
}

/// A run's pack segments: (number, rows) in order.
fn pack_segments(conn: &Connection, run_id: &str) -> Result<Vec<(i64, i64)>, DbError> {
    let q = &sql::LOAD_REQUEST_PACK_SEGMENTS;
    let mut stmt = conn.prepare_cached(q.sql).map_err(DbError::query(q))?;
    stmt.query_map(rusqlite::named_params! {":run_id": run_id}, |r| {
        Ok((r.get(0)?, r.get(1)?))
    })
    .and_then(|rows| rows.collect())
    .map_err(DbError::query(q))
}

/// Fills `out` from the run's pack, when it has one that serves: false when
/// it has none, or its segments do not hold the run's rows in the layout
/// read here (`out` may then be partly filled; the caller blanks it again
/// and reads the rows).
///
/// The segments are handed one at a time, as each reader comes free, to
/// up to `readers` readers (at most [`MAX_PACK_READERS`]), on
/// connections of their own, each decoding the bodies as it steps through
/// them, straight from SQLite's buffer into its part of `out`: no body is
/// copied or held past its decoding (at 300,000 requests, 32 MB of fresh
/// memory fewer to touch), and the reads are spread over the threads too.
/// Each reader reads within a transaction of its own and checks the run's
/// stamp (`queries/load/run_stamp.sql`) against the first's, so that all read
/// the same ingest of the run.
#[cfg(test)]
pub(crate) fn read_pack(
    conn: &Connection,
    spec: &TableSpec,
    run_id: &str,
    out: &mut Vec<Request>,
    readers: usize,
) -> Result<bool, DbError> {
    read_segments(conn, spec, run_id, out, readers, Rows::Stored)
}

/// [`read_pack`], the pack checked against the run's rows' ends when they
/// are stored (`Rows::Stored`), or only against itself (`Rows::PackOnly`).
fn read_segments(
    conn: &Connection,
    spec: &TableSpec,
    run_id: &str,
    out: &mut Vec<Request>,
    readers: usize,
    rows: Rows,
) -> Result<bool, DbError> {
    let _snapshot = Snapshot::begin(conn)?;
    let listed = pack_segments(conn, run_id)?;
    // Segments numbered 0, 1, ... in order, each with its row count.
    let mut segments = Vec::with_capacity(listed.len());
    // A count past what an ingest packs in one segment is no pack of ours
    // (a hand-edited row): reading it would ask for room it never fills.
    for (i, (number, rows)) in listed.into_iter().enumerate() {
        match usize::try_from(rows) {
            Ok(rows) if number == i as i64 && rows as u64 <= pack::SEGMENT_ROWS => {
                segments.push(rows)
            }
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
    let slots: usize = segments.iter().sum();
    let wanted = readers.clamp(1, MAX_PACK_READERS).min(segments.len());
    // (None: no rows to check against, in a pack-only run.)
    let ends = if rows == Rows::Stored {
        match seq_range(conn, run_id)? {
            Some(ends) => Some(ends),
            None => return Ok(false),
        }
    } else {
        None
    };
    let readers: Vec<Connection> = (1..wanted).map_while(|_| reader_beside(conn)).collect();
    // The readers write the requests straight into the array's room, each
    // segment into its slots (no blank requests written first, then
    // overwritten: a pass over 29 MB at 90,000 requests); it holds them once
    // every segment is whole.
    out.clear();
    out.reserve_exact(slots);
    // Mapped by the pool beforehand, not by each reader for its own part: a
    // part the allocator had mapped already cost its reader nothing, and the
    // other reader zeroed the fresh pages alone while the first waited (at
    // 90,000 requests, `report --slo` 66.5 -> 61.1 ms, perf stat -r 30).
    map_pages(&mut out.spare_capacity_mut()[..slots]);
    // Each segment's slots, taken by the reader that takes the segment.
    // Segments go to the readers one at a time as they come free, so that
    // they finish together: split once into runs of neighbouring segments,
    // a 90,000-request run's 11 went 5 and 6 (116 M and 139 M instructions),
    // one reader idle for most of a segment.
    let mut parts = Vec::with_capacity(segments.len());
    let mut rest = &mut out.spare_capacity_mut()[..slots];
    for &n in &segments {
        let (part, tail) = rest.split_at_mut(n);
        parts.push(std::sync::Mutex::new(Some(part)));
        rest = tail;
    }
    let next = std::sync::atomic::AtomicUsize::new(0);
    let failed = std::sync::atomic::AtomicBool::new(false);
    let template = Fill::new(spec);
    // The segments a reader read whole.
    let job = |conn: &Connection| -> Result<Vec<ReadSpan>, DbError> {
        use std::sync::atomic::Ordering::Relaxed;
        let mut read = Segments::new(conn, &template, &names, run_id, &segments);
        let mut spans = Vec::new();
        while !failed.load(Relaxed) {
            let k = next.fetch_add(1, Relaxed);
            let Some(slot) = parts.get(k) else {
                break;
            };
            let part = slot.lock().ok().and_then(|mut p| p.take());
            match part.map(|part| read.read_segment(k, part)).transpose() {
                Ok(Some(Some(span))) => spans.push((k, span)),
                // An error stops the other readers too.
                Err(e) => {
                    failed.store(true, Relaxed);
                    return Err(e);
                }
                Ok(_) => {
                    failed.store(true, Relaxed);
                    break;
                }
            }
        }
        Ok(spans)
    };
    let read: Vec<Result<Vec<ReadSpan>, DbError>> = std::thread::scope(|s| {
        let others: Vec<_> = readers
            .into_iter()
            .map(|reader| {
                let (job, stamp) = (&job, &stamp);
                s.spawn(move || {
                    let _snapshot = Snapshot::begin(&reader)?;
                    // A reader that sees another ingest of the run takes
                    // no segment; the others read them all.
                    if run_stamp(&reader, run_id)? != *stamp {
                        return Ok(Vec::new());
                    }
                    job(&reader)
                })
            })
            .collect();
        let mut read = vec![job(conn)];
        for other in others {
            read.push(
                other
                    .join()
                    .unwrap_or_else(|_| Err(DbError::Other("a request reader panicked".into()))),
            );
        }
        read
    });
    let mut spans: Vec<Option<(i64, i64)>> = vec![None; segments.len()];
    for reader in read {
        for (k, span) in reader? {
            if let Some(at) = spans.get_mut(k) {
                *at = Some(span);
            }
        }
    }
    // Some only when every segment was read whole: every slot was written.
    let Some(spans) = spans.into_iter().collect::<Option<Vec<_>>>() else {
        return Ok(false);
    };
    if failed.into_inner() {
        return Ok(false);
    }
    hold_written(out, slots);
    // The segments follow one another, and the pack spans the run's rows
    // from the first to the last. With the triggers that drop a pack when
    // its run's rows change, this stands in for counting the rows (a walk
    // over the run's key, 40 ms at 300,000 requests), which would not see a
    // row changed with the triggers off either.
    Ok(spans.windows(2).all(|w| w[0].1 < w[1].0)
        && ends.is_none_or(|ends| {
            spans.first().map(|s| s.0) == Some(ends.0) && spans.last().map(|s| s.1) == Some(ends.1)
        }))
}

/// A segment a reader read whole, with its first and last seq.
type ReadSpan = (usize, (i64, i64));

/// Takes the first `n` slots of `out`'s room, every one of them written
/// (`Segments::read_segment` of every segment, each whole), as its requests.
#[allow(unsafe_code)]
fn hold_written(out: &mut Vec<Request>, n: usize) {
    assert!(out.is_empty() && n <= out.capacity());
    // SAFETY: `out` is empty and has room for `n`; its room's first `n`
    // slots were split into one part per segment, in order and without a
    // gap, each taken by one reader at most (out of its mutex), and the
    // caller comes here only when every segment's span came back, which
    // `Segments::read_segment` returns only when it wrote every slot of the
    // part once. So the first `n` elements are initialised requests, owned
    // by nothing else.
    unsafe { out.set_len(n) }
}

/// At most this many connections read a pack at once.
pub(super) const MAX_PACK_READERS: usize = 8;

/// A reader of a run's pack segments, on one connection: what it needs,
/// and what it keeps from one segment to the next.
pub(super) struct Segments<'a> {
    conn: &'a Connection,
    names: &'a [String],
    run_id: &'a str,
    /// Every segment's rows, as listed.
    rows: &'a [usize],
    fill: Fill<'a>,
    blank: Request,
    /// Each body is read into this one buffer through one blob handle,
    /// moved from row to row: a body read as a column value came in a
    /// fresh allocation of SQLite's (a segment is about 0.9 MB), whose
    /// pages the kernel zeroed and faulted in anew for every segment
    /// (1,550 of a 90,000-request report's 7,850 page faults).
    body: Vec<u8>,
    blob: Option<rusqlite::blob::Blob<'a>>,
}

impl<'a> Segments<'a> {
    fn new(
        conn: &'a Connection,
        template: &'a Fill<'a>,
        names: &'a [String],
        run_id: &'a str,
        rows: &'a [usize],
    ) -> Self {
        Segments {
            conn,
            names,
            run_id,
            rows,
            fill: template.fresh(),
            blank: Request::empty(0),
            body: Vec::new(),
            blob: None,
        }
    }

    /// Decodes segment `k` into `part`, which holds its rows: its first and
    /// last sequence numbers, when it was there, whole and as listed, each
    /// number above the one before.
    ///
    /// The slots of `part` are room not yet written: each request is made
    /// from this reader's blank and written into its slot, and a span comes
    /// back only when every slot of `part` was written.
    fn read_segment(
        &mut self,
        k: usize,
        part: &mut [std::mem::MaybeUninit<Request>],
    ) -> Result<Option<(i64, i64)>, DbError> {
        let q = &sql::LOAD_REQUEST_PACK_ROWS;
        let mut stmt = self.conn.prepare_cached(q.sql).map_err(DbError::query(q))?;
        let mut rows = stmt
            .query(rusqlite::named_params! {
                ":run_id": self.run_id,
                ":from": k as i64,
                ":to": k as i64 + 1,
            })
            .map_err(DbError::query(q))?;
        let Some(row) = rows.next().map_err(DbError::query(q))? else {
            return Ok(None);
        };
        let (number, listed, rowid) = match (row.get_ref(0), row.get_ref(1), row.get_ref(2)) {
            (Ok(ValueRef::Integer(a)), Ok(ValueRef::Integer(b)), Ok(ValueRef::Integer(c))) => {
                (a, b, c)
            }
            _ => return Ok(None),
        };
        let Some(&rows_here) = self.rows.get(k) else {
            return Ok(None);
        };
        if number != k as i64
            || usize::try_from(listed).ok() != Some(rows_here)
            || part.len() != rows_here
        {
            return Ok(None);
        }
        let handle = match &mut self.blob {
            Some(b) => match b.reopen(rowid) {
                Ok(()) => b,
                Err(_) => return Ok(None),
            },
            None => match self.conn.blob_open(
                rusqlite::DatabaseName::Main,
                "request_packs",
                "body",
                rowid,
                true,
            ) {
                Ok(b) => self.blob.insert(b),
                Err(_) => return Ok(None),
            },
        };
        let Ok(size) = usize::try_from(handle.size()) else {
            return Ok(None);
        };
        self.body.clear();
        self.body.reserve(size);
        let Ok(body) = handle.raw_read_at_exact(&mut self.body.spare_capacity_mut()[..size], 0)
        else {
            return Ok(None);
        };
        let body: &[u8] = body;
        let segment = match pack::segment(body, self.names) {
            Ok(segment) if segment.rows == rows_here => segment,
            _ => return Ok(None),
        };
        let (fill, blank) = (&mut self.fill, &self.blank);
        fill.seqs = None;
        fill.increasing = true;
        let mut i = 0;
        let done = segment.rows(|row, changed| {
            let Some(slot) = part.get_mut(i) else {
                return false;
            };
            fill.fill_slot(slot, blank, &row, changed);
            i += 1;
            true
        });
        if done.is_err() || i != rows_here || !fill.increasing {
            return Ok(None);
        }
        Ok(fill.seqs)
    }
}

/// The stamp of a run's ingest ([`read_pack`]); none when there is no run.
pub(super) fn run_stamp(
    conn: &Connection,
    run_id: &str,
) -> Result<Option<(Option<String>, String)>, DbError> {
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
pub(super) struct Snapshot<'c>(&'c Connection);

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
