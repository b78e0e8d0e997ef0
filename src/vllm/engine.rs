//! The `telemetry.vllm` block (docs/report.md §6.3.1–§6.3.4): the run-level
//! engine summary, and per case the metrics window between the scrape just
//! before the phase's first send and the one after its drain, differenced
//! per engine. Nothing is differenced across a restart, a recreated or reset
//! counter, a missing series or a non-finite sample: the field holds `null`
//! and says why, never a zero.

use std::cmp::Ordering;
use std::collections::{BTreeMap, BTreeSet};

use serde_json::{json, Map, Value};

use super::catalog;
use super::records::{self, Compact, Hist, Sample, Scrape};
use super::spans::{self, SpanJoin};
use crate::analysis::stats;
use crate::py::builtins;
use crate::py::json as pyjson;

pub const NOTE: &str = "engine-aggregate evidence over every request the engine served in the window, other clients' traffic included; nothing here attributes GPU time to a request";

const RESOLVED: &str = "resolved";
const UNRESOLVED: &str = "unresolved";
const SERIES_MISSING: &str = "series_missing";
const NON_FINITE: &str = "non_finite_sample";
const RECREATED: &str = "counter_recreated";
const RESET: &str = "counter_reset";
const BOUNDARIES_CHANGED: &str = "bucket_boundaries_changed";
const ENGINE_RESTART: &str = "engine_restart";
const ENGINES_CHANGED: &str = "engine_set_changed";
const IDENTITY_UNKNOWN: &str = "exporter_identity_unknown";

fn float(f: f64) -> Value {
    pyjson::nonfinite_value(f)
}

fn opt_float(f: Option<f64>) -> Value {
    f.map_or(Value::Null, float)
}

fn is_type(r: &Value, t: &str) -> bool {
    builtins::as_str(pyjson::get(r, "event_type")) == Some(t)
}

fn is_measured(r: &Value) -> bool {
    builtins::as_str(pyjson::get(r, "phase")) == Some("measured")
}

/// The `telemetry.vllm` block; `{"status": "absent"}` without any scrape,
/// span or `vllm.*` capability.
pub fn vllm_block(records: &[Value], external_spans: &[Value], join: &SpanJoin) -> Value {
    let scrapes = records::scrapes_of(records);
    let span_count = records::spans_of(records.iter().chain(external_spans)).len();
    let capabilities = capabilities(records);
    if scrapes.is_empty() && span_count == 0 && capabilities.is_empty() {
        return json!({"status": "absent"});
    }
    let requests: Vec<&Value> = records
        .iter()
        .filter(|r| is_type(r, "infer.request") && is_measured(r))
        .collect();
    let case_ids: BTreeSet<String> = records
        .iter()
        .filter(|r| is_type(r, "infer.phase_window") && is_measured(r))
        .map(|r| pyjson::str_form(pyjson::get(r, "case_id")))
        .collect();
    let mut cases = Map::new();
    for case_id in case_ids {
        let mine: Vec<&Value> = requests
            .iter()
            .copied()
            .filter(|r| pyjson::str_form(pyjson::get(r, "case_id")) == case_id)
            .collect();
        let block = case_block(&case_id, &scrapes, &mine, join);
        cases.insert(case_id, block);
    }
    json!({
        "status": "collected",
        "observation_scope": "engine_aggregate",
        "note": NOTE,
        "capabilities": capabilities,
        "engine": engine_summary(&scrapes),
        "cases": cases,
        "spans": join.summary,
    })
}

fn capabilities(records: &[Value]) -> Map<String, Value> {
    let mut found = Map::new();
    for r in records.iter().filter(|r| is_type(r, "infer.capabilities")) {
        let component = match r.get("component") {
            Some(v) => pyjson::str_form(v),
            None => String::new(),
        };
        if component.starts_with("vllm.") {
            let mut entry = Map::new();
            for key in ["available", "supported", "enabled", "collected", "metadata"] {
                entry.insert(key.into(), pyjson::get(r, key).clone());
            }
            found.insert(component, Value::Object(entry));
        }
    }
    found
}

