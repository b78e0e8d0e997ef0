//! The text report (`--format txt`), rendered from the built report exactly as
//! the reference prints it (docs/report.md §9).
use serde_json::Value;

use super::Report;
use crate::py::json as pyjson;

/// `F2`: a number with two decimals, else `-`.
pub fn f2(v: &Value) -> String {
    match v {
        Value::Number(n) => crate::py::float::fixed(n.as_f64().unwrap_or(0.0), 2, false),
        Value::Bool(b) => crate::py::float::fixed(f64::from(u8::from(*b)), 2, false),
        _ => "-".into(),
    }
}

/// `PCT1`: a share as a percentage with one decimal, else `-`.
pub fn pct1(v: &Value) -> String {
    match v.as_f64() {
        Some(x) if !v.is_boolean() => crate::py::float::percent(x, 1, false),
        _ => "-".into(),
    }
}

fn s(v: &Value) -> String {
    pyjson::str_form(v)
}

pub fn render(report: &Report) -> String {
    let r = &report.json;
    let summary = pyjson::get(r, "summary");
    let mut lines: Vec<String> = vec![
        "Inference Profile Analysis".into(),
        "-".repeat(28),
        format!(
            "Total requests: {}",
            s(pyjson::get(summary, "total_requests"))
        ),
        format!(
            "Successful requests: {}",
            s(pyjson::get(summary, "successful_requests"))
        ),
        format!(
            "Failed requests: {}{}",
            s(pyjson::get(summary, "failed_requests")),
            breakdown(pyjson::get(summary, "failures_by_status"))
        ),
        format!(
            "Failure rate: {:.2}%",
            pyjson::get(summary, "failure_rate").as_f64().unwrap_or(0.0) * 100.0
        ),
    ];
    let status = pyjson::get(summary, "session_status");
    if !status.is_null() && status.as_str() != Some("completed") {
        lines.insert(2, format!("Session status: {}", s(status)));
    }
    let w = pyjson::get(r, "workload");
    if w.is_object() {
        let digest: String = match pyjson::get(w, "workload_digest") {
            v if pyjson::truthy(v) => s(v).chars().take(12).collect(),
            _ => String::new(),
        };
        lines.push(format!(
            "Workload: {digest}, seed {}, prompts {}, tokenizer {}",
            s(pyjson::get(w, "seed")),
            s(pyjson::get(pyjson::get(w, "prompts"), "mode")),
            s(pyjson::get(pyjson::get(w, "tokenizer"), "source"))
        ));
    }
    lines.extend(report.policy_lines.iter().cloned());
    let observers = pyjson::get(pyjson::get(r, "observers"), "observers");
    let parts: Vec<String> = report
        .observer_order
        .iter()
        .filter_map(|name| {
            let st = pyjson::get(observers, name);
            if !pyjson::truthy(pyjson::get(st, "requested")) {
                return None;
            }
            let health = match pyjson::get(st, "healthy") {
                Value::Bool(true) => "healthy",
                Value::Bool(false) => "unhealthy",
                _ => "unjudged",
            };
            Some(format!("{name} {health}"))
        })
        .collect();
    if !parts.is_empty() {
        lines.push(format!("Observers: {}", parts.join(", ")));
    }
    lines.push("Memory observations: client-local".into());
    lines.extend(report.server_lines.iter().cloned());
    let cases = pyjson::get(r, "cases");
    if let Some(cases) = cases.as_object().filter(|c| !c.is_empty()) {
        lines.push(String::new());
        lines.push("Cases:".into());
        for (id, case) in cases {
            case_lines(id, case, &mut lines);
            if let Some(extra) = report.server_case_lines.get(id) {
                lines.extend(extra.iter().cloned());
            }
            segment_lines(case, &mut lines);
        }
    }
    let mut out = lines.join("\n");
    out.push('\n');
    out
}

fn breakdown(by_status: &Value) -> String {
    match by_status.as_object() {
        Some(m) if !m.is_empty() => {
            let parts: Vec<String> = m.iter().map(|(k, v)| format!("{k} {}", s(v))).collect();
            format!(" ({})", parts.join(", "))
        }
        _ => String::new(),
    }
}

