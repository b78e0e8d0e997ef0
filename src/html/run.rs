//! A run's page: identity, per-case latency CDFs with percentiles and SLO
//! thresholds, the case table, arrivals and in-flight over time, latency
//! against offered load across cases, and server memory on the client clock.
//! Everything is drawn from the report's figures and from series binned
//! here (at most [`CDF_POINTS`] points per CDF, [`TIME_BINS`] bins per time
//! series), so the page's size does not grow with the request count.
use serde::Serialize;
use serde_json::Value;

use super::svg::{fmt_num, Plot};
use super::{Chart, Table};
use crate::join::ServerSample;
use crate::model::{Request, RunData};
use crate::py::json as pyjson;
use crate::report::judge::CaseJudgement;
use crate::report::Report;
use crate::slo::answers::{Curve, Sweep};

/// Points of a drawn CDF (quantiles at even steps).
pub const CDF_POINTS: usize = 200;
/// Bins of a time series.
pub const TIME_BINS: usize = 120;

const METRICS: [(&str, &str, &str); 3] = [
    ("client.ttft", "ttft", "TTFT"),
    ("client.tpot", "tpot", "TPOT"),
    ("client.e2e", "e2e", "E2E latency"),
];

/// One run, ready for the templates.
#[derive(Debug, Clone, Serialize)]
pub struct RunView {
    pub run_id: String,
    pub anchor: String,
    pub identity: Vec<(String, String)>,
    pub notes: Vec<String>,
    pub case_table: Table,
    pub cases: Vec<CaseView>,
    pub charts: Vec<Chart>,
}

#[derive(Debug, Clone, Serialize)]
pub struct CaseView {
    pub case_id: String,
    pub anchor: String,
    pub charts: Vec<Chart>,
}

fn s(v: &Value) -> String {
    match v {
        Value::Null => "–".into(),
        Value::String(s) => s.clone(),
        other => pyjson::str_form(other),
    }
}

fn pct(v: &Value) -> String {
    v.as_f64()
        .map_or("–".into(), |x| crate::py::float::percent(x, 1, false))
}

fn num(v: &Value) -> String {
    v.as_f64().map_or("–".into(), fmt_num)
}

/// A time stamp in ns as UTC for people (`2026-11-29T14:10:57Z`).
fn utc(ns: i64) -> String {
    crate::util::iso8601_utc_signed(ns.div_euclid(1_000_000_000))
}

/// Builds the view of one run. `judged` are its cases' judgements under the
/// report's policy (empty without one); `samples` its server telemetry.
/// What the run page draws besides the report: the `slo curve` and `slo
/// capacity` answers for the run (computed by `ops::slo`, the functions
/// those commands call) and the run's joined vLLM spans.
pub struct Extras<'a> {
    pub curves: Vec<Curve>,
    pub sweeps: Vec<Sweep>,
    pub spans: crate::slo::Spans<'a>,
}

