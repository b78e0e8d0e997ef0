//! The per-case blocks of the report (report.md §4): request-level figures,
//! populations and intervals, arrivals, prompts, lengths, cache, latency
//! quantiles with sufficiency, and streaming. Pure functions of a run's records.
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use serde_json::{json, Map, Value};

use super::schedule;
use super::stats::{percentile_sorted, percentiles_of, sort_floats};
use super::sufficiency;
use crate::model::request::{finite, span_ms, span_ms_exact};
use crate::model::{Request, RunData, Scalar, SystemSample};
use crate::py::Int;
use crate::pyjson;

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

/// Percentiles `ps` (0-100) of values already sorted ascending.
fn sorted_pcts<const N: usize>(sorted: &[f64], ps: [u32; N]) -> [Value; N] {
    ps.map(|p| fnum(percentile_sorted(sorted, f64::from(p) / 100.0)))
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

/// A measured interval (§4.2.4).
pub fn interval(kind: &str, start: &Int, end: &Int, cohort: &str) -> Value {
    let d = end.sub(start);
    let seconds = if d > Int::default() {
        fnum(d.to_f64().map(|d| d / 1e9))
    } else {
        Value::Null
    };
    json!({"kind": kind, "started_at_ns": start.to_json(), "ended_at_ns": end.to_json(), "seconds": seconds, "numerator_cohort": cohort})
}

fn rate(count: f64, interval: &Value) -> Value {
    match pyjson::get(interval, "seconds").as_f64() {
        Some(s) if s.is_finite() => fnum(Some(count / s)),
        _ => Value::Null,
    }
}

/// [`rate`] of an exact count (Python's `int / float`).
fn rate_of(count: &Int, interval: &Value) -> Value {
    match count.to_f64() {
        Some(c) => rate(c, interval),
        None => Value::Null,
    }
}

/// The workload's entry for a case, and its arrival spec.
fn workload_case<'a>(w: &'a Value, case_key: &str) -> Option<&'a Value> {
    pyjson::get(w, "cases")
        .as_array()?
        .iter()
        .find(|c| pyjson::get(c, "case_id").as_str() == Some(case_key))
}

fn workload_bounds(w: &Value) -> Option<(Option<i64>, Option<f64>)> {
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

fn seed_of(w: &Value) -> i64 {
    pyjson::int_value(pyjson::get(w, "seed"))
}

fn recomputed_scheduled(w: &Value, case_key: &str) -> Option<i64> {
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

fn recomputed_endpoint_ns(w: &Value, case_key: &str) -> Option<i64> {
    let entry = workload_case(w, case_key)?;
    let spec = schedule::spec_from_json(pyjson::get(entry, "arrival"))?;
    let (count, dur) = workload_bounds(w)?;
    let end = schedule::scheduled_endpoint(&spec, count, dur, seed_of(w))?;
    Some(super::stats::round_half_even(end * 1e9) as i64)
}

fn configured_rate(w: Option<&Value>, case_key: &str) -> Value {
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

/// One field's values, hashed as a pass reads them, to count those
/// occurring more than once: Σ(count − 1) (Python `==` on JSON values;
/// nulls do not count), the values less the distinct ones.
///
/// Only the hashes are kept and sorted. Ids are nearly always unique, so no
/// hash repeats and the count is 0 without another look at the values (a
/// case of 300,000 requests sorts 300,000 integers instead of filling a set
/// of 300,000 strings, a third of the time); values whose hash repeats are
/// read again and compared through a set.
struct Hashed {
    state: foldhash::fast::FixedState,
    hashes: Vec<u64>,
}

impl Hashed {
    fn with_capacity(n: usize) -> Self {
        Hashed {
            state: Default::default(),
            hashes: Vec::with_capacity(n),
        }
    }

    fn hash(&self, v: &Value) -> u64 {
        use std::hash::BuildHasher;
        self.state.hash_one(Key(v))
    }

    /// Takes one value (a null does not count).
    fn push(&mut self, v: &Value) {
        if !v.is_null() {
            self.hashes.push(self.hash(v));
        }
    }

    /// Σ(count − 1) over the values taken; `again` yields them once more,
    /// in any order (read only when a hash repeats).
    fn duplicates<'a>(mut self, again: impl Iterator<Item = &'a Value>) -> usize {
        self.hashes.sort_unstable();
        let repeated: Vec<u64> = self
            .hashes
            .chunk_by(|a, b| a == b)
            .filter(|g| g.len() > 1)
            .map(|g| g[0])
            .collect();
        if repeated.is_empty() {
            return 0;
        }
        let mut groups: Vec<(u64, Key)> = again
            .filter(|v| !v.is_null())
            .filter_map(|v| {
                let h = self.hash(v);
                repeated.binary_search(&h).is_ok().then_some((h, Key(v)))
            })
            .collect();
        groups.sort_unstable_by_key(|(h, _)| *h);
        let mut dup = 0;
        let mut seen: HashSet<&Key, foldhash::fast::FixedState> = Default::default();
        for group in groups.chunk_by(|a, b| a.0 == b.0) {
            seen.clear();
            seen.extend(group.iter().map(|(_, v)| v));
            dup += group.len() - seen.len();
        }
        dup
    }
}

/// A value compared with Python equality for scalars (1 == 1.0 == True);
/// one pointer wide, so the set of a large case's ids stays small.
struct Key<'a>(&'a Value);

impl Key<'_> {
    fn text(&self) -> std::borrow::Cow<'_, str> {
        match self.0 {
            Value::String(s) => std::borrow::Cow::Borrowed(s),
            other => std::borrow::Cow::Owned(crate::model::request::canonical(other)),
        }
    }
}

