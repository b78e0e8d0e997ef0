//! The project as columns, for engines built for fleets (docs/scale.md): the
//! tables `export --parquet` writes, each the column list of a documented
//! view (docs/sql.md), and a batch of rows held column by column.
//!
//! Nothing here touches SQLite or the `parquet` crate: `db::export` fills
//! batches from the views, `columnar::writer` (the `parquet` feature) turns
//! them into Parquet files, and `ops::export_parquet` says which runs go
//! where. Data flows `db -> Batch -> writer`.
#[cfg(feature = "parquet")]
mod pages;
#[cfg(feature = "parquet")]
pub mod writer;

/// What a column holds, and how a Parquet file types it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// INT64.
    Int,
    /// DOUBLE.
    Real,
    /// BYTE_ARRAY annotated STRING (UTF-8).
    Text,
    /// An instant: INT64 nanoseconds since the Unix epoch, annotated
    /// TIMESTAMP(NANOS, adjusted to UTC).
    Instant,
}

/// One column of an exported table.
#[derive(Debug, Clone, Copy)]
pub struct ColumnDef {
    pub name: &'static str,
    pub kind: Kind,
}

/// One exported table: where it goes and which view its rows come from.
#[derive(Debug)]
pub struct TableDef {
    /// The folder (or, for `runs`, the file stem) under the export directory.
    pub name: &'static str,
    /// The view (or other source) whose columns these are.
    pub source: &'static str,
    pub columns: &'static [ColumnDef],
}

const fn c(name: &'static str, kind: Kind) -> ColumnDef {
    ColumnDef { name, kind }
}

use Kind::{Instant as TS, Int as I, Real as R, Text as T};

/// `requests/run_id=<id>/part-0.parquet`: the rows of `v_requests`.
pub const REQUESTS: TableDef = TableDef {
    name: "requests",
    source: "v_requests",
    columns: &[
        c("run_id", T),
        c("case_key", T),
        c("case_id", T),
        c("phase", T),
        c("seq", I),
        c("request_id", T),
        c("request_index", I),
        c("status", T),
        c("status_key", T),
        c("ok", I),
        c("http_status", I),
        c("error_type", T),
        c("error_message", T),
        c("finish_reason", T),
        c("e2e_ms", R),
        c("ttft_ms", R),
        c("first_chunk_ms", R),
        c("dispatch_lag_ms", R),
        c("e2e_from_intended_ms", R),
        c("prompt_tokens", I),
        c("output_tokens", I),
        c("total_tokens", I),
        c("output_token_source", T),
        c("stream", I),
        c("arrival_mode", T),
        c("concurrency", I),
        c("in_flight_at_dispatch", I),
        c("model", T),
        c("endpoint", T),
        c("intended_at_ns", TS),
        c("started_at_ns", TS),
        c("ended_at_ns", TS),
        c("started_at", T),
        c("ended_at", T),
        c("started_s", R),
        c("ended_s", R),
        c("x_request_id", T),
        c("trace_id", T),
        c("intended_at_ms", I),
        c("started_at_ms", I),
        c("ended_at_ms", I),
    ],
};

/// `cases/run_id=<id>/part-0.parquet`: the rows of `v_case_summary`.
pub const CASES: TableDef = TableDef {
    name: "cases",
    source: "v_case_summary",
    columns: &[
        c("run_id", T),
        c("phase", T),
        c("case_key", T),
        c("requests", I),
        c("ok", I),
        c("failed", I),
        c("failure_rate", R),
        c("e2e_mean_ms", R),
        c("e2e_min_ms", R),
        c("e2e_max_ms", R),
        c("ttft_mean_ms", R),
        c("ttft_min_ms", R),
        c("ttft_max_ms", R),
        c("output_tokens", I),
        c("window_s", R),
    ],
};

/// `telemetry_samples/run_id=<id>/part-0.parquet`: the rows of `v_server_samples`.
pub const TELEMETRY_SAMPLES: TableDef = TableDef {
    name: "telemetry_samples",
    source: "v_server_samples",
    columns: &[
        c("run_id", T),
        c("sample_run_id", T),
        c("file_id", I),
        c("file_name", T),
        c("seq", I),
        c("host", T),
        c("pid", I),
        c("process_start_ns", TS),
        c("boot_id", T),
        c("device_uuid", T),
        c("gpu_instance_id", T),
        c("replica_id", T),
        c("rank", I),
        c("group_id", T),
        c("world_size", I),
        c("observed_at_ns", TS),
        c("observed_at", T),
        c("observed_s", R),
        c("metric", T),
        c("state", T),
        c("value_bytes", I),
        c("value_mib", R),
        c("source", T),
        c("interval_ms", I),
        c("provenance", T),
        c("detail", T),
        c("observed_at_ms", I),
    ],
};

