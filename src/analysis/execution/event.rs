//! Correlation events (docs/artifact.md §3.2) as the execution block reads them:
//! decoded records with a schema version other than 1, checked the way the
//! reference's typed parse checks them, borrowed from the record rather than
//! copied. A record that fails the parse is skipped and counted (docs/report.md
//! §6.4 step 1), never an error of the whole report.
use serde_json::{Map, Value};

use crate::py::json as pyjson;

/// An ID scoped to its producer (`EntityRef`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Ref<'a> {
    pub producer: &'a str,
    pub id: &'a str,
}

/// The event types that carry a context.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Artifact,
    Request,
    Iteration,
    Stage,
    Membership,
    Activity,
    Capability,
    Alignment,
}

impl Kind {
    fn of(event_type: &str) -> Option<Kind> {
        Some(match event_type {
            "infer.artifact" => Kind::Artifact,
            "infer.request" => Kind::Request,
            "infer.iteration" => Kind::Iteration,
            "infer.stage" => Kind::Stage,
            "infer.membership" => Kind::Membership,
            "infer.activity_ref" => Kind::Activity,
            "infer.capabilities" => Kind::Capability,
            "infer.clock_alignment" => Kind::Alignment,
            _ => return None,
        })
    }

    /// The event's own fields (besides context, event_id and metadata) with
    /// the value a missing one takes; two events are equal when every field
    /// is (Python's dataclass equality).
    fn fields(self) -> &'static [(&'static str, Missing)] {
        use Missing::{Domain, List, None as N};
        match self {
            Kind::Artifact => &[("artifact_kind", N), ("created_at_ns", N)],
            Kind::Request => &[
                ("request_ref", N),
                ("attempt_ref", N),
                ("backend_request_ref", N),
                ("start_ns", N),
                ("end_ns", N),
                ("status", N),
                ("input_tokens", N),
                ("output_tokens", N),
                ("kv_bytes", N),
            ],
            Kind::Iteration => &[
                ("iteration_ref", N),
                ("batch_ref", N),
                ("start_ns", N),
                ("end_ns", N),
            ],
            Kind::Stage => &[
                ("stage_ref", N),
                ("name", N),
                ("request_ref", N),
                ("iteration_ref", N),
                ("start_ns", N),
                ("end_ns", N),
                ("input_tokens", N),
                ("output_tokens", N),
                ("kv_bytes", N),
            ],
            Kind::Membership => &[
                ("request_ref", N),
                ("iteration_ref", N),
                ("role", N),
                ("attempt_ref", N),
                ("input_tokens", N),
                ("output_tokens", N),
                ("kv_bytes", N),
            ],
            Kind::Activity => &[
                ("activity_ref", N),
                ("activity_kind", N),
                ("attribution_status", N),
                ("activity_domain", Domain),
                ("iteration_ref", N),
                ("correlation_scope", N),
                ("trace_attachment_id", N),
                ("runtime_correlation_id", N),
                ("cuda_correlation_id", N),
                ("stream_id", N),
                ("graph_id", N),
                ("start_ns", N),
                ("end_ns", N),
            ],
            Kind::Capability => &[
                ("component", N),
                ("available", N),
                ("supported", List),
                ("enabled", List),
                ("collected", List),
            ],
            Kind::Alignment => &[
                ("from_clock_domain", N),
                ("to_clock_domain", N),
                ("offset_ns", N),
                ("uncertainty_ns", N),
                ("valid_from_ns", N),
                ("valid_to_ns", N),
            ],
        }
    }
}

/// What a field missing from the record stands for.
#[derive(Debug, Clone, Copy)]
enum Missing {
    None,
    /// `activity_domain`: `"unknown"`.
    Domain,
    /// A capability list: `[]`.
    List,
}

impl Missing {
    fn value(self) -> Value {
        match self {
            Missing::None => Value::Null,
            Missing::Domain => Value::String("unknown".into()),
            Missing::List => Value::Array(vec![]),
        }
    }
}

static EMPTY: std::sync::OnceLock<Map<String, Value>> = std::sync::OnceLock::new();

fn empty_map() -> &'static Map<String, Value> {
    EMPTY.get_or_init(Map::new)
}

/// One parsed correlation event, borrowing its record.
#[derive(Debug, Clone, Copy)]
pub struct Event<'a> {
    pub kind: Kind,
    pub record: &'a Map<String, Value>,
    pub context: &'a Map<String, Value>,
    pub metadata: &'a Map<String, Value>,
    pub event_id: &'a str,
}

