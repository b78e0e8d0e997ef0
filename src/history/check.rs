//! One run checked against earlier runs of its series, run as unit: the
//! baseline runs are replicates of the run-to-run variation, and the new
//! run is one more draw. The interval is a t prediction interval on the log
//! ratio (or the difference, for a fraction) between the run and the
//! baseline mean; `compare`'s gate rules and verdict words judge it
//! (docs/history.md §2). Nothing here reads the database.

use crate::compare::compat::{self, Compatibility, CONFIG, INCOMPATIBLE, UNVERIFIED};
use crate::compare::dist::t_sf;
use crate::compare::engine::RunSummary;
use serde_json::Value;

use crate::compare::metrics::{
    default_metrics, evidence_coverage, fnmatch, MetricSpec, RUN_MISSES,
};
use crate::compare::stats::{
    decide, t_quantile, verdict, Estimate, GateOutcome, GateRule, RunValue, FAIL, FRACTION_UNIT,
    LOG_RATIO, LOWER_IS_BETTER, MIN_GATE_PAIRS, NON_INFERIORITY, NOT_EVALUABLE,
};
use crate::py::json::{get, str_form};

/// How to check: the gates, the confidence and what may differ.
#[derive(Debug, Clone)]
pub struct Rules {
    pub gates: Vec<(String, GateRule)>,
    pub confidence: f64,
    pub allow: Vec<String>,
}

impl Rules {
    /// The gate on a metric: the last pattern that matches, as `compare` picks it.
    pub fn gate_for(&self, metric: &str) -> Option<&GateRule> {
        self.gates
            .iter()
            .filter(|(p, _)| fnmatch(p, metric))
            .map(|(_, r)| r)
            .next_back()
    }
}

/// One metric of one case, checked.
#[derive(Debug, Clone)]
pub struct MetricCheck {
    pub name: String,
    pub direction: &'static str,
    pub scale: &'static str,
    pub unit: &'static str,
    /// The baseline runs' values that counted (`(lower, upper)`).
    pub baseline: Vec<(f64, f64)>,
    pub value: Option<(f64, f64)>,
    /// The interval the gate reads (the worst case when values are bounds).
    pub worst: Option<Estimate>,
    pub best: Option<Estimate>,
    /// `(direction, tolerance)` in `compare`'s words; None before any estimate.
    pub verdict: Option<(String, String)>,
    pub gate: Option<GateOutcome>,
    pub reason: Option<String>,
}

/// One case of the checked run.
#[derive(Debug, Clone)]
pub struct CaseCheck {
    pub case_id: String,
    pub series_key: Option<String>,
    /// The baseline runs compared, oldest first.
    pub baseline_runs: Vec<String>,
    /// Baseline runs set aside, with the reason.
    pub set_aside: Vec<(String, String)>,
    /// `compatible` or `unverified` (an incompatible run is an error).
    pub comparability: &'static str,
    pub unverified: Vec<String>,
    pub metrics: Vec<MetricCheck>,
    /// Gates whose pattern matched no metric of the case.
    pub absent_gates: Vec<(String, GateOutcome)>,
}

impl CaseCheck {
    /// Every gate decision of the case, by metric name.
    pub fn gates(&self) -> impl Iterator<Item = (&str, &GateOutcome)> {
        self.metrics
            .iter()
            .filter_map(|m| m.gate.as_ref().map(|g| (m.name.as_str(), g)))
            .chain(self.absent_gates.iter().map(|(p, g)| (p.as_str(), g)))
    }
}

/// Why a case cannot be checked at all: a baseline run that is not comparable.
#[derive(Debug, Clone, PartialEq)]
pub struct Incomparable {
    pub case_id: String,
    pub baseline_run: String,
    pub fields: Vec<String>,
}

