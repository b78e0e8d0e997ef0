//! Python-compatible JSON on top of `serde_json::Value`.
//!
//! The reference implementation reads and writes JSON with Python's `json`
//! module, and its quirks are part of the contract: it accepts the bare
//! tokens `NaN`/`Infinity`/`-Infinity`, reports syntax errors with its own
//! wording and character (not byte) positions, prints floats with Python's
//! `repr` and escapes everything outside ASCII. This module owns those rules:
//! parsing one document ([`parse`]), printing it back ([`dumps_pretty`],
//! [`dumps_compact`], [`dumps_with`], [`float_repr`]), and the value
//! semantics the analysis borrows from Python (truthiness, `==`, `str()`,
//! and the numeric helpers of spec `artifact.md` §6).
//!
//! `serde_json::Value` cannot hold a non-finite float, so NaN and ±∞ travel
//! as the sentinel strings [`NAN`], [`INF`] and [`NEG_INF`]; every helper
//! here treats them as floats, never as strings.

use serde_json::{Map, Value};

/// Sentinel standing for a float NaN (a control byte keeps it away from real text).
pub const NAN: &str = "\u{1}NaN";
/// Sentinel standing for float `+inf`.
pub const INF: &str = "\u{1}Infinity";
/// Sentinel standing for float `-inf`.
pub const NEG_INF: &str = "\u{1}-Infinity";

/// Python's recursion limit is about 1000 frames; nesting deeper than this
/// fails there with a `RecursionError`, and here with [`ParseError::TooDeep`]
/// instead of overflowing the stack.
const MAX_DEPTH: usize = 1000;

/// A float as a JSON value: finite floats become numbers, NaN and ±∞ become
/// the sentinel strings.
pub fn nonfinite_value(f: f64) -> Value {
    if f.is_nan() {
        Value::String(NAN.to_owned())
    } else if f.is_infinite() {
        Value::String(if f > 0.0 { INF } else { NEG_INF }.to_owned())
    } else {
        Value::from(f)
    }
}

/// Prefix of the sentinel standing for an integer serde_json cannot hold
/// (past 64 bits): the prefix, then the decimal digits. It prints as the
/// digits.
pub const BIG_INT: &str = "\u{1}int:";

/// An integer of any size as a JSON value: the [`BIG_INT`] sentinel.
pub fn big_int_value(digits: &str) -> Value {
    Value::String(format!("{BIG_INT}{digits}"))
}

/// The integer a [`BIG_INT`] sentinel stands for, if `v` is one.
pub fn big_int(v: &Value) -> Option<crate::py::Int> {
    match v {
        Value::String(s) => crate::py::Int::parse_literal(s.strip_prefix(BIG_INT)?),
        _ => None,
    }
}

/// Whether a string stands for a number (a NaN, ±∞ or big-integer sentinel).
pub fn is_sentinel(s: &str) -> bool {
    sentinel_f64(s).is_some() || s.starts_with(BIG_INT)
}

/// The value as a Python `str`, when it is one: a string that is no
/// sentinel (a NaN, ±∞ or a big integer stands for a number).
pub fn as_py_str(v: &Value) -> Option<&str> {
    match v {
        Value::String(s) if sentinel_f64(s).is_none() && !s.starts_with(BIG_INT) => Some(s),
        _ => None,
    }
}

/// The float a sentinel string stands for, if `s` is one.
pub fn sentinel_f64(s: &str) -> Option<f64> {
    match s {
        NAN => Some(f64::NAN),
        INF => Some(f64::INFINITY),
        NEG_INF => Some(f64::NEG_INFINITY),
        _ => None,
    }
}

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

/// Python `json.dumps(v, indent=2, sort_keys=True)`, without trailing newline.
pub fn dumps_pretty(v: &Value) -> String {
    dumps_with(v, Some(2), ",", ": ")
}

/// Python `json.dumps(v, sort_keys=True)`: one line, `", "` and `": "`.
pub fn dumps_compact(v: &Value) -> String {
    dumps_with(v, None, ", ", ": ")
}

