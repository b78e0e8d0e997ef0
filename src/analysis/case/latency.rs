//! The latency block: each metric's quantiles with their sufficiency,
//! failure-penalized estimates and the unsuccessful requests.
use super::*;

pub(super) const ASSUMPTIONS: &str = "requests are independent and identically distributed, with continuous latencies; the dependence queueing creates between requests is not covered, and sufficiency is no precision in milliseconds";

/// One request's value of a latency metric: a number, or missing.
pub type MetricFn<'a> = dyn Fn(&Request) -> Option<f64> + Sync + 'a;

/// The `latency` block and what its pass found besides.
pub struct Latency<'k> {
    pub block: Value,
    /// Each metric's values of the successful requests, by key, with the
    /// order statistics the block read placed ([`request_figures`] reads
    /// its percentiles off them).
    pub sorted: Vec<(&'k str, Ordered)>,
    /// The unsuccessful requests counted by status (the block's
    /// `unsuccessful` counts).
    pub failed_by_status: BTreeMap<String, i64>,
}

/// `latency` (docs/report.md §4.7). `metrics`: (key, boundary, per-request value).
pub fn latency<'k>(reqs: &[&Request], metrics: &[(&'k str, &str, &MetricFn)]) -> Latency<'k> {
    use rayon::prelude::*;
    // One pass reads every metric's value of each successful request (a
    // request's fields are loaded once, not once per metric) and sets the
    // others aside; then each metric's sort and estimates run in parallel.
    let mut failures: Vec<&Request> = Vec::new();
    let mut values: Vec<(Vec<f64>, usize)> = metrics
        .iter()
        .map(|_| (Vec::with_capacity(reqs.len()), 0))
        .collect();
    for r in reqs {
        if !r.is_ok() {
            failures.push(r);
            continue;
        }
        for ((_, _, value_of), (list, missing)) in metrics.iter().zip(&mut values) {
            match value_of(r) {
                Some(v) => list.push(v),
                None => *missing += 1,
            }
        }
    }
    let blocks: Vec<(&str, Value, Ordered)> = metrics
        .par_iter()
        .zip(values)
        .map(|((key, boundary, _), (values, missing))| {
            // Only the ranks the block and the request figures read are
            // placed (a selection each), not every value sorted.
            let ranks = block_ranks(values.len(), missing, failures.len());
            let sorted = Ordered::new(values, ranks);
            let block = metric_block(&failures, key, boundary, &sorted, missing);
            (*key, block, sorted)
        })
        .collect();
    let mut out = Map::new();
    let mut sorted = Vec::with_capacity(blocks.len());
    for (key, block, values) in blocks {
        out.insert(key.to_owned(), block);
        sorted.push((key, values));
    }
    let (block, failed_by_status) = unsuccessful_block(&failures, out);
    Latency {
        block,
        sorted,
        failed_by_status,
    }
}

/// The levels of the block's quantiles.
const LEVELS: [(&str, f64); 4] = [("p50", 0.5), ("p90", 0.9), ("p95", 0.95), ("p99", 0.99)];

/// The ranks (0 the smallest) that [`metric_block`] and the request figures
/// (`finish_request_figures`: p50, p95, p99) read among `n` successful
/// values, with `missing` successful requests without one and `f` failures.
/// A rank left out here is still read right, only more slowly
/// ([`Ordered::at`]).
pub(super) fn block_ranks(n: usize, missing: usize, f: usize) -> Vec<usize> {
    let mut ranks = Vec::with_capacity(LEVELS.len() * 8);
    for (_, p) in LEVELS {
        ranks.extend(Ordered::percentile_ranks(n, p).into_iter().flatten());
        ranks.extend(sufficiency::interval_ranks(n, p, 0).into_iter().flatten());
        ranks.extend(sufficiency::interval_ranks(n, p, f).into_iter().flatten());
        if n > 0 {
            let level = p * (n + missing + f) as f64 / n as f64;
            if level <= 1.0 {
                ranks.extend(Ordered::percentile_ranks(n, level).into_iter().flatten());
            }
        }
    }
    ranks
}