// ------------------------------------------------------------ engine summary

/// A total order on the JSON values discovery lists hold (numbers before
/// strings before the rest); the reference sorts lists of one type.
fn value_cmp(a: &Value, b: &Value) -> Ordering {
    match (pyjson::real(a), pyjson::real(b)) {
        (Some(x), Some(y)) => x.total_cmp(&y),
        (Some(_), None) => Ordering::Less,
        (None, Some(_)) => Ordering::Greater,
        (None, None) => match (builtins::as_str(a), builtins::as_str(b)) {
            (Some(x), Some(y)) => x.cmp(y),
            (Some(_), None) => Ordering::Less,
            (None, Some(_)) => Ordering::Greater,
            (None, None) => pyjson::str_form(a).cmp(&pyjson::str_form(b)),
        },
    }
}

/// `sorted(set(values))` with Python equality.
fn sorted_unique(mut values: Vec<Value>) -> Vec<Value> {
    values.sort_by(value_cmp);
    values.dedup_by(|a, b| pyjson::py_eq(a, b));
    values
}

fn engine_summary(scrapes: &[Scrape]) -> Value {
    let ok: Vec<&Scrape> = scrapes.iter().filter(|s| s.is_ok()).collect();
    let mut epochs: Vec<Map<String, Value>> = Vec::new();
    for s in &ok {
        let start = s
            .discovery
            .as_ref()
            .map_or(Value::Null, |d| d.process_start_ns.clone());
        if let Some(last) = epochs.last_mut() {
            if pyjson::py_eq(&last["process_start_ns"], &start) {
                last.insert(
                    "last_observed_at_ns".into(),
                    Value::from(s.observed_at_ns as i64),
                );
                let n = pyjson::int_value(&last["scrapes"]) + 1;
                last.insert("scrapes".into(), Value::from(n));
                continue;
            }
        }
        let mut e = Map::new();
        e.insert("process_start_ns".into(), start);
        e.insert(
            "first_observed_at_ns".into(),
            Value::from(s.observed_at_ns as i64),
        );
        e.insert(
            "last_observed_at_ns".into(),
            Value::from(s.observed_at_ns as i64),
        );
        e.insert("scrapes".into(), Value::from(1));
        epochs.push(e);
    }
    let discoveries: Vec<&records::Discovery> =
        ok.iter().filter_map(|s| s.discovery.as_ref()).collect();
    let union = |f: fn(&records::Discovery) -> &Vec<Value>| {
        Value::Array(sorted_unique(
            discoveries
                .iter()
                .flat_map(|d| f(d).iter().cloned())
                .collect(),
        ))
    };
    let mut optional_absent: Vec<Value> = match discoveries.first() {
        Some(first) => sorted_unique(first.optional_absent.clone()),
        None => Vec::new(),
    };
    for d in discoveries.iter().skip(1) {
        optional_absent.retain(|v| d.optional_absent.iter().any(|w| pyjson::py_eq(v, w)));
    }
    json!({
        "source_url": scrapes.first().map_or(Value::Null, |s| Value::from(s.source_url.clone())),
        "scrapes": {"ok": ok.len(), "failed": scrapes.len() - ok.len()},
        "epochs": epochs,
        "engines": union(|d| &d.engines),
        "model_names": union(|d| &d.model_names),
        "unknown_series": union(|d| &d.unknown),
        "deprecated_series": union(|d| &d.deprecated_present),
        "removed_series": union(|d| &d.removed_present),
        "optional_absent": optional_absent,
        "optional_present": union(|d| &d.optional_present),
    })
}

// ------------------------------------------------------------ per case

/// Which exporter answered a scrape: its process start and engine set.
type Identity = (Value, Vec<Value>);

fn exporter_identity(s: &Scrape) -> Option<Identity> {
    let d = s.discovery.as_ref()?;
    if d.process_start_ns.is_null() {
        return None;
    }
    let mut engines = d.engines.clone();
    engines.sort_by(value_cmp);
    Some((d.process_start_ns.clone(), engines))
}

