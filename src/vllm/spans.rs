//! The span join (docs/report.md §6.3.5): vLLM spans matched to the run's
//! measured requests by the client's `X-Request-Id`, one trusted span per
//! request. A redelivered span counts once; a request whose span came back
//! with different content, or that has several spans, is quarantined, since
//! there is no telling which one is right.

use std::collections::{BTreeMap, HashMap, HashSet};

use serde_json::{json, Map, Value};

use super::records::{self, Span};
use crate::analysis::stats;
use crate::model::Request;
use crate::py::builtins;
use crate::py::json as pyjson;

pub const RESIDENCY_NOTE: &str = "wall-clock residency in a scheduler phase, not GPU time";

/// Span latency attributes (seconds) by their short report names.
pub const SPAN_LATENCY_ATTRIBUTES: [(&str, &str); 6] = [
    ("time_in_queue", "gen_ai.latency.time_in_queue"),
    ("time_to_first_token", "gen_ai.latency.time_to_first_token"),
    (
        "time_in_model_prefill",
        "gen_ai.latency.time_in_model_prefill",
    ),
    (
        "time_in_model_decode",
        "gen_ai.latency.time_in_model_decode",
    ),
    (
        "time_in_model_inference",
        "gen_ai.latency.time_in_model_inference",
    ),
    ("e2e", "gen_ai.latency.e2e"),
];

/// The outcome of joining spans to requests.
#[derive(Debug, Clone, Default)]
pub struct SpanJoin {
    /// `x_request_id` → the attributes of its single trusted span.
    pub joined: HashMap<String, Map<String, Value>>,
    /// `x_request_id` → why its spans were left out
    /// (`conflicting_spans` | `multiple_spans`).
    pub quarantined: HashMap<String, String>,
    /// SPAN_SUMMARY, the `telemetry.vllm.spans` object.
    pub summary: Value,
}

/// Joins spans (artifact records first, then external ones) to the run's
/// requests: `requests` are all client `infer.request` records, any phase;
/// measured ones can join, the ids of the others mark warmup spans.
pub fn join_spans(spans: &[Value], requests: &[Request]) -> SpanJoin {
    let parsed = records::spans_of(spans);
    if parsed.is_empty() {
        // Nothing to join: skip indexing every request id of the run.
        return join_parsed(&parsed, &HashSet::new(), &HashSet::new());
    }
    let id_of = |r: &Request| builtins::as_str(&r.x_request_id).map(str::to_owned);
    let known: HashSet<String> = requests
        .iter()
        .filter(|r| r.is_measured())
        .filter_map(id_of)
        .collect();
    let warmup: HashSet<String> = requests
        .iter()
        .filter(|r| !r.is_measured())
        .filter_map(id_of)
        .collect();
    join_parsed(&parsed, &known, &warmup)
}

fn join_parsed(spans: &[Span], known: &HashSet<String>, warmup: &HashSet<String>) -> SpanJoin {
    let deliveries = spans.len();
    // Unique spans by (trace_id, span_id); a span missing either id is kept.
    let mut seen: HashMap<(&str, &str), &Span> = HashMap::new();
    let mut unique: Vec<&Span> = Vec::new();
    let mut duplicates = 0usize;
    let mut conflicted: HashSet<(String, String)> = HashSet::new();
    for span in spans {
        let (Some(t), Some(s)) = (span.trace_id.as_deref(), span.span_id.as_deref()) else {
            unique.push(span);
            continue;
        };
        match seen.get(&(t, s)) {
            None => {
                seen.insert((t, s), span);
                unique.push(span);
            }
            Some(first) => {
                duplicates += 1;
                if !first.same_content(span) {
                    conflicted.insert((t.to_owned(), s.to_owned()));
                }
            }
        }
    }
    let mut by_request: Vec<(String, Vec<&Span>)> = Vec::new();
    let mut index: HashMap<String, usize> = HashMap::new();
    let mut unjoined: BTreeMap<String, i64> = BTreeMap::new();
    let mut sources: BTreeMap<String, i64> = BTreeMap::new();
    for span in &unique {
        *sources.entry(span.source.clone()).or_default() += 1;
        let reason = if span.name != "llm_request" {
            Some("not_a_request_span")
        } else {
            match &span.request_id {
                None => Some("no_request_id"),
                Some(id) if warmup.contains(id) => Some("warmup_request"),
                Some(id) if !known.contains(id) => Some("request_not_in_run"),
                Some(_) => None,
            }
        };
        match (reason, &span.request_id) {
            (None, Some(id)) => {
                let at = *index.entry(id.clone()).or_insert_with(|| {
                    by_request.push((id.clone(), Vec::new()));
                    by_request.len() - 1
                });
                by_request[at].1.push(span);
            }
            (reason, _) => {
                *unjoined
                    .entry(reason.unwrap_or("unknown").to_owned())
                    .or_default() += 1;
            }
        }
    }
    let mut quarantined = HashMap::new();
    let mut joined = HashMap::new();
    let mut joined_spans = 0usize;
    for (id, items) in &by_request {
        let conflicting = items.iter().any(|s| match (&s.trace_id, &s.span_id) {
            (Some(t), Some(p)) => conflicted.contains(&(t.clone(), p.clone())),
            _ => false,
        });
        if conflicting {
            quarantined.insert(id.clone(), "conflicting_spans".to_owned());
        } else if items.len() > 1 {
            quarantined.insert(id.clone(), "multiple_spans".to_owned());
        } else {
            joined_spans += items.len();
            joined.insert(id.clone(), items[0].attributes.clone());
        }
    }
    let mut reasons: BTreeMap<String, i64> = BTreeMap::new();
    for reason in quarantined.values() {
        *reasons.entry(reason.clone()).or_default() += 1;
    }
    let summary = json!({
        "total": unique.len(),
        "joined": joined_spans,
        "unjoined_by_reason": unjoined,
        "sources": sources,
        "deliveries": deliveries,
        "duplicates": duplicates,
        "conflicting_duplicates": conflicted.len(),
        "quarantined_requests": reasons,
        "note": RESIDENCY_NOTE,
    });
    SpanJoin {
        joined,
        quarantined,
        summary,
    }
}

