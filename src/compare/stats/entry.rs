//! The entry, `compare_values`: one metric's runs to its comparison,
//! estimates, claims and gate.

use super::*;

/// What to compare for one metric: `compare_values`' keyword arguments.
#[derive(Debug, Clone)]
pub struct Request {
    pub name: String,
    pub direction: String,
    pub scale: String,
    pub unit: String,
    pub value_unit: Option<String>,
    pub confidence: f64,
    pub gate: Option<GateRule>,
    pub bootstrap_min_n: usize,
    pub seed: u64,
    pub unavailable: Option<String>,
    pub trials: Option<(Counts, Counts)>,
    /// Block labels of each arm's runs, for the paired design.
    pub blocks: Option<(Vec<String>, Vec<String>)>,
}

impl Request {
    pub(super) fn tolerance(&self) -> f64 {
        self.gate.as_ref().map_or(0.0, |g| g.budget)
    }
    pub(super) fn sign(&self) -> f64 {
        sign(&self.direction)
    }
}

pub(super) fn sign(direction: &str) -> f64 {
    if direction == LOWER_IS_BETTER {
        1.0
    } else {
        -1.0
    }
}

/// Compare one metric's per-run values between the two arms.
pub fn compare_values(
    request: &Request,
    baseline: &[RunValue],
    candidate: &[RunValue],
) -> Result<MetricComparison, CompareError> {
    let mut request = request.clone();
    if request.unavailable.is_none() {
        request.unavailable =
            non_finite_reason(&request.direction, baseline, candidate).map(str::to_owned);
    }
    check(&request)?;
    let blocks = request
        .blocks
        .as_ref()
        .map(|(a, b)| (a.as_slice(), b.as_slice()));
    let pairs = pair(
        baseline,
        candidate,
        if request.scale == ABSOLUTE {
            None
        } else {
            blocks
        },
        request.trials.as_ref(),
    );
    let mut result = compare(&request, &pairs);
    if request.unit == FRACTION_UNIT {
        let outcome = run_level_gate(&request, baseline, candidate, blocks);
        let outcome = with_mean_change(&request, &result, outcome);
        result.gate = outcome;
        result.pooled = pooled(&request, &pairs);
        return Ok(result);
    }
    if request.unavailable.as_deref() == Some(CENSORED_WORST) && request.gate.is_some() {
        let mut plain = request.clone();
        plain.unavailable = None;
        result.gate = Some(censored_gate(&plain, &pairs));
    }
    Ok(result)
}

pub(super) fn non_finite_reason(
    direction: &str,
    baseline: &[RunValue],
    candidate: &[RunValue],
) -> Option<&'static str> {
    if baseline.iter().chain(candidate).all(|v| v.finite()) {
        return None;
    }
    if direction == LOWER_IS_BETTER && candidate.iter().any(|v| v.positive_infinite()) {
        return Some(CENSORED_WORST);
    }
    Some("non_finite_value")
}

pub(super) fn censored_gate(request: &Request, pairs: &Pairs) -> GateOutcome {
    let Some(gate) = request.gate.as_ref() else {
        unreachable_gate()
    };
    if gate.rule != NON_INFERIORITY {
        if let Some(blocker) = gate_blocker(request, pairs, &Guards::default()) {
            return GateOutcome::new(NOT_EVALUABLE, Some(&blocker), gate);
        }
    }
    GateOutcome::new(FAIL, Some(CENSORED_WORST), gate)
}

#[allow(clippy::panic)]
pub(super) fn unreachable_gate() -> ! {
    // Callers check for a gate first; this documents the invariant.
    panic!("a gate decision without a gate")
}