fn same_engines(a: &[Value], b: &[Value]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| pyjson::py_eq(x, y))
}

fn same_identity(a: &Option<Identity>, b: &Option<Identity>) -> bool {
    match (a, b) {
        (None, None) => true,
        (Some(x), Some(y)) => pyjson::py_eq(&x.0, &y.0) && same_engines(&x.1, &y.1),
        _ => false,
    }
}

/// Why the scrapes are not one exporter's, each compared with the first.
pub fn window_identity_reasons(ok: &[&Scrape]) -> Vec<&'static str> {
    let Some(first) = ok.first() else {
        return Vec::new();
    };
    let Some(identity) = exporter_identity(first) else {
        return vec![IDENTITY_UNKNOWN];
    };
    let mut found = BTreeSet::new();
    for other in &ok[1..] {
        match exporter_identity(other) {
            None => {
                found.insert(IDENTITY_UNKNOWN);
            }
            Some(o) => {
                if !pyjson::py_eq(&o.0, &identity.0) {
                    found.insert(ENGINE_RESTART);
                }
                if !same_engines(&o.1, &identity.1) {
                    found.insert(ENGINES_CHANGED);
                }
            }
        }
    }
    [ENGINE_RESTART, ENGINES_CHANGED, IDENTITY_UNKNOWN]
        .into_iter()
        .filter(|r| found.contains(r))
        .collect()
}

fn case_block(case_id: &str, scrapes: &[Scrape], requests: &[&Value], join: &SpanJoin) -> Value {
    let mine: Vec<&Scrape> = scrapes
        .iter()
        .filter(|s| s.case_id.as_deref() == Some(case_id) && s.phase.as_deref() == Some("measured"))
        .collect();
    let pick = |marker: &'static str| -> Vec<&Scrape> {
        mine.iter()
            .copied()
            .filter(|s| s.marker == marker && s.is_ok())
            .collect()
    };
    let start = pick("phase_start").first().copied();
    let end = pick("phase_end").last().copied();
    let mut reasons: Vec<String> = Vec::new();
    for (marker, found) in [("phase_start", start), ("phase_end", end)] {
        if found.is_none() {
            let failed = mine.iter().any(|s| s.marker == marker);
            let kind = if failed {
                "scrape_failed"
            } else {
                "scrape_missing"
            };
            reasons.push(format!("{kind}:{marker}"));
        }
    }
    let mut window = Value::Null;
    let mut engines = Map::new();
    if let (Some(start), Some(end), true) = (start, end, true) {
        if let (Some(first), Some(last)) = (&start.scrape, &end.scrape) {
            let inside: Vec<&Scrape> = mine
                .iter()
                .copied()
                .filter(|s| {
                    s.is_ok()
                        && start.observed_at_ns <= s.observed_at_ns
                        && s.observed_at_ns <= end.observed_at_ns
                })
                .collect();
            let mut all = vec![start, end];
            all.extend(inside.iter().copied());
            let epoch_reasons = window_identity_reasons(&all);
            reasons.extend(epoch_reasons.iter().map(|r| (*r).to_owned()));
            let identity = exporter_identity(start);
            let own: Vec<&Scrape> = inside
                .iter()
                .copied()
                .filter(|s| same_identity(&exporter_identity(s), &identity))
                .collect();
            let seconds = (end.observed_at_ns - start.observed_at_ns) as f64 / 1e9;
            window = json!({
                "start_observed_at_ns": start.observed_at_ns as i64,
                "end_observed_at_ns": end.observed_at_ns as i64,
                "seconds": float(seconds),
                "includes_drain": true,
                "scrapes": own.len(),
                "foreign_scrapes": inside.len() - own.len(),
            });
            let epoch_reason = epoch_reasons.first().copied();
            let mut names: BTreeSet<String> = first.label_values("engine").into_iter().collect();
            names.extend(last.label_values("engine"));
            for engine in names {
                let block = engine_block(&engine, first, last, &own, seconds, epoch_reason);
                engines.insert(engine, block);
            }
        }
    }
    json!({
        "state": if reasons.is_empty() { RESOLVED } else { UNRESOLVED },
        "reasons": reasons,
        "window": window,
        "engines": engines,
        "spans": spans::case_spans(requests, join),
    })
}

