//! The vLLM lines of the text report (docs/report.md §9): the run-level
//! `vLLM telemetry: …` lines and each case's `  vllm …` lines, rendered from
//! the `telemetry.vllm` block alone.

use serde_json::Value;

use crate::py::json as pyjson;

/// Digits of an integer part with `,` thousands separators.
fn group_thousands(digits: &str) -> String {
    let (sign, body) = match digits.strip_prefix('-') {
        Some(rest) => ("-", rest),
        None => ("", digits),
    };
    let mut out = String::new();
    for (i, c) in body.chars().enumerate() {
        if i > 0 && (body.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    format!("{sign}{out}")
}

/// Python's spelling of a non-finite float under a `%f` format.
fn nonfinite(f: f64) -> Option<&'static str> {
    crate::py::float::nonfinite_word(f)
}

/// FMT: `n/a` for null and booleans, floats with 2 decimals below 1000 and
/// as grouped integers above, integers grouped, anything else its string form.
pub fn fmt(v: &Value) -> String {
    match v {
        Value::Null | Value::Bool(_) => "n/a".into(),
        Value::Number(n) if !n.is_f64() => group_thousands(&n.to_string()),
        _ => match pyjson::real(v) {
            Some(f) => match nonfinite(f) {
                Some(s) => s.into(),
                None if f.abs() < 1000.0 => crate::py::float::fixed(f, 2, false),
                None => group_thousands(&format!("{f:.0}")),
            },
            None => pyjson::str_form(v),
        },
    }
}

fn fmt_opt(v: Option<f64>) -> String {
    v.map_or_else(|| "n/a".into(), |f| fmt(&pyjson::nonfinite_value(f)))
}

/// A number (bools count, as in Python) as an f64.
fn num(v: &Value) -> Option<f64> {
    match v {
        Value::Bool(b) => Some(if *b { 1.0 } else { 0.0 }),
        _ => pyjson::real(v),
    }
}

fn pct(v: &Value) -> String {
    match num(v) {
        Some(f) => crate::py::float::percent(f, 1, false),
        None => "n/a".into(),
    }
}

fn names(v: &Value) -> Vec<String> {
    v.as_array()
        .map(|items| items.iter().map(pyjson::str_form).collect())
        .unwrap_or_default()
}

/// `v.get(key, 0)` printed with `str()`.
fn count(v: &Value, key: &str) -> String {
    v.get(key).map_or_else(|| "0".into(), pyjson::str_form)
}

/// Report-level lines; none unless the block was collected.
pub fn run_text_lines(vllm: &Value) -> Vec<String> {
    if pyjson::get(vllm, "status").as_str() != Some("collected") {
        return Vec::new();
    }
    let engine = pyjson::get(vllm, "engine");
    let scrapes = pyjson::get(engine, "scrapes");
    let spans = pyjson::get(vllm, "spans");
    let engines = names(pyjson::get(engine, "engines")).join(", ");
    let engines = if engines.is_empty() {
        "none seen".to_owned()
    } else {
        engines
    };
    let mut lines = vec![format!(
        "vLLM telemetry: {} scrapes ok, {} failed; engine label(s) {engines}; spans {} ({} joined); engine-aggregate, no per-request attribution",
        count(scrapes, "ok"),
        count(scrapes, "failed"),
        count(spans, "total"),
        count(spans, "joined"),
    )];
    let epochs = pyjson::get(engine, "epochs").as_array().map_or(0, Vec::len);
    if epochs > 1 {
        lines.push(format!(
            "vLLM telemetry: the server restarted {} time(s) during the run",
            epochs - 1
        ));
    }
    for (label, key) in [
        ("unknown series", "unknown_series"),
        ("retired series", "deprecated_series"),
        ("removed series", "removed_series"),
    ] {
        let found = names(pyjson::get(engine, key));
        if !found.is_empty() {
            lines.push(format!("vLLM telemetry: {label}: {}", found.join(", ")));
        }
    }
    lines
}

/// The case's lines from its entry in `vllm.cases`; none when it has none.
pub fn case_text_lines(vllm: &Value, case_id: &str) -> Vec<String> {
    let block = pyjson::get(pyjson::get(vllm, "cases"), case_id);
    if !block.is_object() {
        return Vec::new();
    }
    let mut lines = Vec::new();
    if pyjson::get(block, "state").as_str() == Some("unresolved") {
        lines.push(format!(
            "  vllm: unresolved ({})",
            names(pyjson::get(block, "reasons")).join(", ")
        ));
    }
    if let Some(engines) = pyjson::get(block, "engines").as_object() {
        for (engine, item) in engines {
            lines.push(format!("  vllm engine {engine}: {}", engine_line(item)));
        }
    }
    let spans = pyjson::get(block, "spans");
    if pyjson::truthy(pyjson::get(spans, "spans")) {
        let inference = pyjson::get(pyjson::get(spans, "latency"), "time_in_model_inference");
        lines.push(format!(
            "  vllm spans: {} of {} requests; inference time p50 {} ms (residency, not GPU time)",
            pyjson::str_form(pyjson::get(spans, "requests_with_span")),
            pyjson::str_form(pyjson::get(spans, "requests")),
            fmt(pyjson::get(inference, "p50_ms")),
        ));
    }
    lines
}

fn gauge_stat<'a>(gauges: &'a Value, field: &str) -> &'a Value {
    pyjson::get(pyjson::get(pyjson::get(gauges, field), "stats"), "_")
}

