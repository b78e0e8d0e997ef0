//! An ordered JSON tree for the comparison report.
//!
//! The reference writes this report with `json.dumps(report, indent=2)`
//! without `sort_keys`, so its keys come out in the order it built them.
//! `serde_json::Map` sorts, so the report is built as a [`J`] tree that
//! keeps insertion order and prints like Python; values copied from an
//! artifact (labels, configuration leaves) stay `serde_json::Value`s.

use serde_json::Value;

use crate::py::json as pyjson;

/// One JSON value whose objects keep their keys in insertion order.
#[derive(Debug, Clone, PartialEq)]
pub enum J {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
    Arr(Vec<J>),
    Obj(Vec<(String, J)>),
    /// A value read from an artifact, printed with its keys sorted.
    Raw(Value),
}

impl From<bool> for J {
    fn from(b: bool) -> Self {
        J::Bool(b)
    }
}
impl From<i64> for J {
    fn from(i: i64) -> Self {
        J::Int(i)
    }
}
impl From<usize> for J {
    fn from(i: usize) -> Self {
        J::Int(i64::try_from(i).unwrap_or(i64::MAX))
    }
}
impl From<f64> for J {
    fn from(f: f64) -> Self {
        J::Float(f)
    }
}
impl From<&str> for J {
    fn from(s: &str) -> Self {
        J::Str(s.to_owned())
    }
}
impl From<String> for J {
    fn from(s: String) -> Self {
        J::Str(s)
    }
}
impl From<&String> for J {
    fn from(s: &String) -> Self {
        J::Str(s.clone())
    }
}
impl From<Value> for J {
    fn from(v: Value) -> Self {
        J::Raw(v)
    }
}
impl<T: Into<J>> From<Option<T>> for J {
    fn from(o: Option<T>) -> Self {
        o.map_or(J::Null, Into::into)
    }
}
impl<T: Into<J>> From<Vec<T>> for J {
    fn from(v: Vec<T>) -> Self {
        J::Arr(v.into_iter().map(Into::into).collect())
    }
}

/// An object from `(key, value)` pairs, in order.
pub fn obj<const N: usize>(pairs: [(&str, J); N]) -> J {
    J::Obj(pairs.into_iter().map(|(k, v)| (k.to_owned(), v)).collect())
}

impl J {
    /// The value at `key` of an object (`Null` when absent or not an object).
    pub fn get(&self, key: &str) -> &J {
        static NULL: J = J::Null;
        match self {
            J::Obj(items) => items
                .iter()
                .find(|(k, _)| k == key)
                .map_or(&NULL, |(_, v)| v),
            _ => &NULL,
        }
    }

    /// Adds (or replaces) a key of an object.
    pub fn set(&mut self, key: &str, value: J) {
        if let J::Obj(items) = self {
            if let Some(slot) = items.iter_mut().find(|(k, _)| k == key) {
                slot.1 = value;
            } else {
                items.push((key.to_owned(), value));
            }
        }
    }

    /// The same tree as a `serde_json::Value` (keys sorted, NaN and ±∞ as
    /// pyjson's sentinels).
    pub fn to_value(&self) -> Value {
        match self {
            J::Null => Value::Null,
            J::Bool(b) => Value::Bool(*b),
            J::Int(i) => Value::from(*i),
            J::Float(f) => pyjson::nonfinite_value(*f),
            J::Str(s) => Value::String(s.clone()),
            J::Arr(items) => Value::Array(items.iter().map(J::to_value).collect()),
            J::Obj(items) => Value::Object(
                items
                    .iter()
                    .map(|(k, v)| (k.clone(), v.to_value()))
                    .collect(),
            ),
            J::Raw(v) => v.clone(),
        }
    }

    /// `json.dumps(self, indent=2)`: Python's layout and float spelling, keys
    /// in insertion order.
    pub fn dumps_pretty(&self) -> String {
        let mut out = String::new();
        self.write(&mut out, 0);
        out
    }

    fn write(&self, out: &mut String, level: usize) {
        match self {
            J::Null => out.push_str("null"),
            J::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
            J::Int(i) => out.push_str(&i.to_string()),
            J::Float(f) => out.push_str(&pyjson::float_repr(*f)),
            J::Str(s) => out.push_str(&pyjson::json_string(s)),
            J::Raw(v) => {
                // A nested document indents from where it sits.
                let text = pyjson::dumps_pretty(v);
                out.push_str(&text.replace('\n', &format!("\n{}", "  ".repeat(level))));
            }
            J::Arr(items) if items.is_empty() => out.push_str("[]"),
            J::Obj(items) if items.is_empty() => out.push_str("{}"),
            J::Arr(items) => {
                out.push('[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    newline(out, level + 1);
                    item.write(out, level + 1);
                }
                newline(out, level);
                out.push(']');
            }
            J::Obj(items) => {
                out.push('{');
                for (i, (key, item)) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    newline(out, level + 1);
                    out.push_str(&pyjson::json_string(key));
                    out.push_str(": ");
                    item.write(out, level + 1);
                }
                newline(out, level);
                out.push('}');
            }
        }
    }
}

fn newline(out: &mut String, level: usize) {
    out.push('\n');
    out.push_str(&"  ".repeat(level));
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn prints_like_python_in_insertion_order() {
        let tree = obj([
            ("b", J::Int(1)),
            ("a", J::Arr(vec![J::Float(0.5), J::Null])),
            ("e", J::Arr(vec![])),
            ("r", J::Raw(serde_json::json!({"z": 1, "y": [true]}))),
        ]);
        let expected = "{\n  \"b\": 1,\n  \"a\": [\n    0.5,\n    null\n  ],\n  \"e\": [],\n  \"r\": {\n    \"y\": [\n      true\n    ],\n    \"z\": 1\n  }\n}";
        assert_eq!(tree.dumps_pretty(), expected);
    }
}
