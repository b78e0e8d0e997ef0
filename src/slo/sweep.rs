//! One criterion's judgement at many thresholds at once (docs/slo.md): each
//! request of a case is measured once ([`measure_key`], the value
//! [`judge`](super::judge::judge) compares) and the rest of its judgement
//! (its status and the policy's other criteria, by [`judge_request`]) is
//! fixed; the values are sorted once, and a threshold's counts are then two
//! binary searches. Every count is the one `evaluate_case` makes for a
//! policy holding that threshold, built by the same [`Marginal`] and
//! [`share`] code, so a point of a curve is the report's figure exactly.

use super::criteria::CriterionKey;
use super::evaluate::{share, Marginal};
use super::judge::{judge_request, measure_key, passes, Measure, Verdict};
use super::policy::Policy;
use super::Spans;
use crate::model::Request;

/// The moving criterion's outcomes among the requests whose rest of the
/// judgement leaves one verdict.
#[derive(Debug, Clone, Default)]
pub struct Class {
    /// Values, ascending (never NaN: implausible values are unknown).
    pub values: Vec<f64>,
    pub not_applicable: usize,
    pub unknown: usize,
}

impl Class {
    /// Values that pass at `threshold`.
    pub fn passing(&self, threshold: f64) -> usize {
        self.values.partition_point(|&v| passes(v, threshold))
    }

    fn add(&mut self, m: Measure) {
        match m {
            Measure::Value(v) => self.values.push(v),
            Measure::NotApplicable(_) => self.not_applicable += 1,
            Measure::Unknown(_) => self.unknown += 1,
        }
    }

    fn sort(&mut self) {
        self.values.sort_unstable_by(f64::total_cmp);
    }

    fn len(&self) -> usize {
        self.values.len() + self.not_applicable + self.unknown
    }
}

/// A case's column for one criterion: the requests whose rest is met, and
/// those whose rest is unknown (a request whose rest is missed is missed at
/// every threshold and counts only as offered).
#[derive(Debug, Clone)]
pub struct Column {
    pub key: CriterionKey,
    pub offered: usize,
    pub rest_met: Class,
    pub rest_unknown: Class,
}

/// Joint counts at one threshold (the case's `met`, `missed`, `unknown`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Joint {
    pub offered: usize,
    pub met: usize,
    pub unknown: usize,
    pub missed: usize,
    pub attainment_lower: Option<f64>,
    pub attainment_upper: Option<f64>,
}

impl Column {
    /// The marginal column: the rest is only the request's status (a
    /// request that did not succeed is left out of the counts, as docs/slo-policy.md
    /// §8.3 counts among successful requests).
    pub fn marginal(key: CriterionKey, requests: &[&Request], spans: &Spans) -> Column {
        let mut rest_met = Class::default();
        for r in requests.iter().filter(|r| r.is_ok()) {
            rest_met.add(measure_key(r, key, spans));
        }
        rest_met.sort();
        Column {
            key,
            offered: requests.len(),
            rest_met,
            rest_unknown: Class::default(),
        }
    }

    /// The joint column: `rest` is the policy without this criterion, each
    /// request judged by it once.
    pub fn joint(key: CriterionKey, rest: &Policy, requests: &[&Request], spans: &Spans) -> Column {
        let (mut rest_met, mut rest_unknown) = (Class::default(), Class::default());
        for r in requests {
            match judge_request(rest, r, spans).verdict {
                Verdict::Met => rest_met.add(measure_key(r, key, spans)),
                Verdict::Unknown => rest_unknown.add(measure_key(r, key, spans)),
                Verdict::Missed => {}
            }
        }
        rest_met.sort();
        rest_unknown.sort();
        Column {
            key,
            offered: requests.len(),
            rest_met,
            rest_unknown,
        }
    }

    /// The `per_criterion` entry at `threshold` (a marginal column only).
    pub fn marginal_at(&self, threshold: f64) -> Marginal {
        let c = &self.rest_met;
        let pass = c.passing(threshold);
        Marginal::of_counts(
            self.key.is_aggregate_only(),
            pass,
            c.values.len() - pass,
            c.not_applicable,
            c.unknown,
            self.offered,
        )
    }

    /// Joint counts at `threshold` (a joint column); `measurable` is false
    /// when the policy is unmeasurable (docs/slo-policy.md §8.4), which no threshold
    /// changes, and then the bounds are null.
    pub fn joint_at(&self, threshold: f64, measurable: bool) -> Joint {
        let (m, u) = (&self.rest_met, &self.rest_unknown);
        let met = m.not_applicable + m.passing(threshold);
        let unknown = m.unknown + u.not_applicable + u.unknown + u.passing(threshold);
        let bound = |x: usize| {
            if measurable {
                share(x, self.offered)
            } else {
                None
            }
        };
        Joint {
            offered: self.offered,
            met,
            unknown,
            missed: self.offered - met - unknown,
            attainment_lower: bound(met),
            attainment_upper: bound(met + unknown),
        }
    }

