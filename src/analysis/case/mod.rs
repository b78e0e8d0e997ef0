//! The per-case blocks of the report (docs/report.md §4): request-level figures,
//! populations and intervals, arrivals, prompts, lengths, cache, latency
//! quantiles with sufficiency, and streaming. Pure functions of a run's records.
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use serde_json::{json, Map, Value};

use super::schedule;
use super::stats::{percentile_sorted, percentiles_of, sort_floats, Ordered};
use super::sufficiency;
use crate::model::request::{finite, span_ms, span_ms_exact};
use crate::model::{Request, RunData, Scalar, SystemSample};
use crate::py::json as pyjson;
use crate::py::Int;

mod blocks;
mod figures;
mod intervals;
mod latency;
mod population;
mod workload;

pub use blocks::*;
pub use figures::*;
pub use intervals::*;
pub use latency::*;
pub use population::*;
use workload::*;

/// A float, or null when absent or not finite.
pub fn fnum(v: Option<f64>) -> Value {
    match v {
        Some(x) if x.is_finite() => {
            serde_json::Number::from_f64(x).map_or(Value::Null, Value::Number)
        }
        _ => Value::Null,
    }
}

/// Percentiles `ps` (0-100) of values in any order, found in their own
/// buffer (take any minimum or maximum first).
fn pcts<const N: usize>(values: Vec<f64>, ps: [u32; N]) -> [Value; N] {
    let got = percentiles_of(values, &ps.map(|p| f64::from(p) / 100.0));
    std::array::from_fn(|i| fnum(got[i]))
}

/// Percentiles `ps` (0-100) of values read by rank.
fn ordered_pcts<const N: usize>(values: &Ordered, ps: [u32; N]) -> [Value; N] {
    ps.map(|p| fnum(values.percentile(f64::from(p) / 100.0)))
}

fn max_of(values: &[f64]) -> Value {
    fnum(values.iter().copied().reduce(f64::max))
}

fn min_of(values: &[f64]) -> Value {
    fnum(values.iter().copied().reduce(f64::min))
}

/// Widens `extent` (lowest, highest) to take in `lo..=hi`.
fn widen<T: PartialOrd>(extent: &mut Option<(T, T)>, lo: T, hi: T) {
    match extent {
        None => *extent = Some((lo, hi)),
        Some((a, b)) => {
            if lo < *a {
                *a = lo;
            }
            if hi > *b {
                *b = hi;
            }
        }
    }
}

/// The distinct words of a field as a pass reads them (an arrival mode, a
/// token source): one request after another mostly repeats the word before,
/// which is not looked up again.
#[derive(Default)]
struct Distinct<'r> {
    words: BTreeSet<&'r str>,
    last: Option<&'r str>,
}

impl<'r> Distinct<'r> {
    fn take(&mut self, word: &'r str) {
        if self.last != Some(word) {
            self.words.insert(word);
            self.last = Some(word);
        }
    }
}

/// `number_values` of some of a case's requests (at most `most` of them):
/// their finite values, in order.
fn nums_in<'r>(
    reqs: impl Iterator<Item = &'r Request>,
    most: usize,
    f: impl Fn(&Request) -> Option<f64>,
) -> Vec<f64> {
    // Sized once: collecting from a filter grows by doubling, which holds
    // up to twice the values at the last growth.
    let mut out = Vec::with_capacity(most);
    out.extend(reqs.filter_map(|r| finite(f(r))));
    out
}

/// The run-wide inputs every case reads.
pub struct RunContext<'a> {
    pub data: &'a RunData,
    /// Last measured phase window per case key.
    pub windows: HashMap<String, &'a Value>,
    /// Last cache state per case key.
    pub cache_states: HashMap<String, &'a Value>,
    /// The first `infer.workload` record.
    pub workload: Option<&'a Value>,
    /// Request ids the server confirmed (None = no source).
    pub admitted: Option<HashSet<String>>,
}

