//! Packed request columns: a compact copy, per run, of the values of the
//! `requests` columns the analysis reads (queries/load/requests_analysis.sql),
//! written by the ingest beside the rows into `request_packs`.
//!
//! Reading a row back through SQLite costs a virtual-machine step per column
//! (about 4,700 instructions for the 31 the analysis reads); a packed value
//! is a tag byte and, mostly, a few bytes more. The rows stay the truth: a
//! pack is derived from them, triggers drop it when a row of its run changes
//! (migrations/0004_request_packs.sql), a reader checks that its segments
//! are whole, follow one another in sequence order and span the run's rows
//! from the first to the last, and a pack of another layout is not read.
//! Without a pack, the rows are read.
//!
//! A run's pack is a sequence of segments of up to [`SEGMENT_ROWS`] rows, one
//! table row each: the ingest writes a segment as soon as it is full (its
//! memory stays that of one segment), and a reader decodes the segments in
//! parallel, as no value refers to another segment.
//!
//! # Layout of a segment (version 1)
//! Integers are LEB128 varints; signed ones are zig-zag encoded first.
//!
//! - `SLPK`, then the version byte `1`;
//! - the number of columns, then each column's name (length, UTF-8 bytes);
//! - the number of rows, then the rows, to the end;
//! - a row: each column's value, as a tag byte and its payload:
//!   - `0` null;
//!   - `1` the same value (type and bytes) as the column's previous row;
//!   - `2` an integer: the signed difference from the column's previous integer
//!     (0 before the first);
//!   - `3` a real: its 8 bytes, little-endian;
//!   - `4` text: how many leading bytes it shares with the column's previous
//!     text, then the length and bytes of the rest;
//!   - `5` a blob: its length and bytes.
//!
//! A column's runs of equal values (a case, a status, a session) cost a byte a
//! row, and ids that count up (`r1`, `r2`, ...) little more.
use rusqlite::types::ValueRef;

use crate::util::varint::put_uleb128;

const MAGIC: &[u8; 4] = b"SLPK";
const VERSION: u8 = 1;

const NULL: u8 = 0;
const SAME: u8 = 1;
const INTEGER: u8 = 2;
const REAL: u8 = 3;
const TEXT: u8 = 4;
const BLOB: u8 = 5;

/// Why a pack could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PackError {
    #[error("not a request pack")]
    Magic,
    #[error("request pack version {0}, not 1")]
    Version(u8),
    #[error("the pack's columns are not the ones read")]
    Columns,
    #[error("the pack ends early")]
    Truncated,
    #[error("unknown value tag {0} in the pack")]
    Tag(u8),
    #[error("a segment of the pack holds more than its rows")]
    Trailing,
}

/// The previous row's value of one column, and the column's last integer
/// and text (the bases of the next ones).
#[derive(Debug, Default)]
struct Column {
    kind: u8,
    int: i64,
    real: u64,
    text: Vec<u8>,
    blob: Vec<u8>,
}

impl Column {
    /// The previous row's value, as read back.
    fn value(&self) -> ValueRef<'_> {
        match self.kind {
            INTEGER => ValueRef::Integer(self.int),
            REAL => ValueRef::Real(f64::from_bits(self.real)),
            TEXT => ValueRef::Text(&self.text),
            BLOB => ValueRef::Blob(&self.blob),
            _ => ValueRef::Null,
        }
    }
}

/// One decoded row, read a column at a time: no value is made of a column
/// nobody reads, and the typed reads are one comparison each.
#[derive(Clone, Copy)]
pub struct Row<'a> {
    columns: &'a [Column],
}

impl<'a> Row<'a> {
    pub fn len(&self) -> usize {
        self.columns.len()
    }

    pub fn is_empty(&self) -> bool {
        self.columns.is_empty()
    }

    /// Column `i`'s value (NULL past the last column).
    pub fn get(&self, i: usize) -> ValueRef<'a> {
        self.columns.get(i).map_or(ValueRef::Null, Column::value)
    }
}

/// A row's values read by position and type, each read giving the value
/// only when it has that type: a pack's [`Row`], or the values of a row
/// SQLite returned (`db::store`).
pub trait Fields<'v> {
    fn int(&self, i: usize) -> Option<i64>;
    /// A number (an integer as a float).
    fn real(&self, i: usize) -> Option<f64>;
    fn text(&self, i: usize) -> Option<&'v [u8]>;
    fn blob(&self, i: usize) -> Option<&'v [u8]>;
}

