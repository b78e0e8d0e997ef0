//! Reading a JSONL file the way the reference does (Python text mode): UTF-8,
//! universal newlines (`\n`, `\r\n` and a lone `\r` all end a line), 1-based
//! physical line numbers, streamed so a 650 MB file never sits in memory.
use std::io::BufRead;

use sha2::{Digest, Sha256};

/// Python's message for invalid UTF-8 in `bytes`, which start at byte
/// `offset` of what Python's decoder was given.
pub fn utf8_message(bytes: &[u8], err: &std::str::Utf8Error, offset: u64) -> String {
    let pos = offset + err.valid_up_to() as u64;
    let byte = bytes.get(err.valid_up_to()).copied().unwrap_or(0);
    // The bytes Python's decoder gives up on: the start of a sequence and
    // the continuation bytes it accepted before the bad one (or the end).
    let len = err
        .error_len()
        .unwrap_or(bytes.len().saturating_sub(err.valid_up_to()))
        .max(1) as u64;
    let reason = match err.error_len() {
        None => "unexpected end of data",
        Some(_) if (0x80..0xc0).contains(&byte) || byte >= 0xf5 || byte == 0xc0 || byte == 0xc1 => {
            "invalid start byte"
        }
        Some(_) => "invalid continuation byte",
    };
    if len > 1 {
        let last = pos + len - 1;
        format!("'utf-8' codec can't decode bytes in position {pos}-{last}: {reason}")
    } else {
        format!("'utf-8' codec can't decode byte 0x{byte:02x} in position {pos}: {reason}")
    }
}

/// Python reads a text file for its lines in chunks of this many bytes,
/// decoding each with what the last left undecoded (an incomplete
/// character) in front; a decoding error's position counts from there.
const PY_CHUNK: u64 = 8192;

/// How many bytes before the end of `before` start a character that does
/// not end there (0..=3): what Python's incremental decoder carries over.
fn carried(before: &[u8]) -> u64 {
    for back in 1..=before.len().min(3) {
        let b = before[before.len() - back];
        if b & 0xc0 == 0x80 {
            continue; // a continuation byte: look further back
        }
        let width = match b {
            0xc2..=0xdf => 2,
            0xe0..=0xef => 3,
            0xf0..=0xf4 => 4,
            _ => 1,
        };
        return if width > back { back as u64 } else { 0 };
    }
    0
}

/// Lone carriage returns among `bytes` (each ends a line).
fn count_cr(bytes: &[u8]) -> u64 {
    memchr::memchr_iter(b'\r', bytes).count() as u64
}

