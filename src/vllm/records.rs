//! Strict parsing of the artifact's vLLM records (docs/artifact.md §3.12.1,
//! §3.12.2): `infer.vllm_scrape` (one `/metrics` response in compact form)
//! and `infer.vllm_span` (one OpenTelemetry span). Analysis refuses an
//! artifact with an invalid one (exit 5), so each check runs in the
//! reference's order and fails with its wording.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use crate::py::builtins;
use crate::py::json as pyjson;

pub const SCRAPE_EVENT: &str = "infer.vllm_scrape";
pub const SPAN_EVENT: &str = "infer.vllm_span";
const MARKERS: [&str; 4] = ["phase_start", "interval", "phase_end", "manual"];
const SPAN_SOURCES: [&str; 3] = ["otlp_http_receiver", "otlp_json_file", "jsonl_file"];

/// A histogram or summary sample: cumulative buckets under their native
/// `le` strings; a missing `_sum`/`_count` stays `None`, never zero.
#[derive(Debug, Clone)]
pub struct Hist {
    pub buckets: Vec<(String, f64)>,
    pub sum: Option<f64>,
    pub count: Option<f64>,
}

/// One series' value in a compact scrape.
#[derive(Debug, Clone)]
pub enum Sample {
    Num(f64),
    Hist(Hist),
}

/// Float equality as the reference's dict comparisons see it: the decoder
/// hands out one shared NaN object, so NaN equals NaN by identity.
fn same_float(a: f64, b: f64) -> bool {
    a == b || (a.is_nan() && b.is_nan())
}

fn same_opt(a: Option<f64>, b: Option<f64>) -> bool {
    match (a, b) {
        (Some(x), Some(y)) => same_float(x, y),
        (None, None) => true,
        _ => false,
    }
}

impl PartialEq for Sample {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (Sample::Num(a), Sample::Num(b)) => same_float(*a, *b),
            (Sample::Hist(a), Sample::Hist(b)) => {
                a.buckets.len() == b.buckets.len()
                    && a.buckets
                        .iter()
                        .zip(&b.buckets)
                        .all(|((l1, c1), (l2, c2))| l1 == l2 && same_float(*c1, *c2))
                    && same_opt(a.sum, b.sum)
                    && same_opt(a.count, b.count)
            }
            _ => false,
        }
    }
}

/// One scrape in compact form: families by kind, shared label sets, values.
#[derive(Debug, Clone, Default)]
pub struct Compact {
    pub families: BTreeMap<String, String>,
    pub label_sets: BTreeMap<String, BTreeMap<String, String>>,
    pub values: BTreeMap<String, BTreeMap<String, Sample>>,
}

impl Compact {
    /// Every distinct value of one label, sorted.
    pub fn label_values(&self, label: &str) -> Vec<String> {
        let mut found: Vec<String> = self
            .label_sets
            .values()
            .filter_map(|set| set.get(label).cloned())
            .collect();
        found.sort();
        found.dedup();
        found
    }
}

/// What one scrape exposed, as the scraper classified it. List items are
/// kept as JSON values: the reference copies whatever the record holds.
#[derive(Debug, Clone, Default)]
pub struct Discovery {
    pub optional_absent: Vec<Value>,
    pub optional_present: Vec<Value>,
    pub deprecated_present: Vec<Value>,
    pub removed_present: Vec<Value>,
    pub unknown: Vec<Value>,
    pub engines: Vec<Value>,
    pub model_names: Vec<Value>,
    pub process_start_ns: Value,
}

/// A parsed `infer.vllm_scrape` record (the fields analysis reads).
#[derive(Debug, Clone)]
pub struct Scrape {
    pub observed_at_ns: i128,
    pub source_url: String,
    pub marker: String,
    pub status: String,
    pub case_id: Option<String>,
    pub phase: Option<String>,
    pub scrape: Option<Compact>,
    pub discovery: Option<Discovery>,
}

impl Scrape {
    pub fn is_ok(&self) -> bool {
        self.status == "ok"
    }
}

