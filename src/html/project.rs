//! The project page: every selected run over time (p50/p99 TTFT and E2E,
//! throughput and attainment per case), a runs × cases verdict grid under the
//! chosen policy, and each run's section (identity, case table, latency
//! against load), reached by anchors from the grid.
use serde::Serialize;

use super::run::RunView;
use super::svg::{fmt_num, Plot};
use super::{Chart, Table};
use crate::report::judge::CaseJudgement;

/// One run as the project page needs it.
#[derive(Debug, Clone)]
pub struct ProjectRun {
    pub view: RunView,
    /// First measured request's start (ns), for the time axis.
    pub started_ns: Option<i64>,
    pub model: String,
    pub workload: String,
    /// Per case: (case, p50 TTFT, p99 TTFT, p50 E2E, p99 E2E, req/s).
    pub figures: Vec<(String, [f64; 5])>,
    pub judged: Vec<CaseJudgement>,
}

impl ProjectRun {
    /// Figures from a built report's JSON.
    pub fn figures_of(report: &serde_json::Value) -> Vec<(String, [f64; 5])> {
        let mut out = Vec::new();
        if let Some(cases) = report["cases"].as_object() {
            for (k, c) in cases {
                let q = |m: &str, p: &str| {
                    c["latency"]["metrics"][m]["successful"][p]["value_ms"]
                        .as_f64()
                        .unwrap_or(f64::NAN)
                };
                out.push((
                    k.clone(),
                    [
                        q("client.ttft", "p50"),
                        q("client.ttft", "p99"),
                        q("client.e2e", "p50"),
                        q("client.e2e", "p99"),
                        c["throughput"]["requests_per_second"]
                            .as_f64()
                            .unwrap_or(f64::NAN),
                    ],
                ));
            }
        }
        out
    }
}

#[derive(Debug, Serialize)]
struct GridRow {
    run_id: String,
    anchor: String,
    cells: Vec<(String, String)>,
}

fn utc(ns: Option<i64>) -> String {
    ns.map_or("–".into(), |ns| {
        crate::util::iso8601_utc_signed(ns.div_euclid(1_000_000_000))
    })
}

