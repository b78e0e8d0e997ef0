//! Reading a policy file (docs/slo-policy.md §3.2): JSON as the reference reads it
//! (Python text mode, `json.loads` messages, duplicate keys refused), or the
//! same document written in TOML, judged identically.
//!
//! A file ending in `.toml` is TOML. Any other is JSON; only when it is not
//! valid JSON but is a TOML table with a `format` key is it read as TOML, so
//! a broken JSON file keeps the reference's message.

use std::path::Path;

use serde_json::{Map, Value};

use super::policy::{from_document, Policy};
use super::SloError;
use crate::py::json as pyjson;

/// Reads, parses and validates a policy file, and refuses a sliding
/// interval (every caller judges cases over their whole rate interval).
/// Messages name the file as `shown_as`, the path as the user typed it.
pub fn load_file(path: &Path, shown_as: &str) -> Result<Policy, SloError> {
    let fail = |message: String| SloError::Policy {
        path: shown_as.to_owned(),
        message,
    };
    let bytes = std::fs::read(path).map_err(|e| fail(strerror(&e)))?;
    let toml_by_name = path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("toml"));
    let syntax = if toml_by_name { "TOML" } else { "JSON" };
    let text = std::str::from_utf8(&bytes)
        .map_err(|e| fail(format!("not valid {syntax} ({})", utf8_message(&bytes, &e))))?;
    // Python's text mode turns `\r\n` and a lone `\r` into `\n`, which moves
    // the positions its JSON messages give.
    let text = crate::py::text::universal_newlines(text);
    let doc = if toml_by_name {
        // The TOML parser's message spans lines; an error is one line.
        parse_toml(&text).map_err(|d| {
            let one_line: Vec<&str> = d.lines().map(str::trim).filter(|l| !l.is_empty()).collect();
            fail(format!("not valid TOML ({})", one_line.join(": ")))
        })?
    } else {
        match parse_json(&text) {
            Ok(doc) => doc,
            Err(detail) => match parse_toml(&text) {
                Ok(doc) if doc.get("format").is_some() => doc,
                _ => return Err(fail(format!("not valid JSON ({detail})"))),
            },
        }
    };
    let policy = from_document(&doc).map_err(fail)?;
    policy.require_measured_window().map_err(fail)?;
    Ok(policy)
}

/// Python's `strerror` for an OS error: Rust's text without `(os error N)`.
fn strerror(e: &std::io::Error) -> String {
    let text = e.to_string();
    match text.rfind(" (os error ") {
        Some(i) if e.raw_os_error().is_some() => text[..i].to_owned(),
        _ => text,
    }
}

/// Python's `UnicodeDecodeError` text for the first invalid UTF-8 sequence.
fn utf8_message(bytes: &[u8], e: &std::str::Utf8Error) -> String {
    let pos = e.valid_up_to();
    let byte = bytes.get(pos).copied().unwrap_or(0);
    let (span, reason) = match e.error_len() {
        // A sequence cut short by the end of the file: Python names all its bytes.
        None => (bytes.len() - pos, "unexpected end of data"),
        Some(_) if matches!(byte, 0x80..=0xc1 | 0xf5..=0xff) => (1, "invalid start byte"),
        Some(_) => (1, "invalid continuation byte"),
    };
    if span > 1 {
        format!(
            "'utf-8' codec can't decode bytes in position {pos}-{}: {reason}",
            pos + span - 1
        )
    } else {
        format!("'utf-8' codec can't decode byte 0x{byte:02x} in position {pos}: {reason}")
    }
}

/// `json.loads` with a hook refusing repeated keys: the syntax error, or the
/// repeated keys of the first object that closes before it.
fn parse_json(text: &str) -> Result<Value, String> {
    let parsed = pyjson::parse(text);
    let limit = match &parsed {
        Ok(_) => usize::MAX,
        Err(pyjson::ParseError::Syntax { pos, .. }) => *pos,
        Err(_) => usize::MAX,
    };
    if let Some(message) = first_repeated_keys(text, limit) {
        return Err(message);
    }
    parsed.map_err(|e| e.to_string())
}

enum Frame {
    Object { keys: Vec<String>, want_key: bool },
    Array,
}