pub fn view(
    data: &RunData,
    report: &Report,
    judged: &[CaseJudgement],
    samples: &[ServerSample],
    extras: &Extras,
) -> RunView {
    let j = &report.json;
    let session = data.of_type("infer.session").next();
    let config = session.map(|s| pyjson::get(s, "config"));
    let cfg = |k: &str| config.map_or(Value::Null, |c| pyjson::get(c, k).clone());
    let (first, last) = run_span(data);
    let mut identity = vec![
        ("run".to_owned(), data.run_id.clone()),
        ("model".to_owned(), s(&cfg("model"))),
        ("endpoint".to_owned(), s(&cfg("endpoint"))),
    ];
    if let Some(a) = data.of_type("infer.artifact").next() {
        let tool = pyjson::get(a, "producer");
        let tool = if tool.is_null() {
            pyjson::get(a, "tool").clone()
        } else {
            tool.clone()
        };
        if !tool.is_null() {
            identity.push(("tool".into(), s(&tool)));
        }
    }
    if let Some(m) = monotonic_start(data) {
        // Instants relative to the first request: no date in them.
        identity.push((
            "clock".into(),
            "monotonic (the tool recorded no epoch for its instants: times are relative to the first request)"
                .into(),
        ));
        identity.push((
            "started".into(),
            match (m.started_ns, m.wall_time) {
                (Some(ns), _) => format!("{} (the tool's wall time)", utc(ns)),
                (None, Some(w)) => format!("unknown in UTC; {w}"),
                (None, None) => "unknown (monotonic clock)".into(),
            },
        ));
        if let (Some(a), Some(b)) = (first, last) {
            identity.push((
                "measured span".into(),
                format!("{} s", fmt_num((b - a) as f64 / 1e9)),
            ));
        }
    } else if let (Some(a), Some(b)) = (first, last) {
        identity.push(("started (UTC)".into(), utc(a)));
        identity.push(("ended (UTC)".into(), utc(b)));
        identity.push((
            "measured span".into(),
            format!("{} s", fmt_num((b - a) as f64 / 1e9)),
        ));
    }
    let sum = &j["summary"];
    identity.push((
        "requests".into(),
        format!(
            "{} ({} failed, {})",
            s(&sum["total_requests"]),
            s(&sum["failed_requests"]),
            pct(&sum["failure_rate"])
        ),
    ));
    identity.push(("session".into(), s(&sum["session_status"])));
    let policy = &j["slo"]["policy"];
    identity.push((
        "SLO policy".into(),
        if policy.is_object() {
            format!(
                "{} ({}; joint target {})",
                s(&policy["name"]),
                policy_text(policy),
                pct(&policy["attainment_target"])
            )
        } else {
            "none (pass --slo or --slo-file)".into()
        },
    ));
    let join = &j["telemetry"]["server_join"];
    identity.push(("server telemetry".into(), s(&join["status"])));
    let mut notes: Vec<String> = report.policy_lines.clone();
    notes.extend(report.server_lines.iter().cloned());
    notes.extend(report.warnings.iter().cloned());

    let thresholds = thresholds(policy);
    let by_case = requests_by_case(data);
    let empty_spans = Default::default();
    let empty_q = Default::default();
    let spans = crate::slo::Spans {
        joined: &empty_spans,
        quarantined: &empty_q,
    };
    let mut cases = Vec::new();
    let empty_case = Value::Null;
    let case_map = j["cases"].as_object();
    for (key, reqs) in &by_case {
        let c = case_map.and_then(|m| m.get(key)).unwrap_or(&empty_case);
        let mut charts = Vec::new();
        for (mkey, short, label) in METRICS {
            let k = crate::slo::criteria::CriterionKey::from_key(mkey);
            let mut vals: Vec<f64> = match k {
                Some(k) => reqs
                    .iter()
                    .filter(|r| r.is_ok())
                    .filter_map(|r| match crate::slo::measure_key(r, k, &spans) {
                        crate::slo::Measure::Value(v) => Some(v),
                        _ => None,
                    })
                    .collect(),
                None => Vec::new(),
            };
            vals.sort_unstable_by(f64::total_cmp);
            let marks = &c["latency"]["metrics"][mkey]["successful"];
            let thr = thresholds.iter().find(|t| t.0 == short).map(|t| t.1);
            charts.push(cdf_chart(key, label, &vals, marks, thr));
        }
        if let Some(c) = server_ttft_chart(key, reqs, &spans, &extras.spans) {
            charts.push(c);
        }
        // A criterion no request of the case can be judged on (server
        // figures without spans) has no curve to draw: left out.
        let drawable =
            |c: &&crate::slo::answers::Curve| c.points.iter().any(|p| p.attainment_lower.is_some());
        for curve in extras
            .curves
            .iter()
            .filter(|c| &c.case == key)
            .filter(drawable)
        {
            let title = format!(
                "Attainment against {} threshold, case {key}",
                curve.criterion
            );
            let short = curve.criterion.strip_prefix("client.");
            let thr = thresholds
                .iter()
                .find(|t| Some(t.0.as_str()) == short)
                .map(|t| t.1);
            charts.push(super::slo::curve_chart_in(
                &title,
                &[curve],
                (420.0, 260.0),
                thr,
            ));
        }
        cases.push(CaseView {
            case_id: key.clone(),
            anchor: super::escape::id("case", &format!("{}/{key}", data.run_id)),
            charts,
        });
    }

    let case_table = case_table(j, judged);
    let mut charts = Vec::new();
    if let Some(c) = arrivals_chart(data, first) {
        charts.push(c);
    }
    if let Some(c) = in_flight_chart(data, first) {
        charts.push(c);
    }
    if let Some(c) = load_chart(j) {
        charts.push(c);
    }
    if let Some(c) = throughput_chart(j) {
        charts.push(c);
    }
    // A sweep is two cases or more that differ only in their load.
    for (n, sw) in extras
        .sweeps
        .iter()
        .filter(|s| s.points.len() > 1)
        .enumerate()
    {
        let title = format!(
            "Capacity: attainment against load, sweep {} ({})",
            n + 1,
            sw.status.replace('_', " ")
        );
        charts.push(super::slo::capacity_chart(&title, sw));
    }
    if let Some(c) = vllm_chart(j) {
        charts.push(c);
    }
    if let Some(c) = memory_chart(j, data, samples, first) {
        charts.push(c);
    }
    RunView {
        run_id: data.run_id.clone(),
        anchor: super::escape::id("run", &data.run_id),
        identity,
        notes,
        case_table,
        cases,
        charts,
    }
}

fn policy_text(policy: &Value) -> String {
    policy["criteria"]
        .as_array()
        .map(|cs| {
            cs.iter()
                .map(|c| {
                    let t = if c["attainment_target"].is_null() {
                        String::new()
                    } else {
                        format!(" @{}", pct(&c["attainment_target"]))
                    };
                    format!("{} ≤ {} ms{t}", s(&c["metric"]), num(&c["max_ms"]))
                })
                .collect::<Vec<_>>()
                .join(", ")
        })
        .unwrap_or_default()
}

/// The client-boundary thresholds of the policy: (metric, max ms).
fn thresholds(policy: &Value) -> Vec<(String, f64)> {
    policy["criteria"]
        .as_array()
        .map(|cs| {
            cs.iter()
                .filter(|c| c["boundary"].as_str().unwrap_or("client") == "client")
                .filter_map(|c| Some((c["metric"].as_str()?.to_owned(), c["max_ms"].as_f64()?)))
                .collect()
        })
        .unwrap_or_default()
}

