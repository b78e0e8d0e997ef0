//! The text lines of `telemetry.execution` (docs/report.md §6.4), printed after
//! the vLLM lines and before the cases: nothing when no log was imported.
use serde_json::Value;

use crate::py::json as pyjson;

/// `int(ns) / 1e6` with three decimals and ` ms`.
fn ms(ns: &Value) -> String {
    format!("{:.3} ms", pyjson::int_value(ns) as f64 / 1e6)
}

fn int(v: &Value, key: &str) -> String {
    match pyjson::get(v, key) {
        Value::Null => "0".into(),
        x => pyjson::str_form(x),
    }
}

/// `name <ms>, ...` of a map of nanoseconds, or `none`.
fn split(values: &Value) -> String {
    let parts: Vec<String> = values
        .as_object()
        .map(|m| m.iter().map(|(k, v)| format!("{k} {}", ms(v))).collect())
        .unwrap_or_default();
    if parts.is_empty() {
        "none".into()
    } else {
        parts.join(", ")
    }
}

pub fn lines(block: &Value) -> Vec<String> {
    if !block.is_object() || !pyjson::truthy(pyjson::get(block, "available")) {
        return vec![];
    }
    let error = pyjson::get(block, "error");
    if pyjson::truthy(error) {
        return vec![format!(
            "vLLM execution: unresolved ({})",
            pyjson::str_form(error)
        )];
    }
    let failed: Vec<&Value> = pyjson::get(block, "imports")
        .as_array()
        .map(|a| {
            a.iter()
                .map(|i| pyjson::get(i, "failed"))
                .filter(|f| pyjson::truthy(f))
                .collect()
        })
        .unwrap_or_default();
    let iterations = pyjson::get(block, "iterations");
    if let Some(last) = failed.last() {
        if !pyjson::truthy(pyjson::get(iterations, "total")) {
            return vec![format!(
                "vLLM execution: import failed ({})",
                pyjson::str_form(last)
            )];
        }
    }
    let mut out = vec![headline(block)];
    if let Some(gpu) = pyjson::get(block, "gpu").as_object() {
        for (key, scope) in gpu {
            out.push(format!("  {key}: {}", scope_text(scope)));
        }
    }
    let unmeasured = pyjson::get(block, "unmeasured");
    let count = pyjson::get(unmeasured, "activity_records");
    if pyjson::truthy(count) {
        out.push(format!(
            "  unmeasured: {} GPU activity records without a device UUID or device clock, {} summed (not comparable with the unions above)",
            pyjson::str_form(count),
            ms(pyjson::get(unmeasured, "summed_activity_ns"))
        ));
    }
    out.push(format!(
        "  capture loss: {}",
        loss_text(pyjson::get(block, "capture_loss"))
    ));
    if let Some(cases) = pyjson::get(block, "cases").as_object() {
        for (case, entry) in cases {
            out.push(format!("  {case}: {}", case_text(entry)));
        }
    }
    out
}

fn headline(block: &Value) -> String {
    let iterations = pyjson::get(block, "iterations");
    let requests = pyjson::get(block, "requests");
    let members: Vec<String> = pyjson::get(block, "memberships")
        .as_object()
        .map(|m| {
            m.iter()
                .map(|(k, v)| format!("{k} {}", pyjson::str_form(v)))
                .collect()
        })
        .unwrap_or_default();
    let members = if members.is_empty() {
        "none".into()
    } else {
        members.join(", ")
    };
    format!(
        "vLLM execution: {} steps imported ({} complete, {} incomplete), memberships {members}, {} of {} run requests bound",
        int(iterations, "total"),
        int(iterations, "complete"),
        int(iterations, "incomplete"),
        int(requests, "run_requests_bound"),
        int(requests, "run_requests_total"),
    )
}

fn scope_text(scope: &Value) -> String {
    let linkage = pyjson::get(scope, "linkage");
    let reasons: Vec<String> = pyjson::get(linkage, "unlinked_by_reason_ns")
        .as_object()
        .map(|m| m.iter().map(|(k, v)| format!("{k} {}", ms(v))).collect())
        .unwrap_or_default();
    let mut text = format!(
        "linked {} of {} measured busy",
        ms(pyjson::get(linkage, "linked_ns")),
        ms(pyjson::get(scope, "measured_busy_ns"))
    );
    if !reasons.is_empty() {
        text.push_str(&format!(" (unlinked: {})", reasons.join(", ")));
    }
    text.push_str(&format!(
        "; membership {}; ownership {}",
        split(pyjson::get(scope, "membership_ns")),
        split(pyjson::get(scope, "ownership_ns"))
    ));
    text
}

fn loss_text(loss: &Value) -> String {
    let dropped: i64 = pyjson::get(loss, "dropped")
        .as_object()
        .map(|m| m.values().map(pyjson::int_value).sum())
        .unwrap_or(0);
    format!(
        "{dropped} records dropped by the hook, {} missing, {} steps pending, {} incomplete, {} update failures, {} range misses, {} finishes unattached; {} start-up calls unranged (not loss)",
        int(loss, "missing_sequences"),
        int(loss, "pending_iterations"),
        int(loss, "incomplete_iterations"),
        int(loss, "update_failed_iterations"),
        int(loss, "range_misses"),
        int(loss, "finish_unattached"),
        int(loss, "startup_unranged"),
    )
}

fn case_text(case: &Value) -> String {
    let gpu: Vec<String> = pyjson::get(case, "gpu")
        .as_object()
        .map(|m| {
            m.iter()
                .map(|(k, v)| format!("{k} linked {}", ms(pyjson::get(v, "linked_ns"))))
                .collect()
        })
        .unwrap_or_default();
    let mut text = format!("{} steps", int(case, "iterations"));
    let shared = pyjson::get(case, "shared_iterations");
    if pyjson::truthy(shared) {
        text.push_str(&format!(
            ", {} shared (non-additive)",
            pyjson::str_form(shared)
        ));
    }
    if !gpu.is_empty() {
        text.push_str(&format!("; {}", gpu.join(", ")));
    }
    text
}
