//! `observers` (docs/report.md §7): which observers the run asked for, and whether
//! their evidence covered every compared phase.
use serde_json::{json, Map, Value};

use crate::model::RunData;
use crate::py::json as pyjson;

/// A compared phase: a measured phase window with numeric start and drain end.
pub(crate) struct Phase {
    pub(crate) case_id: String,
    pub(crate) start: i64,
    pub(crate) end: i64,
}

impl Phase {
    fn holds(&self, at: i64) -> bool {
        self.start <= at && at <= self.end
    }
}

fn phases(data: &RunData) -> Vec<Phase> {
    data.of_type("infer.phase_window")
        .filter(|w| pyjson::get(w, "phase").as_str() == Some("measured"))
        .filter_map(|w| {
            let s = pyjson::get(w, "started_at_ns");
            let e = pyjson::get(w, "drained_at_ns");
            if pyjson::is_number(s) && pyjson::is_number(e) {
                Some(Phase {
                    case_id: pyjson::str_form(pyjson::get(w, "case_id")),
                    start: pyjson::int_value(s),
                    end: pyjson::int_value(e),
                })
            } else {
                None
            }
        })
        .collect()
}

fn config(data: &RunData) -> Value {
    data.of_type("infer.session")
        .map(|s| pyjson::get(s, "config"))
        .find(|c| c.is_object())
        .cloned()
        .unwrap_or_else(|| json!({}))
}

pub(crate) fn not_requested(configured: Value, settings: Value, unjudged: Vec<&str>) -> Value {
    json!({"requested": false, "configured": configured, "active": null, "healthy": null,
           "settings": settings, "phases": {}, "unjudged": unjudged})
}

/// The requested form: active/healthy over the judged phases.
pub(crate) fn requested(
    configured: Value,
    settings: Value,
    phases: Map<String, Value>,
    unjudged: Vec<&str>,
    run_healthy: Option<bool>,
) -> Value {
    let judged: Vec<&Value> = phases.values().filter(|p| !p["active"].is_null()).collect();
    let (active, healthy) = if !phases.is_empty() && judged.is_empty() {
        (Value::Null, Value::Null)
    } else if judged.is_empty() || !judged.iter().all(|p| p["active"] == json!(true)) {
        (json!(false), json!(false))
    } else if run_healthy != Some(true) {
        (json!(true), json!(run_healthy))
    } else {
        (
            json!(true),
            json!(judged.iter().all(|p| p["healthy"] == json!(true))),
        )
    };
    json!({"requested": true, "configured": configured, "active": active, "healthy": healthy,
           "settings": settings, "phases": phases, "unjudged": unjudged})
}

pub(crate) fn phase_state(active: bool, healthy: bool, reasons: Vec<String>) -> Value {
    json!({"active": active, "healthy": active && healthy, "reasons": reasons})
}

fn unjudged_phase(reason: &str) -> Value {
    json!({"active": null, "healthy": null, "reasons": [reason]})
}

fn sampler(data: &RunData, cfg: &Value, phases: &[Phase]) -> Value {
    let name = pyjson::get(cfg, "system_sampler");
    let interval = pyjson::get(cfg, "sample_interval_seconds");
    let settings = json!({"sampler": name, "interval_seconds": interval});
    if name.is_null() || matches!(name.as_str(), Some("noop") | Some("none")) {
        return not_requested(Value::Null, settings, vec![]);
    }
    let times: Vec<i64> = data.samples.iter().filter_map(|s| s.timestamp_ns).collect();
    let iv = pyjson::number(interval).filter(|_| !interval.is_boolean());
    let mut judged = Map::new();
    for p in phases {
        let count = times.iter().filter(|t| p.holds(**t)).count();
        let state = match iv {
            Some(i) if i > 0.0 => {
                let expected = ((p.end - p.start) as f64 / 1e9 / i).trunc() as i64;
                if expected == 0 {
                    unjudged_phase("the phase is shorter than one sample interval")
                } else {
                    let enough = count as f64 >= 0.9 * expected as f64;
                    let reasons = if enough {
                        vec![]
                    } else {
                        vec![format!("{count} samples of {expected} expected")]
                    };
                    phase_state(count > 0, enough, reasons)
                }
            }
            _ => phase_state(count > 0, false, vec!["interval_unrecorded".into()]),
        };
        judged.insert(p.case_id.clone(), state);
    }
    if iv.is_some() {
        requested(json!(true), settings, judged, vec![], Some(true))
    } else {
        requested(
            json!(true),
            settings,
            judged,
            vec!["sample_interval_unrecorded"],
            None,
        )
    }
}