/// `runs.parquet`: the rows of `v_runs`, one per exported run.
pub const RUNS: TableDef = TableDef {
    name: "runs",
    source: "v_runs",
    columns: &[
        c("run_id", T),
        c("session_id", T),
        c("model", T),
        c("endpoint", T),
        c("started_at_ns", TS),
        c("started_at", T),
        c("session_status", T),
        c("cases", I),
        c("requests", I),
        c("ok", I),
        c("failed", I),
        c("telemetry_files", I),
        c("artifact_name", T),
        c("artifact_sha256", T),
        c("record_count", I),
        c("ingested_at", T),
        c("started_at_ms", I),
    ],
};

/// `slo_verdicts/run_id=<id>/part-0.parquet` (with `--slo`/`--slo-file`):
/// one row per run and case, the columns of `report --all --format json`
/// (the targets as a JSON array in text).
pub const SLO_VERDICTS: TableDef = TableDef {
    name: "slo_verdicts",
    source: "report --all --format json",
    columns: &[
        c("run_id", T),
        c("case_id", T),
        c("policy", T),
        c("digest", T),
        c("status", T),
        c("reason", T),
        c("offered", I),
        c("met", I),
        c("missed", I),
        c("unknown", I),
        c("attainment_lower", R),
        c("attainment_upper", R),
        c("goodput_lower_rps", R),
        c("goodput_upper_rps", R),
        c("targets", T),
        c("verdict", T),
    ],
};

/// Whether a column's values mostly differ row from row (ids, instants,
/// latencies): such a column is written PLAIN, without a dictionary, which
/// would only cost a hash per value and hold every value once more.
pub fn mostly_unique(table: &TableDef, column: &str) -> bool {
    table.name == REQUESTS.name
        && matches!(
            column,
            "seq"
                | "request_id"
                | "request_index"
                | "e2e_ms"
                | "ttft_ms"
                | "first_chunk_ms"
                | "dispatch_lag_ms"
                | "e2e_from_intended_ms"
                | "intended_at_ns"
                | "started_at_ns"
                | "ended_at_ns"
                | "started_at"
                | "ended_at"
                | "started_s"
                | "ended_s"
                | "x_request_id"
                | "trace_id"
                | "intended_at_ms"
                | "started_at_ms"
                | "ended_at_ms"
        )
}

/// Whether a column is written with a dictionary: the text columns whose
/// values repeat (ids of cases, statuses, models). Numbers and the unique
/// text columns go PLAIN: a dictionary would only cost a hash per value.
pub fn dictionary(table: &TableDef, column: &ColumnDef) -> bool {
    column.kind == Kind::Text && !mostly_unique(table, column.name)
}

/// Whether a column's row groups carry min/max statistics. The small
/// tables (`runs`, `cases`, `slo_verdicts`) keep them on every column; the
/// per-request and per-sample tables only on the columns a query filters
/// by, which an engine prunes row groups with (the run, case, phase and
/// status, `ok`, `seq`, the instants, the metric): the others' min and max
/// cost a comparison per value and prune nothing.
pub fn statistics(table: &TableDef, column: &ColumnDef) -> bool {
    if table.name != REQUESTS.name && table.name != TELEMETRY_SAMPLES.name {
        return true;
    }
    column.kind == Kind::Instant
        || matches!(
            column.name,
            "run_id"
                | "case_key"
                | "case_id"
                | "phase"
                | "status"
                | "status_key"
                | "ok"
                | "seq"
                | "sample_run_id"
                | "file_id"
                | "host"
                | "metric"
        )
}

/// The per-run tables, in the order an export writes them.
pub const PER_RUN: [&TableDef; 3] = [&REQUESTS, &CASES, &TELEMETRY_SAMPLES];

/// One value on its way into a batch.
#[derive(Debug, Clone, PartialEq)]
pub enum Cell<'a> {
    Null,
    Int(i64),
    Real(f64),
    Text(&'a str),
}

