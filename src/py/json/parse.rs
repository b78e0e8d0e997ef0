//! Python's `json.loads`: one document, `NaN`/`Infinity` accepted, syntax
//! errors worded and positioned (in characters) as `json.JSONDecodeError`.

use serde_json::{Map, Value};

use super::{big_int_value, nonfinite_value};

/// Python's recursion limit is about 1000 frames; nesting deeper than this
/// fails there with a `RecursionError`, and here with [`ParseError::TooDeep`]
/// instead of overflowing the stack.
const MAX_DEPTH: usize = 1000;

/// Why a document is not JSON, worded as Python's `json.JSONDecodeError`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParseError {
    /// A syntax error; `pos` counts characters (code points) from the start.
    #[error("{msg}: line {line} column {column} (char {pos})")]
    Syntax {
        msg: &'static str,
        line: usize,
        column: usize,
        pos: usize,
    },
    /// Nesting deeper than Python's recursion limit allows.
    #[error("maximum recursion depth exceeded while decoding a JSON {0} from a unicode string")]
    TooDeep(&'static str),
}

impl ParseError {
    /// Python's position rule: lines split on `\n` only, columns 1-based.
    fn syntax(msg: &'static str, doc: &[char], pos: usize) -> Self {
        let before = &doc[..pos.min(doc.len())];
        let line = before.iter().filter(|&&c| c == '\n').count() + 1;
        let column = match before.iter().rposition(|&c| c == '\n') {
            Some(nl) => pos - nl,
            None => pos + 1,
        };
        ParseError::Syntax {
            msg,
            line,
            column,
            pos,
        }
    }
}