fn engine_line(item: &Value) -> String {
    let get = |k| pyjson::get(item, k);
    let gauges = get("gauges");
    let derived = get("derived");
    let waiting = gauge_stat(gauges, "queue_depth");
    let running = gauge_stat(gauges, "running_requests");
    let kv = pyjson::get(derived, "kv_cache");
    let rates = pyjson::get(derived, "rates");
    let prefix = pyjson::get(derived, "prefix_cache");
    let queue = pyjson::get(get("histograms"), "queue_time");
    let preemptions = pyjson::get(get("counters"), "preemptions");
    let preempted = if pyjson::get(preemptions, "state").as_str() == Some("resolved") {
        num(pyjson::get(preemptions, "delta"))
            .filter(|_| !pyjson::get(preemptions, "delta").is_boolean())
    } else {
        None
    };
    let mut kv_part = format!(
        "kv usage max {}",
        pct(pyjson::get(kv, "max_usage_fraction"))
    );
    if pyjson::truthy(pyjson::get(kv, "num_gpu_blocks")) {
        kv_part.push_str(&format!(
            " ({} of {} blocks)",
            pyjson::str_form(pyjson::get(kv, "max_blocks_in_use")),
            pyjson::str_form(pyjson::get(kv, "num_gpu_blocks")),
        ));
    }
    let queue_mean = num(pyjson::get(queue, "mean")).map(|s| s * 1000.0);
    [
        format!(
            "waiting max {} mean {}",
            fmt(pyjson::get(waiting, "max")),
            fmt(pyjson::get(waiting, "mean"))
        ),
        format!("running max {}", fmt(pyjson::get(running, "max"))),
        format!("preemptions {}", fmt_opt(preempted)),
        kv_part,
        format!(
            "prefix hits {} of {} tokens",
            fmt(pyjson::get(prefix, "hits")),
            fmt(pyjson::get(prefix, "queries"))
        ),
        format!(
            "queue time mean {} ms over {} requests",
            fmt_opt(queue_mean),
            fmt(pyjson::get(queue, "count"))
        ),
        format!(
            "{} prompt and {} generated tok/s over {} s incl. drain",
            fmt(pyjson::get(rates, "prompt_tokens_per_second")),
            fmt(pyjson::get(rates, "generation_tokens_per_second")),
            fmt(pyjson::get(rates, "window_seconds")),
        ),
    ]
    .join("; ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn fmt_follows_the_reference() {
        assert_eq!(fmt(&json!(null)), "n/a");
        assert_eq!(fmt(&json!(true)), "n/a");
        assert_eq!(fmt(&json!(999.994)), "999.99");
        assert_eq!(fmt(&json!(2025.3963931565393)), "2,025");
        assert_eq!(fmt(&json!(1234567.5)), "1,234,568");
        assert_eq!(fmt(&json!(2496)), "2,496");
        assert_eq!(fmt(&json!(-1234)), "-1,234");
        assert_eq!(fmt(&json!("x")), "x");
        assert_eq!(pct(&json!(0.5)), "50.0%");
        assert_eq!(pct(&json!(null)), "n/a");
    }
}