impl<'a> Fields<'a> for Row<'a> {
    fn int(&self, i: usize) -> Option<i64> {
        let c = self.columns.get(i)?;
        (c.kind == INTEGER).then_some(c.int)
    }

    fn real(&self, i: usize) -> Option<f64> {
        let c = self.columns.get(i)?;
        match c.kind {
            REAL => Some(f64::from_bits(c.real)),
            INTEGER => Some(c.int as f64),
            _ => None,
        }
    }

    fn text(&self, i: usize) -> Option<&'a [u8]> {
        let c = self.columns.get(i)?;
        (c.kind == TEXT).then_some(c.text.as_slice())
    }

    fn blob(&self, i: usize) -> Option<&'a [u8]> {
        let c = self.columns.get(i)?;
        (c.kind == BLOB).then_some(c.blob.as_slice())
    }
}

/// Rows per segment: a segment's fresh start costs nothing measurable
/// (about 1 MB of `large` requests), and a 100,000-request run still splits
/// across cores.
pub const SEGMENT_ROWS: u64 = 8192;

/// Packs rows of the named columns, in order, into segments.
#[derive(Debug)]
pub struct Packer {
    /// Every segment's header: magic, version and column names.
    head: Vec<u8>,
    columns: Vec<Column>,
    /// The open segment's rows, and how many.
    segment: Vec<u8>,
    segment_rows: u64,
}

impl Packer {
    pub fn new<S: AsRef<str>>(names: &[S]) -> Self {
        let mut head = Vec::with_capacity(64);
        head.extend_from_slice(MAGIC);
        head.push(VERSION);
        put_uleb128(&mut head, names.len() as u64);
        for name in names {
            put_bytes(&mut head, name.as_ref().as_bytes());
        }
        Packer {
            head,
            columns: names.iter().map(|_| Column::default()).collect(),
            segment: Vec::new(),
            segment_rows: 0,
        }
    }

    /// The open segment, once it is full: its rows and bytes.
    pub fn full(&mut self) -> Option<(u64, Vec<u8>)> {
        (self.segment_rows >= SEGMENT_ROWS).then(|| self.take())
    }

    /// The open segment (its rows so far), or None when it has none.
    pub fn rest(&mut self) -> Option<(u64, Vec<u8>)> {
        (self.segment_rows > 0).then(|| self.take())
    }

    /// Closes the open segment and starts afresh.
    fn take(&mut self) -> (u64, Vec<u8>) {
        let rows = self.segment_rows;
        let mut out = Vec::with_capacity(self.head.len() + 10 + self.segment.len());
        out.extend_from_slice(&self.head);
        put_uleb128(&mut out, self.segment_rows);
        out.extend_from_slice(&self.segment);
        self.segment.clear();
        self.segment_rows = 0;
        for col in &mut self.columns {
            *col = Column::default();
        }
        (rows, out)
    }

    /// Appends a row: one value per column, in the columns' order (values
    /// past the last column are ignored; missing ones are null). Take a full
    /// segment with [`Packer::full`] before the next row.
    pub fn push<'v>(&mut self, row: impl IntoIterator<Item = ValueRef<'v>>) {
        let mut row = row.into_iter();
        let out = &mut self.segment;
        for col in &mut self.columns {
            let v = row.next().unwrap_or(ValueRef::Null);
            match v {
                ValueRef::Null if col.kind == NULL => out.push(SAME),
                ValueRef::Null => {
                    out.push(NULL);
                    col.kind = NULL;
                }
                ValueRef::Integer(i) if col.kind == INTEGER && col.int == i => out.push(SAME),
                ValueRef::Integer(i) => {
                    out.push(INTEGER);
                    put_int(out, i.wrapping_sub(col.int));
                    col.int = i;
                    col.kind = INTEGER;
                }
                ValueRef::Real(f) if col.kind == REAL && col.real == f.to_bits() => out.push(SAME),
                ValueRef::Real(f) => {
                    out.push(REAL);
                    out.extend_from_slice(&f.to_le_bytes());
                    col.real = f.to_bits();
                    col.kind = REAL;
                }
                ValueRef::Text(t) => {
                    let shared = common_prefix(&col.text, t);
                    if col.kind == TEXT && shared == t.len() && shared == col.text.len() {
                        out.push(SAME);
                        continue;
                    }
                    out.push(TEXT);
                    put_uleb128(out, shared as u64);
                    put_bytes(out, &t[shared..]);
                    col.text.truncate(shared);
                    col.text.extend_from_slice(&t[shared..]);
                    col.kind = TEXT;
                }
                ValueRef::Blob(b) if col.kind == BLOB && col.blob == b => out.push(SAME),
                ValueRef::Blob(b) => {
                    out.push(BLOB);
                    put_bytes(out, b);
                    col.blob.clear();
                    col.blob.extend_from_slice(b);
                    col.kind = BLOB;
                }
            }
        }
        self.segment_rows += 1;
    }
}

