//! The execution imports and what they lost (docs/report.md §6.4, `imports` and
//! `capture_loss`). Each epoch's counters come from the last import that read
//! it (a later import of the same log reports its latest state); step loss
//! comes from the records the artifact holds, and unattached finishes from
//! their record sequences across every import, so a second import cannot
//! make the loss look smaller than it was.
use std::collections::{BTreeMap, BTreeSet};

use serde_json::{json, Map, Value};

use super::event::{Event, Kind};
use crate::py::json as pyjson;

/// Each execution import's summary in artifact order: the engine adapter's
/// `metadata.summary.execution` object with the capability's `collected`.
pub fn imports(events: &[Event<'_>]) -> Vec<Value> {
    let mut out = Vec::new();
    for event in events {
        if event.kind != Kind::Capability
            || event.field("component").as_str() != Some("engine_adapter")
        {
            continue;
        }
        let summary = event.meta("summary");
        let Some(Value::Object(execution)) = summary.as_object().and_then(|s| s.get("execution"))
        else {
            continue;
        };
        let mut item = execution.clone();
        let collected = match event.field("collected") {
            Value::Null => Value::Array(vec![]),
            v => v.clone(),
        };
        item.insert("collected".into(), collected);
        out.push(Value::Object(item));
    }
    out
}

/// Python `int(v)` of a counter (`int(x or 0)`); strings of digits too.
fn int_of(v: &Value) -> i64 {
    match v {
        Value::Bool(b) => i64::from(*b),
        Value::String(s) => s.trim().parse().unwrap_or(0),
        _ => pyjson::int_value(v),
    }
}

const COUNTERS: [&str; 4] = [
    "gaps",
    "iterations_pending",
    "range_misses",
    "startup_unranged",
];

/// `incomplete` and `update_failed`: how many imported steps were so.
pub fn capture_loss(imports: &[Value], incomplete: u64, update_failed: u64) -> Value {
    let mut latest: BTreeMap<String, &Map<String, Value>> = BTreeMap::new();
    let mut unattached: BTreeSet<(String, i64)> = BTreeSet::new();
    for item in imports {
        let Some(epochs) = pyjson::get(item, "epochs").as_object() else {
            continue;
        };
        for (name, epoch) in epochs {
            let Some(epoch) = epoch.as_object() else {
                continue;
            };
            latest.insert(name.clone(), epoch);
            if let Some(seqs) = epoch
                .get("finish_unattached_seqs")
                .and_then(Value::as_array)
            {
                for seq in seqs {
                    unattached.insert((name.clone(), int_of(seq)));
                }
            }
        }
    }
    let mut dropped: BTreeMap<String, i64> = BTreeMap::new();
    let mut totals: BTreeMap<&str, i64> = BTreeMap::new();
    let (mut truncated, mut errors) = (0i64, 0i64);
    for epoch in latest.values() {
        if let Some(d) = epoch.get("dropped").and_then(Value::as_object) {
            for (k, v) in d {
                *dropped.entry(k.clone()).or_default() += int_of(v);
            }
        }
        for name in COUNTERS {
            *totals.entry(name).or_default() += epoch.get(name).map_or(0, int_of);
        }
        truncated += i64::from(epoch.get("truncated").is_some_and(pyjson::truthy));
        errors += match epoch.get("errors") {
            Some(Value::Array(a)) => a.len() as i64,
            Some(Value::Object(m)) => m.len() as i64,
            Some(Value::String(s)) => s.chars().count() as i64,
            _ => 0,
        };
    }
    let total = |k: &str| totals.get(k).copied().unwrap_or(0);
    json!({
        "epochs": latest.len(),
        "dropped": dropped,
        "missing_sequences": total("gaps"),
        "pending_iterations": total("iterations_pending"),
        "incomplete_iterations": incomplete,
        "update_failed_iterations": update_failed,
        "range_misses": total("range_misses"),
        "finish_unattached": unattached.len(),
        "startup_unranged": total("startup_unranged"),
        "truncated_epochs": truncated,
        "read_errors": errors,
    })
}
