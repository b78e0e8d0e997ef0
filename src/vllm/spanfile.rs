//! External span files (`--vllm-spans FILE`, docs/artifact.md §3.12.3): an OTLP
//! JSON document, or lines each holding an OTLP document or one "sink" span.
//! Every span is stamped with the artifact's run identity and its exporter's
//! clock domain, its client request id recovered from `gen_ai.request.id`,
//! and then checked like an artifact span record.

use std::path::Path;

use serde_json::{Map, Value};

use super::records::SpanFields;
use crate::py::builtins;
use crate::py::json as pyjson;

const SPAN_KINDS: [&str; 6] = [
    "UNSPECIFIED",
    "INTERNAL",
    "SERVER",
    "CLIENT",
    "PRODUCER",
    "CONSUMER",
];
const STATUS_CODES: [&str; 3] = ["UNSET", "OK", "ERROR"];
const REQUEST_ID_ATTRIBUTE: &str = "gen_ai.request.id";

/// A decoded span before it is stamped.
struct RawSpan {
    name: String,
    trace_id: Value,
    span_id: Value,
    parent_span_id: Value,
    kind: Value,
    start_unix_ns: Value,
    end_unix_ns: Value,
    attributes: Option<Map<String, Value>>,
    resource: Option<Map<String, Value>>,
    scope: Option<Map<String, Value>>,
    status: Value,
    dropped: Map<String, Value>,
}

/// Reads one span file's text into stamped span records (the docs/artifact.md §3.12.2
/// shape). `path` names the clock domain when the resource has no
/// `host.name`; the error is the reason the caller prints after
/// `vLLM telemetry: `.
pub fn load_span_file(
    path: &Path,
    text: &str,
    artifact_records: &[Value],
) -> Result<Vec<Value>, String> {
    let (source, raw) = read_spans(text)?;
    let (session_id, run_id) = artifact_identity(artifact_records);
    let host = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut out = Vec::new();
    for span in raw {
        let resource = span.resource.clone().unwrap_or_default();
        let clock_domain = clock_domain(&resource, &host);
        let request_id = span
            .attributes
            .as_ref()
            .and_then(|a| a.get(REQUEST_ID_ATTRIBUTE))
            .and_then(request_id_from_native)
            .map_or(Value::Null, Value::String);
        let fields = SpanFields {
            session_id: Value::String(session_id.clone()),
            run_id: Value::String(run_id.clone()),
            source: Value::from(source),
            name: Value::String(span.name),
            clock_domain: Value::String(clock_domain),
            received_at_ns: Value::Null,
            trace_id: span.trace_id,
            span_id: span.span_id,
            parent_span_id: span.parent_span_id,
            kind: span.kind,
            start_unix_ns: span.start_unix_ns,
            end_unix_ns: span.end_unix_ns,
            attributes: span.attributes,
            resource: span.resource,
            scope: span.scope,
            status: span.status,
            dropped: Some(span.dropped),
            request_id,
        };
        out.push(fields.validate()?.to_record());
    }
    Ok(out)
}

fn read_spans(text: &str) -> Result<(&'static str, Vec<RawSpan>), String> {
    let stripped = text.trim_matches(crate::py::text::is_py_space);
    if stripped.is_empty() {
        return Err("span file is empty".into());
    }
    if let Ok(doc @ Value::Object(_)) = pyjson::parse(stripped) {
        if doc.get("resourceSpans").is_some() {
            return Ok(("otlp_json_file", decode_otlp_json(&doc)?));
        }
    }
    let mut source = "jsonl_file";
    let mut spans = Vec::new();
    for (i, line) in crate::py::text::splitlines(stripped)
        .into_iter()
        .enumerate()
    {
        if line.trim_matches(crate::py::text::is_py_space).is_empty() {
            continue;
        }
        let decoded = (|| -> Result<(), String> {
            let raw = pyjson::parse(line).map_err(|e| e.to_string())?;
            if !raw.is_object() {
                return Err("record must be an object".into());
            }
            if raw.get("resourceSpans").is_some() {
                source = "otlp_json_file";
                spans.extend(decode_otlp_json(&raw)?);
            } else {
                spans.push(decode_sink_span(&raw)?);
            }
            Ok(())
        })();
        decoded.map_err(|e| format!("invalid span line {}: {e}", i + 1))?;
    }
    Ok((source, spans))
}

