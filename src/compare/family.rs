//! The regression family (`--family any_regression`): Holm's step-down
//! over the gated metrics' one-sided p-values, each gate then judged by it.
//! docs/compare.md §4.

use super::engine::Comparison;
use super::ojson::{obj, J};
use super::spec::Family;
use super::stats::{holm, GateOutcome, FAIL, NOT_EVALUABLE, PASS};

pub(super) fn with_family(c: &mut Comparison) {
    if c.spec.family != Family::AnyRegression {
        return;
    }
    let mut p_values: Vec<(String, Option<f64>)> = Vec::new();
    for (case_id, case) in &c.cases {
        for m in &case.metrics {
            let Some(gate) = &m.gate else { continue };
            if !(gate.reason.is_none() || gate.reason.as_deref() == Some("exceeds_budget")) {
                continue;
            }
            if let Some(p) = m.best.as_ref().and_then(|b| b.p_worse) {
                p_values.push((format!("{case_id}/{}", m.name), Some(p)));
            }
        }
    }
    let rejected = holm(&p_values, (1.0 - c.spec.confidence) / 2.0);
    for (case_id, case) in &mut c.cases {
        for m in &mut case.metrics {
            let key = format!("{case_id}/{}", m.name);
            let Some(is_rejected) = rejected.iter().find(|(k, _)| *k == key).map(|(_, r)| *r)
            else {
                continue;
            };
            let Some(gate) = m.gate.clone() else { continue };
            if gate.status == NOT_EVALUABLE {
                continue;
            }
            let Some(effect) = m.best.as_ref().and_then(|b| b.effect) else {
                continue;
            };
            let bad = if m.direction == "lower_is_better" {
                effect
            } else {
                -effect
            };
            let failed = is_rejected && bad > gate.rule.budget;
            let mut outcome = GateOutcome::new(
                if failed { FAIL } else { PASS },
                failed.then_some("exceeds_budget_holm"),
                &gate.rule,
            );
            outcome.case = Some("best_case".into());
            m.gate = Some(outcome);
        }
    }
    let mut names: Vec<&String> = rejected
        .iter()
        .filter(|(_, r)| *r)
        .map(|(k, _)| k)
        .collect();
    names.sort();
    c.family = Some(obj([
        ("name", J::from(Family::AnyRegression.as_str())),
        ("method", J::from("holm")),
        ("tests", J::from(p_values.len())),
        ("rejected", J::Arr(names.into_iter().map(J::from).collect())),
    ]));
}