fn requests_by_case(data: &RunData) -> std::collections::BTreeMap<String, Vec<&Request>> {
    let mut m: std::collections::BTreeMap<String, Vec<&Request>> = Default::default();
    // Requests of a case come in runs: the key is looked up once per run.
    let mut run: Vec<&Request> = Vec::new();
    let mut key: Option<&str> = None;
    for r in data.measured() {
        if key != Some(r.case_key.as_str()) {
            if let Some(k) = key {
                m.entry(k.to_owned()).or_default().append(&mut run);
            }
            key = Some(r.case_key.as_str());
        }
        run.push(r);
    }
    if let Some(k) = key {
        m.entry(k.to_owned()).or_default().append(&mut run);
    }
    m
}

/// How an imported run on a monotonic clock is dated.
pub struct MonotonicStart {
    /// The UTC start the tool recorded beside its instants (epoch ns).
    pub started_ns: Option<i64>,
    /// The tool's own timestamp as it wrote it, with what it is.
    pub wall_time: Option<String>,
}

/// The dating of a run imported from a tool whose instants are on a
/// monotonic clock (its session's `config.imported_from`), or None for any
/// other run: such a run's request times start near 0 and must not be
/// read as dates.
pub fn monotonic_start(data: &RunData) -> Option<MonotonicStart> {
    let session = data.of_type("infer.session").next()?;
    let from = pyjson::get(pyjson::get(session, "config"), "imported_from");
    let domain = pyjson::get(from, "clock_domain").as_str().unwrap_or("");
    let monotonic = pyjson::get(from, "clock_kind").as_str() == Some("monotonic")
        || domain.ends_with("monotonic_relative_ns");
    if !monotonic {
        return None;
    }
    Some(MonotonicStart {
        started_ns: pyjson::get(session, "timestamp_ns").as_i64(),
        wall_time: pyjson::get(from, "wall_time").as_str().map(str::to_owned),
    })
}

/// First start and last end among the measured requests (ns).
fn run_span(data: &RunData) -> (Option<i64>, Option<i64>) {
    let first = data.measured().filter_map(|r| r.started_at_ns()).min();
    let last = data
        .measured()
        .filter_map(|r| r.ended_at_ns().or(r.started_at_ns()))
        .max();
    (first, last)
}

/// The value at quantile `q` of sorted `v` (linear between ranks).
pub fn quantile(v: &[f64], q: f64) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    let pos = q.clamp(0.0, 1.0) * (v.len() - 1) as f64;
    let lo = pos.floor() as usize;
    let hi = pos.ceil() as usize;
    v[lo] + (v[hi] - v[lo]) * (pos - lo as f64)
}

fn cdf_chart(case: &str, label: &str, vals: &[f64], marks: &Value, thr: Option<f64>) -> Chart {
    let title = format!("{label} CDF, case {case}");
    let mark = |p: &str| marks[p]["value_ms"].as_f64();
    // The axis covers the values; the threshold too when it is near them,
    // else a note says where it lies (a 500 ms line beside 20 ms values
    // would squash the curve into the first pixels).
    let top = vals.last().copied().unwrap_or(1.0) * 1.05;
    let thr_on_axis = thr.filter(|t| *t <= top * 3.0);
    let hi = top.max(thr_on_axis.map_or(0.0, |t| t * 1.05));
    let mut plot = Plot::new(380.0, 240.0, (0.0, hi), (0.0, 1.0));
    plot.axes(&format!("{label} (ms)"), "fraction of successful requests");
    plot.step(&cdf_points(vals), "s0", "");
    for (row, p) in ["p50", "p90", "p99"].iter().enumerate() {
        if let Some(v) = mark(p) {
            plot.vmark(v, "mark", p, row);
        }
    }
    match (thr, thr_on_axis) {
        (Some(t), Some(_)) => plot.vmark(t, "thr", &format!("SLO {} ms", fmt_num(t)), 3),
        (Some(t), None) => plot.note(&format!(
            "SLO threshold {} ms: beyond the axis →",
            fmt_num(t)
        )),
        _ => {}
    }
    let mut rows: Vec<Vec<String>> = ["p50", "p90", "p95", "p99"]
        .iter()
        .map(|p| {
            vec![
                p.to_string(),
                mark(p).map_or("–".into(), fmt_num),
                marks[p]["interval"]["lower_ms"]
                    .as_f64()
                    .zip(marks[p]["interval"]["upper_ms"].as_f64())
                    .map_or("–".into(), |(a, b)| {
                        format!("[{}, {}]", fmt_num(a), fmt_num(b))
                    }),
            ]
        })
        .collect();
    if let Some(m) = vals.last() {
        rows.push(vec!["max".into(), fmt_num(*m), "–".into()]);
    }
    if let Some(t) = thr {
        let within = vals.partition_point(|v| *v <= t);
        rows.push(vec![
            format!("≤ SLO {} ms", fmt_num(t)),
            format!(
                "{:.1}% of successful",
                100.0 * within as f64 / vals.len().max(1) as f64
            ),
            "–".into(),
        ]);
    }
    Chart {
        caption: if vals.is_empty() {
            format!("No successful request of this case has a {label} value.")
        } else {
            format!(
                "{} successful requests; the line is the share with {label} at most x; markers at the report's p50, p90 and p99{}.",
                vals.len(),
                if thr.is_some() { " and the policy's threshold" } else { "" }
            )
        },
        title,
        svg: plot.finish(&format!("{label} CDF")),
        table: Table {
            head: vec![
                "percentile".into(),
                format!("{label} (ms)"),
                "95% interval (ms)".into(),
            ],
            rows,
        },
    }
}

