//! One case compared (the reference's `stormlog.infer.compare` per-case
//! loop): the runs kept for it, what blocks its gates, every metric's
//! comparison and gate ([`super::stats`]), and segments judged by overlap
//! left ungated. docs/compare.md §3, §4 and §6.

use super::attainment::attainment_gate;
use super::compat::{Compatibility, UNVERIFIED};
use super::engine::{
    all_runs, arm_runs, set_aside, Arms, Excluded, BASELINE, CANDIDATE, CONTROL_FAILED,
    OUTCOME_UNRECOVERABLE, PROTOCOL_FAILURE,
};
use super::engine::{lost, CaseResult, OVERLAP_NOT_GATED};
use super::metrics::{default_metrics, evidence_coverage, MetricSpec, RUN_MISSES};
use super::ojson::{obj, J};
use super::spec::{OnIncomplete, Spec};
use super::stats::{
    compare_values, GateOutcome, MetricComparison, Request, RunValue, FAIL, FRACTION_UNIT,
    NOT_EVALUABLE, PAIRED,
};
use super::summary::RunSummary;
use super::CompareError;
use crate::py::json::{get, str_form};

pub(super) fn case(
    case_id: &str,
    arms: &Arms,
    excluded: &[Excluded],
    design: &str,
    spec: &Spec,
    compatibility: &Compatibility,
    observer_issues: &[String],
) -> Result<CaseResult, CompareError> {
    let kept: Arms = [
        (
            BASELINE,
            arm_runs(arms, BASELINE)
                .iter()
                .filter(|r| !set_aside(excluded, r, case_id))
                .cloned()
                .collect(),
        ),
        (
            CANDIDATE,
            arm_runs(arms, CANDIDATE)
                .iter()
                .filter(|r| !set_aside(excluded, r, case_id))
                .cloned()
                .collect(),
        ),
    ];
    let attrition: Vec<Excluded> = excluded
        .iter()
        .filter(|i| i.case == case_id)
        .cloned()
        .collect();
    let lost = lost(case_id, arms, excluded, design);
    let membership = membership(case_id, &kept);
    let mut spec = spec.clone();
    if membership.as_deref() == Some("overlap") {
        // Requests in flight during a segment are length-biased: diagnostics.
        spec.gates.clear();
        spec.fallbacks.clear();
        spec.min_attainment = None;
    }
    let blocked = if compatibility.status == UNVERIFIED {
        Some("unverified")
    } else if !observer_issues.is_empty() {
        Some("observer_not_active")
    } else if !lost.1.is_empty() && spec.on_incomplete == OnIncomplete::Fail {
        Some(PROTOCOL_FAILURE)
    } else {
        None
    };
    let control_failed = arm_runs(&kept, BASELINE)
        .iter()
        .any(|r| !r.outcome_failures.is_empty() || !r.comparable_cases.contains_key(case_id));
    let contrast = blocked.or(control_failed.then_some(CONTROL_FAILED));
    let metrics = case_metrics(case_id, &kept, design, &spec, contrast)?;
    let absent_gates =
        super::metrics::absent_gates(&spec.gates, metrics.iter().map(|m| m.name.as_str()));
    let mut result = CaseResult {
        metrics,
        absent_gates,
        attainment_gate: None,
        attainment_mean: None,
        attrition,
        set_aside: lost,
        gated: membership.as_deref() != Some("overlap"),
        membership,
    };
    if let Some(target) = spec.min_attainment {
        let slo_blocked = blocked
            .map(str::to_owned)
            .or_else(|| slo_blocker(case_id, &kept));
        let (gate, mean) = attainment_gate(
            case_id,
            arm_runs(&kept, CANDIDATE),
            &spec,
            target,
            slo_blocked.as_deref(),
        );
        result.attainment_gate = Some(gate);
        result.attainment_mean = mean;
    }
    Ok(result)
}

pub(super) fn membership(case_id: &str, kept: &Arms) -> Option<String> {
    let mut found: Vec<String> = all_runs(kept)
        .filter_map(|r| r.comparable_cases.get(case_id))
        .map(|c| get(get(c, "intervals"), "membership"))
        .filter(|m| !m.is_null())
        .map(str_form)
        .collect();
    found.sort();
    found.dedup();
    if found.iter().any(|m| m == "overlap") {
        return Some("overlap".into());
    }
    found.pop()
}

pub(super) fn unjudged_overlap(cases: &mut [(String, CaseResult)], spec: &Spec) {
    if cases.iter().any(|(_, c)| c.gated) {
        return;
    }
    for (_, case) in cases.iter_mut() {
        case.absent_gates = spec
            .gates
            .iter()
            .map(|(p, r)| {
                (
                    p.clone(),
                    GateOutcome::new(NOT_EVALUABLE, Some(OVERLAP_NOT_GATED), r),
                )
            })
            .collect();
        if spec.min_attainment.is_some() {
            case.attainment_gate = Some(obj([
                ("status", J::from(NOT_EVALUABLE)),
                ("reason", J::from(OVERLAP_NOT_GATED)),
            ]));
        }
    }
}