/// A column's values: only the defined rows' (Parquet's own layout).
#[derive(Debug, Clone)]
pub enum Values {
    Int(Vec<i64>),
    Real(Vec<f64>),
    /// The defined strings end to end; value `k` ends at `ends[k]`.
    Text {
        data: Vec<u8>,
        ends: Vec<usize>,
    },
    /// A text column whose values repeat, kept as its distinct values and
    /// an index a row ([`kept_as_dictionary`]).
    Dict(Dict),
}

/// Whether a batch keeps a text column as a [`Dict`]: the `requests`
/// columns written with a dictionary (a run's id, its cases, phases,
/// statuses, model, endpoint). Their values mostly equal the row before's:
/// kept as text, each row copied a few dozen bytes into the batch, and the
/// encoder compared them again with the row before to find their
/// dictionary index; kept as indices, a row costs a comparison and a 4-byte
/// index. (`columnar::pages` encodes the `requests` chunks; the crate's
/// writer takes the values back as text.)
pub fn kept_as_dictionary(table: &TableDef, column: &ColumnDef) -> bool {
    table.name == REQUESTS.name && dictionary(table, column)
}

/// A text column as its distinct values, in the order they first came, and
/// each defined row's index into them.
#[derive(Debug, Clone, Default)]
pub struct Dict {
    /// The distinct values end to end; entry `k` ends at `ends[k]`.
    pub data: Vec<u8>,
    pub ends: Vec<usize>,
    /// Each defined row's entry.
    pub indices: Vec<u32>,
    /// Each entry by its bytes.
    lookup: std::collections::HashMap<Box<[u8]>, u32, foldhash::fast::FixedState>,
}

impl Dict {
    /// Entry `k`'s bytes.
    #[inline]
    fn entry(&self, k: usize) -> &[u8] {
        let start = if k == 0 { 0 } else { self.ends[k - 1] };
        &self.data[start..self.ends[k]]
    }

    /// Appends a row of value `v`: the entry of the row before when it is
    /// the same (the common case), else `v`'s, made where it is new.
    #[inline]
    fn push(&mut self, v: &[u8]) {
        if let Some(&last) = self.indices.last() {
            if self.entry(last as usize) == v {
                self.indices.push(last);
                return;
            }
        }
        self.push_other(v);
    }

    fn push_other(&mut self, v: &[u8]) {
        let i = match self.lookup.get(v) {
            Some(&i) => i,
            None => {
                let i = self.ends.len() as u32;
                self.data.extend_from_slice(v);
                self.ends.push(self.data.len());
                self.lookup.insert(v.into(), i);
                i
            }
        };
        self.indices.push(i);
    }

    fn clear(&mut self) {
        self.data.clear();
        self.ends.clear();
        self.indices.clear();
        self.lookup.clear();
    }

    /// Each defined row's value end to end, and their ends (as
    /// [`Values::Text`] holds them).
    pub fn expand(&self) -> (Vec<u8>, Vec<usize>) {
        expand(&self.data, &self.ends, &self.indices)
    }
}

/// The values `indices` name among the entries `data`/`ends` (entry `k`
/// ends at `ends[k]`), end to end, and their ends.
pub fn expand(data: &[u8], ends: &[usize], indices: &[u32]) -> (Vec<u8>, Vec<usize>) {
    let mut out = Vec::new();
    let mut out_ends = Vec::with_capacity(indices.len());
    for &i in indices {
        let k = i as usize;
        let start = if k == 0 { 0 } else { ends[k - 1] };
        out.extend_from_slice(&data[start..ends[k]]);
        out_ends.push(out.len());
    }
    (out, out_ends)
}

