//! `slo frontier`: per case and criterion, the smallest threshold whose
//! attainment (lower bound: unknowns count against it) reaches a target,
//! with a distribution-free interval for it (docs/slo.md "Frontier").
//!
//! The attainment at T is `(pass(T) + not_applicable) / offered`, and
//! `pass(T)` counts the successful requests' values at or below T; so the
//! smallest T is the c-th smallest value for the smallest count c that
//! reaches the target, and the verdict changes only at observed values. Its
//! interval is the order-statistic interval the report puts on a latency
//! quantile (`analysis::sufficiency`), for the c/m quantile of the m values.

use super::RunView;
use crate::analysis::sufficiency::order_ranks;
pub use crate::slo::answers::Frontier;
use crate::slo::evaluate::share;
use crate::slo::sweep::Column;
use crate::slo::CriterionKey;

/// What `slo frontier` is asked.
#[derive(Debug, Clone)]
pub struct FrontierConfig {
    /// A share in (0, 1].
    pub target: f64,
    pub criteria: Vec<CriterionKey>,
    /// In (0, 1): the interval's coverage, split evenly between the tails.
    pub confidence: f64,
}

/// The frontiers of one run, per case and criterion.
pub fn frontiers(view: &RunView, cfg: &FrontierConfig) -> Vec<Frontier> {
    let spans = view.spans();
    let mut out = Vec::new();
    for (case, reqs) in &view.cases {
        for &key in &cfg.criteria {
            let column = Column::marginal(key, reqs, &spans);
            let mut f = frontier(&column, cfg.target, cfg.confidence);
            f.run_id = view.run_id().to_owned();
            f.case = case.clone();
            out.push(f);
        }
    }
    out
}

/// Every per-request criterion some successful request of the run has a
/// value for, in the criteria's definition order.
pub fn measured_criteria(view: &RunView) -> Vec<CriterionKey> {
    let spans = view.spans();
    crate::slo::criteria::ALL
        .into_iter()
        .filter(|k| !k.is_aggregate_only())
        .filter(|&k| {
            view.cases.iter().any(|(_, reqs)| {
                reqs.iter().any(|r| {
                    r.is_ok()
                        && matches!(
                            crate::slo::measure_key(r, k, &spans),
                            crate::slo::Measure::Value(_)
                        )
                })
            })
        })
        .collect()
}