// ------------------------------------------------------------ per engine

/// Extra labels of a series beyond `engine` and `model_name`, sorted.
type Extra = Vec<(String, String)>;
type Index<'a> = BTreeMap<(String, Extra), &'a Sample>;

/// Series of one engine keyed by (family, extra labels).
fn engine_index<'a>(scrape: &'a Compact, engine: &str) -> Index<'a> {
    let empty = BTreeMap::new();
    let mut out = BTreeMap::new();
    for (name, by_set) in &scrape.values {
        for (set_id, value) in by_set {
            let labels = scrape.label_sets.get(set_id).unwrap_or(&empty);
            if labels.get("engine").map(String::as_str) != Some(engine) {
                continue;
            }
            let extra: Extra = labels
                .iter()
                .filter(|(k, _)| k.as_str() != "engine" && k.as_str() != "model_name")
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
            out.insert((name.clone(), extra), value);
        }
    }
    out
}

fn series_by_extra<'a>(name: &str, index: &Index<'a>) -> BTreeMap<Extra, &'a Sample> {
    index
        .iter()
        .filter(|((family, _), _)| family == name)
        .map(|((_, extra), v)| (extra.clone(), *v))
        .collect()
}

fn label_key(extra: &Extra) -> String {
    if extra.is_empty() {
        return "_".into();
    }
    extra
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(",")
}

fn engine_block(
    engine: &str,
    start: &Compact,
    end: &Compact,
    own: &[&Scrape],
    seconds: f64,
    epoch_reason: Option<&str>,
) -> Value {
    let before = engine_index(start, engine);
    let after = engine_index(end, engine);
    let mut kinds = start.families.clone();
    kinds.extend(end.families.iter().map(|(k, v)| (k.clone(), v.clone())));
    let names: BTreeSet<&String> = before.keys().chain(after.keys()).map(|(n, _)| n).collect();
    let mut counters = Map::new();
    let mut histograms = Map::new();
    let mut gauges = Map::new();
    for name in names {
        if name.ends_with("_created") || !name.starts_with("vllm:") {
            continue;
        }
        let kind = kinds.get(name).map_or("untyped", String::as_str);
        let (canonical, alias) = catalog::resolve_name(name);
        let entry = catalog::entry(&canonical);
        let field = entry.map_or(name.clone(), |e| e.field.to_owned());
        match kind {
            "counter" => {
                counters.insert(
                    field,
                    counter_field(name, alias, &before, &after, epoch_reason),
                );
            }
            "histogram" => {
                histograms.insert(
                    field,
                    histogram_field(name, alias, &before, &after, epoch_reason),
                );
            }
            "gauge" => {
                gauges.insert(field, gauge_field(name, alias, engine, own));
            }
            _ => {}
        }
    }
    let derived = derived(&counters, &gauges, seconds);
    json!({
        "counters": counters,
        "histograms": histograms,
        "gauges": gauges,
        "derived": derived,
    })
}

fn recreated(name: &str, kind: &str, before: &Index, after: &Index) -> bool {
    match catalog::created_family_for(name, kind) {
        Some(created) => series_by_extra(&created, before) != series_by_extra(&created, after),
        None => false,
    }
}

/// `"NaN"`, `"+Inf"`, `"-Inf"` for non-finite samples, as the record has them.
fn encode_number(f: f64) -> Value {
    if f.is_nan() {
        Value::from("NaN")
    } else if f.is_infinite() {
        Value::from(if f > 0.0 { "+Inf" } else { "-Inf" })
    } else {
        Value::from(f)
    }
}