/// Run and session from the artifact's first `infer.artifact` record, else
/// the session from the first `infer.session`; `unknown` for what is missing.
fn artifact_identity(records: &[Value]) -> (String, String) {
    let or_unknown = |v: &Value| {
        if pyjson::truthy(v) {
            pyjson::str_form(v)
        } else {
            "unknown".to_owned()
        }
    };
    let of_type = |t: &str| {
        records
            .iter()
            .find(|r| builtins::as_str(pyjson::get(r, "event_type")) == Some(t))
    };
    if let Some(artifact) = of_type("infer.artifact") {
        let context = pyjson::get(artifact, "context");
        return (
            or_unknown(pyjson::get(context, "session_id")),
            or_unknown(pyjson::get(context, "run_id")),
        );
    }
    if let Some(session) = of_type("infer.session") {
        return (
            or_unknown(pyjson::get(session, "session_id")),
            "unknown".into(),
        );
    }
    ("unknown".into(), "unknown".into())
}

/// The exporter's wall clock, named by its host (never a shared clock).
fn clock_domain(resource: &Map<String, Value>, fallback_host: &str) -> String {
    let host = resource
        .get("host.name")
        .and_then(builtins::as_str)
        .filter(|s| !s.is_empty())
        .unwrap_or(fallback_host);
    let name = host.replace('/', "_");
    let name = if name.is_empty() {
        "unknown-host".to_owned()
    } else {
        name
    };
    format!("{name}/unix_epoch_ns")
}

/// The client's `X-Request-Id` inside vLLM's `chatcmpl-<id>` or
/// `cmpl-<id>-<index>`: a trailing `-<digits>` is dropped only when it is one.
pub fn request_id_from_native(native: &Value) -> Option<String> {
    let s = builtins::as_str(native)?;
    let body = s
        .strip_prefix("chatcmpl-")
        .or_else(|| s.strip_prefix("cmpl-"))?;
    if let Some((head, tail)) = body.rsplit_once('-') {
        // Python's str.isdigit also accepts other Unicode digits; ASCII is
        // what vLLM writes.
        if !head.is_empty() && !tail.is_empty() && tail.chars().all(|c| c.is_ascii_digit()) {
            return Some(head.to_owned());
        }
    }
    Some(body.to_owned())
}

// ------------------------------------------------------------ OTLP JSON

/// Python `int(v)` for span times; `None` where it would raise.
fn json_int(v: &Value) -> Value {
    match v {
        Value::Null => Value::Null,
        Value::Bool(b) => Value::from(i64::from(*b)),
        Value::Number(n) if n.is_f64() => match n.as_f64() {
            Some(f) if f.is_finite() && f.abs() < 9.2e18 => Value::from(f.trunc() as i64),
            _ => Value::Null,
        },
        Value::Number(_) => v.clone(),
        Value::String(s) if builtins::as_str(v).is_some() => crate::py::int::parse_int(s)
            .and_then(|n| i64::try_from(n).ok())
            .map_or(Value::Null, Value::from),
        _ => Value::Null,
    }
}

/// Unwraps OTLP JSON's `{"stringValue": ...}` style values.
fn any_value(v: &Value) -> Result<Value, String> {
    let Value::Object(m) = v else {
        return Ok(v.clone());
    };
    // The reference takes the first key in document order; objects here are
    // key-sorted, which only differs for a value with several wrapper keys.
    for (key, raw) in m {
        match key.as_str() {
            "stringValue" | "boolValue" | "doubleValue" | "bytesValue" => return Ok(raw.clone()),
            "intValue" => return int_value(raw),
            "arrayValue" => {
                let items = match raw {
                    Value::Object(inner) => {
                        inner.get("values").cloned().unwrap_or(Value::Array(vec![]))
                    }
                    other => {
                        return Err(format!(
                            "'{}' object has no attribute 'get'",
                            builtins::type_name(other)
                        ))
                    }
                };
                let mut out = Vec::new();
                for item in builtins::iterate(&items)? {
                    out.push(any_value(&item)?);
                }
                return Ok(Value::Array(out));
            }
            "kvlistValue" => {
                let items = match raw {
                    Value::Object(inner) => {
                        inner.get("values").cloned().unwrap_or(Value::Array(vec![]))
                    }
                    other => {
                        return Err(format!(
                            "'{}' object has no attribute 'get'",
                            builtins::type_name(other)
                        ))
                    }
                };
                return Ok(Value::Object(key_values(&items)?));
            }
            _ => {}
        }
    }
    Ok(v.clone())
}