/// The frontier of one marginal column (run and case left empty).
pub fn frontier(column: &Column, target: f64, confidence: f64) -> Frontier {
    let c = &column.rest_met;
    let offered = column.offered;
    let m = c.values.len();
    let mut f = Frontier {
        run_id: String::new(),
        case: String::new(),
        criterion: column.key.as_str().to_owned(),
        target,
        status: "unreachable",
        threshold_ms: None,
        lower_ms: None,
        upper_ms: None,
        confidence,
        attainment_lower: None,
        values: m,
        reason: None,
    };
    let judged = column.judged();
    if column.key.is_aggregate_only() {
        f.reason = Some("aggregate_only: no single request can be judged on it".into());
        return f;
    }
    if offered == 0 {
        f.reason = Some("no requests offered".into());
        return f;
    }
    if judged > 0 && c.unknown == judged {
        f.reason = Some(format!(
            "every successful request ({judged}) has an unknown value"
        ));
        return f;
    }
    // The attainment with `k` values passing, computed as the report does.
    let lower = |k: usize| share(k + c.not_applicable, offered).unwrap_or(0.0);
    let best = lower(m);
    if best < target {
        f.attainment_lower = Some(best);
        f.reason = Some(format!(
            "failures and unknowns cap attainment at {best}: of {offered} offered, {} did not \
             succeed and {} are unknown",
            offered - judged,
            c.unknown
        ));
        return f;
    }
    // Smallest count reaching the target (lower(k) grows with k).
    let (mut count, mut hi) = (0, m);
    while count < hi {
        let mid = count + (hi - count) / 2;
        if lower(mid) >= target {
            hi = mid;
        } else {
            count = mid + 1;
        }
    }
    f.status = "reached";
    f.attainment_lower = Some(lower(count));
    if count == 0 {
        // Not-applicable requests alone reach it: any threshold does.
        f.threshold_ms = Some(0.0);
        return f;
    }
    f.threshold_ms = Some(c.values[count - 1]);
    if let Some((j, k)) = order_ranks(m, count as f64 / m as f64, confidence) {
        f.lower_ms = j.checked_sub(1).and_then(|i| c.values.get(i)).copied();
        f.upper_ms = k.checked_sub(1).and_then(|i| c.values.get(i)).copied();
    }
    f
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::slo::sweep::Class;

    fn column(values: Vec<f64>, na: usize, unknown: usize, failed: usize) -> Column {
        let offered = values.len() + na + unknown + failed;
        Column {
            key: CriterionKey::ClientTtft,
            offered,
            rest_met: Class {
                values,
                not_applicable: na,
                unknown,
            },
            rest_unknown: Class::default(),
        }
    }

    #[test]
    fn twenty_values_median_interval_by_hand() {
        // Binomial(20, 0.5): P(N <= 5) = 0.0207 <= 0.025 < P(N <= 6) = 0.0577,
        // so j = 6; P(N >= 15) = 0.0207, P(N >= 14) = 0.0577, so k = 15.
        let c = column((1..=20).map(f64::from).collect(), 0, 0, 0);
        let f = frontier(&c, 0.5, 0.95);
        assert_eq!(f.status, "reached");
        assert_eq!(f.threshold_ms, Some(10.0));
        assert_eq!((f.lower_ms, f.upper_ms), (Some(6.0), Some(15.0)));
        // At 90%: the interval of Binomial(10, 0.5) has j = 2, k = 9
        // (P(N <= 1) = 0.0107, P(N <= 2) = 0.0547).
        let c = column((1..=10).map(|x| f64::from(x) * 10.0).collect(), 0, 0, 0);
        let f = frontier(&c, 0.5, 0.9);
        assert_eq!(f.threshold_ms, Some(50.0));
        assert_eq!(f.lower_ms, Some(20.0));
        // P(N >= 9) = 0.0107 <= 0.05 < P(N >= 8) = 0.0547.
        assert_eq!(f.upper_ms, Some(90.0));
    }

    #[test]
    fn small_n_leaves_the_interval_open() {
        // Three values: Binomial(3, 2/3) tails never fall to 0.025 on the
        // upper side and P(N <= 0) = 1/27 > 0.025 on the lower one.
        let c = column(vec![5.0, 7.0, 9.0], 0, 0, 0);
        let f = frontier(&c, 0.6, 0.95);
        assert_eq!(f.threshold_ms, Some(7.0));
        assert_eq!((f.lower_ms, f.upper_ms), (None, None));
    }

    #[test]
    fn unknowns_count_against_and_failures_can_make_it_unreachable() {
        // 8 values, 1 unknown, 1 failed: at most 8/10 on the lower bound.
        let c = column((1..=8).map(f64::from).collect(), 0, 1, 1);
        let f = frontier(&c, 0.8, 0.95);
        assert_eq!((f.status, f.threshold_ms), ("reached", Some(8.0)));
        let f = frontier(&c, 0.85, 0.95);
        assert_eq!(f.status, "unreachable");
        assert_eq!(f.threshold_ms, None);
        assert_eq!(f.attainment_lower, Some(0.8));
        assert!(f
            .reason
            .unwrap()
            .contains("1 did not succeed and 1 are unknown"));
        // Not-applicable requests count as passing.
        let c = column(vec![3.0, 4.0], 2, 0, 0);
        assert_eq!(frontier(&c, 0.75, 0.95).threshold_ms, Some(3.0));
        assert_eq!(frontier(&c, 0.5, 0.95).threshold_ms, Some(0.0));
        // All unknown.
        let c = column(vec![], 0, 3, 0);
        assert!(frontier(&c, 0.5, 0.95)
            .reason
            .unwrap()
            .contains("unknown value"));
    }
}
