//! `history`'s and `history check`'s results as text, JSON and CSV. Each
//! renderer returns the whole output; the CLI writes it.

use serde_json::{json, Value};

use super::check::{CaseCheck, MetricCheck};
use super::listing::{scale_of, SeriesListing};
use super::series::HEADLINE;
use crate::compare::stats::{Estimate, GateOutcome, RunValue, LOG_RATIO};
use crate::output::csv_field;

fn utc(ns: Option<i64>) -> String {
    ns.map_or("-".into(), |ns| {
        crate::util::iso8601_utc_signed(ns.div_euclid(1_000_000_000))
    })
}

fn finite(x: f64) -> Value {
    serde_json::Number::from_f64(x).map_or(Value::Null, Value::Number)
}

fn value_json(v: RunValue) -> Value {
    match v {
        RunValue::Missing => Value::Null,
        RunValue::Point(x) => finite(x),
        RunValue::Range(a, b) => json!({"lower": finite(a), "upper": finite(b)}),
    }
}

/// A figure for a table: milliseconds and rates with two decimals, fractions as percent.
fn figure(metric: &str, v: RunValue) -> String {
    let one = |x: f64| {
        if metric == "failure_fraction" || metric == "attainment" {
            format!("{:.1}%", x * 100.0)
        } else {
            format!("{x:.2}")
        }
    };
    match v {
        RunValue::Missing => "-".into(),
        RunValue::Point(x) => one(x),
        RunValue::Range(a, b) if a == b => one(a),
        RunValue::Range(a, b) => format!("{}..{}", one(a), one(b)),
    }
}

/// A change on its scale: `+12.3%` for a ratio, `+0.0123` for a difference.
fn change(scale: &str, x: Option<f64>) -> String {
    let shown = match x {
        None => return "-".into(),
        Some(x) if scale == LOG_RATIO => format!("{:+.1}%", x * 100.0),
        Some(x) => format!("{x:+.4}"),
    };
    // A change that rounds to nothing has no sign.
    if shown
        .trim_start_matches(['-', '+'])
        .chars()
        .all(|c| "0.%".contains(c))
    {
        shown.replacen('-', "+", 1)
    } else {
        shown
    }
}

fn header_of(metric: &str) -> String {
    match metric {
        "throughput_rps" => "RPS".into(),
        "failure_fraction" => "FAIL".into(),
        "attainment" => "ATTAIN".into(),
        m => {
            // client.ttft.p50 -> TTFT p50
            let mut parts = m.split('.').skip(1);
            let key = parts.next().unwrap_or("").to_uppercase();
            format!("{key} {}", parts.next().unwrap_or(""))
        }
    }
}

fn labels_text(s: &SeriesListing) -> String {
    s.series
        .labels
        .iter()
        .map(|(n, v)| format!("{n} {}", v.as_deref().unwrap_or("-")))
        .collect::<Vec<_>>()
        .join(", ")
}

/// `stormlog history` as text: each series, its runs and its change points.
pub fn listing_text(series: &[SeriesListing], runs: usize) -> String {
    let mut out = String::new();
    if series.is_empty() {
        out.push_str(&format!(
            "(no series: {runs} stored runs; `stormlog ingest FILE` adds one)\n"
        ));
        return out;
    }
    for (n, s) in series.iter().enumerate() {
        if n > 0 {
            out.push('\n');
        }
        let count = s.runs.len();
        out.push_str(&format!(
            "series {}: case {}, {}, {count} run{}\n",
            s.series.key,
            s.series.case_id,
            labels_text(s),
            if count == 1 { "" } else { "s" }
        ));
        out.push_str(&format!("  comparability: {}", s.series.status));
        if !s.series.unverified.is_empty() {
            out.push_str(&format!(
                " (not known to agree: {})",
                s.series.unverified.join(", ")
            ));
        }
        out.push('\n');
        if !s.series.allowed.is_empty() {
            out.push_str(&format!(
                "  allowed to differ: {}\n",
                s.series.allowed.join(", ")
            ));
        }
        let mut header = vec!["RUN".to_owned(), "STARTED (UTC)".to_owned()];
        header.extend(HEADLINE.iter().map(|m| header_of(m)));
        let header: Vec<&str> = header.iter().map(String::as_str).collect();
        let body: Vec<Vec<String>> = s
            .runs
            .iter()
            .map(|(id, started, figures)| {
                let mut row = vec![id.clone(), utc(*started)];
                row.extend(HEADLINE.iter().map(|m| {
                    figures
                        .iter()
                        .find(|(n, _)| n == m)
                        .map_or("-".into(), |(_, v)| figure(m, *v))
                }));
                row
            })
            .collect();
        for line in crate::util::table(&header, &body).lines() {
            out.push_str("  ");
            out.push_str(line);
            out.push('\n');
        }
        if s.shifts.is_empty() {
            out.push_str("  change points: none\n");
        } else {
            out.push_str("  change points:\n");
            for c in &s.shifts {
                let scale = scale_of(&c.metric);
                out.push_str(&format!(
                    "    {}: from run {}: {} ({} -> {}), p {:.2e} adjusted, {} runs before, {} after\n",
                    c.metric,
                    c.run_id,
                    change(scale, Some(c.shift.change)),
                    figure(&c.metric, RunValue::Point(c.shift.before)),
                    figure(&c.metric, RunValue::Point(c.shift.after)),
                    c.shift.p_adjusted,
                    c.shift.runs_before,
                    c.shift.runs_after
                ));
            }
        }
    }
    out
}