fn case_table(j: &Value, judged: &[CaseJudgement]) -> Table {
    let mut rows = Vec::new();
    if let Some(cases) = j["cases"].as_object() {
        for (key, c) in cases {
            let failed = c["arrivals"]["failed"]
                .as_object()
                .filter(|m| !m.is_empty())
                .map(|m| {
                    m.iter()
                        .map(|(k, v)| format!("{k}: {}", s(v)))
                        .collect::<Vec<_>>()
                        .join(", ")
                })
                .unwrap_or_else(|| "0".into());
            let slo = &c["slo"];
            let (att, good) = if slo["status"] == "evaluated" {
                (
                    format!(
                        "[{}, {}]",
                        pct(&slo["attainment_lower"]),
                        pct(&slo["attainment_upper"])
                    ),
                    format!(
                        "[{}, {}]",
                        num(&slo["goodput_lower_rps"]),
                        num(&slo["goodput_upper_rps"])
                    ),
                )
            } else if slo.is_object() {
                (format!("unmeasurable ({})", s(&slo["reason"])), "–".into())
            } else {
                ("–".into(), "–".into())
            };
            let verdict = judged
                .iter()
                .find(|x| &x.case_id == key)
                .map_or("–".to_owned(), |x| x.verdict().to_owned());
            rows.push(vec![
                key.clone(),
                s(&c["request_count"]),
                failed,
                num(&c["throughput"]["requests_per_second"]),
                num(&c["throughput"]["output_tokens_per_second"]),
                good,
                att,
                verdict,
            ]);
        }
    }
    Table {
        head: [
            "case",
            "requests",
            "failures by status",
            "throughput (req/s)",
            "output (tok/s)",
            "goodput (req/s)",
            "attainment [lower, upper]",
            "verdict",
        ]
        .map(String::from)
        .to_vec(),
        rows,
    }
}

/// Even bins of width `w` from `t0` over `span` seconds.
fn bin_width(span_s: f64) -> f64 {
    let raw = (span_s / TIME_BINS as f64).max(1e-3);
    super::svg::tick_step(0.0, raw * 2.0, 2).max(raw)
}

fn arrivals_chart(data: &RunData, t0: Option<i64>) -> Option<Chart> {
    let t0 = t0?;
    let sent: Vec<f64> = data
        .measured()
        .filter_map(|r| r.started_at_ns())
        .map(|t| (t - t0) as f64 / 1e9)
        .collect();
    let intended: Vec<f64> = data
        .measured()
        .filter_map(|r| r.intended_at_ns())
        .map(|t| (t - t0) as f64 / 1e9)
        .collect();
    let span = sent.iter().chain(&intended).fold(0.0f64, |a, b| a.max(*b));
    let w = bin_width(span);
    let nb = ((span / w).floor() as usize + 1).min(TIME_BINS * 2);
    let count = |v: &[f64]| {
        let mut c = vec![0usize; nb];
        for x in v {
            let i = ((x / w).floor().max(0.0) as usize).min(nb - 1);
            c[i] += 1;
        }
        c
    };
    let cs = count(&sent);
    let ci = count(&intended);
    let rate = |n: usize| n as f64 / w;
    let ymax = cs.iter().chain(&ci).map(|n| rate(*n)).fold(1.0, f64::max);
    let mut plot = Plot::new(860.0, 260.0, (0.0, nb as f64 * w), (0.0, ymax));
    plot.axes("time since the first request (s)", "requests per second");
    let bins: Vec<(f64, f64, f64)> = cs
        .iter()
        .enumerate()
        .map(|(i, n)| (i as f64 * w, (i + 1) as f64 * w, rate(*n)))
        .collect();
    plot.bars(&bins, "s0", "sent");
    if !intended.is_empty() {
        let pts: Vec<(f64, f64)> = ci
            .iter()
            .enumerate()
            .map(|(i, n)| ((i as f64 + 0.5) * w, rate(*n)))
            .collect();
        plot.line(&pts, "s1", "intended");
    }
    let rows = (0..nb)
        .map(|i| {
            vec![
                format!("{}–{}", fmt_num(i as f64 * w), fmt_num((i + 1) as f64 * w)),
                cs[i].to_string(),
                if intended.is_empty() {
                    "–".into()
                } else {
                    ci[i].to_string()
                },
            ]
        })
        .collect();
    Some(Chart {
        title: "Arrivals over time".into(),
        svg: plot.finish("Arrivals over time"),
        caption: format!(
            "Measured requests sent per {} s bin{}.",
            fmt_num(w),
            if intended.is_empty() {
                " (the artifact records no intended send times)"
            } else {
                ", against their intended send times (the line)"
            }
        ),
        table: Table {
            head: vec!["time (s)".into(), "sent".into(), "intended".into()],
            rows,
        },
    })
}

