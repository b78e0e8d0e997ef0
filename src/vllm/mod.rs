//! vLLM's own telemetry in a run (docs/report.md §6.3, §7, §9; docs/artifact.md
//! §3.12): strict parsing of `infer.vllm_scrape` / `infer.vllm_span`
//! records and external span files, the `telemetry.vllm` report block
//! (engine summary, per-case metric windows per engine), the span join that
//! gives each measured request its single trusted server span (used by the
//! server SLO criteria and server admission), the `vllm_metrics` and
//! `vllm_spans` observers, and the vLLM text lines. Pure: JSON values in,
//! JSON values and strings out.
//!
//! Everything here is engine-aggregate or engine-side evidence: a scrape
//! describes every request the engine served, from every client, so nothing
//! attributes GPU time to a request.

pub mod catalog;
pub mod engine;
pub mod records;
pub mod spanfile;
pub mod spans;
pub mod text;

#[cfg(test)]
mod tests;

use serde_json::{json, Map, Value};

use crate::model::Request;
use crate::py::json as pyjson;

pub use records::validate_records;
pub use spanfile::load_span_file;
pub use spans::{admitted_ids, join_spans, server_metric, SpanJoin};
pub use text::{case_text_lines, run_text_lines};

/// The `telemetry.vllm` block (`{"status": "absent"}` when the run has no
/// vLLM evidence). `records` are all decoded records in file order;
/// `external_spans` the stamped records of `--vllm-spans` files. Case
/// membership is read from the records themselves (the string form of
/// `case_id`, `None` when absent, as the reference compares it), so
/// `_requests` is not consulted.
pub fn vllm_block(
    records: &[Value],
    external_spans: &[Value],
    join: &SpanJoin,
    _requests: &[Request],
) -> Value {
    engine::vllm_block(records, external_spans, join)
}

const SCRAPE_GAP_FACTOR: f64 = 2.0;
const SPAN_JOIN_FLOOR: f64 = 0.99;
const NOT_DELIVERED: [&str; 4] = ["dropped", "unreachable", "delivery_unknown", "rejected"];
const SPAN_PROBLEMS: [&str; 5] = [
    "decode_failures",
    "protobuf_unavailable",
    "handler_errors",
    "bad_requests",
    "unsupported_media",
];

/// One compared phase: a case's measured phase, start to drain end.
struct Phase {
    case_id: String,
}

fn is_type(r: &Value, t: &str) -> bool {
    pyjson::get(r, "event_type").as_str() == Some(t)
}

fn compared_phases(records: &[Value]) -> Vec<Phase> {
    records
        .iter()
        .filter(|r| {
            is_type(r, "infer.phase_window") && pyjson::get(r, "phase").as_str() == Some("measured")
        })
        .filter(|r| {
            pyjson::is_number(pyjson::get(r, "started_at_ns"))
                && pyjson::is_number(pyjson::get(r, "drained_at_ns"))
        })
        .map(|r| Phase {
            case_id: pyjson::str_form(pyjson::get(r, "case_id")),
        })
        .collect()
}

fn session_config(records: &[Value]) -> Map<String, Value> {
    records
        .iter()
        .filter(|r| is_type(r, "infer.session"))
        .find_map(|r| pyjson::get(r, "config").as_object().cloned())
        .unwrap_or_default()
}

fn phase_state(active: bool, reasons: Vec<String>) -> Value {
    json!({"active": active, "healthy": active && reasons.is_empty(), "reasons": reasons})
}

/// A requested observer's record over its (all judged) phases.
fn requested(
    configured: Value,
    settings: &Map<String, Value>,
    phases: Map<String, Value>,
) -> Value {
    let judged: Vec<&Value> = phases.values().collect();
    let active = !judged.is_empty() && judged.iter().all(|p| p["active"] == true);
    let healthy = active && judged.iter().all(|p| p["healthy"] == true);
    json!({
        "requested": true,
        "configured": configured,
        "active": active,
        "healthy": healthy,
        "settings": settings,
        "phases": phases,
        "unjudged": [],
    })
}

/// `raw == text` with Python equality for a string on the right.
fn equals(raw: &Value, text: &str) -> bool {
    raw.as_str() == Some(text) && pyjson::sentinel_f64(text).is_none()
}

/// The `vllm_metrics` and `vllm_spans` observer states (docs/report.md §7), each
/// `None` when the run did not ask for that observer.
pub fn observers(
    records: &[Value],
    vllm: &Value,
    join: &SpanJoin,
    _requests: &[Request],
) -> (Option<Value>, Option<Value>) {
    let config = session_config(records);
    let phases = compared_phases(records);
    (
        scraper(records, &config, &phases, vllm),
        span_observer(records, &config, &phases, join),
    )
}