/// Walks JSON text that is valid up to character `limit` and returns the
/// message for the first object, in closing order, that repeats a key
/// (`<keys sorted, ", "> given more than once`). Python's hook runs as each
/// object closes, so an object closing before a syntax error wins over it.
fn first_repeated_keys(text: &str, limit: usize) -> Option<String> {
    let mut stack: Vec<Frame> = Vec::new();
    let mut chars = text.chars().enumerate().peekable();
    while let Some((i, c)) = chars.next() {
        if i >= limit {
            break;
        }
        match c {
            '{' => stack.push(Frame::Object {
                keys: Vec::new(),
                want_key: true,
            }),
            '[' => stack.push(Frame::Array),
            ']' => {
                stack.pop();
            }
            '}' => {
                if let Some(Frame::Object { mut keys, .. }) = stack.pop() {
                    keys.sort_unstable();
                    let mut repeated: Vec<String> = keys
                        .windows(2)
                        .filter(|w| w[0] == w[1])
                        .map(|w| w[0].clone())
                        .collect();
                    repeated.dedup();
                    if !repeated.is_empty() {
                        return Some(format!("{} given more than once", repeated.join(", ")));
                    }
                }
            }
            ',' => {
                if let Some(Frame::Object { want_key, .. }) = stack.last_mut() {
                    *want_key = true;
                }
            }
            '"' => {
                let s = read_string(&mut chars);
                if let Some(Frame::Object { keys, want_key }) = stack.last_mut() {
                    if *want_key {
                        keys.push(s);
                        *want_key = false;
                    }
                }
            }
            _ => {}
        }
    }
    None
}

/// The decoded text of a JSON string whose opening quote was just read.
fn read_string(chars: &mut impl Iterator<Item = (usize, char)>) -> String {
    let mut out = String::new();
    let mut pending_high: Option<u32> = None;
    while let Some((_, c)) = chars.next() {
        match c {
            '"' => break,
            '\\' => {
                let Some((_, e)) = chars.next() else { break };
                let decoded = match e {
                    'b' => '\u{8}',
                    'f' => '\u{c}',
                    'n' => '\n',
                    'r' => '\r',
                    't' => '\t',
                    'u' => {
                        let hex: String = chars.by_ref().take(4).map(|(_, h)| h).collect();
                        let unit = u32::from_str_radix(&hex, 16).unwrap_or(0xfffd);
                        if let Some(high) = pending_high.take() {
                            if (0xdc00..0xe000).contains(&unit) {
                                let code = 0x10000 + ((high - 0xd800) << 10) + (unit - 0xdc00);
                                out.push(char::from_u32(code).unwrap_or('\u{fffd}'));
                                continue;
                            }
                            out.push('\u{fffd}');
                        }
                        if (0xd800..0xdc00).contains(&unit) {
                            pending_high = Some(unit);
                            continue;
                        }
                        char::from_u32(unit).unwrap_or('\u{fffd}')
                    }
                    other => other,
                };
                if pending_high.take().is_some() {
                    out.push('\u{fffd}');
                }
                out.push(decoded);
            }
            c => {
                if pending_high.take().is_some() {
                    out.push('\u{fffd}');
                }
                out.push(c);
            }
        }
    }
    if pending_high.is_some() {
        out.push('\u{fffd}');
    }
    out
}

/// A TOML document as the JSON value it spells: integers stay integers,
/// floats floats (`nan`/`inf` as the non-finite sentinels), dates as text.
fn parse_toml(text: &str) -> Result<Value, String> {
    let table: toml::Table = text.parse().map_err(|e: toml::de::Error| {
        let place = e
            .span()
            .map(|span| {
                let before = &text[..span.start.min(text.len())];
                let line = before.matches('\n').count() + 1;
                let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
                format!(" at line {line} column {column}")
            })
            .unwrap_or_default();
        format!("{}{place}", e.message().trim_end())
    })?;
    Ok(toml_value(toml::Value::Table(table)))
}