/// Python `json.dumps(v, indent=indent, separators=(item_sep, key_sep),
/// sort_keys=True)` with the default `ensure_ascii=True, allow_nan=True`.
/// Keys come out sorted because `Map` is a `BTreeMap`, whose byte order on
/// UTF-8 equals Python's code point order.
pub fn dumps_with(v: &Value, indent: Option<usize>, item_sep: &str, key_sep: &str) -> String {
    let mut out = String::new();
    let style = Style {
        indent,
        item_sep,
        key_sep,
    };
    write_value(&mut out, v, &style, 0);
    out
}

struct Style<'a> {
    indent: Option<usize>,
    item_sep: &'a str,
    key_sep: &'a str,
}

impl Style<'_> {
    fn newline(&self, out: &mut String, level: usize) {
        if let Some(n) = self.indent {
            out.push('\n');
            out.extend(std::iter::repeat_n(' ', n * level));
        }
    }
}

fn write_value(out: &mut String, v: &Value, style: &Style, level: usize) {
    match v {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => out.push_str(&number_repr(n)),
        Value::String(s) => match (sentinel_f64(s), s.strip_prefix(BIG_INT)) {
            (Some(f), _) => out.push_str(&float_repr(f)),
            (None, Some(digits)) => out.push_str(digits),
            (None, None) => write_json_string(out, s),
        },
        Value::Array(items) if items.is_empty() => out.push_str("[]"),
        Value::Object(map) if map.is_empty() => out.push_str("{}"),
        Value::Array(items) => {
            let items = items.iter().map(|item| (None, item));
            write_container(out, ['[', ']'], items, style, level);
        }
        Value::Object(map) => {
            let items = map.iter().map(|(key, item)| (Some(key), item));
            write_container(out, ['{', '}'], items, style, level);
        }
    }
}

/// A non-empty list or dict (Python prints empty ones without a newline).
fn write_container<'a>(
    out: &mut String,
    brackets: [char; 2],
    items: impl Iterator<Item = (Option<&'a String>, &'a Value)>,
    style: &Style,
    level: usize,
) {
    out.push(brackets[0]);
    for (i, (key, item)) in items.enumerate() {
        if i > 0 {
            out.push_str(style.item_sep);
        }
        style.newline(out, level + 1);
        if let Some(key) = key {
            write_json_string(out, key);
            out.push_str(style.key_sep);
        }
        write_value(out, item, style, level + 1);
    }
    style.newline(out, level);
    out.push(brackets[1]);
}

/// Python's `ensure_ascii` string encoding: short escapes for the usual
/// controls, `\u00XX` (lowercase) for other controls, DEL and non-ASCII,
/// surrogate pairs above U+FFFF; `/` stays as is.
pub fn write_json_string(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            ' '..='~' => out.push(c),
            _ => {
                let mut units = [0u16; 2];
                for unit in c.encode_utf16(&mut units) {
                    out.push_str(&format!("\\u{unit:04x}"));
                }
            }
        }
    }
    out.push('"');
}

fn number_repr(n: &serde_json::Number) -> String {
    if let Some(i) = n.as_i64() {
        i.to_string()
    } else if let Some(u) = n.as_u64() {
        u.to_string()
    } else {
        float_repr(n.as_f64().unwrap_or(f64::NAN))
    }
}

/// Python `repr(float)` (shortest round-trip digits; scientific notation when
/// the decimal exponent is outside [-4, 16)), with the JSON spellings `NaN`,
/// `Infinity`, `-Infinity` for non-finite values.
pub fn float_repr(f: f64) -> String {
    if f.is_nan() {
        return "NaN".to_owned();
    }
    if f.is_infinite() {
        return if f > 0.0 { "Infinity" } else { "-Infinity" }.to_owned();
    }
    let sign = if f.is_sign_negative() { "-" } else { "" };
    if f == 0.0 {
        return format!("{sign}0.0");
    }
    let (digits, point) = shortest_digits(f.abs());
    let n = digits.len() as i32;
    let exp = point - 1;
    let body = if (-4..16).contains(&exp) {
        if point <= 0 {
            format!("0.{}{digits}", "0".repeat((-point) as usize))
        } else if point >= n {
            format!("{digits}{}.0", "0".repeat((point - n) as usize))
        } else {
            let (int, frac) = digits.split_at(point as usize);
            format!("{int}.{frac}")
        }
    } else {
        let (first, rest) = digits.split_at(1);
        let dot = if rest.is_empty() { "" } else { "." };
        let esign = if exp < 0 { '-' } else { '+' };
        format!("{first}{dot}{rest}e{esign}{:02}", exp.abs())
    };
    format!("{sign}{body}")
}

