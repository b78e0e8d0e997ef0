//! Request-level figures: latency percentiles, throughput, tokens and
//! client-local memory of a case's successful requests.
use super::*;
use crate::py::IntSum;

/// `latency_ms`, `throughput`, `tokens`, `memory` (client-local) and `request_count` (docs/report.md §4.1).
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
    sorted: &[(&str, Ordered)],
    out: &mut Map<String, Value>,
) -> Option<(i64, i64)> {
    finish_request_figures(
        figures_pass(reqs),
        reqs,
        samples,
        rate_interval,
        sorted,
        out,
    )
}

/// What [`request_figures`] reads of the requests in one pass, and the
/// first-chunk percentiles: none of it needs the rate interval or the
/// latency block's sorts, so a report finds it beside them.
pub struct FiguresPass<'r> {
    n_ok: usize,
    finite_values: [usize; 3],
    first_chunk: [Value; 2],
    out_tokens: Int,
    total_tokens: Int,
    sources: Distinct<'r>,
    window: Option<(i64, i64)>,
}

/// The successful requests' pass of [`request_figures`].
pub fn figures_pass<'r>(reqs: &[&'r Request]) -> FiguresPass<'r> {
    // Everything these figures count and sum is read in one pass (see
    // `passes`).
    let mut n_ok = 0usize;
    let mut finite_values = [0usize; 3];
    let mut first_chunk: Vec<f64> = Vec::with_capacity(reqs.len());
    let (mut out_tokens, mut total_tokens) = (IntSum::default(), IntSum::default());
    let mut sources = Distinct::default();
    let mut window: Option<(i64, i64)> = None;
    for r in reqs.iter().filter(|r| r.is_ok()) {
        n_ok += 1;
        for (n, value) in
            finite_values
                .iter_mut()
                .zip([r.e2e_latency_ms(), r.ttft_ms(), from_intended(r)])
        {
            *n += usize::from(finite(value).is_some());
        }
        first_chunk.extend(finite(r.first_chunk_latency_ms()));
        out_tokens.take(r.output_tokens_term());
        total_tokens.take(r.total_tokens_term());
        sources.take(r.output_token_source.as_str());
        if let (Some(s), Some(e)) = (r.started_at_ns(), r.ended_at_ns()) {
            widen(&mut window, s, e);
        }
    }
    FiguresPass {
        n_ok,
        finite_values,
        first_chunk: pcts(first_chunk, [50, 95]),
        out_tokens: out_tokens.total(),
        total_tokens: total_tokens.total(),
        sources,
        window,
    }
}

/// `client.e2e_from_intended` of a request, as the figures read it.
fn from_intended(r: &Request) -> Option<f64> {
    if r.has_wide_times() {
        return span_ms_exact(&r.intended_at()?, &r.ended_at()?);
    }
    Some(span_ms(r.intended_at_ns()?, r.ended_at_ns()?))
}

/// [`request_figures`] from its pass over `reqs` ([`figures_pass`]).
pub fn finish_request_figures(
    pass: FiguresPass<'_>,
    reqs: &[&Request],
    samples: &[SystemSample],
    rate_interval: &Value,
    sorted: &[(&str, Ordered)],
    out: &mut Map<String, Value>,
) -> Option<(i64, i64)> {
    let FiguresPass {
        n_ok,
        finite_values,
        first_chunk: [first_p50, first_p95],
        out_tokens,
        total_tokens,
        sources,
        window,
    } = pass;
    let e2e = |r: &Request| r.e2e_latency_ms();
    let ttft = |r: &Request| r.ttft_ms();
    let ok = || reqs.iter().copied().filter(|r| r.is_ok());
    let figures =
        |key: &str, finite_values: usize, value: &dyn Fn(&Request) -> Option<f64>| match sorted
            .iter()
            .find(|(k, _)| *k == key)
        {
            Some((_, s)) if s.len() == finite_values => ordered_pcts(s, [50, 95, 99]),
            _ => pcts(nums_in(ok(), n_ok, value), [50, 95, 99]),
        };
    let [e2e_p50, e2e_p95, e2e_p99] = figures("client.e2e", finite_values[0], &e2e);
    let [ttft_p50, ttft_p95, ttft_p99] = figures("client.ttft", finite_values[1], &ttft);
    let [fi_p50, fi_p95, fi_p99] =
        figures("client.e2e_from_intended", finite_values[2], &from_intended);
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