fn otlp_configured(data: &RunData) -> Value {
    for r in data.of_type("infer.server_probe") {
        if pyjson::get(r, "phase").as_str() != Some("before") {
            continue;
        }
        let body = pyjson::get(pyjson::get(r, "answers"), "/server_info?config_format=json");
        let body = pyjson::get(body, "body");
        let cfg = pyjson::get(body, "vllm_config");
        if cfg.is_object() {
            let obs = pyjson::get(cfg, "observability_config");
            return json!(pyjson::truthy(pyjson::get(obs, "otlp_traces_endpoint")));
        }
    }
    Value::Null
}

/// Observers whose evidence is judged elsewhere (vLLM, traces, execution hook)
/// hand their states in through `extra`; the rest are judged here. Returns the
/// block and the observers' names in the reference's order (the JSON map is
/// sorted; the text line keeps this order).
pub fn observers(data: &RunData, extra: &Map<String, Value>) -> (Value, Vec<String>) {
    let cfg = config(data);
    let phases = phases(data);
    let mut obs: Vec<(String, Value)> = Vec::new();
    obs.push(("system_sampler".into(), sampler(data, &cfg, &phases)));
    let vllm_metrics = extra
        .get("vllm_metrics")
        .cloned()
        .unwrap_or_else(|| not_requested(Value::Null, Value::Null, vec![]));
    obs.push(("vllm_metrics".into(), vllm_metrics));
    let vllm_spans = extra
        .get("vllm_spans")
        .cloned()
        .unwrap_or_else(|| not_requested(otlp_configured(data), Value::Null, vec![]));
    obs.push(("vllm_spans".into(), vllm_spans));
    let trace = extra
        .get("trace")
        .cloned()
        .unwrap_or_else(|| super::execution::observer::trace(data, &cfg, &phases));
    obs.push(("trace".into(), trace));
    let execution = extra
        .get("execution")
        .cloned()
        .unwrap_or_else(|| super::execution::observer::execution(data, &cfg, &phases));
    obs.push(("execution".into(), execution));
    for r in data.of_type("infer.treatments") {
        if let Some(items) = pyjson::get(r, "treatments").as_array() {
            for item in items {
                let name = format!("treatment:{}", pyjson::str_form(pyjson::get(item, "name")));
                let state = json!({"requested": true, "configured": true,
                    "active": pyjson::truthy(pyjson::get(item, "ready")),
                    "healthy": pyjson::truthy(pyjson::get(item, "healthy")),
                    "settings": {"command_sha256": pyjson::get(item, "command_sha256"), "cpu_affinity": pyjson::get(item, "cpu_affinity")},
                    "phases": {}, "unjudged": []});
                if let Some(slot) = obs.iter_mut().find(|(n, _)| *n == name) {
                    slot.1 = state;
                } else {
                    obs.push((name, state));
                }
            }
        }
    }
    // The text line lists observers in this order, so keep it beside the map.
    let order: Vec<String> = obs.iter().map(|(n, _)| n.clone()).collect();
    let map: Map<String, Value> = obs.into_iter().collect();
    let block = json!({"compared_phases": phases.iter().map(|p| p.case_id.clone()).collect::<Vec<_>>(), "observers": map});
    (block, order)
}
