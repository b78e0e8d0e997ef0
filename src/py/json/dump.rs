//! Python's `json.dumps` with `sort_keys=True` and the default
//! `ensure_ascii=True, allow_nan=True`: layout, string escaping, numbers.

use serde_json::Value;

use super::{number_repr, sentinel_f64, BIG_INT};
use crate::py::float::float_repr;

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

/// [`dumps_compact`] appended to `out`.
pub fn write_compact(out: &mut String, v: &Value) {
    let style = Style {
        indent: None,
        item_sep: ", ",
        key_sep: ": ",
    };
    write_value(out, v, &style, 0);
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

/// A string as Python's `json.dumps` writes it (quotes included).
pub fn json_string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    write_json_string(&mut out, s);
    out
}

/// Python's `ensure_ascii` string encoding: short escapes for the usual
/// controls, `\u00XX` (lowercase) for other controls, DEL and non-ASCII,
/// surrogate pairs above U+FFFF; `/` stays as is. Appends to `out`.
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

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::py::json::{parse, INF, NAN, NEG_INF};
    use serde_json::json;

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
    fn json_string_is_the_ensure_ascii_literal() {
        // json.dumps(s) in CPython 3.11.
        #[rustfmt::skip]
        let cases: &[(&str, &str)] = &[
            ("a/b", r#""a/b""#), ("\u{1}\u{1f}\u{7f}", r#""\u0001\u001f\u007f""#),
            ("\u{85}\u{2028}é", r#""\u0085\u2028\u00e9""#), ("😀", r#""\ud83d\ude00""#),
            ("\"\\\n\r\t\u{8}\u{c}", r#""\"\\\n\r\t\b\f""#), (NAN, r#""\u0001NaN""#),
        ];
        for &(s, want) in cases {
            assert_eq!(json_string(s), want, "{s:?}");
        }
    }
}