impl Values {
    /// How many values (defined rows) there are.
    #[inline]
    pub fn len(&self) -> usize {
        match self {
            Values::Int(v) => v.len(),
            Values::Real(v) => v.len(),
            Values::Text { ends, .. } => ends.len(),
            Values::Dict(d) => d.indices.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// One column of a batch: its values, and which rows are NULL.
#[derive(Debug, Clone)]
pub struct Column {
    /// Whether each row is defined, kept only from the column's first NULL
    /// on (then filled in for the rows before): while every row is defined
    /// (most columns) it stays empty and a value costs no flag.
    defined: Vec<bool>,
    nulls: usize,
    pub values: Values,
}

impl Column {
    /// The column's rows, NULL or not.
    #[inline]
    pub fn rows(&self) -> usize {
        self.values.len() + self.nulls
    }

    #[cfg(test)]
    pub fn nulls(&self) -> usize {
        self.nulls
    }

    /// Whether each row is defined; None when every one is.
    #[inline]
    pub fn defined(&self) -> Option<&[bool]> {
        (self.nulls > 0).then_some(self.defined.as_slice())
    }

    /// Whether each row is defined, one flag a row.
    #[cfg(test)]
    pub fn defined_flags(&self) -> Vec<bool> {
        match self.defined() {
            Some(d) => d.to_vec(),
            None => vec![true; self.rows()],
        }
    }

    /// Rows the column holds without growing (values, for the defined ones).
    pub fn rows_capacity(&self) -> usize {
        match &self.values {
            Values::Int(v) => v.capacity(),
            Values::Real(v) => v.capacity(),
            Values::Text { ends, .. } => ends.capacity(),
            Values::Dict(d) => d.indices.capacity(),
        }
    }

    /// Counts a NULL row.
    #[inline]
    fn push_null(&mut self) {
        if self.nulls == 0 {
            // The rows before, all defined, get their flags now.
            self.defined.clear();
            self.defined.resize(self.values.len(), true);
        }
        self.defined.push(false);
        self.nulls += 1;
    }

    /// Counts a defined row (its value pushed already).
    #[inline(always)]
    fn push_defined(&mut self) {
        if self.nulls > 0 {
            self.defined.push(true);
        }
    }
}

/// Why a value could not go into its column.
#[derive(Debug, thiserror::Error)]
#[error("{table}.{column}: a {found} value where the column holds {expected:?}")]
pub struct TypeMismatch {
    pub table: &'static str,
    pub column: &'static str,
    pub found: &'static str,
    pub expected: Kind,
}

/// Rows of one table, column by column.
#[derive(Debug, Clone)]
pub struct Batch {
    pub table: &'static TableDef,
    pub columns: Vec<Column>,
    rows: usize,
}

impl Batch {
    pub fn new(table: &'static TableDef) -> Batch {
        let columns = table
            .columns
            .iter()
            .map(|d| Column {
                defined: Vec::new(),
                nulls: 0,
                values: match d.kind {
                    Kind::Int | Kind::Instant => Values::Int(Vec::new()),
                    Kind::Real => Values::Real(Vec::new()),
                    Kind::Text if kept_as_dictionary(table, d) => Values::Dict(Dict::default()),
                    Kind::Text => Values::Text {
                        data: Vec::new(),
                        ends: Vec::new(),
                    },
                },
            })
            .collect();
        Batch {
            table,
            columns,
            rows: 0,
        }
    }

    #[inline]
    pub fn rows(&self) -> usize {
        self.rows
    }

    pub fn is_empty(&self) -> bool {
        self.rows == 0
    }

    /// Empties the batch, keeping its allocations.
    pub fn clear(&mut self) {
        for col in &mut self.columns {
            col.defined.clear();
            col.nulls = 0;
            match &mut col.values {
                Values::Int(v) => v.clear(),
                Values::Real(v) => v.clear(),
                Values::Text { data, ends } => {
                    data.clear();
                    ends.clear();
                }
                Values::Dict(d) => d.clear(),
            }
        }
        self.rows = 0;
    }

    /// Makes room for `rows` more rows (text columns at `text_bytes` bytes a
    /// value), so that filling a batch does not grow every column by
    /// doubling, a copy of it each time.
    pub fn reserve(&mut self, rows: usize, text_bytes: usize) {
        for col in &mut self.columns {
            match &mut col.values {
                Values::Int(v) => v.reserve(rows),
                Values::Real(v) => v.reserve(rows),
                Values::Text { data, ends } => {
                    ends.reserve(rows);
                    data.reserve(rows.saturating_mul(text_bytes));
                }
                Values::Dict(d) => d.indices.reserve(rows),
            }
        }
    }

    /// Sets text column `i` of the row being added to `bytes` as they are:
    /// the writer checks each column's bytes once, and a value that is not
    /// UTF-8 is written as `String::from_utf8_lossy` makes it (as a `&str`
    /// made that way would have gone in).
    #[inline(always)]
    pub fn push_bytes(&mut self, i: usize, bytes: &[u8]) -> Result<(), TypeMismatch> {
        let col = &mut self.columns[i];
        match &mut col.values {
            Values::Text { data, ends } => {
                data.extend_from_slice(bytes);
                ends.push(data.len());
            }
            Values::Dict(d) => d.push(bytes),
            _ => return Err(self.mismatch(i, &Cell::Text(""))),
        }
        col.push_defined();
        Ok(())
    }

    /// Sets text column `i` of the row being added to `bytes`, which the
    /// caller knows to be this column's value in the row before (a pack's
    /// "same as before" tag): a dictionary column repeats its last index
    /// without comparing them.
    #[inline(always)]
    pub fn push_repeat(&mut self, i: usize, bytes: &[u8]) -> Result<(), TypeMismatch> {
        let col = &mut self.columns[i];
        if let Values::Dict(d) = &mut col.values {
            if let Some(&last) = d.indices.last() {
                debug_assert_eq!(d.entry(last as usize), bytes, "not the row before's value");
                d.indices.push(last);
                col.push_defined();
                return Ok(());
            }
        }
        self.push_bytes(i, bytes)
    }

    /// Sets text column `i` of the row being added to what `write` appends
    /// to the column's bytes (checked as [`Batch::push_bytes`] checks
    /// them), or to NULL where it appends nothing and answers false.
    #[inline(always)]
    pub fn push_text_with(
        &mut self,
        i: usize,
        write: impl FnOnce(&mut Vec<u8>) -> bool,
    ) -> Result<(), TypeMismatch> {
        let col = &mut self.columns[i];
        match &mut col.values {
            Values::Text { data, ends } => {
                if write(data) {
                    ends.push(data.len());
                    col.push_defined();
                } else {
                    col.push_null();
                }
                Ok(())
            }
            Values::Dict(d) => {
                let mut v = Vec::new();
                if write(&mut v) {
                    d.push(&v);
                    col.push_defined();
                } else {
                    col.push_null();
                }
                Ok(())
            }
            _ => Err(self.mismatch(i, &Cell::Text(""))),
        }
    }

    /// Sets column `i` of the row being added. Every column is set once per
    /// row, in order, then `end_row` counts it. An integer in a REAL column
    /// is the same number and goes in as one; any other mismatch is refused.
    #[inline(always)]
    pub fn push(&mut self, i: usize, cell: Cell<'_>) -> Result<(), TypeMismatch> {
        let col = &mut self.columns[i];
        match (&mut col.values, cell) {
            (_, Cell::Null) => {
                col.push_null();
                return Ok(());
            }
            (Values::Int(v), Cell::Int(x)) => v.push(x),
            (Values::Real(v), Cell::Real(x)) => v.push(x),
            (Values::Real(v), Cell::Int(x)) => v.push(x as f64),
            (Values::Text { data, ends }, Cell::Text(s)) => {
                data.extend_from_slice(s.as_bytes());
                ends.push(data.len());
            }
            (Values::Dict(d), Cell::Text(s)) => d.push(s.as_bytes()),
            (_, cell) => return Err(self.mismatch(i, &cell)),
        }
        col.push_defined();
        Ok(())
    }

    /// Why `cell` cannot go into column `i` (out of the way of the pushes).
    #[cold]
    #[inline(never)]
    fn mismatch(&self, i: usize, cell: &Cell<'_>) -> TypeMismatch {
        TypeMismatch {
            table: self.table.name,
            column: self.table.columns[i].name,
            found: match cell {
                Cell::Int(_) => "integer",
                Cell::Real(_) => "real",
                Cell::Text(_) | Cell::Null => "text",
            },
            expected: self.table.columns[i].kind,
        }
    }

    #[inline]
    pub fn end_row(&mut self) {
        self.rows += 1;
    }
}

/// The folder name of a run's partition: `run_id=<id>` with every byte
/// outside `[A-Za-z0-9._-]` written `%XX`, as Hive escapes partition values
/// (DuckDB, Spark and Trino read it back as the id).
pub fn partition_dir(run_id: &str) -> String {
    let mut s = String::with_capacity(run_id.len() + 7);
    s.push_str("run_id=");
    for b in run_id.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-') {
            s.push(b as char);
        } else {
            s.push_str(&format!("%{b:02X}"));
        }
    }
    s
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn partition_names_escape_what_a_path_cannot_hold() {
        assert_eq!(partition_dir("run-1.a_b"), "run_id=run-1.a_b");
        assert_eq!(partition_dir("a/b c=d"), "run_id=a%2Fb%20c%3Dd");
        assert_eq!(partition_dir("é"), "run_id=%C3%A9");
    }

    /// A column keeps no flags until its first NULL, then has one for
    /// every row, those before it included.
    #[test]
    fn a_column_flags_its_rows_from_its_first_null() {
        let mut b = Batch::new(&CASES);
        let requests = 3; // an INT column
        for cell in [
            Cell::Int(1),
            Cell::Int(2),
            Cell::Null,
            Cell::Int(4),
            Cell::Null,
        ] {
            b.push(requests, cell).unwrap();
            assert!(b.push_bytes(0, b"r").is_ok());
        }
        let col = &b.columns[requests];
        assert_eq!(col.defined(), Some(&[true, true, false, true, false][..]));
        assert_eq!((col.rows(), col.nulls()), (5, 2));
        assert!(matches!(&col.values, Values::Int(v) if v == &[1, 2, 4]));
        assert_eq!(b.columns[0].defined(), None);
        assert_eq!(b.columns[0].defined_flags(), vec![true; 5]);
        b.clear();
        assert_eq!(b.columns[requests].defined(), None);
        b.push(requests, Cell::Int(7)).unwrap();
        assert_eq!(b.columns[requests].defined_flags(), vec![true]);
    }

    /// A dictionary column holds each distinct value once, an index a
    /// defined row, and gives back every row's value in order.
    #[test]
    fn a_dictionary_column_keeps_each_value_once() {
        let mut b = Batch::new(&REQUESTS);
        let phase = REQUESTS
            .columns
            .iter()
            .position(|c| c.name == "phase")
            .unwrap();
        assert!(matches!(b.columns[phase].values, Values::Dict(_)));
        let rows: [Option<&str>; 8] = [
            Some("warmup"),
            Some("warmup"),
            None,
            Some("measured"),
            Some(""),
            Some("warmup"),
            Some("measured"),
            Some("measured"),
        ];
        for (k, r) in rows.iter().enumerate() {
            match (r, k % 3) {
                (None, _) => b.push(phase, Cell::Null).unwrap(),
                (Some(s), 0) => b.push(phase, Cell::Text(s)).unwrap(),
                (Some(s), 1) => b.push_bytes(phase, s.as_bytes()).unwrap(),
                (Some(s), _) => b
                    .push_text_with(phase, |out| {
                        out.extend_from_slice(s.as_bytes());
                        true
                    })
                    .unwrap(),
            }
        }
        b.push_text_with(phase, |_| false).unwrap();
        let col = &b.columns[phase];
        assert_eq!(col.rows(), 9);
        assert_eq!(col.nulls(), 2);
        let Values::Dict(d) = &col.values else {
            panic!("not a dictionary");
        };
        assert_eq!(d.data, b"warmupmeasured");
        assert_eq!(d.ends, [6, 14, 14]);
        assert_eq!(d.indices, [0, 0, 1, 2, 0, 1, 1]);
        let (data, ends) = d.expand();
        assert_eq!(data, b"warmupwarmupmeasuredwarmupmeasuredmeasured");
        assert_eq!(ends, [6, 12, 20, 20, 26, 34, 42]);
        // A number is refused; clearing empties the entries too.
        assert!(b.push(phase, Cell::Int(1)).is_err());
        b.clear();
        let Values::Dict(d) = &b.columns[phase].values else {
            panic!("not a dictionary");
        };
        assert!(d.data.is_empty() && d.ends.is_empty() && d.indices.is_empty());
        // The other tables keep text as text.
        assert!(matches!(
            Batch::new(&CASES).columns[1].values,
            Values::Text { .. }
        ));
    }

    #[test]
    fn a_batch_keeps_nulls_out_of_the_values() {
        let mut b = Batch::new(&CASES);
        for (i, d) in CASES.columns.iter().enumerate() {
            let cell = match (i, d.kind) {
                (1, _) => Cell::Null,
                (_, Kind::Text) => Cell::Text("x"),
                (_, Kind::Real) => Cell::Int(3),
                _ => Cell::Int(2),
            };
            b.push(i, cell).unwrap();
        }
        b.end_row();
        assert_eq!(b.rows(), 1);
        assert_eq!(b.columns[1].defined(), Some(&[false][..]));
        assert_eq!(b.columns[0].defined(), None);
        assert_eq!(b.columns[0].rows(), 1);
        assert!(matches!(&b.columns[1].values, Values::Text { ends, .. } if ends.is_empty()));
        assert!(matches!(&b.columns[6].values, Values::Real(v) if v == &[3.0]));
        let err = b.push(3, Cell::Text("no")).unwrap_err();
        assert_eq!(err.column, "requests");
        b.clear();
        assert!(b.is_empty());
    }
}
