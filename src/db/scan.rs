//! A flat JSON object scanner for the ingest fast path.
//!
//! An artifact line is one JSON object of about fifty members. The fast path
//! needs each member's key and the raw text of its value; building that
//! through serde's `RawValue` machinery cost more than the rest of preparing
//! the line. [`members`] walks the line once, checking the JSON grammar as it
//! goes, and hands out borrowed slices.
//!
//! It only has to be right when it accepts: a line it declines (invalid JSON,
//! `NaN`, control characters in strings, very deep nesting, ...) goes to the
//! general path, which parses it as the reference does and gives the
//! reference's error message.
use std::borrow::Cow;

/// A member value as written in the line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Raw<'a> {
    /// The value's JSON text, quotes and brackets included.
    pub text: &'a str,
    /// A string with at least one escape sequence.
    pub escaped: bool,
}

impl<'a> Raw<'a> {
    pub fn get(&self) -> &'a str {
        self.text
    }

    /// The decoded string, when the value is one (borrowed when unescaped).
    pub fn as_str(&self) -> Option<Cow<'a, str>> {
        let t = self.text;
        if !t.starts_with('"') {
            return None;
        }
        if !self.escaped {
            return t.get(1..t.len() - 1).map(Cow::Borrowed);
        }
        serde_json::from_str::<String>(t).ok().map(Cow::Owned)
    }
}

/// serde_json's nesting limit: deeper values go to the general path.
const MAX_DEPTH: usize = 128;

