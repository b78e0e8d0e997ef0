//! Server telemetry samples: the typed record, its loader with the
//! reference's exact validation order and messages (docs/telemetry.md §4), and the
//! record written back out by the collector's writer (`model::telemetry`).
//!
//! The loader takes a whole file's text; decoding bytes (and the UTF-8 error
//! that goes with it) and reading the file are the caller's business, as is the
//! `--server-telemetry <path>: ` prefix on every message.

use serde_json::{Map, Value};

/// The server identity, its clock domain and rendering (one record with
/// the collector's; `Identity` is its old name here).
pub use crate::model::identity::{wall_clock_domain, ServerIdentity as Identity, WALL_CLOCK};
use crate::model::telemetry::{
    write_record, RecordHead, SampleFields, EVENT_TYPE as TELEMETRY_EVENT_TYPE,
    SCHEMA_VERSION as TELEMETRY_SCHEMA_VERSION,
};

/// One counter with one owner and one observation scope, at one instant.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ServerSample {
    pub run_id: String,
    pub identity: Identity,
    pub observed_at_ns: i64,
    pub metric: String,
    pub value_bytes: Option<i64>,
    pub state: String,
    pub source: String,
    pub interval_ms: i64,
    pub detail: Option<String>,
    pub provenance: String,
}

impl ServerSample {
    /// The metric's observation scope; `""` only for a sample built by hand
    /// with an unknown metric (the loader never produces one).
    pub fn scope(&self) -> &'static str {
        metric_scope(&self.metric).unwrap_or("")
    }

    /// The metric's counter owner (same caveat as [`ServerSample::scope`]).
    pub fn counter_owner(&self) -> &'static str {
        metric_owner(&self.metric).unwrap_or("")
    }
}

/// The nine metrics, their scopes and owners (docs/telemetry.md §2.3), in name order.
pub const METRICS: [(&str, &str, &str); 9] = [
    ("allocator_allocated_bytes", "server_process", "allocator"),
    ("allocator_reserved_bytes", "server_process", "allocator"),
    ("device_memory_reserved_bytes", "gpu_device", "gpu_device"),
    ("device_memory_used_bytes", "gpu_device", "gpu_device"),
    (
        "engine_cache_occupied_bytes",
        "server_process",
        "engine_cache",
    ),
    (
        "instance_memory_reserved_bytes",
        "gpu_instance",
        "gpu_instance",
    ),
    ("instance_memory_used_bytes", "gpu_instance", "gpu_instance"),
    ("process_gpu_used_bytes", "server_process", "gpu_process"),
    (
        "process_rss_bytes",
        "server_process",
        "operating_system_process",
    ),
];

/// Index of a metric in [`METRICS`].
pub fn metric_index(metric: &str) -> Option<usize> {
    // A match compiles to length checks and one comparison; it runs once
    // per sample on the million-sample path.
    Some(match metric {
        "allocator_allocated_bytes" => 0,
        "allocator_reserved_bytes" => 1,
        "device_memory_reserved_bytes" => 2,
        "device_memory_used_bytes" => 3,
        "engine_cache_occupied_bytes" => 4,
        "instance_memory_reserved_bytes" => 5,
        "instance_memory_used_bytes" => 6,
        "process_gpu_used_bytes" => 7,
        "process_rss_bytes" => 8,
        _ => return None,
    })
}

/// Index of a state in [`STATES`].
pub fn state_index(state: &str) -> Option<usize> {
    Some(match state {
        "valid" => 0,
        "missing" => 1,
        "stale" => 2,
        "invalid" => 3,
        _ => return None,
    })
}

pub fn metric_scope(metric: &str) -> Option<&'static str> {
    metric_index(metric).map(|i| METRICS[i].1)
}

pub fn metric_owner(metric: &str) -> Option<&'static str> {
    metric_index(metric).map(|i| METRICS[i].2)
}

/// The four sample states, in the order reports list them.
pub const STATES: [&str; 4] = ["valid", "missing", "stale", "invalid"];
const PROVENANCE: [&str; 3] = ["observed", "reported", "estimated"];

/// Whether a domain names a host boot, not only a host name (A.2).
pub fn is_boot_qualified(domain: &str) -> bool {
    let parts: Vec<&str> = domain.split('/').collect();
    parts.len() == 3 && parts.iter().all(|p| !p.is_empty()) && parts[2] == WALL_CLOCK
}