impl<'a> RunContext<'a> {
    pub fn new(data: &'a RunData, admitted: Option<HashSet<String>>) -> Self {
        let mut windows = HashMap::new();
        for w in data.of_type("infer.phase_window") {
            if pyjson::get(w, "phase").as_str() == Some("measured") {
                windows.insert(pyjson::str_form(pyjson::get(w, "case_id")), w);
            }
        }
        let mut cache_states = HashMap::new();
        for c in data.of_type("infer.cache_state") {
            cache_states.insert(pyjson::str_form(pyjson::get(c, "case_id")), c);
        }
        RunContext {
            data,
            windows,
            cache_states,
            workload: data.of_type("infer.workload").next(),
            admitted,
        }
    }
}

/// `int_value` of a number, exactly (a Python integer has no size).
fn ns_of(v: &Value) -> Option<Int> {
    if pyjson::is_number(v) {
        Some(crate::py::int::int_value(v))
    } else {
        None
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    //! The worked examples of docs/report.md §4.2.7 and §4.7, computed by hand.
    use super::*;

    const T: i64 = 1_700_000_000_000_000_000;

    /// Σ(count − 1) under Python equality: 1 == 1.0 == true, "1" is not 1,
    /// nulls do not count; a value repeated many times counts each repeat.
    #[test]
    fn duplicates_count_repeats_under_python_equality() {
        let vals = |v: Value| v.as_array().unwrap().clone();
        let count = |v: &[Value]| {
            let mut hashed = Hashed::with_capacity(v.len());
            v.iter().for_each(|v| hashed.push(v));
            hashed.duplicates(v.iter())
        };
        assert_eq!(count(&vals(json!([]))), 0);
        assert_eq!(count(&vals(json!(["a", "b", "c"]))), 0);
        assert_eq!(count(&vals(json!(["a", "b", "a", "a"]))), 2);
        assert_eq!(count(&vals(json!([1, 1.0, true, "1", null, null]))), 2);
        assert_eq!(count(&vals(json!([0, false, 0.0, -0.0]))), 3);
        let same: Vec<Value> = (0..10_000).map(|_| json!("x")).collect();
        assert_eq!(count(&same), 9_999);
        // Against a plain set, on ids with a few repeats among many.
        let ids: Vec<Value> = (0..20_000)
            .map(|i: u64| json!(format!("r{}", i.wrapping_mul(2654435761) % 19_000)))
            .collect();
        let distinct: std::collections::HashSet<String> =
            ids.iter().map(|v| v.as_str().unwrap().to_owned()).collect();
        assert_eq!(count(&ids), ids.len() - distinct.len());
    }

    fn req(v: Value) -> Request {
        Request::from_record(0, v.as_object().unwrap())
    }

    /// Closed-loop case c1: 4 ok (100..400 ms e2e) and a 600 ms timeout.
    fn c1() -> (RunData, Vec<Request>) {
        let mut reqs = Vec::new();
        for (i, e2e) in [100.0, 200.0, 300.0, 400.0].iter().enumerate() {
            let start = T + i as i64 * 250_000_000;
            reqs.push(req(
                json!({"case_id": "c1", "phase": "measured", "status": "ok", "request_index": i,
                "request_id": format!("c1_{i}"), "x_request_id": format!("x{i}"), "session_id": "s",
                "started_at_ns": start, "ended_at_ns": start + (*e2e as i64) * 1_000_000,
                "e2e_latency_ms": e2e, "output_tokens": 10, "total_tokens": 20}),
            ));
        }
        reqs.push(req(json!({"case_id": "c1", "phase": "measured", "status": "timeout", "request_index": 4,
            "request_id": "c1_4", "x_request_id": "x4", "session_id": "s",
            "started_at_ns": T + 1_000_000_000, "ended_at_ns": T + 1_600_000_000, "e2e_latency_ms": 600.0})));
        let window = json!({"event_type": "infer.phase_window", "phase": "measured", "case_id": "c1",
            "session_id": "s", "arrival_mode": "closed", "started_at_ns": T,
            "window_ended_at_ns": T + 1_600_000_000, "drained_at_ns": T + 1_600_000_000});
        let data = RunData {
            records: vec![(0, window)],
            ..Default::default()
        };
        (data, reqs)
    }

    #[test]
    fn closed_loop_intervals_throughput_and_population() {
        let (data, reqs) = c1();
        let refs: Vec<&Request> = reqs.iter().collect();
        let ctx = RunContext::new(&data, None);
        let pop = population(&ctx, "c1", &refs);
        let iv = &pop.intervals;
        assert_eq!(iv["rate"]["kind"], "measured_span");
        assert_eq!(iv["measured_span"]["seconds"], 1.6);
        assert_eq!(iv["dispatch_window"]["seconds"], 1.0);
        assert_eq!(iv["drain"]["seconds"], Value::Null);
        assert_eq!(iv["rate_reason"], Value::Null);
        let mut out = Map::new();
        request_figures(&refs, &[], &iv["rate"], &[], &mut out);
        assert_eq!(out["throughput"]["requests_per_second"], 2.5);
        assert_eq!(out["throughput"]["output_tokens_per_second"], 25.0);
        assert_eq!(out["throughput"]["total_tokens_per_second"], 50.0);
        let p = &pop.population;
        assert_eq!(
            (
                p["offered"].as_i64(),
                p["sent"].as_i64(),
                p["accepted"].as_i64()
            ),
            (Some(5), Some(5), Some(5))
        );
        assert_eq!(
            (
                p["successful"].as_i64(),
                p["timed_out"].as_i64(),
                p["censored"].as_i64()
            ),
            (Some(4), Some(1), Some(1))
        );
        assert_eq!(p["cohort_valid"], true);
        assert_eq!(p["issues"], json!([]));
        assert_eq!(p["scheduled"], Value::Null);
    }

    /// The request figures read their percentiles off the latency block's
    /// sorted values when those are the same values, and select them
    /// afresh when a negative value (finite, so a figure, but implausible,
    /// so not in the latency block) makes them differ: the same figures
    /// either way.
    #[test]
    fn the_latency_block_reads_only_the_ranks_it_placed() {
        // Failures: timeouts (the e2e bound reads them) and errors.
        let failures: Vec<Request> = (0..40)
            .map(|i| {
                req(
                    json!({"status": if i % 2 == 0 { "timeout" } else { "error" },
                           "e2e_latency_ms": 900.0 + f64::from(i)}),
                )
            })
            .collect();
        for n in [0usize, 1, 2, 5, 28, 29, 60, 299, 300, 1000, 4001] {
            for (missing, f) in [(0, 0), (0, 1), (0, 7), (3, 0), (0, 40)] {
                let fails: Vec<&Request> = failures.iter().take(f).collect();
                let values: Vec<f64> = (0..n).map(|i| ((i * 7919) % 1009) as f64 / 3.0).collect();
                for key in ["client.e2e", "client.ttft"] {
                    let before = crate::analysis::stats::UNPLACED_READS.with(|c| c.get());
                    let ranks = latency::block_ranks(n, missing, f);
                    let placed = Ordered::new(values.clone(), ranks);
                    let got = latency::metric_block(&fails, key, "client", &placed, missing);
                    for p in [50, 95, 99] {
                        let _ = ordered_pcts(&placed, [p]);
                    }
                    let reads = crate::analysis::stats::UNPLACED_READS.with(|c| c.get()) - before;
                    assert_eq!(reads, 0, "n {n}, missing {missing}, failures {f}, {key}");
                    let every = Ordered::new(values.clone(), 0..n);
                    let want = latency::metric_block(&fails, key, "client", &every, missing);
                    assert_eq!(got, want, "n {n}, missing {missing}, failures {f}, {key}");
                }
            }
        }
    }

    #[test]
    fn request_figures_read_off_the_latency_sorts_equal_selected_ones() {
        let metric = |key: &str| {
            let key = crate::slo::criteria::CriterionKey::from_key(key).unwrap();
            move |r: &Request| {
                let spans = crate::slo::Spans {
                    joined: &Default::default(),
                    quarantined: &Default::default(),
                };
                match crate::slo::measure_key(r, key, &spans) {
                    crate::slo::Measure::Value(v) => Some(v),
                    _ => None,
                }
            }
        };
        let (e2e, ttft, fi) = (
            metric("client.e2e"),
            metric("client.ttft"),
            metric("client.e2e_from_intended"),
        );
        let metrics: [(&str, &str, &MetricFn); 3] = [
            ("client.e2e", "client", &e2e),
            ("client.ttft", "client", &ttft),
            ("client.e2e_from_intended", "client", &fi),
        ];
        for negative in [false, true] {
            let reqs: Vec<Request> = (0..40)
                .map(|i: i64| {
                    let e2e = if negative && i == 7 { -3.0 } else { (i * 37 % 11) as f64 + 0.5 };
                    let intended = T + i * 1_000_000;
                    let ended = if negative && i == 9 { intended - 5 } else { intended + i * 3_000_000 };
                    req(json!({"case_id": "c", "phase": "measured", "status": if i % 5 == 4 { "error" } else { "ok" },
                        "e2e_latency_ms": e2e, "ttft_ms": (i % 13) as f64 / 4.0,
                        "intended_at_ns": intended, "started_at_ns": intended, "ended_at_ns": ended}))
                })
                .collect();
            let refs: Vec<&Request> = reqs.iter().collect();
            let sorted = latency(&refs, &metrics).sorted;
            let (mut read_off, mut selected) = (Map::new(), Map::new());
            request_figures(&refs, &[], &Value::Null, &sorted, &mut read_off);
            request_figures(&refs, &[], &Value::Null, &[], &mut selected);
            assert_eq!(read_off, selected, "negative: {negative}");
            let lat = &selected["latency_ms"];
            assert!(lat["e2e_p50"].as_f64().is_some());
            if negative {
                // The -3 ms request counts among the figures' values only.
                assert_eq!(sorted[0].1.len(), 31);
                assert_eq!(
                    lat["e2e_p50"],
                    json!(percentile_sorted(
                        &{
                            let mut v: Vec<f64> = refs
                                .iter()
                                .filter(|r| r.is_ok())
                                .filter_map(|r| r.e2e_latency_ms())
                                .collect();
                            v.sort_by(f64::total_cmp);
                            v
                        },
                        0.5
                    )
                    .unwrap())
                );
            }
        }
    }

    #[test]
    fn penalized_quantiles_and_the_observed_lower_bound() {
        let (_, reqs) = c1();
        let refs: Vec<&Request> = reqs.iter().collect();
        let e2e = |r: &Request| finite(r.e2e_latency_ms());
        let lat = latency(&refs, &[("client.e2e", "client", &e2e)]).block;
        let m = &lat["metrics"]["client.e2e"];
        assert_eq!(m["successful"]["p50"]["value_ms"], 250.0);
        assert_eq!(m["successful"]["p90"]["value_ms"], 370.0);
        assert_eq!(m["successful"]["p99"]["value_ms"], 396.99999999999994);
        assert_eq!(m["failure_penalized"]["p50"]["value_ms"], 287.5);
        assert_eq!(m["failure_penalized"]["p50"]["n"], 5);
        assert_eq!(m["failure_penalized"]["p90"]["penalized"], true);
        assert_eq!(m["failure_penalized"]["p90"]["value_ms"], Value::Null);
        assert_eq!(
            m["failure_penalized"]["p90"]["observed_lower_bound_ms"],
            520.0
        );
        assert_eq!(
            m["failure_penalized"]["p95"]["observed_lower_bound_ms"],
            560.0
        );
        assert_eq!(
            m["failure_penalized"]["p99"]["observed_lower_bound_ms"],
            592.0
        );
        let t = &lat["unsuccessful"]["timeout"];
        assert_eq!(t["count"], 1);
        assert_eq!(
            t["elapsed_ms"],
            json!({"min": 600.0, "p50": 600.0, "max": 600.0})
        );
    }

    /// Open-loop case o1: fixed rate 10/s, 5 scheduled, the 300 ms arrival dropped.
    fn o1(with_endpoint: bool, with_workload: bool, with_window: bool) -> (RunData, Vec<Request>) {
        let u = T;
        let mut reqs = Vec::new();
        for i in 0..5i64 {
            let intended = u + i * 100_000_000;
            let sent = intended + 1_000_000;
            let r = if i == 3 {
                json!({"case_id": "o1", "phase": "measured", "status": "dropped", "request_index": i,
                    "request_id": format!("o1_{i}"), "x_request_id": null, "session_id": "s", "arrival_mode": "fixed-rate",
                    "intended_at_ns": intended, "started_at_ns": sent, "ended_at_ns": sent})
            } else {
                json!({"case_id": "o1", "phase": "measured", "status": "ok", "request_index": i,
                    "request_id": format!("o1_{i}"), "x_request_id": format!("y{i}"), "session_id": "s",
                    "arrival_mode": "fixed-rate", "intended_at_ns": intended, "started_at_ns": sent,
                    "ended_at_ns": sent + 150_000_000, "e2e_latency_ms": 150.0, "output_tokens": 10, "total_tokens": 20,
                    "dispatch_lag_ms": 1.0})
            };
            reqs.push(req(r));
        }
        let mut window = json!({"event_type": "infer.phase_window", "phase": "measured", "case_id": "o1",
            "session_id": "s", "arrival_mode": "fixed-rate", "started_at_ns": u, "scheduled_arrivals": 5,
            "window_ended_at_ns": u + 400_000_001, "drained_at_ns": u + 551_000_000});
        if with_endpoint {
            window["scheduled_endpoint_offset_ns"] = json!(500_000_000);
        }
        let mut records = Vec::new();
        if with_window {
            records.push((0, window));
        }
        if with_workload {
            records.push((1, json!({"event_type": "infer.workload", "seed": 1,
                "cases": [{"case_id": "o1", "arrival": {"mode": "fixed-rate", "rate_per_second": 10}}],
                "measurement": {"request_count": 5}})));
        }
        let data = RunData {
            records,
            ..Default::default()
        };
        (data, reqs)
    }

    #[test]
    fn open_loop_scheduled_window() {
        let (data, reqs) = o1(true, true, true);
        let refs: Vec<&Request> = reqs.iter().collect();
        let ctx = RunContext::new(&data, None);
        let pop = population(&ctx, "o1", &refs);
        let iv = &pop.intervals;
        assert_eq!(iv["rate"]["kind"], "scheduled_window");
        assert_eq!(iv["rate"]["seconds"], 0.5);
        assert_eq!(iv["rate"]["numerator_cohort"], "arrival_cohort");
        assert_eq!(iv["measured_span"]["seconds"], 0.551);
        assert_eq!(iv["dispatch_window"]["started_at_ns"], T + 1_000_000);
        assert_eq!(iv["dispatch_window"]["ended_at_ns"], T + 401_000_000);
        assert_eq!(iv["dispatch_window"]["seconds"], 0.4);
        assert_eq!(iv["drain"]["seconds"], 0.150999999);
        assert_eq!(iv["configured_rate_per_second"], 10.0);
        assert_eq!(iv["realized_offered_rate_per_second"], 10.0);
        let mut out = Map::new();
        request_figures(&refs, &[], &iv["rate"], &[], &mut out);
        assert_eq!(out["throughput"]["requests_per_second"], 8.0);
        assert_eq!(out["throughput"]["output_tokens_per_second"], 80.0);
        let p = &pop.population;
        assert_eq!(
            [
                &p["offered"],
                &p["scheduled"],
                &p["dropped"],
                &p["sent"],
                &p["accepted"],
                &p["successful"]
            ],
            [
                &json!(5),
                &json!(5),
                &json!(1),
                &json!(4),
                &json!(4),
                &json!(4)
            ]
        );
    }

    #[test]
    fn open_loop_without_a_declared_endpoint() {
        let (data, reqs) = o1(false, false, true);
        let refs: Vec<&Request> = reqs.iter().collect();
        let pop = population(&RunContext::new(&data, None), "o1", &refs);
        assert_eq!(pop.intervals["rate"], Value::Null);
        assert_eq!(pop.intervals["rate_reason"], "endpoint_undeclared");
        assert_eq!(pop.intervals["measured_span"]["seconds"], 0.551);
    }

    #[test]
    fn missing_phase_window_with_a_workload() {
        let (data, reqs) = o1(false, true, false);
        let refs: Vec<&Request> = reqs.iter().collect();
        let pop = population(&RunContext::new(&data, None), "o1", &refs);
        assert_eq!(pop.intervals["rate_reason"], "phase_window_missing");
        assert_eq!(pop.intervals["measured_span"], Value::Null);
        assert_eq!(pop.population["issues"], json!(["phase_window_missing"]));
        assert_eq!(pop.population["cohort_valid"], false);
        // recomputed from the workload: fixed rate, request_count 5
        assert_eq!(pop.population["scheduled"], 5);
    }

    #[test]
    fn burst_endpoint_from_the_workload() {
        let (mut data, reqs) = o1(false, false, true);
        data.records.push((1, json!({"event_type": "infer.workload", "seed": 1,
            "cases": [{"case_id": "o1", "arrival": {"mode": "burst", "burst_size": 3, "burst_interval_seconds": 2.0}}],
            "measurement": {"request_count": 4}})));
        let refs: Vec<&Request> = reqs.iter().collect();
        let pop = population(&RunContext::new(&data, None), "o1", &refs);
        // arrivals at 0, 0, 0, 2 s: the next later offset is 4 s
        assert_eq!(pop.intervals["scheduled_window"]["seconds"], 4.0);
        assert_eq!(pop.intervals["configured_rate_per_second"], 1.5);
    }

    #[test]
    fn repeated_indexes_and_ids_are_hard_issues() {
        let mk = |i: i64| {
            req(
                json!({"case_id": "c", "phase": "measured", "status": "ok", "request_index": i,
                "request_id": format!("r{i}"), "x_request_id": format!("x{i}"), "session_id": "s",
                "started_at_ns": T, "ended_at_ns": T + 1}),
            )
        };
        let reqs = [mk(0), mk(1), mk(1)];
        let refs: Vec<&Request> = reqs.iter().collect();
        let data = RunData::default();
        let pop = population(&RunContext::new(&data, None), "c", &refs);
        assert_eq!(
            pop.population["issues"],
            json!([
                "duplicate_request_id: 1",
                "duplicate_x_request_id: 1",
                "request_index_repeated",
                "records_missing: 1 of 3"
            ])
        );
        assert_eq!(pop.population["cohort_valid"], false);
        // no window and no workload: a legacy artifact, rated over its requests' span
        assert_eq!(pop.intervals["rate_reason"], "no_phase_window");
        assert_eq!(pop.intervals["rate"]["kind"], "request_span");
    }

    #[test]
    fn streaming_example() {
        let reqs: Vec<Request> = (0..4)
            .map(|_| {
                req(json!({"status": "ok", "stream": true, "ttft_ms": 5.0, "chunk_interarrival_ms": [5, 6, 7],
                    "output_tokens": 10, "output_token_source": "server_usage"}))
            })
            .collect();
        let refs: Vec<&Request> = reqs.iter().collect();
        let [.., ("streaming", s)] = passes(&refs, None) else {
            panic!("the streaming block comes last");
        };
        assert_eq!(s["content_chunks_per_response"]["p50"], 4.0);
        assert_eq!(
            s["chunk_interarrival_ms"],
            json!({"p50": 6.0, "p95": 7.0, "max": 7.0, "n": 12})
        );
        assert_eq!(s["mean_tokens_per_chunk"], 2.5);
    }
}