pub(super) fn case_metrics(
    case_id: &str,
    kept: &Arms,
    design: &str,
    spec: &Spec,
    blocked: Option<&str>,
) -> Result<Vec<MetricComparison>, CompareError> {
    let Some(reference) = all_runs(kept).find_map(|r| r.comparable_cases.get(case_id)) else {
        return Ok(vec![]);
    };
    default_metrics(reference)
        .iter()
        .map(|m| metric(m, case_id, kept, design, spec, blocked))
        .collect()
}

pub(super) fn metric(
    metric: &MetricSpec,
    case_id: &str,
    kept: &Arms,
    design: &str,
    spec: &Spec,
    blocked: Option<&str>,
) -> Result<MetricComparison, CompareError> {
    let mut values: Vec<Vec<RunValue>> = vec![vec![], vec![]];
    let mut reasons: Vec<String> = Vec::new();
    let mut lost_arms: Vec<&str> = Vec::new();
    for (i, (arm, runs)) in kept.iter().enumerate() {
        for run in runs {
            let case = run.comparable_cases.get(case_id);
            let (value, reason) = match case {
                None => (RunValue::Missing, Some("case_missing".to_owned())),
                Some(c) => metric.read(c),
            };
            values[i].push(value);
            if let Some(r) = reason.filter(|r| !r.is_empty()) {
                reasons.push(r);
            }
            if value == RunValue::Missing && (case.is_none() || !run.outcome_failures.is_empty()) {
                lost_arms.push(arm);
            }
        }
    }
    let gate = spec.gate_for(&metric.name);
    let lost_outcome = if lost_arms.contains(&CANDIDATE) {
        Some(OUTCOME_UNRECOVERABLE.to_owned())
    } else if let Some(b) = blocked {
        Some(b.to_owned())
    } else if lost_arms.contains(&BASELINE) {
        Some(CONTROL_FAILED.to_owned())
    } else {
        None
    };
    let unavailable =
        lost_outcome.or_else(|| metric_blocker(metric, case_id, kept, &reasons, spec));
    let failing = unavailable
        .as_deref()
        .is_some_and(|u| u == PROTOCOL_FAILURE || u == OUTCOME_UNRECOVERABLE);
    let blocks = (design == PAIRED).then(|| {
        (
            arm_runs(kept, BASELINE)
                .iter()
                .map(RunSummary::block_key)
                .collect(),
            arm_runs(kept, CANDIDATE)
                .iter()
                .map(RunSummary::block_key)
                .collect(),
        )
    });
    let trials = metric.trials.map(|_| {
        let counts = |arm: &str| -> Vec<Option<i64>> {
            arm_runs(kept, arm)
                .iter()
                .map(|r| {
                    r.comparable_cases
                        .get(case_id)
                        .and_then(|c| metric.trials_in(c))
                })
                .collect()
        };
        (counts(BASELINE), counts(CANDIDATE))
    });
    let request = Request {
        name: metric.name.clone(),
        direction: metric.direction.into(),
        scale: metric.scale.into(),
        unit: metric.unit.into(),
        value_unit: Some(metric.value_unit.into()),
        confidence: spec.confidence,
        gate: if failing { None } else { gate.clone() },
        bootstrap_min_n: spec.bootstrap_min_n,
        seed: spec.seed,
        unavailable: unavailable.clone(),
        trials,
        blocks,
    };
    let mut compared = compare_values(&request, &values[0], &values[1])?;
    if let Some(u) = &unavailable {
        if compared.reason.is_none() || u == OUTCOME_UNRECOVERABLE || u == CONTROL_FAILED {
            compared.reason = Some(u.clone());
        }
    }
    if failing {
        if let Some(rule) = &gate {
            compared.gate = Some(GateOutcome::new(FAIL, unavailable.as_deref(), rule));
        }
    }
    Ok(compared)
}

pub(super) fn metric_blocker(
    metric: &MetricSpec,
    case_id: &str,
    kept: &Arms,
    reasons: &[String],
    spec: &Spec,
) -> Option<String> {
    let mut reasons: Vec<&String> = reasons
        .iter()
        .filter(|r| metric.unit != FRACTION_UNIT || !RUN_MISSES.contains(&r.as_str()))
        .collect();
    reasons.sort();
    if let Some(first) = reasons.first() {
        return Some((*first).clone());
    }
    if !metric.slo {
        return None;
    }
    if let Some(differs) = slo_blocker(case_id, kept) {
        return Some(differs);
    }
    let below = all_runs(kept)
        .filter_map(|r| r.comparable_cases.get(case_id))
        .any(|c| evidence_coverage(c).is_none_or(|v| v < spec.evidence_floor));
    below.then(|| "evidence_coverage_below_floor".into())
}

pub(super) fn slo_blocker(case_id: &str, kept: &Arms) -> Option<String> {
    let mut digests: Vec<String> = all_runs(kept)
        .map(|r| get(r.slo(case_id), "slo_digest"))
        .filter(|d| !d.is_null())
        .map(str_form)
        .collect();
    digests.sort();
    digests.dedup();
    (digests.len() > 1).then(|| "slo_policy_differs".into())
}