struct Scanner<'a> {
    text: &'a str,
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Scanner<'a> {
    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.at).copied()
    }

    fn skip_ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.peek() {
            self.at += 1;
        }
    }

    /// Takes `sep` (`", "` or `": "`, json.dumps' separators) in one look
    /// when it is next; false leaves the cursor for the byte-wise reading.
    fn eat_separator(&mut self, sep: &[u8; 2]) -> bool {
        let found = self.bytes.get(self.at..self.at + 2) == Some(sep.as_slice());
        if found {
            self.at += 2;
        }
        found
    }

    fn eat(&mut self, b: u8) -> Option<()> {
        (self.peek()? == b).then(|| self.at += 1)
    }

    fn slice(&self, from: usize) -> Option<&'a str> {
        self.text.get(from..self.at)
    }

    /// Moves the cursor to the next `"`, `\\` or control character of a
    /// string (None at the end of the line). Eight bytes at a time.
    fn seek_string_stop(&mut self) -> Option<u8> {
        const ONES: u64 = 0x0101_0101_0101_0101;
        const HIGH: u64 = 0x8080_8080_8080_8080;
        // Bytes equal to zero in `v` have their high bit set in the result.
        let zero = |v: u64| v.wrapping_sub(ONES) & !v & HIGH;
        while let Some(chunk) = self.bytes.get(self.at..self.at + 8) {
            let mut w = [0u8; 8];
            w.copy_from_slice(chunk);
            let v = u64::from_le_bytes(w);
            // Below 0x20, the quote, the backslash.
            let hit = (v.wrapping_sub(ONES * 0x20) & !v & HIGH)
                | zero(v ^ (ONES * u64::from(b'"')))
                | zero(v ^ (ONES * u64::from(b'\\')));
            if hit != 0 {
                // The lowest flagged byte is exact (borrows only run upward).
                self.at += (hit.trailing_zeros() / 8) as usize;
                return self.peek();
            }
            self.at += 8;
        }
        loop {
            let b = self.peek()?;
            if b == b'"' || b == b'\\' || b < 0x20 {
                return Some(b);
            }
            self.at += 1;
        }
    }

    /// A string at the cursor; returns (raw text, escaped).
    fn string(&mut self) -> Option<(&'a str, bool)> {
        let start = self.at;
        self.eat(b'"')?;
        let mut escaped = false;
        loop {
            match self.seek_string_stop()? {
                b'"' => {
                    self.at += 1;
                    return Some((self.slice(start)?, escaped));
                }
                b'\\' => {}
                // JSON forbids raw control characters inside strings.
                _ => return None,
            }
            escaped = true;
            self.at += 1; // the backslash
            match self.peek()? {
                b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => self.at += 1,
                b'u' => {
                    let hex = self.bytes.get(self.at + 1..self.at + 5)?;
                    if !hex.iter().all(u8::is_ascii_hexdigit) {
                        return None;
                    }
                    self.at += 5;
                }
                _ => return None,
            }
        }
    }

    /// Skips a run of ASCII digits, eight bytes at a time (timestamps and
    /// float fractions are long runs); returns how many there were.
    fn digits(&mut self) -> usize {
        let start = self.at;
        while let Some(chunk) = self.bytes.get(self.at..).and_then(<[u8]>::first_chunk::<8>) {
            let (_, hit) = digit_word(*chunk);
            if hit != 0 {
                self.at += (hit.trailing_zeros() / 8) as usize;
                return self.at - start;
            }
            self.at += 8;
        }
        while self.peek().is_some_and(|b| b.is_ascii_digit()) {
            self.at += 1;
        }
        self.at - start
    }

    /// A number in JSON's grammar (no `NaN`, no `Infinity`, no leading `+`).
    fn number(&mut self) -> Option<()> {
        if self.peek() == Some(b'-') {
            self.at += 1;
        }
        match self.peek()? {
            b'0' => self.at += 1,
            b'1'..=b'9' => {
                self.digits();
            }
            _ => return None,
        }
        if self.peek() == Some(b'.') {
            self.at += 1;
            if self.digits() == 0 {
                return None;
            }
        }
        if let Some(b'e' | b'E') = self.peek() {
            self.at += 1;
            if let Some(b'+' | b'-') = self.peek() {
                self.at += 1;
            }
            if self.digits() == 0 {
                return None;
            }
        }
        Some(())
    }

    fn literal(&mut self, word: &[u8]) -> Option<()> {
        let end = self.at + word.len();
        (self.bytes.get(self.at..end)? == word).then(|| self.at = end)
    }

    /// Any value at the cursor (whitespace already skipped).
    fn value(&mut self, depth: usize) -> Option<Raw<'a>> {
        let start = self.at;
        let mut escaped = false;
        match self.peek()? {
            b'"' => escaped = self.string()?.1,
            b'-' | b'0'..=b'9' => self.number()?,
            b't' => self.literal(b"true")?,
            b'f' => self.literal(b"false")?,
            b'n' => self.literal(b"null")?,
            b'[' => self.array(depth + 1)?,
            b'{' => self.object(depth + 1)?,
            _ => return None,
        }
        Some(Raw {
            text: self.slice(start)?,
            escaped,
        })
    }

    /// A bracketed, comma-separated list: `open`, then `item` for each
    /// element (at the element, whitespace skipped), then `close`.
    fn list(
        &mut self,
        depth: usize,
        open: u8,
        close: u8,
        mut item: impl FnMut(&mut Self) -> Option<()>,
    ) -> Option<()> {
        if depth > MAX_DEPTH {
            return None;
        }
        self.eat(open)?;
        self.skip_ws();
        if self.eat(close).is_some() {
            return Some(());
        }
        loop {
            self.skip_ws();
            item(self)?;
            if self.eat_separator(b", ") {
                continue;
            }
            self.skip_ws();
            match self.peek()? {
                b',' => self.at += 1,
                b if b == close => {
                    self.at += 1;
                    return Some(());
                }
                _ => return None,
            }
        }
    }

    fn array(&mut self, depth: usize) -> Option<()> {
        self.list(depth, b'[', b']', |s| s.value(depth).map(drop))
    }

    /// An object, calling `each` with every member in order (None from it
    /// stops the scan).
    fn members(
        &mut self,
        depth: usize,
        mut each: impl FnMut(&'a str, bool, Raw<'a>) -> Option<()>,
    ) -> Option<()> {
        self.list(depth, b'{', b'}', |s| {
            let (key, escaped) = s.string()?;
            s.member_value(depth, key, escaped, &mut each)
        })
    }

    /// The rest of a member after its key: the colon and the value.
    fn member_value(
        &mut self,
        depth: usize,
        key: &'a str,
        escaped: bool,
        each: &mut impl FnMut(&'a str, bool, Raw<'a>) -> Option<()>,
    ) -> Option<()> {
        if !self.eat_separator(b": ") {
            self.skip_ws();
            self.eat(b':')?;
        }
        self.skip_ws();
        let value = self.value(depth)?;
        each(key, escaped, value)
    }

    /// The key at the cursor when it is `quoted` (a key as written, quotes
    /// included, without escapes): the cursor moves past it.
    fn known_key(&mut self, quoted: &[u8]) -> Option<&'a str> {
        let end = self.at + quoted.len();
        if !crate::db::tables::same_bytes(self.bytes.get(self.at..end)?, quoted) {
            return None;
        }
        let key = self.text.get(self.at..end)?;
        self.at = end;
        Some(key)
    }

    fn object(&mut self, depth: usize) -> Option<()> {
        self.members(depth, |_, _, _| Some(()))
    }
}