/// A parsed `infer.vllm_span` record.
#[derive(Debug, Clone)]
pub struct Span {
    pub session_id: String,
    pub run_id: String,
    pub source: String,
    pub name: String,
    pub clock_domain: String,
    pub received_at_ns: Value,
    pub trace_id: Option<String>,
    pub span_id: Option<String>,
    pub parent_span_id: Option<String>,
    pub kind: Option<String>,
    pub start_unix_ns: Value,
    pub end_unix_ns: Value,
    pub attributes: Map<String, Value>,
    pub resource: Map<String, Value>,
    pub scope: Map<String, Value>,
    pub status: Option<Map<String, Value>>,
    pub dropped: Map<String, Value>,
    pub request_id: Option<String>,
}

impl Span {
    /// The record shape of docs/artifact.md §3.12.2 (the reference's `to_record`).
    pub fn to_record(&self) -> Value {
        let opt = |s: &Option<String>| s.clone().map_or(Value::Null, Value::String);
        let mut m = Map::new();
        m.insert("schema_version".into(), Value::from(1));
        m.insert("event_type".into(), Value::from(SPAN_EVENT));
        m.insert("session_id".into(), Value::from(self.session_id.clone()));
        m.insert("run_id".into(), Value::from(self.run_id.clone()));
        m.insert("source".into(), Value::from(self.source.clone()));
        m.insert("name".into(), Value::from(self.name.clone()));
        m.insert(
            "clock_domain".into(),
            Value::from(self.clock_domain.clone()),
        );
        m.insert("received_at_ns".into(), self.received_at_ns.clone());
        m.insert("timestamp_ns".into(), self.start_unix_ns.clone());
        m.insert("trace_id".into(), opt(&self.trace_id));
        m.insert("span_id".into(), opt(&self.span_id));
        m.insert("parent_span_id".into(), opt(&self.parent_span_id));
        m.insert("kind".into(), opt(&self.kind));
        m.insert("start_unix_ns".into(), self.start_unix_ns.clone());
        m.insert("end_unix_ns".into(), self.end_unix_ns.clone());
        m.insert("attributes".into(), Value::Object(self.attributes.clone()));
        m.insert("resource".into(), Value::Object(self.resource.clone()));
        m.insert("scope".into(), Value::Object(self.scope.clone()));
        m.insert(
            "status".into(),
            self.status.clone().map_or(Value::Null, Value::Object),
        );
        m.insert("dropped".into(), Value::Object(self.dropped.clone()));
        m.insert("request_id".into(), opt(&self.request_id));
        Value::Object(m)
    }

    /// What the exporter said, apart from when and how it was delivered;
    /// compared with Python equality (`1 == 1.0`).
    pub fn same_content(&self, other: &Span) -> bool {
        self.name == other.name
            && self.kind == other.kind
            && pyjson::py_eq(&self.start_unix_ns, &other.start_unix_ns)
            && pyjson::py_eq(&self.end_unix_ns, &other.end_unix_ns)
            && pyjson::py_eq(
                &Value::Object(self.attributes.clone()),
                &Value::Object(other.attributes.clone()),
            )
            && match (&self.status, &other.status) {
                (None, None) => true,
                (Some(a), Some(b)) => {
                    pyjson::py_eq(&Value::Object(a.clone()), &Value::Object(b.clone()))
                }
                _ => false,
            }
    }
}

// ------------------------------------------------------------ field rules

fn nonempty(v: &Value, name: &str) -> Result<String, String> {
    match builtins::as_str(v) {
        Some(s) if !s.is_empty() => Ok(s.to_owned()),
        _ => Err(format!("{name} must be a non-empty string")),
    }
}

fn optional_nonempty(v: &Value, name: &str) -> Result<Option<String>, String> {
    if v.is_null() {
        Ok(None)
    } else {
        nonempty(v, name).map(Some)
    }
}

fn positive_int(v: &Value, name: &str) -> Result<i128, String> {
    match builtins::int128(v) {
        Some(n) if n > 0 => Ok(n),
        _ => Err(format!("{name} must be a positive integer")),
    }
}

fn optional_nonnegative_int(v: &Value, name: &str) -> Result<Option<i128>, String> {
    if v.is_null() {
        return Ok(None);
    }
    match builtins::int128(v) {
        Some(n) if n >= 0 => Ok(Some(n)),
        _ => Err(format!("{name} must be a non-negative integer or null")),
    }
}