/// `BufRead::read_until(b'\n', buf)`, searching with the memchr crate's
/// vectorized search (the standard library's is a word at a time, and every
/// byte of the file goes through it).
fn read_until_newline<R: BufRead>(inner: &mut R, buf: &mut Vec<u8>) -> std::io::Result<usize> {
    let mut read = 0;
    loop {
        let available = match inner.fill_buf() {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        let (found, used) = match memchr::memchr(b'\n', available) {
            Some(i) => (true, i + 1),
            None => (available.is_empty(), available.len()),
        };
        buf.extend_from_slice(&available[..used]);
        inner.consume(used);
        read += used;
        if found {
            return Ok(read);
        }
    }
}

/// Where a line's bytes came from: their offset in the file and the
/// terminators taken off them.
struct Raw {
    offset: u64,
    skip_lf: bool,
    end: &'static [u8],
}

/// A streaming line reader that also hashes and counts what it reads.
pub struct Lines<R> {
    inner: R,
    buf: Vec<u8>,
    /// Pending pieces of a chunk split on lone `\r`.
    pending: std::collections::VecDeque<Vec<u8>>,
    pub line_no: u64,
    pub bytes_read: u64,
    /// None when the caller needs no digest.
    hasher: Option<Sha256>,
    /// The first invalid UTF-8 seen (Python fails the whole file on it).
    pub utf8_error: Option<String>,
    /// The physical line holding it.
    pub utf8_error_line: u64,
    /// The last three bytes read before the current read (for where a
    /// Python chunk's decoding starts), and the start of the Python chunk
    /// holding the end of everything read before it.
    tail: Vec<u8>,
    chunk_start: u64,
    /// `tail` and `chunk_start` as they were before the current read.
    before: (Vec<u8>, u64),
    ended_with_cr: bool,
}

impl<R: BufRead> Lines<R> {
    pub fn new(inner: R) -> Self {
        Self::hashing(inner, true)
    }

    /// A reader that hashes what it reads only when `digest` is set.
    pub fn hashing(inner: R, digest: bool) -> Self {
        Lines {
            inner,
            buf: Vec::with_capacity(1 << 16),
            pending: Default::default(),
            line_no: 0,
            bytes_read: 0,
            hasher: digest.then(Sha256::new),
            utf8_error: None,
            utf8_error_line: 0,
            tail: Vec::new(),
            chunk_start: 0,
            before: (Vec::new(), 0),
            ended_with_cr: false,
        }
    }

    /// The SHA-256 of every byte read so far, as hex (None when not hashing).
    pub fn sha256_hex(self) -> Option<String> {
        let digest = self.hasher?.finalize();
        Some(digest.iter().map(|b| format!("{b:02x}")).collect())
    }

    /// The next physical line without its terminator, or `None` at the end.
    /// Invalid UTF-8 is recorded in `utf8_error` and the line is returned lossily.
    pub fn next_line(&mut self) -> std::io::Result<Option<String>> {
        loop {
            if let Some(piece) = self.pending.pop_front() {
                self.line_no += 1;
                return Ok(Some(self.text_of(piece, None)));
            }
            self.buf.clear();
            let n = read_until_newline(&mut self.inner, &mut self.buf)?;
            if n == 0 {
                return Ok(None);
            }
            let offset = self.bytes_read;
            if let Some(h) = &mut self.hasher {
                h.update(&self.buf);
            }
            self.bytes_read += n as u64;
            self.track_chunks(offset);
            // The next line is likely as long as this one: one allocation each.
            // (At most a megabyte: after a huge line, not another as big.)
            let next = (n + n / 4 + 16).min(1 << 20);
            let mut chunk = std::mem::replace(&mut self.buf, Vec::with_capacity(next));
            // A `\r\n` split across two reads: the `\r` ended the previous line already.
            let skip_lf = self.ended_with_cr && chunk.first() == Some(&b'\n');
            self.ended_with_cr = false;
            if skip_lf {
                chunk.remove(0);
                if chunk.is_empty() {
                    continue;
                }
            }
            let mut end: &[u8] = b"";
            if chunk.last() == Some(&b'\n') {
                chunk.pop();
                end = b"\n";
                if chunk.last() == Some(&b'\r') {
                    chunk.pop();
                    end = b"\r\n";
                }
            }
            let raw = Raw {
                offset,
                skip_lf,
                end,
            };
            if memchr::memchr(b'\r', &chunk).is_none() {
                self.line_no += 1;
                return Ok(Some(self.text_of(chunk, Some(&raw))));
            }
            // Lone carriage returns end lines too.
            self.note_utf8_error(&raw, &chunk, self.line_no + 1);
            let ends_with_cr = chunk.last() == Some(&b'\r');
            let mut parts: Vec<Vec<u8>> =
                chunk.split(|b| *b == b'\r').map(<[u8]>::to_vec).collect();
            if ends_with_cr {
                parts.pop();
                self.ended_with_cr = true;
            }
            self.pending.extend(parts);
        }
    }

    /// The last (up to) three bytes before `bytes` ends, `earlier` the
    /// bytes before `bytes`.
    fn last3(earlier: &[u8], bytes: &[u8]) -> Vec<u8> {
        let mut v = earlier.to_vec();
        v.extend_from_slice(&bytes[bytes.len().saturating_sub(3)..]);
        let cut = v.len().saturating_sub(3);
        v.split_off(cut)
    }

    /// Keeps what [`Self::py_chunk_start`] needs of the read just made
    /// (`self.buf`, at `offset`): where the Python chunk holding its last
    /// byte starts, and its last bytes.
    fn track_chunks(&mut self, offset: u64) {
        self.before = (self.tail.clone(), self.chunk_start);
        let end = self.bytes_read;
        if end > offset {
            let boundary = (end - 1) - (end - 1) % PY_CHUNK;
            if boundary >= offset && boundary > 0 {
                let i = (boundary - offset) as usize;
                let before = Self::last3(&self.tail, &self.buf[..i]);
                self.chunk_start = boundary - carried(&before);
            }
        }
        self.tail = Self::last3(&self.tail, &self.buf);
    }

    /// Where Python's decoding started of the chunk that reports an error
    /// at file byte `at`, which lies in the read `raw` (whose bytes after a
    /// skipped `\n` are `line`).
    fn py_chunk_start(&self, raw: &Raw, line: &[u8], at: u64) -> u64 {
        let lead = u64::from(raw.skip_lf);
        let data = raw.offset + lead;
        let boundary = at - at % PY_CHUNK;
        // A character cut by the next boundary is carried into the next
        // chunk, which starts with it.
        let next = boundary + PY_CHUNK;
        if next - at <= 3 {
            let (i, k) = ((at - data) as usize, (next - data) as usize);
            if k <= line.len() && carried(&line[i..k]) == (k - i) as u64 {
                return at;
            }
        }
        let (tail, chunk_start) = &self.before;
        if boundary < raw.offset || boundary == 0 {
            return if boundary == 0 { 0 } else { *chunk_start };
        }
        let before = if boundary == raw.offset {
            tail.clone()
        } else {
            let mut earlier = tail.clone();
            if raw.skip_lf {
                earlier.push(b'\n');
            }
            let i = ((boundary - data) as usize).min(line.len());
            Self::last3(&earlier, &line[..i])
        };
        boundary - carried(&before)
    }

    /// Records the first invalid UTF-8 of the file, with Python's message:
    /// it is found in the bytes as read (the line's terminators included,
    /// since they decide between a bad continuation and an unexpected end),
    /// its position counted as Python's line reader counts it, from the
    /// start of the 8 KB chunk being decoded.
    ///
    /// The bytes are not copied (a refused line may be hundreds of
    /// megabytes): only those from the error on, where the terminators can
    /// matter, are looked at again with them.
    fn note_utf8_error(&mut self, raw: &Raw, line: &[u8], line_no: u64) {
        if self.utf8_error.is_some() {
            return;
        }
        let Err(e) = std::str::from_utf8(line) else {
            return;
        };
        let start = e.valid_up_to();
        let (bytes, ends_file) = if e.error_len().is_some() {
            (std::borrow::Cow::Borrowed(&line[start..]), false)
        } else {
            let mut t = line[start..].to_vec();
            t.extend_from_slice(raw.end);
            match std::str::from_utf8(&t) {
                Ok(_) => return,
                Err(te) => (std::borrow::Cow::Owned(t), te.error_len().is_none()),
            }
        };
        let Err(err) = std::str::from_utf8(&bytes) else {
            return;
        };
        let at = raw.offset + u64::from(raw.skip_lf) + start as u64;
        // Cut short by the file's end: Python decodes the carried bytes
        // alone, last, from position 0.
        let pos = if ends_file {
            0
        } else {
            at.saturating_sub(self.py_chunk_start(raw, line, at))
        };
        self.utf8_error = Some(utf8_message(&bytes, &err, pos));
        self.utf8_error_line = line_no + count_cr(&line[..start]);
    }

    /// The line as text, lossily where it is not UTF-8. A line validated
    /// here only (`read_as` given: no piece of a split line, whose bytes were
    /// looked at already) records an invalid one as the bytes read.
    fn text_of(&mut self, bytes: Vec<u8>, read_as: Option<&Raw>) -> String {
        match String::from_utf8(bytes) {
            Ok(s) => s,
            Err(e) => {
                if let Some(raw) = read_as {
                    self.note_utf8_error(raw, e.as_bytes(), self.line_no);
                }
                // The file is refused for it: no need for the text (a lossy
                // copy of a huge line would double what the refusal costs).
                if self.utf8_error.is_some() {
                    return String::new();
                }
                String::from_utf8_lossy(e.as_bytes()).into_owned()
            }
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn all(bytes: &[u8]) -> Vec<String> {
        let mut l = Lines::new(std::io::BufReader::with_capacity(3, bytes));
        let mut out = vec![];
        while let Some(s) = l.next_line().unwrap() {
            out.push(s);
        }
        out
    }

    #[test]
    fn universal_newlines() {
        assert_eq!(all(b"a\nb\r\nc\rd"), vec!["a", "b", "c", "d"]);
        assert_eq!(all(b"a\r\n\r\nb\n"), vec!["a", "", "b"]);
        assert_eq!(all(b"x\r"), vec!["x"]);
    }

    #[test]
    fn utf8_error_message_matches_python() {
        let mut l = Lines::new(&b"{\xff}\n"[..]);
        l.next_line().unwrap();
        assert_eq!(
            l.utf8_error.as_deref(),
            Some("'utf-8' codec can't decode byte 0xff in position 1: invalid start byte")
        );
    }

    /// Every line of `bytes` (read a few bytes at a time) and the first
    /// UTF-8 error message.
    fn lossy(bytes: &[u8], capacity: usize) -> (Vec<String>, Option<String>) {
        let mut l = Lines::new(std::io::BufReader::with_capacity(capacity, bytes));
        let mut out = vec![];
        while let Some(s) = l.next_line().unwrap() {
            out.push(s);
        }
        (out, l.utf8_error)
    }

    /// The messages are CPython 3.11's, from iterating the bytes' lines
    /// through `io.TextIOWrapper`; the lines are what is read up to the
    /// error (the file is refused for it; a bad line's text is not kept).
    #[test]
    fn utf8_errors_name_the_file_position_of_the_first_one() {
        let cases: [(&[u8], &[&str], &str, u64); 4] = [
            // A sequence cut by the line's end is a bad continuation (Python
            // sees the newline after it), of the bytes it took.
            (
                b"ok\n{\xe2\x82}\n{\xe2\x82\n",
                &["ok", "", ""],
                "bytes in position 4-5: invalid continuation byte",
                2,
            ),
            // Cut by the file's end: Python decodes the carried bytes last,
            // alone, from position 0.
            (
                b"ab\r\n\xe2\x82",
                &["ab", ""],
                "bytes in position 0-1: unexpected end of data",
                2,
            ),
            // Only the first error is kept; lone carriage returns end lines too.
            (
                b"a\rb\xffc\rd\n\x80\n",
                &["a", "", "d", ""],
                "byte 0xff in position 3: invalid start byte",
                2,
            ),
            (
                b"x\r\n\xc3\xa9\xc3\r\n",
                &["x", ""],
                "byte 0xc3 in position 5: invalid continuation byte",
                2,
            ),
        ];
        for capacity in [2, 3, 64] {
            for (bytes, lines, message, line) in cases {
                let mut l = Lines::new(std::io::BufReader::with_capacity(capacity, bytes));
                let mut out = vec![];
                while let Some(s) = l.next_line().unwrap() {
                    out.push(s);
                }
                assert_eq!(out, lines, "{bytes:?}");
                let want = format!("'utf-8' codec can't decode {message}");
                assert_eq!(l.utf8_error.as_deref(), Some(want.as_str()), "{bytes:?}");
                assert_eq!(l.utf8_error_line, line, "{bytes:?}");
            }
            let (_, err) = lossy("é\r\nü\n".as_bytes(), capacity);
            assert_eq!(err, None);
        }
        // Past Python's first 8 KB chunk the position counts from the chunk.
        let mut big = b"{\"a\": 1}\n".repeat(1000);
        big.extend_from_slice(b"\xe2\x82\xac\xff\n");
        let (_, err) = lossy(&big, 4096);
        assert_eq!(
            err.as_deref(),
            Some("'utf-8' codec can't decode byte 0xff in position 811: invalid start byte")
        );
    }

    #[test]
    fn digest_covers_every_byte_read_and_can_be_skipped() {
        let text = b"a\r\nb\rc\n";
        for digest in [true, false] {
            let mut l = Lines::hashing(std::io::BufReader::with_capacity(2, &text[..]), digest);
            let mut n = 0;
            while l.next_line().unwrap().is_some() {
                n += 1;
            }
            assert_eq!((n, l.bytes_read), (3, text.len() as u64));
            let want = digest.then(|| crate::util::sha256_bytes(text));
            assert_eq!(l.sha256_hex(), want);
        }
    }
}