#[cfg(test)]
thread_local! {
    /// How often the slow path ran on this thread; tests check the fast path is taken.
    static SLOW_PATH_RUNS: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// Parses one JSON document the way Python's `json.loads` does.
///
/// Strict JSON goes through `serde_json` (fast). Only when that fails, or the
/// text may hold an integer `-0` (serde reads it as the float `-0.0`, Python as
/// the int `0`), a character-level scanner mirroring CPython's `_json.c` runs:
/// it accepts `NaN`/`Infinity`/`-Infinity` and numbers too large for f64 (→ ±∞,
/// as `float()` does), and otherwise yields Python's exact error message.
/// Unpaired `\ud800`-style escapes, which a Rust `String` cannot hold, become
/// U+FFFD.
pub fn parse(text: &str) -> Result<Value, ParseError> {
    if !may_hold_negative_zero_int(text) && !may_hold_long_int(text) {
        if let Ok(v) = serde_json::from_str::<Value>(text) {
            return Ok(v);
        }
    }
    parse_slow(text)
}

/// True when a long run of digits occurs: an integer past 64 bits may be
/// there, which serde_json would read as a float.
fn may_hold_long_int(text: &str) -> bool {
    // Twenty digits, or a minus and nineteen (below i64::MIN).
    let (mut run, mut negative, mut before) = (0, false, 0u8);
    for &b in text.as_bytes() {
        if b.is_ascii_digit() {
            if run == 0 {
                negative = before == b'-';
            }
            run += 1;
            if run >= 20 || (run == 19 && negative) {
                return true;
            }
        } else {
            run = 0;
        }
        before = b;
    }
    false
}

/// True when `-0` occurs not followed by a digit, `.`, `e` or `E`: the only
/// case where serde's reading of valid JSON differs from Python's.
fn may_hold_negative_zero_int(text: &str) -> bool {
    text.match_indices("-0").any(|(i, _)| {
        !matches!(
            text.as_bytes().get(i + 2),
            Some(b'0'..=b'9' | b'.' | b'e' | b'E')
        )
    })
}

fn parse_slow(text: &str) -> Result<Value, ParseError> {
    #[cfg(test)]
    SLOW_PATH_RUNS.with(|c| c.set(c.get() + 1));
    let chars: Vec<char> = text.chars().collect();
    if chars.first() == Some(&'\u{feff}') {
        return Err(ParseError::syntax(
            "Unexpected UTF-8 BOM (decode using utf-8-sig)",
            &chars,
            0,
        ));
    }
    let scanner = Scanner { s: &chars };
    let fail = |f: Fail| match f {
        Fail::Stop(pos) => ParseError::syntax("Expecting value", &chars, pos),
        Fail::Msg(msg, pos) => ParseError::syntax(msg, &chars, pos),
        Fail::Deep(kind) => ParseError::TooDeep(kind),
    };
    let start = scanner.skip_ws(0);
    let (value, end) = scanner.scan_value(start).map_err(fail)?;
    let end = scanner.skip_ws(end);
    if end != chars.len() {
        return Err(ParseError::syntax("Extra data", &chars, end));
    }
    Ok(value)
}

/// Scanner failures; `Stop` is CPython's `StopIteration(idx)`, which the
/// caller turns into "Expecting value".
enum Fail {
    Stop(usize),
    Msg(&'static str, usize),
    Deep(&'static str),
}

type Scan<T> = Result<T, Fail>;

/// A container whose closing bracket has not been seen yet; an object holds
/// the key of the value being read.
enum Open {
    Array(Vec<Value>),
    Object(Map<String, Value>, String),
}

/// A port of the rules of CPython's `scan_once_unicode` and friends over code
/// points, so positions match Python's.
struct Scanner<'a> {
    s: &'a [char],
}

impl Scanner<'_> {
    fn at(&self, i: usize) -> Option<char> {
        self.s.get(i).copied()
    }

    fn is_digit_at(&self, i: usize) -> bool {
        self.at(i).is_some_and(|c| c.is_ascii_digit())
    }

    fn skip_ws(&self, mut i: usize) -> usize {
        while matches!(self.at(i), Some(' ' | '\t' | '\n' | '\r')) {
            i += 1;
        }
        i
    }

    fn has_word(&self, i: usize, word: &str) -> bool {
        // The words are ASCII, so their byte length is their length in chars.
        let n = word.len();
        i + n <= self.s.len() && self.s[i..i + n].iter().copied().eq(word.chars())
    }

    /// `scan_once_unicode` with `_parse_object_unicode` and
    /// `_parse_array_unicode` folded into one loop over an explicit stack of
    /// open containers, so deep nesting cannot overflow the Rust stack.
    fn scan_value(&self, mut i: usize) -> Scan<(Value, usize)> {
        let mut stack: Vec<Open> = Vec::new();
        loop {
            let (mut value, mut next) = match self.at(i) {
                Some(open @ ('{' | '[')) => {
                    let is_obj = open == '{';
                    if stack.len() >= MAX_DEPTH {
                        return Err(Fail::Deep(if is_obj { "object" } else { "array" }));
                    }
                    let j = self.skip_ws(i + 1);
                    match (is_obj, self.at(j)) {
                        (true, Some('}')) => (Value::Object(Map::new()), j + 1),
                        (false, Some(']')) => (Value::Array(Vec::new()), j + 1),
                        (true, _) => {
                            let (key, after) = self.object_key(j)?;
                            stack.push(Open::Object(Map::new(), key));
                            i = after;
                            continue;
                        }
                        (false, _) => {
                            stack.push(Open::Array(Vec::new()));
                            i = j;
                            continue;
                        }
                    }
                }
                _ => self.scan_scalar(i)?,
            };
            // A value is complete: hand it to its container, closing every
            // container that ends right after it.
            loop {
                let Some(mut open) = stack.pop() else {
                    return Ok((value, next));
                };
                let close = match &mut open {
                    Open::Array(items) => {
                        items.push(value);
                        ']'
                    }
                    Open::Object(map, key) => {
                        map.insert(std::mem::take(key), value);
                        '}'
                    }
                };
                let j = self.skip_ws(next);
                match self.at(j) {
                    Some(c) if c == close => {
                        value = match open {
                            Open::Array(items) => Value::Array(items),
                            Open::Object(map, _) => Value::Object(map),
                        };
                        next = j + 1;
                    }
                    Some(',') => {
                        i = self.skip_ws(j + 1);
                        if let Open::Object(_, key) = &mut open {
                            let (k, after) = self.object_key(i)?;
                            *key = k;
                            i = after;
                        }
                        stack.push(open);
                        break;
                    }
                    _ => return Err(Fail::Msg("Expecting ',' delimiter", j)),
                }
            }
        }
    }

    /// An object key and its `:`; returns the key and where its value starts.
    fn object_key(&self, i: usize) -> Scan<(String, usize)> {
        if self.at(i) != Some('"') {
            return Err(Fail::Msg(
                "Expecting property name enclosed in double quotes",
                i,
            ));
        }
        let (key, next) = self.scan_string(i + 1)?;
        let j = self.skip_ws(next);
        if self.at(j) != Some(':') {
            return Err(Fail::Msg("Expecting ':' delimiter", j));
        }
        Ok((key, self.skip_ws(j + 1)))
    }

    /// Strings, constants and numbers: everything but containers.
    fn scan_scalar(&self, idx: usize) -> Scan<(Value, usize)> {
        let c = self.at(idx).ok_or(Fail::Stop(idx))?;
        if c == '"' {
            let (s, end) = self.scan_string(idx + 1)?;
            return Ok((Value::String(s), end));
        }
        let word = match c {
            'n' => "null",
            't' => "true",
            'f' => "false",
            'N' => "NaN",
            'I' => "Infinity",
            '-' => "-Infinity",
            _ => "",
        };
        if !word.is_empty() && self.has_word(idx, word) {
            let value = match c {
                'n' => Value::Null,
                't' => Value::Bool(true),
                'f' => Value::Bool(false),
                // Rust's float parser reads these three words too.
                _ => nonfinite_value(word.parse().unwrap_or(f64::NAN)),
            };
            return Ok((value, idx + word.len()));
        }
        self.scan_number(idx)
    }

    /// `_match_number_unicode`: an exponent or fraction without digits is
    /// not part of the number (it backtracks), so `1.` leaves `.` as extra data.
    fn scan_number(&self, start: usize) -> Scan<(Value, usize)> {
        let mut i = start;
        if self.at(i) == Some('-') {
            i += 1;
        }
        match self.at(i) {
            Some('1'..='9') => {
                i += 1;
                while self.is_digit_at(i) {
                    i += 1;
                }
            }
            Some('0') => i += 1,
            _ => return Err(Fail::Stop(start)),
        }
        let mut is_float = false;
        if self.at(i) == Some('.') && self.is_digit_at(i + 1) {
            is_float = true;
            i += 2;
            while self.is_digit_at(i) {
                i += 1;
            }
        }
        if matches!(self.at(i), Some('e' | 'E')) && i + 1 < self.s.len() {
            let e_start = i;
            i += 1;
            if matches!(self.at(i), Some('+' | '-')) && i + 1 < self.s.len() {
                i += 1;
            }
            while self.is_digit_at(i) {
                i += 1;
            }
            if self.is_digit_at(i - 1) {
                is_float = true;
            } else {
                i = e_start;
            }
        }
        let text: String = self.s[start..i].iter().collect();
        let value = if is_float {
            nonfinite_value(text.parse::<f64>().unwrap_or(f64::NAN))
        } else if let Ok(n) = text.parse::<i64>() {
            Value::from(n)
        } else if let Ok(n) = text.parse::<u64>() {
            Value::from(n)
        } else {
            // Python keeps arbitrary-size ints, and so does the sentinel.
            big_int_value(&text)
        };
        Ok((value, i))
    }

    /// `scanstring_unicode` in strict mode; `begin` is just past the opening quote.
    fn scan_string(&self, begin: usize) -> Scan<(String, usize)> {
        let quote = begin - 1;
        let len = self.s.len();
        let mut out = String::new();
        let mut i = begin;
        loop {
            let c = self
                .at(i)
                .ok_or(Fail::Msg("Unterminated string starting at", quote))?;
            match c {
                '"' => return Ok((out, i + 1)),
                '\\' => {}
                c if (c as u32) <= 0x1f => {
                    return Err(Fail::Msg("Invalid control character at", i))
                }
                c => {
                    out.push(c);
                    i += 1;
                    continue;
                }
            }
            let esc = self
                .at(i + 1)
                .ok_or(Fail::Msg("Unterminated string starting at", quote))?;
            let simple = match esc {
                '"' | '\\' | '/' => Some(esc),
                'b' => Some('\u{8}'),
                'f' => Some('\u{c}'),
                'n' => Some('\n'),
                'r' => Some('\r'),
                't' => Some('\t'),
                'u' => None,
                _ => return Err(Fail::Msg("Invalid \\escape", i)),
            };
            if let Some(ch) = simple {
                out.push(ch);
                i += 2;
                continue;
            }
            // `\uXXXX`: CPython demands a character after the four digits.
            let u = i + 1;
            if u + 5 >= len {
                return Err(Fail::Msg("Invalid \\uXXXX escape", u));
            }
            let hi = self
                .hex4(u + 1)
                .ok_or(Fail::Msg("Invalid \\uXXXX escape", u))?;
            let mut end = u + 5;
            let mut code = hi;
            if (0xd800..0xdc00).contains(&hi)
                && end + 6 < len
                && self.at(end) == Some('\\')
                && self.at(end + 1) == Some('u')
            {
                let lo = self
                    .hex4(end + 2)
                    .ok_or(Fail::Msg("Invalid \\uXXXX escape", end + 1))?;
                if (0xdc00..0xe000).contains(&lo) {
                    code = 0x10000 + ((hi - 0xd800) << 10) + (lo - 0xdc00);
                    end += 6;
                }
            }
            out.push(char::from_u32(code).unwrap_or('\u{fffd}'));
            i = end;
        }
    }

    fn hex4(&self, i: usize) -> Option<u32> {
        let digits = self.s.get(i..i + 4)?;
        digits
            .iter()
            .try_fold(0u32, |acc, c| Some(acc * 16 + c.to_digit(16)?))
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::py::json::number;
    use crate::py::json::{is_int, INF, NAN, NEG_INF};
    use serde_json::json;

    fn err(text: &str) -> String {
        parse(text).unwrap_err().to_string()
    }

    #[test]
    fn parse_accepts_python_extensions() {
        let v = parse(r#" {"a": NaN, "b": [Infinity, -Infinity], "c": 1e400} "#).unwrap();
        assert_eq!(v["a"], json!(NAN));
        assert_eq!(v["b"], json!([INF, NEG_INF]));
        assert_eq!(v["c"], json!(INF));
        assert_eq!(
            parse(r#"{"k": 1, "j": 0, "k": 2}"#).unwrap(),
            json!({"j": 0, "k": 2})
        );
        // Python reads `-0` as the int 0 but `-0.0` as a float.
        assert!(is_int(&parse("[-0]").unwrap()[0]));
        assert_eq!(parse("[-0, -0.0]").unwrap().to_string(), "[0,-0.0]");
        assert_eq!(parse(r#""\ud83d\ude00\u00e9""#).unwrap(), json!("😀é"));
        assert_eq!(parse(r#"["\ud800", 1]"#).unwrap(), json!(["\u{fffd}", 1]));
        let big = parse("123456789012345678901234567890").unwrap();
        assert_eq!(number(&big), Some(1.2345678901234568e29));
    }

    #[test]
    fn parse_takes_fast_path_for_strict_json() {
        let line =
            r#"{"case_id": "c1", "e2e_latency_ms": 100.5, "x": [-0.5, -0e1, "a-01"], "ok": true}"#;
        let before = SLOW_PATH_RUNS.with(|c| c.get());
        parse(line).unwrap();
        assert_eq!(SLOW_PATH_RUNS.with(|c| c.get()), before);
        parse(r#"{"a": NaN}"#).unwrap();
        assert_eq!(SLOW_PATH_RUNS.with(|c| c.get()), before + 1);
    }

    #[test]
    fn parse_errors_match_python() {
        // Messages printed by CPython 3.11 json.loads for each input.
        #[rustfmt::skip]
        let cases: &[(&str, &str)] = &[
            ("", "Expecting value: line 1 column 1 (char 0)"),
            (" ", "Expecting value: line 1 column 2 (char 1)"),
            ("{\"a\": 1", "Expecting ',' delimiter: line 1 column 8 (char 7)"),
            ("{\"a\": 1,}", "Expecting property name enclosed in double quotes: line 1 column 9 (char 8)"),
            ("[1,]", "Expecting value: line 1 column 4 (char 3)"),
            ("{\"a\" 1}", "Expecting ':' delimiter: line 1 column 6 (char 5)"),
            ("{\"a\": }", "Expecting value: line 1 column 7 (char 6)"),
            ("{a: 1}", "Expecting property name enclosed in double quotes: line 1 column 2 (char 1)"),
            ("1 2", "Extra data: line 1 column 3 (char 2)"),
            ("{\"a\": \"x", "Unterminated string starting at: line 1 column 7 (char 6)"),
            ("\"\u{1}\"", "Invalid control character at: line 1 column 2 (char 1)"),
            ("\"\\q\"", "Invalid \\escape: line 1 column 2 (char 1)"),
            ("[1 2]", "Expecting ',' delimiter: line 1 column 4 (char 3)"),
            ("nul", "Expecting value: line 1 column 1 (char 0)"),
            ("-", "Expecting value: line 1 column 1 (char 0)"),
            ("01", "Extra data: line 1 column 2 (char 1)"),
            ("1.", "Extra data: line 1 column 2 (char 1)"),
            ("\"\\u12\"", "Invalid \\uXXXX escape: line 1 column 3 (char 2)"),
            ("\"\\u12zz\"", "Invalid \\uXXXX escape: line 1 column 3 (char 2)"),
            ("\u{feff}{}", "Unexpected UTF-8 BOM (decode using utf-8-sig): line 1 column 1 (char 0)"),
            ("{\"a\":1}\n{\"b\":2}", "Extra data: line 2 column 1 (char 8)"),
            ("tru", "Expecting value: line 1 column 1 (char 0)"),
            ("[", "Expecting value: line 1 column 2 (char 1)"),
            ("{", "Expecting property name enclosed in double quotes: line 1 column 2 (char 1)"),
            ("{\"a\": [1, 2}", "Expecting ',' delimiter: line 1 column 12 (char 11)"),
            ("  {\"k\": \"v\", \"k2\": x}", "Expecting value: line 1 column 20 (char 19)"),
            ("\"ab\\", "Unterminated string starting at: line 1 column 1 (char 0)"),
            ("{\"é\": \"😀\", \"q\": ?}", "Expecting value: line 1 column 17 (char 16)"),
            ("NaNa", "Extra data: line 1 column 4 (char 3)"),
            ("-Inf", "Expecting value: line 1 column 1 (char 0)"),
            ("1e", "Extra data: line 1 column 2 (char 1)"),
            ("[1e5, 1E+2]xx", "Extra data: line 1 column 12 (char 11)"),
        ];
        for (text, want) in cases {
            assert_eq!(err(text), *want, "input {text:?}");
        }
    }

    #[test]
    fn deep_nesting_needs_no_deep_stack() {
        // 512 KiB holds ~250 levels of a recursive scanner in a debug build; the
        // value goes back to this thread because dropping it does recurse.
        let run = std::thread::Builder::new()
            .stack_size(512 * 1024)
            .spawn(|| {
                let half = MAX_DEPTH / 2;
                let ok = format!("{}1{}", "[{\"a\": ".repeat(half), "}]".repeat(half));
                let deep = format!("{{\"a\": {}", "[".repeat(MAX_DEPTH));
                (parse(&ok), parse(&deep))
            });
        let (ok, deep) = run.unwrap().join().unwrap();
        assert!(ok.is_ok());
        assert_eq!(deep, Err(ParseError::TooDeep("array")));
    }
}