/// Python `int(raw)` for an `intValue`.
fn int_value(raw: &Value) -> Result<Value, String> {
    match raw {
        Value::Bool(b) => Ok(Value::from(i64::from(*b))),
        Value::Number(n) if n.is_f64() => match n.as_f64() {
            Some(f) if f.is_finite() => Ok(Value::from(f.trunc() as i64)),
            _ => Err("cannot convert float NaN to integer".into()),
        },
        Value::Number(_) => Ok(raw.clone()),
        Value::String(s) if builtins::as_str(raw).is_some() => crate::py::int::parse_int(s)
            .and_then(|n| i64::try_from(n).ok())
            .map(Value::from)
            .ok_or_else(|| {
                format!(
                    "invalid literal for int() with base 10: {}",
                    builtins::repr_str(s)
                )
            }),
        Value::String(_) => Err("cannot convert float NaN to integer".into()),
        other => Err(format!(
            "int() argument must be a string, a bytes-like object or a real number, not '{}'",
            builtins::type_name(other)
        )),
    }
}

/// A `[{key, value}]` list flattened to an object (an object given instead
/// is taken as a plain map).
fn key_values(items: &Value) -> Result<Map<String, Value>, String> {
    if let Value::Object(m) = items {
        return Ok(m.clone());
    }
    let mut out = Map::new();
    if !pyjson::truthy(items) {
        return Ok(out);
    }
    for item in builtins::iterate(items)? {
        if let Value::Object(m) = &item {
            if let Some(key) = m.get("key") {
                let value = any_value(m.get("value").unwrap_or(&Value::Null))?;
                out.insert(pyjson::str_form(key), value);
            }
        }
    }
    Ok(out)
}

/// `x.get(key) or default` on a value the reference expects to be an object.
fn section<'a>(v: &'a Value, key: &str) -> Result<&'a Value, String> {
    match v {
        Value::Object(m) => Ok(m.get(key).unwrap_or(&Value::Null)),
        other => Err(format!(
            "'{}' object has no attribute 'get'",
            builtins::type_name(other)
        )),
    }
}

fn list_or_empty(v: &Value) -> Result<Vec<Value>, String> {
    if pyjson::truthy(v) {
        builtins::iterate(v)
    } else {
        Ok(Vec::new())
    }
}

fn decode_otlp_json(doc: &Value) -> Result<Vec<RawSpan>, String> {
    let mut spans = Vec::new();
    for resource_spans in list_or_empty(section(doc, "resourceSpans")?)? {
        let resource_obj = section(&resource_spans, "resource")?;
        let attrs = if pyjson::truthy(resource_obj) {
            section(resource_obj, "attributes")?.clone()
        } else {
            Value::Null
        };
        let resource = key_values(&attrs)?;
        for scope_spans in list_or_empty(section(&resource_spans, "scopeSpans")?)? {
            let scope_raw = section(&scope_spans, "scope")?;
            let mut scope = Map::new();
            if pyjson::truthy(scope_raw) {
                for (k, v) in builtins::items(scope_raw)? {
                    if k == "name" || k == "version" {
                        scope.insert(k.clone(), v.clone());
                    }
                }
            }
            for raw in list_or_empty(section(&scope_spans, "spans")?)? {
                spans.push(otlp_span(&raw, &resource, &scope)?);
            }
        }
    }
    Ok(spans)
}

fn span_name(raw: &Value) -> Result<String, String> {
    match builtins::as_str(pyjson::get(raw, "name")) {
        Some(s) if !s.is_empty() => Ok(s.to_owned()),
        _ => Err("span without a name".into()),
    }
}

