//! The compact context transport of an artifact (the reference's
//! `stormlog.infer.correlation_codec`, `ContextRegistry` and
//! `CorrelationRecordDecoder`): the
//! transport of schema version 4, and validation of the correlation records it
//! carries. Decoded records are plain JSON objects; the raw (transport)
//! form is what the database keeps, so export gives the file back.
use std::collections::HashMap;

use serde_json::{Map, Value};

use crate::py::json as pyjson;

/// The context registry of one file: `context_id` → context object.
#[derive(Default)]
pub struct Contexts {
    map: HashMap<String, Value>,
}

/// What one non-blank line turned out to be.
pub enum Line {
    /// An `infer.context` definition: no record.
    Definition { context_id: String, context: Value },
    /// A record; `transport` when it referenced a context.
    Record {
        raw: Map<String, Value>,
        transport: bool,
    },
}

impl Contexts {
    pub fn insert(&mut self, id: String, context: Value) {
        self.map.insert(id, context);
    }

    pub fn get(&self, id: &str) -> Option<&Value> {
        self.map.get(id)
    }

    /// Every definition (in no particular order).
    pub fn entries(&self) -> impl Iterator<Item = (&String, &Value)> {
        self.map.iter()
    }

    /// Classifies and validates one parsed line (as `CorrelationRecordDecoder` does). Definitions
    /// are registered. Returns the raw record; [`Contexts::expand`] decodes it.
    pub fn accept(&mut self, value: Value) -> Result<Line, String> {
        let Value::Object(raw) = value else {
            return Err("record must be an object".into());
        };
        let event_type = raw.get("event_type").and_then(Value::as_str);
        let version = raw.get("schema_version");
        let is_v4 = version.is_some_and(|v| pyjson::is_int(v) && v.as_i64() == Some(4));
        let transport = event_type == Some("infer.context") || raw.contains_key("context_id") || is_v4
            // `4.0` compares equal to 4 in Python, so it is a transport row too (and then refused).
            || version.and_then(Value::as_f64) == Some(4.0) && !version.is_some_and(Value::is_boolean);
        if !transport {
            return Ok(Line::Record {
                raw,
                transport: false,
            });
        }
        if !is_v4 {
            return Err("context transport requires schema_version 4".into());
        }
        let id = match raw.get("context_id") {
            Some(Value::String(s)) if !s.is_empty() && !crate::py::json::is_sentinel(s) => {
                s.clone()
            }
            _ => return Err("context_id must be a non-empty string".into()),
        };
        if event_type == Some("infer.context") {
            let keys_ok = raw.len() == 4
                && ["schema_version", "event_type", "context_id", "context"]
                    .iter()
                    .all(|k| raw.contains_key(*k));
            if !keys_ok {
                return Err("infer.context requires exactly version, type, ID, context".into());
            }
            let context = raw.get("context").cloned().unwrap_or(Value::Null);
            if !context.is_object() {
                return Err("context must be an object".into());
            }
            validate_context(&context)?;
            if let Some(existing) = self.map.get(&id) {
                if existing != &context {
                    return Err(format!("conflicting context definition: {id}"));
                }
            }
            self.map.insert(id.clone(), context.clone());
            return Ok(Line::Definition {
                context_id: id,
                context,
            });
        }
        if raw.contains_key("context") {
            return Err("v4 event must have context_id and no context".into());
        }
        if !self.map.contains_key(&id) {
            return Err(format!("unknown context_id: {id}"));
        }
        let decoded = self.expand(&raw);
        validate_correlation(&decoded)?;
        Ok(Line::Record {
            raw,
            transport: true,
        })
    }

    /// The decoded form of a raw record (identity for non-transport rows).
    pub fn expand(&self, raw: &Map<String, Value>) -> Map<String, Value> {
        self.expand_owned(raw.clone())
    }

    /// [`Contexts::expand`] of a record the caller hands over.
    pub fn expand_owned(&self, raw: Map<String, Value>) -> Map<String, Value> {
        let Some(context) = raw
            .get("context_id")
            .and_then(Value::as_str)
            .and_then(|id| self.map.get(id))
        else {
            return raw;
        };
        let mut m = raw;
        m.remove("context_id");
        m.insert("context".into(), context.clone());
        let v3 = m.get("event_type").and_then(Value::as_str) == Some("infer.activity_ref")
            && m.get("metadata")
                .and_then(Value::as_object)
                .is_some_and(|md| md.contains_key("intervals"));
        m.insert("schema_version".into(), Value::from(if v3 { 3 } else { 2 }));
        m
    }
}

