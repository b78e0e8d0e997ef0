//! Fractions: success shares compared as proportions, and the run-level claim
//! of a fraction's gate.

use super::*;

pub(super) fn counted(pairs: &Pairs) -> bool {
    let lengths_ok = pairs.trials.0.len() == pairs.baseline.len()
        && pairs.trials.1.len() == pairs.candidate.len();
    let all: Vec<&Option<i64>> = pairs.trials.0.iter().chain(&pairs.trials.1).collect();
    lengths_ok && !all.is_empty() && all.iter().all(|m| m.is_some_and(|m| m > 0))
}

pub(super) fn floor(request: &Request, pairs: &Pairs, case: &Case) -> Option<f64> {
    if request.unit != FRACTION_UNIT || !counted(pairs) {
        return None;
    }
    let mut variance = 0.0;
    for (values, counts) in [(&case.0, &pairs.trials.0), (&case.1, &pairs.trials.1)] {
        let total: f64 = counts.iter().map(|m| m.unwrap_or(0) as f64).sum();
        let events: f64 = values
            .iter()
            .zip(counts)
            .map(|(v, m)| v * m.unwrap_or(0) as f64)
            .sum();
        let share = (events + 1.0) / (total + 2.0);
        variance += share * (1.0 - share) / total;
    }
    Some(variance.sqrt())
}

pub(super) fn pooled(request: &Request, pairs: &Pairs) -> Option<J> {
    if !counted(pairs) {
        return None;
    }
    let (worst_case, _) = cases(pairs, &request.direction);
    let mut bounds = Vec::new();
    for (values, counts) in [
        (&worst_case.0, &pairs.trials.0),
        (&worst_case.1, &pairs.trials.1),
    ] {
        let total: i64 = counts.iter().map(|m| m.unwrap_or(0)).sum();
        let events: f64 = values
            .iter()
            .zip(counts)
            .map(|(v, m)| v * m.unwrap_or(0) as f64)
            .sum();
        let events = crate::analysis::stats::round_half_even(events).max(0.0) as u64;
        bounds.push(clopper_pearson(
            events,
            total.max(0) as u64,
            request.confidence,
            "independent_requests",
        ));
    }
    let bad = if request.direction == LOWER_IS_BETTER {
        bounds[1].upper - bounds[0].lower
    } else {
        bounds[0].upper - bounds[1].lower
    };
    let budget = request.tolerance();
    let alpha = (1.0 - request.confidence) / 2.0;
    let needed =
        (0.0 < budget && budget < 1.0).then(|| (alpha.ln() / (1.0 - budget).ln()).ceil() as i64);
    Some(obj([
        ("model", J::from("independent_requests")),
        ("baseline", bounds[0].to_record()),
        ("candidate", bounds[1].to_record()),
        ("bad_direction_bound", J::Float(bad)),
        ("n_eff_for_zero_event_bound", J::from(needed)),
        (
            "note",
            J::from("exact only if requests are independent; with correlation rho within a run the effective sample is N / (1 + (m - 1) rho)"),
        ),
    ]))
}

pub(super) fn run_level_gate(
    request: &Request,
    baseline: &[RunValue],
    candidate: &[RunValue],
    blocks: Option<(&[String], &[String])>,
) -> Option<GateOutcome> {
    let rule = request.gate.as_ref()?;
    let blocks = match (
        run_level_blocker(request, baseline, candidate, blocks),
        blocks,
    ) {
        (None, Some(blocks)) => blocks,
        (blocker, _) => {
            let reason = blocker.unwrap_or_else(|| "fraction_needs_blocks".into());
            return Some(GateOutcome::new(NOT_EVALUABLE, Some(&reason), rule).with_case(RUN_LEVEL));
        }
    };
    let references = references(baseline, blocks, &request.direction);
    let within = runs_within(&request.direction, rule.budget, candidate, &references);
    let k = within.iter().filter(|ok| **ok).count();
    let n = within.len();
    let bound = clopper_pearson(k as u64, n as u64, request.confidence, "independent_runs");
    let status = if bound.lower >= RUN_PASS_SHARE {
        PASS
    } else {
        FAIL
    };
    let sided = 0.5 + request.confidence / 2.0;
    let statement = format!(
        "{k} of {n} candidate runs within {} of the block baseline; run-pass rate at least {:.3} with {} confidence",
        format_g(rule.budget, 6, false),
        bound.lower,
        percent(sided, 1, false)
    );
    let claim = Claim {
        runs_within_budget: k,
        runs: n,
        runs_unmeasurable: candidate.iter().filter(|v| v.bounds().is_none()).count(),
        run_pass_lower: bound.lower,
        one_sided_confidence: sided,
        statement,
        mean_change: None,
        mean_exceeds_budget: false,
    };
    let reason = (status != PASS).then_some("too_few_runs_within_budget");
    let mut outcome = GateOutcome::new(status, reason, rule).with_case(RUN_LEVEL);
    outcome.claim = Some(claim);
    Some(outcome)
}