fn scraper(
    records: &[Value],
    config: &Map<String, Value>,
    phases: &[Phase],
    vllm: &Value,
) -> Option<Value> {
    let settings = config.get("vllm_metrics")?.as_object()?;
    let interval = pyjson::get(&Value::Object(settings.clone()), "interval_seconds").clone();
    let scrapes: Vec<&Value> = records
        .iter()
        .filter(|r| is_type(r, "infer.vllm_scrape"))
        .collect();
    let windows = pyjson::get(vllm, "cases");
    let mut judged = Map::new();
    for phase in phases {
        let ok: Vec<&Value> = scrapes
            .iter()
            .copied()
            .filter(|s| {
                equals(pyjson::get(s, "case_id"), &phase.case_id)
                    && equals(pyjson::get(s, "phase"), "measured")
                    && equals(pyjson::get(s, "status"), "ok")
            })
            .collect();
        let mut reasons: Vec<String> = ["phase_start", "phase_end"]
            .into_iter()
            .filter(|m| !ok.iter().any(|s| equals(pyjson::get(s, "marker"), m)))
            .map(|m| format!("no ok {m} scrape"))
            .collect();
        let mut times: Vec<i64> = ok
            .iter()
            .map(|s| pyjson::get(s, "observed_at_ns"))
            .filter(|v| pyjson::is_number(v))
            .map(pyjson::int_value)
            .collect();
        times.sort_unstable();
        let gap_ns = times.windows(2).map(|w| w[1] - w[0]).max().unwrap_or(0);
        let gap = gap_ns as f64 / 1e9;
        if let Some(interval) = pyjson::number(&interval) {
            if gap > SCRAPE_GAP_FACTOR * interval {
                reasons.push(format!("a {gap:.1} s gap between ok scrapes"));
            }
        }
        let window = pyjson::get(windows, &phase.case_id);
        if window.is_object() && pyjson::get(window, "state").as_str() == Some("unresolved") {
            let why: Vec<String> = pyjson::get(window, "reasons")
                .as_array()
                .map(|r| r.iter().map(pyjson::str_form).collect())
                .unwrap_or_default();
            reasons.push(format!("window unresolved: {}", why.join(", ")));
        }
        judged.insert(phase.case_id.clone(), phase_state(!ok.is_empty(), reasons));
    }
    Some(requested(Value::Bool(true), settings, judged))
}

/// Whether the server exports spans, by its own configuration (the first
/// `before` server probe that answered `/server_info`); null when unknown.
pub fn otlp_configured(records: &[Value]) -> Value {
    for r in records {
        if !is_type(r, "infer.server_probe") || pyjson::get(r, "phase").as_str() != Some("before") {
            continue;
        }
        let answer = pyjson::get(pyjson::get(r, "answers"), "/server_info?config_format=json");
        let body = pyjson::get(answer, "body");
        if let Some(config) = pyjson::get(body, "vllm_config").as_object() {
            let observability = config.get("observability_config").unwrap_or(&Value::Null);
            return Value::Bool(pyjson::truthy(pyjson::get(
                observability,
                "otlp_traces_endpoint",
            )));
        }
    }
    Value::Null
}

fn capability_problems(records: &[Value]) -> Vec<String> {
    let Some(capability) = records.iter().rfind(|r| {
        is_type(r, "infer.capabilities") && equals(pyjson::get(r, "component"), "vllm.spans")
    }) else {
        return vec!["no vllm.spans capability record".into()];
    };
    let metadata = pyjson::get(capability, "metadata");
    if let Some(error) = metadata.get("error") {
        return vec![format!("vllm.spans: {}", pyjson::str_form(error))];
    }
    SPAN_PROBLEMS
        .iter()
        .filter_map(|name| {
            let v = pyjson::get(metadata, name);
            (pyjson::number(v).is_some_and(|n| n > 0.0))
                .then(|| format!("{name}: {}", pyjson::str_form(v)))
        })
        .collect()
}

fn span_observer(
    records: &[Value],
    config: &Map<String, Value>,
    phases: &[Phase],
    join: &SpanJoin,
) -> Option<Value> {
    let settings = config.get("vllm_spans")?.as_object()?;
    let problems = capability_problems(records);
    let mut judged = Map::new();
    for phase in phases {
        let accepted: Vec<&Value> = records
            .iter()
            .filter(|r| {
                is_type(r, "infer.request")
                    && equals(pyjson::get(r, "phase"), "measured")
                    && equals(pyjson::get(r, "case_id"), &phase.case_id)
                    && !NOT_DELIVERED
                        .iter()
                        .any(|s| equals(pyjson::get(r, "status"), s))
            })
            .collect();
        let found = accepted
            .iter()
            .filter(|r| {
                join.joined
                    .contains_key(&pyjson::str_form(pyjson::get(r, "x_request_id")))
            })
            .count();
        let share = if accepted.is_empty() {
            0.0
        } else {
            found as f64 / accepted.len() as f64
        };
        let mut reasons = problems.clone();
        if share < SPAN_JOIN_FLOOR {
            reasons.push(format!(
                "spans joined for {found} of {} accepted requests",
                accepted.len()
            ));
        }
        judged.insert(phase.case_id.clone(), phase_state(found > 0, reasons));
    }
    Some(requested(otlp_configured(records), settings, judged))
}
