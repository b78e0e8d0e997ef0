//! `slo capacity`: over a sweep (cases of one or more runs sharing a
//! workload and differing in offered load), the highest load that meets
//! every attainment target (docs/slo.md "Capacity"). The estimate lies
//! between the last passing and the first failing point, interpolated on
//! the target that fails first; a sweep where no point passes, every point
//! passes, or passing is not monotone in load says so and gives no
//! capacity, so a failing point is never reported as one.

use std::collections::BTreeMap;

use serde_json::Value;

use super::RunView;
use crate::py::json as pyjson;
pub use crate::slo::answers::{Load, LoadPoint, Sweep, TargetAt};
use crate::slo::{Policy, PolicySource};

/// A case's load and sweep key from the run's workload record.
pub fn case_load(
    data: &crate::model::RunData,
    case: &str,
    load: Load,
) -> Option<(&'static str, f64, Value)> {
    let workload = data.of_type("infer.workload").next()?;
    let entry = pyjson::get(workload, "cases")
        .as_array()?
        .iter()
        .find(|c| pyjson::get(c, "case_id").as_str() == Some(case))?;
    // A load that is not a finite number cannot be placed in a sweep.
    let finite = |v: Option<f64>| v.filter(|x| x.is_finite());
    let rate = finite(pyjson::real(pyjson::get(
        pyjson::get(entry, "arrival"),
        "rate_per_second",
    )));
    let concurrency = finite(pyjson::real(pyjson::get(entry, "concurrency")));
    let (kind, value) = match load {
        Load::Rate => ("rate", rate?),
        Load::Concurrency => ("concurrency", concurrency?),
        Load::Auto => match (rate, concurrency) {
            (Some(r), _) => ("rate", r),
            (None, Some(c)) => ("concurrency", c),
            _ => return None,
        },
    };
    let mut key = entry.clone();
    if let Value::Object(m) = &mut key {
        m.remove("case_id");
        if kind == "rate" {
            if let Some(Value::Object(a)) = m.get_mut("arrival") {
                a.remove("rate_per_second");
            }
        } else {
            m.remove("concurrency");
        }
    }
    Some((kind, value, key))
}

/// The points of one run under `policy`: (load kind, sweep key, point).
pub fn points(
    view: &RunView,
    policy: &Policy,
    source: PolicySource,
    load: Load,
) -> Vec<(&'static str, Value, LoadPoint)> {
    let mut out = Vec::new();
    for j in view.judge(policy, source) {
        let Some((kind, value, key)) = case_load(view.data, &j.case_id, load) else {
            continue;
        };
        let targets = j
            .targets
            .iter()
            .map(|(name, target, outcome)| {
                let lower = if name == "joint" {
                    &j.slo["attainment_lower"]
                } else {
                    &j.slo["per_criterion"][name]["attainment_lower"]
                };
                TargetAt {
                    name: name.clone(),
                    target: *target,
                    outcome,
                    attainment_lower: lower.as_f64(),
                }
            })
            .collect();
        let verdict = j.verdict();
        out.push((
            kind,
            key,
            LoadPoint {
                run_id: j.run_id.clone(),
                case: j.case_id.clone(),
                load: value,
                verdict,
                passed: verdict == "met",
                targets,
            },
        ));
    }
    out
}