/// One counter's change between two scrapes, or why there is none.
pub fn counter_pair_delta(
    a: Option<&Sample>,
    b: Option<&Sample>,
    epoch_reason: Option<&str>,
    recreated: bool,
) -> Value {
    let (Some(Sample::Num(a)), Some(Sample::Num(b))) = (a, b) else {
        return json!({"state": SERIES_MISSING, "delta": null});
    };
    let (a, b) = (*a, *b);
    if !(a.is_finite() && b.is_finite()) {
        return json!({"state": NON_FINITE, "delta": null, "start": encode_number(a), "end": encode_number(b)});
    }
    let state = if let Some(reason) = epoch_reason {
        reason
    } else if recreated {
        RECREATED
    } else if b < a {
        RESET
    } else {
        return json!({"state": RESOLVED, "delta": b - a, "start": a, "end": b});
    };
    json!({"state": state, "delta": null, "start": a, "end": b})
}

fn counter_field(
    name: &str,
    alias: Option<String>,
    before: &Index,
    after: &Index,
    epoch_reason: Option<&str>,
) -> Value {
    let entry = catalog::resolved_entry(name);
    let first = series_by_extra(name, before);
    let last = series_by_extra(name, after);
    let recreated = recreated(name, "counter", before, after);
    let extras: BTreeSet<&Extra> = first.keys().chain(last.keys()).collect();
    let mut by_label = Map::new();
    let mut pairs = Vec::new();
    for extra in extras {
        let pair = counter_pair_delta(
            first.get(extra).copied(),
            last.get(extra).copied(),
            epoch_reason,
            recreated,
        );
        pairs.push(pair.clone());
        by_label.insert(label_key(extra), pair);
    }
    let resolved = !pairs.is_empty() && pairs.iter().all(|p| p["state"] == RESOLVED);
    let delta = if resolved {
        float(
            pairs
                .iter()
                .filter_map(|p| p["delta"].as_f64())
                .fold(0.0, |acc, d| acc + d),
        )
    } else {
        Value::Null
    };
    json!({
        "native": name,
        "unit": entry.and_then(|e| e.unit),
        "provenance": entry.map_or("observed", |e| e.provenance),
        "deprecated_alias_of": alias,
        "by_label": by_label,
        "state": if resolved { RESOLVED } else { UNRESOLVED },
        "delta": delta,
    })
}

/// One histogram's change between two scrapes, or why there is none.
pub fn histogram_pair_delta(
    a: Option<&Hist>,
    b: Option<&Hist>,
    epoch_reason: Option<&str>,
    recreated: bool,
) -> Value {
    let (Some(a), Some(b)) = (a, b) else {
        return json!({"state": SERIES_MISSING});
    };
    let (Some(a_count), Some(a_sum), Some(b_count), Some(b_sum)) = (a.count, a.sum, b.count, b.sum)
    else {
        let missing: Vec<&str> = [
            ("start_sum", a.sum),
            ("start_count", a.count),
            ("end_sum", b.sum),
            ("end_count", b.count),
        ]
        .into_iter()
        .filter(|(_, v)| v.is_none())
        .map(|(n, _)| n)
        .collect();
        return json!({"state": SERIES_MISSING, "missing": missing});
    };
    let finite = [a_count, a_sum, b_count, b_sum]
        .iter()
        .all(|v| v.is_finite())
        && a.buckets
            .iter()
            .chain(&b.buckets)
            .all(|(_, c)| c.is_finite());
    if !finite {
        return json!({"state": NON_FINITE});
    }
    let les = |h: &Hist| {
        h.buckets
            .iter()
            .map(|(le, _)| le.clone())
            .collect::<Vec<_>>()
    };
    let reason = if let Some(reason) = epoch_reason {
        Some(reason)
    } else if recreated {
        Some(RECREATED)
    } else if les(a) != les(b) {
        Some(BOUNDARIES_CHANGED)
    } else if b_count < a_count
        || b_sum < a_sum
        || a.buckets
            .iter()
            .zip(&b.buckets)
            .any(|((_, x), (_, y))| y < x)
    {
        Some(RESET)
    } else {
        None
    };
    if let Some(reason) = reason {
        return json!({"state": reason});
    }
    let count = b_count - a_count;
    let total = b_sum - a_sum;
    let buckets: Vec<Value> = a
        .buckets
        .iter()
        .zip(&b.buckets)
        .map(|((le, x), (_, y))| json!([le, y - x]))
        .collect();
    json!({
        "state": RESOLVED,
        "count": count,
        "sum": total,
        "mean": if count != 0.0 { float(total / count) } else { Value::Null },
        "buckets": buckets,
    })
}