/// Validate and type one decoded telemetry record (docs/telemetry.md §4.2). The
/// first failing check gives the message, worded as the reference words it.
pub fn parse_sample(record: &Value) -> Result<ServerSample, String> {
    let Some(obj) = record.as_object() else {
        return Err("record must be an object".into());
    };
    let version_ok = obj
        .get("schema_version")
        .and_then(strict_int)
        .is_some_and(|v| v == IntVal::Small(TELEMETRY_SCHEMA_VERSION));
    if !version_ok || obj.get("event_type").and_then(Value::as_str) != Some(TELEMETRY_EVENT_TYPE) {
        return Err("unsupported telemetry record".into());
    }
    let Some(raw_identity) = obj.get("identity") else {
        return Err("'identity'".into());
    };
    let identity = parse_identity(raw_identity)?;
    const REQUIRED: [&str; 9] = [
        "run_id",
        "observed_at_ns",
        "metric",
        "value_bytes",
        "state",
        "source",
        "interval_ms",
        "detail",
        "provenance",
    ];
    for key in REQUIRED {
        if !obj.contains_key(key) {
            return Err(format!("'{key}'"));
        }
    }
    let field = |key: &str| obj.get(key).unwrap_or(&Value::Null);
    let run_id = nonempty_str(field("run_id"));
    let metric = field("metric")
        .as_str()
        .filter(|m| metric_index(m).is_some());
    let source = nonempty_str(field("source"));
    let (Some(run_id), Some(metric), Some(source)) = (run_id, metric, source) else {
        return Err("run_id, supported metric, and source are required".into());
    };
    let (Some(observed_at_ns), Some(interval_ms)) = (
        positive_int(field("observed_at_ns")),
        positive_int(field("interval_ms")),
    ) else {
        return Err("observed_at_ns and interval_ms must be positive".into());
    };
    let state = member_of(field("state"), &STATES, "unsupported telemetry state")?;
    let provenance = member_of(
        field("provenance"),
        &PROVENANCE,
        "unsupported telemetry provenance",
    )?;
    let detail = match field("detail") {
        Value::Null => None,
        Value::String(s) if !crate::py::json::is_sentinel(s) => Some(s.clone()),
        _ => return Err("detail must be a string or null".into()),
    };
    let value_bytes = if state == "valid" {
        match strict_int(field("value_bytes")) {
            Some(IntVal::Small(v)) if v >= 0 => Some(v),
            // Python ints are unbounded; i64 is this port's limit.
            _ => return Err("valid samples require non-negative value_bytes".into()),
        }
    } else if field("value_bytes").is_null() {
        None
    } else {
        return Err("unavailable samples must have null value_bytes".into());
    };
    let scope = metric_scope(metric).unwrap_or("");
    if metric != "process_rss_bytes" && !truthy_opt(&identity.device_uuid) {
        return Err("GPU metrics require device_uuid".into());
    }
    if scope == "gpu_instance" && !truthy_opt(&identity.gpu_instance_id) {
        return Err("instance metrics require gpu_instance_id".into());
    }
    if obj.get("scope").and_then(Value::as_str) != Some(scope) {
        return Err("telemetry scope does not match metric".into());
    }
    if obj.get("clock_domain").and_then(Value::as_str) != Some(identity.clock_domain().as_str()) {
        return Err("telemetry clock domain does not match host".into());
    }
    if obj.get("counter_owner").and_then(Value::as_str) != metric_owner(metric) {
        return Err("telemetry counter owner does not match metric".into());
    }
    Ok(ServerSample {
        run_id: run_id.to_owned(),
        identity,
        observed_at_ns,
        metric: metric.to_owned(),
        value_bytes,
        state: state.to_owned(),
        source: source.to_owned(),
        interval_ms,
        detail,
        provenance: provenance.to_owned(),
    })
}

/// `ServerIdentity(**record["identity"])` with its `__post_init__` checks
/// (one parse with the collector's validation: `model::identity`).
fn parse_identity(raw: &Value) -> Result<Identity, String> {
    Identity::from_json(raw).map_err(|e| e.to_string())
}

/// Check `value in {choices}` as Python does, including its `TypeError` for
/// an unhashable list or object.
fn member_of<'a>(value: &Value, choices: &[&'a str], message: &str) -> Result<&'a str, String> {
    match value {
        Value::Array(_) | Value::Object(_) => Err(format!(
            "unhashable type: '{}'",
            crate::py::value::type_name(value)
        )),
        Value::String(s) if !crate::py::json::is_sentinel(s) => choices
            .iter()
            .find(|c| **c == s.as_str())
            .copied()
            .ok_or_else(|| message.to_owned()),
        _ => Err(message.to_owned()),
    }
}

/// A JSON integer token's value. `Big` is an integer beyond `i64` (Python
/// keeps it; this port rejects it where an `i64` is needed).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum IntVal {
    Small(i64),
    Big,
}

/// The value if it is a JSON integer (not a float, never a boolean).
pub(crate) fn strict_int(value: &Value) -> Option<IntVal> {
    let Value::Number(n) = value else {
        return None;
    };
    if let Some(i) = n.as_i64() {
        Some(IntVal::Small(i))
    } else if n.is_u64() {
        Some(IntVal::Big)
    } else {
        None
    }
}

fn positive_int(value: &Value) -> Option<i64> {
    match strict_int(value) {
        Some(IntVal::Small(v)) if v > 0 => Some(v),
        _ => None,
    }
}

/// A non-empty Python `str` (a NaN or ±∞ sentinel is a float, not a string).
fn nonempty_str(value: &Value) -> Option<&str> {
    crate::py::json::as_py_str(value).filter(|s| !s.is_empty())
}

