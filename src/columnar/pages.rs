//! Column chunks encoded here, a column at a time, instead of by the
//! `parquet` crate's column writer, which does its work per value (a
//! `ByteArray` per string, a hash per value interned, a comparison per value
//! for min and max, its buffers grown by copies): the `requests` table, the
//! big one, goes this way (docs/scale.md). The crate still frames the file:
//! each chunk's pages go through its page writer (the thrift page headers)
//! and into the row group with `append_column`, with the chunk's metadata
//! made here.
//!
//! What a reader sees is what the crate's writer gives: the same physical
//! and logical types, every column OPTIONAL, snappy pages (format v1), a
//! dictionary on the same columns (`columnar::dictionary`; a chunk past 1 MiB
//! of distinct values is written PLAIN, where the crate keeps the dictionary
//! for its first pages and writes the rest PLAIN), the integers
//! DELTA_BINARY_PACKED (as `columnar::writer` sets the crate to write the
//! other tables' integers), min/max statistics on the
//! same columns (`columnar::statistics`; text bounds past 64 bytes truncated
//! as the crate truncates them), the null counts, the definition level
//! histograms and an offset index. The pages may differ: one data page per
//! chunk (PLAIN text split at 1 MiB), definition levels as one RLE run or
//! bit-packed, dictionary indices in RLE runs and bit-packed groups.
use std::cell::RefCell;
use std::collections::HashMap;

use bytes::Bytes;
use parquet::basic::{Compression, Encoding, PageType};
use parquet::column::page::{CompressedPage, Page, PageWriter};
use parquet::column::writer::ColumnCloseResult;
use parquet::data_type::ByteArray;
use parquet::errors::{ParquetError, Result};
use parquet::file::metadata::{ColumnChunkMetaData, LevelHistogram, PageEncodingStats};
use parquet::file::page_index::offset_index::{OffsetIndexMetaData, PageLocation};
use parquet::file::statistics::{Statistics, ValueStatistics};
use parquet::file::writer::{SerializedPageWriter, TrackedWrite};
use parquet::schema::types::ColumnDescPtr;

use super::{Column, Values};
use crate::util::varint::put_uleb128;

/// The most bytes of values a PLAIN text page holds before the next starts
/// (the crate's default page size).
const PAGE_BYTES: usize = 1 << 20;

/// The most bytes a dictionary page holds; past it a chunk is written PLAIN
/// (the crate's default dictionary page size limit).
const DICTIONARY_BYTES: usize = 1 << 20;

/// The longest min or max a text column's statistics keep (the crate's
/// default `statistics_truncate_length`).
const STATISTICS_BYTES: usize = 64;

/// How one column is to be written.
#[derive(Debug, Clone, Copy)]
pub struct Plan {
    pub dictionary: bool,
    pub statistics: bool,
}

/// One column's text, each value UTF-8 (the writer repairs it first).
pub struct Text<'a> {
    pub data: &'a [u8],
    pub ends: &'a [usize],
}

impl Text<'_> {
    #[inline]
    fn value(&self, k: usize) -> &[u8] {
        let start = if k == 0 { 0 } else { self.ends[k - 1] };
        &self.data[start..self.ends[k]]
    }
}

/// Which rows of a column (or of a page of it) are defined.
#[derive(Debug, Clone, Copy)]
pub enum Defined<'a> {
    /// Every one of this many rows (the common case: no flags kept).
    All(usize),
    /// Each row's flag.
    Each(&'a [bool]),
}

impl<'a> Defined<'a> {
    pub fn of(col: &'a Column) -> Defined<'a> {
        match col.defined() {
            Some(d) => Defined::Each(d),
            None => Defined::All(col.rows()),
        }
    }

    fn len(&self) -> usize {
        match self {
            Defined::All(n) => *n,
            Defined::Each(d) => d.len(),
        }
    }

    fn count(&self) -> usize {
        match self {
            Defined::All(n) => *n,
            Defined::Each(d) => d.iter().filter(|&&x| x).count(),
        }
    }

    #[inline]
    fn get(&self, r: usize) -> bool {
        match self {
            Defined::All(_) => true,
            Defined::Each(d) => d[r],
        }
    }

    /// Rows `[from, to)`.
    fn slice(&self, from: usize, to: usize) -> Defined<'a> {
        match self {
            Defined::All(_) => Defined::All(to - from),
            Defined::Each(d) => Defined::Each(&d[from..to]),
        }
    }
}

