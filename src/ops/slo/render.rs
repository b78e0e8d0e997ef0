//! The `slo` results as text tables, JSON (the serde form of the result
//! types, which the HTML report can read back) and CSV (one row per point,
//! frontier, criterion, sweep point or flipped request). Renderers return
//! strings.

use serde::Serialize;

use super::binding::BindingCase;
use super::capacity::Sweep;
use super::curve::Curve;
use super::diff::CaseDiff;
use super::frontier::Frontier;

/// Output format of a `slo` command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Txt,
    Json,
    Csv,
}

/// Pretty JSON and a newline.
pub fn json<T: Serialize>(value: &T) -> String {
    let mut s = serde_json::to_string_pretty(value).unwrap_or_else(|e| format!("{e}"));
    s.push('\n');
    s
}

fn field(s: &str) -> String {
    crate::output::csv_field(s)
}

fn num(x: Option<f64>) -> String {
    x.map_or_else(String::new, |v| v.to_string())
}

fn csv(header: &[&str], rows: Vec<Vec<String>>) -> String {
    let mut out = header.join(",");
    out.push('\n');
    for row in rows {
        let cells: Vec<String> = row.iter().map(|c| field(c)).collect();
        out.push_str(&cells.join(","));
        out.push('\n');
    }
    out
}

fn pct(x: Option<f64>) -> String {
    x.map_or_else(|| "-".into(), |v| crate::py::float::percent(v, 1, false))
}

fn bounds(lo: Option<f64>, hi: Option<f64>) -> String {
    if lo == hi {
        pct(lo)
    } else {
        format!("{}-{}", pct(lo), pct(hi))
    }
}

fn ms(x: Option<f64>) -> String {
    x.map_or_else(|| "-".into(), |v| format!("{v:.2}"))
}

pub fn curves(curves: &[Curve], format: Format) -> String {
    let joint = curves.iter().any(|c| c.joint_policy.is_some());
    match format {
        Format::Json => json(&curves),
        Format::Csv => {
            let mut header = vec![
                "run_id",
                "case",
                "criterion",
                "threshold_ms",
                "pass",
                "fail",
                "unknown",
                "not_applicable",
                "attainment_lower",
                "attainment_upper",
            ];
            if joint {
                header.extend([
                    "joint_met",
                    "joint_missed",
                    "joint_unknown",
                    "joint_attainment_lower",
                    "joint_attainment_upper",
                ]);
            }
            let rows = curves
                .iter()
                .flat_map(|c| {
                    c.points.iter().map(move |p| {
                        let mut row = vec![
                            c.run_id.clone(),
                            c.case.clone(),
                            c.criterion.clone(),
                            p.threshold_ms.to_string(),
                            p.pass.to_string(),
                            p.fail.to_string(),
                            p.unknown.to_string(),
                            p.not_applicable.to_string(),
                            num(p.attainment_lower),
                            num(p.attainment_upper),
                        ];
                        if let Some(j) = &p.joint {
                            row.extend([
                                j.met.to_string(),
                                j.missed.to_string(),
                                j.unknown.to_string(),
                                num(j.attainment_lower),
                                num(j.attainment_upper),
                            ]);
                        }
                        row
                    })
                })
                .collect();
            csv(&header, rows)
        }
        Format::Txt => {
            let mut header = vec![
                "RUN",
                "CASE",
                "CRITERION",
                "THRESHOLD (ms)",
                "PASS",
                "FAIL",
                "UNKNOWN",
                "N/A",
                "ATTAINMENT",
            ];
            if joint {
                header.push("JOINT");
            }
            let rows: Vec<Vec<String>> = curves
                .iter()
                .flat_map(|c| {
                    c.points.iter().map(move |p| {
                        let mut row = vec![
                            c.run_id.clone(),
                            c.case.clone(),
                            c.criterion.clone(),
                            ms(Some(p.threshold_ms)),
                            p.pass.to_string(),
                            p.fail.to_string(),
                            p.unknown.to_string(),
                            p.not_applicable.to_string(),
                            bounds(p.attainment_lower, p.attainment_upper),
                        ];
                        if let Some(j) = &p.joint {
                            row.push(bounds(j.attainment_lower, j.attainment_upper));
                        }
                        row
                    })
                })
                .collect();
            crate::util::table(&header, &rows)
        }
    }
}

