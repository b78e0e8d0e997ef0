//! Encodes an artifact line for its table (the fast path of ingest, and of
//! the migration that moves stored bodies into typed tables): one line to a
//! [`Row`] without building a JSON tree.
//!
//! A line is read as a list of (key, raw JSON text) pairs. Fields with a column
//! are decoded from their raw text; every other field is carried into `extra`
//! as its raw text, so the stored record keeps the file's exact values. Lines
//! this path does not handle (context transport, duplicate keys, `NaN` tokens,
//! invalid JSON, non-objects) go to the general path, which builds a value and
//! gives the reference's error messages. Both paths store the same rows.
//! `prepare` gives a line the same row whatever the thread read before (what
//! a thread remembers of the last line's keys only saves work), so batches
//! of lines are prepared in parallel.
use std::borrow::Cow;

use rusqlite::types::{Value as Sql, ValueRef};
use serde_json::Value;

use super::scan::{self, Raw};
pub use crate::model::row::{Field, LineFacts, Prepared, Row};

use super::tables::{self, same_key, Col, TableSpec, TABLES};
use crate::py::json as pyjson;

// The SQLite side of the model's row types (the types live in
// `model::row`, free of SQLite; binding them is the database's part).
impl From<Sql> for Field {
    fn from(v: Sql) -> Self {
        match v {
            Sql::Null => Field::Null,
            Sql::Integer(i) => Field::Int(i),
            Sql::Real(f) => Field::Real(f),
            Sql::Text(t) => Field::Text(t),
            Sql::Blob(b) => Field::Blob(b),
        }
    }
}

impl Field {
    /// The value to bind, borrowing from `line` for spans.
    pub fn bind<'a>(&'a self, line: &'a str) -> ValueRef<'a> {
        match self {
            Field::Null => ValueRef::Null,
            Field::Int(i) => ValueRef::Integer(*i),
            Field::Real(f) => ValueRef::Real(*f),
            Field::Span(a, b) => ValueRef::Text(
                line.as_bytes()
                    .get(*a as usize..*b as usize)
                    .unwrap_or_default(),
            ),
            Field::Text(t) => ValueRef::Text(t.as_bytes()),
            Field::Blob(b) => ValueRef::Blob(b),
        }
    }

    /// The owned SQL value (tests compare rows with it).
    #[cfg(test)]
    pub fn to_sql(&self, line: &str) -> Sql {
        Sql::from(self.bind(line))
    }
}

#[cfg(test)]
impl Row {
    /// The field columns as owned SQL values.
    pub fn sql_fields(&self) -> Vec<Sql> {
        self.fields.iter().map(|f| f.to_sql(&self.line)).collect()
    }
}

/// Prepares one physical line.
pub fn prepare(line: String) -> Prepared {
    prepare_as(line, Keep::All)
}

/// What of a line's record its row keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Keep {
    /// Everything (a kept database).
    All,
    /// What a report reads (`infer analyze`'s scratch database,
    /// `Writer::report_only`): a record of a type no report reads becomes
    /// a row of its table with nothing in it (checked, not encoded, and its
    /// line not kept), and an `infer.dispatch` keeps only the fields the
    /// execution block's map reads (`db::store::load_dispatches`).
    Report,
}

/// The fields of an `infer.dispatch` that a report reads
/// (`db::store::load_dispatches`; `event_type` is the table's own).
const DISPATCH_READ: [&str; 3] = ["request_id", "case_id", "x_request_id"];

/// [`prepare`], keeping what `keep` says.
pub fn prepare_as(line: String, keep: Keep) -> Prepared {
    if crate::py::text::is_blank(&line) {
        return Prepared::Blank;
    }
    let encoded = SHAPES.with_borrow_mut(|memory| {
        let (members, shapes) = memory.scan(&line)?;
        fast(&line, &members, shapes, keep)
    });
    match encoded {
        // An unread record's row is empty: it needs no line.
        Some(enc) if keep == Keep::Report && crate::db::store::unread_by_report(&enc) => {
            Prepared::Row(Box::new(enc))
        }
        Some(enc) => Prepared::Row(Box::new(Row { line, ..enc })),
        None => general(&line),
    }
}