fn in_flight_chart(data: &RunData, t0: Option<i64>) -> Option<Chart> {
    let t0 = t0?;
    let mut ev: Vec<(f64, i64)> = Vec::new();
    for r in data.measured() {
        if let (Some(a), Some(b)) = (r.started_at_ns(), r.ended_at_ns()) {
            ev.push(((a - t0) as f64 / 1e9, 1));
            ev.push(((b - t0) as f64 / 1e9, -1));
        }
    }
    if ev.is_empty() {
        return None;
    }
    ev.sort_unstable_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
    let span = ev.last().map_or(1.0, |e| e.0);
    let w = bin_width(span);
    let nb = ((span / w).floor() as usize + 1).min(TIME_BINS * 2);
    // Peak in flight per bin.
    let mut peak = vec![0i64; nb];
    let mut cur = 0i64;
    for (t, d) in &ev {
        cur += d;
        let i = ((t / w).floor().max(0.0) as usize).min(nb - 1);
        peak[i] = peak[i].max(cur);
    }
    // A bin without events holds the level carried into it.
    let mut idx = 0usize;
    let mut cur = 0i64;
    for (i, p) in peak.iter_mut().enumerate() {
        while idx < ev.len() && ev[idx].0 < i as f64 * w {
            cur += ev[idx].1;
            idx += 1;
        }
        *p = (*p).max(cur);
    }
    let ymax = peak.iter().copied().max().unwrap_or(1).max(1) as f64;
    let mut plot = Plot::new(860.0, 220.0, (0.0, nb as f64 * w), (0.0, ymax));
    plot.axes(
        "time since the first request (s)",
        "requests in flight (peak per bin)",
    );
    let pts: Vec<(f64, f64)> = peak
        .iter()
        .enumerate()
        .map(|(i, p)| (i as f64 * w, *p as f64))
        .chain(std::iter::once((nb as f64 * w, 0.0)))
        .collect();
    plot.step(&pts, "s2", "in flight");
    let rows = peak
        .iter()
        .enumerate()
        .map(|(i, p)| {
            vec![
                format!("{}–{}", fmt_num(i as f64 * w), fmt_num((i + 1) as f64 * w)),
                p.to_string(),
            ]
        })
        .collect();
    Some(Chart {
        title: "Requests in flight".into(),
        svg: plot.finish("Requests in flight"),
        caption: format!(
            "The most measured requests open at once in each {} s bin.",
            fmt_num(w)
        ),
        table: Table {
            head: vec!["time (s)".into(), "peak in flight".into()],
            rows,
        },
    })
}

/// The load of a case: its offered rate when every case has one, else its
/// peak concurrency; and the axis' label.
fn offered_load(j: &Value) -> (impl Fn(&Value) -> Option<f64>, &'static str) {
    let by_rate = j["cases"].as_object().is_some_and(|cases| {
        cases
            .values()
            .all(|c| c["arrivals"]["offered_rate_per_second"].as_f64().is_some())
    });
    let load = move |c: &Value| {
        if by_rate {
            c["arrivals"]["offered_rate_per_second"].as_f64()
        } else {
            c["arrivals"]["peak_in_flight"].as_f64()
        }
    };
    let label = if by_rate {
        "offered rate (req/s)"
    } else {
        "concurrency (peak requests in flight)"
    };
    (load, label)
}

/// Latency percentiles against offered load across the run's cases.
fn load_chart(j: &Value) -> Option<Chart> {
    let (load, xlabel) = offered_load(j);
    percentile_chart(
        j,
        "Latency against offered load",
        xlabel,
        &load,
        &load,
        "Each point is a case; bars are the 95% confidence intervals of the percentiles where the case has enough requests for one.",
    )
}

/// The throughput-latency curve: each case's achieved throughput against
/// its latency percentiles, the cases joined in the order of their offered
/// load (so a curve that bends back past saturation shows it).
fn throughput_chart(j: &Value) -> Option<Chart> {
    let (load, _) = offered_load(j);
    let x = |c: &Value| c["throughput"]["requests_per_second"].as_f64();
    percentile_chart(
        j,
        "Throughput against latency",
        "achieved throughput (req/s)",
        &x,
        &load,
        "Each point is a case at the throughput it achieved; the lines join the cases in the order of their offered load; bars are the 95% confidence intervals of the percentiles.",
    )
}