pub fn frontiers(rows: &[Frontier], format: Format) -> String {
    match format {
        Format::Json => json(&rows),
        Format::Csv => csv(
            &[
                "run_id",
                "case",
                "criterion",
                "target",
                "threshold_ms",
                "lower_ms",
                "upper_ms",
                "status",
            ],
            rows.iter()
                .map(|f| {
                    vec![
                        f.run_id.clone(),
                        f.case.clone(),
                        f.criterion.clone(),
                        f.target.to_string(),
                        num(f.threshold_ms),
                        num(f.lower_ms),
                        num(f.upper_ms),
                        f.status.to_owned(),
                    ]
                })
                .collect(),
        ),
        Format::Txt => crate::util::table(
            &[
                "RUN",
                "CASE",
                "CRITERION",
                "TARGET",
                "THRESHOLD (ms)",
                "INTERVAL (ms)",
                "STATUS",
            ],
            &rows
                .iter()
                .map(|f| {
                    vec![
                        f.run_id.clone(),
                        f.case.clone(),
                        f.criterion.clone(),
                        pct(Some(f.target)),
                        ms(f.threshold_ms),
                        if f.status == "reached" {
                            format!("{} .. {}", ms(f.lower_ms), ms(f.upper_ms))
                        } else {
                            "-".into()
                        },
                        match &f.reason {
                            Some(r) => format!("{} ({r})", f.status),
                            None => f.status.to_owned(),
                        },
                    ]
                })
                .collect::<Vec<_>>(),
        ),
    }
}

pub fn bindings(cases: &[BindingCase], format: Format) -> String {
    let rows = || {
        cases.iter().flat_map(|b| {
            b.criteria
                .iter()
                .map(move |c| (b, c, b.binding.contains(&c.criterion)))
        })
    };
    match format {
        Format::Json => json(&cases),
        Format::Csv => csv(
            &[
                "run_id",
                "case",
                "criterion",
                "threshold_ms",
                "attainment_lower",
                "attainment_upper",
                "binding",
                "joint_lower",
                "joint_upper",
                "joint_without_lower",
                "joint_without_upper",
                "verdict",
                "holds_down_to_ms",
                "changes_at_ms",
            ],
            rows()
                .map(|(b, c, binding)| {
                    vec![
                        b.run_id.clone(),
                        b.case.clone(),
                        c.criterion.clone(),
                        c.threshold_ms.to_string(),
                        num(c.attainment_lower),
                        num(c.attainment_upper),
                        binding.to_string(),
                        num(b.joint_lower),
                        num(b.joint_upper),
                        num(c.joint_without_lower),
                        num(c.joint_without_upper),
                        b.verdict.to_owned(),
                        num(c.holds_down_to_ms),
                        num(c.changes_at_ms),
                    ]
                })
                .collect(),
        ),
        Format::Txt => crate::util::table(
            &[
                "RUN",
                "CASE",
                "CRITERION",
                "LIMIT (ms)",
                "ATTAINMENT",
                "JOINT",
                "JOINT WITHOUT",
                "VERDICT",
                "HOLDS FROM (ms)",
                "CHANGES AT (ms)",
            ],
            &rows()
                .map(|(b, c, binding)| {
                    vec![
                        b.run_id.clone(),
                        b.case.clone(),
                        if binding {
                            format!("{} (binds)", c.criterion)
                        } else {
                            c.criterion.clone()
                        },
                        ms(Some(c.threshold_ms)),
                        bounds(c.attainment_lower, c.attainment_upper),
                        bounds(b.joint_lower, b.joint_upper),
                        bounds(c.joint_without_lower, c.joint_without_upper),
                        b.verdict.to_owned(),
                        ms(c.holds_down_to_ms),
                        ms(c.changes_at_ms),
                    ]
                })
                .collect::<Vec<_>>(),
        ),
    }
}