fn envelope(record: &Value, event_type: &str) -> Result<(), String> {
    let version = pyjson::get(record, "schema_version");
    let ok = builtins::int128(version) == Some(1)
        && builtins::as_str(pyjson::get(record, "event_type")) == Some(event_type);
    if ok {
        Ok(())
    } else {
        Err(format!("unsupported {event_type} record"))
    }
}

fn in_set(v: &Value, set: &[&str]) -> Option<String> {
    builtins::as_str(v)
        .filter(|s| set.contains(s))
        .map(str::to_owned)
}

// ------------------------------------------------------------ scrapes

/// Parses one `infer.vllm_scrape` record; the error is the reason text.
pub fn parse_scrape(record: &Value) -> Result<Scrape, String> {
    envelope(record, SCRAPE_EVENT)?;
    if builtins::as_str(pyjson::get(record, "observation_scope")) != Some("engine_aggregate") {
        return Err("scrape records are engine-aggregate evidence".into());
    }
    let mut required = Vec::new();
    for key in [
        "session_id",
        "run_id",
        "observed_at_ns",
        "source_url",
        "marker",
        "interval_ms",
        "status",
        "clock_domain",
    ] {
        required.push(builtins::subscript(record, key)?);
    }
    let [session_id, run_id, observed, source_url, marker, interval, status, clock] = required[..]
    else {
        return Err("internal: required keys".into());
    };
    let get = |k| pyjson::get(record, k);
    let compact = match get("scrape") {
        Value::Null => None,
        v => Some(parse_compact(v)?),
    };
    let discovery = match get("discovery") {
        Value::Null => None,
        v => Some(parse_discovery(v)?),
    };
    nonempty(session_id, "session_id")?;
    nonempty(run_id, "run_id")?;
    let source_url = nonempty(source_url, "source_url")?;
    nonempty(clock, "clock_domain")?;
    let observed_at_ns = positive_int(observed, "observed_at_ns")?;
    positive_int(interval, "interval_ms")?;
    let marker = in_set(marker, &MARKERS).ok_or("unsupported scrape marker")?;
    let status = in_set(status, &["ok", "error"]).ok_or("unsupported scrape status")?;
    let case_id = optional_nonempty(get("case_id"), "case_id")?;
    let phase = optional_nonempty(get("phase"), "phase")?;
    let error = optional_nonempty(get("error"), "error")?;
    optional_nonempty(get("content_digest"), "content_digest")?;
    optional_nonnegative_int(get("http_status"), "http_status")?;
    optional_nonnegative_int(get("content_bytes"), "content_bytes")?;
    let completed = optional_nonnegative_int(get("completed_at_ns"), "completed_at_ns")?;
    if completed.is_some_and(|c| c < observed_at_ns) {
        return Err("completed_at_ns must not precede observed_at_ns".into());
    }
    let duration = get("duration_ms");
    if !duration.is_null() {
        match pyjson::real(duration) {
            Some(d) if d.is_finite() && d >= 0.0 => {}
            _ => return Err("duration_ms must be a non-negative number or null".into()),
        }
    }
    if status == "ok" {
        if compact.is_none() || discovery.is_none() {
            return Err("an ok scrape carries its series and discovery".into());
        }
        if error.is_some() {
            return Err("an ok scrape has no error".into());
        }
    } else if compact.is_some() || discovery.is_some() {
        return Err("a failed scrape carries no series".into());
    } else if error.is_none() {
        return Err("a failed scrape says why".into());
    }
    Ok(Scrape {
        observed_at_ns,
        source_url,
        marker,
        status,
        case_id,
        phase,
        scrape: compact,
        discovery,
    })
}

/// A sample value: a number or one of the strings `NaN`, `+Inf`, `-Inf`.
fn decode_number(v: &Value) -> Result<f64, String> {
    match builtins::as_str(v) {
        Some("NaN") => Ok(f64::NAN),
        Some("+Inf") => Ok(f64::INFINITY),
        Some("-Inf") => Ok(f64::NEG_INFINITY),
        Some(s) => Err(format!("not a sample value: {}", builtins::repr_str(s))),
        None => builtins::float(v),
    }
}