/// One metric of the `latency` block (docs/report.md §4.7).
/// `sorted`: the metric's values of the successful requests, read by rank,
/// `missing` how many of them have none; `failures` the unsuccessful ones.
pub(super) fn metric_block(
    failures: &[&Request],
    key: &str,
    boundary: &str,
    sorted: &Ordered,
    missing: usize,
) -> Value {
    let f = failures.len();
    let timeouts: Option<Vec<f64>> = if key == "client.e2e" && f > 0 {
        failures
            .iter()
            .map(|r| {
                if r.status == "timeout" {
                    finite(r.e2e_latency_ms())
                } else {
                    None
                }
            })
            .collect()
    } else {
        None
    };
    let mut succ = Map::new();
    let mut pen = Map::new();
    let interval = |p: f64, penalized: usize| {
        sufficiency::interval_at(sorted.len(), |k| sorted.at(k), p, penalized)
    };
    for (name, p) in LEVELS {
        let nmin = sufficiency::n_min(p);
        let nexist = sufficiency::n_min_exists(p);
        let n = sorted.len();
        succ.insert(
                name.into(),
                json!({"value_ms": fnum(sorted.percentile(p)), "n": n, "sufficient": n >= nmin, "n_min": nmin,
                       "n_min_exists": nexist, "penalized": false, "observed_lower_bound_ms": null, "reason": null,
                       "interval": interval_json(interval(p, 0))}),
            );
        let np = n + missing + f;
        let est = if missing > 0 || (n == 0 && f == 0) {
            let reason = if missing > 0 {
                "successful_values_missing"
            } else {
                "no_values"
            };
            json!({"value_ms": null, "n": np, "sufficient": np >= nmin, "n_min": nmin, "n_min_exists": nexist,
                       "penalized": false, "observed_lower_bound_ms": null, "reason": reason, "interval": null})
        } else {
            let level = if n == 0 {
                f64::INFINITY
            } else {
                p * np as f64 / n as f64
            };
            let penalized = level > 1.0;
            let value = if penalized {
                Value::Null
            } else {
                fnum(sorted.percentile(level))
            };
            let bound = match (&timeouts, penalized) {
                (Some(extra), true) => {
                    let mut all: Vec<f64> = sorted.values().collect();
                    all.extend(extra.iter().copied());
                    let all = sort_floats(all);
                    fnum(percentile_sorted(&all, p))
                }
                _ => Value::Null,
            };
            json!({"value_ms": value, "n": np, "sufficient": np >= nmin, "n_min": nmin, "n_min_exists": nexist,
                       "penalized": penalized, "observed_lower_bound_ms": bound, "reason": null,
                       "interval": interval_json(interval(p, f))})
        };
        pen.insert(name.into(), est);
    }
    json!({"boundary": boundary, "successful_missing": missing, "successful": succ, "failure_penalized": pen})
}

/// The `unsuccessful` part of the `latency` block, and the block itself;
/// with the failures counted by status.
pub(super) fn unsuccessful_block(
    failures: &[&Request],
    out: Map<String, Value>,
) -> (Value, BTreeMap<String, i64>) {
    let mut unsucc: BTreeMap<String, Value> = BTreeMap::new();
    let mut counts: BTreeMap<String, i64> = BTreeMap::new();
    let mut by_status: BTreeMap<String, Vec<&Request>> = BTreeMap::new();
    for r in failures {
        by_status.entry(r.status.to_string()).or_default().push(r);
    }
    for (status, rs) in by_status {
        let mut elapsed = Vec::new();
        let mut missing = 0;
        for r in &rs {
            let v = finite(r.e2e_latency_ms()).or_else(|| match (r.started_at(), r.ended_at()) {
                (Some(s), Some(e)) if r.status != "dropped" && e >= s => span_ms_exact(&s, &e),
                _ => None,
            });
            match v {
                Some(v) => elapsed.push(v),
                None => missing += 1,
            }
        }
        let (min, max) = (min_of(&elapsed), max_of(&elapsed));
        let [p50] = pcts(elapsed, [50]);
        counts.insert(status.clone(), rs.len() as i64);
        unsucc.insert(
            status,
            json!({"count": rs.len(), "elapsed_ms": {"min": min, "p50": p50, "max": max},
                   "elapsed_missing": missing}),
        );
    }
    let block = json!({
        "rule": {"confidence": 0.95, "margin": 5, "tails": "symmetric", "assumptions": ASSUMPTIONS},
        "metrics": out,
        "unsuccessful": unsucc,
    });
    (block, counts)
}

pub(super) fn interval_json(i: Option<sufficiency::Interval>) -> Value {
    match i {
        None => Value::Null,
        Some(i) => {
            json!({"lower_rank": i.lower_rank, "upper_rank": i.upper_rank, "lower_ms": fnum(Some(i.lower_ms)),
                          "upper_ms": fnum(i.upper_ms), "width_ms": fnum(i.width_ms), "coverage": fnum(Some(i.coverage))})
        }
    }
}