/// What a column's values are, ready to encode.
pub enum Input<'a> {
    Int(&'a [i64]),
    Real(&'a [f64]),
    Text(Text<'a>),
    /// A column kept as a dictionary (`columnar::Dict`): its entries and
    /// each defined row's index ([`encode`] writes one too big for a
    /// dictionary page PLAIN).
    Dict {
        entries: Text<'a>,
        indices: &'a [u32],
    },
}

/// Whether a dictionary of `entries` values of `bytes` bytes in all fits
/// a dictionary page (else its chunk is written PLAIN).
fn dictionary_fits(entries: usize, bytes: usize) -> bool {
    entries
        .saturating_mul(4)
        .saturating_add(bytes)
        .le(&DICTIONARY_BYTES)
}

impl<'a> Input<'a> {
    /// The column's values; text as given (already UTF-8).
    /// A dictionary column's `text` is its entries, else its values.
    pub fn of(col: &'a Column, text: Option<(&'a [u8], &'a [usize])>) -> Input<'a> {
        match (&col.values, text) {
            (Values::Dict(d), Some((data, ends))) => Input::Dict {
                entries: Text { data, ends },
                indices: &d.indices,
            },
            (Values::Dict(d), None) => Input::Dict {
                entries: Text {
                    data: &d.data,
                    ends: &d.ends,
                },
                indices: &d.indices,
            },
            (_, Some((data, ends))) => Input::Text(Text { data, ends }),
            (Values::Int(v), None) => Input::Int(v),
            (Values::Real(v), None) => Input::Real(v),
            (Values::Text { data, ends }, None) => Input::Text(Text { data, ends }),
        }
    }

    fn len(&self) -> usize {
        match self {
            Input::Int(v) => v.len(),
            Input::Real(v) => v.len(),
            Input::Text(t) => t.ends.len(),
            Input::Dict { indices, .. } => indices.len(),
        }
    }
}

/// The bytes of the values `indices` name among `entries`.
fn indexed_bytes(entries: &Text<'_>, indices: &[u32]) -> i64 {
    indices
        .iter()
        .map(|&i| entries.value(i as usize).len() as i64)
        .sum()
}

/// Buffers kept by a writing thread from chunk to chunk.
struct Scratch {
    snappy: snap::raw::Encoder,
    /// A page before compression.
    page: Vec<u8>,
    /// A page after compression (kept at its largest length).
    packed: Vec<u8>,
    /// The chunk's pages, headers included.
    chunk: Vec<u8>,
    /// Each defined value's dictionary index.
    indices: Vec<u32>,
    /// Each dictionary entry's value number (its first occurrence).
    entries: Vec<u32>,
}

thread_local! {
    static SCRATCH: RefCell<Option<Scratch>> = const { RefCell::new(None) };
}

fn with_scratch<T>(f: impl FnOnce(&mut Scratch) -> T) -> T {
    let mut s = SCRATCH
        .with(|s| s.borrow_mut().take())
        .unwrap_or_else(|| Scratch {
            snappy: snap::raw::Encoder::new(),
            page: Vec::new(),
            packed: Vec::new(),
            chunk: Vec::new(),
            indices: Vec::new(),
            entries: Vec::new(),
        });
    let out = f(&mut s);
    SCRATCH.with(|slot| *slot.borrow_mut() = Some(s));
    out
}

/// The largest chunk buffer a thread keeps for the next chunk.
const KEPT_BYTES: usize = 4 << 20;

/// Gives a chunk's buffer back for the next chunk, once the row group has
/// copied it (unless it grew past `KEPT_BYTES`).
pub fn give_back(chunk: Bytes) {
    if let Ok(mut v) = chunk.try_into_mut().map(Vec::from) {
        if v.capacity() > KEPT_BYTES {
            return;
        }
        v.clear();
        SCRATCH.with(|s| {
            if let Some(s) = s.borrow_mut().as_mut() {
                if v.capacity() > s.chunk.capacity() {
                    s.chunk = v;
                }
            }
        });
    }
}

fn general(msg: &str) -> ParquetError {
    ParquetError::General(msg.to_owned())
}

/// Encodes one column of a row group: its pages (headers included) and
/// what `SerializedRowGroupWriter::append_column` takes with them.
pub fn encode(
    descr: ColumnDescPtr,
    defined: Defined<'_>,
    input: &Input<'_>,
    plan: Plan,
) -> Result<(Bytes, ColumnCloseResult)> {
    with_scratch(|s| match input {
        // Too big for a dictionary page: PLAIN, as its values (as a text
        // column past its dictionary's room is written).
        Input::Dict { entries, indices }
            if !dictionary_fits(entries.ends.len(), entries.data.len()) =>
        {
            let (data, ends) = super::expand(entries.data, entries.ends, indices);
            let values = Input::Text(Text {
                data: &data,
                ends: &ends,
            });
            encode_with(s, descr, defined, &values, plan)
        }
        _ => encode_with(s, descr, defined, input, plan),
    })
}

/// A dictionary of a text column: each defined value's index in
/// `s.indices`, each entry's first value number in `s.entries`; false when
/// the dictionary would be larger than a dictionary page holds.
fn intern(s: &mut Scratch, text: &Text<'_>) -> bool {
    s.indices.clear();
    s.entries.clear();
    let mut map: HashMap<&[u8], u32, foldhash::fast::FixedState> =
        HashMap::with_hasher(foldhash::fast::FixedState::default());
    let mut bytes = 0usize;
    let mut last: Option<(&[u8], u32)> = None;
    let mut start = 0;
    for (k, &end) in text.ends.iter().enumerate() {
        let v = &text.data[start..end];
        start = end;
        // Runs of one value are the common case (a run's id, its model).
        if let Some((prev, i)) = last {
            if prev == v {
                s.indices.push(i);
                continue;
            }
        }
        let next = s.entries.len() as u32;
        let i = *map.entry(v).or_insert(next);
        if i == next {
            s.entries.push(k as u32);
            bytes += 4 + v.len();
            if bytes > DICTIONARY_BYTES {
                return false;
            }
        }
        s.indices.push(i);
        last = Some((v, i));
    }
    true
}

/// Bits an index up to `max` takes.
fn bit_width(max: u32) -> u8 {
    (32 - max.leading_zeros()) as u8
}

/// An RLE run of `count` copies of `value`, `width` bits each.
fn rle_run(out: &mut Vec<u8>, count: usize, value: u32, width: u8) {
    put_uleb128(out, (count as u64) << 1);
    let bytes = usize::from(width).div_ceil(8);
    out.extend_from_slice(&value.to_le_bytes()[..bytes]);
}

/// `values` (a multiple of 8 of them, or the last run of a page, padded
/// with zeros) bit-packed, `width` bits each, least significant bits first.
fn bit_packed(out: &mut Vec<u8>, values: &[u32], width: u8) {
    let groups = values.len().div_ceil(8);
    put_uleb128(out, ((groups as u64) << 1) | 1);
    let mut acc: u64 = 0;
    let mut bits: u32 = 0;
    let w = u32::from(width);
    for g in 0..groups {
        for j in 0..8 {
            let v = values.get(g * 8 + j).copied().unwrap_or(0);
            acc |= u64::from(v) << bits;
            bits += w;
            while bits >= 8 {
                out.push(acc as u8);
                acc >>= 8;
                bits -= 8;
            }
        }
    }
}

/// `values` in Parquet's RLE/bit-packed hybrid, `width` bits each: runs of 8
/// or more as RLE runs, the rest bit-packed in groups of 8.
pub(super) fn hybrid(out: &mut Vec<u8>, values: &[u32], width: u8) {
    // Values not yet written, to be bit-packed: values[lit..i].
    let mut lit = 0;
    let mut i = 0;
    while i < values.len() {
        let v = values[i];
        let mut j = i + 1;
        while j < values.len() && values[j] == v {
            j += 1;
        }
        // A run long enough for RLE once the literals before it are a
        // multiple of 8 (the run lends them what they lack).
        let lend = (8 - (i - lit) % 8) % 8;
        if j - i >= 8 + lend {
            let split = i + lend;
            if split > lit {
                bit_packed(out, &values[lit..split], width);
            }
            rle_run(out, j - split, v, width);
            lit = j;
        }
        i = j;
    }
    if lit < values.len() {
        bit_packed(out, &values[lit..], width);
    }
}

/// Values per block of DELTA_BINARY_PACKED, and per miniblock (four a
/// block), as the crate's encoder and parquet-mr write them.
const DELTA_BLOCK: usize = 128;
const DELTA_MINI: usize = 32;

/// A zig-zag ULEB128 integer, as DELTA_BINARY_PACKED writes its signed
/// header values.
fn put_zigzag(out: &mut Vec<u8>, v: i64) {
    put_uleb128(out, ((v << 1) ^ (v >> 63)) as u64);
}

/// `values` DELTA_BINARY_PACKED: the header (block size, miniblocks a
/// block, the count, the first value), then per block of 128 differences
/// its least difference and four miniblocks of 32, each bit-packed at the
/// width its largest difference above that least needs (the last padded
/// with zeros; miniblocks past the last value are left out, width 0).
/// Differences wrap as the readers' sums do.
///
/// INT64 columns go this way instead of PLAIN: ids, sequence numbers and
/// instants that count up, and counts that repeat, take a few bits a value
/// instead of eight bytes, and snappy, which found in them the most work
/// per byte of a requests file (0.8-0.9 GB/s against 3-5 GB/s for its
/// text), finds little left to do.
pub(super) fn delta_binary_packed(out: &mut Vec<u8>, values: &[i64]) {
    put_uleb128(out, DELTA_BLOCK as u64);
    put_uleb128(out, (DELTA_BLOCK / DELTA_MINI) as u64);
    put_uleb128(out, values.len() as u64);
    let Some((&first, rest)) = values.split_first() else {
        put_zigzag(out, 0);
        return;
    };
    put_zigzag(out, first);
    let mut prev = first;
    let mut deltas = [0u64; DELTA_BLOCK];
    for block in rest.chunks(DELTA_BLOCK) {
        let mut least = i64::MAX;
        for (d, &x) in deltas.iter_mut().zip(block) {
            let delta = x.wrapping_sub(prev);
            prev = x;
            *d = delta as u64;
            least = least.min(delta);
        }
        let deltas = &mut deltas[..block.len()];
        for d in deltas.iter_mut() {
            *d = d.wrapping_sub(least as u64);
        }
        put_zigzag(out, least);
        let widths = out.len();
        out.extend_from_slice(&[0; DELTA_BLOCK / DELTA_MINI]);
        for (m, mini) in deltas.chunks(DELTA_MINI).enumerate() {
            let width = 64 - mini.iter().fold(0, |a, &d| a | d).leading_zeros();
            out[widths + m] = width as u8;
            pack_miniblock(out, mini, width);
        }
    }
}

/// A miniblock's 32 values (fewer: padded with zeros), `width` bits each,
/// least significant bits first: `4 * width` bytes.
fn pack_miniblock(out: &mut Vec<u8>, values: &[u64], width: u32) {
    if width == 0 {
        return;
    }
    let mut acc: u128 = 0;
    let mut bits = 0u32;
    for k in 0..DELTA_MINI {
        acc |= u128::from(values.get(k).copied().unwrap_or(0)) << bits;
        bits += width;
        while bits >= 64 {
            out.extend_from_slice(&(acc as u64).to_le_bytes());
            acc >>= 64;
            bits -= 64;
        }
    }
    let bytes = bits.div_ceil(8) as usize;
    out.extend_from_slice(&acc.to_le_bytes()[..bytes]);
}

/// A page's definition levels, as format v1 puts them before the values:
/// their length in 4 bytes, then the hybrid encoding (width 1): one RLE run
/// when every row is alike, otherwise bit-packed.
fn levels(out: &mut Vec<u8>, defined: Defined<'_>) {
    let at = out.len();
    out.extend_from_slice(&[0; 4]);
    let defined = match defined {
        Defined::All(0) => &[][..],
        Defined::All(n) => {
            rle_run(out, n, 1, 1);
            &[][..]
        }
        Defined::Each(d) => d,
    };
    match defined.first() {
        None => {}
        Some(&first) if defined.iter().all(|&d| d == first) => {
            rle_run(out, defined.len(), u32::from(first), 1);
        }
        Some(_) => {
            let groups = defined.len().div_ceil(8);
            put_uleb128(out, ((groups as u64) << 1) | 1);
            for chunk in defined.chunks(8) {
                let mut b = 0u8;
                for (j, &d) in chunk.iter().enumerate() {
                    b |= u8::from(d) << j;
                }
                out.push(b);
            }
        }
    }
    let len = (out.len() - at - 4) as u32;
    out[at..at + 4].copy_from_slice(&len.to_le_bytes());
}

/// The pages of one chunk being written into `s.chunk`.
struct Chunk<'s, 'w> {
    pages: SerializedPageWriter<'w, Vec<u8>>,
    snappy: &'s mut snap::raw::Encoder,
    packed: &'s mut Vec<u8>,
    compressed: u64,
    uncompressed: u64,
    data_offset: Option<u64>,
    data_pages: i32,
    locations: Vec<PageLocation>,
    unencoded: Vec<i64>,
}

impl Chunk<'_, '_> {
    /// Compresses `page` and writes it as a dictionary page (`values`
    /// entries) or a data page (`values` rows, starting at `first_row`).
    fn write(
        &mut self,
        page: &[u8],
        dictionary: bool,
        values: usize,
        encoding: Encoding,
        first_row: usize,
        unencoded: i64,
    ) -> Result<()> {
        let need = snap::raw::max_compress_len(page.len());
        if self.packed.len() < need {
            self.packed.resize(need, 0);
        }
        let n = self
            .snappy
            .compress(page, self.packed)
            .map_err(|e| general(&e.to_string()))?;
        let buf = Bytes::copy_from_slice(&self.packed[..n]);
        let num_values = u32::try_from(values).map_err(|_| general("page too large"))?;
        let p = if dictionary {
            Page::DictionaryPage {
                buf,
                num_values,
                encoding,
                is_sorted: false,
            }
        } else {
            Page::DataPage {
                buf,
                num_values,
                encoding,
                def_level_encoding: Encoding::RLE,
                rep_level_encoding: Encoding::RLE,
                statistics: None,
            }
        };
        let spec = self.pages.write_page(CompressedPage::new(p, page.len()))?;
        self.compressed += spec.compressed_size as u64;
        self.uncompressed += spec.uncompressed_size as u64;
        if !dictionary {
            self.data_offset.get_or_insert(spec.offset);
            self.data_pages += 1;
            self.locations.push(PageLocation {
                offset: spec.offset as i64,
                compressed_page_size: spec.compressed_size as i32,
                first_row_index: first_row as i64,
            });
            self.unencoded.push(unencoded);
        }
        Ok(())
    }
}

/// Rows `[from, to)` of a column and its values `[vfrom, vto)`: one page.
#[derive(Clone, Copy)]
struct Span {
    rows: (usize, usize),
    values: (usize, usize),
}

/// The pages of a PLAIN text column: a new one where a value would take
/// the page past `PAGE_BYTES` of values.
fn text_spans(defined: Defined<'_>, text: &Text<'_>, out: &mut Vec<Span>) {
    let (mut row0, mut value0, mut byte0) = (0, 0, 0);
    let mut v = 0;
    for r in 0..defined.len() {
        if !defined.get(r) {
            continue;
        }
        if text.ends[v] - byte0 > PAGE_BYTES && v > value0 {
            out.push(Span {
                rows: (row0, r),
                values: (value0, v),
            });
            (row0, value0, byte0) = (r, v, text.ends[v - 1]);
        }
        v += 1;
    }
    out.push(Span {
        rows: (row0, defined.len()),
        values: (value0, v),
    });
}

/// A text bound cut to `STATISTICS_BYTES` as the crate cuts a minimum: at
/// the last character boundary within it.
fn truncated_min(v: &[u8]) -> (Vec<u8>, bool) {
    if v.len() <= STATISTICS_BYTES {
        return (v.to_vec(), false);
    }
    match std::str::from_utf8(v) {
        Ok(s) => match (1..=STATISTICS_BYTES)
            .rev()
            .find(|&x| s.is_char_boundary(x))
        {
            Some(cut) => (v[..cut].to_vec(), true),
            None => (v.to_vec(), false),
        },
        Err(_) => (v[..STATISTICS_BYTES].to_vec(), true),
    }
}

/// A text bound cut as the crate cuts a maximum: shortened, then its last
/// character that can be incremented without growing, incremented (an
/// upper bound still); whole when no such cut exists.
fn truncated_max(v: &[u8]) -> (Vec<u8>, bool) {
    if v.len() <= STATISTICS_BYTES {
        return (v.to_vec(), false);
    }
    let cut = match std::str::from_utf8(v) {
        Ok(s) => (STATISTICS_BYTES.saturating_sub(3)..=STATISTICS_BYTES)
            .rev()
            .find(|&x| s.is_char_boundary(x))
            .and_then(|at| s.get(..at))
            .and_then(|head| {
                head.char_indices().rev().find_map(|(i, c)| {
                    let next = char::from_u32(c as u32 + 1)?;
                    (next.len_utf8() == c.len_utf8()).then(|| {
                        let mut out = head.as_bytes()[..i].to_vec();
                        let mut buf = [0u8; 4];
                        out.extend_from_slice(next.encode_utf8(&mut buf).as_bytes());
                        out
                    })
                })
            }),
        Err(_) => {
            let mut out = v[..STATISTICS_BYTES].to_vec();
            let mut done = false;
            for b in out.iter_mut().rev() {
                let (x, overflow) = b.overflowing_add(1);
                *b = x;
                if !overflow {
                    done = true;
                    break;
                }
            }
            done.then_some(out)
        }
    };
    match cut {
        Some(c) => (c, true),
        None => (v.to_vec(), false),
    }
}

/// Min and max of the defined values (NaN left out, as the crate leaves it
/// out of a DOUBLE column's).
fn min_max_i64(v: &[i64]) -> Option<(i64, i64)> {
    let first = *v.first()?;
    let (mut lo, mut hi) = (first, first);
    for &x in v {
        lo = lo.min(x);
        hi = hi.max(x);
    }
    Some((lo, hi))
}

fn min_max_f64(v: &[f64]) -> Option<(f64, f64)> {
    let mut out: Option<(f64, f64)> = None;
    for &x in v {
        if x.is_nan() {
            continue;
        }
        out = Some(match out {
            None => (x, x),
            Some((lo, hi)) => (if x < lo { x } else { lo }, if x > hi { x } else { hi }),
        });
    }
    // The crate's rule for zeros: a minimum of zero is written -0.0, a
    // maximum of zero +0.0, so either sign of zero falls within them.
    out.map(|(lo, hi)| {
        (
            if lo == 0.0 { -0.0 } else { lo },
            if hi == 0.0 { 0.0 } else { hi },
        )
    })
}

fn text_stats<'a>(values: impl Iterator<Item = &'a [u8]>, nulls: u64) -> Statistics {
    let mut lo: Option<&[u8]> = None;
    let mut hi: Option<&[u8]> = None;
    for v in values {
        if lo.is_none_or(|l| v < l) {
            lo = Some(v);
        }
        if hi.is_none_or(|h| v > h) {
            hi = Some(v);
        }
    }
    let (Some(lo), Some(hi)) = (lo, hi) else {
        return Statistics::ByteArray(ValueStatistics::new(None, None, None, Some(nulls), false));
    };
    let (min, cut_min) = truncated_min(lo);
    let (max, cut_max) = truncated_max(hi);
    Statistics::ByteArray(
        ValueStatistics::new(
            Some(ByteArray::from(min)),
            Some(ByteArray::from(max)),
            None,
            Some(nulls),
            false,
        )
        .with_max_is_exact(!cut_max)
        .with_min_is_exact(!cut_min),
    )
}

fn encode_with(
    s: &mut Scratch,
    descr: ColumnDescPtr,
    defined: Defined<'_>,
    input: &Input<'_>,
    plan: Plan,
) -> Result<(Bytes, ColumnCloseResult)> {
    let rows = defined.len();
    let defined_count = defined.count();
    if defined_count != input.len() {
        return Err(general("a column's values do not match its nulls"));
    }
    let nulls = (rows - defined_count) as u64;

    // The chunk's dictionary, if it has one: the text its entries are read
    // from (value `s.entries[k]` is entry k), each row's entry and the
    // values' bytes.
    let dict: Option<(&Text<'_>, &[u32], i64)> = match input {
        // Interned as the batch was filled: its entries in order.
        Input::Dict { entries, indices } => {
            s.entries.clear();
            s.entries.extend(0..entries.ends.len() as u32);
            Some((entries, *indices, indexed_bytes(entries, indices)))
        }
        // A repeating text column (all NULL: an empty dictionary, as the
        // crate writes it).
        Input::Text(t) if plan.dictionary && intern(s, t) => {
            Some((t, &s.indices, t.data.len() as i64))
        }
        _ => None,
    };

    let mut chunk_buf = std::mem::take(&mut s.chunk);
    chunk_buf.clear();
    let mut sink = TrackedWrite::new(chunk_buf);
    let mut page = std::mem::take(&mut s.page);
    let mut encodings = vec![Encoding::RLE];
    let mut encoding_stats = Vec::with_capacity(2);
    let written = {
        let mut chunk = Chunk {
            pages: SerializedPageWriter::new(&mut sink),
            snappy: &mut s.snappy,
            packed: &mut s.packed,
            compressed: 0,
            uncompressed: 0,
            data_offset: None,
            data_pages: 0,
            locations: Vec::with_capacity(1),
            unencoded: Vec::with_capacity(1),
        };
        let mut unencoded_total: Option<i64> = None;
        match (dict, input) {
            (Some((t, indices, bytes)), _) => {
                // The dictionary page: its entries PLAIN.
                page.clear();
                for &k in &s.entries {
                    let v = t.value(k as usize);
                    page.extend_from_slice(&(v.len() as u32).to_le_bytes());
                    page.extend_from_slice(v);
                }
                chunk.write(&page, true, s.entries.len(), Encoding::PLAIN, 0, 0)?;
                encodings.push(Encoding::PLAIN);
                encoding_stats.push(PageEncodingStats {
                    page_type: PageType::DICTIONARY_PAGE,
                    encoding: Encoding::PLAIN,
                    count: 1,
                });
                // One data page: the levels, the index width, the indices.
                page.clear();
                levels(&mut page, defined);
                let width = bit_width((s.entries.len() as u32).saturating_sub(1));
                page.push(width);
                hybrid(&mut page, indices, width);
                chunk.write(&page, false, rows, Encoding::RLE_DICTIONARY, 0, bytes)?;
                unencoded_total = Some(bytes);
                encodings.push(Encoding::RLE_DICTIONARY);
                encoding_stats.push(PageEncodingStats {
                    page_type: PageType::DATA_PAGE,
                    encoding: Encoding::RLE_DICTIONARY,
                    count: 1,
                });
            }
            (None, Input::Text(t)) => {
                let mut spans = Vec::with_capacity(1);
                text_spans(defined, t, &mut spans);
                let mut total = 0i64;
                for span in &spans {
                    page.clear();
                    levels(&mut page, defined.slice(span.rows.0, span.rows.1));
                    let from = if span.values.0 == 0 {
                        0
                    } else {
                        t.ends[span.values.0 - 1]
                    };
                    let mut start = from;
                    for &end in &t.ends[span.values.0..span.values.1] {
                        page.extend_from_slice(&((end - start) as u32).to_le_bytes());
                        page.extend_from_slice(&t.data[start..end]);
                        start = end;
                    }
                    let bytes = (start - from) as i64;
                    total += bytes;
                    let n = span.rows.1 - span.rows.0;
                    chunk.write(&page, false, n, Encoding::PLAIN, span.rows.0, bytes)?;
                }
                unencoded_total = Some(total);
                encodings.push(Encoding::PLAIN);
                encoding_stats.push(PageEncodingStats {
                    page_type: PageType::DATA_PAGE,
                    encoding: Encoding::PLAIN,
                    count: spans.len() as i32,
                });
            }
            // Always interned above.
            (None, Input::Dict { .. }) => {
                return Err(general("a dictionary column without its entries"))
            }
            (None, Input::Int(v)) => {
                // One page: the levels, then the values DELTA_BINARY_PACKED.
                page.clear();
                levels(&mut page, defined);
                delta_binary_packed(&mut page, v);
                let encoding = Encoding::DELTA_BINARY_PACKED;
                chunk.write(&page, false, rows, encoding, 0, 0)?;
                encodings.push(encoding);
                encoding_stats.push(PageEncodingStats {
                    page_type: PageType::DATA_PAGE,
                    encoding,
                    count: 1,
                });
            }
            (None, Input::Real(v)) => {
                // One PLAIN page: the levels, then each value's 8 bytes,
                // little-endian.
                page.clear();
                levels(&mut page, defined);
                page.reserve(v.len() * 8);
                v.iter()
                    .for_each(|x| page.extend_from_slice(&x.to_le_bytes()));
                chunk.write(&page, false, rows, Encoding::PLAIN, 0, 0)?;
                encodings.push(Encoding::PLAIN);
                encoding_stats.push(PageEncodingStats {
                    page_type: PageType::DATA_PAGE,
                    encoding: Encoding::PLAIN,
                    count: 1,
                });
            }
        }
        chunk.pages.close()?;
        (
            chunk.compressed,
            chunk.uncompressed,
            chunk.data_offset,
            chunk.locations,
            chunk.unencoded,
            unencoded_total,
        )
    };
    s.page = page;
    let (compressed, uncompressed, data_offset, locations, unencoded, unencoded_total) = written;

    let mut builder = ColumnChunkMetaData::builder(descr.clone())
        .set_compression(Compression::SNAPPY)
        .set_encodings_mask(parquet::basic::EncodingMask::new_from_encodings(
            encodings.iter(),
        ))
        .set_page_encoding_stats(encoding_stats)
        .set_total_compressed_size(compressed as i64)
        .set_total_uncompressed_size(uncompressed as i64)
        .set_num_values(rows as i64)
        .set_data_page_offset(data_offset.unwrap_or(0) as i64)
        .set_dictionary_page_offset(dict.map(|_| 0));
    if plan.statistics {
        let stats = match (dict, input) {
            // A dictionary's entries are the column's distinct values.
            (Some((t, _, _)), _) => {
                text_stats(s.entries.iter().map(|&k| t.value(k as usize)), nulls)
            }
            (None, Input::Int(v)) => {
                let mm = min_max_i64(v);
                Statistics::Int64(
                    ValueStatistics::new(
                        mm.map(|m| m.0),
                        mm.map(|m| m.1),
                        None,
                        Some(nulls),
                        false,
                    )
                    .with_backwards_compatible_min_max(true),
                )
            }
            (None, Input::Real(v)) => {
                let mm = min_max_f64(v);
                Statistics::Double(
                    ValueStatistics::new(
                        mm.map(|m| m.0),
                        mm.map(|m| m.1),
                        None,
                        Some(nulls),
                        false,
                    )
                    .with_backwards_compatible_min_max(true),
                )
            }
            (None, Input::Text(t) | Input::Dict { entries: t, .. }) => {
                text_stats((0..t.ends.len()).map(|k| t.value(k)), nulls)
            }
        };
        builder = builder
            .set_statistics(stats)
            .set_unencoded_byte_array_data_bytes(unencoded_total)
            .set_definition_level_histogram(Some(LevelHistogram::from(vec![
                nulls as i64,
                defined_count as i64,
            ])));
    }
    let metadata = builder.build()?;
    let bytes = sink.into_inner()?;
    // The crate counts a page's text bytes only where it keeps statistics.
    let text = matches!(input, Input::Text(_) | Input::Dict { .. });
    let unencoded = (plan.statistics && text).then_some(unencoded);
    let close = ColumnCloseResult {
        bytes_written: bytes.len() as u64,
        rows_written: rows as u64,
        metadata,
        bloom_filter: None,
        column_index: None,
        offset_index: Some(OffsetIndexMetaData {
            page_locations: locations,
            unencoded_byte_array_data_bytes: unencoded,
        }),
    };
    Ok((Bytes::from(bytes), close))
}

/// Decodes `n` values of the hybrid encoding (for the tests).
#[cfg(test)]
pub(super) fn unhybrid(mut data: &[u8], width: u8, n: usize) -> Vec<u32> {
    let mut out = Vec::new();
    let bytes = usize::from(width).div_ceil(8);
    while out.len() < n && !data.is_empty() {
        let mut header = 0u64;
        let mut shift = 0;
        loop {
            let b = data[0];
            data = &data[1..];
            header |= u64::from(b & 0x7F) << shift;
            shift += 7;
            if b & 0x80 == 0 {
                break;
            }
        }
        if header & 1 == 0 {
            let mut v = [0u8; 4];
            v[..bytes].copy_from_slice(&data[..bytes]);
            data = &data[bytes..];
            out.extend(std::iter::repeat_n(
                u32::from_le_bytes(v),
                (header >> 1) as usize,
            ));
        } else {
            let count = (header >> 1) as usize * 8;
            let len = (header >> 1) as usize * usize::from(width);
            let (packed, rest) = data.split_at(len);
            data = rest;
            let mut bit = 0usize;
            for _ in 0..count {
                let mut v = 0u32;
                for j in 0..usize::from(width) {
                    let at = bit + j;
                    v |= u32::from((packed[at / 8] >> (at % 8)) & 1) << j;
                }
                bit += usize::from(width);
                out.push(v);
            }
        }
    }
    out.truncate(n);
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    /// A DOUBLE column's bounds leave NaN out and widen a zero bound to
    /// both signs, as the crate's do.
    #[test]
    fn delta_binary_packed_as_the_format_lays_it_out() {
        // Header: block size 128 (ULEB128 0x80 0x01), 4 miniblocks, the
        // count, the first value zig-zagged.
        let mut out = Vec::new();
        delta_binary_packed(&mut out, &[]);
        assert_eq!(out, [0x80, 0x01, 4, 0, 0]);
        // 1, 2, 3: differences 1 and 1, the least 1 (zig-zag 2), nothing
        // left over: four widths of 0 and no miniblock bytes.
        out.clear();
        delta_binary_packed(&mut out, &[1, 2, 3]);
        assert_eq!(out, [0x80, 0x01, 4, 3, 2, 2, 0, 0, 0, 0]);
        // 5, 3, 10: differences -2 and 7, the least -2 (zig-zag 3), over it
        // 0 and 9: the first miniblock 4 bits wide, 32 values in 16 bytes
        // (9 in the high half of the first byte), the others empty.
        out.clear();
        delta_binary_packed(&mut out, &[5, 3, 10]);
        let mut want = vec![0x80, 0x01, 4, 3, 10, 3, 4, 0, 0, 0, 0x90];
        want.extend([0; 15]);
        assert_eq!(out, want);
        // A full block and one value more: a second block.
        out.clear();
        let v: Vec<i64> = (0..130).collect();
        delta_binary_packed(&mut out, &v);
        assert_eq!(
            out,
            [0x80, 0x01, 4, 130, 0x01, 0, 2, 0, 0, 0, 0, 2, 0, 0, 0, 0]
        );
        // Differences wrap: i64::MIN to i64::MAX is -1, and back 1.
        out.clear();
        delta_binary_packed(&mut out, &[i64::MIN, i64::MAX, i64::MIN]);
        assert_eq!(out[14..], [1, 2, 0, 0, 0, 8, 0, 0, 0, 0, 0, 0, 0]);
        // Width 64: differences i64::MIN and i64::MAX, 2^64 - 1 apart.
        out.clear();
        delta_binary_packed(&mut out, &[0, i64::MIN, -1]);
        assert_eq!(out.len(), 5 + 10 + 4 + 32 * 8);
        assert_eq!(out[15..19], [64, 0, 0, 0]);
        assert_eq!(
            out[19..35],
            [0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]
        );
    }

    #[test]
    fn real_bounds_are_the_crates() {
        let (lo, hi) = min_max_f64(&[f64::NAN, 0.0, 1.5]).unwrap();
        assert!(lo == 0.0 && lo.is_sign_negative());
        assert_eq!(hi, 1.5);
        let (lo, hi) = min_max_f64(&[-2.0, -0.0]).unwrap();
        assert_eq!(lo, -2.0);
        assert!(hi == 0.0 && hi.is_sign_positive());
        assert_eq!(min_max_f64(&[f64::NAN]), None);
        assert_eq!(min_max_i64(&[3, -9, 4]), Some((-9, 4)));
    }

    /// Text bounds past 64 bytes: the minimum cut at a character boundary,
    /// the maximum cut and incremented, or kept whole where no character
    /// can be incremented without growing.
    #[test]
    fn long_text_bounds_are_cut_as_the_crate_cuts_them() {
        let v = "é".repeat(40);
        let (min, cut) = truncated_min(v.as_bytes());
        assert!(cut);
        assert_eq!(min, "é".repeat(32).as_bytes());
        let (max, cut) = truncated_max(v.as_bytes());
        assert!(cut);
        assert_eq!(max, format!("{}ê", "é".repeat(31)).as_bytes());
        let top = "\u{10FFFF}".repeat(20);
        assert_eq!(
            truncated_max(top.as_bytes()),
            (top.as_bytes().to_vec(), false)
        );
        assert_eq!(truncated_min(b"short"), (b"short".to_vec(), false));
    }
}
