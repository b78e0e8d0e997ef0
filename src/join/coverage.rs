//! Per-case coverage of one joined member and its metric summaries
//! (docs/server-join.md §8, §9, §10). A member's placed samples are sorted once by
//! client time and its unplaced samples by server time; each case then only
//! binary-searches its window and walks the samples inside it.

use serde_json::{Map, Value};

use super::clock::Unplaced;
use super::place::{time_value, Indexed, Invalidation, Member};
use super::telemetry::METRICS;

/// One placed sample on the client clock.
#[derive(Debug, Clone, Copy)]
struct Placed {
    value_ns: i128,
    uncertainty_ns: i128,
    sample: usize,
}

/// A joined member's polls in client time and how long they can be trusted.
pub(crate) struct Timeline {
    /// Sorted by `value_ns`.
    placed: Vec<Placed>,
    min_uncertainty_ns: i128,
    /// Unplaced samples' server times, sorted, and a prefix count of the
    /// ambiguous ones (`ambiguous_before[i]` = ambiguous among the first i).
    unplaced_at: Vec<i64>,
    ambiguous_before: Vec<u32>,
    offsets: Vec<i64>,
    slack_ns: i128,
    first_poll_ns: i128,
    last_poll_ns: i128,
    invalidated: bool,
    trusted_until_ns: Option<i128>,
    /// Metric indices seen anywhere in the member's samples, in name order.
    metrics: Vec<usize>,
}

/// Build a member's timeline (docs/server-join.md §8). The member has at least one placed sample.
pub(crate) fn timeline(
    member: &Member,
    offsets_of_applied: Vec<i64>,
    invalidation: Option<&Invalidation>,
    indexed: &Indexed,
) -> Timeline {
    let samples = &indexed.samples;
    let mut placed = Vec::with_capacity(member.samples.len());
    let mut unplaced: Vec<(i64, bool)> = Vec::new();
    let mut seen_metrics = [false; METRICS.len()];
    let mut slack_ms = 0i64;
    for (&index, placement) in member.samples.iter().zip(&member.placements) {
        let sample = &samples[index];
        if let Some(seen) = seen_metrics.get_mut(usize::from(indexed.metric[index])) {
            *seen = true;
        }
        slack_ms = slack_ms.max(sample.interval_ms);
        match placement {
            Ok(p) => placed.push(Placed {
                value_ns: p.value_ns,
                uncertainty_ns: p.uncertainty_ns,
                sample: index,
            }),
            Err(reason) => unplaced.push((sample.observed_at_ns, *reason == Unplaced::Ambiguous)),
        }
    }
    placed.sort_by_key(|p| p.value_ns);
    unplaced.sort_unstable();
    let mut ambiguous_before = Vec::with_capacity(unplaced.len() + 1);
    let mut running = 0u32;
    ambiguous_before.push(0);
    for &(_, ambiguous) in &unplaced {
        running += u32::from(ambiguous);
        ambiguous_before.push(running);
    }
    let trusted_until_ns = invalidation.and_then(|inv| {
        placed
            .iter()
            .filter(|p| samples[p.sample].observed_at_ns < inv.observed_at_ns)
            .map(|p| p.value_ns - p.uncertainty_ns)
            .max()
    });
    let mut offsets = offsets_of_applied;
    offsets.sort_unstable();
    offsets.dedup();
    Timeline {
        min_uncertainty_ns: placed.iter().map(|p| p.uncertainty_ns).min().unwrap_or(0),
        first_poll_ns: placed.first().map_or(0, |p| p.value_ns),
        last_poll_ns: placed.last().map_or(0, |p| p.value_ns),
        placed,
        unplaced_at: unplaced.iter().map(|(t, _)| *t).collect(),
        ambiguous_before,
        offsets,
        slack_ns: i128::from(slack_ms) * 1_000_000,
        invalidated: invalidation.is_some(),
        trusted_until_ns,
        metrics: (0..METRICS.len()).filter(|&m| seen_metrics[m]).collect(),
    }
}

