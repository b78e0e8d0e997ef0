//! A gate judged from an estimate: non-inferiority, significant and
//! demonstrated rules against a budget.

use super::*;

pub(super) fn bad(estimate: &Estimate, direction: &str) -> Option<(f64, f64, f64)> {
    let (e, l, u) = (estimate.effect?, estimate.lower?, estimate.upper?);
    Some(if direction == LOWER_IS_BETTER {
        (e, l, u)
    } else {
        (-e, -u, -l)
    })
}

/// A gate rule's decision on an interval: `worst` for non-inferiority, `best` otherwise.
pub fn decide(
    rule: &str,
    budget: f64,
    worst: &Estimate,
    best: &Estimate,
    direction: &str,
) -> &'static str {
    let estimate = if rule == NON_INFERIORITY { worst } else { best };
    let Some((effect, lower, upper)) = bad(estimate, direction) else {
        return NOT_EVALUABLE;
    };
    let failed = match rule {
        NON_INFERIORITY => upper > budget,
        SIGNIFICANT => lower > 0.0 && effect > budget,
        _ => lower > budget,
    };
    if failed {
        FAIL
    } else {
        PASS
    }
}

/// Which way the metric moved, and whether beyond the tolerance.
pub fn verdict(
    worst: &Estimate,
    best: &Estimate,
    direction: &str,
    tolerance: f64,
) -> (String, String) {
    let (Some(bb), Some(bw)) = (bad(best, direction), bad(worst, direction)) else {
        return ("undetermined".into(), "undetermined".into());
    };
    let moved = if bb.1 > 0.0 {
        "worse"
    } else if bw.2 < 0.0 {
        "better"
    } else {
        "no_detectable_change"
    };
    let against = if -tolerance < bw.1 && bw.2 < tolerance {
        "within"
    } else if bb.1 > tolerance || bw.2 < -tolerance {
        "beyond"
    } else {
        "undetermined"
    };
    (moved.into(), against.into())
}
