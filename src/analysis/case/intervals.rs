//! Intervals: the measured, scheduled, dispatch and drain windows of a case
//! and the rates read over them.
use super::*;

/// A measured interval (docs/report.md §4.2.4).
pub fn interval(kind: &str, start: &Int, end: &Int, cohort: &str) -> Value {
    let d = end.sub(start);
    let seconds = if d > Int::default() {
        fnum(d.to_f64().map(|d| d / 1e9))
    } else {
        Value::Null
    };
    json!({"kind": kind, "started_at_ns": start.to_json(), "ended_at_ns": end.to_json(), "seconds": seconds, "numerator_cohort": cohort})
}

pub(super) fn rate(count: f64, interval: &Value) -> Value {
    match pyjson::get(interval, "seconds").as_f64() {
        Some(s) if s.is_finite() => fnum(Some(count / s)),
        _ => Value::Null,
    }
}

/// [`rate`] of an exact count (Python's `int / float`).
pub(super) fn rate_of(count: &Int, interval: &Value) -> Value {
    match count.to_f64() {
        Some(c) => rate(c, interval),
        None => Value::Null,
    }
}

/// The first and last times of a case's requests, read in the population's
/// pass.
#[derive(Default, Clone)]
pub(super) struct Extents {
    /// Earliest start and latest end of the requests with both.
    pub(super) spans: Option<(Int, Int)>,
    /// Earliest and latest start of the requests sent (not dropped).
    pub(super) sends: Option<(Int, Int)>,
}

pub(super) fn intervals(
    ctx: &RunContext,
    case_key: &str,
    offered: usize,
    extents: Extents,
    window: Option<&Value>,
    scheduled: Option<i64>,
) -> Value {
    let w = ctx.workload;
    let empty = |reason: Option<&str>, rate: Value| {
        json!({"rate": rate, "scheduled_window": null, "dispatch_window": null, "drain": null,
               "measured_span": null, "configured_rate_per_second": null,
               "realized_offered_rate_per_second": null, "rate_reason": reason})
    };
    let Some(wn) = window else {
        if w.is_some() {
            return empty(Some("phase_window_missing"), Value::Null);
        }
        let rate = match extents.spans {
            Some((a, b)) => interval("request_span", &a, &b, "all_measured"),
            None => Value::Null,
        };
        return empty(Some("no_phase_window"), rate);
    };
    let (Some(started), Some(drained)) = (
        ns_of(pyjson::get(wn, "started_at_ns")),
        ns_of(pyjson::get(wn, "drained_at_ns")),
    ) else {
        return empty(Some("phase_window_incomplete"), Value::Null);
    };
    let measured_span = interval("measured_span", &started, &drained, "all_measured");
    let drain = interval(
        "drain",
        &crate::py::int::int_value(pyjson::get(wn, "window_ended_at_ns")),
        &drained,
        "all_measured",
    );
    let dispatch = match extents.sends {
        Some((a, b)) => interval("dispatch_window", &a, &b, "all_measured"),
        None => Value::Null,
    };
    let mode = match wn.get("arrival_mode") {
        None => "closed".to_owned(),
        Some(v) => pyjson::str_form(v),
    };
    if mode == "closed" {
        return json!({"rate": measured_span, "scheduled_window": null, "dispatch_window": dispatch,
                      "drain": drain, "measured_span": measured_span, "configured_rate_per_second": null,
                      "realized_offered_rate_per_second": null, "rate_reason": null});
    }
    let endpoint = {
        let v = pyjson::get(wn, "scheduled_endpoint_offset_ns");
        if pyjson::is_number(v) {
            Some(crate::py::int::int_value(v))
        } else {
            w.and_then(|w| recomputed_endpoint_ns(w, case_key))
                .map(Int::from)
        }
    };
    let configured = configured_rate(w, case_key);
    match endpoint {
        None => json!({"rate": null, "scheduled_window": null, "dispatch_window": dispatch,
                       "drain": drain, "measured_span": measured_span, "configured_rate_per_second": configured,
                       "realized_offered_rate_per_second": null, "rate_reason": "endpoint_undeclared"}),
        Some(end) => {
            let sw = interval(
                "scheduled_window",
                &started,
                &started.add(&end),
                "arrival_cohort",
            );
            let offered = match scheduled {
                Some(s) if s != 0 => s as f64,
                _ => offered as f64,
            };
            let realized = rate(offered, &sw);
            json!({"rate": sw, "scheduled_window": sw, "dispatch_window": dispatch,
                   "drain": drain, "measured_span": measured_span, "configured_rate_per_second": configured,
                   "realized_offered_rate_per_second": realized, "rate_reason": null})
        }
    }
}
