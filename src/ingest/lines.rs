//! Reading a JSONL file the way the reference does (Python text mode): UTF-8,
//! universal newlines (`\n`, `\r\n` and a lone `\r` all end a line), 1-based
//! physical line numbers, streamed so a 650 MB file never sits in memory.
use std::io::BufRead;

use sha2::{Digest, Sha256};

/// Python's message for invalid UTF-8 at byte `pos` of the file.
pub fn utf8_message(bytes: &[u8], err: &std::str::Utf8Error, offset: u64) -> String {
    let pos = offset + err.valid_up_to() as u64;
    let byte = bytes.get(err.valid_up_to()).copied().unwrap_or(0);
    let reason = match err.error_len() {
        None => "unexpected end of data",
        Some(_) if (0x80..0xc0).contains(&byte) || byte >= 0xf5 || byte == 0xc0 || byte == 0xc1 => {
            "invalid start byte"
        }
        Some(_) => "invalid continuation byte",
    };
    format!("'utf-8' codec can't decode byte 0x{byte:02x} in position {pos}: {reason}")
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
            // The next line is likely as long as this one: one allocation each.
            let mut chunk = std::mem::replace(&mut self.buf, Vec::with_capacity(n + n / 4 + 16));
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
            self.note_utf8_error(&raw, &chunk);
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

    /// Records the first invalid UTF-8 of the file, with Python's message:
    /// it is found in the bytes as read (the line's terminators included,
    /// since they decide between a bad continuation and an unexpected end).
    fn note_utf8_error(&mut self, raw: &Raw, line: &[u8]) {
        if self.utf8_error.is_some() {
            return;
        }
        let mut read = Vec::with_capacity(line.len() + 3);
        if raw.skip_lf {
            read.push(b'\n');
        }
        read.extend_from_slice(line);
        read.extend_from_slice(raw.end);
        if let Err(e) = std::str::from_utf8(&read) {
            self.utf8_error = Some(utf8_message(&read, &e, raw.offset));
        }
    }

    /// The line as text, lossily where it is not UTF-8. A line validated
    /// here only (`read_as` given: no piece of a split line, whose bytes were
    /// looked at already) records an invalid one as the bytes read.
    fn text_of(&mut self, bytes: Vec<u8>, read_as: Option<&Raw>) -> String {
        match String::from_utf8(bytes) {
            Ok(s) => s,
            Err(e) => {
                if let Some(raw) = read_as {
                    self.note_utf8_error(raw, e.as_bytes());
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

    #[test]
    fn utf8_errors_name_the_file_position_of_the_first_one() {
        let msg = |pos: u32, byte: &str, reason: &str| {
            Some(format!(
                "'utf-8' codec can't decode byte 0x{byte} in position {pos}: {reason}"
            ))
        };
        for capacity in [2, 3, 64] {
            // A sequence cut by the line's end is a bad continuation (Python
            // sees the newline after it); cut by the file's end, an unexpected end.
            let (lines, err) = lossy(b"ok\n{\xe2\x82}\n{\xe2\x82\n", capacity);
            assert_eq!(lines, ["ok", "{\u{fffd}}", "{\u{fffd}"]);
            assert_eq!(err, msg(4, "e2", "invalid continuation byte"));
            let (lines, err) = lossy(b"ab\r\n\xe2\x82", capacity);
            assert_eq!(lines, ["ab", "\u{fffd}"]);
            assert_eq!(err, msg(4, "e2", "unexpected end of data"));
            // Only the first error is kept; lone carriage returns end lines too.
            let (lines, err) = lossy(b"a\rb\xffc\rd\n\x80\n", capacity);
            assert_eq!(lines, ["a", "b\u{fffd}c", "d", "\u{fffd}"]);
            assert_eq!(err, msg(3, "ff", "invalid start byte"));
            let (lines, err) = lossy(b"x\r\n\xc3\xa9\xc3\r\n", capacity);
            assert_eq!(lines, ["x", "\u{e9}\u{fffd}"]);
            assert_eq!(err, msg(5, "c3", "invalid continuation byte"));
            let (_, err) = lossy("é\r\nü\n".as_bytes(), capacity);
            assert_eq!(err, None);
        }
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