fn series_json(s: &SeriesListing) -> Value {
    let runs: Vec<Value> = s
        .runs
        .iter()
        .map(|(id, started, figures)| {
            let figures: serde_json::Map<String, Value> = figures
                .iter()
                .map(|(n, v)| ((*n).to_owned(), value_json(*v)))
                .collect();
            json!({"run_id": id, "started_at_ns": started, "started_at": utc(*started), "figures": figures})
        })
        .collect();
    let shifts: Vec<Value> = s
        .shifts
        .iter()
        .map(|c| {
            json!({
                "metric": c.metric,
                "scale": scale_of(&c.metric),
                "first_run": c.run_id,
                "index": c.shift.index,
                "before": finite(c.shift.before),
                "after": finite(c.shift.after),
                "change": finite(c.shift.change),
                "t": finite(c.shift.t),
                "p_adjusted": finite(c.shift.p_adjusted),
                "runs_before": c.shift.runs_before,
                "runs_after": c.shift.runs_after,
            })
        })
        .collect();
    let labels: serde_json::Map<String, Value> = s
        .series
        .labels
        .iter()
        .map(|(n, v)| (n.clone(), v.clone().map_or(Value::Null, Value::String)))
        .collect();
    json!({
        "key": s.series.key,
        "case_id": s.series.case_id,
        "labels": labels,
        "comparability": s.series.status,
        "unverified": s.series.unverified,
        "allowed": s.series.allowed,
        "runs": runs,
        "change_points": shifts,
    })
}

/// `stormlog history --format json`.
pub fn listing_json(series: &[SeriesListing], runs: usize, method: &Value) -> String {
    let doc = json!({
        "kind": "stormlog.history",
        "version": 1,
        "stored_runs": runs,
        "change_point_method": method,
        "series": series.iter().map(series_json).collect::<Vec<_>>(),
    });
    serde_json::to_string_pretty(&doc).unwrap_or_default() + "\n"
}

/// `stormlog history --format csv`: one row per run of each series; the
/// change points starting at a run are listed in its `change_points` column.
pub fn listing_csv(series: &[SeriesListing]) -> String {
    let mut header = vec![
        "series".to_owned(),
        "case_id".to_owned(),
        "experiment".to_owned(),
        "arm".to_owned(),
        "comparability".to_owned(),
        "run_id".to_owned(),
        "started_at".to_owned(),
    ];
    header.extend(HEADLINE.iter().map(|m| (*m).to_owned()));
    header.push("change_points".into());
    let mut out = header.join(",") + "\n";
    for s in series {
        let label = |name: &str| {
            s.series
                .labels
                .iter()
                .find(|(n, _)| n == name)
                .and_then(|(_, v)| v.clone())
                .unwrap_or_default()
        };
        for (id, started, figures) in &s.runs {
            let mut row = vec![
                s.series.key.clone(),
                s.series.case_id.clone(),
                label("experiment"),
                label("arm"),
                s.series.status.to_owned(),
                id.clone(),
                utc(*started),
            ];
            row.extend(HEADLINE.iter().map(|m| {
                match figures.iter().find(|(n, _)| n == m).map(|(_, v)| *v) {
                    Some(RunValue::Point(x)) => x.to_string(),
                    Some(RunValue::Range(a, b)) => format!("{a}..{b}"),
                    _ => String::new(),
                }
            }));
            let shifts: Vec<String> = s
                .shifts
                .iter()
                .filter(|c| &c.run_id == id)
                .map(|c| {
                    format!(
                        "{}:{}",
                        c.metric,
                        change(scale_of(&c.metric), Some(c.shift.change))
                    )
                })
                .collect();
            row.push(shifts.join(" "));
            let row: Vec<String> = row.iter().map(|f| csv_field(f)).collect();
            out.push_str(&row.join(","));
            out.push('\n');
        }
    }
    out
}

// ------------------------------------------------------------------ check

/// What a check printed: the run, its baseline flag, and the cases.
pub struct CheckView<'a> {
    pub run_id: &'a str,
    pub baseline: String,
    pub confidence: f64,
    pub cases: &'a [CaseCheck],
    pub allow_not_evaluable: bool,
    pub gate_failed: bool,
}