/// What a member's key is to its table's row. It depends only on the key
/// and the table, so lines of one shape (scan::Shape) share their roles.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Role {
    EventType,
    SchemaVersion,
    /// `requests`' `case_id` and `status` (also their field index, if any):
    /// they give the derived keys.
    CaseId(Option<usize>),
    Status(Option<usize>),
    Field(usize),
    Extra,
}

fn role_of(ti: usize, is_requests: bool, key: &str) -> Role {
    if same_key(key, "event_type") {
        return Role::EventType;
    }
    if same_key(key, "schema_version") {
        return Role::SchemaVersion;
    }
    let index = tables::field_index(ti, key);
    if is_requests && same_key(key, "case_id") {
        Role::CaseId(index)
    } else if is_requests && same_key(key, "status") {
        Role::Status(index)
    } else {
        index.map_or(Role::Extra, Role::Field)
    }
}

/// Where the keys that decide a line's table and path are among its
/// members (the last of each, as the reference reads duplicates).
#[derive(Debug, Clone, Copy)]
struct Marks {
    event_type: Option<usize>,
    schema_version: Option<usize>,
    context_id: bool,
}

impl Marks {
    fn of(members: &[scan::Member]) -> Marks {
        let mut marks = Marks {
            event_type: None,
            schema_version: None,
            context_id: false,
        };
        for (j, (key, _)) in members.iter().enumerate() {
            if same_key(key, "event_type") {
                marks.event_type = Some(j);
            } else if same_key(key, "schema_version") {
                marks.schema_version = Some(j);
            } else if same_key(key, "context_id") {
                marks.context_id = true;
            }
        }
        marks
    }
}

/// A preparing thread's memory of a shape of line it read: its keys, their
/// marks, and their roles in `table` once a line of that shape was encoded
/// for it.
#[derive(Default)]
struct Shapes {
    keys: scan::Shape,
    marks: Option<Marks>,
    table: Option<usize>,
    roles: Vec<Role>,
    /// The length of the last line of this shape, and when it was read
    /// (the thread's count of lines).
    len: usize,
    used: u64,
}

/// The shapes a thread remembers. A real artifact interleaves records of a
/// few types (a dispatch, a request and a first content per request), each
/// type with its own keys: remembering only the last line's, every line
/// had its keys scanned and their roles looked up again.
const SHAPE_MEMORY: usize = 4;

/// A thread's remembered shapes (at most [`SHAPE_MEMORY`]) and its count of
/// lines.
#[derive(Default)]
struct Memory {
    shapes: Vec<Shapes>,
    lines: u64,
}

impl Memory {
    /// Scans `line`'s members against the remembered shape most likely its
    /// own (the one whose last line was nearest in length: lines of one
    /// record type are of about one length), and returns them with the
    /// shape that holds exactly their keys, remembering a new one (in place
    /// of the least recently used) when none does. Which shape is tried
    /// only saves work: the keys are checked either way.
    fn scan<'a>(&mut self, line: &'a str) -> Option<(Vec<scan::Member<'a>>, &mut Shapes)> {
        self.lines += 1;
        let near = self
            .shapes
            .iter()
            .enumerate()
            .min_by_key(|(_, s)| s.len.abs_diff(line.len()))
            .map(|(i, _)| i);
        let (members, same) = match near {
            Some(i) => scan::members_against(line, &self.shapes[i].keys)?,
            None => scan::members_against(line, &scan::Shape::default())?,
        };
        let at = match near.filter(|_| same) {
            Some(i) => i,
            None => match self.shapes.iter().position(|s| s.keys.holds(&members)) {
                Some(i) => i,
                None => {
                    let i = if self.shapes.len() < SHAPE_MEMORY {
                        self.shapes.push(Shapes::default());
                        self.shapes.len() - 1
                    } else {
                        self.shapes
                            .iter()
                            .enumerate()
                            .min_by_key(|(_, s)| s.used)
                            .map_or(0, |(i, _)| i)
                    };
                    // The marks and roles were worked out for other keys.
                    let shape = &mut self.shapes[i];
                    shape.keys.remember(&members);
                    shape.marks = None;
                    shape.roles.clear();
                    shape.table = None;
                    i
                }
            },
        };
        let shape = &mut self.shapes[at];
        shape.len = line.len();
        shape.used = self.lines;
        Some((members, shape))
    }
}

