//! `slo curve`: attainment as a function of one criterion's threshold, per
//! case. A point at T is the case's `per_criterion[KEY]` under `--slo KEY:T`
//! (docs/slo.md "Curve"); with a joint policy, also the case's joint
//! attainment when KEY moves to T and the policy's other criteria stay.

use super::{Result, RunView, SloOpsError};
pub use crate::slo::answers::{Curve, JointPoint, Point};
use crate::slo::sweep::{self, Column};
use crate::slo::{CriterionKey, Policy, PolicySource};

/// The thresholds a curve is drawn at.
#[derive(Debug, Clone, PartialEq)]
pub enum Thresholds {
    /// These, in the order given.
    List(Vec<f64>),
    /// `n` points from `lo` to `hi`, evenly spaced (geometrically with `log`).
    Range {
        lo: f64,
        hi: f64,
        n: usize,
        log: bool,
    },
}

impl Thresholds {
    /// `--thresholds 10,20,50`.
    pub fn parse_list(s: &str) -> Result<Thresholds> {
        let v = s
            .split(',')
            .map(|x| threshold(x.trim(), "--thresholds"))
            .collect::<Result<Vec<f64>>>()?;
        Ok(Thresholds::List(v))
    }

    /// `--range LO:HI[:N]` (N defaults to 25, at least 2 unless LO = HI).
    pub fn parse_range(s: &str, log: bool) -> Result<Thresholds> {
        let parts: Vec<&str> = s.split(':').collect();
        let bad = || {
            SloOpsError::usage(format!(
                "--range {s}: expected LO:HI or LO:HI:N, such as 10:500:50"
            ))
        };
        if !(2..=3).contains(&parts.len()) {
            return Err(bad());
        }
        let lo = threshold(parts[0], "--range")?;
        let hi = threshold(parts[1], "--range")?;
        let n = match parts.get(2) {
            Some(n) => n.trim().parse::<usize>().map_err(|_| bad())?,
            None => 25,
        };
        if n > MAX_POINTS {
            return Err(SloOpsError::usage(format!(
                "--range {s}: at most {MAX_POINTS} thresholds"
            )));
        }
        if hi < lo || n == 0 || (n == 1 && hi != lo) {
            return Err(SloOpsError::usage(format!(
                "--range {s}: LO must not exceed HI, and N must be at least 2 (1 when LO = HI)"
            )));
        }
        if log && lo <= 0.0 {
            return Err(SloOpsError::usage(format!(
                "--range {s} --log: LO must be above 0 for a geometric range"
            )));
        }
        Ok(Thresholds::Range { lo, hi, n, log })
    }

    pub fn values(&self) -> Vec<f64> {
        match *self {
            Thresholds::List(ref v) => v.clone(),
            Thresholds::Range { lo, hi, n, log } => (0..n)
                .map(|i| {
                    if n == 1 || i + 1 == n {
                        return if i == 0 { lo } else { hi };
                    }
                    let f = i as f64 / (n - 1) as f64;
                    if log {
                        lo * (hi / lo).powf(f)
                    } else {
                        lo + (hi - lo) * f
                    }
                })
                .collect(),
        }
    }
}

/// More thresholds than any plot has pixels for.
const MAX_POINTS: usize = 1_000_000;

fn threshold(x: &str, flag: &str) -> Result<f64> {
    match x.parse::<f64>() {
        Ok(v) if v.is_finite() && v >= 0.0 => Ok(v),
        _ => Err(SloOpsError::usage(format!(
            "{flag}: {x:?} is not a threshold in ms (a finite number, at least 0)"
        ))),
    }
}

/// What `slo curve` is asked.
#[derive(Debug, Clone)]
pub struct CurveConfig {
    pub criteria: Vec<CriterionKey>,
    /// None: 25 evenly spaced points from the smallest to the largest value
    /// the run's successful requests have for the criterion.
    pub thresholds: Option<Thresholds>,
    pub joint: Option<(Policy, PolicySource)>,
}