fn truthy_opt(value: &Option<String>) -> bool {
    value.as_deref().is_some_and(|s| !s.is_empty())
}

/// Parse one non-blank line into a JSON value. Kept in one place so the
/// Python-compatible parser (NaN tokens, Python's error wording) can replace
/// serde_json here without touching the loader.
fn parse_line(line: &str) -> Result<Value, String> {
    crate::py::json::parse(line).map_err(|e| e.to_string())
}

/// The keys of a telemetry record that the sample type keeps; any other key is
/// carried beside the sample so ingest stays lossless.
pub const SAMPLE_KEYS: [&str; 15] = [
    "schema_version",
    "event_type",
    "scope",
    "clock_domain",
    "counter_owner",
    "run_id",
    "identity",
    "observed_at_ns",
    "metric",
    "value_bytes",
    "state",
    "source",
    "interval_ms",
    "detail",
    "provenance",
];

/// A sample with the keys of its record that the sample type does not keep.
pub type SampleWithExtra = (ServerSample, Option<serde_json::Map<String, Value>>);

/// Like [`load_telemetry_text`], also returning each sample's extra keys (or None).
pub fn load_telemetry_with_extras(text: &str) -> Result<Vec<SampleWithExtra>, String> {
    let mut samples = Vec::new();
    for (index, line) in universal_lines(text).into_iter().enumerate() {
        if line.chars().all(py_isspace) {
            continue;
        }
        let parsed =
            parse_line(line).and_then(|payload| parse_sample(&payload).map(|s| (s, payload)));
        match parsed {
            Ok((sample, payload)) => {
                let extra: serde_json::Map<String, Value> = payload
                    .as_object()
                    .map(|m| {
                        m.iter()
                            .filter(|(k, _)| !SAMPLE_KEYS.contains(&k.as_str()))
                            .map(|(k, v)| (k.clone(), v.clone()))
                            .collect()
                    })
                    .unwrap_or_default();
                samples.push((sample, if extra.is_empty() { None } else { Some(extra) }));
            }
            Err(reason) => {
                return Err(format!("invalid telemetry line {}: {reason}", index + 1));
            }
        }
    }
    if samples.is_empty() {
        return Err("telemetry artifact has no samples".into());
    }
    Ok(samples)
}

/// Python's `str.isspace` for one character (it also counts the four ASCII
/// separators U+001C..U+001F, which Rust's `char::is_whitespace` does not).
fn py_isspace(c: char) -> bool {
    crate::py::text::is_space(c)
}

/// Split text into physical lines with universal newlines (`\n`, `\r\n`,
/// `\r`), as Python's text mode reads them. Line terminators are dropped.
pub(crate) fn universal_lines(text: &str) -> Vec<&str> {
    crate::py::text::universal_lines(text)
}

/// Load a whole telemetry file's text (docs/telemetry.md §4.1): every non-blank
/// line must be a valid sample; blank lines still take a line number.
pub fn load_telemetry_text(text: &str) -> Result<Vec<ServerSample>, String> {
    let mut samples = Vec::new();
    for (index, line) in universal_lines(text).into_iter().enumerate() {
        if line.chars().all(py_isspace) {
            continue;
        }
        let sample = parse_line(line).and_then(|payload| parse_sample(&payload));
        match sample {
            Ok(sample) => samples.push(sample),
            Err(reason) => {
                return Err(format!("invalid telemetry line {}: {reason}", index + 1));
            }
        }
    }
    if samples.is_empty() {
        return Err("telemetry artifact has no samples".into());
    }
    Ok(samples)
}

impl ServerSample {
    /// Appends the sample as the collector writes it (all 15 fields,
    /// docs/telemetry.md §2.1), with the keys its file carried beside them,
    /// and a newline. `head` is [`RecordHead::new`] of the sample's run ID
    /// and identity ([`ServerSample::head`] makes one).
    pub fn write_record(
        &self,
        head: &RecordHead,
        extra: Option<&Map<String, Value>>,
        out: &mut String,
    ) {
        let fields = SampleFields {
            observed_at_ns: self.observed_at_ns,
            metric: &self.metric,
            scope: self.scope(),
            counter_owner: self.counter_owner(),
            value_bytes: self.value_bytes.map(i128::from),
            state: &self.state,
            source: &self.source,
            interval_ms: self.interval_ms,
            detail: self.detail.as_deref(),
            provenance: &self.provenance,
        };
        write_record(out, head, &fields, extra);
    }

    /// The shared part of this sample's record.
    pub fn head(&self) -> RecordHead {
        RecordHead::new(&self.run_id, &self.identity)
    }
}

pub(crate) fn opt_str(value: &Option<String>) -> Value {
    value
        .as_ref()
        .map_or(Value::Null, |s| Value::from(s.clone()))
}

pub(crate) fn opt_int(value: Option<i64>) -> Value {
    value.map_or(Value::Null, Value::from)
}
