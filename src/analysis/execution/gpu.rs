//! Measured GPU busy time per device and clock scope (docs/report.md §6.4, GPU
//! activities): linked against unlinked time, by membership state, by
//! ownership and by case. Every figure is a union of busy intervals, never a
//! sum of per-step unions; activity without a device UUID or a device clock
//! is counted apart and never added to a device's time.
use std::collections::BTreeMap;

use serde_json::{json, Map, Value};

use super::fact::Fact;
use super::steps::Steps;

type Intervals = Vec<(i64, i64)>;

/// Total length of the union of intervals (touching ones join).
pub fn union_ns(intervals: &mut Intervals) -> i64 {
    intervals.sort_unstable();
    let mut total: i64 = 0;
    let mut current: Option<(i64, i64)> = None;
    for &(start, end) in intervals.iter() {
        match current {
            Some((s, e)) if start <= e => current = Some((s, e.max(end))),
            Some((s, e)) => {
                total = total.saturating_add(e - s);
                current = Some((start, end));
            }
            None => current = Some((start, end)),
        }
    }
    if let Some((s, e)) = current {
        total = total.saturating_add(e - s);
    }
    total
}

fn unions(buckets: &mut BTreeMap<String, Intervals>) -> Map<String, Value> {
    buckets
        .iter_mut()
        .map(|(name, items)| (name.clone(), json!(union_ns(items))))
        .collect()
}

/// Busy intervals of one device and clock, bucketed per dimension.
#[derive(Debug, Default)]
pub struct Scope {
    linked: Intervals,
    unlinked: BTreeMap<String, Intervals>,
    membership: BTreeMap<String, Intervals>,
    ownership: BTreeMap<String, Intervals>,
    pub cases: BTreeMap<String, Intervals>,
}

impl Scope {
    pub fn summary(&mut self) -> Value {
        let mut unlinked: Intervals = self.unlinked.values().flatten().copied().collect();
        let mut measured = self.linked.clone();
        measured.extend_from_slice(&unlinked);
        json!({
            "measured_busy_ns": union_ns(&mut measured),
            "linkage": {
                "linked_ns": union_ns(&mut self.linked),
                "unlinked_ns": union_ns(&mut unlinked),
                "unlinked_by_reason_ns": unions(&mut self.unlinked),
            },
            "membership_ns": unions(&mut self.membership),
            "ownership_ns": unions(&mut self.ownership),
        })
    }
}

/// The scopes by `<device_uuid>@<clock_domain>`, and the unmeasured counts.
pub fn dimensions(
    activities: &[&Fact<'_>],
    steps: &Steps<'_, '_>,
) -> (BTreeMap<String, Scope>, Value) {
    let mut scopes: BTreeMap<String, Scope> = BTreeMap::new();
    let (mut records, mut summed, mut linked_records) = (0i64, 0i64, 0i64);
    for activity in activities {
        if !activity.gpu {
            continue;
        }
        let Some((key, busy)) = measured(activity) else {
            records += 1;
            linked_records += i64::from(activity.main.is_some());
            summed = summed.saturating_add(summed_ns(activity));
            continue;
        };
        let scope = scopes.entry(key).or_default();
        match activity.main {
            None => {
                let reason = activity.label.as_deref().unwrap_or("unknown").to_owned();
                scope
                    .unlinked
                    .entry(reason)
                    .or_default()
                    .extend_from_slice(&busy);
            }
            Some(it) => {
                scope.linked.extend_from_slice(&busy);
                scope
                    .membership
                    .entry(steps.membership_state(&it).into())
                    .or_default()
                    .extend_from_slice(&busy);
                scope
                    .ownership
                    .entry(steps.ownership(&it).into())
                    .or_default()
                    .extend_from_slice(&busy);
                for case in steps.cases(&it) {
                    scope
                        .cases
                        .entry(case.into())
                        .or_default()
                        .extend_from_slice(&busy);
                }
            }
        }
    }
    let unmeasured = json!({
        "activity_records": records,
        "summed_activity_ns": summed,
        "linked_records": linked_records,
    });
    (scopes, unmeasured)
}

/// The scope of a measurable activity and its busy intervals: a UUID-less
/// or wall-clock activity, or one without a complete span, is not measured.
fn measured(activity: &Fact<'_>) -> Option<(String, Intervals)> {
    let uuid = activity.scope.device_uuid?;
    if !matches!(activity.scope.clock_kind, "monotonic" | "device") {
        return None;
    }
    let busy = activity.busy.clone()?;
    Some((format!("{uuid}@{}", activity.scope.clock_domain), busy))
}

fn summed_ns(activity: &Fact<'_>) -> i64 {
    if let Some(summed) = activity.summed {
        return summed;
    }
    match (activity.start_ns, activity.end_ns) {
        (Some(s), Some(e)) => e - s,
        _ => 0,
    }
}
