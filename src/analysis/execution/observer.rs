//! The `trace` and `execution` observers (docs/report.md §7): whether a profiler
//! trace ran and was imported for each compared phase, and whether the vLLM
//! execution hook was importing, beating and losing nothing over it.
use serde_json::{json, Map, Value};

use crate::analysis::observers::{not_requested, phase_state, requested, Phase};
use crate::model::RunData;
use crate::py::json as pyjson;

/// The last `infer.capabilities` record of a component.
fn last_capability<'a>(data: &'a RunData, component: &str) -> Option<&'a Value> {
    data.of_type("infer.capabilities")
        .filter(|r| pyjson::get(r, "component").as_str() == Some(component))
        .last()
}

/// `str(name).rsplit("/", 1)[-1]`.
fn base(name: &Value) -> String {
    let s = pyjson::str_form(name);
    match s.rsplit_once('/') {
        Some((_, tail)) => tail.to_owned(),
        None => s,
    }
}

/// The file names of every trace an import read (not skipped ones).
fn imported_traces(data: &RunData) -> Vec<String> {
    let mut names = Vec::new();
    for r in data.of_type("infer.capabilities") {
        if pyjson::get(r, "component").as_str() != Some("trace_collector") {
            continue;
        }
        let summary = pyjson::get(pyjson::get(r, "metadata"), "summary");
        let Some(traces) = pyjson::get(summary, "traces").as_array() else {
            continue;
        };
        for t in traces.iter().filter(|t| t.is_object()) {
            if pyjson::truthy(pyjson::get(t, "skipped")) {
                continue;
            }
            for key in ["path", "file"] {
                let v = pyjson::get(t, key);
                if pyjson::truthy(v) {
                    names.push(base(v));
                }
            }
        }
    }
    names
}

/// `trace`: requested when the session's config has a `trace` object.
pub(crate) fn trace(data: &RunData, cfg: &Value, phases: &[Phase]) -> Value {
    let settings = pyjson::get(cfg, "trace");
    if !settings.is_object() {
        let has_key = cfg.as_object().is_some_and(|c| c.contains_key("trace"));
        let unjudged = if has_key {
            vec![]
        } else {
            vec!["trace_settings_unrecorded"]
        };
        return not_requested(Value::Null, Value::Null, unjudged);
    }
    let imported = imported_traces(data);
    let windows: Vec<&Value> = data.of_type("infer.trace_window").collect();
    let mut judged = Map::new();
    let phase_setting = pyjson::get(settings, "phase");
    if phase_setting.is_null() || phase_setting.as_str() == Some("measured") {
        for p in phases {
            let window = windows.iter().find(|w| {
                pyjson::get(w, "case_id").as_str() == Some(p.case_id.as_str())
                    && pyjson::get(w, "phase").as_str() == Some("measured")
            });
            let state = match window {
                Some(w) if pyjson::truthy(pyjson::get(w, "started")) => {
                    let mut reasons: Vec<String> = Vec::new();
                    if pyjson::truthy(pyjson::get(w, "stop_error"))
                        || !pyjson::is_number(pyjson::get(w, "stopped_at_ns"))
                    {
                        reasons.push("the trace did not stop cleanly".into());
                    }
                    let files: Vec<String> = pyjson::get(w, "trace_files")
                        .as_array()
                        .map(|a| a.iter().map(base).collect())
                        .unwrap_or_default();
                    if files.is_empty() {
                        reasons.push("no trace file was written".into());
                    } else if !files.iter().any(|f| imported.contains(f)) {
                        reasons.push("its trace was not imported".into());
                    }
                    let healthy = reasons.is_empty();
                    phase_state(true, healthy, reasons)
                }
                _ => phase_state(false, false, vec!["no trace started".into()]),
            };
            judged.insert(p.case_id.clone(), state);
        }
    }
    requested(Value::Null, settings.clone(), judged, vec![], Some(true))
}

/// The variable that enables the execution hook in a vLLM server.
const HOOK_DIR_VARIABLE: &str = "STORMLOG_VLLM_HOOK_DIR";

/// The hook's directory, when the last `before` manifest shows it enabled
/// in the server's environment.
fn server_hook_dir(data: &RunData) -> Value {
    let before = data
        .of_type("infer.manifest")
        .filter(|r| pyjson::get(r, "role").as_str() == Some("before"))
        .last();
    let Some(before) = before else {
        return Value::Null;
    };
    let section = |v: &Value, k: &str| -> Value {
        match pyjson::get(v, k) {
            o @ Value::Object(_) => o.clone(),
            _ => json!({}),
        }
    };
    let server = section(&section(before, "description"), "server");
    let dir = pyjson::get(&section(&server, "environ"), HOOK_DIR_VARIABLE).clone();
    if pyjson::truthy(&dir) {
        dir
    } else {
        Value::Null
    }
}

/// The import's liveness basis the observer knows.
const LIVENESS_BASIS: &str = "heartbeat_gaps/1";