impl PartialEq for Key<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.0.is_string() == other.0.is_string() && self.text() == other.text()
    }
}

impl Eq for Key<'_> {}

impl std::hash::Hash for Key<'_> {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        self.0.is_string().hash(h);
        self.text().hash(h);
    }
}

/// Populations, cohort issues and intervals of one case (§4.2).
pub struct Population {
    pub population: Value,
    pub intervals: Value,
}

pub fn population(ctx: &RunContext, case_key: &str, reqs: &[&Request]) -> Population {
    let window = ctx.windows.get(case_key).copied();
    let w = ctx.workload;
    let w_start = window.and_then(|wn| ns_of(pyjson::get(wn, "started_at_ns")));
    let w_drained = window.and_then(|wn| ns_of(pyjson::get(wn, "drained_at_ns")));
    // A request may end up to a second after the drain.
    let w_late = w_drained
        .as_ref()
        .map(|wd| wd.add(&Int::from(1_000_000_000i64)));
    // One pass over the requests (see `passes`): statuses, ids, indexes,
    // sessions, times.
    let mut n = [0usize; 8];
    let mut other: BTreeMap<String, i64> = BTreeMap::new();
    let mut ids = Hashed::with_capacity(reqs.len());
    let mut x_ids = Hashed::with_capacity(reqs.len());
    let mut idx: Vec<i64> = Vec::with_capacity(reqs.len());
    let mut index_unrecorded = false;
    let first_session = reqs.first().map(|r| &r.session_id);
    let mut mismatch = false;
    let mut outside = 0usize;
    let mut extents = Extents::default();
    for r in reqs {
        let slot = match r.status.as_str() {
            "ok" => Some(0),
            "error" => Some(1),
            "timeout" => Some(2),
            "cancelled" => Some(3),
            "rejected" => Some(4),
            "dropped" => Some(5),
            "unreachable" => Some(6),
            "delivery_unknown" => Some(7),
            s => {
                *other.entry(s.to_owned()).or_insert(0) += 1;
                None
            }
        };
        if let Some(slot) = slot {
            n[slot] += 1;
        }
        ids.push(&r.request_id);
        x_ids.push(&r.x_request_id);
        match r.request_index() {
            Some(i) => idx.push(i),
            None => index_unrecorded |= !r.request_index_is_bool,
        }
        mismatch |= Some(&r.session_id) != first_session;
        let (started, ended) = (r.started_at(), r.ended_at());
        outside += usize::from(match (&started, &ended) {
            (Some(s), Some(e)) => {
                s > e
                    || w_start.as_ref().is_some_and(|ws| s < ws)
                    || w_late.as_ref().is_some_and(|late| e > late)
            }
            _ => true,
        });
        if let (Some(s), false) = (&started, slot == Some(5)) {
            widen(&mut extents.sends, s.clone(), s.clone());
        }
        if let (Some(s), Some(e)) = (started, ended) {
            widen(&mut extents.spans, s, e);
        }
    }
    let [successful, failed, timed_out, cancelled, rejected, dropped, unreachable, delivery_unknown] =
        n;
    let offered = reqs.len();
    let sent = offered - dropped;
    let accepted = sent as i64 - unreachable as i64 - delivery_unknown as i64 - rejected as i64;
    let scheduled: Option<i64> = match window {
        Some(wn) => {
            let v = pyjson::get(wn, "scheduled_arrivals");
            if pyjson::is_number(v) {
                Some(pyjson::int_value(v))
            } else {
                None
            }
        }
        None => w.and_then(|w| recomputed_scheduled(w, case_key)),
    };
    // Hard issues.
    let mut issues: Vec<String> = Vec::new();
    let d = ids.duplicates(reqs.iter().map(|r| &r.request_id));
    if d > 0 {
        issues.push(format!("duplicate_request_id: {d}"));
    }
    let d = x_ids.duplicates(reqs.iter().map(|r| &r.x_request_id));
    if d > 0 {
        issues.push(format!("duplicate_x_request_id: {d}"));
    }
    if idx.len() != reqs.len() {
        if let Some(s) = scheduled {
            if s != reqs.len() as i64 {
                issues.push(format!(
                    "offered_differs_from_scheduled: {} of {s}",
                    reqs.len()
                ));
            }
        }
    } else {
        let e = scheduled.unwrap_or(reqs.len() as i64);
        // Sorted and deduplicated in place: the distinct indexes.
        let recorded = idx.len();
        idx.sort_unstable();
        idx.dedup();
        if idx.len() != recorded {
            issues.push("request_index_repeated".into());
        }
        let inside = idx.iter().filter(|i| **i >= 0 && **i < e).count() as i64;
        let missing = e - inside;
        if missing > 0 {
            issues.push(format!("records_missing: {missing} of {e}"));
        }
        if idx.iter().any(|i| *i < 0 || *i >= e) {
            issues.push("request_index_out_of_range".into());
        }
    }
    if let Some(wn) = window {
        let w = crate::model::Scalar::of(pyjson::get(wn, "session_id"));
        mismatch |= first_session.is_some_and(|f| *f != w);
    }
    if mismatch {
        issues.push("session_mismatch".into());
    }
    if outside > 0 {
        issues.push(format!("outside_window: {outside}"));
    }
    match window {
        None if w.is_some() => issues.push("phase_window_missing".into()),
        Some(_) if w_start.is_none() || w_drained.is_none() => {
            issues.push("phase_window_incomplete".into())
        }
        _ => {}
    }
    let cohort_valid = issues.is_empty();
    if index_unrecorded {
        issues.push("request_index_unrecorded".into());
    }
    if let Some(wn) = window {
        let n = pyjson::int_value(pyjson::get(
            pyjson::get(wn, "abandoned_requests"),
            "still_running",
        ));
        if n != 0 {
            issues.push(format!("abandoned_requests_at_start: {n}"));
        }
    }
    let (server_admitted, coverage) = server_admission(reqs, accepted, ctx.admitted.as_ref());
    let population = json!({
        "offered": offered, "scheduled": scheduled, "dropped": dropped, "sent": sent,
        "unreachable": unreachable, "delivery_unknown": delivery_unknown, "rejected": rejected,
        "accepted": accepted, "successful": successful, "failed": failed, "timed_out": timed_out,
        "cancelled": cancelled, "censored": timed_out + cancelled, "other": other,
        "server_admitted": server_admitted, "server_evidence_coverage": coverage,
        "cohort_valid": cohort_valid, "issues": issues,
    });
    let intervals = intervals(ctx, case_key, reqs.len(), extents, window, scheduled);
    Population {
        population,
        intervals,
    }
}