fn non_empty_str(m: &Map<String, Value>, key: &str) -> Result<(), String> {
    match m.get(key) {
        Some(Value::String(s)) if !s.is_empty() && !crate::py::json::is_sentinel(s) => Ok(()),
        _ => Err(format!("{key} must be a non-empty string")),
    }
}

fn opt_non_empty_str(m: &Map<String, Value>, key: &str) -> Result<(), String> {
    match m.get(key) {
        None | Some(Value::Null) => Ok(()),
        Some(Value::String(s)) if !s.is_empty() && !crate::py::json::is_sentinel(s) => Ok(()),
        _ => Err(format!("{key} must be a non-empty string")),
    }
}

fn opt_u64(m: &Map<String, Value>, key: &str) -> Result<(), String> {
    match m.get(key) {
        None | Some(Value::Null) => Ok(()),
        Some(v) if pyjson::is_int(v) && v.as_i64().is_none_or(|i| i >= 0) => Ok(()),
        _ => Err(format!("{key} must be a non-negative integer or null")),
    }
}

/// The keys of a correlation context (the reference's
/// `correlation_events.CorrelationContext`): the required
/// ones, in the order the reference's dataclass declares them, then the
/// optional ones. The clock-alignment reader checks contexts against these too.
pub(crate) const CONTEXT_REQUIRED: [&str; 8] = [
    "run_id",
    "session_id",
    "producer_id",
    "source",
    "clock_domain",
    "clock_kind",
    "collection_mode",
    "provenance",
];
pub(crate) const CONTEXT_OPTIONAL: [&str; 11] = [
    "source_version",
    "engine",
    "engine_version",
    "backend",
    "backend_version",
    "host",
    "pid",
    "device_uuid",
    "rank",
    "local_rank",
    "world_size",
];

/// Whether `key` belongs in a correlation context.
pub(crate) fn is_context_key(key: &str) -> bool {
    CONTEXT_REQUIRED.contains(&key) || CONTEXT_OPTIONAL.contains(&key)
}

/// A correlation context (`correlation_events.CorrelationContext`).
pub fn validate_context(context: &Value) -> Result<(), String> {
    let Some(m) = context.as_object() else {
        return Err("context must be an object".into());
    };
    for k in m.keys() {
        if !is_context_key(k) {
            return Err(format!("invalid correlation context: unexpected key '{k}'"));
        }
    }
    for k in [
        "run_id",
        "session_id",
        "producer_id",
        "source",
        "clock_domain",
    ] {
        non_empty_str(m, k)?;
    }
    let one_of = |key: &str, allowed: &[&str], msg: &str| -> Result<(), String> {
        match m.get(key).and_then(Value::as_str) {
            Some(s) if allowed.contains(&s) => Ok(()),
            _ => Err(msg.into()),
        }
    };
    one_of(
        "clock_kind",
        &["monotonic", "wall", "device"],
        "clock_kind must be monotonic, wall, or device",
    )?;
    one_of(
        "collection_mode",
        &["active", "passive", "imported"],
        "collection_mode must be active, passive, or imported",
    )?;
    one_of(
        "provenance",
        &["observed", "reported", "estimated"],
        "provenance must be observed, reported, or estimated",
    )?;
    for k in [
        "source_version",
        "engine",
        "engine_version",
        "backend",
        "backend_version",
        "host",
        "device_uuid",
    ] {
        opt_non_empty_str(m, k)?;
    }
    for k in ["pid", "rank", "local_rank", "world_size"] {
        opt_u64(m, k)?;
    }
    if m.get("world_size").and_then(Value::as_i64) == Some(0) {
        return Err("world_size must be >= 1".into());
    }
    Ok(())
}

/// The entity-reference fields of a correlation record (each an `EntityRef`).
pub const CORRELATION_REFS: [&str; 8] = [
    "request_ref",
    "attempt_ref",
    "backend_request_ref",
    "iteration_ref",
    "batch_ref",
    "stage_ref",
    "activity_ref",
    "correlation_scope",
];