fn parse_hist(v: &Map<String, Value>) -> Result<Hist, String> {
    let raw = v.get("buckets").cloned().unwrap_or(Value::Array(vec![]));
    let mut buckets = Vec::new();
    for item in builtins::iterate(&raw)? {
        let (le, count) = builtins::unpack2(&item)?;
        buckets.push((pyjson::str_form(&le), decode_number(&count)?));
    }
    let sum = v.get("sum").ok_or_else(|| builtins::repr_str("sum"))?;
    let count = v.get("count").ok_or_else(|| builtins::repr_str("count"))?;
    let opt = |x: &Value| {
        if x.is_null() {
            Ok(None)
        } else {
            decode_number(x).map(Some)
        }
    };
    Ok(Hist {
        buckets,
        sum: opt(sum)?,
        count: opt(count)?,
    })
}

fn parse_compact(v: &Value) -> Result<Compact, String> {
    let mut out = Compact::default();
    for (k, kind) in builtins::items(builtins::subscript(v, "families")?)? {
        out.families.insert(k.clone(), pyjson::str_form(kind));
    }
    for (name, by_set) in builtins::items(builtins::subscript(v, "values")?)? {
        let mut series = BTreeMap::new();
        for (set_id, value) in builtins::items(by_set)? {
            let sample = match value {
                Value::Object(m) => Sample::Hist(parse_hist(m)?),
                other => Sample::Num(decode_number(other)?),
            };
            series.insert(set_id.clone(), sample);
        }
        out.values.insert(name.clone(), series);
    }
    for (set_id, labels) in builtins::items(builtins::subscript(v, "label_sets")?)? {
        let set = builtins::items(labels)?
            .iter()
            .map(|(a, b)| (a.clone(), pyjson::str_form(b)))
            .collect();
        out.label_sets.insert(set_id.clone(), set);
    }
    if let Some(helps) = v.get("helps") {
        builtins::items(helps)?;
    }
    Ok(out)
}

fn parse_discovery(v: &Value) -> Result<Discovery, String> {
    let list = |key: &str| -> Result<Vec<Value>, String> {
        builtins::iterate(builtins::subscript(v, key)?)
    };
    list("present")?;
    list("absent")?;
    let optional_absent = list("optional_absent")?;
    let optional_present = match v.get("optional_present") {
        Some(x) => builtins::iterate(x)?,
        None => Vec::new(),
    };
    Ok(Discovery {
        optional_absent,
        optional_present,
        deprecated_present: list("deprecated_present")?,
        removed_present: list("removed_present")?,
        unknown: list("unknown")?,
        engines: list("engines")?,
        model_names: list("model_names")?,
        process_start_ns: builtins::subscript(v, "process_start_ns")?.clone(),
    })
}

// ------------------------------------------------------------ spans

/// Parses one `infer.vllm_span` record; the error is the reason text.
pub fn parse_span(record: &Value) -> Result<Span, String> {
    envelope(record, SPAN_EVENT)?;
    let mut required = Vec::new();
    for key in ["session_id", "run_id", "source", "name", "clock_domain"] {
        required.push(builtins::subscript(record, key)?.clone());
    }
    let get = |k| pyjson::get(record, k);
    let attributes = builtins::dict_or_empty(get("attributes"))?;
    let resource = builtins::dict_or_empty(get("resource"))?;
    let scope = builtins::dict_or_empty(get("scope"))?;
    let status = get("status").clone();
    let dropped = builtins::dict_or_empty(get("dropped"))?;
    let fields = SpanFields {
        session_id: required[0].clone(),
        run_id: required[1].clone(),
        source: required[2].clone(),
        name: required[3].clone(),
        clock_domain: required[4].clone(),
        received_at_ns: get("received_at_ns").clone(),
        trace_id: get("trace_id").clone(),
        span_id: get("span_id").clone(),
        parent_span_id: get("parent_span_id").clone(),
        kind: get("kind").clone(),
        start_unix_ns: get("start_unix_ns").clone(),
        end_unix_ns: get("end_unix_ns").clone(),
        attributes,
        resource,
        scope,
        status,
        dropped,
        request_id: get("request_id").clone(),
    };
    fields.validate()
}