fn histogram_field(
    name: &str,
    alias: Option<String>,
    before: &Index,
    after: &Index,
    epoch_reason: Option<&str>,
) -> Value {
    let entry = catalog::resolved_entry(name);
    let first = series_by_extra(name, before);
    let last = series_by_extra(name, after);
    let recreated = recreated(name, "histogram", before, after);
    fn hist<'a>(s: Option<&&'a Sample>) -> Option<&'a Hist> {
        match s {
            Some(Sample::Hist(h)) => Some(h),
            _ => None,
        }
    }
    let extras: BTreeSet<&Extra> = first.keys().chain(last.keys()).collect();
    let mut by_label = Map::new();
    let mut items = Vec::new();
    for extra in extras {
        let pair = histogram_pair_delta(
            hist(first.get(extra)),
            hist(last.get(extra)),
            epoch_reason,
            recreated,
        );
        items.push(pair.clone());
        by_label.insert(label_key(extra), pair);
    }
    let mut out = Map::new();
    out.insert("native".into(), Value::from(name));
    out.insert("unit".into(), json!(entry.and_then(|e| e.unit)));
    out.insert("deprecated_alias_of".into(), json!(alias));
    out.insert("meaning".into(), json!(entry.map(|e| e.meaning)));
    out.insert("by_label".into(), Value::Object(by_label));
    if let Value::Object(total) = histogram_total(&items) {
        out.extend(total);
    }
    Value::Object(out)
}

fn histogram_total(items: &[Value]) -> Value {
    match items {
        [] => return json!({"state": SERIES_MISSING}),
        [only] => return only.clone(),
        _ => {}
    }
    let reasons: BTreeSet<String> = items
        .iter()
        .filter_map(|i| i["state"].as_str())
        .filter(|s| *s != RESOLVED)
        .map(str::to_owned)
        .collect();
    if !reasons.is_empty() {
        return json!({"state": UNRESOLVED, "reasons": reasons});
    }
    let num = |v: &Value| v.as_f64().unwrap_or(0.0);
    let count = items.iter().fold(0.0, |acc, i| acc + num(&i["count"]));
    let total = items.iter().fold(0.0, |acc, i| acc + num(&i["sum"]));
    let mut out = json!({
        "state": RESOLVED,
        "count": count,
        "sum": float(total),
        "mean": if count != 0.0 { float(total / count) } else { Value::Null },
    });
    let shape = |i: &Value| -> Vec<Value> {
        i["buckets"]
            .as_array()
            .map(|b| b.iter().map(|p| p[0].clone()).collect())
            .unwrap_or_default()
    };
    let first = shape(&items[0]);
    if items.iter().all(|i| shape(i) == first) {
        let buckets: Vec<Value> = first
            .iter()
            .enumerate()
            .map(|(n, le)| {
                let s = items
                    .iter()
                    .fold(0.0, |acc, i| acc + num(&i["buckets"][n][1]));
                json!([le, float(s)])
            })
            .collect();
        out["buckets"] = Value::Array(buckets);
    }
    out
}

/// `{min, mean, max, last}` over the finite samples, with counts.
fn sample_stats(values: &[f64]) -> Value {
    let finite: Vec<f64> = values.iter().copied().filter(|v| v.is_finite()).collect();
    let mean = (!finite.is_empty())
        .then(|| finite.iter().fold(0.0, |acc, v| acc + v) / finite.len() as f64);
    json!({
        "min": opt_float(finite.iter().copied().reduce(f64::min)),
        "mean": opt_float(mean),
        "max": opt_float(finite.iter().copied().reduce(f64::max)),
        "last": opt_float(finite.last().copied()),
        "samples": values.len(),
        "non_finite": values.len() - finite.len(),
    })
}