/// Server admission (§4.2.5): the requests the server confirmed it saw (not
/// dropped, their `x_request_id` among `admitted`), and the share of the
/// `accepted` ones among them; both null without any source.
pub fn server_admission(
    reqs: &[&Request],
    accepted: i64,
    admitted: Option<&HashSet<String>>,
) -> (Value, Value) {
    let Some(adm) = admitted else {
        return (Value::Null, Value::Null);
    };
    let seen: Vec<&&Request> = reqs
        .iter()
        .filter(|r| {
            r.status != "dropped" && r.x_request_id.as_str().is_some_and(|x| adm.contains(x))
        })
        .collect();
    let good = seen
        .iter()
        .filter(|r| {
            !matches!(
                r.status.as_str(),
                "dropped" | "unreachable" | "delivery_unknown" | "rejected"
            )
        })
        .count();
    let cov = if accepted == 0 {
        Value::Null
    } else {
        fnum(Some(good as f64 / accepted as f64))
    };
    (json!(seen.len()), cov)
}

/// The first and last times of a case's requests, read in the population's
/// pass.
#[derive(Default, Clone)]
struct Extents {
    /// Earliest start and latest end of the requests with both.
    spans: Option<(Int, Int)>,
    /// Earliest and latest start of the requests sent (not dropped).
    sends: Option<(Int, Int)>,
}