/// Shortest round-trip significant digits of a positive finite `f` (from
/// ryu) and the position of the decimal point relative to them:
/// `f = 0.DIGITS × 10^point`.
fn shortest_digits(f: f64) -> (String, i32) {
    let mut buf = ryu::Buffer::new();
    let text = buf.format_finite(f);
    let (mantissa, exp) = match text.split_once(['e', 'E']) {
        Some((m, e)) => (m, e.parse::<i32>().unwrap_or(0)),
        None => (text, 0),
    };
    let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let all = format!("{int}{frac}");
    let trimmed = all.trim_start_matches('0');
    let lead = (all.len() - trimmed.len()) as i32;
    let digits = trimmed.trim_end_matches('0');
    let digits = if digits.is_empty() { "0" } else { digits };
    (digits.to_owned(), int.len() as i32 - lead + exp)
}

static NULL: Value = Value::Null;

/// `v.get(key)` with Python's "get or None": absent key or non-object → null.
pub fn get<'a>(v: &'a Value, key: &str) -> &'a Value {
    v.get(key).unwrap_or(&NULL)
}

/// Spec §6 `is_number`: a JSON integer or a finite float; not a bool or sentinel.
pub fn is_number(v: &Value) -> bool {
    matches!(v, Value::Number(_)) || big_int(v).is_some()
}

/// `float(i)` of a [`BIG_INT`] sentinel (±∞ past the floats' range).
fn big_f64(v: &Value) -> Option<f64> {
    let i = big_int(v)?;
    Some(i.to_f64().unwrap_or(if i.is_negative() {
        f64::NEG_INFINITY
    } else {
        f64::INFINITY
    }))
}

/// Spec §6 `is_real`: any number, NaN/±∞ sentinels included; not a bool.
pub fn real(v: &Value) -> Option<f64> {
    match v {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => sentinel_f64(s).or_else(|| big_f64(v)),
        _ => None,
    }
}

/// `float(v)` for values where [`is_number`] holds.
pub fn number(v: &Value) -> Option<f64> {
    match v {
        Value::Number(n) => n.as_f64(),
        Value::String(_) => big_f64(v),
        _ => None,
    }
}

/// A JSON integer (not a bool, not a float such as `1.0`).
pub fn is_int(v: &Value) -> bool {
    matches!(v, Value::Number(n) if n.is_i64() || n.is_u64()) || big_int(v).is_some()
}

/// Spec §6 `int_value`: integers as is (saturating beyond i64), finite floats
/// truncated toward zero, anything else 0.
pub fn int_value(v: &Value) -> i64 {
    if let Some(i) = big_int(v) {
        return if i.is_negative() { i64::MIN } else { i64::MAX };
    }
    match v {
        Value::Number(n) => match (n.as_i64(), n.as_u64(), n.as_f64()) {
            (Some(i), _, _) => i,
            (None, Some(u), _) => i64::try_from(u).unwrap_or(i64::MAX),
            // `as` saturates, like the clamping a caller of an i64 API expects.
            (None, None, Some(f)) => f.trunc() as i64,
            _ => 0,
        },
        _ => 0,
    }
}

/// Python truthiness; a NaN or ±∞ sentinel is a non-zero float, so true.
pub fn truthy(v: &Value) -> bool {
    match v {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_f64().is_some_and(|f| f != 0.0),
        Value::String(s) => !s.is_empty(),
        Value::Array(a) => !a.is_empty(),
        Value::Object(m) => !m.is_empty(),
    }
}

/// Python `str(v)` (spec §6 "string form"): strings as is, everything else
/// as `repr`. Non-finite floats print as Python does (`nan`, `inf`).
/// Dicts print in key order, not the file's insertion order Python keeps.
pub fn str_form(v: &Value) -> String {
    match v {
        Value::String(s) if sentinel_f64(s).is_none() && !s.starts_with(BIG_INT) => s.clone(),
        _ => {
            let mut out = String::new();
            write_repr(&mut out, v);
            out
        }
    }
}

