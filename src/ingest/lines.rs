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
                return Ok(Some(self.to_text(piece)));
            }
            self.buf.clear();
            let n = self.inner.read_until(b'\n', &mut self.buf)?;
            if n == 0 {
                return Ok(None);
            }
            let offset = self.bytes_read;
            if let Some(h) = &mut self.hasher {
                h.update(&self.buf);
            }
            self.bytes_read += n as u64;
            if self.utf8_error.is_none() {
                if let Err(e) = std::str::from_utf8(&self.buf) {
                    self.utf8_error = Some(utf8_message(&self.buf, &e, offset));
                }
            }
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
            if chunk.last() == Some(&b'\n') {
                chunk.pop();
                if chunk.last() == Some(&b'\r') {
                    chunk.pop();
                }
            }
            if !chunk.contains(&b'\r') {
                self.line_no += 1;
                let text = self.to_text(chunk);
                return Ok(Some(text));
            }
            // Lone carriage returns end lines too.
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

    fn to_text(&self, bytes: Vec<u8>) -> String {
        match String::from_utf8(bytes) {
            Ok(s) => s,
            Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
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