/// Checks one case of `run` against `baseline` (earlier runs of its series,
/// or the runs the user `named`: one of those that is incompatible is an
/// error, where a series' run is set aside).
pub fn check_case(
    case_id: &str,
    run: &RunSummary,
    baseline: &[&RunSummary],
    rules: &Rules,
    named: bool,
) -> Result<CaseCheck, Incomparable> {
    let mut kept: Vec<&RunSummary> = Vec::new();
    let mut set_aside = Vec::new();
    let mut comparability = compat::COMPATIBLE;
    let mut unverified: Vec<String> = Vec::new();
    for b in baseline {
        let name = super::summary_run_id(b);
        if !b.protocol_failures.is_empty() {
            set_aside.push((
                name,
                format!("protocol_failure: {}", b.protocol_failures.join(", ")),
            ));
            continue;
        }
        if !b.comparable_cases.contains_key(case_id) {
            set_aside.push((name, "case_missing".to_owned()));
            continue;
        }
        let c: Compatibility = compat::compatible(&b.fields, &run.fields, &rules.allow, CONFIG);
        if c.status == INCOMPATIBLE {
            let fields: Vec<String> = c
                .blocking
                .iter()
                .map(|d| {
                    format!(
                        "{} ({} vs {})",
                        d.name,
                        crate::py::json::str_form(&d.a),
                        crate::py::json::str_form(&d.b)
                    )
                })
                .collect();
            // A series holds runs that match its first run; two of them may
            // still differ where the first run's value is unknown.
            if !named {
                set_aside.push((name, format!("incompatible: {}", fields.join(", "))));
                continue;
            }
            return Err(Incomparable {
                case_id: case_id.to_owned(),
                baseline_run: name,
                fields,
            });
        }
        if c.status == UNVERIFIED {
            comparability = UNVERIFIED;
            for d in c.unverified {
                if !unverified.contains(&d.name) {
                    unverified.push(d.name);
                }
            }
        }
        kept.push(b);
    }
    unverified.sort();
    let case = run.comparable_cases.get(case_id);
    let specs = case.map(default_metrics).unwrap_or_default();
    // Comparability unverified blocks every gate, as it does in `compare`.
    let blocked = (comparability == UNVERIFIED).then_some("unverified");
    let metrics: Vec<MetricCheck> = specs
        .iter()
        .map(|spec| check_metric(spec, case_id, run, &kept, rules, blocked))
        .collect();
    let absent_gates = crate::compare::metrics::absent_gates(
        &rules.gates,
        metrics.iter().map(|m| m.name.as_str()),
    );
    Ok(CaseCheck {
        case_id: case_id.to_owned(),
        series_key: None,
        baseline_runs: kept.iter().map(|r| super::summary_run_id(r)).collect(),
        set_aside,
        comparability,
        unverified,
        metrics,
        absent_gates,
    })
}

/// A run's value of a metric in a case, and the reading's reason: why there
/// is no value, or what weakens the one there is (`compare` blocks a gate on it).
fn reading(
    spec: &MetricSpec,
    run: &RunSummary,
    case_id: &str,
) -> (Option<(f64, f64)>, Option<String>) {
    let Some(case) = run.comparable_cases.get(case_id) else {
        return (None, Some("case_missing".to_owned()));
    };
    let (value, reason) = spec.read(case);
    let reason = reason.filter(|r| !r.is_empty());
    match value.bounds() {
        Some(b) => (Some(b), reason),
        None if value == RunValue::Missing => {
            (None, Some(reason.unwrap_or_else(|| "missing".into())))
        }
        None => (
            None,
            Some(reason.unwrap_or_else(|| "non_finite_value".into())),
        ),
    }
}

/// What keeps a gate from being judged even with values (`compare`'s
/// `metric_blocker`): the first reason any run's reading gives (a fraction's
/// unmeasurable runs aside), then, for an SLO metric, policies that differ
/// or evidence below full coverage.
fn metric_blocker(spec: &MetricSpec, case_id: &str, runs: &[&RunSummary]) -> Option<String> {
    let mut reasons: Vec<String> = runs
        .iter()
        .filter_map(|r| reading(spec, r, case_id).1)
        .filter(|r| spec.unit != FRACTION_UNIT || !RUN_MISSES.contains(&r.as_str()))
        .collect();
    reasons.sort();
    if let Some(first) = reasons.into_iter().next() {
        return Some(first);
    }
    if !spec.slo {
        return None;
    }
    let cases: Vec<&Value> = runs
        .iter()
        .filter_map(|r| r.comparable_cases.get(case_id))
        .collect();
    let mut digests: Vec<String> = cases
        .iter()
        .map(|c| get(get(c, "slo"), "slo_digest"))
        .filter(|d| !d.is_null())
        .map(str_form)
        .collect();
    digests.sort();
    digests.dedup();
    if digests.len() > 1 {
        return Some("slo_policy_differs".into());
    }
    cases
        .iter()
        .any(|c| evidence_coverage(c).is_none_or(|v| v < 1.0))
        .then(|| "evidence_coverage_below_floor".into())
}