fn case_lines(id: &str, case: &Value, lines: &mut Vec<String>) {
    let lat = pyjson::get(case, "latency_ms");
    let thr = pyjson::get(case, "throughput");
    lines.push(format!(
        "- {id}: p50 E2E={} ms, p95 E2E={} ms, p50 TTFT={} ms, output={} tok/s, requests={} req/s",
        f2(pyjson::get(lat, "e2e_p50")),
        f2(pyjson::get(lat, "e2e_p95")),
        f2(pyjson::get(lat, "ttft_p50")),
        f2(pyjson::get(thr, "output_tokens_per_second")),
        f2(pyjson::get(thr, "requests_per_second"))
    ));
    let intervals = pyjson::get(case, "intervals");
    let kind = pyjson::get(thr, "interval_kind");
    if pyjson::truthy(kind) {
        lines.push(format!(
            "  rates per {} of {} s ({})",
            s(kind).replace('_', " "),
            f2(pyjson::get(thr, "interval_seconds")),
            s(pyjson::get(thr, "numerator_cohort")).replace('_', " ")
        ));
    } else if pyjson::truthy(pyjson::get(intervals, "rate_reason")) {
        lines.push(format!(
            "  no rate interval ({})",
            s(pyjson::get(intervals, "rate_reason"))
        ));
    }
    let pop = pyjson::get(case, "population");
    if pop.is_object() && pyjson::get(pop, "cohort_valid") == &Value::Bool(false) {
        let issues: Vec<String> = pyjson::get(pop, "issues")
            .as_array()
            .map(|a| a.iter().map(s).collect())
            .unwrap_or_default();
        lines.push(format!("  cohort invalid: {}", issues.join(", ")));
    }
    let slo = pyjson::get(case, "slo");
    if slo.is_object() {
        lines.extend(slo_line(slo));
    }
    arrival_line(pyjson::get(case, "arrivals"), lat, lines);
    let prompts = pyjson::get(case, "prompts");
    let mode = pyjson::get(prompts, "mode");
    if prompts.is_object() && !mode.is_null() && mode.as_str() != Some("repeat") {
        let mut line = format!(
            "  prompts: {}, {} distinct",
            s(mode),
            s(pyjson::get(prompts, "distinct_prompts"))
        );
        let groups = pyjson::get(prompts, "prefix_groups_used");
        if pyjson::truthy(groups) {
            line += &format!(" over {} prefix groups", s(groups));
        }
        if let Some(max) = pyjson::get(pyjson::get(prompts, "shared_prefix_tokens"), "max").as_f64()
        {
            line += &format!(", shared prefixes up to {max:.0} tokens");
        }
        lines.push(line);
    }
    let cache = pyjson::get(case, "cache");
    if cache.is_object()
        && (pyjson::get(cache, "requested").as_str() == Some("cold")
            || !pyjson::get(cache, "reset").is_null())
    {
        lines.push(format!(
            "  cache: {} requested, {} ({}); run kind {}",
            s(pyjson::get(cache, "requested")),
            s(pyjson::get(cache, "verified")),
            s(pyjson::get(cache, "reason")),
            s(pyjson::get(cache, "run_kind"))
        ));
    }
}

/// One line per segment of a case (`report --segment`; docs/compare.md,
/// "Segments"), with its SLO line beneath; a stormlog addition, as the
/// reference's analysis text has no segments.
fn segment_lines(case: &Value, lines: &mut Vec<String>) {
    let Some(segments) = pyjson::get(case, "segments").as_object() else {
        return;
    };
    for (name, seg) in segments {
        let iv = pyjson::get(seg, "intervals");
        let pop = pyjson::get(seg, "population");
        let thr = pyjson::get(seg, "throughput");
        let metric = |key: &str, p: &str| {
            let m = pyjson::get(pyjson::get(pyjson::get(seg, "latency"), "metrics"), key);
            f2(pyjson::get(
                pyjson::get(pyjson::get(m, "successful"), p),
                "value_ms",
            ))
        };
        let by_arrival = pyjson::get(iv, "membership").as_str() == Some("arrival");
        let rates = if by_arrival {
            format!(
                ", output={} tok/s, requests={} req/s",
                f2(pyjson::get(thr, "output_tokens_per_second")),
                f2(pyjson::get(thr, "requests_per_second"))
            )
        } else {
            " (no rates: requests in flight grow with their latency)".to_owned()
        };
        lines.push(format!(
            "  segment {name} ({} over {} s): {} offered, {} successful; p50 E2E={} ms, p95 E2E={} ms, p50 TTFT={} ms{rates}",
            if by_arrival { "arrivals" } else { "requests in flight" },
            f2(pyjson::get(pyjson::get(iv, "rate"), "seconds")),
            s(pyjson::get(pop, "offered")),
            s(pyjson::get(pop, "successful")),
            metric("client.e2e", "p50"),
            metric("client.e2e", "p95"),
            metric("client.ttft", "p50"),
        ));
        let slo = pyjson::get(seg, "slo");
        if slo.is_object() {
            lines.extend(slo_line(slo).into_iter().map(|l| format!("  {l}")));
        }
    }
}

