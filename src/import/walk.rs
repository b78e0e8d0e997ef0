//! A streaming walk over one JSON document, for the single-document result
//! files of other tools (GuideLLM's `benchmarks.json`, inference-perf's
//! `per_request_lifecycle_metrics.json`) that grow to gigabytes.
//!
//! The walker never builds a tree of the document: the caller steps through
//! the containers it cares about (`object` keys, `array` elements) and takes
//! each element it wants as its raw bytes (`capture`), which a typed serde
//! parse then reads. Memory is one buffer plus the largest captured element.
//! Every error names the byte offset and line where the walk stopped, so a cut
//! file says where it ends.

use std::io::Read;

/// Why a walk stopped.
#[derive(Debug, Clone, PartialEq)]
pub struct WalkError {
    /// 1-based line of the byte where the walk stopped.
    pub line: u64,
    /// 0-based byte offset of that byte.
    pub offset: u64,
    pub message: String,
}

impl std::fmt::Display for WalkError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "line {} (byte {}): {}",
            self.line, self.offset, self.message
        )
    }
}

const CHUNK: usize = 1 << 20;

/// What [`Walker::capture_pruned`] does with an object's member.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Prune {
    Keep,
    Skip,
    Walk,
}

/// Where the string that goes on at `b[0]` ends: the index of its closing
/// quote, or None when `b` ends first (`escaped` then says whether the next
/// byte follows a backslash; on entry, whether `b[0]` does). Texts with many
/// escapes (inference-perf's request and response bodies hold `\"` every
/// few bytes) are scanned 64 bytes at a time: a mask of the quotes and one
/// of the backslashes, and the bytes that an odd run of backslashes escapes
/// found with simdjson's carry trick, without a stop at each escape.
fn string_end(b: &[u8], escaped: &mut bool) -> Option<usize> {
    const EVEN: u64 = 0x5555_5555_5555_5555;
    let mut carry = u64::from(*escaped);
    let mut blocks = b.chunks_exact(64);
    let mut at = 0;
    for block in &mut blocks {
        let (quotes, backslashes) = masks(block);
        if backslashes == 0 && carry == 0 {
            if quotes != 0 {
                return Some(at + quotes.trailing_zeros() as usize);
            }
        } else {
            // The bytes escaped by a backslash (simdjson's
            // find_escaped_branchless): a run of backslashes escapes every
            // other byte after its start, and the byte after an odd run.
            let bs = backslashes & !carry;
            let follows = (bs << 1) | carry;
            let odd_starts = bs & !EVEN & !follows;
            let (even_starts, overflow) = odd_starts.overflowing_add(bs);
            carry = u64::from(overflow);
            let escaped_bytes = (EVEN ^ (even_starts << 1)) & follows;
            let real = quotes & !escaped_bytes;
            if real != 0 {
                return Some(at + real.trailing_zeros() as usize);
            }
        }
        at += 64;
    }
    let mut e = carry != 0;
    for (k, &c) in blocks.remainder().iter().enumerate() {
        if e {
            e = false;
        } else if c == b'\\' {
            e = true;
        } else if c == b'"' {
            return Some(at + k);
        }
    }
    *escaped = e;
    None
}

/// Bit k of each: whether byte k of the 64 is a quote, a backslash.
#[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
#[allow(unsafe_code)]
fn masks(block: &[u8]) -> (u64, u64) {
    use std::arch::x86_64::{
        __m128i, _mm_cmpeq_epi8, _mm_loadu_si128, _mm_movemask_epi8, _mm_set1_epi8,
    };
    let (mut q, mut b) = (0u64, 0u64);
    // SAFETY: SSE2 is enabled (the cfg), so its intrinsics are sound to
    // call; each load reads 16 bytes of `part`, which has 16, with no
    // alignment requirement.
    unsafe {
        let (quote, backslash) = (_mm_set1_epi8(b'"' as i8), _mm_set1_epi8(b'\\' as i8));
        for (k, part) in block.chunks_exact(16).take(4).enumerate() {
            let v = _mm_loadu_si128(part.as_ptr().cast::<__m128i>());
            let shift = 16 * k as u32;
            q |= u64::from(_mm_movemask_epi8(_mm_cmpeq_epi8(v, quote)) as u16) << shift;
            b |= u64::from(_mm_movemask_epi8(_mm_cmpeq_epi8(v, backslash)) as u16) << shift;
        }
    }
    (q, b)
}