/// Latency percentiles (p50, p99 of TTFT and E2E) of each case against `x`,
/// the points of a series joined in the order `order` gives.
fn percentile_chart(
    j: &Value,
    title: &str,
    xlabel: &str,
    x_of: &dyn Fn(&Value) -> Option<f64>,
    order: &dyn Fn(&Value) -> Option<f64>,
    caption: &str,
) -> Option<Chart> {
    let cases = j["cases"].as_object()?;
    if cases.is_empty() {
        return None;
    }
    let series = [
        ("client.ttft", "p50", "TTFT p50", "s0"),
        ("client.ttft", "p99", "TTFT p99", "s1"),
        ("client.e2e", "p50", "E2E p50", "s2"),
        ("client.e2e", "p99", "E2E p99", "s3"),
    ];
    let mut xmax: f64 = 1.0;
    let mut ymax: f64 = 1.0;
    let mut rows = Vec::new();
    let mut data: Vec<Vec<(f64, f64, f64, f64)>> = vec![Vec::new(); series.len()];
    let mut hovers: Vec<Vec<String>> = vec![Vec::new(); series.len()];
    let mut keyed: Vec<(&String, &Value)> = cases.iter().collect();
    keyed.sort_by(|a, b| {
        order(a.1)
            .unwrap_or(f64::NAN)
            .total_cmp(&order(b.1).unwrap_or(f64::NAN))
    });
    for (key, c) in keyed {
        let Some(x) = x_of(c) else { continue };
        xmax = xmax.max(x);
        let mut row = vec![key.clone(), fmt_num(x)];
        for (i, (m, p, name, _)) in series.iter().enumerate() {
            let q = &c["latency"]["metrics"][*m]["successful"][*p];
            let v = q["value_ms"].as_f64().unwrap_or(f64::NAN);
            let lo = q["interval"]["lower_ms"].as_f64().unwrap_or(f64::NAN);
            let hi = q["interval"]["upper_ms"].as_f64().unwrap_or(f64::NAN);
            for y in [v, hi] {
                if y.is_finite() {
                    ymax = ymax.max(y);
                }
            }
            data[i].push((x, v, lo, hi));
            hovers[i].push(format!("{key}: {name} {} ms", fmt_num(v)));
            row.push(if lo.is_finite() {
                format!("{} [{}, {}]", fmt_num(v), fmt_num(lo), fmt_num(hi))
            } else {
                fmt_num(v)
            });
        }
        rows.push(row);
    }
    if rows.is_empty() {
        return None;
    }
    // Room beyond the last case, so its interval is not cut by the frame.
    let mut plot = Plot::new(860.0, 300.0, (0.0, xmax * 1.08), (0.0, ymax));
    plot.axes(xlabel, "latency (ms)");
    for (i, (_, _, name, class)) in series.iter().enumerate() {
        let pts = &data[i];
        let line: Vec<(f64, f64)> = pts.iter().map(|p| (p.0, p.1)).collect();
        plot.line(&line, class, name);
        plot.points(pts, &hovers[i], class);
    }
    let mut head = vec!["case".to_owned(), xlabel.to_owned()];
    head.extend(
        series
            .iter()
            .map(|s| format!("{} (ms) [95% interval]", s.2)),
    );
    Some(Chart {
        title: title.into(),
        svg: plot.finish(title),
        caption: caption.into(),
        table: Table { head, rows },
    })
}

/// Per case, the CDFs of TTFT as the client saw it and as the server's
/// spans put it (first token less arrival on the engine's clock), when the
/// run has joined vLLM spans.
fn server_ttft_chart(
    case: &str,
    reqs: &[&Request],
    no_spans: &crate::slo::Spans,
    spans: &crate::slo::Spans,
) -> Option<Chart> {
    use crate::slo::criteria::CriterionKey;
    let values = |k: CriterionKey, sp: &crate::slo::Spans| {
        let mut v: Vec<f64> = reqs
            .iter()
            .filter(|r| r.is_ok())
            .filter_map(|r| match crate::slo::measure_key(r, k, sp) {
                crate::slo::Measure::Value(v) => Some(v),
                _ => None,
            })
            .collect();
        v.sort_unstable_by(f64::total_cmp);
        v
    };
    let server = values(CriterionKey::from_key("server.ttft")?, spans);
    if server.is_empty() {
        return None;
    }
    let client = values(CriterionKey::from_key("client.ttft")?, no_spans);
    Some(overlay_cdf_chart(
        &format!("Server TTFT against client TTFT, case {case}"),
        "TTFT",
        &[("client", "s0", &client), ("server (spans)", "s1", &server)],
        "The share of successful requests with TTFT at most x, as the client measured it and as the server's spans record it; the gap between the lines is time outside the engine (network, client, queueing before the engine saw the request).",
    ))
}

/// CDFs of several series on one plot (each at most [`CDF_POINTS`] points),
/// with a table of their p50, p90, p99 and max.
pub fn overlay_cdf_chart(
    title: &str,
    label: &str,
    series: &[(&str, &str, &[f64])],
    caption: &str,
) -> Chart {
    let top = series
        .iter()
        .filter_map(|s| s.2.last())
        .fold(1e-3f64, |a, b| a.max(*b))
        * 1.05;
    let mut plot = Plot::new(420.0, 260.0, (0.0, top), (0.0, 1.0));
    plot.axes(&format!("{label} (ms)"), "fraction of requests");
    let mut rows = Vec::new();
    for (name, class, vals) in series {
        plot.step(&cdf_points(vals), class, name);
        let q = |p: f64| {
            if vals.is_empty() {
                "–".to_owned()
            } else {
                fmt_num(quantile(vals, p))
            }
        };
        rows.push(vec![
            (*name).to_owned(),
            vals.len().to_string(),
            q(0.5),
            q(0.9),
            q(0.99),
            vals.last().map_or("–".into(), |m| fmt_num(*m)),
        ]);
    }
    Chart {
        title: title.to_owned(),
        svg: plot.finish(title),
        caption: caption.to_owned(),
        table: Table {
            head: [
                "series", "requests", "p50 (ms)", "p90 (ms)", "p99 (ms)", "max (ms)",
            ]
            .map(String::from)
            .to_vec(),
            rows,
        },
    }
}

/// The drawn points of the CDF of sorted `vals`.
fn cdf_points(vals: &[f64]) -> Vec<(f64, f64)> {
    if vals.is_empty() {
        return vec![];
    }
    let n = CDF_POINTS.min(vals.len());
    let mut p = vec![(vals[0], 0.0)];
    p.extend((1..=n).map(|i| {
        let q = i as f64 / n as f64;
        (quantile(vals, q), q)
    }));
    p
}