pub(super) fn check(request: &Request) -> Result<(), CompareError> {
    let name = &request.name;
    if request.direction != LOWER_IS_BETTER && request.direction != HIGHER_IS_BETTER {
        return Err(CompareError::usage(format!(
            "{name}: unknown direction '{}'",
            request.direction
        )));
    }
    if ![LOG_RATIO, DIFFERENCE, ABSOLUTE].contains(&request.scale.as_str()) {
        return Err(CompareError::usage(format!(
            "{name}: unknown scale '{}'",
            request.scale
        )));
    }
    if request.scale == LOG_RATIO && request.unit != RELATIVE {
        return Err(CompareError::usage(format!(
            "{name}: a log_ratio effect's unit is relative"
        )));
    }
    if let Some(gate) = &request.gate {
        if gate.unit != request.unit {
            return Err(CompareError::usage(format!(
                "{name}: the gate's unit '{}' is not the metric's '{}'",
                gate.unit, request.unit
            )));
        }
        if request.unit == FRACTION_UNIT && gate.rule != NON_INFERIORITY {
            return Err(CompareError::usage(format!(
                "{name}: {} is not supported for a fraction. A fraction supports only a run-level claim, gated with non-inferiority: k of n runs within the budget, which stays exact however failures cluster within a run, where no interval on the fraction does; it has no regression form in v1",
                gate.rule
            )));
        }
        if gate.fallback_budget.is_some() && gate.fallback_unit != request.value_unit {
            let shown =
                |u: &Option<String>| u.as_ref().map_or("None".to_owned(), |u| format!("'{u}'"));
            return Err(CompareError::usage(format!(
                "{name}: the fallback budget's unit {} is not the values' {}",
                shown(&gate.fallback_unit),
                shown(&request.value_unit)
            )));
        }
    }
    Ok(())
}

pub(super) fn compare(request: &Request, pairs: &Pairs) -> MetricComparison {
    let mut base = shell(request, pairs);
    let mut n = if request.scale == ABSOLUTE {
        pairs.candidate.len()
    } else {
        pairs.baseline.len()
    };
    if pairs.design == INDEPENDENT && request.scale != ABSOLUTE {
        n = pairs.baseline.len().min(pairs.candidate.len());
    }
    if n < 2 {
        let reason = if pairs.design == PAIRED {
            "insufficient_blocks"
        } else {
            "insufficient_runs"
        };
        base.reason = Some(reason.into());
        base.gate = request.gate.as_ref().map(|g| {
            GateOutcome::new(
                NOT_EVALUABLE,
                Some(request.unavailable.as_deref().unwrap_or(reason)),
                g,
            )
        });
        return base;
    }
    let (worst_case, best_case) = cases(pairs, &request.direction);
    if request.scale == DIFFERENCE
        && constant(pairs).is_some()
        && floor(request, pairs, &worst_case).is_none()
    {
        return degenerate(base, request, pairs);
    }
    if request.scale == LOG_RATIO {
        if let Some(blocked) = nonpositive(request, &worst_case, &best_case) {
            return zero_rule(base, request, pairs, blocked);
        }
    }
    estimated(base, request, pairs, &worst_case, &best_case)
}

pub(super) fn shell(request: &Request, pairs: &Pairs) -> MetricComparison {
    MetricComparison {
        name: request.name.clone(),
        design: if request.scale == ABSOLUTE {
            ABSOLUTE.into()
        } else {
            pairs.design.into()
        },
        scale: request.scale.clone(),
        unit: request.unit.clone(),
        direction: request.direction.clone(),
        n_baseline: pairs.n_baseline,
        n_candidate: pairs.n_candidate,
        n_pairs: if pairs.design == PAIRED {
            pairs.baseline.len()
        } else {
            0
        },
        values: (pairs.baseline.clone(), pairs.candidate.clone()),
        attrition: pairs.attrition.clone(),
        worst: None,
        best: None,
        cross_check: None,
        sensitivity: None,
        difference: None,
        guards: Guards::default(),
        effect_size: None,
        verdict: None,
        gate: None,
        reason: None,
        degenerate: None,
        pooled: None,
        trials: (request.unit == FRACTION_UNIT && request.trials.is_some())
            .then(|| pairs.trials.clone()),
    }
}