/// Bit k of each: whether byte k of the 64 is a quote, a backslash.
#[cfg(not(all(target_arch = "x86_64", target_feature = "sse2")))]
fn masks(block: &[u8]) -> (u64, u64) {
    let (mut q, mut b) = (0u64, 0u64);
    for (k, &c) in block.iter().take(64).enumerate() {
        q |= u64::from(c == b'"') << k;
        b |= u64::from(c == b'\\') << k;
    }
    (q, b)
}

/// A pull walker over a reader.
pub struct Walker<R: Read> {
    reader: R,
    /// The input read, `buf[..end]`; the rest is room for the next read
    /// (zeroed once, when the buffer grows, not at every read).
    buf: Vec<u8>,
    end: usize,
    pos: usize,
    /// Bytes of the input before `buf[0]`.
    base: u64,
    /// Newlines before `buf[0]`, and in `buf[..counted]`.
    lines: u64,
    counted: usize,
    eof: bool,
    io_error: Option<String>,
}

impl<R: Read> Walker<R> {
    pub fn new(reader: R) -> Self {
        Walker {
            reader,
            buf: Vec::new(),
            end: 0,
            pos: 0,
            base: 0,
            lines: 0,
            counted: 0,
            eof: false,
            io_error: None,
        }
    }

    /// Reads more input, keeping `buf[keep..]`; false at the end.
    fn fill(&mut self, keep: usize) -> bool {
        if self.eof {
            return false;
        }
        let keep = keep.min(self.pos);
        if keep > 0 {
            self.count_lines(keep);
            self.buf.copy_within(keep..self.end, 0);
            self.end -= keep;
            self.base += keep as u64;
            self.pos -= keep;
            self.counted -= keep;
        }
        // Room for a chunk; the buffer only grows (to the largest value
        // kept plus a chunk), so its bytes are zeroed once, not per read.
        if self.buf.len() < self.end + CHUNK {
            self.buf.resize(self.end + CHUNK, 0);
        }
        loop {
            match self.reader.read(&mut self.buf[self.end..]) {
                Ok(0) => {
                    self.eof = true;
                    return false;
                }
                Ok(n) => {
                    self.end += n;
                    return true;
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    self.io_error = Some(e.to_string());
                    self.eof = true;
                    return false;
                }
            }
        }
    }

    fn count_lines(&mut self, upto: usize) {
        if upto > self.counted {
            self.lines += memchr::memchr_iter(b'\n', &self.buf[self.counted..upto]).count() as u64;
            self.counted = upto;
        }
    }

    /// An error at the current position.
    pub fn error(&mut self, message: impl Into<String>) -> WalkError {
        let pos = self.pos.min(self.end);
        self.count_lines(pos);
        let mut message = message.into();
        if let Some(io) = &self.io_error {
            message = format!("{message} (read error: {io})");
        }
        WalkError {
            line: self.lines + 1,
            offset: self.base + pos as u64,
            message,
        }
    }

    fn truncated(&mut self, what: &str) -> WalkError {
        self.error(format!(
            "the file ends inside {what}: it is cut short (an interrupted write or copy?)"
        ))
    }

    /// The next byte that is not whitespace, without consuming it.
    pub fn peek(&mut self) -> Option<u8> {
        loop {
            while self.pos < self.end {
                let b = self.buf[self.pos];
                if matches!(b, b' ' | b'\n' | b'\r' | b'\t') {
                    self.pos += 1;
                } else {
                    return Some(b);
                }
            }
            let keep = self.pos;
            if !self.fill(keep) {
                return None;
            }
        }
    }

    fn expect(&mut self, want: u8, what: &str) -> Result<(), WalkError> {
        match self.peek() {
            Some(b) if b == want => {
                self.pos += 1;
                Ok(())
            }
            Some(b) => Err(self.error(format!(
                "expected {what}, found `{}`",
                char::from(b).escape_default()
            ))),
            None => Err(self.truncated(what)),
        }
    }

    /// Whether the document is done (only whitespace remains).
    pub fn at_end(&mut self) -> bool {
        self.peek().is_none()
    }

    /// Enters an object: `{`.
    pub fn begin_object(&mut self) -> Result<(), WalkError> {
        self.expect(b'{', "an object (`{`)")
    }