thread_local! {
    static SHAPES: std::cell::RefCell<Memory> = std::cell::RefCell::default();
}

fn general(line: &str) -> Prepared {
    match pyjson::parse(line) {
        Ok(v) => Prepared::Value(v),
        Err(e) => Prepared::Error(e.to_string()),
    }
}

/// The span of `part` (a slice of `line`) within `line`.
fn span(line: &str, part: &str) -> Field {
    let start = part.as_ptr() as usize - line.as_ptr() as usize;
    match (u32::try_from(start), u32::try_from(start + part.len())) {
        (Ok(a), Ok(b)) => Field::Span(a, b),
        _ => Field::Text(part.to_owned()),
    }
}

/// A string value as a field: a span when unescaped, owned otherwise.
fn text_field(line: &str, s: Cow<'_, str>) -> Field {
    match s {
        Cow::Borrowed(b) => span(line, b),
        Cow::Owned(o) => Field::Text(o),
    }
}

/// The value of an integer literal (digits, an optional leading minus) that
/// fits an i64; None for anything else (a fraction, an exponent, too big).
/// Eight digits at a time: a request line holds about twenty integers, four
/// of them 19-digit timestamps.
fn int_literal(t: &str) -> Option<i64> {
    let (negative, digits) = match t.as_bytes() {
        [b'-', rest @ ..] => (true, rest),
        all => (false, all),
    };
    // JSON has no leading zeros, but the reading does not depend on it.
    let zeros = digits.iter().take_while(|&&b| b == b'0').count();
    let digits = &digits[zeros.min(digits.len().saturating_sub(1))..];
    // 19 digits stay below 10^19 < 2^64: no step below can overflow.
    if digits.is_empty() || digits.len() > 19 {
        return None;
    }
    let mut value: u64 = 0;
    let mut chunks = digits.chunks_exact(8);
    for chunk in &mut chunks {
        let mut w = [0u8; 8];
        w.copy_from_slice(chunk);
        let (t, stray) = scan::digit_word(w);
        if stray != 0 {
            return None;
        }
        // The first digit is the lowest byte: combine pairs, quads, then
        // the two halves.
        let t = (t.wrapping_mul(10) + (t >> 8)) & 0x00ff_00ff_00ff_00ff;
        let t = (t.wrapping_mul(100) + (t >> 16)) & 0x0000_ffff_0000_ffff;
        let t = (t.wrapping_mul(10_000) + (t >> 32)) & 0xffff_ffff;
        value = value * 100_000_000 + t;
    }
    for &b in chunks.remainder() {
        let d = b.wrapping_sub(b'0');
        if d > 9 {
            return None;
        }
        value = value * 10 + u64::from(d);
    }
    if negative {
        0i64.checked_sub_unsigned(value)
    } else {
        i64::try_from(value).ok()
    }
}

/// The column value of a raw field, when the column gives the same JSON back.
fn encode_raw(line: &str, col: Col, raw: Raw) -> Option<Field> {
    let t = raw.get();
    match col {
        Col::Text => raw.as_str().map(|s| text_field(line, s)),
        Col::Int => int_literal(t).map(Field::Int),
        // Past i64, the exact decimal digits (the column is ANY).
        Col::AnyInt => int_literal(t)
            .map(Field::Int)
            .or_else(|| crate::py::Int::parse_literal(t).map(|i| Field::Text(i.to_string()))),
        Col::Real => {
            let first = t.as_bytes().first()?;
            if first.is_ascii_digit() || *first == b'-' {
                t.parse::<f64>()
                    .ok()
                    .filter(|f| f.is_finite())
                    .map(Field::Real)
            } else {
                None
            }
        }
        Col::Bool => match t {
            "true" => Some(Field::Int(1)),
            "false" => Some(Field::Int(0)),
            _ => None,
        },
        Col::Json => Some(span(line, t)),
        Col::RealList => real_list(t).map(Field::Blob),
    }
}