/// Coverage status of one member in one case.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Status {
    Observed,
    Partial,
    Empty,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Observed => "observed",
            Status::Partial => "partial",
            Status::Empty => "empty",
        }
    }
}

/// One member's view of one case: observations (docs/server-join.md §9.6) and coverage (docs/server-join.md §9.5).
pub(crate) struct CaseView {
    pub status: Status,
    pub observations: Value,
    pub coverage: Value,
}

fn coverage_json(
    status: Status,
    reason: Option<&str>,
    window: Option<Option<(i128, i128)>>,
) -> Value {
    let mut m = Map::new();
    m.insert("status".into(), Value::from(status.as_str()));
    m.insert("reason".into(), reason.map_or(Value::Null, Value::from));
    if let Some(window) = window {
        m.insert(
            "counted_window_ns".into(),
            window.map_or(Value::Null, |(low, high)| {
                Value::Array(vec![time_value(low), time_value(high)])
            }),
        );
    }
    Value::Object(m)
}

impl Timeline {
    /// Why a case has no samples when unplaced polls probably fell inside it
    /// (docs/server-join.md §9.4): any offset that placed others puts one in `[start, end]`.
    fn unplaced_reason(&self, start: i128, end: i128) -> Option<&'static str> {
        let mut near = false;
        for &offset in &self.offsets {
            let from = start - i128::from(offset);
            let to = end - i128::from(offset);
            let lo = self.unplaced_at.partition_point(|&t| i128::from(t) < from);
            let hi = self.unplaced_at.partition_point(|&t| i128::from(t) <= to);
            if hi > lo {
                near = true;
                if self.ambiguous_before[hi] > self.ambiguous_before[lo] {
                    return Some("clock_alignment_ambiguous");
                }
            }
        }
        near.then_some("clock_alignment_uncovered")
    }

    /// The member's view of a case whose ok requests span `window` (docs/server-join.md §9).
    pub(crate) fn case_view(&self, window: Option<(i64, i64)>, indexed: &Indexed) -> CaseView {
        let Some((start, end)) = window else {
            return CaseView {
                status: Status::Empty,
                observations: Value::Object(Map::new()),
                coverage: coverage_json(Status::Empty, Some("no_request_window"), None),
            };
        };
        let (start, end) = (i128::from(start), i128::from(end));
        let lo = self.placed.partition_point(|p| p.value_ns < start);
        let hi = self.placed.partition_point(|p| p.value_ns <= end).max(lo);
        let inside = &self.placed[lo..hi];
        let margin = inside
            .iter()
            .map(|p| p.uncertainty_ns)
            .min()
            .unwrap_or(self.min_uncertainty_ns);
        let (low, high) = (start + margin, end - margin);
        // Only samples with start <= v <= end can satisfy
        // start + u <= v <= end - u, since u >= 0.
        let in_window: Vec<usize> = inside
            .iter()
            .filter(|p| {
                start + p.uncertainty_ns <= p.value_ns && p.value_ns <= end - p.uncertainty_ns
            })
            .map(|p| p.sample)
            .collect();
        let empty = |reason: &str| CaseView {
            status: Status::Empty,
            observations: Value::Object(Map::new()),
            coverage: coverage_json(
                Status::Empty,
                Some(reason),
                Some((high >= low).then_some((low, high))),
            ),
        };
        if high < low {
            return empty("window_shorter_than_uncertainty");
        }
        if self.invalidated && self.trusted_until_ns.is_none_or(|t| end > t) {
            return empty("identity_invalidated");
        }
        if in_window.is_empty() {
            return empty(
                self.unplaced_reason(start, end)
                    .unwrap_or("no_collector_coverage"),
            );
        }
        let partial = if self.first_poll_ns > low + self.slack_ns {
            Some("collector_started_after_window_start")
        } else if self.last_poll_ns < high - self.slack_ns {
            Some("collector_stopped_before_window_end")
        } else {
            None
        };
        let status = if partial.is_some() {
            Status::Partial
        } else {
            Status::Observed
        };
        CaseView {
            status,
            observations: self.metric_summaries(&in_window, indexed),
            coverage: coverage_json(status, partial, Some(Some((low, high)))),
        }
    }

    /// One summary per metric the member ever reported, over the in-window
    /// samples only (docs/server-join.md §9.6).
    fn metric_summaries(&self, in_window: &[usize], indexed: &Indexed) -> Value {
        // Sets stay tiny (a few sources, provenances and intervals per
        // metric), so short vectors beat tree sets on the hot path.
        #[derive(Default)]
        struct Acc {
            provenance: Vec<u32>,
            sources: Vec<u32>,
            intervals: Vec<i64>,
            max_valid: Option<i64>,
            counts: [u64; 4],
        }
        fn add<T: PartialEq>(set: &mut Vec<T>, value: T) {
            if !set.contains(&value) {
                set.push(value);
            }
        }
        let mut acc: Vec<Acc> = (0..METRICS.len()).map(|_| Acc::default()).collect();
        for &i in in_window {
            let Some(a) = acc.get_mut(usize::from(indexed.metric[i])) else {
                continue;
            };
            let s = &indexed.samples[i];
            add(&mut a.provenance, indexed.provenance[i]);
            add(&mut a.sources, indexed.source[i]);
            add(&mut a.intervals, s.interval_ms);
            match indexed.state[i] {
                0 => {
                    // A valid sample always carries a value (loader rule).
                    if let Some(v) = s.value_bytes {
                        a.counts[0] += 1;
                        a.max_valid = Some(a.max_valid.map_or(v, |m| m.max(v)));
                    }
                }
                k @ 1..=3 => a.counts[usize::from(k)] += 1,
                _ => {}
            }
        }
        let mut out = Map::new();
        for &m in &self.metrics {
            let a = &acc[m];
            let (name, scope, owner) = METRICS[m];
            let strings = |ids: &[u32], table: &[String]| {
                let mut names: Vec<&str> = ids
                    .iter()
                    .filter_map(|&i| table.get(i as usize).map(String::as_str))
                    .collect();
                names.sort_unstable();
                Value::Array(names.into_iter().map(Value::from).collect())
            };
            let mut intervals = a.intervals.clone();
            intervals.sort_unstable();
            let mut e = Map::new();
            e.insert("observation_scope".into(), Value::from(scope));
            e.insert("counter_owner".into(), Value::from(owner));
            e.insert(
                "provenance".into(),
                strings(&a.provenance, &indexed.provenances),
            );
            e.insert("sources".into(), strings(&a.sources, &indexed.sources));
            e.insert(
                "maximum_recorded_bytes".into(),
                a.max_valid.map_or(Value::Null, Value::from),
            );
            e.insert("valid_samples".into(), Value::from(a.counts[0]));
            e.insert("missing_samples".into(), Value::from(a.counts[1]));
            e.insert("stale_samples".into(), Value::from(a.counts[2]));
            e.insert("invalid_samples".into(), Value::from(a.counts[3]));
            e.insert(
                "intervals_ms".into(),
                Value::Array(intervals.into_iter().map(Value::from).collect()),
            );
            out.insert(name.to_owned(), Value::Object(e));
        }
        Value::Object(out)
    }
}

/// Group coverage from the members' statuses (docs/server-join.md §10).
pub(crate) fn group_coverage(statuses: &[Status]) -> Value {
    let (status, reason) = if statuses.iter().all(|s| *s == Status::Observed) {
        ("observed", None)
    } else if statuses.iter().all(|s| *s == Status::Empty) {
        ("empty", Some("no_member_observed"))
    } else {
        ("partial", Some("some_members_not_fully_observed"))
    };
    let mut m = Map::new();
    m.insert("status".into(), Value::from(status));
    m.insert("reason".into(), reason.map_or(Value::Null, Value::from));
    Value::Object(m)
}