    /// Enters an array: `[`.
    pub fn begin_array(&mut self) -> Result<(), WalkError> {
        self.expect(b'[', "an array (`[`)")
    }

    /// The next key of the object being walked, or None at its end. `first`
    /// is true for the first call after [`Walker::begin_object`].
    pub fn next_key(&mut self, first: bool) -> Result<Option<String>, WalkError> {
        match self.peek() {
            Some(b'}') => {
                self.pos += 1;
                return Ok(None);
            }
            None => return Err(self.truncated("an object")),
            _ => {}
        }
        if !first {
            self.expect(b',', "`,` or `}` after an object member")?;
        }
        if self.peek() != Some(b'"') {
            return Err(match self.peek() {
                None => self.truncated("an object"),
                Some(_) => self.error("expected a string key"),
            });
        }
        let start = self.scan_value()?;
        let raw = &self.buf[start..self.pos];
        // A plain key (no escapes, no control bytes) is its bytes; any other
        // goes through serde, which also names what is wrong with it.
        let inner = raw.get(1..raw.len().saturating_sub(1)).unwrap_or_default();
        let plain = raw.len() >= 2 && inner.iter().all(|&b| b >= 0x20 && b != b'\\');
        let key = match std::str::from_utf8(inner) {
            Ok(k) if plain => k.to_owned(),
            _ => {
                let raw = raw.to_vec();
                serde_json::from_slice(&raw)
                    .map_err(|e| self.error(format!("invalid object key: {e}")))?
            }
        };
        self.expect(b':', "`:` after an object key")?;
        Ok(Some(key))
    }

    /// Whether the array being walked has another element (consuming the
    /// `,` before it, or the closing `]`).
    pub fn next_element(&mut self, first: bool) -> Result<bool, WalkError> {
        // The common case, a `,` right here and the next element's first
        // byte in the buffer after blanks: what the general path below
        // decides, without its three peeks (a 100,000-element array
        // steps here 100,000 times).
        if !first && self.buf[..self.end].get(self.pos) == Some(&b',') {
            let mut j = self.pos + 1;
            while j < self.end && matches!(self.buf[j], b' ' | b'\n' | b'\r' | b'\t') {
                j += 1;
            }
            if j < self.end {
                self.pos = j;
                return Ok(true);
            }
        }
        match self.peek() {
            Some(b']') => {
                self.pos += 1;
                Ok(false)
            }
            None => Err(self.truncated("an array")),
            _ if first => Ok(true),
            _ => {
                self.expect(b',', "`,` or `]` after an array element")?;
                if self.peek().is_none() {
                    return Err(self.truncated("an array"));
                }
                Ok(true)
            }
        }
    }

    /// Whether the next value is `null` (consumed if so).
    pub fn null(&mut self) -> Result<bool, WalkError> {
        if self.peek() == Some(b'n') {
            let raw = self.capture()?;
            if raw == b"null" {
                return Ok(true);
            }
            return Err(self.error("invalid literal"));
        }
        Ok(false)
    }

    /// Skips the next value.
    pub fn skip(&mut self) -> Result<(), WalkError> {
        self.value(false).map(|_| ())
    }

    /// The next value's raw bytes (syntax checked for nesting and strings;
    /// the caller's parse checks the rest).
    pub fn capture(&mut self) -> Result<Vec<u8>, WalkError> {
        self.value(true)
    }

    /// The next value's bytes with only the members `plan` keeps: for an
    /// object, each member is kept whole ([`Prune::Keep`]), left out
    /// ([`Prune::Skip`], scanned by the walker only) or, when it is an
    /// object itself, pruned the same way one level down ([`Prune::Walk`]).
    /// Any other value is captured whole. `path` names the enclosing keys.
    /// The result is JSON text for a typed parse that reads only what it
    /// needs: the large texts a record carries never reach the parser.
    pub fn capture_pruned(
        &mut self,
        plan: &dyn Fn(&[&str], &str) -> Prune,
    ) -> Result<Vec<u8>, WalkError> {
        let mut out = Vec::with_capacity(512);
        self.pruned_into(plan, &[], &mut out)?;
        Ok(out)
    }