impl<'a> Event<'a> {
    /// A context field that is a string (the required ones always are).
    pub fn ctx_str(&self, key: &str) -> Option<&'a str> {
        self.context.get(key).and_then(Value::as_str)
    }

    pub fn run_id(&self) -> &'a str {
        self.ctx_str("run_id").unwrap_or("")
    }

    pub fn source(&self) -> &'a str {
        self.ctx_str("source").unwrap_or("")
    }

    /// The deduplication key: (session, producer, event id).
    pub fn identity(&self) -> (&'a str, &'a str, &'a str) {
        (
            self.ctx_str("session_id").unwrap_or(""),
            self.ctx_str("producer_id").unwrap_or(""),
            self.event_id,
        )
    }

    /// A reference field, when set.
    pub fn reference(&self, key: &str) -> Option<Ref<'a>> {
        ref_of(self.record.get(key)?)
    }

    pub fn field(&self, key: &str) -> &'a Value {
        self.record.get(key).unwrap_or(&Value::Null)
    }

    /// An integer field (the parse checked its type).
    pub fn int(&self, key: &str) -> Option<i64> {
        self.record.get(key).and_then(Value::as_i64)
    }

    pub fn meta(&self, key: &str) -> &'a Value {
        self.metadata.get(key).unwrap_or(&Value::Null)
    }

    /// Equal as the reference's dataclasses compare (`with_id`), or as two
    /// records of one entity compare (everything but `event_id`).
    pub fn same(&self, other: &Event<'_>, with_id: bool) -> bool {
        if self.kind != other.kind || (with_id && self.event_id != other.event_id) {
            return false;
        }
        let context_equal = crate::model::transport::CONTEXT_REQUIRED
            .iter()
            .chain(crate::model::transport::CONTEXT_OPTIONAL.iter())
            .all(|k| {
                pyjson::py_eq(
                    self.context.get(*k).unwrap_or(&Value::Null),
                    other.context.get(*k).unwrap_or(&Value::Null),
                )
            });
        if !context_equal {
            return false;
        }
        if !pyjson::py_eq_nested_maps(self.metadata, other.metadata) {
            return false;
        }
        self.kind.fields().iter().all(|(k, default)| {
            let a = self.record.get(*k);
            let b = other.record.get(*k);
            if k.ends_with("_ref") || *k == "correlation_scope" {
                return a.and_then(ref_of) == b.and_then(ref_of);
            }
            match (a, b) {
                (Some(a), Some(b)) => pyjson::py_eq(a, b),
                (Some(v), None) | (None, Some(v)) => pyjson::py_eq(v, &default.value()),
                (None, None) => true,
            }
        })
    }
}

/// An `EntityRef` object's two strings.
fn ref_of(v: &Value) -> Option<Ref<'_>> {
    let m = v.as_object()?;
    Some(Ref {
        producer: m.get("producer_id")?.as_str()?,
        id: m.get("id")?.as_str()?,
    })
}

/// Whether a record is a v1 (legacy) one: `schema_version` absent or equal
/// to 1 as Python compares (`1.0` and `true` are).
pub fn is_legacy(record: &Map<String, Value>) -> bool {
    match record.get("schema_version") {
        None => true,
        Some(v) => pyjson::py_eq(v, &Value::from(1)),
    }
}

/// The reference's typed parse of one non-legacy record: None when it would
/// raise (the record is skipped).
pub fn parse(record: &Map<String, Value>) -> Option<Event<'_>> {
    let kind = Kind::of(record.get("event_type")?.as_str()?)?;
    // The envelope, the context, the known keys, the integers and spans.
    crate::model::transport::validate_correlation(record).ok()?;
    // What that check leaves to the dataclasses' own checks.
    for k in crate::model::transport::CORRELATION_REFS {
        if let Some(Value::Object(r)) = record.get(k) {
            // EntityRef(**value): exactly its two fields.
            if r.len() != 2 || ref_of(record.get(k)?).is_none() {
                return None;
            }
        }
    }
    let non_empty = |k: &str| matches!(record.get(k), Some(Value::String(s)) if !s.is_empty());
    let opt_non_empty = |k: &str| match record.get(k) {
        None | Some(Value::Null) => true,
        Some(Value::String(s)) => !s.is_empty(),
        _ => false,
    };
    let opt_count = |k: &str| match record.get(k) {
        None | Some(Value::Null) => true,
        Some(v) => pyjson::is_int(v) && v.as_i64().is_none_or(|i| i >= 0),
    };
    let ok = match kind {
        Kind::Artifact => {
            non_empty("artifact_kind") && record.get("created_at_ns").is_some_and(|v| !v.is_null())
        }
        Kind::Request => opt_non_empty("status"),
        Kind::Iteration | Kind::Alignment => true,
        Kind::Stage => {
            non_empty("name")
                && (record.get("request_ref").is_some_and(|v| !v.is_null())
                    || record.get("iteration_ref").is_some_and(|v| !v.is_null()))
        }
        Kind::Membership => non_empty("role"),
        Kind::Activity => activity_ok(record, &non_empty, &opt_non_empty, &opt_count),
        Kind::Capability => capability_ok(record),
    };
    if !ok {
        return None;
    }
    let context = record.get("context")?.as_object()?;
    let metadata = match record.get("metadata") {
        None => empty_map(),
        Some(Value::Object(m)) => m,
        Some(_) => return None,
    };
    Some(Event {
        kind,
        record,
        context,
        metadata,
        event_id: record.get("event_id")?.as_str()?,
    })
}