/// Eight bytes read as digits: each byte less '0' (0..=9 where it is a digit;
/// the first byte lowest), and the high bit of every byte that is not an
/// ASCII digit. A digit xor '0' is 0..=9; adding 0x76 to the low seven bits
/// sets the high bit from 10 up (no carry leaves a byte), and a high bit
/// already set is a byte past ASCII.
pub(crate) fn digit_word(bytes: [u8; 8]) -> (u64, u64) {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let t = u64::from_le_bytes(bytes) ^ (ONES * u64::from(b'0'));
    (t, (((t & !HIGH) + ONES * 0x76) | t) & HIGH)
}

/// A member of an object: its decoded key and its raw value.
pub type Member<'a> = (Cow<'a, str>, Raw<'a>);

/// The keys of the last line read with [`members_shaped`], as written
/// (quotes included). Lines from one writer repeat their keys in the same
/// order; where a line's key is the same bytes as the one at its position
/// in the shape, it is taken as it stands instead of being scanned.
#[derive(Debug, Default)]
pub struct Shape {
    /// The keys one after another (reused from line to line: lines of
    /// different shapes can alternate).
    quoted: Vec<u8>,
    /// Where each key is in `quoted` (none when the shape is not valid).
    spans: Vec<(usize, usize)>,
    /// False before the first line, and after a line with an escaped key.
    valid: bool,
}

impl Shape {
    /// Key `j` as written.
    fn key(&self, j: usize) -> Option<&[u8]> {
        let &(start, end) = self.spans.get(j)?;
        self.quoted.get(start..end)
    }

    /// Whether `members` have exactly this shape's keys, in its order.
    pub fn holds(&self, members: &[Member]) -> bool {
        self.valid
            && self.spans.len() == members.len()
            && members.iter().enumerate().all(|(j, (key, _))| {
                matches!(key, Cow::Borrowed(_))
                    && self
                        .key(j)
                        .and_then(|q| q.get(1..q.len().saturating_sub(1)))
                        == Some(key.as_bytes())
            })
    }

    /// Remembers the keys of `members` (only keys without escapes can be
    /// matched as bytes).
    pub fn remember(&mut self, members: &[Member]) {
        self.quoted.clear();
        self.spans.clear();
        self.valid = members
            .iter()
            .all(|(key, _)| matches!(key, Cow::Borrowed(_)));
        if !self.valid {
            return;
        }
        for (key, _) in members {
            let start = self.quoted.len();
            self.quoted.push(b'"');
            self.quoted.extend_from_slice(key.as_bytes());
            self.quoted.push(b'"');
            self.spans.push((start, self.quoted.len()));
        }
    }
}

/// [`members`], reading keys through `shape` (and leaving this line's keys
/// in it), and telling whether this line has exactly the shape's keys, in
/// the same order.
pub fn members_shaped<'a>(line: &'a str, shape: &mut Shape) -> Option<(Vec<Member<'a>>, bool)> {
    let (out, same) = members_against(line, shape)?;
    if !same {
        shape.remember(&out);
    }
    Some((out, same))
}

