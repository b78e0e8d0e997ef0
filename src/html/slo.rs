//! Pages of `stormlog slo curve` (attainment against threshold, per case and
//! criterion, with its bounds) and `stormlog slo capacity` (each target's
//! attainment against the load of a sweep, the capacity point marked).
use serde::Serialize;

use super::svg::{fmt_num, Plot};
use super::{Chart, Table};
use crate::slo::answers::{BindingCase, CaseDiff, Curve, Frontier, Sweep};

fn pct(x: Option<f64>) -> String {
    x.map_or("–".into(), |v| crate::py::float::percent(v, 1, false))
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
        let title = format!("Attainment against threshold: run {run}, case {case}");
        sections.push(Section {
            title: format!("Run {run}, case {case}"),
            anchor: super::escape::id("curve", &format!("{run}/{case}")),
            charts: vec![curve_chart(&title, &cs)],
        });
    }
    page(
        "stormlog slo curve",
        "Attainment as the threshold moves, per run, case and criterion.",
        sections,
    )
}

/// One chart of attainment against threshold: a line per curve (the lower
/// bound), its band up to the upper bound, a dot per threshold carrying the
/// exact figures; the same numbers as a table.
pub fn curve_chart(title: &str, cs: &[&Curve]) -> Chart {
    curve_chart_in(title, cs, (860.0, 300.0), None)
}

/// [`curve_chart`] on a canvas of `size` (the run page draws it beside
/// another at the size of its CDFs, so its text keeps the page's size), with
/// the policy's threshold marked where there is one.
pub fn curve_chart_in(
    title: &str,
    cs: &[&Curve],
    size: (f64, f64),
    threshold: Option<f64>,
) -> Chart {
    {
        let xmax = cs
            .iter()
            .flat_map(|c| c.points.iter().map(|p| p.threshold_ms))
            .fold(1.0, f64::max);
        let xmin = cs
            .iter()
            .flat_map(|c| c.points.iter().map(|p| p.threshold_ms))
            .fold(xmax, f64::min)
            .min(0.0);
        let mut plot = Plot::new(size.0, size.1, (xmin, xmax), (0.0, 1.0));
        plot.axes_with(
            "threshold (ms)",
            "attainment (share of offered requests)",
            fmt_num,
            |y| format!("{}%", (y * 100.0).round()),
        );
        match threshold {
            Some(t) if (xmin..=xmax).contains(&t) => {
                plot.vmark(t, "thr", &format!("SLO {} ms", fmt_num(t)), 3)
            }
            Some(t) => plot.note(&format!(
                "SLO threshold {} ms: beyond the axis →",
                fmt_num(t)
            )),
            None => {}
        }
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
            let dots: Vec<(f64, f64, f64, f64)> = line
                .iter()
                .map(|(x, y)| (*x, *y, f64::NAN, f64::NAN))
                .collect();
            let hover: Vec<String> = c
                .points
                .iter()
                .map(|p| {
                    format!(
                        "{} ≤ {} ms: [{}, {}]",
                        c.criterion,
                        fmt_num(p.threshold_ms),
                        pct(p.attainment_lower),
                        pct(p.attainment_upper)
                    )
                })
                .collect();
            plot.points(&dots, &hover, &class);
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
        Chart {
            svg: plot.finish(title),
            title: title.to_owned(),
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
        }
    }
}

/// The `slo capacity` page: per sweep, each target's attainment (lower
/// bound) against the load, the target as a line, the capacity marked.
pub fn capacities(sweeps: &[Sweep]) -> Result<String, String> {
    let mut sections = Vec::new();
    for (n, s) in sweeps.iter().enumerate() {
        let title = format!("Capacity sweep {} ({})", n + 1, s.status.replace('_', " "));
        sections.push(Section {
            title: title.clone(),
            anchor: format!("sweep-{}", n + 1),
            charts: vec![capacity_chart(&title, s)],
        });
    }
    page(
        "stormlog slo capacity",
        "Each sweep's cases by load, the attainment of each target, and the capacity where one is bracketed.",
        sections,
    )
}

