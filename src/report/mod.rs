//! The analysis report (report.md): assembled from a loaded run by the pure
//! passes in `analysis`, `slo` and `join`, and rendered as the reference's JSON
//! or text. Renderers return strings; only the CLI writes them out.
pub mod text;

use std::collections::HashSet;

use serde_json::{json, Map, Value};

use crate::analysis::case::{self, RunContext};
use crate::analysis::observers;
use crate::model::{Request, RunData};
use crate::pyjson;

/// Options that change a report (the analyze flags that reach the analysis).
#[derive(Debug, Default, Clone)]
pub struct Options {}

/// A built report: the JSON value plus what the text renderer needs besides.
#[derive(Debug, Clone)]
pub struct Report {
    pub json: Value,
    /// Observer names in the reference's order (the JSON map is sorted).
    pub observer_order: Vec<String>,
    /// Policy lines of the text report (SLO policy and replaced policies).
    pub policy_lines: Vec<String>,
    /// Server telemetry lines (run level), and per case.
    pub server_lines: Vec<String>,
    pub server_case_lines: std::collections::BTreeMap<String, Vec<String>>,
    /// Warnings to print on stderr before the report.
    pub warnings: Vec<String>,
}

impl Report {
    /// `json.dumps(report, indent=2, sort_keys=True)` and a newline.
    pub fn to_json(&self) -> String {
        let mut s = pyjson::dumps_pretty(&self.json);
        s.push('\n');
        s
    }

    pub fn to_text(&self) -> String {
        text::render(self)
    }
}

/// A client latency metric value (slo.md §7.1, §7.3): a finite non-negative number, or missing.
fn plausible(v: Option<f64>) -> Option<f64> {
    v.filter(|x| x.is_finite() && *x >= 0.0)
}

fn client_metric(key: &str, r: &Request) -> Option<f64> {
    let ttft = r.ttft_ms;
    let e2e = r.e2e_latency_ms;
    match key {
        "client.ttft" => plausible(ttft),
        "client.ttft_from_intended" => plausible(Some(ttft? + r.dispatch_lag_ms?)),
        "client.e2e" => plausible(e2e),
        "client.e2e_from_intended" => plausible(Some(
            (r.ended_at_ns? - r.intended_at_ns?) as f64 / 1_000_000.0,
        )),
        "client.tpot" => {
            if r.output_token_source != "server_usage" || !r.output_tokens_is_int {
                return None;
            }
            let n = r.output_tokens?;
            if n <= 1.0 {
                return None;
            }
            plausible(Some((e2e? - ttft?) / (n - 1.0)))
        }
        _ => None,
    }
}