/// A span's fields before the record's own checks (`__post_init__`); the
/// dictionaries are `None` when `dict()` produced a non-string key.
pub struct SpanFields {
    pub session_id: Value,
    pub run_id: Value,
    pub source: Value,
    pub name: Value,
    pub clock_domain: Value,
    pub received_at_ns: Value,
    pub trace_id: Value,
    pub span_id: Value,
    pub parent_span_id: Value,
    pub kind: Value,
    pub start_unix_ns: Value,
    pub end_unix_ns: Value,
    pub attributes: Option<Map<String, Value>>,
    pub resource: Option<Map<String, Value>>,
    pub scope: Option<Map<String, Value>>,
    pub status: Value,
    pub dropped: Option<Map<String, Value>>,
    pub request_id: Value,
}

impl SpanFields {
    /// The span record's checks, in the reference's order.
    pub fn validate(self) -> Result<Span, String> {
        let session_id = nonempty(&self.session_id, "session_id")?;
        let run_id = nonempty(&self.run_id, "run_id")?;
        let name = nonempty(&self.name, "name")?;
        let clock_domain = nonempty(&self.clock_domain, "clock_domain")?;
        let source = in_set(&self.source, &SPAN_SOURCES).ok_or("unsupported span source")?;
        let trace_id = optional_nonempty(&self.trace_id, "trace_id")?;
        let span_id = optional_nonempty(&self.span_id, "span_id")?;
        let parent_span_id = optional_nonempty(&self.parent_span_id, "parent_span_id")?;
        let kind = optional_nonempty(&self.kind, "kind")?;
        let request_id = optional_nonempty(&self.request_id, "request_id")?;
        optional_nonnegative_int(&self.received_at_ns, "received_at_ns")?;
        let start = optional_nonnegative_int(&self.start_unix_ns, "start_unix_ns")?;
        let end = optional_nonnegative_int(&self.end_unix_ns, "end_unix_ns")?;
        if let (Some(s), Some(e)) = (start, end) {
            if e < s {
                return Err("end_unix_ns must be >= start_unix_ns".into());
            }
        }
        let dict = |m: Option<Map<String, Value>>, name: &str| {
            m.ok_or_else(|| format!("{name} must be an object with string keys"))
        };
        let attributes = dict(self.attributes, "attributes")?;
        let resource = dict(self.resource, "resource")?;
        let scope = dict(self.scope, "scope")?;
        let dropped = dict(self.dropped, "dropped")?;
        let status = match self.status {
            Value::Null => None,
            Value::Object(m) => Some(m),
            _ => return Err("status must be an object with string keys".into()),
        };
        Ok(Span {
            session_id,
            run_id,
            source,
            name,
            clock_domain,
            received_at_ns: self.received_at_ns,
            trace_id,
            span_id,
            parent_span_id,
            kind,
            start_unix_ns: self.start_unix_ns,
            end_unix_ns: self.end_unix_ns,
            attributes,
            resource,
            scope,
            status,
            dropped,
            request_id,
        })
    }
}

/// Checks every vLLM record in record order (docs/artifact.md §5 E10); the error
/// is `invalid <event_type> record <i>: <reason>`.
pub fn validate_records(records: &[(usize, &Value)]) -> Result<(), String> {
    for (index, record) in records {
        let event_type = pyjson::get(record, "event_type");
        let result = match builtins::as_str(event_type) {
            Some(SCRAPE_EVENT) => parse_scrape(record).map(|_| ()),
            Some(SPAN_EVENT) => parse_span(record).map(|_| ()),
            _ => Ok(()),
        };
        if let Err(reason) = result {
            return Err(format!(
                "invalid {} record {index}: {reason}",
                pyjson::str_form(event_type)
            ));
        }
    }
    Ok(())
}

/// The artifact's scrapes, valid ones only, sorted by `observed_at_ns` (stable).
pub fn scrapes_of(records: &[Value]) -> Vec<Scrape> {
    let mut scrapes: Vec<Scrape> = records
        .iter()
        .filter(|r| builtins::as_str(pyjson::get(r, "event_type")) == Some(SCRAPE_EVENT))
        .filter_map(|r| parse_scrape(r).ok())
        .collect();
    scrapes.sort_by_key(|s| s.observed_at_ns);
    scrapes
}

/// Span records parsed, valid ones only, in order.
pub fn spans_of<'a>(records: impl IntoIterator<Item = &'a Value>) -> Vec<Span> {
    records
        .into_iter()
        .filter(|r| builtins::as_str(pyjson::get(r, "event_type")) == Some(SPAN_EVENT))
        .filter_map(|r| parse_span(r).ok())
        .collect()
}