/// A decoded correlation record (`correlation_events`).
pub fn validate_correlation(record: &Map<String, Value>) -> Result<(), String> {
    let event_type = match record.get("event_type") {
        Some(Value::String(s)) if s.starts_with("infer.") => s.as_str(),
        _ => return Err("event_type must name an inference event".into()),
    };
    let (allowed, required): (&[&str], &[&str]) = match event_type {
        "infer.artifact" => (
            &["artifact_kind", "created_at_ns"],
            &["artifact_kind", "created_at_ns"],
        ),
        "infer.request" => (
            &[
                "request_ref",
                "attempt_ref",
                "backend_request_ref",
                "start_ns",
                "end_ns",
                "status",
                "input_tokens",
                "output_tokens",
                "kv_bytes",
            ],
            &["request_ref"],
        ),
        "infer.iteration" => (
            &["iteration_ref", "batch_ref", "start_ns", "end_ns"],
            &["iteration_ref"],
        ),
        "infer.stage" => (
            &[
                "stage_ref",
                "name",
                "request_ref",
                "iteration_ref",
                "start_ns",
                "end_ns",
                "input_tokens",
                "output_tokens",
                "kv_bytes",
            ],
            &["stage_ref", "name"],
        ),
        "infer.membership" => (
            &[
                "request_ref",
                "iteration_ref",
                "role",
                "attempt_ref",
                "input_tokens",
                "output_tokens",
                "kv_bytes",
            ],
            &["request_ref", "iteration_ref", "role"],
        ),
        "infer.activity_ref" => (
            &[
                "activity_ref",
                "activity_kind",
                "attribution_status",
                "activity_domain",
                "iteration_ref",
                "correlation_scope",
                "trace_attachment_id",
                "runtime_correlation_id",
                "cuda_correlation_id",
                "stream_id",
                "graph_id",
                "start_ns",
                "end_ns",
            ],
            &["activity_ref", "activity_kind", "attribution_status"],
        ),
        "infer.capabilities" => (
            &[
                "component",
                "available",
                "supported",
                "enabled",
                "collected",
            ],
            &["component", "available"],
        ),
        "infer.clock_alignment" => (
            &[
                "from_clock_domain",
                "to_clock_domain",
                "offset_ns",
                "uncertainty_ns",
                "valid_from_ns",
                "valid_to_ns",
            ],
            &[
                "from_clock_domain",
                "to_clock_domain",
                "offset_ns",
                "uncertainty_ns",
            ],
        ),
        other => return Err(format!("unsupported inference event_type: {other}")),
    };
    let version = record.get("schema_version").cloned().unwrap_or(Value::Null);
    if !pyjson::is_int(&version) {
        return Err("schema_version must be an integer".into());
    }
    let version = version.as_i64().unwrap_or(0);
    let has_intervals = record
        .get("metadata")
        .and_then(Value::as_object)
        .is_some_and(|m| m.contains_key("intervals"));
    if event_type == "infer.activity_ref" {
        if version == 3 && !has_intervals {
            return Err("infer.activity_ref schema_version 3 requires metadata.intervals".into());
        }
        if version == 2 && has_intervals {
            return Err(
                "infer.activity_ref with metadata.intervals requires schema_version 3".into(),
            );
        }
        if version != 2 && version != 3 {
            return Err(format!("unsupported inference schema_version: {version}"));
        }
        if has_intervals
            && record
                .get("metadata")
                .and_then(|m| m.get("intervals"))
                .is_some_and(Value::is_null)
        {
            return Err(
                "metadata.intervals must be a non-empty list of [offset_ns, duration_ns] pairs"
                    .into(),
            );
        }
    } else if version != 2 {
        return Err(format!("unsupported inference schema_version: {version}"));
    }
    let ctx = record.get("context").cloned().unwrap_or(Value::Null);
    validate_context(&ctx)?;
    non_empty_str(record, "event_id")?;
    if let Some(md) = record.get("metadata") {
        if !md.is_object() {
            return Err("metadata must be an object".into());
        }
    }
    for k in record.keys() {
        let envelope = matches!(
            k.as_str(),
            "schema_version" | "event_type" | "context" | "event_id" | "metadata"
        );
        if !envelope && !allowed.contains(&k.as_str()) {
            return Err(format!(
                "invalid {event_type} record: unexpected keyword argument '{k}'"
            ));
        }
    }
    for k in required {
        if !record.contains_key(*k) {
            return Err(format!(
                "invalid {event_type} record: missing required argument '{k}'"
            ));
        }
    }
    for k in CORRELATION_REFS {
        match record.get(k) {
            None | Some(Value::Null) => {}
            Some(Value::Object(r)) => {
                non_empty_str(r, "producer_id").map_err(|e| format!("{k}.{e}"))?;
                non_empty_str(r, "id").map_err(|e| format!("{k}.{e}"))?;
            }
            Some(_) => return Err(format!("{k} must be an object")),
        }
    }
    for k in [
        "start_ns",
        "end_ns",
        "input_tokens",
        "output_tokens",
        "kv_bytes",
        "valid_from_ns",
        "valid_to_ns",
        "uncertainty_ns",
        "created_at_ns",
    ] {
        opt_u64(record, k)?;
    }
    let int_of = |k: &str| record.get(k).and_then(Value::as_i64);
    if let (Some(s), Some(e)) = (int_of("start_ns"), int_of("end_ns")) {
        if e < s {
            return Err("end_ns must be >= start_ns".into());
        }
    }
    if event_type == "infer.clock_alignment" {
        non_empty_str(record, "from_clock_domain")?;
        non_empty_str(record, "to_clock_domain")?;
        if !record.get("offset_ns").is_some_and(pyjson::is_int) {
            return Err("offset_ns must be an integer".into());
        }
        if record.get("uncertainty_ns").is_none_or(Value::is_null) {
            return Err("uncertainty_ns must be a non-negative integer".into());
        }
        if let (Some(s), Some(e)) = (int_of("valid_from_ns"), int_of("valid_to_ns")) {
            if e < s {
                return Err("valid_to_ns must be >= valid_from_ns".into());
            }
        }
    }
    Ok(())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    fn ctx() -> Value {
        json!({"backend": null, "backend_version": null, "clock_domain": "h/boot/unix_epoch_ns", "clock_kind": "wall", "collection_mode": "active", "device_uuid": null, "engine": null, "engine_version": null, "host": "h", "local_rank": null, "pid": 1, "producer_id": "stormlog.infer.profile", "provenance": "observed", "rank": null, "run_id": "run-1", "session_id": "sess-1", "source": "stormlog.infer.profile", "source_version": null, "world_size": null})
    }

    #[test]
    fn decodes_the_minimal_artifact() {
        let mut c = Contexts::default();
        let def = json!({"context": ctx(), "context_id": "ctx-1", "event_type": "infer.context", "schema_version": 4});
        assert!(matches!(c.accept(def).unwrap(), Line::Definition { .. }));
        let art = json!({"artifact_kind": "inference_jsonl", "context_id": "ctx-1", "created_at_ns": 1, "event_id": "artifact", "event_type": "infer.artifact", "metadata": {"boot_id": "boot"}, "schema_version": 4});
        let Line::Record { raw, transport } = c.accept(art).unwrap() else {
            panic!()
        };
        assert!(transport);
        let d = c.expand(&raw);
        assert_eq!(d["schema_version"], json!(2));
        assert_eq!(d["context"]["run_id"], json!("run-1"));
        assert!(!d.contains_key("context_id"));
    }

    #[test]
    fn transport_errors() {
        let mut c = Contexts::default();
        let e = |c: &mut Contexts, v: Value| match c.accept(v) {
            Err(e) => e,
            Ok(_) => panic!("accepted"),
        };
        assert_eq!(e(&mut c, json!([1])), "record must be an object");
        assert_eq!(
            e(&mut c, json!({"event_type": "infer.context"})),
            "context transport requires schema_version 4"
        );
        assert_eq!(
            e(&mut c, json!({"schema_version": 4, "context_id": ""})),
            "context_id must be a non-empty string"
        );
        assert_eq!(
            e(
                &mut c,
                json!({"schema_version": 4, "context_id": "x", "event_type": "infer.artifact"})
            ),
            "unknown context_id: x"
        );
        assert_eq!(
            e(
                &mut c,
                json!({"schema_version": 4, "context_id": "x", "event_type": "infer.context", "context": {}, "extra": 1})
            ),
            "infer.context requires exactly version, type, ID, context"
        );
        c.accept(json!({"schema_version": 4, "context_id": "x", "event_type": "infer.context", "context": ctx()})).unwrap();
        let mut other = ctx();
        other["run_id"] = json!("run-2");
        assert_eq!(
            e(
                &mut c,
                json!({"schema_version": 4, "context_id": "x", "event_type": "infer.context", "context": other})
            ),
            "conflicting context definition: x"
        );
        assert_eq!(
            e(
                &mut c,
                json!({"schema_version": 4, "context_id": "x", "event_type": "infer.artifact", "context": {}})
            ),
            "v4 event must have context_id and no context"
        );
    }
}
