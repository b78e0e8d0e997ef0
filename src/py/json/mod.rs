//! Python's `json` module over `serde_json::Value`: the sentinels that carry
//! what a `Value` cannot (NaN, ±∞, integers past 64 bits), parsing
//! ([`parse`]), printing ([`dump`]) and the numeric helpers of docs/artifact.md §6.
//!
//! The reference implementation reads and writes JSON with Python's `json`
//! module, and its quirks are part of the contract: it accepts the bare
//! tokens `NaN`/`Infinity`/`-Infinity`, reports syntax errors with its own
//! wording and character (not byte) positions, prints floats with Python's
//! `repr` and escapes everything outside ASCII. This module owns those rules:
//! parsing one document ([`parse`]), printing it back ([`dumps_pretty`],
//! [`dumps_compact`], [`dumps_with`], [`float_repr`]), and the value
//! semantics the analysis borrows from Python (truthiness, `==`, `str()`,
//! and the numeric helpers of docs/artifact.md §6).
//!
//! `serde_json::Value` cannot hold a non-finite float, so NaN and ±∞ travel
//! as the sentinel strings [`NAN`], [`INF`] and [`NEG_INF`]; every helper
//! here treats them as floats, never as strings.

pub mod dump;
pub mod parse;

pub use self::dump::{
    dumps_compact, dumps_pretty, dumps_with, json_string, write_compact, write_json_string,
};
pub use self::parse::{parse, ParseError};
pub use crate::py::float::float_repr;
pub use crate::py::value::{py_eq, py_eq_nested_maps, str_form, truthy};

use serde_json::Value;

/// Sentinel standing for a float NaN (a control byte keeps it away from real text).
pub const NAN: &str = "\u{1}NaN";
/// Sentinel standing for float `+inf`.
pub const INF: &str = "\u{1}Infinity";
/// Sentinel standing for float `-inf`.
pub const NEG_INF: &str = "\u{1}-Infinity";
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
pub fn big_int(v: &Value) -> Option<crate::py::int::Int> {
    match v {
        Value::String(s) => crate::py::int::Int::parse_literal(s.strip_prefix(BIG_INT)?),
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

pub(crate) fn number_repr(n: &serde_json::Number) -> String {
    if let Some(i) = n.as_i64() {
        i.to_string()
    } else if let Some(u) = n.as_u64() {
        u.to_string()
    } else {
        float_repr(n.as_f64().unwrap_or(f64::NAN))
    }
}

static NULL: Value = Value::Null;

/// `v.get(key)` with Python's "get or None": absent key or non-object → null.
pub fn get<'a>(v: &'a Value, key: &str) -> &'a Value {
    v.get(key).unwrap_or(&NULL)
}

/// docs/artifact.md §6: `is_number`: a JSON integer or a finite float; not a bool or sentinel.
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

/// docs/artifact.md §6: `is_real`: any number, NaN/±∞ sentinels included; not a bool.
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

/// docs/artifact.md §6: `int_value`: integers as is (saturating beyond i64), finite floats
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

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

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
}