fn write_repr(out: &mut String, v: &Value) {
    match v {
        Value::Null => out.push_str("None"),
        Value::Bool(b) => out.push_str(if *b { "True" } else { "False" }),
        Value::Number(n) => out.push_str(&number_repr(n)),
        Value::String(s) => match (sentinel_f64(s), s.strip_prefix(BIG_INT)) {
            (Some(f), _) if f.is_nan() => out.push_str("nan"),
            (Some(f), _) => out.push_str(if f > 0.0 { "inf" } else { "-inf" }),
            (None, Some(digits)) => out.push_str(digits),
            (None, None) => write_py_str_repr(out, s),
        },
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_repr(out, item);
            }
            out.push(']');
        }
        Value::Object(map) => {
            out.push('{');
            for (i, (key, item)) in map.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_py_str_repr(out, key);
                out.push_str(": ");
                write_repr(out, item);
            }
            out.push('}');
        }
    }
}

/// Python `repr(str)`: single quotes unless the text has `'` and no `"`.
/// Printability of non-ASCII is approximated (controls, separators and a few
/// format characters are escaped; Rust's std has no Unicode categories).
fn write_py_str_repr(out: &mut String, s: &str) {
    let quote = if s.contains('\'') && !s.contains('"') {
        '"'
    } else {
        '\''
    };
    out.push(quote);
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c == quote => {
                out.push('\\');
                out.push(c);
            }
            c if !py_printable(c) => {
                let n = c as u32;
                let esc = if n < 0x100 {
                    format!("\\x{n:02x}")
                } else if n < 0x10000 {
                    format!("\\u{n:04x}")
                } else {
                    format!("\\U{n:08x}")
                };
                out.push_str(&esc);
            }
            c => out.push(c),
        }
    }
    out.push(quote);
}

fn py_printable(c: char) -> bool {
    !(c.is_control()
        || matches!(c, '\u{a0}' | '\u{ad}' | '\u{2000}'..='\u{200f}' | '\u{2028}'..='\u{202f}')
        || matches!(c, '\u{205f}'..='\u{206f}' | '\u{3000}' | '\u{feff}' | '\u{fff9}'..='\u{fffb}')
        || matches!(c, '\u{e000}'..='\u{f8ff}'))
}

/// A value as a Python number, if it is one (bools are ints, sentinels floats).
enum PyNum {
    Int(i128),
    Float(f64),
}

fn py_num(v: &Value) -> Option<PyNum> {
    match v {
        Value::Bool(b) => Some(PyNum::Int(i128::from(*b))),
        Value::Number(n) => Some(match (n.as_i64(), n.as_u64()) {
            (Some(i), _) => PyNum::Int(i128::from(i)),
            (None, Some(u)) => PyNum::Int(i128::from(u)),
            _ => PyNum::Float(n.as_f64().unwrap_or(f64::NAN)),
        }),
        Value::String(s) => match (sentinel_f64(s), big_int(v)) {
            (Some(f), _) => Some(PyNum::Float(f)),
            (None, Some(crate::py::Int::Small(i))) => Some(PyNum::Int(i)),
            (None, Some(big)) => big.to_f64().map(PyNum::Float),
            (None, None) => None,
        },
        _ => None,
    }
}

/// Python `a == b`: numbers compare by value across int/float/bool (`1 == 1.0`,
/// `True == 1`), containers deeply. NaN is unequal to itself at top level but
/// equal inside containers, because `json` decodes every `NaN` to one shared
/// float object and container comparison checks identity first.
pub fn py_eq(a: &Value, b: &Value) -> bool {
    eq_at(a, b, false)
}

/// Python `a == b` of two dicts (their values compare as inside a container).
pub fn py_eq_nested_maps(
    a: &serde_json::Map<String, Value>,
    b: &serde_json::Map<String, Value>,
) -> bool {
    a.len() == b.len()
        && a.iter()
            .all(|(k, p)| b.get(k).is_some_and(|q| eq_at(p, q, true)))
}