pub(super) fn with_mean_change(
    request: &Request,
    result: &MetricComparison,
    outcome: Option<GateOutcome>,
) -> Option<GateOutcome> {
    let mut outcome = outcome?;
    let (Some(claim), Some(rule)) = (outcome.claim.as_mut(), request.gate.as_ref()) else {
        return Some(outcome);
    };
    let change = result
        .worst
        .as_ref()
        .and_then(|w| w.effect)
        .map(|e| request.sign() * e);
    claim.mean_exceeds_budget = change.is_some_and(|c| c > rule.budget);
    claim.mean_change = Some(change);
    Some(outcome)
}

pub(super) fn run_level_blocker(
    request: &Request,
    baseline: &[RunValue],
    candidate: &[RunValue],
    blocks: Option<(&[String], &[String])>,
) -> Option<String> {
    let rule = request.gate.as_ref()?;
    if let Some(reason) = &request.unavailable {
        return Some(reason.clone());
    }
    if blocks.is_none() {
        return Some("fraction_needs_blocks".into());
    }
    if baseline.iter().all(|v| v.bounds().is_none()) {
        return Some("baseline_unmeasured".into());
    }
    let Some(counts) = measured_counts(request.trials.as_ref(), baseline, candidate) else {
        return Some("requests_per_run_unrecorded".into());
    };
    let fewest = counts.iter().copied().min().unwrap_or(0) as f64;
    if rule.budget <= 0.0 || fewest < REQUESTS_PER_BUDGET / rule.budget {
        return Some("too_few_requests_per_run".into());
    }
    if rule
        .min_complete_blocks
        .is_some_and(|m| (candidate.len() as i64) < m)
    {
        return Some("blocks_below_preregistered".into());
    }
    // n of n runs reach the share only when (alpha / 2) ** (1 / n) >= q.
    let n = i32::try_from(candidate.len()).unwrap_or(i32::MAX);
    if (1.0 - request.confidence) / 2.0 < RUN_PASS_SHARE.powi(n) {
        return Some("too_few_runs_for_claim".into());
    }
    None
}

pub(super) fn measured_counts(
    trials: Option<&(Counts, Counts)>,
    baseline: &[RunValue],
    candidate: &[RunValue],
) -> Option<Vec<i64>> {
    let trials = trials?;
    let mut counts = Vec::new();
    for (values, arm) in [(baseline, &trials.0), (candidate, &trials.1)] {
        for (value, m) in values.iter().zip(arm) {
            if value.bounds().is_none() {
                continue;
            }
            match m {
                Some(m) if *m > 0 => counts.push(*m),
                _ => return None,
            }
        }
    }
    Some(counts)
}

pub(super) fn runs_within(
    direction: &str,
    budget: f64,
    candidate: &[RunValue],
    references: &[Option<f64>],
) -> Vec<bool> {
    let s = sign(direction);
    candidate
        .iter()
        .zip(references)
        .map(|(value, reference)| match (value.bounds(), reference) {
            (Some(run), Some(reference)) => {
                let worst = if direction == LOWER_IS_BETTER {
                    run.1
                } else {
                    run.0
                };
                s * (worst - reference) <= budget
            }
            _ => false,
        })
        .collect()
}

pub(super) fn references(
    baseline: &[RunValue],
    blocks: (&[String], &[String]),
    direction: &str,
) -> Vec<Option<f64>> {
    let mut by_block: Vec<(&String, Option<(f64, f64)>)> = Vec::new();
    for (label, value) in blocks.0.iter().zip(baseline) {
        // A later run of a label replaces an earlier one, as a dict would.
        by_block.retain(|(l, _)| *l != label);
        by_block.push((label, value.bounds()));
    }
    blocks
        .1
        .iter()
        .map(|label| {
            let partner = by_block
                .iter()
                .find(|(l, _)| *l == label)
                .and_then(|(_, b)| *b)?;
            Some(if direction == LOWER_IS_BETTER {
                partner.0
            } else {
                partner.1
            })
        })
        .collect()
}