/// One sweep: each target's attainment (lower bound) against the load, the
/// targets as lines, the capacity marked where one is bracketed.
pub fn capacity_chart(title: &str, s: &Sweep) -> Chart {
    {
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
            // Later lines dashed: targets whose attainments coincide (a
            // single criterion and the joint one) both stay visible.
            let line_class = if i > 0 {
                format!("{class} dash")
            } else {
                class.clone()
            };
            plot.line(
                &pts,
                &line_class,
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
        Chart {
                svg: plot.finish(title),
                caption: match s.capacity {
                    Some(c) => format!(
                        "Capacity {} {unit}, where {} crosses its target between the last passing and the first failing case.",
                        fmt_num(c),
                        s.binding_target.as_deref().unwrap_or("the binding target")
                    ),
                    None => format!("No capacity: the sweep is {}.", s.status.replace('_', " ")),
                },
                title: title.to_owned(),
                table: Table {
                    head: ["run", "case", unit, "verdict", "targets"].map(String::from).to_vec(),
                    rows,
                },
        }
    }
}

/// Groups items by run, in first-seen order.
fn by_run<T>(items: &[T], run: impl Fn(&T) -> &str) -> Vec<(String, Vec<&T>)> {
    let mut groups: Vec<(String, Vec<&T>)> = Vec::new();
    for it in items {
        let r = run(it);
        match groups.iter_mut().find(|g| g.0 == r) {
            Some(g) => g.1.push(it),
            None => groups.push((r.to_owned(), vec![it])),
        }
    }
    groups
}

fn ms(x: Option<f64>) -> String {
    x.map_or("–".into(), fmt_num)
}

/// The `slo frontier` page: per run and criterion, each case's smallest
/// threshold meeting the target (a dot) with its confidence interval (a bar);
/// unreachable cases are in the table with the reason.
pub fn frontiers(rows: &[Frontier]) -> Result<String, String> {
    let mut sections = Vec::new();
    for (run, fs) in by_run(rows, |f| f.run_id.as_str()) {
        let mut charts = Vec::new();
        let mut criteria: Vec<&str> = Vec::new();
        for f in &fs {
            if !criteria.contains(&f.criterion.as_str()) {
                criteria.push(&f.criterion);
            }
        }
        for crit in criteria {
            let these: Vec<&&Frontier> = fs.iter().filter(|f| f.criterion == crit).collect();
            let hi = these
                .iter()
                .flat_map(|f| [f.threshold_ms, f.upper_ms])
                .flatten()
                .fold(1.0, f64::max);
            let names: Vec<String> = these.iter().map(|f| f.case.clone()).collect();
            let items: Vec<(usize, f64, f64, f64, String, String)> = these
                .iter()
                .enumerate()
                .map(|(i, f)| {
                    (
                        i,
                        f.threshold_ms.unwrap_or(f64::NAN),
                        f.lower_ms.unwrap_or(f64::NAN),
                        f.upper_ms.unwrap_or(f64::NAN),
                        if f.status == "reached" { "s0" } else { "s1" }.to_owned(),
                        match f.threshold_ms {
                            Some(t) => format!(
                                "{}: {} ms [{}, {}] for {} at {}",
                                f.case,
                                fmt_num(t),
                                ms(f.lower_ms),
                                ms(f.upper_ms),
                                crit,
                                pct(Some(f.target))
                            ),
                            None => format!("{}: unreachable", f.case),
                        },
                    )
                })
                .collect();
            let mut plot = Plot::categories(860.0, (0.0, hi * 1.05), names.len());
            plot.category_axes(&format!("{crit} threshold (ms)"), &names, fmt_num);
            plot.intervals(&items);
            let title = format!("Frontier of {crit}, run {run}");
            let conf = these.first().map_or(0.95, |f| f.confidence);
            charts.push(Chart {
                svg: plot.finish(&title),
                caption: format!(
                    "Per case, the smallest {crit} threshold whose attainment (lower bound) reaches {} (the dot) and its {} confidence interval (the bar); an unreachable case has no dot (the table gives why).",
                    pct(these.first().map(|f| f.target)),
                    pct(Some(conf))
                ),
                title,
                table: Table {
                    head: ["case", "status", "threshold (ms)", "interval (ms)", "attainment at it", "values", "reason"]
                        .map(String::from)
                        .to_vec(),
                    rows: these
                        .iter()
                        .map(|f| {
                            vec![
                                f.case.clone(),
                                f.status.to_owned(),
                                ms(f.threshold_ms),
                                format!("[{}, {}]", ms(f.lower_ms), ms(f.upper_ms)),
                                pct(f.attainment_lower),
                                f.values.to_string(),
                                f.reason.clone().unwrap_or_else(|| "–".into()),
                            ]
                        })
                        .collect(),
                },
            });
        }
        sections.push(Section {
            title: format!("Run {run}"),
            anchor: super::escape::id("frontier", &run),
            charts,
        });
    }
    page(
        "stormlog slo frontier",
        "The tightest threshold that still meets the target, per run, case and criterion.",
        sections,
    )
}

/// The `slo binding` page: per case, the joint attainment and each
/// criterion's (and the joint without it) as bars from the lower to the
/// upper bound, the binding criteria in red, with how far each limit can
/// move before the verdict changes in the table.
pub fn bindings(cases: &[BindingCase]) -> Result<String, String> {
    let mut sections = Vec::new();
    for (run, bs) in by_run(cases, |b| b.run_id.as_str()) {
        let mut charts = Vec::new();
        for b in bs {
            let mut names = vec![format!("joint ({})", b.policy)];
            let mut items = vec![(
                0usize,
                b.joint_lower.unwrap_or(f64::NAN),
                b.joint_lower.unwrap_or(f64::NAN),
                b.joint_upper.unwrap_or(f64::NAN),
                "s2".to_owned(),
                format!(
                    "joint: [{}, {}]; {}",
                    pct(b.joint_lower),
                    pct(b.joint_upper),
                    b.verdict
                ),
            )];
            for c in &b.criteria {
                let binds = b.binding.contains(&c.criterion);
                items.push((
                    names.len(),
                    c.attainment_lower.unwrap_or(f64::NAN),
                    c.attainment_lower.unwrap_or(f64::NAN),
                    c.attainment_upper.unwrap_or(f64::NAN),
                    if binds { "s1" } else { "s0" }.to_owned(),
                    format!(
                        "{} ≤ {} ms: [{}, {}]{}",
                        c.criterion,
                        fmt_num(c.threshold_ms),
                        pct(c.attainment_lower),
                        pct(c.attainment_upper),
                        if binds { "; binding" } else { "" }
                    ),
                ));
                names.push(format!(
                    "{} ≤ {} ms{}",
                    c.criterion,
                    fmt_num(c.threshold_ms),
                    if binds { " (binds)" } else { "" }
                ));
            }
            for c in &b.criteria {
                items.push((
                    names.len(),
                    c.joint_without_lower.unwrap_or(f64::NAN),
                    c.joint_without_lower.unwrap_or(f64::NAN),
                    c.joint_without_upper.unwrap_or(f64::NAN),
                    "s3".to_owned(),
                    format!(
                        "joint without {}: [{}, {}]",
                        c.criterion,
                        pct(c.joint_without_lower),
                        pct(c.joint_without_upper)
                    ),
                ));
                names.push(format!("joint without {}", c.criterion));
            }
            let mut plot = Plot::categories(860.0, (0.0, 1.0), names.len());
            plot.category_axes("attainment (share of offered requests)", &names, |x| {
                format!("{}%", (x * 100.0).round())
            });
            if let Some(t) = b.joint_target {
                plot.vmark(t, "thr", &format!("joint target {}", pct(Some(t))), 0);
            }
            plot.intervals(&items);
            for (class, name) in [
                ("s2", "joint"),
                ("s1", "binding criterion"),
                ("s0", "other criterion"),
                ("s3", "joint without the criterion"),
            ] {
                plot.legend_entry(class, name);
            }
            let title = format!("Binding criteria, run {run}, case {}", b.case);
            charts.push(Chart {
                svg: plot.finish(&title),
                caption: format!(
                    "Case {} of {} offered requests under {}: verdict {}. Each bar runs from the attainment's lower to its upper bound; red marks the binding criterion (the lowest attainment).",
                    b.case, b.offered, b.policy, b.verdict
                ),
                title,
                table: Table {
                    head: ["criterion", "limit (ms)", "target", "attainment [lower, upper]", "joint without it", "verdict holds down to (ms)", "verdict changes at (ms)"]
                        .map(String::from)
                        .to_vec(),
                    rows: b
                        .criteria
                        .iter()
                        .map(|c| {
                            vec![
                                c.criterion.clone(),
                                fmt_num(c.threshold_ms),
                                pct(c.target),
                                format!("[{}, {}]", pct(c.attainment_lower), pct(c.attainment_upper)),
                                format!("[{}, {}]", pct(c.joint_without_lower), pct(c.joint_without_upper)),
                                ms(c.holds_down_to_ms),
                                ms(c.changes_at_ms),
                            ]
                        })
                        .collect(),
                },
            });
        }
        sections.push(Section {
            title: format!("Run {run}"),
            anchor: super::escape::id("binding", &run),
            charts,
        });
    }
    page(
        "stormlog slo binding",
        "Which criterion binds: each criterion's attainment beside the joint one, and the joint attainment without each.",
        sections,
    )
}

/// The `slo diff` page: per run, each case's joint attainment under both
/// policies (bars from lower to upper bound), and the requests that change
/// verdict, per criterion, in the table.
pub fn diffs(cases: &[CaseDiff]) -> Result<String, String> {
    let mut sections = Vec::new();
    for (run, ds) in by_run(cases, |d| d.run_id.as_str()) {
        let mut names = Vec::new();
        let mut items = Vec::new();
        let mut rows = Vec::new();
        for d in &ds {
            for (side, class, which) in [(&d.against, "s0", "--against"), (&d.slo, "s1", "--slo")] {
                items.push((
                    names.len(),
                    side.attainment_lower.unwrap_or(f64::NAN),
                    side.attainment_lower.unwrap_or(f64::NAN),
                    side.attainment_upper.unwrap_or(f64::NAN),
                    class.to_owned(),
                    format!(
                        "{} under {} ({which}): [{}, {}]; {}",
                        d.case,
                        side.policy,
                        pct(side.attainment_lower),
                        pct(side.attainment_upper),
                        side.verdict
                    ),
                ));
                names.push(format!("{} · {which} {}", d.case, side.policy));
            }
            let flips = |fs: &[crate::slo::answers::Flip]| {
                if fs.is_empty() {
                    "none".to_owned()
                } else {
                    fs.iter()
                        .map(|f| format!("{} → {}: {}", f.from, f.to, f.count))
                        .collect::<Vec<_>>()
                        .join(", ")
                }
            };
            rows.push(vec![
                d.case.clone(),
                "joint".into(),
                "–".into(),
                format!("{} ({})", d.against.verdict, d.against.policy),
                format!("{} ({})", d.slo.verdict, d.slo.policy),
                flips(&d.verdict_flips),
            ]);
            for c in &d.criteria {
                rows.push(vec![
                    d.case.clone(),
                    c.criterion.clone(),
                    format!("{} → {}", fmt_num(c.against_ms), fmt_num(c.slo_ms)),
                    format!("{} pass", c.against_pass),
                    format!("{} pass", c.slo_pass),
                    flips(&c.flips),
                ]);
            }
        }
        let mut plot = Plot::categories(860.0, (0.0, 1.0), names.len());
        plot.category_axes(
            "joint attainment (share of offered requests)",
            &names,
            |x| format!("{}%", (x * 100.0).round()),
        );
        plot.intervals(&items);
        plot.legend_entry("s0", "--against");
        plot.legend_entry("s1", "--slo");
        let title = format!("Attainment under both policies, run {run}");
        sections.push(Section {
            title: format!("Run {run}"),
            anchor: super::escape::id("diff", &run),
            charts: vec![Chart {
                svg: plot.finish(&title),
                caption: "Per case, the joint attainment under the --against policy (blue) and the --slo policy (red), each a bar from its lower to its upper bound; the table counts the requests whose outcome changes.".into(),
                title,
                table: Table {
                    head: ["case", "criterion", "limit (ms), against → slo", "under --against", "under --slo", "requests that flip"]
                        .map(String::from)
                        .to_vec(),
                    rows,
                },
            }],
        });
    }
    page(
        "stormlog slo diff",
        "Requests whose verdict differs between two policies, and the attainment under each.",
        sections,
    )
}