    fn pruned_into(
        &mut self,
        plan: &dyn Fn(&[&str], &str) -> Prune,
        path: &[&str],
        out: &mut Vec<u8>,
    ) -> Result<(), WalkError> {
        if self.peek() != Some(b'{') {
            out.extend_from_slice(self.value_bytes()?);
            return Ok(());
        }
        self.begin_object()?;
        out.push(b'{');
        let mut first = true;
        let mut wrote = false;
        while let Some(key) = self.next_key(first)? {
            first = false;
            let how = plan(path, &key);
            if how == Prune::Skip {
                self.skip()?;
                continue;
            }
            if wrote {
                out.push(b',');
            }
            wrote = true;
            // The key as JSON (escapes written back).
            if key.bytes().all(|b| b >= 0x20 && b != b'"' && b != b'\\') {
                out.push(b'"');
                out.extend_from_slice(key.as_bytes());
                out.push(b'"');
            } else {
                out.extend_from_slice(
                    serde_json::to_string(&key)
                        .unwrap_or_else(|_| "\"\"".into())
                        .as_bytes(),
                );
            }
            out.push(b':');
            match how {
                Prune::Walk if path.len() < 8 => {
                    let mut inner = path.to_vec();
                    inner.push(&key);
                    self.pruned_into(plan, &inner, out)?;
                }
                _ => out.extend_from_slice(self.value_bytes()?),
            }
        }
        out.push(b'}');
        Ok(())
    }

    /// Scans the next value, keeping its bytes contiguous in the buffer
    /// (a refill keeps them, so the buffer grows to the largest value):
    /// where it starts in the buffer.
    fn scan_value(&mut self) -> Result<usize, WalkError> {
        self.scan(true)
    }

    /// [`Walker::scan_value`], or with `hold` false a scan that keeps
    /// nothing of the value (a refill drops what was scanned; the start
    /// returned is then meaningless): a skipped value, however large
    /// (vLLM's `generated_texts`, tens of MB), leaves the buffer at its
    /// size instead of growing it by copies to hold the whole value.
    fn scan(&mut self, hold: bool) -> Result<usize, WalkError> {
        let Some(first) = self.peek() else {
            return Err(self.truncated("a value"));
        };
        let mut start = self.pos;
        // Reads more input keeping the value's bytes; false at the end.
        macro_rules! refill {
            () => {{
                if !hold {
                    start = self.pos;
                }
                // `fill` drops the bytes before the value (unless at the end).
                let dropped = if self.eof { 0 } else { start.min(self.pos) };
                let more = self.fill(start);
                start -= dropped;
                more
            }};
        }
        match first {
            b'{' | b'[' => {
                let mut depth: usize = 0;
                let mut in_string = false;
                let mut escaped = false;
                loop {
                    if self.pos >= self.end {
                        if !refill!() {
                            return Err(self.truncated(if in_string {
                                "a string"
                            } else {
                                "a value"
                            }));
                        }
                        continue;
                    }
                    if in_string {
                        // Strings are most of a request's bytes.
                        match string_end(&self.buf[self.pos..self.end], &mut escaped) {
                            Some(i) => {
                                self.pos += i + 1;
                                in_string = false;
                            }
                            None => self.pos = self.end,
                        }
                        continue;
                    }
                    // Between strings (numbers, commas, blanks), straight to
                    // the next byte that opens or closes something.
                    let rest = &self.buf[self.pos..self.end];
                    match rest
                        .iter()
                        .position(|&c| matches!(c, b'"' | b'{' | b'[' | b'}' | b']'))
                    {
                        Some(i) => self.pos += i,
                        None => {
                            self.pos = self.end;
                            continue;
                        }
                    }
                    let b = self.buf[self.pos];
                    self.pos += 1;
                    match b {
                        b'"' => in_string = true,
                        b'{' | b'[' => depth += 1,
                        b'}' | b']' => {
                            depth -= 1;
                            if depth == 0 {
                                break;
                            }
                        }
                        _ => {}
                    }
                }
            }
            b'"' => {
                self.pos += 1;
                let mut escaped = false;
                loop {
                    if self.pos >= self.end {
                        if !refill!() {
                            return Err(self.truncated("a string"));
                        }
                        continue;
                    }
                    match string_end(&self.buf[self.pos..self.end], &mut escaped) {
                        Some(i) => {
                            self.pos += i + 1;
                            break;
                        }
                        None => self.pos = self.end,
                    }
                }
            }
            _ => loop {
                if self.pos >= self.end {
                    if !refill!() {
                        // A scalar may end the document.
                        break;
                    }
                    continue;
                }
                let b = self.buf[self.pos];
                if matches!(b, b',' | b'}' | b']' | b' ' | b'\n' | b'\r' | b'\t') {
                    break;
                }
                self.pos += 1;
            },
        }
        Ok(start)
    }

