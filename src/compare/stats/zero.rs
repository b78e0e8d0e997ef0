//! The zero rules: constant runs, values at zero where a log ratio is
//! undefined, the fallback budget.

use super::*;

pub(super) fn constant(pairs: &Pairs) -> Option<f64> {
    let mut seen: Vec<f64> = Vec::new();
    for (a, b) in pairs.baseline.iter().chain(&pairs.candidate) {
        for x in [*a, *b] {
            if !seen.contains(&x) {
                seen.push(x);
            }
        }
    }
    (seen.len() == 1).then(|| seen[0])
}

pub(super) fn degenerate(
    mut base: MetricComparison,
    request: &Request,
    pairs: &Pairs,
) -> MetricComparison {
    let value = constant(pairs);
    let kind = if value == Some(0.0) {
        "degenerate_zero"
    } else {
        "degenerate_constant"
    };
    let alpha = 1.0 - request.confidence;
    let mut bounds = Vec::new();
    for (arm, count) in [
        ("baseline", pairs.baseline.len()),
        ("candidate", pairs.candidate.len()),
    ] {
        if count > 0 {
            bounds.push((
                arm.to_owned(),
                J::Float(1.0 - (alpha / 2.0).powf(1.0 / count as f64)),
            ));
        }
    }
    base.degenerate = Some(obj([
        ("kind", J::from(kind)),
        ("value", J::from(value)),
        ("run_departs_upper", J::Obj(bounds)),
        (
            "statement",
            J::from("every run of both arms had this value; a run departs from it with probability at most the bound shown, per arm"),
        ),
    ]));
    if let Some(rule) = &request.gate {
        let blocker = gate_blocker(request, pairs, &Guards::default());
        base.gate = Some(GateOutcome::new(
            NOT_EVALUABLE,
            Some(blocker.as_deref().unwrap_or(kind)),
            rule,
        ));
    }
    base.verdict = Some(("no_detectable_change".into(), "undetermined".into()));
    base.reason = Some(kind.into());
    base
}

pub(super) fn nonpositive(
    request: &Request,
    worst_case: &Case,
    best_case: &Case,
) -> Option<&'static str> {
    if worst_case.0.iter().chain(&best_case.0).any(|v| *v <= 0.0) {
        return Some("undefined_in_arm");
    }
    if worst_case.1.iter().chain(&best_case.1).any(|v| *v <= 0.0) {
        return Some(if request.direction == HIGHER_IS_BETTER {
            "candidate_zero"
        } else {
            "undefined_in_arm"
        });
    }
    None
}

pub(super) fn zero_rule(
    mut base: MetricComparison,
    request: &Request,
    pairs: &Pairs,
    blocked: &str,
) -> MetricComparison {
    let (worst_case, best_case) = cases(pairs, &request.direction);
    let sign = request.sign();
    let worst = primary(
        pairs.design,
        DIFFERENCE,
        &worst_case,
        request.confidence,
        sign,
        None,
    );
    let best = primary(
        pairs.design,
        DIFFERENCE,
        &best_case,
        request.confidence,
        sign,
        None,
    );
    base.difference = Some(worst.clone());
    base.reason = Some(blocked.to_owned());
    base.effect_size = Some(effect_size(pairs));
    let Some(rule) = request.gate.as_ref() else {
        return base;
    };
    let mut blocked = blocked;
    if blocked == "candidate_zero" {
        if let Some(outcome) = candidate_zero_gate(request, pairs, &worst_case, &best_case) {
            base.gate = Some(outcome);
            return base;
        }
        blocked = "undefined_in_arm";
    }
    let blocker = gate_blocker(request, pairs, &Guards::default());
    let Some(fallback) = rule.fallback_budget.filter(|_| blocker.is_none()) else {
        base.gate = Some(GateOutcome::new(
            NOT_EVALUABLE,
            Some(blocker.as_deref().unwrap_or(blocked)),
            rule,
        ));
        return base;
    };
    let status = decide(&rule.rule, fallback, &worst, &best, &request.direction);
    let reason = if status == PASS {
        "fallback_budget"
    } else {
        "exceeds_fallback_budget"
    };
    base.gate = Some(GateOutcome::new(status, Some(reason), rule).with_case("fallback"));
    base
}

pub(super) fn candidate_zero_gate(
    request: &Request,
    pairs: &Pairs,
    worst_case: &Case,
    best_case: &Case,
) -> Option<GateOutcome> {
    let rule = request.gate.as_ref()?;
    let regression = rule.rule != NON_INFERIORITY;
    if regression {
        if let Some(blocker) = gate_blocker(request, pairs, &Guards::default()) {
            return Some(GateOutcome::new(NOT_EVALUABLE, Some(&blocker), rule));
        }
    }
    let used = if regression { best_case } else { worst_case };
    used.1
        .iter()
        .any(|v| *v <= 0.0)
        .then(|| GateOutcome::new(FAIL, Some("candidate_zero"), rule))
}