/// [`members_shaped`], leaving `shape` as it was (the caller remembers a
/// new shape where it wants, [`Shape::remember`]).
pub fn members_against<'a>(line: &'a str, shape: &Shape) -> Option<(Vec<Member<'a>>, bool)> {
    let mut s = Scanner {
        text: line,
        bytes: line.as_bytes(),
        at: 0,
    };
    s.skip_ws();
    let keys = shape.spans.len();
    let mut out = Vec::with_capacity(keys.max(16));
    let mut same = shape.valid;
    let mut at = 0;
    let read = s.list(1, b'{', b'}', |s| {
        let known = shape.key(at).and_then(|quoted| s.known_key(quoted));
        at += 1;
        let (key, escaped) = match known {
            Some(key) => (key, false),
            None => {
                same = false;
                s.string()?
            }
        };
        s.member_value(1, key, escaped, &mut |key, escaped, value| {
            out.push((unquote(key, escaped)?, value));
            Some(())
        })
    });
    let whole = read.is_some() && {
        s.skip_ws();
        s.at == s.bytes.len()
    };
    same &= at == keys;
    if !whole {
        return None;
    }
    Some((out, same))
}

/// A key as read: its text without the quotes, decoded when it has escapes.
fn unquote(key: &str, escaped: bool) -> Option<Cow<'_, str>> {
    if escaped {
        serde_json::from_str::<String>(key).ok().map(Cow::Owned)
    } else {
        key.get(1..key.len() - 1).map(Cow::Borrowed)
    }
}

