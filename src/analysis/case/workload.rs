//! The workload record: a case's declared arrival spec, its recomputed
//! scheduled count and endpoint, and its configured rate.
use super::*;

/// The workload's entry for a case, and its arrival spec.
pub(super) fn workload_case<'a>(w: &'a Value, case_key: &str) -> Option<&'a Value> {
    pyjson::get(w, "cases")
        .as_array()?
        .iter()
        .find(|c| pyjson::get(c, "case_id").as_str() == Some(case_key))
}

pub(super) fn workload_bounds(w: &Value) -> Option<(Option<i64>, Option<f64>)> {
    let m = pyjson::get(w, "measurement");
    if !m.is_object() {
        return None;
    }
    let count = pyjson::get(m, "request_count");
    let count = if pyjson::is_int(count) {
        count.as_i64()
    } else {
        None
    };
    let dur = pyjson::number(pyjson::get(m, "duration_seconds"))
        .filter(|_| !pyjson::get(m, "duration_seconds").is_boolean());
    Some((count, dur))
}

pub(super) fn seed_of(w: &Value) -> i64 {
    pyjson::int_value(pyjson::get(w, "seed"))
}

pub(super) fn recomputed_scheduled(w: &Value, case_key: &str) -> Option<i64> {
    let entry = workload_case(w, case_key)?;
    let spec = schedule::spec_from_json(pyjson::get(entry, "arrival"))?;
    if matches!(
        spec.mode,
        schedule::ArrivalMode::Closed | schedule::ArrivalMode::Replay
    ) {
        return None;
    }
    let (count, dur) = workload_bounds(w)?;
    schedule::bounded_count(&spec, count, dur, seed_of(w)).map(|n| n as i64)
}

pub(super) fn recomputed_endpoint_ns(w: &Value, case_key: &str) -> Option<i64> {
    let entry = workload_case(w, case_key)?;
    let spec = schedule::spec_from_json(pyjson::get(entry, "arrival"))?;
    let (count, dur) = workload_bounds(w)?;
    let end = schedule::scheduled_endpoint(&spec, count, dur, seed_of(w))?;
    Some(crate::analysis::stats::round_half_even(end * 1e9) as i64)
}

pub(super) fn configured_rate(w: Option<&Value>, case_key: &str) -> Value {
    let Some(entry) = w.and_then(|w| workload_case(w, case_key)) else {
        return Value::Null;
    };
    let a = pyjson::get(entry, "arrival");
    let mode = pyjson::get(a, "mode").as_str();
    let num = |k: &str| {
        let v = pyjson::get(a, k);
        if v.is_boolean() {
            None
        } else {
            pyjson::number(v)
        }
    };
    match mode {
        Some("fixed-rate") | Some("poisson") => fnum(num("rate_per_second")),
        Some("burst") => match (num("burst_size"), num("burst_interval_seconds")) {
            (Some(size), Some(iv)) if iv > 0.0 => fnum(Some(size / iv)),
            _ => Value::Null,
        },
        _ => Value::Null,
    }
}