/// Whether a liveness block beats over the phase: its first heartbeat at or
/// before the phase start, its last at or after the phase end, no gap inside.
///
/// The reference reads `first.start_wall_ns` and `last.end_wall_ns`, keys its
/// importer never writes (it writes `first.wall_ns` and `last.wall_ns`), so
/// a known liveness never covers a phase and every phase gets "the hook's
/// heartbeat did not cover the phase". Kept, for `infer analyze` to match
/// the reference; diverging is a later, deliberate decision.
fn beating(block: &Value, phase: &Phase) -> bool {
    let began = pyjson::get(pyjson::get(block, "first"), "start_wall_ns");
    let ended = pyjson::get(pyjson::get(block, "last"), "end_wall_ns");
    let (Some(began), Some(ended)) = (pyjson::number(began), pyjson::number(ended)) else {
        return false;
    };
    if began > phase.start as f64 || ended < phase.end as f64 {
        return false;
    }
    let gaps = pyjson::get(block, "gaps")
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or(&[]);
    !gaps.iter().any(|gap| {
        let (s, e) = (
            pyjson::number(pyjson::get(gap, "start_wall_ns")),
            pyjson::number(pyjson::get(gap, "end_wall_ns")),
        );
        match (gap.is_object(), s, e) {
            (true, Some(s), Some(e)) => s < phase.end as f64 && e > phase.start as f64,
            _ => true,
        }
    })
}

/// `execution`: requested when the session imported the hook's log
/// (`config.vllm_execution_dir`) or the server ran with the hook enabled.
pub(crate) fn execution(data: &RunData, cfg: &Value, phases: &[Phase]) -> Value {
    let directory = pyjson::get(cfg, "vllm_execution_dir").clone();
    let server_hook = server_hook_dir(data);
    if !pyjson::truthy(&directory) && !pyjson::truthy(&server_hook) {
        return not_requested(Value::Null, Value::Null, vec![]);
    }
    let summary = last_capability(data, "engine_adapter")
        .map(|c| {
            pyjson::get(
                pyjson::get(pyjson::get(c, "metadata"), "summary"),
                "execution",
            )
        })
        .filter(|s| s.is_object());
    let configured =
        summary.is_some_and(|s| !s.as_object().is_some_and(|m| m.contains_key("failed")));
    let empty = json!({});
    let summary = summary.unwrap_or(&empty);
    let problems = problems(summary);
    let epochs: Vec<&Value> = pyjson::get(summary, "epochs")
        .as_object()
        .map(|m| m.values().collect())
        .unwrap_or_default();
    let blocks: Vec<&Value> = epochs.iter().map(|e| pyjson::get(e, "liveness")).collect();
    let liveness = (!blocks.is_empty()
        && blocks
            .iter()
            .all(|b| b.is_object() && pyjson::get(b, "basis").as_str() == Some(LIVENESS_BASIS)))
    .then_some(blocks);
    let mut starts: Vec<f64> = data
        .of_type("infer.iteration")
        .filter_map(|r| pyjson::number(pyjson::get(pyjson::get(r, "metadata"), "start_wall_ns")))
        .collect();
    starts.extend(super::stored_step_starts(data));
    let mut judged = Map::new();
    for p in phases {
        let mut reasons = problems.clone();
        if let Some(blocks) = &liveness {
            if !blocks.iter().any(|b| beating(b, p)) {
                reasons.push("the hook's heartbeat did not cover the phase".into());
            }
        }
        let active = starts
            .iter()
            .any(|at| p.start as f64 <= *at && *at <= p.end as f64);
        let healthy = reasons.is_empty();
        judged.insert(p.case_id.clone(), phase_state(active, healthy, reasons));
    }
    let run_healthy = if !problems.is_empty() {
        Some(false)
    } else if liveness.is_none() {
        None
    } else {
        Some(true)
    };
    requested(
        json!(configured),
        json!({"directory": directory, "server_hook_dir": server_hook}),
        judged,
        if liveness.is_none() {
            vec!["heartbeat_gaps"]
        } else {
            vec![]
        },
        run_healthy,
    )
}

/// The import's problems: its failure, else per epoch (sorted) dropped
/// records, recorded errors and a reached disk cap.
fn problems(summary: &Value) -> Vec<String> {
    if let Some(failed) = summary.as_object().and_then(|m| m.get("failed")) {
        return vec![format!("import failed: {}", pyjson::str_form(failed))];
    }
    let mut out = Vec::new();
    if let Some(epochs) = pyjson::get(summary, "epochs").as_object() {
        for (name, state) in epochs {
            let dropped = pyjson::get(state, "dropped");
            if dropped.as_object().is_some_and(|d| {
                d.values()
                    .any(|c| pyjson::number(c).is_some_and(|n| n > 0.0))
            }) {
                out.push(format!("epoch {name} dropped records"));
            }
            if pyjson::truthy(pyjson::get(state, "errors")) {
                out.push(format!("epoch {name} recorded errors"));
            }
            if pyjson::truthy(pyjson::get(state, "capped")) {
                out.push(format!("epoch {name} reached its disk cap"));
            }
        }
    }
    out
}