fn gauge_field(name: &str, alias: Option<String>, engine: &str, own: &[&Scrape]) -> Value {
    let entry = catalog::resolved_entry(name);
    let mut out = Map::new();
    out.insert("native".into(), Value::from(name));
    out.insert("unit".into(), json!(entry.and_then(|e| e.unit)));
    out.insert("deprecated_alias_of".into(), json!(alias));
    let mut series: BTreeMap<String, Vec<f64>> = BTreeMap::new();
    let mut labels = Map::new();
    for s in own {
        let Some(compact) = &s.scrape else { continue };
        let index = engine_index(compact, engine);
        for (extra, value) in series_by_extra(name, &index) {
            if let Sample::Num(v) = value {
                series.entry(label_key(&extra)).or_default().push(*v);
                let obj: Map<String, Value> = extra
                    .iter()
                    .map(|(k, v)| (k.clone(), Value::from(v.clone())))
                    .collect();
                labels.insert(label_key(&extra), Value::Object(obj));
            }
        }
    }
    if series.is_empty() {
        out.insert("state".into(), Value::from(SERIES_MISSING));
        return Value::Object(out);
    }
    let stats: Map<String, Value> = series
        .iter()
        .map(|(k, v)| (k.clone(), sample_stats(v)))
        .collect();
    let tainted = stats
        .values()
        .any(|s| s["non_finite"].as_u64().unwrap_or(0) > 0);
    out.insert(
        "state".into(),
        Value::from(if tainted { NON_FINITE } else { RESOLVED }),
    );
    out.insert("stats".into(), Value::Object(stats));
    out.insert("labels".into(), Value::Object(labels));
    Value::Object(out)
}

// ------------------------------------------------------------ derived

/// `float(delta)` of a resolved counter field.
fn resolved_delta(counters: &Map<String, Value>, field: &str) -> Option<f64> {
    let item = counters.get(field)?;
    if item["state"] != RESOLVED {
        return None;
    }
    pyjson::number(&item["delta"])
}

const MFU_FIELDS: [&str; 3] = [
    "estimated_flops_per_gpu",
    "estimated_read_bytes_per_gpu",
    "estimated_write_bytes_per_gpu",
];

fn derived(counters: &Map<String, Value>, gauges: &Map<String, Value>, seconds: f64) -> Value {
    let rate = |d: Option<f64>| match d {
        Some(d) if seconds > 0.0 => float(d / seconds),
        _ => Value::Null,
    };
    let prompt = resolved_delta(counters, "prompt_tokens");
    let generated = resolved_delta(counters, "generation_tokens");
    let finished = resolved_delta(counters, "request_success");
    let queries = resolved_delta(counters, "prefix_cache_queries");
    let hits = resolved_delta(counters, "prefix_cache_hits");
    let hit_ratio = match (hits, queries) {
        (Some(h), Some(q)) if q != 0.0 => float(h / q),
        _ => Value::Null,
    };
    let mut out = json!({
        "rates": {
            "prompt_tokens_per_second": rate(prompt),
            "generation_tokens_per_second": rate(generated),
            "finished_requests_per_second": rate(finished),
            "window_seconds": float(seconds),
        },
        "prefix_cache": {"queries": opt_float(queries), "hits": opt_float(hits), "hit_ratio": hit_ratio},
        "kv_cache": kv_cache(gauges),
        "mfu": mfu(counters, generated),
    });
    let optional: Map<String, Value> = counters
        .iter()
        .filter(|(_, item)| {
            let native = item["native"].as_str().unwrap_or_default();
            matches!(catalog::family_group(native), "spec_decode" | "kv_transfer")
        })
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    if !optional.is_empty() {
        out["optional_counters"] = Value::Object(optional);
    }
    out
}