fn check_metric(
    spec: &MetricSpec,
    case_id: &str,
    run: &RunSummary,
    baseline: &[&RunSummary],
    rules: &Rules,
    blocked: Option<&str>,
) -> MetricCheck {
    let gate = rules.gate_for(&spec.name).cloned();
    let mut everyone: Vec<&RunSummary> = baseline.to_vec();
    everyone.push(run);
    let blocker: Option<String> = blocked
        .map(str::to_owned)
        .or_else(|| metric_blocker(spec, case_id, &everyone));
    let blocked = blocker.as_deref();
    let (value, reason) = reading(spec, run, case_id);
    let values: Vec<(f64, f64)> = baseline
        .iter()
        .filter_map(|b| reading(spec, b, case_id).0)
        .collect();
    let mut out = MetricCheck {
        name: spec.name.clone(),
        direction: spec.direction,
        scale: spec.scale,
        unit: spec.unit,
        baseline: values.clone(),
        value,
        worst: None,
        best: None,
        verdict: None,
        gate: None,
        reason: reason.or_else(|| blocker.clone()),
    };
    let not_evaluable = |out: &mut MetricCheck, why: &str| {
        out.reason.get_or_insert_with(|| why.to_owned());
        out.gate = gate
            .as_ref()
            .map(|g| GateOutcome::new(NOT_EVALUABLE, Some(blocked.unwrap_or(why)), g));
    };
    let Some(value) = value else {
        let why = out.reason.clone().unwrap_or_default();
        not_evaluable(&mut out, &why);
        return out;
    };
    if values.len() < 2 {
        not_evaluable(&mut out, "insufficient_runs");
        return out;
    }
    let log = spec.scale == LOG_RATIO;
    if log && (value.0 <= 0.0 || values.iter().any(|v| v.0 <= 0.0)) {
        not_evaluable(&mut out, "non_positive_value");
        return out;
    }
    let lower_is_better = spec.direction == LOWER_IS_BETTER;
    // The worst case pairs the run's bad bound with the baseline's good bounds.
    let pick = |v: (f64, f64), bad: bool| if bad == lower_is_better { v.1 } else { v.0 };
    let worst = prediction(
        pick(value, true),
        &values.iter().map(|v| pick(*v, false)).collect::<Vec<_>>(),
        log,
        rules.confidence,
        lower_is_better,
    );
    let best = prediction(
        pick(value, false),
        &values.iter().map(|v| pick(*v, true)).collect::<Vec<_>>(),
        log,
        rules.confidence,
        lower_is_better,
    );
    out.verdict = Some(verdict(
        &worst,
        &best,
        spec.direction,
        gate.as_ref().map_or(0.0, |g| g.budget),
    ));
    if let Some(g) = &gate {
        let needed = g
            .min_complete_blocks
            .and_then(|m| usize::try_from(m).ok())
            .unwrap_or(MIN_GATE_PAIRS);
        out.gate = Some(if let Some(b) = blocked {
            GateOutcome::new(NOT_EVALUABLE, Some(b), g)
        } else if !rule_fits(g, spec.unit) {
            GateOutcome::new(
                NOT_EVALUABLE,
                Some("fraction_takes_non_inferiority_only"),
                g,
            )
        } else if values.len() < needed {
            out.reason = Some("insufficient_runs".into());
            GateOutcome::new(NOT_EVALUABLE, Some("insufficient_runs"), g)
        } else {
            let status = decide(&g.rule, g.budget, &worst, &best, spec.direction);
            GateOutcome::new(status, None, g)
        });
    }
    out.worst = Some(worst);
    out.best = Some(best);
    out
}

