//! Python built-ins over decoded JSON, as the vLLM record parsers inherit them from
//! the reference: `float()`, `int()`, `tuple()`, `dict()` and subscripting of
//! decoded JSON, each with the error text Python gives (docs/artifact.md §3.12:
//! the reason after `invalid <type> record <i>: ` is that text).

use serde_json::{Map, Value};

use crate::py::json as pyjson;

/// Python's type name of a decoded JSON value (`NaN`/`±∞` sentinels are floats).
pub fn type_name(v: &Value) -> &'static str {
    crate::py::value::type_name(v)
}

/// The value as a Python `str`, when it is one (a sentinel is a float).
pub fn as_str(v: &Value) -> Option<&str> {
    pyjson::as_py_str(v)
}

/// Python `repr` of a string.
pub fn repr_str(s: &str) -> String {
    let list = pyjson::str_form(&Value::Array(vec![Value::String(s.to_owned())]));
    list[1..list.len() - 1].to_owned()
}

/// `record[key]` on a decoded value: a `KeyError` (the key's repr) when an
/// object lacks it, the `TypeError` Python raises for other containers.
pub fn subscript<'a>(v: &'a Value, key: &str) -> Result<&'a Value, String> {
    match v {
        Value::Object(m) => m.get(key).ok_or_else(|| repr_str(key)),
        Value::Array(_) => Err("list indices must be integers or slices, not str".into()),
        Value::String(_) if as_str(v).is_some() => {
            Err("string indices must be integers, not 'str'".into())
        }
        other => Err(format!(
            "'{}' object is not subscriptable",
            type_name(other)
        )),
    }
}

/// `v.items()` on something that must be an object.
pub fn items(v: &Value) -> Result<&Map<String, Value>, String> {
    match v {
        Value::Object(m) => Ok(m),
        other => Err(format!(
            "'{}' object has no attribute 'items'",
            type_name(other)
        )),
    }
}

/// Iterating a value the way `for x in v` does.
pub fn iterate(v: &Value) -> Result<Vec<Value>, String> {
    match v {
        Value::Array(items) => Ok(items.clone()),
        Value::Object(m) => Ok(m.keys().map(|k| Value::String(k.clone())).collect()),
        Value::String(s) if as_str(v).is_some() => {
            Ok(s.chars().map(|c| Value::String(c.to_string())).collect())
        }
        other => Err(format!("'{}' object is not iterable", type_name(other))),
    }
}

/// `a, b = v` (tuple unpacking into two names).
pub fn unpack2(v: &Value) -> Result<(Value, Value), String> {
    let parts = match v {
        Value::Array(_) | Value::Object(_) => iterate(v)?,
        Value::String(_) if as_str(v).is_some() => iterate(v)?,
        other => {
            return Err(format!(
                "cannot unpack non-iterable {} object",
                type_name(other)
            ))
        }
    };
    match parts.len() {
        2 => {
            let mut it = parts.into_iter();
            match (it.next(), it.next()) {
                (Some(a), Some(b)) => Ok((a, b)),
                _ => Err("not enough values to unpack (expected 2, got 0)".into()),
            }
        }
        n if n < 2 => Err(format!("not enough values to unpack (expected 2, got {n})")),
        _ => Err("too many values to unpack (expected 2)".into()),
    }
}

/// `float(v)` for a non-string value.
pub fn float(v: &Value) -> Result<f64, String> {
    if let Some(f) = pyjson::real(v) {
        return Ok(f);
    }
    match v {
        Value::Bool(b) => Ok(if *b { 1.0 } else { 0.0 }),
        other => Err(format!(
            "float() argument must be a string or a real number, not '{}'",
            type_name(other)
        )),
    }
}