    fn value(&mut self, keep: bool) -> Result<Vec<u8>, WalkError> {
        let start = self.scan(keep)?;
        Ok(if keep {
            self.buf[start..self.pos].to_vec()
        } else {
            Vec::new()
        })
    }

    /// The next value read directly from the buffer by `read`, which is
    /// given the bytes from the value on and returns it with the number of
    /// bytes it took. Taken only when the value ends before the buffer does
    /// (a byte follows it there), so a value cut by a refill or by the end
    /// of the file is never read short; None (nothing consumed) when `read`
    /// declines, for the caller's general path.
    pub fn try_take<T>(&mut self, read: impl FnOnce(&[u8]) -> Option<(T, usize)>) -> Option<T> {
        self.peek()?;
        let rest = &self.buf[self.pos..self.end];
        let (v, n) = read(rest)?;
        if n == 0 || n >= rest.len() {
            return None;
        }
        self.pos += n;
        Some(v)
    }

    /// The lists from the element the walk is at on (`[0.1, 2e-3], [],
    /// [5]`) that the buffer holds whole, borrowed from it, for a caller
    /// that reads many at once; nothing is consumed ([`Walker::consume`]
    /// goes on after those the caller read). Each list runs from its `[` to
    /// the first `]`, `"` or `[` after it, and is taken only when that is a
    /// `]` and the buffer also holds the `,` or `]` after it (blanks
    /// between): the run stops before any other value, and before a list a
    /// refill or the end of the file cuts. A list whose bytes the caller
    /// reads as a list of numbers ends exactly where [`Walker::value_bytes`]
    /// would end it; any other, the caller leaves to the general path.
    /// Empty when the element is no such list. `spans` is set to each
    /// list's bytes in what is returned, from its `[` to past its `]`
    /// (found here already: the caller need not search again).
    pub fn lists_ahead(&mut self, spans: &mut Vec<(usize, usize)>) -> &[u8] {
        spans.clear();
        if self.peek().is_none() {
            return &[];
        }
        let b = &self.buf[..self.end];
        let start = self.pos;
        let mut taken = start;
        let mut i = start;
        while b.get(i) == Some(&b'[') {
            match memchr::memchr3(b']', b'"', b'[', &b[i + 1..]) {
                Some(k) if b[i + 1 + k] == b']' => {
                    let close = i + 1 + k;
                    let mut j = close + 1;
                    while matches!(b.get(j), Some(b' ' | b'\n' | b'\r' | b'\t')) {
                        j += 1;
                    }
                    match b.get(j) {
                        Some(b']') => {
                            taken = close + 1;
                            spans.push((i - start, taken - start));
                            break;
                        }
                        Some(b',') => {
                            taken = close + 1;
                            spans.push((i - start, taken - start));
                            j += 1;
                            while matches!(b.get(j), Some(b' ' | b'\n' | b'\r' | b'\t')) {
                                j += 1;
                            }
                            i = j;
                        }
                        _ => break,
                    }
                }
                _ => break,
            }
        }
        &self.buf[start..taken]
    }

    /// Steps over `n` bytes of what [`Walker::lists_ahead`] gave (whole
    /// lists, read by the caller); the walk goes on at the separator after.
    pub fn consume(&mut self, n: usize) {
        self.pos = (self.pos + n).min(self.end);
    }