fn otlp_span(
    raw: &Value,
    resource: &Map<String, Value>,
    scope: &Map<String, Value>,
) -> Result<RawSpan, String> {
    let name = match raw {
        Value::Object(_) => span_name(raw)?,
        other => {
            return Err(format!(
                "'{}' object has no attribute 'get'",
                builtins::type_name(other)
            ))
        }
    };
    let get = |k| pyjson::get(raw, k);
    let or_none = |v: &Value| {
        if pyjson::truthy(v) {
            v.clone()
        } else {
            Value::Null
        }
    };
    let kind = match get("kind") {
        Value::Null => Value::Null,
        Value::Bool(b) => Value::from(SPAN_KINDS[usize::from(*b)]),
        v @ Value::Number(n) if !n.is_f64() => {
            match n.as_u64().and_then(|k| SPAN_KINDS.get(k as usize)) {
                Some(k) => Value::from(*k),
                None => Value::String(pyjson::str_form(v)),
            }
        }
        v => Value::String(pyjson::str_form(v)),
    };
    let status = match get("status") {
        Value::Object(m) => {
            let mut m = m.clone();
            let code = m.get("code").cloned();
            match code {
                Some(Value::Bool(b)) => {
                    m.insert("code".into(), Value::from(STATUS_CODES[usize::from(b)]));
                }
                Some(v @ Value::Number(_)) if builtins::int128(&v).is_some() => {
                    let label = builtins::int128(&v)
                        .and_then(|c| usize::try_from(c).ok())
                        .and_then(|c| STATUS_CODES.get(c))
                        .map_or_else(|| pyjson::str_form(&v), |s| (*s).to_owned());
                    m.insert("code".into(), Value::String(label));
                }
                _ => {}
            }
            Value::Object(m)
        }
        _ => Value::Null,
    };
    let mut dropped = Map::new();
    for (name, key) in [
        ("attributes", "droppedAttributesCount"),
        ("events", "droppedEventsCount"),
        ("links", "droppedLinksCount"),
    ] {
        match get(key) {
            Value::Bool(b) => {
                dropped.insert(name.into(), Value::from(i64::from(*b)));
            }
            v if builtins::int128(v).is_some() => {
                dropped.insert(name.into(), v.clone());
            }
            _ => {}
        }
    }
    Ok(RawSpan {
        name,
        trace_id: or_none(get("traceId")),
        span_id: or_none(get("spanId")),
        parent_span_id: or_none(get("parentSpanId")),
        kind,
        start_unix_ns: json_int(get("startTimeUnixNano")),
        end_unix_ns: json_int(get("endTimeUnixNano")),
        attributes: Some(key_values(get("attributes"))?),
        resource: Some(resource.clone()),
        scope: Some(scope.clone()),
        status,
        dropped,
    })
}