fn activity_ok(
    record: &Map<String, Value>,
    non_empty: &dyn Fn(&str) -> bool,
    opt_non_empty: &dyn Fn(&str) -> bool,
    opt_count: &dyn Fn(&str) -> bool,
) -> bool {
    let domain = match record.get("activity_domain") {
        None => Some("unknown"),
        Some(v) => v.as_str(),
    };
    let status = record.get("attribution_status").and_then(Value::as_str);
    let linked = record.get("iteration_ref").is_some_and(|v| !v.is_null());
    non_empty("activity_kind")
        && matches!(domain, Some("gpu" | "runtime" | "cpu" | "unknown"))
        && matches!(status, Some("linked" | "unresolved"))
        && linked == (status == Some("linked"))
        && opt_non_empty("trace_attachment_id")
        && [
            "runtime_correlation_id",
            "cuda_correlation_id",
            "stream_id",
            "graph_id",
        ]
        .iter()
        .all(|k| opt_count(k))
        && match record
            .get("metadata")
            .and_then(|m| m.get("intervals"))
            .filter(|v| !v.is_null())
        {
            None => true,
            Some(raw) => {
                let start = record.get("start_ns").and_then(Value::as_i64);
                let end = record.get("end_ns").and_then(Value::as_i64);
                busy_intervals(raw, start, end).is_some()
            }
        }
}

fn capability_ok(record: &Map<String, Value>) -> bool {
    let list = |k: &str| -> Option<Vec<&str>> {
        let items = match record.get(k) {
            None => return Some(vec![]),
            Some(Value::Array(items)) => items,
            Some(_) => return None,
        };
        let names: Vec<&str> = items
            .iter()
            .map(|v| v.as_str().filter(|s| !s.is_empty()))
            .collect::<Option<_>>()?;
        let mut unique = names.clone();
        unique.sort_unstable();
        unique.dedup();
        (unique.len() == names.len()).then_some(names)
    };
    let (Some(supported), Some(enabled), Some(collected)) =
        (list("supported"), list("enabled"), list("collected"))
    else {
        return false;
    };
    let Some(Value::Bool(available)) = record.get("available") else {
        return false;
    };
    matches!(record.get("component"), Some(Value::String(s)) if !s.is_empty())
        && collected.iter().all(|c| enabled.contains(c))
        && enabled.iter().all(|e| supported.contains(e))
        && (*available || supported.is_empty())
}

/// The busy intervals of a `metadata.intervals` list (`[offset, duration]`
/// pairs from `start_ns`, sorted, disjoint, inside the span), None when the
/// list is not well formed.
pub fn busy_intervals(
    raw: &Value,
    start: Option<i64>,
    end: Option<i64>,
) -> Option<Vec<(i64, i64)>> {
    let (start, end) = (start?, end?);
    let items = raw.as_array().filter(|a| !a.is_empty())?;
    let mut out = Vec::with_capacity(items.len());
    let mut cursor: i128 = 0;
    for item in items {
        let pair = item.as_array().filter(|p| p.len() == 2)?;
        let offset = pair[0]
            .as_i64()
            .filter(|v| pyjson::is_int(&pair[0]) && *v >= 0)?;
        let duration = pair[1]
            .as_i64()
            .filter(|v| pyjson::is_int(&pair[1]) && *v >= 0)?;
        if i128::from(offset) < cursor {
            return None;
        }
        cursor = i128::from(offset) + i128::from(duration);
        if i128::from(start) + cursor > i128::from(end) {
            return None;
        }
        out.push((start + offset, (i128::from(start) + cursor) as i64));
    }
    Some(out)
}
