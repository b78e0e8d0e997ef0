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

/// A pull walker over a reader.
pub struct Walker<R: Read> {
    reader: R,
    buf: Vec<u8>,
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
            buf: Vec::with_capacity(CHUNK),
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
            self.buf.drain(..keep);
            self.base += keep as u64;
            self.pos -= keep;
            self.counted -= keep;
        }
        let old = self.buf.len();
        self.buf.resize(old + CHUNK, 0);
        loop {
            match self.reader.read(&mut self.buf[old..]) {
                Ok(0) => {
                    self.buf.truncate(old);
                    self.eof = true;
                    return false;
                }
                Ok(n) => {
                    self.buf.truncate(old + n);
                    return true;
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    self.buf.truncate(old);
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
        let pos = self.pos.min(self.buf.len());
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
            while self.pos < self.buf.len() {
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
        let raw = self.capture()?;
        let key: String = serde_json::from_slice(&raw)
            .map_err(|e| self.error(format!("invalid object key: {e}")))?;
        self.expect(b':', "`:` after an object key")?;
        Ok(Some(key))
    }

    /// Whether the array being walked has another element (consuming the
    /// `,` before it, or the closing `]`).
    pub fn next_element(&mut self, first: bool) -> Result<bool, WalkError> {
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
        self.pruned_into(plan, &mut Vec::new(), &mut out)?;
        Ok(out)
    }

    fn pruned_into(
        &mut self,
        plan: &dyn Fn(&[&str], &str) -> Prune,
        path: &mut Vec<String>,
        out: &mut Vec<u8>,
    ) -> Result<(), WalkError> {
        if self.peek() != Some(b'{') {
            out.extend_from_slice(&self.capture()?);
            return Ok(());
        }
        self.begin_object()?;
        out.push(b'{');
        let mut first = true;
        let mut wrote = false;
        while let Some(key) = self.next_key(first)? {
            first = false;
            let names: Vec<&str> = path.iter().map(String::as_str).collect();
            let how = plan(&names, &key);
            if how == Prune::Skip {
                self.skip()?;
                continue;
            }
            if wrote {
                out.push(b',');
            }
            wrote = true;
            // The key as JSON (escapes written back).
            out.extend_from_slice(
                serde_json::to_string(&key)
                    .unwrap_or_else(|_| "\"\"".into())
                    .as_bytes(),
            );
            out.push(b':');
            match how {
                Prune::Walk if path.len() < 8 => {
                    path.push(key);
                    let done = self.pruned_into(plan, path, out);
                    path.pop();
                    done?;
                }
                _ => out.extend_from_slice(&self.capture()?),
            }
        }
        out.push(b'}');
        Ok(())
    }

    /// Scans the next value, keeping its bytes contiguous in the buffer
    /// (a refill keeps them, so the buffer grows to the largest value):
    /// where it starts in the buffer.
    fn scan_value(&mut self) -> Result<usize, WalkError> {
        let Some(first) = self.peek() else {
            return Err(self.truncated("a value"));
        };
        let mut start = self.pos;
        // Reads more input keeping the value's bytes; false at the end.
        macro_rules! refill {
            () => {{
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
                    if self.pos >= self.buf.len() {
                        if !refill!() {
                            return Err(self.truncated(if in_string {
                                "a string"
                            } else {
                                "a value"
                            }));
                        }
                        continue;
                    }
                    if in_string && !escaped {
                        // Strings are most of a request's bytes: jump to the
                        // next quote or backslash.
                        match memchr::memchr2(b'"', b'\\', &self.buf[self.pos..]) {
                            Some(i) => self.pos += i,
                            None => {
                                self.pos = self.buf.len();
                                continue;
                            }
                        }
                    }
                    let b = self.buf[self.pos];
                    self.pos += 1;
                    if in_string {
                        if escaped {
                            escaped = false;
                        } else if b == b'\\' {
                            escaped = true;
                        } else if b == b'"' {
                            in_string = false;
                        }
                        continue;
                    }
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
                    if self.pos >= self.buf.len() {
                        if !refill!() {
                            return Err(self.truncated("a string"));
                        }
                        continue;
                    }
                    // Jump to the next quote or backslash.
                    if !escaped {
                        if let Some(i) = memchr::memchr2(b'"', b'\\', &self.buf[self.pos..]) {
                            self.pos += i;
                        } else {
                            self.pos = self.buf.len();
                            continue;
                        }
                    }
                    let b = self.buf[self.pos];
                    self.pos += 1;
                    if escaped {
                        escaped = false;
                    } else if b == b'\\' {
                        escaped = true;
                    } else if b == b'"' {
                        break;
                    }
                }
            }
            _ => loop {
                if self.pos >= self.buf.len() {
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
        let start = self.scan_value()?;
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
        let rest = &self.buf[self.pos..];
        let (v, n) = read(rest)?;
        if n == 0 || n >= rest.len() {
            return None;
        }
        self.pos += n;
        Some(v)
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
}