fn kv_cache(gauges: &Map<String, Value>) -> Value {
    let usage = gauges.get("kv_cache_usage");
    let stats = usage.map(|u| &u["stats"]["_"]).filter(|s| s.is_object());
    let config: Map<String, Value> = match gauges.get("cache_config").map(|g| &g["labels"]) {
        Some(Value::Object(m)) if m.len() == 1 => match m.values().next() {
            Some(Value::Object(labels)) => labels.clone(),
            _ => Map::new(),
        },
        _ => Map::new(),
    };
    let int_label = |key: &str| {
        config
            .get(key)
            .and_then(builtins::as_str)
            .and_then(crate::py::int::parse_int)
    };
    let block_size = int_label("block_size");
    let size_tokens = int_label("kv_cache_size_tokens");
    let mut blocks = int_label("num_gpu_blocks");
    if blocks.is_none() {
        if let (Some(t), Some(b)) = (size_tokens, block_size) {
            if t != 0 && b != 0 {
                // Python's `//` floors.
                let q = t / b;
                blocks = Some(if t % b != 0 && ((t < 0) != (b < 0)) {
                    q - 1
                } else {
                    q
                });
            }
        }
    }
    let max_usage = stats.and_then(|s| pyjson::real(&s["max"]));
    let in_use = match (max_usage, blocks) {
        (Some(m), Some(b)) if b != 0 => Value::from(stats::round_half_even(m * b as f64) as i64),
        _ => Value::Null,
    };
    let int_json = |v: Option<i128>| {
        v.and_then(|n| i64::try_from(n).ok())
            .map_or(Value::Null, Value::from)
    };
    json!({
        "state": usage.map_or(Value::from(SERIES_MISSING), |u| u.get("state").cloned().unwrap_or(Value::from(SERIES_MISSING))),
        "max_usage_fraction": stats.map_or(Value::Null, |s| s["max"].clone()),
        "mean_usage_fraction": stats.map_or(Value::Null, |s| s["mean"].clone()),
        "num_gpu_blocks": int_json(blocks),
        "block_size": int_json(block_size),
        "kv_cache_size_tokens": int_json(size_tokens),
        "max_blocks_in_use": in_use,
        "meaning": "logical KV block occupancy; not device memory",
    })
}

fn mfu(counters: &Map<String, Value>, generated: Option<f64>) -> Value {
    if MFU_FIELDS.iter().all(|f| !counters.contains_key(*f)) {
        return json!({"state": SERIES_MISSING});
    }
    let deltas: Vec<Option<f64>> = MFU_FIELDS
        .iter()
        .map(|f| resolved_delta(counters, f))
        .collect();
    if deltas.iter().any(Option::is_none) {
        let states: Map<String, Value> = MFU_FIELDS
            .iter()
            .map(|f| {
                let state = counters
                    .get(*f)
                    .and_then(|c| c.get("state"))
                    .cloned()
                    .unwrap_or(Value::from(SERIES_MISSING));
                ((*f).to_owned(), state)
            })
            .collect();
        return json!({"state": UNRESOLVED, "counters": states});
    }
    let values: Map<String, Value> = MFU_FIELDS
        .iter()
        .zip(&deltas)
        .map(|(f, d)| ((*f).to_owned(), opt_float(*d)))
        .collect();
    let resolved = |detail: Option<&str>| {
        let mut out = json!({"state": RESOLVED, "provenance": "estimated", "per_gpu": true});
        if let Value::Object(m) = &mut out {
            m.extend(values.clone());
            if let Some(d) = detail {
                m.insert("detail".into(), Value::from(d));
            }
        }
        out
    };
    if deltas.iter().any(|d| d.is_some_and(|v| v != 0.0)) {
        return resolved(None);
    }
    match generated {
        None => {
            let mut out = json!({
                "state": UNRESOLVED,
                "detail": "the counters did not advance and the generation token delta is unresolved, so whether --enable-mfu-metrics is off or nothing was generated cannot be told",
            });
            if let Value::Object(m) = &mut out {
                m.extend(values.clone());
            }
            out
        }
        Some(g) if g > 0.0 => json!({
            "state": "not_enabled",
            "detail": "the counters did not advance while tokens were generated; vLLM needs --enable-mfu-metrics",
        }),
        Some(_) => resolved(Some("no tokens were generated in the window")),
    }
}