    /// The next value's bytes, borrowed from the buffer (valid until the
    /// walk goes on): no copy, for a typed parse of each element of a long
    /// array.
    pub fn value_bytes(&mut self) -> Result<&[u8], WalkError> {
        let start = self.scan_value()?;
        Ok(&self.buf[start..self.pos])
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn walks_keys_elements_and_captures() {
        let doc = br#" {"a": [1, {"x": "y\"]"}, null], "b": "s", "c": 2.5} "#;
        let mut w = Walker::new(&doc[..]);
        w.begin_object().unwrap();
        assert_eq!(w.next_key(true).unwrap().as_deref(), Some("a"));
        w.begin_array().unwrap();
        assert!(w.next_element(true).unwrap());
        assert_eq!(w.capture().unwrap(), b"1");
        assert!(w.next_element(false).unwrap());
        assert_eq!(w.capture().unwrap(), br#"{"x": "y\"]"}"#);
        assert!(w.next_element(false).unwrap());
        assert!(w.null().unwrap());
        assert!(!w.next_element(false).unwrap());
        assert_eq!(w.next_key(false).unwrap().as_deref(), Some("b"));
        w.skip().unwrap();
        assert_eq!(w.next_key(false).unwrap().as_deref(), Some("c"));
        assert_eq!(w.capture().unwrap(), b"2.5");
        assert_eq!(w.next_key(false).unwrap(), None);
        assert!(w.at_end());
    }

    #[test]
    fn pruned_captures_keep_only_what_the_plan_keeps() {
        let doc =
            br#"[{"a": 1, "big": "x\"y", "in": {"k": [1, 2], "drop": {"z": 1}}, "s\"q": null}, 7]"#;
        let mut w = Walker::new(&doc[..]);
        let plan = |path: &[&str], key: &str| match (path, key) {
            ([], "big") | (["in"], "drop") => Prune::Skip,
            ([], "in") => Prune::Walk,
            _ => Prune::Keep,
        };
        w.begin_array().unwrap();
        assert!(w.next_element(true).unwrap());
        let got = w.capture_pruned(&plan).unwrap();
        let v: serde_json::Value = serde_json::from_slice(&got).unwrap();
        assert_eq!(
            v,
            serde_json::json!({"a": 1, "in": {"k": [1, 2]}, "s\"q": null})
        );
        assert!(w.next_element(false).unwrap());
        assert_eq!(w.capture_pruned(&plan).unwrap(), b"7");
        assert!(!w.next_element(false).unwrap());
    }

    #[test]
    fn a_cut_document_names_where_it_ends() {
        let doc = b"[\n{\"a\": 1},\n{\"a\": [1, 2";
        let mut w = Walker::new(&doc[..]);
        w.begin_array().unwrap();
        assert!(w.next_element(true).unwrap());
        w.capture().unwrap();
        assert!(w.next_element(false).unwrap());
        let e = w.capture().unwrap_err();
        assert_eq!(e.line, 3);
        assert!(e.message.contains("cut short"), "{e}");
    }

    #[test]
    fn values_spanning_refills_are_whole() {
        // Larger than one buffer, so the capture crosses refills.
        let big = format!("[\"{}\", 123]", "z".repeat(3 * CHUNK + 7));
        let mut w = Walker::new(big.as_bytes());
        w.begin_array().unwrap();
        assert!(w.next_element(true).unwrap());
        assert_eq!(w.capture().unwrap().len(), 3 * CHUNK + 9);
        assert!(w.next_element(false).unwrap());
        assert_eq!(w.capture().unwrap(), b"123");
        assert!(!w.next_element(false).unwrap());
    }

    /// A skipped value keeps nothing: the buffer stays a chunk or two
    /// however large the value, and what follows (and where an error is)
    /// reads as before.
    #[test]
    fn skipped_values_do_not_grow_the_buffer() {
        let one = format!("a\\\\\\\"{}", "z".repeat(CHUNK / 3));
        let texts = vec![one.clone(); 12].join("\",\n\"");
        let long = one.repeat(12);
        let big = format!("[[\"{texts}\"], {{\"k\": [\"{texts}\"]}}, \"{long}\", 123,\n x]");
        let mut w = Walker::new(big.as_bytes());
        w.begin_array().unwrap();
        for first in [true, false, false] {
            assert!(w.next_element(first).unwrap());
            w.skip().unwrap();
            assert!(w.buf.len() <= 2 * CHUNK, "{}", w.buf.len());
        }
        assert!(w.next_element(false).unwrap());
        let got = w.capture().unwrap();
        assert!(
            got == b"123",
            "{:?}",
            String::from_utf8_lossy(&got[..got.len().min(20)])
        );
        assert!(w.next_element(false).unwrap());
        let e = w.error("here");
        assert_eq!(
            (e.line, e.offset as usize),
            (1 + 2 * 11 + 1, big.len() - 2),
            "{e}"
        );
    }

    /// The 64-byte scan finds the closing quote the byte-at-a-time scan
    /// finds, whatever the runs of backslashes and wherever blocks split.
    #[test]
    fn string_end_matches_the_plain_scan() {
        fn plain(b: &[u8], escaped: &mut bool) -> Option<usize> {
            for (i, &c) in b.iter().enumerate() {
                if *escaped {
                    *escaped = false;
                } else if c == b'\\' {
                    *escaped = true;
                } else if c == b'"' {
                    return Some(i);
                }
            }
            None
        }
        let mut next = crate::import::xorshift(0x2545_f491_4f6c_dd1du64);
        for round in 0..20_000 {
            let len = (next() % 300) as usize;
            let quote_every = 2 + next() % 60;
            let b: Vec<u8> = (0..len)
                .map(|_| match next() % quote_every {
                    0 => b'"',
                    1 | 2 => b'\\',
                    _ => b'a' + (next() % 3) as u8,
                })
                .collect();
            let start_escaped = round % 3 == 0;
            let (mut e1, mut e2) = (start_escaped, start_escaped);
            let got = string_end(&b, &mut e1);
            let want = plain(&b, &mut e2);
            assert_eq!(
                got,
                want,
                "{:?} {start_escaped}",
                String::from_utf8_lossy(&b)
            );
            if want.is_none() {
                assert_eq!(e1, e2, "{:?}", String::from_utf8_lossy(&b));
            }
        }
    }

    /// Strings with escapes, split across refills at every place.
    #[test]
    fn escaped_strings_across_refills() {
        let text = format!(
            "[{{\"k\\\"ey\": \"{}\\\\\", \"b\": 1}}, \"{}\"]",
            "x\\\"y\\\\".repeat(CHUNK / 5),
            "\\\\\\\"z".repeat(CHUNK / 4)
        );
        let v: serde_json::Value = serde_json::from_str(&text).unwrap();
        let mut w = Walker::new(text.as_bytes());
        w.begin_array().unwrap();
        assert!(w.next_element(true).unwrap());
        let a: serde_json::Value = serde_json::from_slice(&w.capture().unwrap()).unwrap();
        assert_eq!(a, v[0]);
        assert!(w.next_element(false).unwrap());
        let b: serde_json::Value = serde_json::from_slice(&w.capture().unwrap()).unwrap();
        assert_eq!(b, v[1]);
        assert!(!w.next_element(false).unwrap());
        assert!(w.at_end());
    }

    #[test]
    fn lists_ahead_stops_before_anything_else() {
        let doc = br#"[[1, 2], [ ],[3e-1] , ["x"], [4]]"#;
        let mut w = Walker::new(&doc[..]);
        w.begin_array().unwrap();
        assert!(w.next_element(true).unwrap());
        let mut spans = Vec::new();
        let run = w.lists_ahead(&mut spans).to_vec();
        assert_eq!(run, br#"[1, 2], [ ],[3e-1]"#);
        assert_eq!(spans, [(0, 6), (8, 11), (12, 18)]);
        // Nothing consumed until the caller says.
        assert_eq!(w.lists_ahead(&mut spans), &run[..]);
        assert_eq!(spans.len(), 3);
        w.consume(run.len());
        assert!(w.next_element(false).unwrap());
        assert_eq!(w.lists_ahead(&mut spans), b"");
        assert!(spans.is_empty());
        assert_eq!(w.capture().unwrap(), br#"["x"]"#);
        assert!(w.next_element(false).unwrap());
        assert_eq!(w.lists_ahead(&mut spans), b"[4]");
        assert_eq!(spans, [(0, 3)]);
        w.consume(3);
        assert!(!w.next_element(false).unwrap());
        // A list the buffer does not hold with what follows it: left.
        for cut in [
            &b"[[1, 2]"[..],
            b"[[1, 2] ",
            b"[[1, 2",
            b"[[1, [2]]]",
            b"[[1]x]",
        ] {
            let mut w = Walker::new(cut);
            w.begin_array().unwrap();
            assert!(w.next_element(true).unwrap());
            let mut spans = vec![(0, 0)];
            assert_eq!(
                w.lists_ahead(&mut spans),
                b"",
                "{}",
                String::from_utf8_lossy(cut)
            );
            assert!(spans.is_empty());
        }
    }
}