/// One sink line: name, ids, unix-ns times, flat attributes.
fn decode_sink_span(raw: &Value) -> Result<RawSpan, String> {
    let name = span_name(raw)?;
    let get = |k| pyjson::get(raw, k);
    let attributes = match get("attributes") {
        Value::Object(m) => m.clone(),
        _ => Map::new(),
    };
    Ok(RawSpan {
        name,
        trace_id: get("trace_id").clone(),
        span_id: get("span_id").clone(),
        parent_span_id: get("parent_span_id").clone(),
        kind: get("kind").clone(),
        start_unix_ns: json_int(get("start_unix_ns")),
        end_unix_ns: json_int(get("end_unix_ns")),
        attributes: Some(attributes),
        resource: builtins::dict_or_empty(get("resource"))?,
        scope: builtins::dict_or_empty(get("scope"))?,
        status: match get("status") {
            v @ Value::Object(_) => v.clone(),
            _ => Value::Null,
        },
        dropped: Map::new(),
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    fn load(name: &str, text: &str) -> Result<Vec<Value>, String> {
        let records = vec![
            json!({"event_type": "infer.artifact", "context": {"session_id": "s1", "run_id": "r1"}}),
        ];
        load_span_file(Path::new(name), text, &records)
    }

    #[test]
    fn request_ids_are_recovered_from_vllm_ids() {
        let r = |s: &str| request_id_from_native(&json!(s));
        assert_eq!(
            r("chatcmpl-stormlog-r1-c_measured_3").as_deref(),
            Some("stormlog-r1-c_measured_3")
        );
        assert_eq!(r("cmpl-abc-0").as_deref(), Some("abc"));
        assert_eq!(r("cmpl-abc-").as_deref(), Some("abc-"));
        assert_eq!(r("cmpl--7").as_deref(), Some("-7"));
        assert_eq!(r("abc"), None);
        assert_eq!(request_id_from_native(&json!(5)), None);
    }

    #[test]
    fn sink_lines_are_stamped() {
        let text = "\n{\"name\": \"llm_request\", \"trace_id\": \"t\", \"span_id\": \"s\", \"start_unix_ns\": \"10\", \"end_unix_ns\": 20.7, \"attributes\": {\"gen_ai.request.id\": \"chatcmpl-x-1\"}}\n";
        let spans = load("dir/spans.jsonl", text).unwrap();
        assert_eq!(spans.len(), 1);
        let s = &spans[0];
        assert_eq!(s["source"], "jsonl_file");
        assert_eq!(s["clock_domain"], "spans/unix_epoch_ns");
        assert_eq!(s["session_id"], "s1");
        assert_eq!(s["run_id"], "r1");
        assert_eq!(s["start_unix_ns"], 10);
        assert_eq!(s["end_unix_ns"], 20);
        assert_eq!(s["request_id"], "x");
        assert_eq!(s["dropped"], json!({}));
    }

    #[test]
    fn otlp_documents_are_flattened() {
        let doc = json!({"resourceSpans": [{"resource": {"attributes": [{"key": "host.name", "value": {"stringValue": "a/b"}}]},
            "scopeSpans": [{"scope": {"name": "vllm", "version": "1", "x": 2}, "spans": [{
                "name": "llm_request", "traceId": "", "spanId": "s1", "kind": 2, "startTimeUnixNano": "5", "endTimeUnixNano": "9",
                "attributes": [{"key": "n", "value": {"intValue": "42"}}, {"key": "l", "value": {"arrayValue": {"values": [{"doubleValue": 1.5}]}}}],
                "status": {"code": 1}, "droppedAttributesCount": 3}]}]}]});
        let spans = load("x.json", &doc.to_string()).unwrap();
        let s = &spans[0];
        assert_eq!(s["source"], "otlp_json_file");
        assert_eq!(s["clock_domain"], "a_b/unix_epoch_ns");
        assert_eq!(s["trace_id"], Value::Null);
        assert_eq!(s["kind"], "SERVER");
        assert_eq!(s["attributes"], json!({"n": 42, "l": [1.5]}));
        assert_eq!(s["scope"], json!({"name": "vllm", "version": "1"}));
        assert_eq!(s["status"], json!({"code": "OK"}));
        assert_eq!(s["dropped"], json!({"attributes": 3}));
        assert_eq!(s["start_unix_ns"], 5);
    }

    #[test]
    fn span_file_errors_use_the_reference_wording() {
        assert_eq!(load("a.jsonl", "  \n ").unwrap_err(), "span file is empty");
        assert_eq!(
            load("a.jsonl", "{\"name\": \"x\"}\n[1]").unwrap_err(),
            "invalid span line 2: record must be an object"
        );
        assert_eq!(
            load("a.jsonl", "{\"name\": \"\"}").unwrap_err(),
            "invalid span line 1: span without a name"
        );
        assert_eq!(
            load("a.jsonl", "{\"name\": \"x\"}\n{bad").unwrap_err(),
            "invalid span line 2: Expecting property name enclosed in double quotes: line 1 column 2 (char 1)"
        );
        assert_eq!(
            load("a.jsonl", "{\"name\": \"x\", \"trace_id\": \"\"}").unwrap_err(),
            "trace_id must be a non-empty string"
        );
        assert_eq!(
            load("a.jsonl", "{\"name\": \"x\", \"start_unix_ns\": -1}").unwrap_err(),
            "start_unix_ns must be a non-negative integer or null"
        );
        assert_eq!(
            load(
                "a.jsonl",
                "{\"name\": \"x\", \"start_unix_ns\": 5, \"end_unix_ns\": 4}"
            )
            .unwrap_err(),
            "end_unix_ns must be >= start_unix_ns"
        );
    }
}