fn eq_at(a: &Value, b: &Value, nested: bool) -> bool {
    if let (Some(x), Some(y)) = (py_num(a), py_num(b)) {
        return match (x, y) {
            (PyNum::Int(x), PyNum::Int(y)) => x == y,
            (PyNum::Float(x), PyNum::Float(y)) => x == y || (nested && x.is_nan() && y.is_nan()),
            (PyNum::Int(i), PyNum::Float(f)) | (PyNum::Float(f), PyNum::Int(i)) => {
                // Exact comparison, as Python does: no rounding of the int.
                f.fract() == 0.0 && f.abs() < 1.8e19 && f as i128 == i
            }
        };
    }
    match (a, b) {
        (Value::Null, Value::Null) => true,
        (Value::String(x), Value::String(y)) => x == y,
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| eq_at(p, q, true))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, p)| y.get(k).is_some_and(|q| eq_at(p, q, true)))
        }
        _ => false,
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    fn err(text: &str) -> String {
        parse(text).unwrap_err().to_string()
    }

    #[test]
    fn float_repr_matches_python() {
        // Expected strings printed by CPython 3.11 `repr(float)`.
        #[rustfmt::skip]
        let cases: &[(f64, &str)] = &[
            (5.0, "5.0"), (1000000000000000.0, "1000000000000000.0"), (1e16, "1e+16"),
            (1.2345678901234568e17, "1.2345678901234568e+17"),
            (123456789012345680.0, "1.2345678901234568e+17"), (1e-5, "1e-05"), (1.5e-7, "1.5e-07"),
            (1e-7, "1e-07"), (-0.0, "-0.0"), (0.0, "0.0"), (0.1, "0.1"), (1e22, "1e+22"),
            (0.0001, "0.0001"), (0.00001, "1e-05"), (2.5e-05, "2.5e-05"),
            (1.7976931348623157e308, "1.7976931348623157e+308"), (5e-324, "5e-324"),
            (9999999999999998.0, "9999999999999998.0"), (0.3, "0.3"),
            (2.0 / 3.0, "0.6666666666666666"), (-1.5, "-1.5"), (100.0, "100.0"), (1e100, "1e+100"),
            (12345.678, "12345.678"), (f64::NAN, "NaN"), (f64::INFINITY, "Infinity"),
            (f64::NEG_INFINITY, "-Infinity"),
        ];
        for (f, want) in cases {
            assert_eq!(float_repr(*f), *want, "repr of {f:e}");
        }
    }

    fn sample() -> Value {
        let mut v = json!({
            "b": [1, 2.5, {"z": null, "a": true}],
            "a": "é😀\u{1}\u{7f}\"\\/\n\r\t\u{8}\u{c}",
            "e": {}, "l": [], "n": -0.0, "big": 1e22, "i": -12,
        });
        v["x"] = json!([NAN, INF, NEG_INF]);
        v
    }

    #[test]
    fn dumps_match_python_bytes() {
        // json.dumps(v, indent=2, sort_keys=True) and json.dumps(v, sort_keys=True)
        // from CPython 3.11 for the same value (NaN/inf as real floats).
        let pretty = "{\n  \"a\": \"\\u00e9\\ud83d\\ude00\\u0001\\u007f\\\"\\\\/\\n\\r\\t\\b\\f\",\n  \"b\": [\n    1,\n    2.5,\n    {\n      \"a\": true,\n      \"z\": null\n    }\n  ],\n  \"big\": 1e+22,\n  \"e\": {},\n  \"i\": -12,\n  \"l\": [],\n  \"n\": -0.0,\n  \"x\": [\n    NaN,\n    Infinity,\n    -Infinity\n  ]\n}";
        let compact = "{\"a\": \"\\u00e9\\ud83d\\ude00\\u0001\\u007f\\\"\\\\/\\n\\r\\t\\b\\f\", \"b\": [1, 2.5, {\"a\": true, \"z\": null}], \"big\": 1e+22, \"e\": {}, \"i\": -12, \"l\": [], \"n\": -0.0, \"x\": [NaN, Infinity, -Infinity]}";
        assert_eq!(dumps_pretty(&sample()), pretty);
        assert_eq!(dumps_compact(&sample()), compact);
        assert_eq!(dumps_pretty(&json!({})), "{}");
        assert_eq!(dumps_compact(&json!([])), "[]");
        assert_eq!(
            dumps_with(&json!({"b": [1, "x"], "a": 1}), None, ",", ":"),
            r#"{"a":1,"b":[1,"x"]}"#
        );
    }

    #[test]
    fn dumps_round_trips_through_parse() {
        let v = sample();
        assert_eq!(parse(&dumps_compact(&v)).unwrap(), v);
        assert_eq!(parse(&dumps_pretty(&v)).unwrap(), v);
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

    #[test]
    fn numeric_helpers_follow_spec_section_6() {
        #[rustfmt::skip]
        let v = json!([3, 2.5, true, null, "s", NAN, -2.7, INF, 18446744073709551615u64]);
        let is_num: Vec<bool> = v.as_array().unwrap().iter().map(is_number).collect();
        assert_eq!(
            is_num,
            [true, true, false, false, false, false, true, false, true]
        );
        assert_eq!(real(&v[5]).map(f64::is_nan), Some(true));
        assert_eq!(real(&v[7]), Some(f64::INFINITY));
        assert_eq!(real(&v[2]), None);
        assert_eq!(number(&v[0]), Some(3.0));
        assert_eq!(number(&v[5]), None);
        let ints: Vec<i64> = v.as_array().unwrap().iter().map(int_value).collect();
        assert_eq!(ints, [3, 2, 0, 0, 0, 0, -2, 0, i64::MAX]);
        assert!(is_int(&v[0]) && !is_int(&v[1]) && !is_int(&v[2]) && !is_int(&json!(1.0)));
        assert_eq!(nonfinite_value(f64::NEG_INFINITY), json!(NEG_INF));
        assert_eq!(nonfinite_value(1.5), json!(1.5));
    }

    #[test]
    fn truthiness_and_get() {
        let falsy = json!([null, false, 0, 0.0, -0.0, "", [], {}]);
        assert!(falsy.as_array().unwrap().iter().all(|x| !truthy(x)));
        let truthy_vals = json!([true, 1, -0.5, "0", [0], {"a": null}, NAN, NEG_INF]);
        assert!(truthy_vals.as_array().unwrap().iter().all(truthy));
        let obj = json!({"a": 1});
        assert_eq!(get(&obj, "a"), &json!(1));
        assert!(get(&obj, "b").is_null());
        assert!(get(&json!([1]), "a").is_null());
    }

    #[test]
    fn str_form_matches_python_str() {
        assert_eq!(str_form(&json!("abc")), "abc");
        assert_eq!(str_form(&json!(null)), "None");
        assert_eq!(str_form(&json!(true)), "True");
        assert_eq!(str_form(&json!(-12)), "-12");
        assert_eq!(str_form(&json!(1.0)), "1.0");
        assert_eq!(str_form(&json!(1e16)), "1e+16");
        assert_eq!(str_form(&json!(NAN)), "nan");
        // repr([1, 'a', None, True, 1.0, "it's", {'a': 1, 'b': [2]}, nan, -inf,
        //       'x"y', 'a\'b"c', '\n\x01é']) in CPython 3.11:
        let v = json!([1, "a", null, true, 1.0, "it's", {"a": 1, "b": [2]}, NAN, NEG_INF,
            "x\"y", "a'b\"c", "\n\u{1}é"]);
        assert_eq!(
            str_form(&v),
            r#"[1, 'a', None, True, 1.0, "it's", {'a': 1, 'b': [2]}, nan, -inf, 'x"y', 'a\'b"c', '\n\x01é']"#
        );
    }

    #[test]
    fn py_eq_follows_python() {
        assert!(py_eq(&json!(1), &json!(1.0)));
        assert!(py_eq(&json!(true), &json!(1)));
        assert!(py_eq(&json!(false), &json!(0.0)));
        assert!(!py_eq(&json!(1), &json!("1")));
        assert!(!py_eq(&json!(null), &json!(0)));
        assert!(!py_eq(
            &json!(9007199254740993i64),
            &json!(9007199254740992.0)
        ));
        assert!(py_eq(&json!({"a": [1, 2.0]}), &json!({"a": [1.0, 2]})));
        assert!(!py_eq(&json!({"a": 1}), &json!({"a": 1, "b": 2})));
        assert!(!py_eq(&json!([1, 2]), &json!([2, 1])));
        assert!(!py_eq(&json!(NAN), &json!(NAN)));
        assert!(py_eq(&json!([NAN]), &json!([NAN])));
        assert!(py_eq(&json!(INF), &json!(INF)));
        assert!(!py_eq(&json!(NAN), &json!(1)));
    }
}
