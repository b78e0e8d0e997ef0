//! The attainment gate of a case (`--min-attainment`): the candidate runs'
//! SLO attainment lower bounds, by runs or pooled as Bernoulli trials, and
//! the mean attainment's interval. docs/compare.md §4.

use super::engine::{OUTCOME_UNRECOVERABLE, PROTOCOL_FAILURE};
use super::ojson::{obj, J};
use super::spec::{AttainmentModel, Spec};
use super::stats::{clopper_pearson, run_pass_gate, t_quantile, FAIL, NOT_EVALUABLE, PASS};
use super::summary::RunSummary;
use crate::py::json::{get, number, truthy};

pub(super) fn attainment_gate(
    case_id: &str,
    candidate: &[RunSummary],
    spec: &Spec,
    target: f64,
    blocked: Option<&str>,
) -> (J, Option<J>) {
    let lowers: Vec<Option<f64>> = candidate
        .iter()
        .map(|r| number(get(r.slo(case_id), "attainment_lower")))
        .collect();
    let known: Vec<f64> = lowers.iter().flatten().copied().collect();
    let undecided = |status: &str, reason: &str| {
        obj([("status", J::from(status)), ("reason", J::from(reason))])
    };
    if let Some(b) = blocked {
        return (
            undecided(
                if b == PROTOCOL_FAILURE {
                    FAIL
                } else {
                    NOT_EVALUABLE
                },
                b,
            ),
            None,
        );
    }
    if spec
        .min_complete_blocks
        .is_some_and(|m| (candidate.len() as i64) < m)
    {
        return (undecided(NOT_EVALUABLE, "blocks_below_preregistered"), None);
    }
    let lost_slo = candidate.iter().any(|r| {
        !r.comparable_cases.contains_key(case_id)
            || (!r.outcome_failures.is_empty() && !truthy(r.slo(case_id)))
    });
    if spec.attainment_model == AttainmentModel::Bernoulli && lost_slo {
        return (undecided(FAIL, OUTCOME_UNRECOVERABLE), None);
    }
    if known.is_empty() {
        return (undecided(NOT_EVALUABLE, "no_slo_evaluation"), None);
    }
    let mut gate = if spec.attainment_model == AttainmentModel::Bernoulli {
        let count = |key: &str| -> u64 {
            candidate
                .iter()
                .map(|r| crate::py::json::int_value(get(r.slo(case_id), key)).max(0) as u64)
                .sum()
        };
        let (met, offered) = (count("met"), count("offered"));
        let bound = clopper_pearson(met, offered.max(1), spec.confidence, "independent_requests");
        let mut record = bound.to_record();
        record.set(
            "status",
            J::from(if bound.lower >= target { PASS } else { FAIL }),
        );
        record
    } else {
        let meeting = known.iter().filter(|v| **v >= target).count() as u64;
        run_pass_gate(
            meeting,
            lowers.len() as u64,
            spec.min_run_pass,
            spec.confidence,
        )
    };
    gate.set("target", J::Float(target));
    gate.set("runs_unmeasurable", J::from(lowers.len() - known.len()));
    (gate, Some(mean_interval(&known, spec.confidence)))
}

pub(super) fn mean_interval(values: &[f64], confidence: f64) -> J {
    let n = values.len() as f64;
    let mean = values.iter().sum::<f64>() / n;
    if values.len() < 2 {
        return obj([
            ("mean", J::Float(mean)),
            ("lower", J::Null),
            ("upper", J::Null),
            ("model", J::from("normal_run_means")),
        ]);
    }
    let sd = (values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0)).sqrt();
    let half = t_quantile(confidence, n - 1.0) * sd / n.sqrt();
    obj([
        ("mean", J::Float(mean)),
        ("lower", J::Float(mean - half)),
        ("upper", J::Float(mean + half)),
        ("model", J::from("normal_run_means")),
    ])
}
