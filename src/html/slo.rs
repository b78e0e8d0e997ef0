//! Pages of `stormlog slo curve` (attainment against threshold, per case and
//! criterion, with its bounds) and `stormlog slo capacity` (each target's
//! attainment against the load of a sweep, the capacity point marked).
use serde::Serialize;

use super::svg::{fmt_num, Plot};
use super::{Chart, Table};
use crate::ops::slo::capacity::Sweep;
use crate::ops::slo::curve::Curve;

fn pct(x: Option<f64>) -> String {
    x.map_or("–".into(), |v| format!("{:.1}%", v * 100.0))
}

#[derive(Debug, Serialize)]
struct Section {
    title: String,
    anchor: String,
    charts: Vec<Chart>,
}

fn page(title: &str, intro: &str, sections: Vec<Section>) -> Result<String, String> {
    super::page::render(
        "slo.html",
        serde_json::json!({
            "title": title,
            "intro": intro,
            "version": env!("CARGO_PKG_VERSION"),
            "sections": sections,
        }),
    )
}

/// The `slo curve` page: one chart per run and case, a line per criterion
/// (the lower bound of the attainment; the band up to its upper bound holds
/// what the unknown requests could change).
pub fn curves(curves: &[Curve]) -> Result<String, String> {
    let mut groups: Vec<((String, String), Vec<&Curve>)> = Vec::new();
    for c in curves {
        let key = (c.run_id.clone(), c.case.clone());
        match groups.iter_mut().find(|g| g.0 == key) {
            Some(g) => g.1.push(c),
            None => groups.push((key, vec![c])),
        }
    }
    let mut sections = Vec::new();
    for ((run, case), cs) in groups {
        let xmax = cs
            .iter()
            .flat_map(|c| c.points.iter().map(|p| p.threshold_ms))
            .fold(1.0, f64::max);
        let xmin = cs
            .iter()
            .flat_map(|c| c.points.iter().map(|p| p.threshold_ms))
            .fold(xmax, f64::min)
            .min(0.0);
        let mut plot = Plot::new(860.0, 300.0, (xmin, xmax), (0.0, 1.0));
        plot.axes_with(
            "threshold (ms)",
            "attainment (share of offered requests)",
            fmt_num,
            |y| format!("{}%", (y * 100.0).round()),
        );
        let mut rows = Vec::new();
        for (i, c) in cs.iter().enumerate() {
            let class = format!("s{}", i % 6);
            let xs: Vec<f64> = c.points.iter().map(|p| p.threshold_ms).collect();
            let lo: Vec<f64> = c
                .points
                .iter()
                .map(|p| p.attainment_lower.unwrap_or(f64::NAN))
                .collect();
            let hi: Vec<f64> = c
                .points
                .iter()
                .map(|p| p.attainment_upper.unwrap_or(f64::NAN))
                .collect();
            plot.area(&xs, &lo, &hi, &class);
            let line: Vec<(f64, f64)> = xs.iter().copied().zip(lo.iter().copied()).collect();
            plot.line(&line, &class, &c.criterion);
            for p in &c.points {
                rows.push(vec![
                    c.criterion.clone(),
                    fmt_num(p.threshold_ms),
                    p.pass.to_string(),
                    p.fail.to_string(),
                    p.unknown.to_string(),
                    p.not_applicable.to_string(),
                    format!("[{}, {}]", pct(p.attainment_lower), pct(p.attainment_upper)),
                ]);
            }
        }
        let title = format!("Attainment against threshold: run {run}, case {case}");
        sections.push(Section {
            title: format!("Run {run}, case {case}"),
            anchor: super::escape::id("curve", &format!("{run}/{case}")),
            charts: vec![Chart {
                svg: plot.finish(&title),
                title,
                caption: format!(
                    "The share of the {} offered requests that meet each threshold (lower bound; the band reaches the upper bound, which counts the unknown requests as met).",
                    cs.first().map_or(0, |c| c.offered)
                ),
                table: Table {
                    head: ["criterion", "threshold (ms)", "pass", "fail", "unknown", "not applicable", "attainment [lower, upper]"]
                        .map(String::from)
                        .to_vec(),
                    rows,
                },
            }],
        });
    }
    page(
        "stormlog slo curve",
        "Attainment as the threshold moves, per run, case and criterion.",
        sections,
    )
}

