//! Python's value semantics over decoded JSON: truthiness, `str()`/`repr()`,
//! `==` and type names (NaN/±∞ and big-integer sentinels count as numbers).

use serde_json::Value;

use crate::py::int::Int;
use crate::py::json::{big_int, number_repr, sentinel_f64, BIG_INT};
use crate::py::text::write_str_repr as write_py_str_repr;

/// Python's `type(v).__name__` of a decoded JSON value: NaN/±∞ sentinels
/// are floats, big-integer sentinels ints.
pub fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "NoneType",
        Value::Bool(_) => "bool",
        Value::Number(n) if n.is_f64() => "float",
        Value::Number(_) => "int",
        Value::String(s) if sentinel_f64(s).is_some() => "float",
        Value::String(s) if s.starts_with(BIG_INT) => "int",
        Value::String(_) => "str",
        Value::Array(_) => "list",
        Value::Object(_) => "dict",
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

/// Python `str(v)` (docs/artifact.md §6, "the string form"): strings as is, everything else
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
            (None, Some(Int::Small(i))) => Some(PyNum::Int(i)),
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
    use crate::py::json::{get, INF, NAN, NEG_INF};
    use serde_json::json;

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

    #[test]
    fn type_names_follow_python() {
        // type(v).__name__ in CPython 3.11 for json.loads of each value.
        let big = crate::py::json::big_int_value("123456789012345678901234567890");
        #[rustfmt::skip]
        let cases: &[(Value, &str)] = &[
            (json!(null), "NoneType"), (json!(true), "bool"), (json!(1), "int"),
            (json!(1.0), "float"), (json!(NAN), "float"), (json!(NEG_INF), "float"),
            (big, "int"), (json!("s"), "str"), (json!([]), "list"), (json!({}), "dict"),
        ];
        for (v, want) in cases {
            assert_eq!(type_name(v), *want, "{v:?}");
        }
    }
}