fn intervals(
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

/// `latency_ms`, `throughput`, `tokens`, `memory` (client-local) and `request_count` (§4.1).
/// Returns the window of the successful requests (first start, last end),
/// which the memory figures cover and the server join places the case by.
///
/// `sorted`: the latency block's sorted values per metric key
/// ([`latency`]). Its `client.e2e`, `client.ttft` and
/// `client.e2e_from_intended` hold the plausible (finite, not negative)
/// values of the same successful requests these figures read, where these
/// read every finite one: when the counts agree no value was negative, the
/// two are the same values, and the percentiles are read off the sorted
/// ones instead of being selected again.
pub fn request_figures(
    reqs: &[&Request],
    samples: &[SystemSample],
    rate_interval: &Value,
    sorted: &[(&str, Vec<f64>)],
    out: &mut Map<String, Value>,
) -> Option<(i64, i64)> {
    // Everything these figures count and sum is read in one pass (see
    // `passes`).
    let e2e = |r: &Request| r.e2e_latency_ms();
    let ttft = |r: &Request| r.ttft_ms();
    let from_intended = |r: &Request| {
        if r.has_wide_times() {
            return span_ms_exact(&r.intended_at()?, &r.ended_at()?);
        }
        Some(span_ms(r.intended_at_ns()?, r.ended_at_ns()?))
    };
    let mut n_ok = 0usize;
    let mut finite_values = [0usize; 3];
    let mut first_chunk: Vec<f64> = Vec::with_capacity(reqs.len());
    let (mut out_tokens, mut total_tokens) = (Int::default(), Int::default());
    let mut sources = Distinct::default();
    let mut window: Option<(i64, i64)> = None;
    for r in reqs.iter().filter(|r| r.is_ok()) {
        n_ok += 1;
        for (n, value) in finite_values
            .iter_mut()
            .zip([e2e(r), ttft(r), from_intended(r)])
        {
            *n += usize::from(finite(value).is_some());
        }
        first_chunk.extend(finite(r.first_chunk_latency_ms()));
        out_tokens = out_tokens.add(&r.output_tokens_int());
        total_tokens = total_tokens.add(&r.total_tokens_int());
        sources.take(r.output_token_source.as_str());
        if let (Some(s), Some(e)) = (r.started_at_ns(), r.ended_at_ns()) {
            widen(&mut window, s, e);
        }
    }
    let ok = || reqs.iter().copied().filter(|r| r.is_ok());
    let figures =
        |key: &str, finite_values: usize, value: &dyn Fn(&Request) -> Option<f64>| match sorted
            .iter()
            .find(|(k, _)| *k == key)
        {
            Some((_, s)) if s.len() == finite_values => sorted_pcts(s, [50, 95, 99]),
            _ => pcts(nums_in(ok(), n_ok, value), [50, 95, 99]),
        };
    let [e2e_p50, e2e_p95, e2e_p99] = figures("client.e2e", finite_values[0], &e2e);
    let [ttft_p50, ttft_p95, ttft_p99] = figures("client.ttft", finite_values[1], &ttft);
    let [fi_p50, fi_p95, fi_p99] =
        figures("client.e2e_from_intended", finite_values[2], &from_intended);
    let [first_p50, first_p95] = pcts(first_chunk, [50, 95]);
    out.insert("request_count".into(), json!(n_ok));
    out.insert(
        "latency_ms".into(),
        json!({
            "e2e_p50": e2e_p50, "e2e_p95": e2e_p95, "e2e_p99": e2e_p99,
            "e2e_from_intended_p50": fi_p50, "e2e_from_intended_p95": fi_p95,
            "e2e_from_intended_p99": fi_p99,
            "ttft_p50": ttft_p50, "ttft_p95": ttft_p95, "ttft_p99": ttft_p99,
            "first_chunk_p50": first_p50, "first_chunk_p95": first_p95,
        }),
    );
    out.insert(
        "throughput".into(),
        throughput(n_ok, &out_tokens, &total_tokens, rate_interval),
    );
    out.insert("tokens".into(), json!({"output_tokens": out_tokens.to_json(), "total_tokens": total_tokens.to_json(), "output_token_sources": sources.words}));
    let (mut dev, mut rss): (Option<i64>, Option<i64>) = (None, None);
    if let Some((lo, hi)) = window {
        for s in samples {
            if let Some(t) = s.timestamp_ns {
                if lo <= t && t <= hi {
                    if let Some(v) = s.device_used_bytes {
                        dev = Some(dev.map_or(v, |d| d.max(v)));
                    }
                    if let Some(v) = s.process_rss_bytes {
                        rss = Some(rss.map_or(v, |d| d.max(v)));
                    }
                }
            }
        }
    }
    out.insert(
        "memory".into(),
        json!({"observation_scope": "client_local", "peak_device_used_bytes": dev, "peak_process_rss_bytes": rss,
               "server_observations": {}, "server_coverage": {"status": "not_joined"}}),
    );
    window
}

/// The `throughput` block: successful requests and their tokens per second
/// of the rate interval (null rates when it has no length, or is null).
pub fn throughput(
    ok: usize,
    output_tokens: &Int,
    total_tokens: &Int,
    rate_interval: &Value,
) -> Value {
    let seconds = pyjson::get(rate_interval, "seconds");
    json!({
        "interval_seconds": if rate_interval.is_null() { Value::Null } else { seconds.clone() },
        "interval_kind": pyjson::get(rate_interval, "kind"),
        "numerator_cohort": pyjson::get(rate_interval, "numerator_cohort"),
        "requests_per_second": rate(ok as f64, rate_interval),
        "output_tokens_per_second": rate_of(output_tokens, rate_interval),
        "total_tokens_per_second": rate_of(total_tokens, rate_interval),
    })
}

/// The arrival, prompt, length and streaming blocks of a case (§4.3-§4.5,
/// §4.8), read in one pass over its requests: a pass over a large case
/// costs more in memory traffic (each request is a few hundred bytes) than
/// in arithmetic.
pub fn passes(reqs: &[&Request], window: Option<&Value>) -> [(&'static str, Value); 4] {
    let (mut a, mut p, mut l, mut s) = (
        Arrivals::new(reqs.len()),
        Prompts::default(),
        Lengths::new(reqs.len()),
        Streaming::new(reqs.len()),
    );
    for r in reqs {
        a.take(r);
        p.take(r);
        l.take(r);
        s.take(r);
    }
    [
        ("arrivals", a.finish(reqs.len(), window)),
        ("prompts", p.finish(window)),
        ("lengths", l.finish()),
        ("streaming", s.finish()),
    ]
}

/// `arrivals` (§4.3), as its requests are read.
struct Arrivals<'r> {
    modes: Distinct<'r>,
    dropped: usize,
    completed: usize,
    held: usize,
    failed: BTreeMap<String, i64>,
    peak: Option<Int>,
    /// The count of intended times, and the earliest and latest.
    intended: usize,
    intended_span: Option<(Int, Int)>,
    lag: Vec<f64>,
}

impl<'r> Arrivals<'r> {
    fn new(n: usize) -> Self {
        Arrivals {
            modes: Distinct::default(),
            dropped: 0,
            completed: 0,
            held: 0,
            failed: BTreeMap::new(),
            peak: None,
            intended: 0,
            intended_span: None,
            lag: Vec::with_capacity(n),
        }
    }

    fn take(&mut self, r: &'r Request) {
        self.modes.take(r.arrival_mode.as_str());
        match r.status.as_str() {
            "dropped" => self.dropped += 1,
            status => {
                if status == "ok" {
                    self.completed += 1;
                } else {
                    *self.failed.entry(status.to_owned()).or_insert(0) += 1;
                }
                self.held += usize::from(r.held_for_slot);
            }
        }
        if let Some(x) = r.in_flight_int() {
            self.peak = Some(match self.peak.take() {
                Some(p) => p.max(x),
                None => x,
            });
        }
        if let Some(t) = r.intended_at() {
            self.intended += 1;
            widen(&mut self.intended_span, t.clone(), t);
        }
        self.lag.extend(finite(r.dispatch_lag_ms()));
    }

    fn finish(self, offered: usize, window: Option<&Value>) -> Value {
        let Arrivals {
            modes,
            dropped,
            completed,
            held,
            failed,
            peak,
            intended,
            intended_span,
            lag,
        } = self;
        let mode = if modes.words.len() == 1 {
            modes
                .words
                .iter()
                .next()
                .copied()
                .unwrap_or("closed")
                .to_owned()
        } else {
            "mixed".to_owned()
        };
        let offered_rate = match intended_span {
            Some((first, last)) if mode != "closed" && intended >= 2 && first != last => {
                let span = last.sub(&first).to_f64();
                fnum(span.map(|span| (intended - 1) as f64 / (span / 1e9)))
            }
            _ => Value::Null,
        };
        let lag_max = max_of(&lag);
        let [lag_p50, lag_p95] = pcts(lag, [50, 95]);
        let (window_s, drain_s) = match window {
            Some(wn) => match (
                ns_of(pyjson::get(wn, "started_at_ns")),
                ns_of(pyjson::get(wn, "window_ended_at_ns")),
                ns_of(pyjson::get(wn, "drained_at_ns")),
            ) {
                (Some(s), Some(we), Some(d)) => {
                    let seconds = |d: Int| fnum(d.max(Int::default()).to_f64().map(|d| d / 1e9));
                    (seconds(we.sub(&s)), seconds(d.sub(&we)))
                }
                _ => (Value::Null, Value::Null),
            },
            None => (Value::Null, Value::Null),
        };
        json!({
            "mode": mode, "offered": offered, "sent": offered - dropped,
            "completed": completed, "dropped": dropped, "failed": failed,
            "held_for_slot": held, "peak_in_flight": peak.map(|p| p.to_json()), "offered_rate_per_second": offered_rate,
            "dispatch_lag_ms": {"p50": lag_p50, "p95": lag_p95, "max": lag_max},
            "window_seconds": window_s, "drain_seconds": drain_s,
        })
    }
}

/// `prompts` (§4.4), as its requests are read. A prompt repeats request
/// after request (`repeat` mode): runs of one value are collapsed as they
/// are read, before the sort that finds the distinct ones.
#[derive(Default)]
struct Prompts<'r> {
    modes: Distinct<'r>,
    digests: Vec<&'r Scalar>,
    groups: Vec<&'r Scalar>,
    /// The fewest and most shared prefix tokens.
    shared: Option<(f64, f64)>,
}