fn estimate_json(e: &Option<Estimate>) -> Value {
    e.as_ref().map_or(Value::Null, |e| {
        json!({
            "method": e.method,
            "estimand": e.estimand,
            "effect": e.effect.map(finite),
            "lower": e.lower.map(finite),
            "upper": e.upper.map(finite),
            "df": e.df,
            "n": e.n,
            "p_worse": e.p_worse.map(finite),
            "detail": e.detail,
        })
    })
}

fn gate_json(g: &GateOutcome) -> Value {
    json!({
        "status": g.status,
        "reason": g.reason,
        "rule": g.rule.rule,
        "budget": finite(g.rule.budget),
        "unit": g.rule.unit,
    })
}

fn bounds_json(v: (f64, f64)) -> Value {
    if v.0 == v.1 {
        finite(v.0)
    } else {
        json!({"lower": finite(v.0), "upper": finite(v.1)})
    }
}

fn metric_json(m: &MetricCheck) -> Value {
    json!({
        "name": m.name,
        "direction": m.direction,
        "scale": m.scale,
        "unit": m.unit,
        "value": m.value.map(bounds_json),
        "baseline_values": m.baseline.iter().map(|v| bounds_json(*v)).collect::<Vec<_>>(),
        "n_baseline": m.baseline.len(),
        "effect": m.worst.as_ref().and_then(|e| e.effect).map(finite),
        "interval": m.worst.as_ref().map(|e| json!([e.lower.map(finite), e.upper.map(finite)])),
        "estimates": {"worst_case": estimate_json(&m.worst), "best_case": estimate_json(&m.best)},
        "verdict": m.verdict.as_ref().map_or(json!({}), |(d, t)| json!({"direction": d, "tolerance": t})),
        "gate": m.gate.as_ref().map(gate_json),
        "reason": m.reason,
    })
}

/// `history check --format json`.
pub fn check_json(view: &CheckView) -> String {
    let cases: Vec<Value> = view
        .cases
        .iter()
        .map(|c| {
            json!({
                "case_id": c.case_id,
                "series": c.series_key,
                "baseline_runs": c.baseline_runs,
                "set_aside": c.set_aside.iter().map(|(r, why)| json!({"run_id": r, "reason": why})).collect::<Vec<_>>(),
                "comparability": c.comparability,
                "unverified": c.unverified,
                "metrics": c.metrics.iter().map(metric_json).collect::<Vec<_>>(),
                "absent_gates": c.absent_gates.iter().map(|(p, g)| json!({"pattern": p, "gate": gate_json(g)})).collect::<Vec<_>>(),
            })
        })
        .collect();
    let doc = json!({
        "kind": "stormlog.history_check",
        "version": 1,
        "run_id": view.run_id,
        "baseline": view.baseline,
        "confidence": finite(view.confidence),
        "method": "t prediction interval for one new run against the baseline runs as replicates (docs/history.md)",
        "allow_not_evaluable": view.allow_not_evaluable,
        "gate_failed": view.gate_failed,
        "exit_code": if view.gate_failed { 4 } else { 0 },
        "cases": cases,
    });
    serde_json::to_string_pretty(&doc).unwrap_or_default() + "\n"
}

fn metric_row(case: &CaseCheck, m: &MetricCheck) -> Vec<String> {
    let e = m.worst.as_ref();
    let pct = |x: Option<f64>| change(m.scale, x);
    let mean = if m.baseline.is_empty() {
        "-".to_owned()
    } else {
        let mid: Vec<f64> = m.baseline.iter().map(|v| (v.0 + v.1) / 2.0).collect();
        format!("{:.4}", mid.iter().sum::<f64>() / mid.len() as f64)
    };
    vec![
        case.case_id.clone(),
        m.name.clone(),
        m.baseline.len().to_string(),
        mean,
        m.value.map_or("-".into(), |v| {
            if v.0 == v.1 {
                format!("{:.4}", v.0)
            } else {
                format!("{:.4}..{:.4}", v.0, v.1)
            }
        }),
        pct(e.and_then(|e| e.effect)),
        format!(
            "[{}, {}]",
            pct(e.and_then(|e| e.lower)),
            pct(e.and_then(|e| e.upper))
        ),
        m.verdict.as_ref().map_or_else(
            || {
                m.reason
                    .as_deref()
                    .map_or("-".into(), |r| format!("- ({r})"))
            },
            |(d, t)| format!("{d} ({t})"),
        ),
        m.gate.as_ref().map_or("-".into(), |g| {
            let why = g
                .reason
                .as_deref()
                .map_or(String::new(), |r| format!(": {r}"));
            format!(
                "{} {}:{}{why}",
                g.status.to_uppercase(),
                g.rule.rule,
                g.rule.budget
            )
        }),
    ]
}