pub(super) fn estimated(
    mut base: MetricComparison,
    request: &Request,
    pairs: &Pairs,
    worst_case: &Case,
    best_case: &Case,
) -> MetricComparison {
    let sign = request.sign();
    let worst = primary(
        pairs.design,
        &request.scale,
        worst_case,
        request.confidence,
        sign,
        floor(request, pairs, worst_case),
    );
    let best = primary(
        pairs.design,
        &request.scale,
        best_case,
        request.confidence,
        sign,
        floor(request, pairs, best_case),
    );
    let guards = guards(request, pairs, worst_case, &worst, &best);
    if request.scale == LOG_RATIO {
        base.cross_check = Some(fieller(pairs.design, worst_case, request.confidence));
        base.difference = Some(primary(
            pairs.design,
            DIFFERENCE,
            worst_case,
            request.confidence,
            sign,
            None,
        ));
    }
    if request.scale != ABSOLUTE
        && worst_case.0.len().min(worst_case.1.len()) >= request.bootstrap_min_n
    {
        base.sensitivity = Some(bootstrap(
            pairs.design,
            &request.scale,
            worst_case,
            request.confidence,
            request.seed,
        ));
    }
    base.effect_size = Some(effect_size(pairs));
    base.verdict = Some(verdict(
        &worst,
        &best,
        &request.direction,
        request.tolerance(),
    ));
    base.gate = gate(request, pairs, &worst, &best, &guards);
    base.guards = guards;
    base.worst = Some(worst);
    base.best = Some(best);
    base
}

pub(super) fn guards(
    request: &Request,
    pairs: &Pairs,
    case: &Case,
    worst: &Estimate,
    best: &Estimate,
) -> Guards {
    let looked_at = guard_values(pairs.design, &request.scale, case);
    let (skewness, skew_limit, skew_flagged) = skew(&looked_at);
    // A fraction's gate is a claim about runs, which no single block decides.
    let (leave_one_out, decision_flips) = if request.unit == FRACTION_UNIT {
        (None, None)
    } else {
        leave_one_out(request, pairs, worst, best)
    };
    Guards {
        skewness,
        skew_limit,
        skew_flagged,
        leave_one_out,
        decision_flips,
        zero_variance: !looked_at.is_empty() && ptp_zero(&looked_at),
    }
}

pub(super) type Span = [Option<f64>; 4];

pub(super) fn leave_one_out(
    request: &Request,
    pairs: &Pairs,
    worst: &Estimate,
    best: &Estimate,
) -> (Option<Span>, Option<usize>) {
    let reduced = drop_one(pairs);
    if reduced.is_empty() {
        return (None, None);
    }
    let decision = rule_decision(request, worst, best);
    let sign = request.sign();
    let estimates: Vec<(Estimate, Estimate)> = reduced
        .iter()
        .map(|subset| {
            let (w, b) = cases(subset, &request.direction);
            (
                primary(
                    subset.design,
                    &request.scale,
                    &w,
                    request.confidence,
                    sign,
                    None,
                ),
                primary(
                    subset.design,
                    &request.scale,
                    &b,
                    request.confidence,
                    sign,
                    None,
                ),
            )
        })
        .collect();
    let flips = estimates
        .iter()
        .filter(|(w, b)| rule_decision(request, w, b) != decision)
        .count();
    let lowers: Vec<f64> = estimates.iter().filter_map(|(e, _)| e.lower).collect();
    let uppers: Vec<f64> = estimates.iter().filter_map(|(e, _)| e.upper).collect();
    let min = |v: &[f64]| v.iter().copied().reduce(f64::min);
    let max = |v: &[f64]| v.iter().copied().reduce(f64::max);
    let span = [min(&lowers), max(&lowers), min(&uppers), max(&uppers)];
    (Some(span), decision.map(|_| flips))
}

pub(super) fn drop_one(pairs: &Pairs) -> Vec<Pairs> {
    let without = |v: &[(f64, f64)], i: usize| -> Vec<(f64, f64)> {
        v.iter()
            .enumerate()
            .filter(|(j, _)| *j != i)
            .map(|(_, x)| *x)
            .collect()
    };
    let make = |design, baseline, candidate| Pairs {
        design,
        baseline,
        candidate,
        attrition: Vec::new(),
        n_baseline: pairs.n_baseline,
        n_candidate: pairs.n_candidate,
        trials: (Vec::new(), Vec::new()),
    };
    if pairs.design == PAIRED {
        if pairs.baseline.len() <= MIN_GATE_PAIRS {
            return Vec::new();
        }
        return (0..pairs.baseline.len())
            .map(|i| {
                make(
                    PAIRED,
                    without(&pairs.baseline, i),
                    without(&pairs.candidate, i),
                )
            })
            .collect();
    }
    let mut subsets = Vec::new();
    if pairs.baseline.len() > MIN_GATE_PAIRS {
        for i in 0..pairs.baseline.len() {
            subsets.push(make(
                INDEPENDENT,
                without(&pairs.baseline, i),
                pairs.candidate.clone(),
            ));
        }
    }
    if pairs.candidate.len() > MIN_GATE_PAIRS {
        for i in 0..pairs.candidate.len() {
            subsets.push(make(
                INDEPENDENT,
                pairs.baseline.clone(),
                without(&pairs.candidate, i),
            ));
        }
    }
    subsets
}