impl<'r> Prompts<'r> {
    fn take(&mut self, r: &'r Request) {
        if r.status == "dropped" {
            return;
        }
        self.modes.take(r.prompt_mode.as_str());
        for (keys, v) in [
            (&mut self.digests, &r.prompt_digest),
            (&mut self.groups, &r.prefix_group),
        ] {
            if !v.is_null() && keys.last() != Some(&v) {
                keys.push(v);
            }
        }
        if let Some(x) = finite(r.shared_prefix_tokens()) {
            widen(&mut self.shared, x, x);
        }
    }

    fn finish(self, window: Option<&Value>) -> Value {
        let mode = match self.modes.words.len() {
            0 => Value::Null,
            1 => json!(self.modes.words.iter().next()),
            _ => json!("mixed"),
        };
        let distinct = |mut keys: Vec<&Scalar>| {
            keys.sort_unstable();
            keys.dedup();
            match keys.len() {
                0 => Value::Null,
                n => json!(n),
            }
        };
        json!({
            "mode": mode,
            "distinct_prompts": distinct(self.digests),
            "prefix_groups_used": distinct(self.groups),
            "shared_prefix_tokens": {"min": fnum(self.shared.map(|s| s.0)), "max": fnum(self.shared.map(|s| s.1))},
            "prompts_digest": window.map_or(Value::Null, |w| pyjson::get(w, "prompts_digest").clone()),
        })
    }
}

