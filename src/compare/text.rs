//! The comparison's text report, in Python's number formats (`{:g}`,
//! `{:+.4g}` and `{:+.1%}`, from `crate::py::float`).

use super::engine::Comparison;
use super::stats::{MetricComparison, FRACTION_UNIT, LOG_RATIO};
use crate::py::float::{format_g, percent};

/// The text report: design, comparability, notes, then each case's metrics.
pub fn comparison_lines(c: &Comparison) -> Vec<String> {
    let mut lines = vec![
        "Inference Comparison".to_owned(),
        "--------------------".to_owned(),
        format!(
            "Design: {}; mode {}; comparability {}",
            c.design, c.spec.mode, c.compatibility.status
        ),
    ];
    if !c.spec.gates.is_empty() {
        lines.push(format!("min_complete_blocks: {}", c.spec.block_floor().2));
    }
    lines.extend(notes(c));
    for (case_id, case) in &c.cases {
        let ungated = if case.gated {
            ""
        } else {
            " (overlap: diagnostics only, not gated)"
        };
        lines.push(format!("- {case_id}{ungated}:"));
        for metric in &case.metrics {
            lines.push(format!("  {}", metric_line(metric)));
        }
        if let Some(gate) = &case.attainment_gate {
            let field = |k: &str| super::engine::py_str_j(gate.get(k));
            lines.push(format!(
                "  min attainment: {} ({} of {} runs)",
                field("status"),
                field("runs_meeting"),
                field("runs")
            ));
        }
    }
    lines
}

fn notes(c: &Comparison) -> Vec<String> {
    let mut lines: Vec<String> = c
        .excluded
        .iter()
        .map(|item| {
            format!(
                "Set aside: {} for {} ({})",
                item.run,
                item.case,
                item.reasons_text()
            )
        })
        .collect();
    lines.extend(c.observer_issues.iter().map(|i| format!("Observer: {i}")));
    for item in &c.allowed_within_arm {
        let values: Vec<String> = item
            .values
            .iter()
            .map(|(run, v)| format!("{run}={}", crate::py::json::str_form(v)))
            .collect();
        lines.push(format!(
            "Within an arm (allowed): {} runs differ in {}: {}",
            item.arm,
            item.field,
            values.join(", ")
        ));
    }
    lines.extend(c.warnings.iter().map(|w| format!("Warning: {w}")));
    lines
}

fn metric_line(metric: &MetricComparison) -> String {
    let shown = match metric.worst.as_ref().filter(|w| w.effect.is_some()) {
        None => metric
            .reason
            .clone()
            .unwrap_or_else(|| "no estimate".into()),
        Some(w) => {
            let (e, l, u) = (
                w.effect.unwrap_or(f64::NAN),
                w.lower.unwrap_or(f64::NAN),
                w.upper.unwrap_or(f64::NAN),
            );
            if metric.scale == LOG_RATIO {
                format!(
                    "{} [{}, {}]",
                    percent(e, 1, true),
                    percent(l, 1, true),
                    percent(u, 1, true)
                )
            } else {
                let mut s = format!(
                    "{} [{}, {}] {}",
                    format_g(e, 4, true),
                    format_g(l, 4, true),
                    format_g(u, 4, true),
                    metric.unit
                );
                if metric.unit == FRACTION_UNIT {
                    // Its gate is a claim about runs; the interval only describes.
                    s.push_str(" (descriptive)");
                }
                s
            }
        }
    };
    format!(
        "{}: {shown}; {}{}",
        metric.name,
        metric.direction_word(),
        judged(metric)
    )
}

fn judged(metric: &MetricComparison) -> String {
    let Some(gate) = &metric.gate else {
        return String::new();
    };
    let claim = gate.claim.as_ref();
    let kind = if claim.is_some() {
        " (run-level claim)"
    } else {
        ""
    };
    let mut judged = format!("; gate {}{kind}", gate.status);
    if let Some(reason) = &gate.reason {
        judged.push_str(&format!(" ({reason})"));
    }
    if let Some(claim) = claim {
        judged.push_str(&format!(": {}", claim.statement));
        if claim.mean_exceeds_budget {
            let moved = if metric.direction == "lower_is_better" {
                "rose"
            } else {
                "fell"
            };
            let change = claim.mean_change.flatten().unwrap_or(f64::NAN);
            judged.push_str(&format!(
                "; warning: mean {} {moved} {:.1} pp against a {} pp budget",
                metric.name.replace('_', " "),
                change * 100.0,
                format_g(gate.rule.budget * 100.0, 6, false)
            ));
        }
    }
    judged
}