/// The page. `policy` names the policy the grid is judged under (None: each
/// run's recorded one, or none).
pub fn render(runs: &[ProjectRun], policy: Option<&str>) -> Result<String, String> {
    let mut order: Vec<&ProjectRun> = runs.iter().collect();
    order.sort_by(|a, b| {
        a.started_ns
            .cmp(&b.started_ns)
            .then(a.view.run_id.cmp(&b.view.run_id))
    });
    let t0 = order.iter().filter_map(|r| r.started_ns).min().unwrap_or(0);
    // The time axis in a unit that suits the project's span.
    let t1 = order.iter().filter_map(|r| r.started_ns).max().unwrap_or(0);
    let span_s = (t1 - t0) as f64 / 1e9;
    let (unit, per) = if span_s < 120.0 {
        ("s", 1e9)
    } else if span_s < 7200.0 {
        ("min", 6e10)
    } else if span_s < 2.0 * 86400.0 {
        ("h", 3.6e12)
    } else {
        ("days", 8.64e13)
    };
    let hours = |ns: Option<i64>| ns.map_or(f64::NAN, |n| (n - t0) as f64 / per);
    let time_label = format!("time since the first run ({unit})");
    let mut charts = Vec::new();
    // Latency over time: one point per run and case.
    let series = [
        ("TTFT p50", "s0"),
        ("TTFT p99", "s1"),
        ("E2E p50", "s2"),
        ("E2E p99", "s3"),
    ];
    let (mut xmax, mut ymax, mut tmax) = (0.0f64, 1.0f64, 1.0f64);
    let mut rows = Vec::new();
    for r in &order {
        let x = hours(r.started_ns);
        if x.is_finite() {
            xmax = xmax.max(x);
        }
        for (case, f) in &r.figures {
            for v in &f[..4] {
                if v.is_finite() {
                    ymax = ymax.max(*v);
                }
            }
            if f[4].is_finite() {
                tmax = tmax.max(f[4]);
            }
            let att = r
                .judged
                .iter()
                .find(|j| &j.case_id == case)
                .map_or("–".to_owned(), |j| {
                    let (lo, hi) = (&j.slo["attainment_lower"], &j.slo["attainment_upper"]);
                    match (lo.as_f64(), hi.as_f64()) {
                        (Some(a), Some(b)) => format!("[{:.1}%, {:.1}%]", a * 100.0, b * 100.0),
                        _ => "–".into(),
                    }
                });
            rows.push(vec![
                r.view.run_id.clone(),
                case.clone(),
                utc(r.started_ns),
                r.model.clone(),
                r.workload.clone(),
                fmt_num(f[0]),
                fmt_num(f[1]),
                fmt_num(f[2]),
                fmt_num(f[3]),
                fmt_num(f[4]),
                att,
            ]);
        }
    }
    // Runs started together still get an axis one unit wide.
    let span = (xmax * 1.05).max(1.0);
    let mut lat = Plot::new(860.0, 300.0, (0.0, span), (0.0, ymax));
    lat.axes(&time_label, "latency (ms)");
    let mut tput = Plot::new(860.0, 240.0, (0.0, span), (0.0, tmax));
    tput.axes(&time_label, "throughput (req/s)");
    for (i, (name, class)) in series.iter().enumerate() {
        let mut pts = Vec::new();
        let mut hover = Vec::new();
        for r in &order {
            for (case, f) in &r.figures {
                pts.push((hours(r.started_ns), f[i], f64::NAN, f64::NAN));
                hover.push(format!(
                    "{} / {case}: {name} {} ms",
                    r.view.run_id,
                    fmt_num(f[i])
                ));
            }
        }
        // The legend comes from a line through each run's median case.
        let line: Vec<(f64, f64)> = order
            .iter()
            .filter_map(|r| {
                let mut v: Vec<f64> = r
                    .figures
                    .iter()
                    .map(|f| f.1[i])
                    .filter(|v| v.is_finite())
                    .collect();
                v.sort_by(f64::total_cmp);
                (!v.is_empty()).then(|| (hours(r.started_ns), v[v.len() / 2]))
            })
            .collect();
        lat.line(&line, class, name);
        lat.points(&pts, &hover, class);
    }
    {
        let mut pts = Vec::new();
        let mut hover = Vec::new();
        for r in &order {
            for (case, f) in &r.figures {
                pts.push((hours(r.started_ns), f[4], f64::NAN, f64::NAN));
                hover.push(format!(
                    "{} / {case}: {} req/s",
                    r.view.run_id,
                    fmt_num(f[4])
                ));
            }
        }
        tput.points(&pts, &hover, "s4");
        tput.legend_entry("s4", "throughput per case");
    }
    let head: Vec<String> = [
        "run",
        "case",
        "started (UTC)",
        "model",
        "workload",
        "TTFT p50 (ms)",
        "TTFT p99 (ms)",
        "E2E p50 (ms)",
        "E2E p99 (ms)",
        "throughput (req/s)",
        "attainment",
    ]
    .map(String::from)
    .to_vec();
    charts.push(Chart {
        title: "Latency of the runs over time".into(),
        svg: lat.finish("Latency of the runs over time"),
        caption:
            "One point per run and case at the run's start; the lines join each run's median case."
                .into(),
        table: Table {
            head: head.clone(),
            rows: rows.clone(),
        },
    });
    charts.push(Chart {
        title: "Throughput of the runs over time".into(),
        svg: tput.finish("Throughput of the runs over time"),
        caption: "Requests per second over each case's measured span, one point per run and case."
            .into(),
        table: Table { head, rows },
    });
    // The verdict grid: runs × the union of case ids.
    let mut case_ids: Vec<String> = order
        .iter()
        .flat_map(|r| r.figures.iter().map(|f| f.0.clone()))
        .collect();
    case_ids.sort();
    case_ids.dedup();
    let grid: Vec<GridRow> = order
        .iter()
        .map(|r| GridRow {
            run_id: r.view.run_id.clone(),
            anchor: r.view.anchor.clone(),
            cells: case_ids
                .iter()
                .map(|c| {
                    let has = r.figures.iter().any(|f| &f.0 == c);
                    let v = match r.judged.iter().find(|j| &j.case_id == c) {
                        Some(j) => j.verdict().to_owned(),
                        None if has => "no policy".to_owned(),
                        None => String::new(),
                    };
                    (v.replace(' ', "_"), v)
                })
                .collect(),
        })
        .collect();
    let sections: Vec<&RunView> = order.iter().map(|r| &r.view).collect();
    super::page::render(
        "project.html",
        serde_json::json!({
            "title": "stormlog project report",
            "version": env!("CARGO_PKG_VERSION"),
            "policy": policy,
            "run_count": order.len(),
            "charts": charts,
            "case_ids": case_ids,
            "grid": grid,
            "runs": sections,
        }),
    )
}