/// The most columns a pack holds (a row's values are gathered on the stack).
pub const MAX_COLUMNS: usize = 64;

/// A segment of a pack: its rows, undecoded.
#[derive(Debug, Clone, Copy)]
pub struct Segment<'a> {
    pub rows: usize,
    columns: usize,
    bytes: &'a [u8],
}

/// Opens a segment of a pack of the columns `names`.
pub fn segment<'a, S: AsRef<str>>(blob: &'a [u8], names: &[S]) -> Result<Segment<'a>, PackError> {
    let mut r = Reader { bytes: blob, at: 0 };
    if r.take(4)? != MAGIC {
        return Err(PackError::Magic);
    }
    match r.take(1)?[0] {
        VERSION => {}
        v => return Err(PackError::Version(v)),
    }
    let n = r.uint()?;
    if n != names.len() as u64 || names.is_empty() || names.len() > MAX_COLUMNS {
        return Err(PackError::Columns);
    }
    for name in names {
        if r.bytes()? != name.as_ref().as_bytes() {
            return Err(PackError::Columns);
        }
    }
    let rows = usize::try_from(r.uint()?).map_err(|_| PackError::Truncated)?;
    Ok(Segment {
        rows,
        columns: names.len(),
        bytes: &blob[r.at..],
    })
}

impl<'a> Segment<'a> {
    /// Decodes the segment, handing each row (its values in column order) to
    /// `each`, with a bit per column (the first column's lowest) set when
    /// its value may differ from the row before (clear: the same value as
    /// the row before, so a reader can keep what it made of it); stops
    /// early when `each` returns false.
    pub fn rows(&self, mut each: impl FnMut(Row, u64) -> bool) -> Result<(), PackError> {
        let mut c = self.cursor();
        while let Some(changed) = c.step()? {
            if !each(c.row(), changed) {
                return Ok(());
            }
        }
        c.end()
    }

    /// A reader that steps through the rows one at a time, for a caller
    /// that reads two segments side by side.
    pub fn cursor(&self) -> Cursor<'a> {
        Cursor {
            r: Reader {
                bytes: self.bytes,
                at: 0,
            },
            columns: (0..self.columns).map(|_| Column::default()).collect(),
            every: u64::MAX >> (64 - self.columns.clamp(1, 64)),
            left: self.rows,
            first: true,
        }
    }
}

/// A segment being decoded row by row ([`Segment::cursor`]).
pub struct Cursor<'a> {
    r: Reader<'a>,
    columns: Vec<Column>,
    /// Every column's bit.
    every: u64,
    /// Rows not yet decoded.
    left: usize,
    first: bool,
}