/// The `slo capacity` page: per sweep, each target's attainment (lower
/// bound) against the load, the target as a line, the capacity marked.
pub fn capacities(sweeps: &[Sweep]) -> Result<String, String> {
    let mut sections = Vec::new();
    for (n, s) in sweeps.iter().enumerate() {
        let xmax = s.points.iter().map(|p| p.load).fold(1.0, f64::max) * 1.08;
        let mut plot = Plot::new(860.0, 300.0, (0.0, xmax), (0.0, 1.0));
        let unit = if s.load == "rate" {
            "offered rate (req/s)"
        } else {
            "concurrency"
        };
        plot.axes_with(unit, "attainment (lower bound)", fmt_num, |y| {
            format!("{}%", (y * 100.0).round())
        });
        let mut names: Vec<(String, f64)> = Vec::new();
        for p in &s.points {
            for t in &p.targets {
                if !names.iter().any(|x| x.0 == t.name) {
                    names.push((t.name.clone(), t.target));
                }
            }
        }
        for (i, (name, target)) in names.iter().enumerate() {
            let class = format!("s{}", i % 6);
            let pts: Vec<(f64, f64)> = s
                .points
                .iter()
                .filter_map(|p| {
                    p.targets
                        .iter()
                        .find(|t| &t.name == name)
                        .map(|t| (p.load, t.attainment_lower.unwrap_or(f64::NAN)))
                })
                .collect();
            plot.line(
                &pts,
                &class,
                &format!("{name} (target {})", pct(Some(*target))),
            );
            let hover: Vec<String> = s
                .points
                .iter()
                .map(|p| format!("{} at {}: {}", p.case, fmt_num(p.load), p.verdict))
                .collect();
            let dots: Vec<(f64, f64, f64, f64)> = pts
                .iter()
                .map(|(x, y)| (*x, *y, f64::NAN, f64::NAN))
                .collect();
            plot.points(&dots, &hover, &class);
            plot.hmark(
                *target,
                "mark",
                &format!("{name} target {}", pct(Some(*target))),
            );
        }
        if let Some(c) = s.capacity {
            plot.vmark(c, "thr", &format!("capacity {}", fmt_num(c)), 0);
        }
        let rows = s
            .points
            .iter()
            .map(|p| {
                vec![
                    p.run_id.clone(),
                    p.case.clone(),
                    fmt_num(p.load),
                    p.verdict.to_owned(),
                    p.targets
                        .iter()
                        .map(|t| {
                            format!(
                                "{} {} (lower {})",
                                t.name,
                                t.outcome,
                                pct(t.attainment_lower)
                            )
                        })
                        .collect::<Vec<_>>()
                        .join("; "),
                ]
            })
            .collect();
        let title = format!("Capacity sweep {} ({})", n + 1, s.status.replace('_', " "));
        sections.push(Section {
            title: title.clone(),
            anchor: format!("sweep-{}", n + 1),
            charts: vec![Chart {
                svg: plot.finish(&title),
                caption: match s.capacity {
                    Some(c) => format!(
                        "Capacity {} {unit}, where {} crosses its target between the last passing and the first failing case.",
                        fmt_num(c),
                        s.binding_target.as_deref().unwrap_or("the binding target")
                    ),
                    None => format!("No capacity: the sweep is {}.", s.status.replace('_', " ")),
                },
                title,
                table: Table {
                    head: ["run", "case", unit, "verdict", "targets"].map(String::from).to_vec(),
                    rows,
                },
            }],
        });
    }
    page(
        "stormlog slo capacity",
        "Each sweep's cases by load, the attainment of each target, and the capacity where one is bracketed.",
        sections,
    )
}