/// The case SLO line (docs/slo-policy.md §8.6).
pub fn slo_line(slo: &Value) -> Vec<String> {
    let name = s(pyjson::get(slo, "slo_name"));
    if pyjson::get(slo, "status").as_str() != Some("evaluated") {
        return vec![format!(
            "  SLO {name}: unmeasurable ({})",
            s(pyjson::get(slo, "reason"))
        )];
    }
    let (lo, hi) = (
        pyjson::get(slo, "attainment_lower"),
        pyjson::get(slo, "attainment_upper"),
    );
    let attainment = if pyjson::py_eq(lo, hi) {
        pct1(lo)
    } else {
        format!("{}-{}", pct1(lo), pct1(hi))
    };
    let (glo, ghi) = (
        pyjson::get(slo, "goodput_lower_rps"),
        pyjson::get(slo, "goodput_upper_rps"),
    );
    let goodput = if pyjson::py_eq(glo, ghi) {
        f2(glo)
    } else {
        format!("{}-{}", f2(glo), f2(ghi))
    };
    vec![format!(
        "  SLO {name}: attainment {attainment} of {} offered, goodput {goodput} req/s, {} unknown",
        s(pyjson::get(slo, "offered")),
        s(pyjson::get(slo, "unknown"))
    )]
}

fn arrival_line(a: &Value, latency: &Value, lines: &mut Vec<String>) {
    if !a.is_object() {
        return;
    }
    let failed = pyjson::get(a, "failed");
    let eventful = pyjson::truthy(pyjson::get(a, "dropped")) || pyjson::truthy(failed);
    let mode = pyjson::get(a, "mode");
    if mode.as_str() == Some("closed") && !eventful {
        return;
    }
    let mut parts = vec![
        s(mode),
        format!("offered {}", s(pyjson::get(a, "offered"))),
        format!("sent {}", s(pyjson::get(a, "sent"))),
    ];
    let mut counts: Vec<(String, Value)> = vec![
        ("dropped".into(), pyjson::get(a, "dropped").clone()),
        (
            "held for a slot".into(),
            pyjson::get(a, "held_for_slot").clone(),
        ),
    ];
    if let Some(m) = failed.as_object() {
        for (k, v) in m {
            if let Some(slot) = counts.iter_mut().find(|(n, _)| n == k) {
                slot.1 = v.clone();
            } else {
                counts.push((k.clone(), v.clone()));
            }
        }
    }
    for (label, count) in counts {
        if pyjson::truthy(&count) {
            parts.push(format!("{label} {}", s(&count)));
        }
    }
    let peak = pyjson::get(a, "peak_in_flight");
    if !peak.is_null() {
        parts.push(format!("peak in flight {}", s(peak)));
    }
    let lag = pyjson::get(pyjson::get(a, "dispatch_lag_ms"), "p95");
    if pyjson::is_number(lag) {
        parts.push(format!(
            "dispatch lag p95 {:.2} ms",
            lag.as_f64().unwrap_or(0.0)
        ));
    }
    let intended = pyjson::get(latency, "e2e_from_intended_p95");
    if mode.as_str() != Some("closed") && pyjson::is_number(intended) {
        parts.push(format!(
            "E2E from intended arrival p95 {:.2} ms",
            intended.as_f64().unwrap_or(0.0)
        ));
    }
    lines.push(format!("  arrivals: {}", parts.join(", ")));
}