pub(super) fn rule_decision(
    request: &Request,
    worst: &Estimate,
    best: &Estimate,
) -> Option<&'static str> {
    let gate = request.gate.as_ref()?;
    Some(decide(
        &gate.rule,
        gate.budget,
        worst,
        best,
        &request.direction,
    ))
}

pub(super) fn beats(candidate: f64, baseline: f64) -> f64 {
    if candidate == baseline {
        0.5
    } else if candidate > baseline {
        1.0
    } else {
        0.0
    }
}

pub(super) fn effect_size(pairs: &Pairs) -> J {
    let first: Vec<f64> = pairs.baseline.iter().map(|(l, h)| (l + h) / 2.0).collect();
    let second: Vec<f64> = pairs.candidate.iter().map(|(l, h)| (l + h) / 2.0).collect();
    if pairs.design == PAIRED {
        let wins: f64 = first.iter().zip(&second).map(|(a, b)| beats(*b, *a)).sum();
        return obj([
            ("name", J::from("paired_superiority")),
            ("value", J::Float(wins / first.len() as f64)),
            ("count", J::from(first.len())),
        ]);
    }
    let count = first.len() * second.len();
    let total: f64 = first
        .iter()
        .flat_map(|a| second.iter().map(move |b| beats(*b, *a)))
        .sum();
    obj([
        ("name", J::from("a12")),
        (
            "value",
            if count > 0 {
                J::Float(total / count as f64)
            } else {
                J::Null
            },
        ),
        ("count", J::from(count)),
    ])
}

pub(super) fn gate(
    request: &Request,
    pairs: &Pairs,
    worst: &Estimate,
    best: &Estimate,
    guards: &Guards,
) -> Option<GateOutcome> {
    let gate = request.gate.as_ref()?;
    if let Some(reason) = gate_blocker(request, pairs, guards) {
        return Some(GateOutcome::new(NOT_EVALUABLE, Some(&reason), gate));
    }
    let status = decide(&gate.rule, gate.budget, worst, best, &request.direction);
    let case = if gate.rule == NON_INFERIORITY {
        "worst_case"
    } else {
        "best_case"
    };
    let reason = match status {
        PASS => None,
        FAIL => Some("exceeds_budget"),
        _ => Some("unbounded"),
    };
    Some(GateOutcome::new(status, reason, gate).with_case(case))
}

pub(super) fn gate_blocker(request: &Request, pairs: &Pairs, guards: &Guards) -> Option<String> {
    let gate = request.gate.as_ref()?;
    let complete = complete(pairs, &request.scale);
    if let Some(reason) = &request.unavailable {
        return Some(reason.clone());
    }
    if gate
        .min_complete_blocks
        .is_some_and(|m| (complete as i64) < m)
    {
        return Some("blocks_below_preregistered".into());
    }
    if complete < MIN_GATE_PAIRS {
        let reason = if pairs.design == PAIRED {
            "insufficient_blocks"
        } else {
            "insufficient_runs"
        };
        return Some(reason.into());
    }
    if guards.decision_flips.is_some_and(|f| f > 0) {
        return Some("decision_unstable".into());
    }
    None
}

pub(super) fn complete(pairs: &Pairs, scale: &str) -> usize {
    if scale == ABSOLUTE {
        pairs.candidate.len()
    } else if pairs.design == PAIRED {
        pairs.baseline.len()
    } else {
        pairs.baseline.len().min(pairs.candidate.len())
    }
}
