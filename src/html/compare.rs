//! The comparison page, drawn from the comparison report's JSON (the same
//! value `--format json` prints): per case, each metric's change of the
//! candidate against the baseline with its interval and verdict (a chart of
//! the relative changes and the full table), the runs of each arm, and the
//! comparability findings.
use serde::Serialize;
use serde_json::Value;

use super::svg::{fmt_num, Plot};
use super::{Chart, Table};

#[derive(Debug, Serialize)]
struct CaseView {
    case_id: String,
    anchor: String,
    chart: Option<Chart>,
    table: Table,
    distributions: Vec<Chart>,
}

/// One run of a comparison's arm, with its own analysis report.
#[derive(Debug, Clone)]
pub struct ArmRun<'a> {
    /// `baseline` or `candidate`.
    pub arm: String,
    /// The run as the comparison names it (its path or stored id).
    pub name: String,
    pub report: &'a Value,
}

/// The quantiles each run's report gives of a metric, drawn as its
/// distribution's upper part.
const LEVELS: [(&str, f64); 4] = [("p50", 0.5), ("p90", 0.9), ("p95", 0.95), ("p99", 0.99)];

/// Per metric, every run's distribution of that metric in `case` on one
/// plot: a line through the quantiles its report gives (successful
/// requests), baseline runs in one colour and candidate runs in another.
fn distributions(case: &str, arms: &[ArmRun]) -> Vec<Chart> {
    let metrics = [
        ("client.ttft", "TTFT"),
        ("client.tpot", "TPOT"),
        ("client.e2e", "E2E latency"),
    ];
    let mut charts = Vec::new();
    for (key, label) in metrics {
        let mut lines: Vec<(&ArmRun, Vec<(f64, f64)>)> = Vec::new();
        for a in arms {
            let q = &a.report["cases"][case]["latency"]["metrics"][key]["successful"];
            let pts: Vec<(f64, f64)> = LEVELS
                .iter()
                .filter_map(|(p, level)| Some((q[*p]["value_ms"].as_f64()?, *level)))
                .filter(|p| p.0.is_finite())
                .collect();
            if !pts.is_empty() {
                lines.push((a, pts));
            }
        }
        if !lines.iter().any(|l| l.0.arm == "baseline")
            || !lines.iter().any(|l| l.0.arm != "baseline")
        {
            continue;
        }
        let (lo, hi) = lines
            .iter()
            .flat_map(|l| l.1.iter().map(|p| p.0))
            .fold((f64::INFINITY, 0.0f64), |(a, b), x| (a.min(x), b.max(x)));
        let pad = ((hi - lo) * 0.08).max(hi * 0.01);
        let mut plot = Plot::new(420.0, 260.0, ((lo - pad).max(0.0), hi + pad), (0.5, 1.0));
        plot.axes_with(
            &format!("{label} (ms)"),
            "quantile (successful requests)",
            fmt_num,
            |y| format!("p{}", (y * 100.0).round()),
        );
        let mut rows = Vec::new();
        for (a, pts) in &lines {
            let class = if a.arm == "baseline" { "s0" } else { "s1" };
            plot.line(pts, class, &a.arm);
            let hover: Vec<String> = pts
                .iter()
                .map(|(v, l)| {
                    format!(
                        "{} {}: p{} {} ms",
                        a.arm,
                        a.name,
                        (l * 100.0).round(),
                        fmt_num(*v)
                    )
                })
                .collect();
            let dots: Vec<(f64, f64, f64, f64)> = pts
                .iter()
                .map(|(x, y)| (*x, *y, f64::NAN, f64::NAN))
                .collect();
            plot.points(&dots, &hover, class);
            let mut row = vec![a.arm.clone(), a.name.clone()];
            for (_, level) in LEVELS {
                row.push(
                    pts.iter()
                        .find(|x| x.1 == level)
                        .map_or("–".into(), |x| fmt_num(x.0)),
                );
            }
            rows.push(row);
        }
        let title = format!("{label} distributions, case {case}");
        let mut head = vec!["arm".to_owned(), "run".to_owned()];
        head.extend(LEVELS.iter().map(|(p, _)| format!("{p} (ms)")));
        charts.push(Chart {
            svg: plot.finish(&title),
            title,
            caption: format!(
                "Each line is one run's {label} distribution (its report's p50, p90, p95 and p99 of successful requests): baseline runs in one colour, candidate runs in the other; a candidate line to the right is slower."
            ),
            table: Table { head, rows },
        });
    }
    charts
}

