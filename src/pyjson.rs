//! TEMPORARY stub of the Python-compatible JSON layer (replaced by the real module).
#![allow(dead_code)]
use serde_json::Value;

pub const NAN: &str = "\u{1}NaN";
pub const INF: &str = "\u{1}Infinity";
pub const NEG_INF: &str = "\u{1}-Infinity";
static NULL: Value = Value::Null;

#[derive(Debug)]
pub struct ParseError(pub String);
impl std::fmt::Display for ParseError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}
pub fn parse(text: &str) -> Result<Value, ParseError> {
    serde_json::from_str(text).map_err(|e| ParseError(e.to_string()))
}
pub fn is_sentinel(s: &str) -> bool {
    s == NAN || s == INF || s == NEG_INF
}
pub fn nonfinite_value(f: f64) -> Value {
    if f.is_nan() {
        Value::String(NAN.into())
    } else if f > 0.0 {
        Value::String(INF.into())
    } else {
        Value::String(NEG_INF.into())
    }
}
pub fn dumps_pretty(v: &Value) -> String {
    serde_json::to_string_pretty(v).unwrap_or_default()
}
pub fn dumps_compact(v: &Value) -> String {
    v.to_string()
}
pub fn float_repr(f: f64) -> String {
    format!("{f:?}")
}
pub fn is_number(v: &Value) -> bool {
    match v {
        Value::Number(n) => n.as_f64().is_some_and(f64::is_finite),
        _ => false,
    }
}
pub fn real(v: &Value) -> Option<f64> {
    match v {
        Value::Number(n) => n.as_f64(),
        Value::String(s) if s == NAN => Some(f64::NAN),
        Value::String(s) if s == INF => Some(f64::INFINITY),
        Value::String(s) if s == NEG_INF => Some(f64::NEG_INFINITY),
        _ => None,
    }
}
pub fn number(v: &Value) -> Option<f64> {
    real(v).filter(|f| f.is_finite())
}
pub fn int_value(v: &Value) -> i64 {
    match v {
        Value::Number(n) => n
            .as_i64()
            .or_else(|| n.as_f64().filter(|f| f.is_finite()).map(|f| f.trunc() as i64))
            .unwrap_or(0),
        _ => 0,
    }
}
pub fn is_int(v: &Value) -> bool {
    matches!(v, Value::Number(n) if n.is_i64() || n.is_u64())
}
pub fn truthy(v: &Value) -> bool {
    match v {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_f64() != Some(0.0),
        Value::String(s) => !s.is_empty(),
        Value::Array(a) => !a.is_empty(),
        Value::Object(o) => !o.is_empty(),
    }
}
pub fn str_form(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => "None".into(),
        Value::Bool(true) => "True".into(),
        Value::Bool(false) => "False".into(),
        Value::Number(n) if n.is_f64() => float_repr(n.as_f64().unwrap_or(0.0)),
        other => other.to_string(),
    }
}
pub fn py_eq(a: &Value, b: &Value) -> bool {
    a == b
}
pub fn get<'a>(v: &'a Value, key: &str) -> &'a Value {
    v.get(key).unwrap_or(&NULL)
}