/// A JSON array of finite numbers as little-endian f64 bytes (None for
/// anything else). `t` is a value the scanner accepted, so it is valid JSON:
/// split on commas, every piece up to the first non-number is one whole
/// element, and a piece that does not start like a number (a string, a
/// nested array or object, a literal) declines the list before any comma
/// inside it could be misread.
fn real_list(t: &str) -> Option<Vec<u8>> {
    const WS: [char; 4] = [' ', '\t', '\n', '\r'];
    let inner = t.strip_prefix('[')?.strip_suffix(']')?;
    let mut bytes = Vec::with_capacity(inner.len() / 2);
    if inner.trim_matches(WS).is_empty() {
        return Some(bytes);
    }
    for piece in inner.split(',') {
        let number = piece.trim_matches(WS);
        let first = number.as_bytes().first()?;
        if !(first.is_ascii_digit() || *first == b'-') {
            return None;
        }
        // Correctly rounded, as Python's float() and serde_json's
        // float_roundtrip reading are.
        let f = number.parse::<f64>().ok().filter(|f| f.is_finite())?;
        bytes.extend_from_slice(&f.to_le_bytes());
    }
    Some(bytes)
}

/// Python's `str()` of a raw value (for the derived keys).
fn str_form_raw(line: &str, raw: Raw) -> Field {
    match raw.as_str() {
        Some(s) => text_field(line, s),
        None => Field::Text(
            pyjson::parse(raw.get())
                .map(|v| pyjson::str_form(&v))
                .unwrap_or_default(),
        ),
    }
}