fn s(v: &Value) -> String {
    match v {
        Value::Null => "–".into(),
        Value::String(s) => s.clone(),
        other => crate::py::json::str_form(other),
    }
}

fn signed_pct(x: f64) -> String {
    if !x.is_finite() {
        return "–".into();
    }
    format!("{:+.1}%", x * 100.0)
}

fn arm_values(m: &Value, arm: &str) -> String {
    m["values"][arm]
        .as_array()
        .map(|vs| {
            vs.iter()
                .map(|v| {
                    let x = if v.is_array() { &v[0] } else { v };
                    x.as_f64().map_or("–".into(), fmt_num)
                })
                .collect::<Vec<_>>()
                .join(", ")
        })
        .unwrap_or_else(|| "–".into())
}

/// The page, from the comparison report's JSON.
pub fn render(report: &Value, arms: &[ArmRun]) -> Result<String, String> {
    let p = &report["payload"];
    let mut cases = Vec::new();
    if let Some(cs) = p["cases"].as_object() {
        for (case_id, c) in cs {
            let mut rows = Vec::new();
            let mut items = Vec::new();
            let mut names = Vec::new();
            let (mut lo_all, mut hi_all) = (0.0f64, 0.0f64);
            if let Some(ms) = c["metrics"].as_object() {
                for (name, m) in ms {
                    let w = &m["estimates"]["worst_case"];
                    let (e, l, u) = (
                        w["effect"].as_f64().unwrap_or(f64::NAN),
                        w["lower"].as_f64().unwrap_or(f64::NAN),
                        w["upper"].as_f64().unwrap_or(f64::NAN),
                    );
                    let relative = m["scale"] == "log_ratio";
                    let change = if !e.is_finite() {
                        s(&m["reason"])
                    } else if relative {
                        format!("{} [{}, {}]", signed_pct(e), signed_pct(l), signed_pct(u))
                    } else {
                        format!(
                            "{} [{}, {}] {}",
                            fmt_num(e),
                            fmt_num(l),
                            fmt_num(u),
                            s(&m["unit"])
                        )
                    };
                    let verdict = m["verdict"]["direction"]
                        .as_str()
                        .unwrap_or("no estimate")
                        .to_owned();
                    let gate = if m["gate"].is_null() {
                        "–".to_owned()
                    } else {
                        s(&m["gate"]["status"])
                    };
                    rows.push(vec![
                        name.clone(),
                        s(&m["direction"]).replace('_', " "),
                        arm_values(m, "baseline"),
                        arm_values(m, "candidate"),
                        change,
                        verdict.clone(),
                        gate,
                    ]);
                    if relative && e.is_finite() {
                        let class = match verdict.as_str() {
                            "worse" => "s1",
                            "better" => "s2",
                            _ => "s0",
                        };
                        for x in [l, u, e] {
                            if x.is_finite() {
                                lo_all = lo_all.min(x);
                                hi_all = hi_all.max(x);
                            }
                        }
                        items.push((
                            names.len(),
                            e,
                            l,
                            u,
                            class.to_owned(),
                            format!(
                                "{name}: {} [{}, {}]; {verdict}",
                                signed_pct(e),
                                signed_pct(l),
                                signed_pct(u)
                            ),
                        ));
                        names.push(name.clone());
                    }
                }
            }
            let chart = (!items.is_empty()).then(|| {
                let mut plot = Plot::categories(860.0, (lo_all, hi_all), names.len());
                plot.category_axes(
                    "candidate against baseline (change, %, with its interval)",
                    &names,
                    |x| format!("{:+}%", (x * 100.0).round()),
                );
                plot.vmark(0.0, "mark", "no change", 0);
                plot.intervals(&items);
                Chart {
                    title: format!("Changes in case {case_id}"),
                    svg: plot.finish(&format!("Changes in case {case_id}")),
                    caption: "Each row: the candidate's relative change (dot) and its interval (bar); red when worse, green when better, blue when no change could be told.".into(),
                    table: Table {
                        head: vec!["metric".into(), "change".into(), "lower".into(), "upper".into()],
                        rows: items
                            .iter()
                            .map(|(i, e, l, u, _, _)| {
                                vec![names[*i].clone(), signed_pct(*e), signed_pct(*l), signed_pct(*u)]
                            })
                            .collect(),
                    },
                }
            });
            cases.push(CaseView {
                distributions: distributions(case_id, arms),
                case_id: case_id.clone(),
                anchor: super::escape::id("case", case_id),
                chart,
                table: Table {
                    head: [
                        "metric",
                        "better when",
                        "baseline (per run)",
                        "candidate (per run)",
                        "change [interval]",
                        "verdict",
                        "gate",
                    ]
                    .map(String::from)
                    .to_vec(),
                    rows,
                },
            });
        }
    }
    let runs = Table {
        head: ["arm", "run", "path", "block", "session", "started (UTC)"]
            .map(String::from)
            .to_vec(),
        rows: p["runs"]
            .as_array()
            .map(|rs| {
                rs.iter()
                    .map(|r| {
                        vec![
                            s(&r["arm"]),
                            s(&r["run_id"]),
                            s(&r["path"]),
                            s(&r["labels"]["block"]),
                            s(&r["session_status"]),
                            r["started_at_ns"].as_i64().map_or("–".into(), |ns| {
                                crate::util::iso8601_utc_signed(ns.div_euclid(1_000_000_000))
                            }),
                        ]
                    })
                    .collect()
            })
            .unwrap_or_default(),
    };
    let compat = &p["compatibility"];
    let mut findings = Table {
        head: ["kind", "field", "baseline", "candidate", "reason"]
            .map(String::from)
            .to_vec(),
        rows: Vec::new(),
    };
    for kind in [
        "blocking",
        "unverified",
        "allowed",
        "covariates",
        "observation",
        "unknown",
    ] {
        if let Some(items) = compat[kind].as_array() {
            for it in items {
                findings.rows.push(vec![
                    kind.to_owned(),
                    s(&it["field"]),
                    s(&it["a"]),
                    s(&it["b"]),
                    s(&it["reason"]),
                ]);
            }
        }
    }
    let notes: Vec<String> = report["findings"]
        .as_array()
        .map(|fs| {
            fs.iter()
                .map(|f| {
                    format!(
                        "{} ({}): {}. {}",
                        s(&f["id"]),
                        s(&f["severity"]),
                        s(&f["title"]),
                        s(&f["message"])
                    )
                })
                .collect()
        })
        .unwrap_or_default();
    let limits: Vec<String> = p["limits"]
        .as_array()
        .map(|l| l.iter().map(s).collect())
        .unwrap_or_default();
    super::page::render(
        "compare.html",
        serde_json::json!({
            "title": "stormlog comparison",
            "version": env!("CARGO_PKG_VERSION"),
            "design": s(&p["design"]),
            "mode": s(&p["spec"]["mode"]),
            "confidence": s(&p["spec"]["confidence"]),
            "compat_status": s(&compat["status"]),
            "verdict": s(&report["verdict"]["status"]),
            "verdict_summary": s(&report["verdict"]["summary"]),
            "runs": runs,
            "findings": findings,
            "notes": notes,
            "limits": limits,
            "cases": cases,
        }),
    )
}