pub fn capacities(sweeps: &[Sweep], format: Format) -> String {
    match format {
        Format::Json => json(&sweeps),
        Format::Csv => csv(
            &[
                "sweep",
                "load_kind",
                "status",
                "capacity",
                "binding_target",
                "run_id",
                "case",
                "load",
                "verdict",
            ],
            sweeps
                .iter()
                .enumerate()
                .flat_map(|(i, s)| {
                    s.points.iter().map(move |p| {
                        vec![
                            (i + 1).to_string(),
                            s.load.to_owned(),
                            s.status.to_owned(),
                            num(s.capacity),
                            s.binding_target.clone().unwrap_or_default(),
                            p.run_id.clone(),
                            p.case.clone(),
                            p.load.to_string(),
                            p.verdict.to_owned(),
                        ]
                    })
                })
                .collect(),
        ),
        Format::Txt => {
            let mut out = String::new();
            for (i, s) in sweeps.iter().enumerate() {
                let head = match (s.status, s.capacity) {
                    ("bracketed", Some(c)) => format!(
                        "capacity {c:.2} ({} between {} and {}, on {})",
                        s.load,
                        s.last_passing.as_ref().map_or(0.0, |p| p.load),
                        s.first_failing.as_ref().map_or(0.0, |p| p.load),
                        s.binding_target.as_deref().unwrap_or("-")
                    ),
                    ("all_pass", _) => {
                        "all_pass: every point meets the targets; capacity is above the sweep"
                            .into()
                    }
                    ("none_pass", _) => {
                        "none_pass: no point meets the targets; capacity is below the sweep".into()
                    }
                    _ => "not_monotone: passing does not fall with load; no capacity".into(),
                };
                out.push_str(&format!(
                    "Sweep {} ({}, workload {}): {head}\n",
                    i + 1,
                    s.load,
                    serde_json::to_string(&s.workload).unwrap_or_default()
                ));
                let rows: Vec<Vec<String>> = s
                    .points
                    .iter()
                    .map(|p| {
                        vec![
                            p.run_id.clone(),
                            p.case.clone(),
                            p.load.to_string(),
                            p.verdict.to_owned(),
                            p.targets
                                .iter()
                                .map(|t| {
                                    format!(
                                        "{} {} >= {}",
                                        t.name,
                                        pct(t.attainment_lower),
                                        pct(Some(t.target))
                                    )
                                })
                                .collect::<Vec<_>>()
                                .join(", "),
                        ]
                    })
                    .collect();
                out.push_str(&crate::util::table(
                    &["RUN", "CASE", "LOAD", "VERDICT", "TARGETS (lower bound)"],
                    &rows,
                ));
                out.push('\n');
            }
            out
        }
    }
}

pub fn diffs(cases: &[CaseDiff], format: Format) -> String {
    match format {
        Format::Json => json(&cases),
        Format::Csv => {
            let mut rows = Vec::new();
            for d in cases {
                let flips = d.verdict_flips.iter().map(|f| ("joint", f)).chain(
                    d.criteria
                        .iter()
                        .flat_map(|c| c.flips.iter().map(move |f| (c.criterion.as_str(), f))),
                );
                for (criterion, f) in flips {
                    for id in &f.request_ids {
                        rows.push(vec![
                            d.run_id.clone(),
                            d.case.clone(),
                            criterion.to_owned(),
                            id.clone(),
                            f.from.to_owned(),
                            f.to.to_owned(),
                        ]);
                    }
                }
            }
            csv(
                &[
                    "run_id",
                    "case",
                    "criterion",
                    "request_id",
                    "against",
                    "slo",
                ],
                rows,
            )
        }
        Format::Txt => {
            let mut rows = Vec::new();
            for d in cases {
                let flips = |v: &[super::diff::Flip]| {
                    if v.is_empty() {
                        "none".to_owned()
                    } else {
                        v.iter()
                            .map(|f| format!("{} {}->{}", f.count, f.from, f.to))
                            .collect::<Vec<_>>()
                            .join(", ")
                    }
                };
                rows.push(vec![
                    d.run_id.clone(),
                    d.case.clone(),
                    "joint".into(),
                    format!(
                        "{} {}",
                        bounds(d.against.attainment_lower, d.against.attainment_upper),
                        d.against.verdict
                    ),
                    format!(
                        "{} {}",
                        bounds(d.slo.attainment_lower, d.slo.attainment_upper),
                        d.slo.verdict
                    ),
                    flips(&d.verdict_flips),
                ]);
                for c in &d.criteria {
                    rows.push(vec![
                        d.run_id.clone(),
                        d.case.clone(),
                        c.criterion.clone(),
                        format!("{} ms: {} pass", c.against_ms, c.against_pass),
                        format!("{} ms: {} pass", c.slo_ms, c.slo_pass),
                        flips(&c.flips),
                    ]);
                }
            }
            crate::util::table(
                &["RUN", "CASE", "CRITERION", "AGAINST", "SLO", "CHANGED"],
                &rows,
            )
        }
    }
}