fn fast(line: &str, members: &[scan::Member], shapes: &mut Shapes, keep: Keep) -> Option<Row> {
    let marks = *shapes.marks.get_or_insert_with(|| Marks::of(members));
    if marks.context_id {
        // Context transport needs the general path (order-dependent decoding).
        return None;
    }
    let value = |at: Option<usize>| at.and_then(|j| members.get(j)).map(|m| m.1);
    let event_type: Option<Cow<str>> =
        value(marks.event_type).map(|v| v.as_str().unwrap_or(Cow::Borrowed("\u{0}")));
    let schema_raw = value(marks.schema_version);
    let version = schema_raw.map(|r| r.get());
    if let Some(v) = version {
        // 4 (or a number equal to it) marks a transport row.
        if v.parse::<f64>().ok() == Some(4.0) {
            return None;
        }
    }
    let et = event_type.as_deref();
    if et == Some("infer.context") {
        return None;
    }
    let mut facts = LineFacts::default();
    match et {
        Some("infer.session") => facts.is_session = true,
        Some("infer.request") => facts.is_request = true,
        Some("infer.artifact") => {
            // An embedded artifact record names the run in its context.
            let v = pyjson::parse(line).ok()?;
            facts.artifact_run_id = v
                .get("context")
                .and_then(|c| c.get("run_id"))
                .and_then(Value::as_str)
                .map(str::to_owned);
        }
        _ => {}
    }
    // Version-2 requests are the vLLM hook's executions, not client requests.
    let v2_request = et == Some("infer.request") && version == Some("2");
    let table = if v2_request {
        None
    } else {
        et.and_then(|et| TABLES.iter().position(|t| t.event_type == et))
    };
    let Some(ti) = table else {
        // No typed table: the record is kept whole. Duplicate keys stay in the
        // body as written; readers take the last, as the reference does.
        return Some(Row {
            line: String::new(),
            table: None,
            event_type: et.filter(|s| *s != "\u{0}").map(str::to_owned),
            body: span(line, line.trim()),
            derived: None,
            schema_version: Field::Null,
            fields: Vec::new(),
            nulls: 0,
            extra: None,
            facts,
        });
    };
    let spec: &TableSpec = &TABLES[ti];
    if keep == Keep::Report && crate::db::store::unread_event(spec.event_type) {
        // A record no report reads (`db::store::unread_by_report`, by which
        // the writer drops its row): the scan checked the line, nothing
        // else is needed of it.
        return Some(Row {
            line: String::new(),
            table: Some(ti),
            event_type: None,
            body: Field::Null,
            derived: None,
            schema_version: Field::Null,
            fields: Vec::new(),
            nulls: 0,
            extra: None,
            facts,
        });
    }
    // An `infer.dispatch` for a report keeps only the fields it reads.
    let trim = keep == Keep::Report && spec.table == "dispatches";
    // Written slot by slot (vec![Field::Null; n] clones a Field per slot,
    // matching on it each time).
    let mut fields: Vec<Field> = std::iter::repeat_with(|| Field::Null)
        .take(spec.fields.len())
        .collect();
    let mut seen: u64 = 0;
    let mut nulls: i64 = 0;
    let mut schema_version = Field::Null;
    let mut extra: Vec<(&str, Raw)> = Vec::new();
    let mut case_key: Option<Field> = None;
    let mut status_key: Option<Field> = None;
    let is_requests = spec.table == "requests";
    // The roles of the last line, when it had these very keys and table.
    let known = (shapes.table == Some(ti) && shapes.roles.len() == members.len())
        .then(|| std::mem::take(&mut shapes.roles));
    let mut roles = Vec::with_capacity(if known.is_some() { 0 } else { members.len() });
    for (j, &(ref k, v)) in members.iter().enumerate() {
        let key = k.as_ref();
        let role = match &known {
            Some(known) => known[j],
            None => {
                let role = role_of(ti, is_requests, key);
                roles.push(role);
                role
            }
        };
        let index = match role {
            Role::EventType => {
                if v.as_str().as_deref() != Some(spec.event_type) {
                    extra.push((key, v));
                }
                continue;
            }
            Role::SchemaVersion => {
                match encode_raw(line, Col::Int, v) {
                    Some(sv) => schema_version = sv,
                    None => extra.push((key, v)),
                }
                continue;
            }
            Role::CaseId(index) => {
                case_key = Some(str_form_raw(line, v));
                index
            }
            Role::Status(index) => {
                status_key = Some(str_form_raw(line, v));
                index
            }
            Role::Field(index) => Some(index),
            Role::Extra => None,
        };
        if trim && !DISPATCH_READ.contains(&key) {
            continue;
        }
        if facts.is_session {
            match key {
                "session_id" => facts.session_id = v.as_str().map(Cow::into_owned),
                "timestamp_ns" => facts.timestamp_ns = v.get().parse::<i64>().ok(),
                "config" => {
                    if let Ok(cfg) = pyjson::parse(v.get()) {
                        facts.model = cfg.get("model").and_then(Value::as_str).map(str::to_owned);
                        facts.endpoint = cfg
                            .get("endpoint")
                            .and_then(Value::as_str)
                            .map(str::to_owned);
                    }
                }
                _ => {}
            }
        }
        match index {
            Some(i) => {
                if seen & (1 << i) != 0 {
                    return None; // a duplicate key: the general path knows which wins
                }
                seen |= 1 << i;
                if v.get() == "null" {
                    nulls |= 1 << i;
                } else {
                    match encode_raw(line, spec.fields[i].1, v) {
                        Some(sql) => fields[i] = sql,
                        None => extra.push((key, v)),
                    }
                }
            }
            None => extra.push((key, v)),
        }
    }
    shapes.table = Some(ti);
    shapes.roles = known.unwrap_or(roles);
    if extra.len() > 1 {
        let mut names: Vec<&str> = extra.iter().map(|(k, _)| *k).collect();
        names.sort_unstable();
        if names.windows(2).any(|w| w[0] == w[1]) {
            return None;
        }
    }
    let extra = if extra.is_empty() {
        None
    } else {
        let mut s = String::from("{");
        for (i, (k, v)) in extra.iter().enumerate() {
            if i > 0 {
                s.push(',');
            }
            s.push_str(&serde_json::to_string(k).ok()?);
            s.push(':');
            s.push_str(v.get());
        }
        s.push('}');
        Some(s)
    };
    let derived = is_requests.then(|| {
        (
            case_key.unwrap_or_else(|| Field::Text("unknown".into())),
            status_key.unwrap_or_else(|| Field::Text("None".into())),
        )
    });
    Some(Row {
        line: String::new(),
        table: Some(ti),
        event_type: None,
        body: Field::Null,
        derived,
        schema_version,
        fields,
        nulls,
        extra,
        facts,
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::super::tables::{rebuild, split};
    use super::*;

    /// The fast path stores exactly what the general path stores.
    fn same_as_general(line: &str) {
        let Prepared::Row(row) = prepare(line.to_owned()) else {
            panic!("not fast: {line}")
        };
        let v = pyjson::parse(line).unwrap();
        let m = v.as_object().unwrap();
        match row.table {
            Some(ti) => {
                let spec = &TABLES[ti];
                let e = split(spec, m);
                let fast = rebuild(
                    spec,
                    &row.schema_version.to_sql(&row.line),
                    &row.sql_fields(),
                    row.nulls,
                    row.extra.as_deref(),
                );
                let slow = rebuild(
                    spec,
                    &e.schema_version,
                    &e.fields,
                    e.nulls,
                    e.extra.as_deref(),
                );
                assert_eq!(Value::Object(fast.clone()), Value::Object(slow));
                assert!(pyjson::py_eq(&Value::Object(fast), &v), "{line}");
            }
            None => {
                let Sql::Text(body) = row.body.to_sql(&row.line) else {
                    panic!("no body")
                };
                assert_eq!(pyjson::parse(&body).unwrap(), v)
            }
        }
    }

    #[test]
    fn fast_rows_equal_general_rows() {
        same_as_general(
            r#"{"event_type": "infer.request", "schema_version": 1, "case_id": "c", "status": "ok", "ttft_ms": 1.5, "e2e_latency_ms": null, "chunk_interarrival_ms": [1, 2.5], "stream": true, "prompt_tokens": 3.5, "weird": {"a": [1, "x\u00e9"]}, "request_index": true}"#,
        );
        same_as_general(
            r#"{"event_type": "infer.session", "schema_version": 1, "session_id": "s", "config": {"model": "m"}, "status": "running"}"#,
        );
        same_as_general(r#"{"event_type": "infer.unknown_thing", "x": 1}"#);
        same_as_general(
            r#"{"event_type": "infer.request", "case_id": 7, "status": null, "started_at_ns": 1.5e18, "x_request_id": "a\"b"}"#,
        );
    }

    /// Integer literals read as the standard library reads them, where
    /// they are plain digits with an optional minus.
    #[test]
    fn int_literals_read_as_str_parse_does() {
        let plain = |t: &str| {
            let digits = t.strip_prefix('-').unwrap_or(t);
            (!digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()))
                .then(|| t.parse::<i64>().ok())
                .flatten()
        };
        let mut cases: Vec<String> = [
            "0",
            "-0",
            "7",
            "-7",
            "1795961627235458672",
            "9223372036854775807",
            "9223372036854775808",
            "-9223372036854775808",
            "-9223372036854775809",
            "99999999999999999999",
            "12345678",
            "123456789",
            "1234567/",
            "1234567:",
            "1.5",
            "1e3",
            "-",
            "",
            "+1",
            "12345678901234567890123",
            "00000000000000000001",
        ]
        .map(str::to_owned)
        .to_vec();
        for len in 1..=20 {
            let run: String = (0..len)
                .map(|i| char::from(b'0' + (i * 7 % 10) as u8))
                .collect();
            cases.push(format!("-{run}"));
            for bad in ['/', ':', ' ', '.', '\u{80}'] {
                for at in [0, len / 2, len - 1] {
                    let mut t = run.clone();
                    t.insert(at, bad);
                    cases.push(t);
                }
            }
            cases.push(run);
        }
        for t in &cases {
            assert_eq!(int_literal(t), plain(t), "{t:?}");
        }
    }

    /// A preparing thread remembers the last line's keys and their roles;
    /// the rows it prepares are the rows a thread without that memory
    /// prepares, whatever came before.
    #[test]
    fn remembered_shapes_do_not_change_rows() {
        let root =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/conformance");
        let mut lines: Vec<String> = Vec::new();
        for suite in ["cases", "bad"] {
            let mut cases: Vec<_> = std::fs::read_dir(root.join(suite))
                .unwrap()
                .map(|e| e.unwrap().path())
                .collect();
            cases.sort();
            for case in cases {
                let Ok(text) = std::fs::read_to_string(case.join("artifact.jsonl")) else {
                    continue;
                };
                lines.extend(text.lines().take(400).map(str::to_owned));
            }
        }
        // The same keys for another table, and for no table; escaped and
        // duplicated keys; a transport row with a request's keys.
        let request = r#"{"event_type": "infer.request", "case_id": "c", "status": "ok", "ttft_ms": 1.5, "x": 1}"#;
        for line in [
            request,
            request,
            r#"{"event_type": "infer.session", "case_id": "c", "status": "ok", "ttft_ms": 1.5, "x": 1}"#,
            r#"{"event_type": "infer.session", "case_id": "c", "status": "ok", "ttft_ms": 1.5, "x": 1}"#,
            request,
            r#"{"event_type": "infer.nothing", "case_id": "c", "status": "ok", "ttft_ms": 1.5, "x": 1}"#,
            request,
            r#"{"event_type": "infer.request", "case_id": 7, "status": null, "ttft_ms": "1.5", "x": 1}"#,
            r#"{"event_type": "infer.request", "ca\u0073e_id": "c", "status": "ok", "ttft_ms": 1.5, "x": 1}"#,
            request,
            r#"{"event_type": "infer.request", "case_id": "c", "status": "ok", "ttft_ms": 1.5, "ttft_ms": 2}"#,
            r#"{"event_type": "infer.request", "case_id": "c", "status": "ok", "ttft_ms": 1.5, "ttft_ms": 2}"#,
            request,
            r#"{"event_type": "infer.request", "case_id": "c", "status": "ok", "x": 1, "x": 2}"#,
            r#"{"event_type": "infer.request", "case_id": "c", "status": "ok", "ttft_ms": 1.5}"#,
            r#"{"event_type": "infer.request", "case_id": "c", "status": "ok", "ttft_ms": 1.5, "x": 1, "schema_version": 2}"#,
            r#"{"event_type": "infer.request", "case_id": "c", "status": "ok", "ttft_ms": 1.5, "x": 1, "schema_version": 2}"#,
            request,
        ] {
            lines.push(line.to_owned());
        }
        let prepared = |line: &str| format!("{:?}", prepare(line.to_owned()));
        let warm: Vec<String> = lines.iter().map(|l| prepared(l)).collect();
        for (line, warm) in lines.iter().zip(&warm) {
            SHAPES.with_borrow_mut(|memory| *memory = Memory::default());
            assert_eq!(&prepared(line), warm, "{line}");
        }
        assert!(lines.len() > 1000, "{}", lines.len());
    }

    /// The list reader gives what serde_json's reading of a list of f64
    /// gives, and declines what that declines or what is not a list of
    /// finite numbers.
    #[test]
    fn real_lists_read_as_serde_json_reads_them() {
        let serde = |t: &str| -> Option<Vec<u8>> {
            let values: Vec<f64> = serde_json::from_str(t).ok()?;
            values
                .iter()
                .all(|f| f.is_finite())
                .then(|| values.iter().flat_map(|f| f.to_le_bytes()).collect())
        };
        for t in [
            "[]",
            "[ ]",
            "[1]",
            "[0.05867999993824924, 0.03478400003587012, 0.5009960000279534]",
            "[ -0 , 1e-7,2.5E+3 ,\t123456789012345678901234567890]",
            "[1e400]",
            "[-1e400, 1]",
            "[9007199254740993, 2.2250738585072011e-308, 5e-324, 1e-400]",
            "[1, \"2\"]",
            "[\"1,2\"]",
            "[[1, 2]]",
            "[1, [2]]",
            "[{\"a\": 1}]",
            "[true]",
            "[null, 1]",
        ] {
            let line = format!(r#"{{"x": {t}}}"#);
            let raw = scan::members(&line).unwrap()[0].1;
            assert_eq!(real_list(raw.get()), serde(raw.get()), "{t}");
        }
    }

    /// For a report, a record no report reads is checked but not encoded
    /// (its row is empty, without the line), and a dispatch keeps exactly
    /// the fields its reader keeps of the whole row; a line the scanner
    /// declines still takes the general path.
    #[test]
    fn report_rows_keep_what_a_report_reads() {
        let Prepared::Row(row) = prepare_as(
            r#"{"event_type": "infer.first_content", "schema_version": 1, "request_id": "r0", "first_content_at_ns": 5}"#
                .into(),
            Keep::Report,
        ) else {
            panic!()
        };
        assert!(crate::db::store::unread_by_report(&row));
        assert!(row.line.is_empty() && row.fields.is_empty());
        assert!(matches!(
            prepare_as(
                r#"{"event_type": "infer.first_content", "x": }"#.into(),
                Keep::Report
            ),
            Prepared::Error(_)
        ));
        let read = |line: &str, keep: Keep| {
            let Prepared::Row(row) = prepare_as(line.to_owned(), keep) else {
                panic!("not fast: {line}")
            };
            let spec = &TABLES[row.table.unwrap()];
            let mut m = rebuild(
                spec,
                &row.schema_version.to_sql(&row.line),
                &row.sql_fields(),
                row.nulls,
                row.extra.as_deref(),
            );
            let all = m.len();
            m.retain(|k, _| k == "event_type" || DISPATCH_READ.contains(&k.as_str()));
            (Value::Object(m), all)
        };
        for line in [
            r#"{"case_id": "c", "event_type": "infer.dispatch", "intended_at_ns": 1, "phase": "measured", "request_id": "r0", "schema_version": 1, "session_id": "s", "started_at_ns": 2, "timestamp_ns": 3, "x_request_id": "x0"}"#,
            r#"{"event_type": "infer.dispatch", "request_id": 7, "case_id": null, "x_request_id": "a\"b", "other": [1, 2], "phase": null}"#,
            r#"{"event_type": "infer.dispatch", "x_request_id": ""}"#,
        ] {
            let (whole, all) = read(line, Keep::All);
            let (trimmed, kept) = read(line, Keep::Report);
            assert_eq!(whole, trimmed, "{line}");
            assert!(kept <= all, "{line}");
        }
        let (_, kept) = read(
            r#"{"case_id": "c", "event_type": "infer.dispatch", "intended_at_ns": 1, "phase": "measured", "request_id": "r0", "session_id": "s", "x_request_id": "x0"}"#,
            Keep::Report,
        );
        assert_eq!(kept, 4);
    }

    #[test]
    fn derived_keys_follow_python_str() {
        let Prepared::Row(row) =
            prepare(r#"{"event_type": "infer.request", "case_id": 7, "status": null}"#.into())
        else {
            panic!()
        };
        assert_eq!(
            row.derived,
            Some((Field::Text("7".into()), Field::Text("None".into())))
        );
        let Prepared::Row(row) = prepare(r#"{"event_type": "infer.request"}"#.into()) else {
            panic!()
        };
        assert_eq!(
            row.derived,
            Some((Field::Text("unknown".into()), Field::Text("None".into())))
        );
    }

    #[test]
    fn declined_lines_take_the_general_path() {
        assert!(matches!(
            prepare(r#"{"context_id": "x", "schema_version": 4}"#.into()),
            Prepared::Value(_)
        ));
        assert!(matches!(
            prepare(r#"{"event_type": "infer.request", "ttft_ms": NaN}"#.into()),
            Prepared::Value(_)
        ));
        assert!(matches!(
            prepare(r#"{"event_type": "infer.request", "ttft_ms": 1, "ttft_ms": 2}"#.into()),
            Prepared::Value(_)
        ));
        assert!(matches!(prepare("[1]".into()), Prepared::Value(_)));
        assert!(matches!(prepare("{".into()), Prepared::Error(_)));
        assert!(matches!(prepare("   ".into()), Prepared::Blank));
    }
}