/// The result of `dict(v)`: pairs in order, or the error Python raises.
/// Keys are kept as values so the caller can reject non-string ones with
/// its own message.
pub fn dict(v: &Value) -> Result<Vec<(Value, Value)>, String> {
    match v {
        Value::Object(m) => Ok(m
            .iter()
            .map(|(k, x)| (Value::String(k.clone()), x.clone()))
            .collect()),
        Value::Array(_) | Value::String(_) if matches!(type_name(v), "list" | "str") => {
            let mut pairs = Vec::new();
            for (i, element) in iterate(v)?.iter().enumerate() {
                let parts = match element {
                    Value::Array(_) | Value::Object(_) => iterate(element)?,
                    Value::String(_) if as_str(element).is_some() => iterate(element)?,
                    _ => {
                        return Err(format!(
                            "cannot convert dictionary update sequence element #{i} to a sequence"
                        ))
                    }
                };
                if parts.len() != 2 {
                    return Err(format!(
                        "dictionary update sequence element #{i} has length {}; 2 is required",
                        parts.len()
                    ));
                }
                let key = parts[0].clone();
                if matches!(key, Value::Array(_) | Value::Object(_)) {
                    return Err(format!("unhashable type: '{}'", type_name(&key)));
                }
                pairs.push((key, parts[1].clone()));
            }
            Ok(pairs)
        }
        other => Err(format!("'{}' object is not iterable", type_name(other))),
    }
}

/// `dict(v or {})` as an object with string keys; `Ok(None)` when a key is
/// not a string (the caller words that error).
pub fn dict_or_empty(v: &Value) -> Result<Option<Map<String, Value>>, String> {
    if !pyjson::truthy(v) {
        return Ok(Some(Map::new()));
    }
    let mut out = Map::new();
    for (k, x) in dict(v)? {
        match as_str(&k) {
            Some(k) => {
                out.insert(k.to_owned(), x);
            }
            None => return Ok(None),
        }
    }
    Ok(Some(out))
}

/// An integer value as i128 (JSON ints only; not bools or floats).
pub fn int128(v: &Value) -> Option<i128> {
    match v {
        Value::Number(n) => n
            .as_i64()
            .map(i128::from)
            .or_else(|| n.as_u64().map(i128::from)),
        _ => None,
    }
}

/// The tail of CPython's `TypeError` for a call that lacks arguments:
/// "missing N required {kind} argument(s): 'a', 'b', and 'c'".
pub fn missing_arguments(names: &[&str], kind: &str) -> String {
    let quoted: Vec<String> = names.iter().map(|n| format!("'{n}'")).collect();
    let list = match quoted.len() {
        0 => String::new(),
        1 => quoted[0].clone(),
        2 => format!("{} and {}", quoted[0], quoted[1]),
        n => format!("{}, and {}", quoted[..n - 1].join(", "), quoted[n - 1]),
    };
    let plural = if names.len() == 1 { "" } else { "s" };
    format!(
        "missing {} required {kind} argument{plural}: {list}",
        names.len()
    )
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn missing_arguments_words_like_cpython() {
        // f() with def f(a, b, c, *, k): CPython 3.11's messages.
        assert_eq!(
            missing_arguments(&["a"], "positional"),
            "missing 1 required positional argument: 'a'"
        );
        assert_eq!(
            missing_arguments(&["a", "b"], "positional"),
            "missing 2 required positional arguments: 'a' and 'b'"
        );
        assert_eq!(
            missing_arguments(&["a", "b", "c"], "keyword-only"),
            "missing 3 required keyword-only arguments: 'a', 'b', and 'c'"
        );
    }

    #[test]
    fn python_error_texts() {
        assert_eq!(subscript(&json!({}), "sum").unwrap_err(), "'sum'");
        assert_eq!(
            subscript(&json!([1]), "x").unwrap_err(),
            "list indices must be integers or slices, not str"
        );
        assert_eq!(
            dict(&json!("abc")).unwrap_err(),
            "dictionary update sequence element #0 has length 1; 2 is required"
        );
        assert_eq!(
            dict(&json!([1])).unwrap_err(),
            "cannot convert dictionary update sequence element #0 to a sequence"
        );
        assert_eq!(
            unpack2(&json!([1, 2, 3])).unwrap_err(),
            "too many values to unpack (expected 2)"
        );
        assert_eq!(
            unpack2(&json!(5)).unwrap_err(),
            "cannot unpack non-iterable int object"
        );
        assert_eq!(
            float(&Value::Null).unwrap_err(),
            "float() argument must be a string or a real number, not 'NoneType'"
        );
        assert_eq!(repr_str("a'b"), "\"a'b\"");
    }
}