/// `lengths` (§4.5), as its requests are read.
struct Lengths {
    prompt: Vec<f64>,
    output: Vec<f64>,
}

impl Lengths {
    fn new(n: usize) -> Self {
        Lengths {
            prompt: Vec::with_capacity(n),
            output: Vec::with_capacity(n),
        }
    }

    fn take(&mut self, r: &Request) {
        if r.is_ok() {
            self.prompt.extend(finite(r.prompt_tokens()));
            self.output.extend(finite(r.output_tokens()));
        }
    }

    fn finish(self) -> Value {
        let d = |v: Vec<f64>| {
            let (min, max) = (min_of(&v), max_of(&v));
            let [p50, p95] = pcts(v, [50, 95]);
            json!({"min": min, "p50": p50, "p95": p95, "max": max})
        };
        json!({"prompt_tokens": d(self.prompt), "output_tokens": d(self.output)})
    }
}

/// `cache` (§4.6).
pub fn cache(record: Option<&Value>) -> Value {
    match record {
        None => {
            json!({"requested": "unspecified", "reset": null, "attempted": null, "acknowledged": null,
                       "verified": "unverified", "reason": "the artifact does not record a cache state", "run_kind": null})
        }
        Some(r) => {
            let mut m = Map::new();
            for k in [
                "requested",
                "reset",
                "attempted",
                "acknowledged",
                "verified",
                "reason",
                "run_kind",
            ] {
                m.insert(k.into(), pyjson::get(r, k).clone());
            }
            Value::Object(m)
        }
    }
}