impl Cursor<'_> {
    /// Decodes the next row; None after the last. The bits are those
    /// [`Segment::rows`] hands over.
    #[inline]
    pub fn step(&mut self) -> Result<Option<u64>, PackError> {
        if self.left == 0 {
            return Ok(None);
        }
        self.left -= 1;
        let r = &mut self.r;
        // The first row has no row before it.
        let mut changed = if std::mem::take(&mut self.first) {
            self.every
        } else {
            0
        };
        for (i, col) in self.columns.iter_mut().enumerate() {
            let tag = r.take(1)?[0];
            if tag != SAME {
                changed |= 1 << i;
            }
            match tag {
                SAME => {}
                NULL => col.kind = NULL,
                INTEGER => {
                    col.int = col.int.wrapping_add(r.int()?);
                    col.kind = INTEGER;
                }
                REAL => {
                    let b = r.take(8)?;
                    col.real = u64::from_le_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]);
                    col.kind = REAL;
                }
                TEXT => {
                    let shared = usize::try_from(r.uint()?).map_err(|_| PackError::Truncated)?;
                    let rest = r.bytes()?;
                    if shared > col.text.len() {
                        return Err(PackError::Truncated);
                    }
                    col.text.truncate(shared);
                    col.text.extend_from_slice(rest);
                    col.kind = TEXT;
                }
                BLOB => {
                    let b = r.bytes()?;
                    col.blob.clear();
                    col.blob.extend_from_slice(b);
                    col.kind = BLOB;
                }
                other => return Err(PackError::Tag(other)),
            }
        }
        Ok(Some(changed))
    }

    /// The row the last [`Cursor::step`] decoded.
    #[inline]
    pub fn row(&self) -> Row<'_> {
        Row {
            columns: &self.columns,
        }
    }

    /// Rows not yet decoded.
    pub fn left(&self) -> usize {
        self.left
    }

    /// After the last row: Ok when the segment held nothing more.
    pub fn end(&self) -> Result<(), PackError> {
        if self.r.at != self.r.bytes.len() {
            return Err(PackError::Trailing);
        }
        Ok(())
    }
}

struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], PackError> {
        let end = self.at.checked_add(n).ok_or(PackError::Truncated)?;
        let got = self.bytes.get(self.at..end).ok_or(PackError::Truncated)?;
        self.at = end;
        Ok(got)
    }

    fn uint(&mut self) -> Result<u64, PackError> {
        let mut v: u64 = 0;
        for shift in (0..64).step_by(7) {
            let b = *self.bytes.get(self.at).ok_or(PackError::Truncated)?;
            self.at += 1;
            v |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                return Ok(v);
            }
        }
        Err(PackError::Truncated)
    }

    fn int(&mut self) -> Result<i64, PackError> {
        let z = self.uint()?;
        Ok((z >> 1) as i64 ^ -((z & 1) as i64))
    }

    fn bytes(&mut self) -> Result<&'a [u8], PackError> {
        let n = usize::try_from(self.uint()?).map_err(|_| PackError::Truncated)?;
        self.take(n)
    }
}

/// How many leading bytes `a` and `b` share (compared eight at a time).
fn common_prefix(a: &[u8], b: &[u8]) -> usize {
    let n = a.len().min(b.len());
    let mut i = 0;
    while i + 8 <= n {
        let x = u64::from_le_bytes(a[i..i + 8].try_into().unwrap_or([0; 8]));
        let y = u64::from_le_bytes(b[i..i + 8].try_into().unwrap_or([0; 8]));
        if x != y {
            return i + ((x ^ y).trailing_zeros() / 8) as usize;
        }
        i += 8;
    }
    while i < n && a[i] == b[i] {
        i += 1;
    }
    i
}

fn put_int(out: &mut Vec<u8>, v: i64) {
    put_uleb128(out, ((v << 1) ^ (v >> 63)) as u64);
}