/// vLLM's queue (waiting) and running gauges per case and engine, from the
/// report's gauge statistics over each case's window: a bar from the least
/// to the most seen, a dot at the mean.
fn vllm_chart(j: &Value) -> Option<Chart> {
    let cases = j["telemetry"]["vllm"]["cases"].as_object()?;
    let gauges = [
        ("running_requests", "running", "s0"),
        ("queue_depth", "waiting", "s1"),
    ];
    let mut names = Vec::new();
    let mut items = Vec::new();
    let mut rows = Vec::new();
    let mut xmax: f64 = 1.0;
    for (case, c) in cases {
        let Some(engines) = c["engines"].as_object() else {
            continue;
        };
        for (engine, e) in engines {
            for (key, short, class) in gauges {
                let Some(stats) = e["gauges"][key]["stats"].as_object() else {
                    continue;
                };
                for (label, st) in stats {
                    let (lo, mean, hi) = (
                        st["min"].as_f64().unwrap_or(f64::NAN),
                        st["mean"].as_f64().unwrap_or(f64::NAN),
                        st["max"].as_f64().unwrap_or(f64::NAN),
                    );
                    if hi.is_finite() {
                        xmax = xmax.max(hi);
                    }
                    let labels = if label == "_" {
                        String::new()
                    } else {
                        format!(" {{{label}}}")
                    };
                    let name = format!("{case} · engine {engine} · {short}{labels}");
                    items.push((
                        names.len(),
                        mean,
                        lo,
                        hi,
                        class.to_owned(),
                        format!(
                            "{name}: mean {}, min {}, max {}",
                            fmt_num(mean),
                            fmt_num(lo),
                            fmt_num(hi)
                        ),
                    ));
                    rows.push(vec![
                        case.clone(),
                        engine.clone(),
                        format!("{short}{labels}"),
                        fmt_num(lo),
                        fmt_num(mean),
                        fmt_num(hi),
                        s(&st["samples"]),
                    ]);
                    names.push(name);
                }
            }
            if let Some(stats) = e["gauges"]["kv_cache_usage"]["stats"].as_object() {
                for (label, st) in stats {
                    rows.push(vec![
                        case.clone(),
                        engine.clone(),
                        if label == "_" {
                            "KV cache usage (fraction)".into()
                        } else {
                            format!("KV cache usage (fraction) {{{label}}}")
                        },
                        num(&st["min"]),
                        num(&st["mean"]),
                        num(&st["max"]),
                        s(&st["samples"]),
                    ]);
                }
            }
        }
    }
    if items.is_empty() {
        return None;
    }
    let mut plot = Plot::categories(860.0, (0.0, xmax), names.len());
    plot.category_axes("requests (vLLM gauge, per scrape)", &names, fmt_num);
    plot.intervals(&items);
    Some(Chart {
        title: "vLLM running and waiting requests".into(),
        svg: plot.finish("vLLM running and waiting requests"),
        caption: "Per case and engine, vLLM's running (num_requests_running) and waiting (num_requests_waiting) gauges over the case's scrapes: the bar spans the least to the most seen, the dot is the mean.".into(),
        table: Table {
            head: ["case", "engine", "gauge", "min", "mean", "max", "scrapes"]
                .map(String::from)
                .to_vec(),
            rows,
        },
    })
}