/// CASE_SPANS for one case's measured request records.
pub fn case_spans(requests: &[&Value], join: &SpanJoin) -> Value {
    let ids: Vec<String> = requests
        .iter()
        .map(|r| pyjson::str_form(pyjson::get(r, "x_request_id")))
        .collect();
    let joined: Vec<&Map<String, Value>> = ids.iter().filter_map(|i| join.joined.get(i)).collect();
    let mut latency = Map::new();
    for (short, attribute) in SPAN_LATENCY_ATTRIBUTES {
        let values: Vec<f64> = joined
            .iter()
            .filter_map(|a| a.get(attribute))
            .filter_map(pyjson::real)
            .map(|v| v * 1000.0)
            .collect();
        if values.is_empty() {
            continue;
        }
        let mean = values.iter().fold(0.0, |acc, v| acc + v) / values.len() as f64;
        latency.insert(
            short.to_owned(),
            json!({
                "p50_ms": opt_float(stats::percentile(&values, 0.5)),
                "p95_ms": opt_float(stats::percentile(&values, 0.95)),
                "mean_ms": pyjson::nonfinite_value(mean),
                "n": values.len(),
            }),
        );
    }
    json!({
        "requests": requests.len(),
        "requests_with_span": ids.iter().filter(|i| join.joined.contains_key(*i)).count(),
        "spans": joined.len(),
        "quarantined_requests": ids.iter().filter(|i| join.quarantined.contains_key(*i)).count(),
        "latency": latency,
        "note": RESIDENCY_NOTE,
    })
}

fn opt_float(v: Option<f64>) -> Value {
    v.map_or(Value::Null, pyjson::nonfinite_value)
}

/// Requests the server is known to have admitted: a joined or a
/// quarantined span shows the engine saw them.
pub fn admitted_ids(join: &SpanJoin) -> HashSet<String> {
    join.joined
        .keys()
        .chain(join.quarantined.keys())
        .cloned()
        .collect()
}

/// A request's server-side value in milliseconds (docs/slo-policy.md §7.2), or why
/// there is none.
pub fn server_metric(join: &SpanJoin, x_request_id: &str, key: &str) -> Result<f64, String> {
    let Some(attributes) = join.joined.get(x_request_id) else {
        return Err(join
            .quarantined
            .get(x_request_id)
            .cloned()
            .unwrap_or_else(|| "no_joined_span".to_owned()));
    };
    let attribute = match key {
        "server.ttft" => "gen_ai.latency.time_to_first_token",
        "server.e2e" => "gen_ai.latency.e2e",
        "server.queue" => "gen_ai.latency.time_in_queue",
        other => return Err(format!("no_per_request_value:{other}")),
    };
    attributes
        .get(attribute)
        .and_then(pyjson::real)
        .map(|seconds| seconds * 1000.0)
        .ok_or_else(|| format!("span_attribute_missing:{attribute}"))
}