/// `history check` as text: each case's baseline and its metrics.
pub fn check_text(view: &CheckView) -> String {
    let mut out = format!(
        "history check: run {} against {} (confidence {})\n",
        view.run_id, view.baseline, view.confidence
    );
    for case in view.cases {
        out.push('\n');
        out.push_str(&format!(
            "case {} (series {}): {} baseline run{}{}\n",
            case.case_id,
            case.series_key.as_deref().unwrap_or("-"),
            case.baseline_runs.len(),
            if case.baseline_runs.len() == 1 {
                ""
            } else {
                "s"
            },
            if case.baseline_runs.is_empty() {
                String::new()
            } else {
                format!(": {}", case.baseline_runs.join(", "))
            }
        ));
        for (run, why) in &case.set_aside {
            out.push_str(&format!("  set aside: {run} ({why})\n"));
        }
        out.push_str(&format!("  comparability: {}", case.comparability));
        if !case.unverified.is_empty() {
            out.push_str(&format!(
                " (not known to agree: {})",
                case.unverified.join(", ")
            ));
        }
        out.push('\n');
        let header = [
            "CASE",
            "METRIC",
            "N",
            "BASELINE MEAN",
            "RUN",
            "CHANGE",
            "INTERVAL",
            "VERDICT",
            "GATE",
        ];
        let body: Vec<Vec<String>> = case
            .metrics
            .iter()
            .map(|m| metric_row(case, m))
            .map(|mut r| {
                r.remove(0);
                r
            })
            .collect();
        for line in crate::util::table(&header[1..], &body).lines() {
            out.push_str("  ");
            out.push_str(line);
            out.push('\n');
        }
        for (pattern, g) in &case.absent_gates {
            out.push_str(&format!(
                "  gate {pattern}: {} ({})\n",
                g.status.to_uppercase(),
                g.reason.as_deref().unwrap_or("")
            ));
        }
    }
    let gates: Vec<(&str, &GateOutcome)> = view.cases.iter().flat_map(CaseCheck::gates).collect();
    out.push('\n');
    if gates.is_empty() {
        out.push_str("no gates (pass --gate METRIC=RULE:BUDGET to fail on a regression)\n");
    } else {
        let count = |s: &str| gates.iter().filter(|(_, g)| g.status == s).count();
        out.push_str(&format!(
            "gates: {} pass, {} fail, {} not evaluable{}\n",
            count("pass"),
            count("fail"),
            count("not_evaluable"),
            if view.allow_not_evaluable && count("not_evaluable") > 0 {
                " (allowed)"
            } else {
                ""
            }
        ));
    }
    out.push_str(if view.gate_failed {
        "result: FAIL (exit 4)\n"
    } else {
        "result: ok\n"
    });
    out
}

/// `history check --format csv`: one row per metric of each case.
pub fn check_csv(view: &CheckView) -> String {
    let mut out = String::from("run_id,case_id,series,metric,n_baseline,baseline_mean,value,effect,lower,upper,direction,tolerance,gate_rule,gate_budget,gate_status,reason\n");
    for case in view.cases {
        for m in &case.metrics {
            let e = m.worst.as_ref();
            let num = |x: Option<f64>| x.map_or(String::new(), |x| x.to_string());
            let mean = (!m.baseline.is_empty()).then(|| {
                m.baseline.iter().map(|v| (v.0 + v.1) / 2.0).sum::<f64>() / m.baseline.len() as f64
            });
            let row = [
                view.run_id.to_owned(),
                case.case_id.clone(),
                case.series_key.clone().unwrap_or_default(),
                m.name.clone(),
                m.baseline.len().to_string(),
                num(mean),
                m.value.map_or(String::new(), |v| {
                    if v.0 == v.1 {
                        v.0.to_string()
                    } else {
                        format!("{}..{}", v.0, v.1)
                    }
                }),
                num(e.and_then(|e| e.effect)),
                num(e.and_then(|e| e.lower)),
                num(e.and_then(|e| e.upper)),
                m.verdict.as_ref().map_or(String::new(), |v| v.0.clone()),
                m.verdict.as_ref().map_or(String::new(), |v| v.1.clone()),
                m.gate
                    .as_ref()
                    .map_or(String::new(), |g| g.rule.rule.clone()),
                m.gate
                    .as_ref()
                    .map_or(String::new(), |g| g.rule.budget.to_string()),
                m.gate.as_ref().map_or(String::new(), |g| g.status.clone()),
                m.reason.clone().unwrap_or_default(),
            ];
            let row: Vec<String> = row.iter().map(|f| csv_field(f)).collect();
            out.push_str(&row.join(","));
            out.push('\n');
        }
    }
    out
}