/// The members of the JSON object `line`, in order: decoded keys and raw
/// values. None when the line is not a JSON object this scanner accepts.
pub fn members(line: &str) -> Option<Vec<Member<'_>>> {
    members_shaped(line, &mut Shape::default()).map(|(members, _)| members)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::value::RawValue;

    /// serde_json's reading of the same line: (key, raw value text) pairs.
    fn serde_members(line: &str) -> Option<Vec<(String, String)>> {
        let map: Vec<(String, Box<RawValue>)> =
            serde_json::from_str::<indexmap_free::Pairs>(line).ok()?.0;
        Some(
            map.into_iter()
                .map(|(k, v)| (k, v.get().to_owned()))
                .collect(),
        )
    }

    /// A member list in file order, duplicates kept, without a map type.
    mod indexmap_free {
        use serde::de::{Deserialize, Deserializer, MapAccess, Visitor};
        use serde_json::value::RawValue;

        pub struct Pairs(pub Vec<(String, Box<RawValue>)>);

        impl<'de> Deserialize<'de> for Pairs {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                struct V;
                impl<'de> Visitor<'de> for V {
                    type Value = Pairs;
                    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                        f.write_str("an object")
                    }
                    fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<Pairs, A::Error> {
                        let mut v = Vec::new();
                        while let Some((k, raw)) = m.next_entry::<String, Box<RawValue>>()? {
                            v.push((k, raw));
                        }
                        Ok(Pairs(v))
                    }
                }
                d.deserialize_map(V)
            }
        }
    }

    fn ours(line: &str) -> Option<Vec<(String, String)>> {
        members(line).map(|m| {
            m.into_iter()
                .map(|(k, v)| (k.into_owned(), v.get().to_owned()))
                .collect()
        })
    }

    #[test]
    fn accepted_lines_read_as_serde_json_reads_them() {
        let lines = [
            r#"{}"#,
            r#"  { "a" : 1 , "b":[1, 2.5e-3, -0, {"x": null}], "c": "t\"x\u00e9\n" }  "#,
            r#"{"a": true, "b": false, "c": null, "d": -12.5E+2, "e": {}, "f": []}"#,
            r#"{"k\u0041y": "v", "dup": 1, "dup": 2}"#,
            r#"{"nested": {"deep": [[[]]], "s": "\\"}, "big": 123456789012345678901234567890}"#,
            r#"{"uni": "héllo ☃", "sl": "\/"}"#,
            // Separators as json.dumps writes them, and every other spacing.
            r#"{"a": [1, 2], "b": {"c": 3, "d": 4}}"#,
            "{\"a\":  1,  \"b\": \t[1,\n 2 ,3], \"c\" :\r\n4 , \"d\":5}",
            r#"{"a": 1 ,"b": 2}"#,
            r#"{"a": ", ", "b": ": "}"#,
        ];
        for line in lines {
            let got = ours(line);
            assert!(got.is_some(), "declined: {line}");
            assert_eq!(got, serde_members(line), "{line}");
        }
        let m = members(r#"{"a": "x\ty", "b": "plain"}"#).unwrap();
        assert!(m[0].1.escaped && !m[1].1.escaped);
        assert_eq!(m[0].1.as_str().unwrap(), "x\ty");
        assert!(matches!(m[1].1.as_str().unwrap(), Cow::Borrowed("plain")));
    }

    /// The eight-bytes-at-a-time search finds each stop wherever it falls.
    #[test]
    fn string_stops_are_found_at_every_offset() {
        for pad in 0..20 {
            let a = "a".repeat(pad);
            let b = "é".repeat(pad % 5);
            for middle in ["", "\\n", "\\\"", "\\u00e9", "☃", "\u{7f}"] {
                let line = format!(r#"{{"k{a}": "{a}{middle}{b}", "n": {pad}}}"#);
                assert!(ours(&line).is_some(), "declined: {line}");
                assert_eq!(ours(&line), serde_members(&line), "{line}");
            }
            for bad in ["\u{1}", "\t", "\u{1f}"] {
                let line = format!(r#"{{"k": "{a}{bad}{b}"}}"#);
                assert_eq!(ours(&line), None, "accepted: {line:?}");
            }
        }
    }

    /// The eight-bytes-at-a-time digit run ends exactly at the first byte
    /// that is not a digit, including the bytes on either side of '0'..'9'.
    #[test]
    fn digit_runs_end_at_every_offset() {
        for len in 1..24 {
            let run: String = (0..len).map(|i| char::from(b'1' + (i % 9) as u8)).collect();
            for number in [
                run.clone(),
                format!("-{run}"),
                format!("0.{run}"),
                format!("{run}.{run}e-{run}"),
                format!("{run}E+7"),
            ] {
                let line = format!(r#"{{"n": {number}, "s": "x"}}"#);
                assert_eq!(ours(&line), serde_members(&line), "{line}");
            }
            for stop in ['/', ':', ' ', ',', '\u{7f}', 'é', 'a', '}'] {
                let line = format!(r#"{{"n": {run}{stop}"#);
                let want = serde_members(&line);
                assert_eq!(ours(&line), want, "{line}");
                let line = format!(r#"{{"n": {run}{stop} 1}}"#);
                assert_eq!(ours(&line), serde_members(&line), "{line}");
            }
        }
    }

    #[test]
    fn invalid_or_unusual_json_is_declined() {
        let lines = [
            "",
            "[]",
            "1",
            r#"{"a": 1"#,
            r#"{"a": 1,}"#,
            r#"{"a" 1}"#,
            r#"{a: 1}"#,
            r#"{"a": 01}"#,
            r#"{"a": 1.}"#,
            r#"{"a": .5}"#,
            r#"{"a": 1e}"#,
            r#"{"a": +1}"#,
            r#"{"a": NaN}"#,
            r#"{"a": -Infinity}"#,
            r#"{"a": tru}"#,
            r#"{"a": "\q"}"#,
            r#"{"a": "\u12G4"}"#,
            "{\"a\": \"tab\there\"}",
            r#"{"a": [1, 2,]}"#,
            r#"{"a": [1, 2, ]}"#,
            r#"{"a": 1, }"#,
            r#"{"a": 1, , "b": 2}"#,
            r#"{"a": : 1}"#,
            r#"{"a":: 1}"#,
            r#"{"a": 1} x"#,
            r#"{"a": 1}{"b": 2}"#,
            r#"{"a": "unterminated}"#,
        ];
        for line in lines {
            assert_eq!(ours(line), None, "accepted: {line}");
        }
        let deep = format!("{{\"a\": {}{}}}", "[".repeat(200), "]".repeat(200));
        assert_eq!(ours(&deep), None);
        let ok = format!("{{\"a\": {}{}}}", "[".repeat(100), "]".repeat(100));
        assert_eq!(ours(&ok), serde_members(&ok));
    }

    /// Reading through a shape gives the members a plain reading gives, and
    /// tells a line whose keys are the last line's, in order.
    #[test]
    fn shaped_reading_is_plain_reading() {
        let lines = [
            r#"{"a": 1, "b": "x", "c": [1, 2]}"#,
            r#"{"a": 2, "b": "y", "c": []}"#,
            r#"{"a" : 2,"b":"y" , "c": {}}"#,
            r#"{"a": 2, "b": "y"}"#,
            r#"{"a": 2, "b": "y", "c": 3, "d": 4}"#,
            r#"{"a": 2, "b": "y", "c": 3, "d": 4}"#,
            r#"{"a": 2, "b\u0041": "y", "c": 3, "d": 4}"#,
            r#"{"a": 2, "b\u0041": "y", "c": 3, "d": 4}"#,
            r#"{"a": 2, "bA": "y", "c": 3, "d": 4}"#,
            r#"{"a": 2, "bA": "y", "c": 3, "d": 4}"#,
            r#"{"ab": 2, "bA": "y", "c": 3, "d": 4}"#,
            r#"{"a": 2, "bA": "y", "c": 3, "d": 4"#,
            r#"{"a": 2, "bA": "y", "c": 3, "d": 4}"#,
            r#"{"a": 2, "bA": "y", "c": 3, "d": 4} x"#,
            r#"{"a": 2, "bA": "y", "c": 3, "d": 4}"#,
            r#"{"a": 2, "bA": "y", "c": 3, "d": 4, "d": 5}"#,
            r#"{"a": 2, "bA": "y", "c": 3, "d": 4, "d": 5}"#,
            r#"{"a": 2, "bA\"": "y", "c": 3, "d": 4, "d": 5}"#,
            r#"{}"#,
            r#"{}"#,
            r#"{"a": 1}"#,
        ];
        let mut shape = Shape::default();
        let mut last: Option<Vec<String>> = None;
        for line in lines {
            let plain = ours(line);
            let keys = |m: &Vec<(String, String)>| m.iter().map(|(k, _)| k.clone()).collect();
            let shaped = members_shaped(line, &mut shape);
            assert_eq!(
                shaped.as_ref().map(|(m, _)| m
                    .iter()
                    .map(|(k, v)| (k.to_string(), v.get().to_owned()))
                    .collect::<Vec<_>>()),
                plain,
                "{line}"
            );
            if let Some((_, same)) = shaped {
                let now: Vec<String> = plain.as_ref().map(keys).unwrap();
                assert_eq!(same, last.as_ref() == Some(&now), "{line}");
                // A line with an escaped key leaves no shape to match.
                last = (!line.contains('\\')).then_some(now);
            }
        }
    }

    /// Every line of the bundled conformance artifacts: where serde_json reads
    /// an object, the scanner reads the same members (and declines none).
    #[test]
    fn conformance_artifacts_scan_as_serde_json_reads_them() {
        let root =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/conformance");
        let mut checked = 0;
        for suite in ["cases", "bad"] {
            for case in std::fs::read_dir(root.join(suite)).unwrap() {
                for file in std::fs::read_dir(case.unwrap().path()).unwrap() {
                    let path = file.unwrap().path();
                    if path.extension().is_none_or(|e| e != "jsonl") {
                        continue;
                    }
                    let Ok(text) = std::fs::read_to_string(&path) else {
                        continue; // invalid UTF-8 on purpose
                    };
                    for line in text.lines() {
                        let want = serde_members(line);
                        assert_eq!(ours(line), want, "{}: {line}", path.display());
                        checked += usize::from(want.is_some());
                    }
                }
            }
        }
        assert!(checked > 1000, "{checked}");
    }
}