/// The t prediction interval for one new run against `baseline`: the
/// difference `x - mean(b)` (on the log scale when `log`), with the standard
/// error `sd(b) * sqrt(1 + 1/n)` on `n - 1` degrees of freedom. It assumes
/// the new run varies as the baseline runs do around the same level.
pub fn prediction(
    x: f64,
    baseline: &[f64],
    log: bool,
    confidence: f64,
    lower_is_better: bool,
) -> Estimate {
    let scale = |v: f64| if log { v.ln() } else { v };
    let b: Vec<f64> = baseline.iter().map(|v| scale(*v)).collect();
    let n = b.len();
    let mean = b.iter().sum::<f64>() / n as f64;
    let var = b.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / (n as f64 - 1.0);
    let se = var.sqrt() * (1.0 + 1.0 / n as f64).sqrt();
    let df = n as f64 - 1.0;
    let d = scale(x) - mean;
    let half = t_quantile(confidence, df) * se;
    let sign = if lower_is_better { 1.0 } else { -1.0 };
    let shown = |v: f64| if log { v.exp_m1() } else { v };
    Estimate {
        method: if log {
            "prediction_t_log_ratio".into()
        } else {
            "prediction_t".into()
        },
        estimand: if log {
            "ratio_to_baseline_geometric_mean".into()
        } else {
            "difference_from_baseline_mean".into()
        },
        effect: Some(shown(d)),
        lower: Some(shown(d - half)),
        upper: Some(shown(d + half)),
        df: Some(n as i64 - 1),
        n,
        p_worse: (se > 0.0).then(|| t_sf(sign * d / se, df)),
        detail: (se == 0.0).then(|| {
            "zero_variance: the baseline runs agree exactly; the interval is a point".to_owned()
        }),
    }
}

/// Whether a gate of this rule may stand on a metric of this unit (a
/// fraction takes only non-inferiority, as in `compare`).
pub fn rule_fits(rule: &GateRule, unit: &str) -> bool {
    unit != FRACTION_UNIT || rule.rule == NON_INFERIORITY
}

/// The check's exit: 4 when a gate failed, or could not be evaluated unless allowed.
pub fn gate_failed(cases: &[CaseCheck], allow_not_evaluable: bool) -> bool {
    cases
        .iter()
        .flat_map(CaseCheck::gates)
        .any(|(_, g)| g.status == FAIL || (g.status == NOT_EVALUABLE && !allow_not_evaluable))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_prediction_interval_is_the_textbook_one() {
        // Baseline 1, 2, 3 and a new value 5: mean 2, sd 1, se sqrt(4/3),
        // t(0.975, 2) = 4.302653, so 3 +- 4.968276.
        let e = prediction(5.0, &[1.0, 2.0, 3.0], false, 0.95, true);
        assert_eq!(e.effect, Some(3.0));
        let (lo, hi) = (e.lower.unwrap_or(f64::NAN), e.upper.unwrap_or(f64::NAN));
        assert!((lo + 1.968_276).abs() < 1e-5, "{lo}");
        assert!((hi - 7.968_276).abs() < 1e-5, "{hi}");
        // One-sided p of t = 3 / 1.154701 = 2.598076 on 2 df.
        assert!((e.p_worse.unwrap_or(f64::NAN) - 0.060_845).abs() < 1e-5);
        // On the log scale the same numbers are ratios: e^3 - 1.
        let x = prediction(
            5f64.exp(),
            &[1f64.exp(), 2f64.exp(), 3f64.exp()],
            true,
            0.95,
            true,
        );
        assert!((x.effect.unwrap_or(f64::NAN) - 3f64.exp_m1()).abs() < 1e-9);
        // Higher is better: the run being higher is not worse.
        let up = prediction(5.0, &[1.0, 2.0, 3.0], false, 0.95, false);
        assert!(up.p_worse.unwrap_or(f64::NAN) > 0.9);
    }

    #[test]
    fn agreeing_baseline_runs_give_a_point_and_say_so() {
        let e = prediction(2.0, &[1.0, 1.0, 1.0], false, 0.95, true);
        assert_eq!((e.lower, e.upper), (Some(1.0), Some(1.0)));
        assert_eq!(e.p_worse, None);
        assert!(e.detail.is_some_and(|d| d.starts_with("zero_variance")));
    }
}