fn toml_value(v: toml::Value) -> Value {
    match v {
        toml::Value::String(s) => Value::String(s),
        toml::Value::Integer(i) => Value::from(i),
        toml::Value::Float(f) => pyjson::nonfinite_value(f),
        toml::Value::Boolean(b) => Value::Bool(b),
        toml::Value::Datetime(d) => Value::String(d.to_string()),
        toml::Value::Array(items) => Value::Array(items.into_iter().map(toml_value).collect()),
        toml::Value::Table(t) => Value::Object(
            t.into_iter()
                .map(|(k, v)| (k, toml_value(v)))
                .collect::<Map<String, Value>>(),
        ),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::slo::digest;

    fn write(dir: &tempfile::TempDir, name: &str, body: &[u8]) -> std::path::PathBuf {
        let p = dir.path().join(name);
        std::fs::write(&p, body).unwrap();
        p
    }

    fn load_err(dir: &tempfile::TempDir, name: &str, body: &[u8]) -> (String, u8) {
        let p = write(dir, name, body);
        let e = load_file(&p, name).unwrap_err();
        (e.to_string(), e.exit().code())
    }

    const EXAMPLE_JSON: &str = r#"{
  "format": "stormlog.infer.slo",
  "version": 1,
  "name": "chat_interactive",
  "criteria": [
    {"metric": "ttft", "boundary": "client", "max_ms": 500, "attainment_target": 0.95},
    {"metric": "e2e", "boundary": "client", "max_ms": 4000.0},
    {"metric": "queue", "boundary": "server", "max_ms": 200}
  ],
  "attainment_target": 0.9,
  "population": "offered",
  "unknown_policy": "bounds",
  "interval": {"kind": "measured_window"}
}"#;

    const EXAMPLE_TOML: &str = r#"
format = "stormlog.infer.slo"
version = 1
name = "chat_interactive"
attainment_target = 0.9
population = "offered"
unknown_policy = "bounds"
interval = { kind = "measured_window" }

[[criteria]]
metric = "ttft"
boundary = "client"
max_ms = 500
attainment_target = 0.95

[[criteria]]
metric = "e2e"
boundary = "client"
max_ms = 4000.0

[[criteria]]
metric = "queue"
boundary = "server"
max_ms = 200
"#;

    #[test]
    fn json_and_toml_spell_the_same_policy() {
        let dir = tempfile::tempdir().unwrap();
        let j = load_file(&write(&dir, "p.json", EXAMPLE_JSON.as_bytes()), "p.json").unwrap();
        let t = load_file(&write(&dir, "p.toml", EXAMPLE_TOML.as_bytes()), "p.toml").unwrap();
        assert_eq!(j, t);
        assert_eq!(j.to_record(), t.to_record());
        assert_eq!(
            digest::digest(&t),
            "9dafa9907bcec776624b9b100facdc6cddd70939a77a05ac89117f6817dcb296"
        );
        // A TOML file without the extension is recognised by its content.
        let u = load_file(&write(&dir, "policy", EXAMPLE_TOML.as_bytes()), "policy").unwrap();
        assert_eq!(u, j);
    }

    #[test]
    fn shipped_examples_are_one_policy() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/slo");
        let j = load_file(&root.join("interactive.json"), "interactive.json").unwrap();
        let t = load_file(&root.join("interactive.toml"), "interactive.toml").unwrap();
        assert_eq!(j, t);
        assert_eq!(digest::digest(&j), digest::digest(&t));
    }

    #[test]
    fn file_errors() {
        let dir = tempfile::tempdir().unwrap();
        let e = load_file(&dir.path().join("missing.json"), "missing.json").unwrap_err();
        assert_eq!(
            (e.to_string(), e.exit().code()),
            (
                "SLO policy missing.json: No such file or directory".into(),
                5
            )
        );
        let e = load_file(dir.path(), "d").unwrap_err();
        assert_eq!(e.to_string(), "SLO policy d: Is a directory");
        // The conformance case slo_file_bad_json.
        assert_eq!(
            load_err(&dir, "slo.json", br#"{"format": "stormlog.infer.slo", "version": 1,"#),
            (
                "SLO policy slo.json: not valid JSON (Expecting property name enclosed in double quotes: line 1 column 47 (char 46))".into(),
                5
            )
        );
        assert_eq!(
            load_err(&dir, "e.json", b""),
            (
                "SLO policy e.json: not valid JSON (Expecting value: line 1 column 1 (char 0))"
                    .into(),
                5
            )
        );
        assert_eq!(
            load_err(&dir, "u.json", b"{\"a\xff\": 1}").0,
            "SLO policy u.json: not valid JSON ('utf-8' codec can't decode byte 0xff in position 3: invalid start byte)"
        );
        assert_eq!(
            load_err(&dir, "v.json", b"{\"a\": \"\xe2\x82").0,
            "SLO policy v.json: not valid JSON ('utf-8' codec can't decode bytes in position 7-8: unexpected end of data)"
        );
        // `\r\n` counts as one character, as in Python's text mode.
        assert_eq!(
            load_err(&dir, "crlf.json", b"{\r\n\"a\" 1}").0,
            "SLO policy crlf.json: not valid JSON (Expecting ':' delimiter: line 2 column 5 (char 6))"
        );
        assert_eq!(
            load_err(
                &dir,
                "dup.json",
                br#"{"version": 1, "version": 1, "name": "x", "name": "y", "format": 1}"#
            )
            .0,
            "SLO policy dup.json: not valid JSON (name, version given more than once)"
        );
        // The inner object closes first; one closing before a syntax error wins.
        assert_eq!(
            load_err(&dir, "dup2.json", br#"{"a": {"k": 1, "k": 2}, "a": 1, "#).0,
            "SLO policy dup2.json: not valid JSON (k given more than once)"
        );
        assert_eq!(
            load_err(&dir, "dup3.json", br#"{"a\u0062": 1, "ab": 2}"#).0,
            "SLO policy dup3.json: not valid JSON (ab given more than once)"
        );
        // Keys inside strings and arrays are not keys.
        assert_eq!(
            load_err(&dir, "arr.json", br#"{"format": "stormlog.infer.slo", "version": 1, "name": "x", "criteria": ["a", "a", {"metric": ",\"metric\"", "x": 1}]}"#).0,
            "SLO policy arr.json: criteria[0] must be an object"
        );
        assert_eq!(
            load_err(&dir, "nan.json", br#"{"format": "stormlog.infer.slo", "version": 1, "name": "x", "criteria": [{"metric": "ttft", "boundary": "client", "max_ms": NaN}]}"#).0,
            "SLO policy nan.json: criteria[0].max_ms must be a positive number of milliseconds"
        );
        assert_eq!(
            load_err(&dir, "big.json", br#"{"format": "stormlog.infer.slo", "version": 1, "name": "x", "criteria": [{"metric": "ttft", "boundary": "client", "max_ms": 1e999}]}"#).0,
            "SLO policy big.json: criteria[0].max_ms must be a positive number of milliseconds"
        );
        assert_eq!(
            load_err(&dir, "arr2.json", b"[]").0,
            "SLO policy arr2.json: the policy must be a JSON object"
        );
        assert_eq!(
            load_err(&dir, "live.json", br#"{"format": "stormlog.infer.slo", "version": 1, "name": "live", "criteria": [{"metric": "ttft", "boundary": "server", "max_ms": 250.5}], "interval": {"kind": "sliding", "seconds": 2.5}}"#),
            (
                "SLO policy live.json: a sliding interval of 2.5 s is judged online by a watcher; profile and analyze judge each case over its whole rate interval".into(),
                5
            )
        );
        let (msg, code) = load_err(
            &dir,
            "bad.toml",
            b"format = \"stormlog.infer.slo\"\nversion = 1\nversion = 2\n",
        );
        assert!(
            msg.starts_with("SLO policy bad.toml: not valid TOML ("),
            "{msg}"
        );
        assert!(msg.contains("line 3"), "{msg}");
        assert_eq!(code, 5);
        assert_eq!(
            load_err(
                &dir,
                "v.toml",
                b"format = \"stormlog.infer.slo\"\nversion = 1.5\n"
            )
            .0,
            "SLO policy v.toml: version must be 1"
        );
        assert_eq!(
            load_err(&dir, "n.toml", b"format = \"stormlog.infer.slo\"\nversion = 1\nname = \"x\"\ncriteria = [{metric = \"ttft\", boundary = \"client\", max_ms = nan}]\n").0,
            "SLO policy n.toml: criteria[0].max_ms must be a positive number of milliseconds"
        );
    }
}