/// Builds the report of a loaded run.
pub fn build(data: &RunData, _opts: &Options) -> Report {
    let admitted: Option<HashSet<String>> = admitted_ids(data);
    let ctx = RunContext::new(data, admitted);
    let mut by_case: std::collections::BTreeMap<String, Vec<&Request>> = Default::default();
    for r in data.measured() {
        by_case.entry(r.case_key.clone()).or_default().push(r);
    }
    let client_keys = [
        "client.ttft",
        "client.ttft_from_intended",
        "client.e2e",
        "client.e2e_from_intended",
        "client.tpot",
    ];
    let metric_fns: Vec<Box<case::MetricFn>> = client_keys
        .iter()
        .map(|k| {
            let k = *k;
            Box::new(move |r: &Request| client_metric(k, r)) as Box<case::MetricFn>
        })
        .collect();
    let metrics: Vec<(&str, &str, &case::MetricFn)> = client_keys
        .iter()
        .zip(&metric_fns)
        .map(|(k, f)| (*k, "client", f.as_ref()))
        .collect();
    let built: Vec<(String, Value)> = {
        use rayon::prelude::*;
        by_case
            .par_iter()
            .map(|(key, reqs)| {
                let mut c = Map::new();
                let pop = case::population(&ctx, key, reqs);
                let window = ctx.windows.get(key).copied();
                let rate = pop.intervals.get("rate").cloned().unwrap_or(Value::Null);
                case::request_figures(reqs, &data.samples, &rate, &mut c);
                c.insert("arrivals".into(), case::arrivals(reqs, window));
                c.insert("prompts".into(), case::prompts(reqs, window));
                c.insert("lengths".into(), case::lengths(reqs));
                c.insert(
                    "cache".into(),
                    case::cache(ctx.cache_states.get(key).copied()),
                );
                c.insert("latency".into(), case::latency(reqs, &metrics));
                c.insert("streaming".into(), case::streaming(reqs));
                c.insert("population".into(), pop.population);
                c.insert("intervals".into(), pop.intervals);
                (key.clone(), Value::Object(c))
            })
            .collect()
    };
    let cases: Map<String, Value> = built.into_iter().collect();
    let measured: Vec<&Request> = data.measured().collect();
    let failed: Vec<&&Request> = measured.iter().filter(|r| !r.is_ok()).collect();
    let mut by_status: std::collections::BTreeMap<String, i64> = Default::default();
    for r in &failed {
        *by_status.entry(r.status.clone()).or_insert(0) += 1;
    }
    let total = measured.len();
    let failure_rate = if total == 0 {
        0.0
    } else {
        failed.len() as f64 / total as f64
    };
    let mut obs = observers::observers(data, &Map::new());
    let observer_order: Vec<String> = obs
        .as_object_mut()
        .and_then(|o| o.remove("__order"))
        .and_then(|v| {
            v.as_array().map(|a| {
                a.iter()
                    .filter_map(|s| s.as_str().map(str::to_owned))
                    .collect()
            })
        })
        .unwrap_or_default();
    let json = json!({
        "analysis_version": 2,
        "slo": null,
        "manifest": null,
        "observers": obs,
        "summary": {
            "total_requests": total,
            "successful_requests": total - failed.len(),
            "failed_requests": failed.len(),
            "failure_rate": failure_rate,
            "failures_by_status": by_status,
            "case_count": cases.len(),
            "session_status": session_status(data),
        },
        "cases": cases,
        "workload": workload(data),
        "telemetry": {
            "client_observation_scope": "client_local",
            "server_join": {"status": "not_configured"},
            "server_targets": [],
            "vllm": {"status": "absent"},
            "execution": {"available": false},
        },
    });
    Report {
        json,
        observer_order,
        policy_lines: vec![],
        server_lines: vec![],
        server_case_lines: Default::default(),
        warnings: vec![],
    }
}

/// artifact.md §3.1: the last truthy `infer.session.status`, as a string.
fn session_status(data: &RunData) -> Value {
    data.of_type("infer.session")
        .map(|s| pyjson::get(s, "status"))
        .filter(|s| pyjson::truthy(s))
        .last()
        .map_or(Value::Null, |s| json!(pyjson::str_form(s)))
}

/// report.md §5.
fn workload(data: &RunData) -> Value {
    match data.of_type("infer.workload").next() {
        None => Value::Null,
        Some(w) => {
            let mut m = Map::new();
            for k in [
                "workload_digest",
                "seed",
                "generator",
                "prompts",
                "warmup",
                "decoding",
                "tokenizer",
                "chat_template",
            ] {
                m.insert(k.into(), pyjson::get(w, k).clone());
            }
            Value::Object(m)
        }
    }
}

/// report.md §4.2.5: ids the server confirmed, or None without any source.
fn admitted_ids(data: &RunData) -> Option<HashSet<String>> {
    let hook: HashSet<String> = data
        .of_type("infer.request")
        .filter(|r| pyjson::get(r, "schema_version").as_i64() == Some(2))
        .map(|r| pyjson::get(pyjson::get(r, "metadata"), "x_request_id"))
        .filter(|x| pyjson::truthy(x))
        .map(pyjson::str_form)
        .collect();
    let span_source = data.of_type("infer.vllm_span").next().is_some()
        || data.of_type("infer.session").any(|s| {
            pyjson::get(s, "config").is_object()
                && !pyjson::get(pyjson::get(s, "config"), "vllm_spans").is_null()
        });
    if hook.is_empty() && !span_source {
        return None;
    }
    Some(hook)
}