/// The curves of one run: per case, per criterion, in that order.
pub fn curves(view: &RunView, cfg: &CurveConfig) -> Vec<Curve> {
    let spans = view.spans();
    let mut out = Vec::new();
    // Thresholds from the run's own range when none are given.
    let marginals: Vec<Vec<Column>> = view
        .cases
        .iter()
        .map(|(_, reqs)| {
            cfg.criteria
                .iter()
                .map(|&k| Column::marginal(k, reqs, &spans))
                .collect()
        })
        .collect();
    let thresholds: Vec<Vec<f64>> = cfg
        .criteria
        .iter()
        .enumerate()
        .map(|(i, _)| match &cfg.thresholds {
            Some(t) => t.values(),
            None => {
                let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
                for case in &marginals {
                    let v = &case[i].rest_met.values;
                    if let (Some(a), Some(b)) = (v.first(), v.last()) {
                        lo = lo.min(*a);
                        hi = hi.max(*b);
                    }
                }
                if lo > hi {
                    Vec::new()
                } else {
                    let n = if lo == hi { 1 } else { 25 };
                    Thresholds::Range {
                        lo,
                        hi,
                        n,
                        log: false,
                    }
                    .values()
                }
            }
        })
        .collect();
    for ((case, reqs), columns) in view.cases.iter().zip(marginals.iter()) {
        for (i, column) in columns.iter().enumerate() {
            let key = cfg.criteria[i];
            // Whether the joint policy (with KEY in it) is measurable does not
            // depend on KEY's threshold: one evaluation at any limit says.
            let joint_column = cfg.joint.as_ref().map(|(policy, source)| {
                let with_key = sweep::with_limit(policy, key, 1.0);
                let rec = crate::slo::evaluate_case(
                    reqs,
                    &with_key,
                    *source,
                    &serde_json::Value::Null,
                    &serde_json::Value::Null,
                    &spans,
                );
                (
                    Column::joint(key, &sweep::without(&with_key, key), reqs, &spans),
                    rec["status"] == "evaluated",
                )
            });
            let points = thresholds[i]
                .iter()
                .map(|&t| {
                    let m = column.marginal_at(t);
                    Point {
                        threshold_ms: t,
                        pass: m.pass,
                        fail: m.fail,
                        unknown: m.unknown,
                        not_applicable: m.not_applicable,
                        attainment_lower: m.attainment_lower,
                        attainment_upper: m.attainment_upper,
                        joint: joint_column.as_ref().map(|(c, measurable)| {
                            let j = c.joint_at(t, *measurable);
                            JointPoint {
                                met: j.met,
                                missed: j.missed,
                                unknown: j.unknown,
                                attainment_lower: j.attainment_lower,
                                attainment_upper: j.attainment_upper,
                            }
                        }),
                    }
                })
                .collect();
            out.push(Curve {
                run_id: view.run_id().to_owned(),
                case: case.clone(),
                criterion: key.as_str().to_owned(),
                offered: reqs.len(),
                joint_policy: cfg.joint.as_ref().map(|(p, _)| p.name.clone()),
                points,
            });
        }
    }
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn ranges_and_lists() {
        assert_eq!(
            Thresholds::parse_range("10:50:5", false).unwrap().values(),
            vec![10.0, 20.0, 30.0, 40.0, 50.0]
        );
        let log = Thresholds::parse_range("1:1000:4", true).unwrap().values();
        assert_eq!(log[0], 1.0);
        assert!((log[1] - 10.0).abs() < 1e-9 && (log[2] - 100.0).abs() < 1e-9);
        assert_eq!(log[3], 1000.0);
        assert_eq!(
            Thresholds::parse_list("5, 1,2.5").unwrap().values(),
            vec![5.0, 1.0, 2.5]
        );
        assert!(Thresholds::parse_range("50:10", false).is_err());
        assert!(Thresholds::parse_range("0:10", true).is_err());
        assert!(Thresholds::parse_list("1,x").is_err());
        assert!(Thresholds::parse_list("-1").is_err());
        assert_eq!(
            Thresholds::parse_range("7:7:1", false).unwrap().values(),
            vec![7.0]
        );
    }
}