/// Groups points into sweeps (by load kind and workload), each judged.
pub fn sweeps(points: Vec<(&'static str, Value, LoadPoint)>) -> Vec<Sweep> {
    let mut groups: BTreeMap<(String, String), (&'static str, Value, Vec<LoadPoint>)> =
        BTreeMap::new();
    for (kind, key, point) in points {
        let id = (kind.to_owned(), crate::py::json::dumps_pretty(&key));
        groups
            .entry(id)
            .or_insert_with(|| (kind, key, Vec::new()))
            .2
            .push(point);
    }
    groups
        .into_values()
        .map(|(kind, key, pts)| capacity(kind, key, pts))
        .collect()
}

/// One sweep's capacity.
pub fn capacity(kind: &'static str, workload: Value, mut points: Vec<LoadPoint>) -> Sweep {
    points.sort_by(|a, b| a.load.total_cmp(&b.load));
    let mut sweep = Sweep {
        load: kind,
        workload,
        status: "not_monotone",
        capacity: None,
        binding_target: None,
        last_passing: None,
        first_failing: None,
        points: Vec::new(),
    };
    let passing = points.iter().filter(|p| p.passed).count();
    // The same load both passing and failing cannot be ordered.
    let split_load = points
        .windows(2)
        .any(|w| w[0].load == w[1].load && w[0].passed != w[1].passed);
    // Monotone: every passing point below every failing one.
    let monotone = !split_load && points.iter().take(passing).all(|p| p.passed);
    if passing == points.len() {
        sweep.status = "all_pass";
        sweep.last_passing = points.last().cloned();
    } else if passing == 0 {
        sweep.status = "none_pass";
        sweep.first_failing = points.first().cloned();
    } else if monotone {
        let (p, f) = (&points[passing - 1], &points[passing]);
        sweep.status = "bracketed";
        // Each target failing at f crosses between p and f; the first
        // crossing is the capacity. Without figures, the last pass is.
        let mut best: Option<(f64, String)> = None;
        for t in f.targets.iter().filter(|t| t.outcome != "met") {
            let at_p = p.targets.iter().find(|x| x.name == t.name);
            let x = match (at_p.and_then(|x| x.attainment_lower), t.attainment_lower) {
                (Some(ap), Some(af)) if ap > af => {
                    p.load + (f.load - p.load) * (ap - t.target) / (ap - af)
                }
                _ => p.load,
            };
            if best.as_ref().is_none_or(|(b, _)| x < *b) {
                best = Some((x, t.name.clone()));
            }
        }
        let (x, name) = best.unwrap_or((p.load, String::new()));
        sweep.capacity = Some(x.clamp(p.load, f.load));
        sweep.binding_target = (!name.is_empty()).then_some(name);
        sweep.last_passing = Some(p.clone());
        sweep.first_failing = Some(f.clone());
    }
    sweep.points = points;
    sweep
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn point(load: f64, lower: f64, target: f64) -> LoadPoint {
        let met = lower >= target;
        LoadPoint {
            run_id: "r".into(),
            case: format!("c{load}"),
            load,
            verdict: if met { "met" } else { "missed" },
            passed: met,
            targets: vec![TargetAt {
                name: "joint".into(),
                target,
                outcome: if met { "met" } else { "missed" },
                attainment_lower: Some(lower),
            }],
        }
    }

    fn run(pts: &[(f64, f64)]) -> Sweep {
        capacity(
            "rate",
            Value::Null,
            pts.iter().map(|&(l, a)| point(l, a, 0.9)).collect(),
        )
    }

    #[test]
    fn bracketed_interpolates_on_the_failing_target() {
        // 0.95 at 20 req/s, 0.85 at 40: 0.9 is crossed half way, at 30.
        let s = run(&[(40.0, 0.85), (10.0, 0.99), (20.0, 0.95), (80.0, 0.5)]);
        assert_eq!(s.status, "bracketed");
        assert!(
            (s.capacity.unwrap() - 30.0).abs() < 1e-9,
            "{:?}",
            s.capacity
        );
        assert_eq!(s.binding_target.as_deref(), Some("joint"));
        assert_eq!(s.last_passing.unwrap().load, 20.0);
        assert_eq!(s.first_failing.unwrap().load, 40.0);
        assert_eq!(
            s.points.iter().map(|p| p.load).collect::<Vec<_>>(),
            vec![10.0, 20.0, 40.0, 80.0]
        );
    }

    #[test]
    fn none_all_and_not_monotone_give_no_capacity() {
        let s = run(&[(10.0, 0.5), (20.0, 0.4)]);
        assert_eq!((s.status, s.capacity), ("none_pass", None));
        assert_eq!(s.first_failing.unwrap().load, 10.0);
        let s = run(&[(10.0, 0.95), (20.0, 0.91)]);
        assert_eq!((s.status, s.capacity), ("all_pass", None));
        assert_eq!(s.last_passing.unwrap().load, 20.0);
        let s = run(&[(10.0, 0.95), (20.0, 0.5), (40.0, 0.93)]);
        assert_eq!((s.status, s.capacity), ("not_monotone", None));
        assert_eq!(s.points.len(), 3);
        // One load both passing and failing.
        let s = run(&[(10.0, 0.95), (20.0, 0.95), (20.0, 0.5)]);
        assert_eq!(s.status, "not_monotone");
    }

    #[test]
    fn an_unmeasurable_failure_caps_at_the_last_pass() {
        let mut f = point(40.0, 0.0, 0.9);
        f.targets[0].attainment_lower = None;
        f.targets[0].outcome = "unmeasurable";
        f.verdict = "unmeasurable";
        let s = capacity("concurrency", Value::Null, vec![point(20.0, 0.95, 0.9), f]);
        assert_eq!((s.status, s.capacity), ("bracketed", Some(20.0)));
    }
}