fn put_bytes(out: &mut Vec<u8>, b: &[u8]) {
    put_uleb128(out, b.len() as u64);
    out.extend_from_slice(b);
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use rusqlite::types::Value;

    /// (A damaged pack may hold text that is not UTF-8: read it lossily.)
    fn owned(v: Row) -> Vec<Value> {
        (0..v.len())
            .map(|i| {
                let typed = match v.get(i) {
                    ValueRef::Integer(n) => v.int(i) == Some(n) && v.real(i) == Some(n as f64),
                    ValueRef::Real(x) => v.real(i).map(f64::to_bits) == Some(x.to_bits()),
                    ValueRef::Text(t) => v.text(i) == Some(t),
                    ValueRef::Blob(b) => v.blob(i) == Some(b),
                    ValueRef::Null => true,
                };
                // Each typed read gives what the value holds, and only it.
                let reads = [v.int(i).is_some(), v.text(i).is_some(), v.blob(i).is_some()];
                assert!(
                    typed && reads.iter().filter(|r| **r).count() <= 1,
                    "column {i}"
                );
                match v.get(i) {
                    ValueRef::Text(t) => Value::Text(String::from_utf8_lossy(t).into_owned()),
                    v => Value::from(v),
                }
            })
            .collect()
    }

    /// The segments of `rows`, as the ingest takes them.
    fn pack_of(names: &[&str], rows: &[Vec<Value>]) -> Vec<Vec<u8>> {
        let mut p = Packer::new(names);
        let mut out = Vec::new();
        for row in rows {
            p.push(row.iter().map(ValueRef::from));
            out.extend(p.full());
        }
        out.extend(p.rest());
        let packed: u64 = out.iter().map(|(n, _)| n).sum();
        assert_eq!(packed, rows.len() as u64);
        out.into_iter().map(|(_, b)| b).collect()
    }

    fn unpacked(names: &[&str], segments: &[Vec<u8>]) -> Result<Vec<Vec<Value>>, PackError> {
        let mut out = Vec::new();
        for blob in segments {
            let seg = segment(blob, names)?;
            let before = out.len();
            seg.rows(|v, changed| {
                let row = owned(v);
                // A column marked unchanged holds the row before's value.
                if out.len() > before {
                    let previous: &Vec<Value> = &out[out.len() - 1];
                    for (i, (now, then)) in row.iter().zip(previous).enumerate() {
                        assert!(changed & (1 << i) != 0 || now == then, "column {i}");
                    }
                } else {
                    assert_eq!(
                        changed.count_ones() as usize,
                        row.len(),
                        "a segment's first row"
                    );
                }
                out.push(row);
                true
            })?;
            assert_eq!(out.len() - before, seg.rows);
        }
        Ok(out)
    }

    /// Every kind of value, each change of kind, repeats, and the integer and
    /// text bases carried across nulls, come back as they went in.
    #[test]
    fn every_value_comes_back() {
        use Value::*;
        let names = ["i", "f", "t", "b"];
        let rows = vec![
            vec![Integer(0), Real(0.0), Text(String::new()), Blob(vec![])],
            vec![
                Integer(i64::MAX),
                Real(-0.0),
                Text("abc".into()),
                Blob(vec![1, 2]),
            ],
            vec![
                Integer(i64::MIN),
                Real(f64::NAN),
                Text("abd".into()),
                Blob(vec![1, 2]),
            ],
            vec![
                Integer(i64::MIN),
                Real(f64::INFINITY),
                Text("abd".into()),
                Null,
            ],
            vec![Null, Null, Null, Blob(vec![])],
            vec![
                Integer(-1),
                Real(5e-324),
                Text("ab".into()),
                Blob(vec![0; 300]),
            ],
            vec![Text("7".into()), Integer(7), Real(7.0), Text("x".into())],
            vec![Integer(1), Real(1.5), Text("é日本".into()), Integer(2)],
            vec![Integer(1), Real(1.5), Text("é日本語".into()), Integer(2)],
            vec![Integer(1), Real(1.5), Text("é日".into()), Integer(2)],
        ];
        let pack = pack_of(&names, &rows);
        let back = unpacked(&names, &pack).unwrap();
        assert_eq!(back.len(), rows.len());
        for (a, b) in rows.iter().zip(&back) {
            for (x, y) in a.iter().zip(b) {
                match (x, y) {
                    // NaN != NaN: compare the bits.
                    (Real(x), Real(y)) => assert_eq!(x.to_bits(), y.to_bits()),
                    _ => assert_eq!(x, y),
                }
            }
        }
    }

    /// Missing values are null, extra ones ignored; an empty pack has no rows.
    #[test]
    fn short_and_long_rows_and_no_rows() {
        let names = ["a", "b"];
        let mut p = Packer::new(&names);
        p.push([ValueRef::Integer(1)]);
        p.push([1, 2, 3].map(ValueRef::Integer));
        assert!(p.full().is_none());
        let (n, blob) = p.rest().unwrap();
        assert_eq!(n, 2);
        let back = unpacked(&names, &[blob]).unwrap();
        assert_eq!(
            back,
            vec![
                vec![Value::Integer(1), Value::Null],
                vec![Value::Integer(1), Value::Integer(2)]
            ]
        );
        assert!(pack_of(&names, &[]).is_empty());
    }

    /// Rows past a segment's end start a new one, afresh, and still read back
    /// in order; each segment decodes on its own.
    #[test]
    fn segments_split_the_rows_and_decode_alone() {
        let names = ["seq", "id", "case"];
        let n = SEGMENT_ROWS as usize * 2 + 7;
        let rows: Vec<Vec<Value>> = (0..n)
            .map(|i| {
                vec![
                    Value::Integer(i as i64 * 1_000_003),
                    Value::Text(format!("request-{i}")),
                    Value::Text(format!("case-{}", i / 1000)),
                ]
            })
            .collect();
        let segs = pack_of(&names, &rows);
        assert_eq!(unpacked(&names, &segs).unwrap(), rows);
        let sizes: Vec<usize> = segs
            .iter()
            .map(|b| segment(b, &names).unwrap().rows)
            .collect();
        assert_eq!(sizes, [SEGMENT_ROWS as usize, SEGMENT_ROWS as usize, 7]);
        // The last segment alone: its first row is whole, not a difference.
        assert_eq!(unpacked(&names, &segs[2..]).unwrap(), rows[n - 7..]);
        // Repeats cost a byte: three columns of mostly repeated or counting
        // values stay far below their text size.
        let bytes: usize = segs.iter().map(Vec::len).sum();
        assert!(bytes < n * 16, "{bytes} bytes for {n} rows");
    }

    /// A reader stops when told to.
    #[test]
    fn a_reader_stops_early() {
        let names = ["a"];
        let rows: Vec<Vec<Value>> = (0..10).map(|i| vec![Value::Integer(i)]).collect();
        let segs = pack_of(&names, &rows);
        let seg = segment(&segs[0], &names).unwrap();
        let mut seen = 0;
        seg.rows(|_, _| {
            seen += 1;
            seen < 3
        })
        .unwrap();
        assert_eq!(seen, 3);
    }

    /// A pack of other columns, another version, or damaged bytes is refused
    /// with an error, never a panic or a wrong row.
    #[test]
    fn damaged_or_foreign_packs_are_refused() {
        let names = ["a", "b"];
        let rows: Vec<Vec<Value>> = (0..50)
            .map(|i| vec![Value::Integer(i), Value::Text(format!("t{i}"))])
            .collect();
        let segs = pack_of(&names, &rows);
        assert_eq!(segs.len(), 1);
        let pack = segs[0].clone();
        let read = |names: &[&str], blob: &[u8]| unpacked(names, &[blob.to_vec()]);
        assert_eq!(read(&["a"], &pack), Err(PackError::Columns));
        assert_eq!(read(&["a", "c"], &pack), Err(PackError::Columns));
        assert_eq!(read(&[], &pack), Err(PackError::Columns));
        let mut v2 = pack.clone();
        v2[4] = 2;
        assert_eq!(read(&names, &v2), Err(PackError::Version(2)));
        assert_eq!(read(&names, b"SQLite format 3"), Err(PackError::Magic));
        assert_eq!(read(&names, b""), Err(PackError::Truncated));
        // Every cut is refused: a segment knows its row count.
        for cut in 0..pack.len() {
            assert!(read(&names, &pack[..cut]).is_err(), "cut at {cut}");
        }
        // Bytes after the last row are refused too.
        let mut long = pack.clone();
        long.push(NULL);
        assert_eq!(read(&names, &long), Err(PackError::Trailing));
        // Any byte changed either is refused or reads rows of the same shape.
        for at in 0..pack.len() {
            for x in [0u8, 1, 6, 0x80, 0xff] {
                let mut bad = pack.clone();
                bad[at] = x;
                if let Ok(back) = read(&names, &bad) {
                    assert!(back.iter().all(|r| r.len() == 2));
                }
            }
        }
    }

    #[test]
    fn common_prefix_counts_shared_bytes() {
        assert_eq!(common_prefix(b"", b"abc"), 0);
        assert_eq!(common_prefix(b"abcdefghij", b"abcdefghij"), 10);
        assert_eq!(common_prefix(b"abcdefghij", b"abcdefghiX"), 9);
        assert_eq!(common_prefix(b"abcdefgh12", b"abcdefgX12"), 7);
        assert_eq!(common_prefix(b"abc", b"abcdefghijkl"), 3);
        assert_eq!(common_prefix(b"Xbcdefghijkl", b"abcdefghijkl"), 0);
    }
}