/// `streaming` (§4.8), as its requests are read.
struct Streaming {
    chunks: Vec<f64>,
    gaps: Vec<f64>,
    /// Whether any streamed response's tokens are the server's count, their
    /// sum and the sum of their chunks.
    usage: (bool, Int, usize),
}

/// Whether a request counts towards the tokens per chunk (the reference's
/// streamed responses whose count is the server's).
fn counts_tokens_per_chunk(r: &Request) -> bool {
    r.is_ok()
        && r.stream
        && finite(r.ttft_ms()).is_some()
        && r.output_token_source == "server_usage"
}

/// Python's error, if the reference's tokens per chunk of these requests
/// (one case's) cannot convert a request's `output_tokens` to an integer.
pub fn tokens_per_chunk_inputs(reqs: &[&Request]) -> Result<(), String> {
    for r in reqs.iter().filter(|r| counts_tokens_per_chunk(r)) {
        r.output_tokens_call()?;
    }
    Ok(())
}

impl Streaming {
    fn new(n: usize) -> Self {
        Streaming {
            chunks: Vec::with_capacity(n),
            gaps: Vec::new(),
            usage: (false, Int::default(), 0),
        }
    }

    fn take(&mut self, r: &Request) {
        if !(r.is_ok() && r.stream && finite(r.ttft_ms()).is_some()) {
            return;
        }
        let before = self.gaps.len();
        self.gaps
            .extend(r.chunk_gaps.iter().copied().filter(|g| g.is_finite()));
        self.chunks.push((self.gaps.len() - before + 1) as f64);
        if r.output_token_source == "server_usage" {
            // A value Python cannot convert stopped the report before this
            // pass (`tokens_per_chunk_inputs`).
            let tokens = self
                .usage
                .1
                .add(&r.output_tokens_call().unwrap_or_default());
            self.usage = (true, tokens, self.usage.2 + r.chunk_list_len as usize + 1);
        }
    }