/// Server memory on the client clock, each case's window shaded.
fn memory_chart(
    j: &Value,
    data: &RunData,
    samples: &[ServerSample],
    t0: Option<i64>,
) -> Option<Chart> {
    let join = &j["telemetry"]["server_join"];
    let offset = join["clock_offset_ns"].as_i64().unwrap_or(0);
    let uncertainty = join["clock_uncertainty_ns"].as_i64().unwrap_or(0);
    // Series: server metrics by name and member (pid or rank), and the
    // client's own samples.
    let mut series: std::collections::BTreeMap<String, Vec<(i64, f64)>> = Default::default();
    for smp in samples {
        if let Some(v) = smp.value_bytes {
            let member = match smp.identity.rank {
                Some(r) => format!("rank {r}"),
                None => format!("pid {}", smp.identity.pid),
            };
            series
                .entry(format!("server {} ({member})", smp.metric))
                .or_default()
                .push((smp.observed_at_ns - offset, v as f64));
        }
    }
    for smp in &data.samples {
        if let Some(t) = smp.timestamp_ns {
            if let Some(v) = smp.process_rss_bytes {
                series
                    .entry("client process_rss_bytes".into())
                    .or_default()
                    .push((t, v as f64));
            }
            if let Some(v) = smp.device_used_bytes {
                series
                    .entry("client device_used_bytes".into())
                    .or_default()
                    .push((t, v as f64));
            }
        }
    }
    if series.is_empty() {
        return None;
    }
    let t0 = t0
        .or_else(|| series.values().flatten().map(|p| p.0).min())
        .unwrap_or(0);
    let sec = |t: i64| (t - t0) as f64 / 1e9;
    let mib = 1024.0 * 1024.0;
    let (mut xmin, mut xmax, mut ymax) = (0.0f64, 1.0f64, 1.0f64);
    for p in series.values().flatten() {
        xmin = xmin.min(sec(p.0));
        xmax = xmax.max(sec(p.0));
        ymax = ymax.max(p.1 / mib);
    }
    let mut plot = Plot::new(860.0, 280.0, (xmin, xmax), (0.0, ymax));
    plot.axes(
        "time since the first request, client clock (s)",
        "memory (MiB)",
    );
    let mut rows = Vec::new();
    if let Some(cases) = j["cases"].as_object() {
        for (key, c) in cases {
            let w = &c["memory"]["server_coverage"]["counted_window_ns"];
            let win = w[0].as_i64().zip(w[1].as_i64()).or_else(|| {
                let m = &c["intervals"]["measured_span"];
                m["started_at_ns"].as_i64().zip(m["ended_at_ns"].as_i64())
            });
            if let Some((a, b)) = win {
                let band = if rows.len() % 2 == 0 {
                    "band"
                } else {
                    "band band2"
                };
                plot.xband(sec(a), sec(b), band, key, rows.len());
                rows.push(vec![
                    format!("case {key} window"),
                    format!("{}–{} s", fmt_num(sec(a)), fmt_num(sec(b))),
                    format!("coverage {}", s(&c["memory"]["server_coverage"]["status"])),
                ]);
            }
        }
    }
    for (i, (name, pts)) in series.iter().enumerate() {
        let mut pts = pts.clone();
        pts.sort_by_key(|p| p.0);
        let thinned = thin(&pts, TIME_BINS * 4);
        let line: Vec<(f64, f64)> = thinned.iter().map(|p| (sec(p.0), p.1 / mib)).collect();
        let class = format!("s{}", i % 6);
        // The clock's uncertainty as a band: a server sample placed at t
        // may belong anywhere in [t - u, t + u] on the client clock, so the
        // value at t lies between the least and the most within u of it.
        if uncertainty > 0 && name.starts_with("server ") {
            let (lo, hi) = uncertainty_band(&thinned, uncertainty);
            let xs: Vec<f64> = thinned.iter().map(|p| sec(p.0)).collect();
            let lo: Vec<f64> = lo.iter().map(|v| v / mib).collect();
            let hi: Vec<f64> = hi.iter().map(|v| v / mib).collect();
            plot.area(&xs, &lo, &hi, &class);
        }
        plot.line(&line, &class, name);
        let peak = pts.iter().map(|p| p.1).fold(0.0, f64::max);
        rows.push(vec![
            name.clone(),
            format!("{} samples", pts.len()),
            format!("peak {} MiB", fmt_num(peak / mib)),
        ]);
    }
    Some(Chart {
        title: "Memory over time".into(),
        svg: plot.finish("Memory over time"),
        caption: format!(
            "Server samples placed on the client clock (server join: {}; offset {} ms, uncertainty ±{} ms{}); shaded: each case's window, its coverage in the table.",
            s(&join["status"]),
            fmt_num(offset as f64 / 1e6),
            fmt_num(uncertainty as f64 / 1e6),
            if uncertainty > 0 {
                "; the band around a server line holds the values the uncertainty allows at each time"
            } else {
                ""
            }
        ),
        table: Table {
            head: vec!["series".into(), "extent".into(), "figure".into()],
            rows,
        },
    })
}

/// Per point of a sorted time series, the least and the most value among
/// the points within `u` ns of it.
fn uncertainty_band(pts: &[(i64, f64)], u: i64) -> (Vec<f64>, Vec<f64>) {
    let (mut lo, mut hi) = (Vec::with_capacity(pts.len()), Vec::with_capacity(pts.len()));
    let mut start = 0usize;
    for p in pts {
        while pts[start].0 < p.0.saturating_sub(u) {
            start += 1;
        }
        let (mut a, mut b) = (p.1, p.1);
        for q in pts[start..]
            .iter()
            .take_while(|q| q.0 <= p.0.saturating_add(u))
        {
            a = a.min(q.1);
            b = b.max(q.1);
        }
        lo.push(a);
        hi.push(b);
    }
    (lo, hi)
}

/// At most `max` points of a time series: the one with the largest value of
/// each of `max / 2` even chunks, and the chunk's first (so peaks survive).
fn thin(pts: &[(i64, f64)], max: usize) -> Vec<(i64, f64)> {
    if pts.len() <= max {
        return pts.to_vec();
    }
    let chunk = pts.len().div_ceil(max / 2);
    let mut out = Vec::with_capacity(max);
    for c in pts.chunks(chunk) {
        out.push(c[0]);
        if let Some(p) = c.iter().skip(1).max_by(|a, b| a.1.total_cmp(&b.1)) {
            out.push(*p);
        }
    }
    out
}

/// The run page: one run's view in the page template.
pub fn render(run: &RunView) -> Result<String, String> {
    super::page::render(
        "run.html",
        serde_json::json!({
            "title": format!("stormlog report: {}", run.run_id),
            "version": env!("CARGO_PKG_VERSION"),
            "run": run,
        }),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_interpolate() {
        let v = [1.0, 2.0, 3.0, 4.0];
        assert_eq!(quantile(&v, 0.0), 1.0);
        assert_eq!(quantile(&v, 1.0), 4.0);
        assert_eq!(quantile(&v, 0.5), 2.5);
        assert!(quantile(&[], 0.5).is_nan());
    }

    #[test]
    fn thinning_keeps_peaks() {
        let pts: Vec<(i64, f64)> = (0..1000)
            .map(|i| (i, if i == 537 { 99.0 } else { 1.0 }))
            .collect();
        let t = thin(&pts, 100);
        assert!(t.len() <= 100);
        assert!(t.iter().any(|p| p.1 == 99.0));
    }
}