    /// Successful requests judged on this criterion (a marginal column).
    pub fn judged(&self) -> usize {
        self.rest_met.len()
    }

    /// Every distinct value of the column, ascending: the thresholds at
    /// which its counts change.
    pub fn breakpoints(&self) -> Vec<f64> {
        let mut v: Vec<f64> = self
            .rest_met
            .values
            .iter()
            .chain(&self.rest_unknown.values)
            .copied()
            .collect();
        v.sort_unstable_by(f64::total_cmp);
        v.dedup();
        v
    }
}

/// `policy` without the criterion `key` (the rest a joint column fixes).
pub fn without(policy: &Policy, key: CriterionKey) -> Policy {
    let mut rest = policy.clone();
    rest.criteria.retain(|c| c.key != key);
    rest
}

/// `policy` with `key`'s limit at `max_ms` (added when the policy lacks it).
pub fn with_limit(policy: &Policy, key: CriterionKey, max_ms: f64) -> Policy {
    let mut p = policy.clone();
    match p.criteria.iter_mut().find(|c| c.key == key) {
        Some(c) => c.max_ms = max_ms,
        None => p.criteria.push(super::Criterion {
            key,
            max_ms,
            attainment_target: None,
        }),
    }
    p
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::slo::tests::{no_spans, request};
    use crate::slo::{evaluate_case, parse_flags, PolicySource};
    use serde_json::{json, Value};

    fn flags(f: &[&str]) -> Policy {
        parse_flags(&f.iter().map(|s| s.to_string()).collect::<Vec<_>>()).unwrap()
    }

    fn sample() -> Vec<Request> {
        vec![
            request(
                json!({"status": "ok", "ttft_ms": 40, "e2e_latency_ms": 100, "output_tokens": 10, "output_token_source": "server_usage"}),
            ),
            request(
                json!({"status": "ok", "ttft_ms": 80, "e2e_latency_ms": 200, "output_tokens": 1, "output_token_source": "server_usage"}),
            ),
            request(json!({"status": "ok", "ttft_ms": 80, "e2e_latency_ms": 300})),
            request(json!({"status": "ok", "e2e_latency_ms": 400})),
            request(json!({"status": "timeout", "ttft_ms": 10, "e2e_latency_ms": 600})),
            request(json!({"status": "dropped"})),
        ]
    }

    #[test]
    fn every_threshold_agrees_with_the_evaluation() {
        let (j, q) = no_spans();
        let s = Spans {
            joined: &j,
            quarantined: &q,
        };
        let reqs = sample();
        let refs: Vec<&Request> = reqs.iter().collect();
        let base = flags(&["ttft:50", "e2e:250", "tpot:10"]);
        for key in [
            CriterionKey::ClientTtft,
            CriterionKey::ClientE2e,
            CriterionKey::ClientTpot,
        ] {
            let marginal = Column::marginal(key, &refs, &s);
            let joint = Column::joint(key, &without(&base, key), &refs, &s);
            for t in [1.0, 10.0, 39.9, 40.0, 41.0, 80.0, 100.0, 250.0, 400.0, 1e9] {
                let p = with_limit(&base, key, t);
                let rec = evaluate_case(
                    &refs,
                    &p,
                    PolicySource::Flags,
                    &Value::Null,
                    &Value::Null,
                    &s,
                );
                let m = marginal.marginal_at(t);
                assert_eq!(
                    serde_json::to_value(m).unwrap(),
                    rec["per_criterion"][key.as_str()],
                    "{key} at {t}"
                );
                let jt = joint.joint_at(t, rec["status"] == "evaluated");
                assert_eq!(json!(jt.met), rec["met"], "{key} at {t}");
                assert_eq!(json!(jt.unknown), rec["unknown"]);
                assert_eq!(json!(jt.missed), rec["missed"]);
                assert_eq!(json!(jt.attainment_lower), rec["attainment_lower"]);
                assert_eq!(json!(jt.attainment_upper), rec["attainment_upper"]);
            }
        }
    }

    #[test]
    fn ties_and_the_inclusive_limit() {
        let (j, q) = no_spans();
        let s = Spans {
            joined: &j,
            quarantined: &q,
        };
        let reqs = sample();
        let refs: Vec<&Request> = reqs.iter().collect();
        let c = Column::marginal(CriterionKey::ClientTtft, &refs, &s);
        // Successful TTFTs 40, 80, 80 and one unknown; six offered.
        assert_eq!(c.rest_met.values, vec![40.0, 80.0, 80.0]);
        assert_eq!(c.marginal_at(79.9).pass, 1);
        assert_eq!(c.marginal_at(80.0).pass, 3);
        assert_eq!(c.marginal_at(80.0).attainment_lower, Some(0.5));
        assert_eq!(c.marginal_at(80.0).attainment_upper, Some(4.0 / 6.0));
        assert_eq!(c.breakpoints(), vec![40.0, 80.0]);
    }
}