    fn finish(self) -> Value {
        let Streaming {
            chunks,
            gaps,
            usage,
        } = self;
        let responses = chunks.len();
        let (chunks_max, gaps_max, gaps_n) = (max_of(&chunks), max_of(&gaps), gaps.len());
        let [chunks_p50, chunks_p95] = pcts(chunks, [50, 95]);
        let [gaps_p50, gaps_p95] = pcts(gaps, [50, 95]);
        let mean_tokens = match usage {
            (true, tokens, chunks) => fnum(tokens.true_div(chunks as u64)),
            _ => Value::Null,
        };
        json!({
            "granularity": "chunk", "responses": responses,
            "content_chunks_per_response": {"p50": chunks_p50, "p95": chunks_p95, "max": chunks_max},
            "chunk_interarrival_ms": {"p50": gaps_p50, "p95": gaps_p95, "max": gaps_max, "n": gaps_n},
            "mean_tokens_per_chunk": mean_tokens,
            "note": "chunk-level timing: a streamed chunk can carry several tokens, so these are not inter-token latencies",
        })
    }
}

const ASSUMPTIONS: &str = "requests are independent and identically distributed, with continuous latencies; the dependence queueing creates between requests is not covered, and sufficiency is no precision in milliseconds";

/// One request's value of a latency metric: a number, or missing.
pub type MetricFn<'a> = dyn Fn(&Request) -> Option<f64> + Sync + 'a;

/// The `latency` block and what its pass found besides.
pub struct Latency<'k> {
    pub block: Value,
    /// Each metric's sorted values of the successful requests, by key
    /// ([`request_figures`] reads its percentiles off them).
    pub sorted: Vec<(&'k str, Vec<f64>)>,
    /// The unsuccessful requests counted by status (the block's
    /// `unsuccessful` counts).
    pub failed_by_status: BTreeMap<String, i64>,
}

/// `latency` (§4.7). `metrics`: (key, boundary, per-request value).
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
    let blocks: Vec<(&str, Value, Vec<f64>)> = metrics
        .par_iter()
        .zip(values)
        .map(|((key, boundary, _), (values, missing))| {
            let sorted = sort_floats(values);
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

/// One metric of the `latency` block (report.md §4.7).
/// `sorted`: the metric's values of the successful requests, ascending,
/// `missing` how many of them have none; `failures` the unsuccessful ones.
fn metric_block(
    failures: &[&Request],
    key: &str,
    boundary: &str,
    sorted: &[f64],
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
    for (name, p) in [("p50", 0.5), ("p90", 0.9), ("p95", 0.95), ("p99", 0.99)] {
        let nmin = sufficiency::n_min(p);
        let nexist = sufficiency::n_min_exists(p);
        let n = sorted.len();
        succ.insert(
                name.into(),
                json!({"value_ms": fnum(percentile_sorted(sorted, p)), "n": n, "sufficient": n >= nmin, "n_min": nmin,
                       "n_min_exists": nexist, "penalized": false, "observed_lower_bound_ms": null, "reason": null,
                       "interval": interval_json(sufficiency::interval(sorted, p, 0))}),
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
                fnum(percentile_sorted(sorted, level))
            };
            let bound = match (&timeouts, penalized) {
                (Some(extra), true) => {
                    let mut all = sorted.to_vec();
                    all.extend(extra.iter().copied());
                    let all = sort_floats(all);
                    fnum(percentile_sorted(&all, p))
                }
                _ => Value::Null,
            };
            json!({"value_ms": value, "n": np, "sufficient": np >= nmin, "n_min": nmin, "n_min_exists": nexist,
                       "penalized": penalized, "observed_lower_bound_ms": bound, "reason": null,
                       "interval": interval_json(sufficiency::interval(sorted, p, f))})
        };
        pen.insert(name.into(), est);
    }
    json!({"boundary": boundary, "successful_missing": missing, "successful": succ, "failure_penalized": pen})
}

/// The `unsuccessful` part of the `latency` block, and the block itself;
/// with the failures counted by status.
fn unsuccessful_block(
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

fn interval_json(i: Option<sufficiency::Interval>) -> Value {
    match i {
        None => Value::Null,
        Some(i) => {
            json!({"lower_rank": i.lower_rank, "upper_rank": i.upper_rank, "lower_ms": fnum(Some(i.lower_ms)),
                          "upper_ms": fnum(i.upper_ms), "width_ms": fnum(i.width_ms), "coverage": fnum(Some(i.coverage))})
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    //! The worked examples of report.md §4.2.7 and §4.7, computed by hand.
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
