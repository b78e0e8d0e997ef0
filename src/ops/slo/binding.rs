//! `slo binding`: per case, each criterion's attainment beside the joint
//! one, the criterion that binds (the lowest lower bound; ties all named),
//! the joint attainment without each criterion, and how far each threshold
//! can move, the others held, before the case's verdict changes
//! (docs/slo.md "Binding").

use serde_json::{json, Value};

use super::RunView;
use crate::report::judge::{outcome, CaseJudgement};
pub use crate::slo::answers::{BindingCase, BindingCriterion};
use crate::slo::sweep::{self, Column};
use crate::slo::{Policy, PolicySource};

/// The verdict of targets, as `report --all --check` decides it.
fn verdict(evaluated: bool, targets: Vec<(String, f64, &'static str)>) -> &'static str {
    CaseJudgement {
        run_id: String::new(),
        case_id: String::new(),
        slo: json!({"status": if evaluated { "evaluated" } else { "unmeasurable" }}),
        targets,
    }
    .verdict()
}

fn num(v: &Value) -> Option<f64> {
    v.as_f64()
}

/// The bindings of one run under `policy`.
pub fn bindings(view: &RunView, policy: &Policy, source: PolicySource) -> Vec<BindingCase> {
    let spans = view.spans();
    let judged = view.judge(policy, source);
    let mut out = Vec::new();
    for j in judged {
        let Some((_, reqs)) = view.cases.iter().find(|(k, _)| *k == j.case_id) else {
            continue;
        };
        let slo = &j.slo;
        let evaluated = slo["status"] == "evaluated";
        let per = &slo["per_criterion"];
        let mut criteria = Vec::new();
        for c in &policy.criteria {
            let name = c.key.as_str();
            let rest = sweep::without(policy, c.key);
            let without =
                crate::slo::evaluate_case(reqs, &rest, source, &Value::Null, &Value::Null, &spans);
            let marginal = Column::marginal(c.key, reqs, &spans);
            let joint = Column::joint(c.key, &rest, reqs, &spans);
            // The case's verdict with this criterion's limit at `t`.
            let at = |t: f64| -> &'static str {
                let mut targets = Vec::new();
                if let Some(target) = policy.attainment_target {
                    let jt = joint.joint_at(t, evaluated);
                    let o = if evaluated {
                        outcome(
                            &json!(jt.attainment_lower),
                            &json!(jt.attainment_upper),
                            target,
                        )
                    } else {
                        "unmeasurable"
                    };
                    targets.push(("joint".to_owned(), target, o));
                }
                for other in &policy.criteria {
                    if let Some(target) = other.attainment_target {
                        let o = if !evaluated {
                            "unmeasurable"
                        } else if other.key == c.key {
                            let m = marginal.marginal_at(t);
                            outcome(
                                &json!(m.attainment_lower),
                                &json!(m.attainment_upper),
                                target,
                            )
                        } else {
                            let pc = &per[other.key.as_str()];
                            outcome(&pc["attainment_lower"], &pc["attainment_upper"], target)
                        };
                        targets.push((other.key.as_str().to_owned(), target, o));
                    }
                }
                verdict(evaluated, targets)
            };
            let mut points = marginal.breakpoints();
            points.extend(joint.breakpoints());
            points.sort_unstable_by(f64::total_cmp);
            points.dedup();
            let now = at(c.max_ms);
            // Segment s holds the current limit: points[..s] are at or below it.
            let s = points.partition_point(|&v| crate::slo::judge::passes(v, c.max_ms));
            let verdict_in = |seg: usize| {
                if seg == 0 {
                    at(f64::NEG_INFINITY)
                } else {
                    at(points[seg - 1])
                }
            };
            let mut low = s;
            while low > 0 && verdict_in(low - 1) == now {
                low -= 1;
            }
            let holds_down_to_ms = (low > 0).then(|| points[low - 1]);
            let changes_at_ms = (s + 1..=points.len())
                .find(|&seg| verdict_in(seg) != now)
                .map(|seg| points[seg - 1]);
            criteria.push(BindingCriterion {
                criterion: name.to_owned(),
                threshold_ms: c.max_ms,
                target: c.attainment_target,
                attainment_lower: num(&per[name]["attainment_lower"]),
                attainment_upper: num(&per[name]["attainment_upper"]),
                joint_without_lower: num(&without["attainment_lower"]),
                joint_without_upper: num(&without["attainment_upper"]),
                holds_down_to_ms,
                changes_at_ms,
                tighter_by_ms: holds_down_to_ms.map(|h| c.max_ms - h),
                looser_by_ms: changes_at_ms.map(|x| x - c.max_ms),
            });
        }
        let lowest = criteria
            .iter()
            .filter_map(|c| c.attainment_lower)
            .fold(None::<f64>, |acc, x| Some(acc.map_or(x, |a| a.min(x))));
        let binding = criteria
            .iter()
            .filter(|c| lowest.is_some() && c.attainment_lower == lowest)
            .map(|c| c.criterion.clone())
            .collect();
        out.push(BindingCase {
            run_id: j.run_id.clone(),
            case: j.case_id.clone(),
            policy: policy.name.clone(),
            status: slo["status"].as_str().unwrap_or_default().to_owned(),
            offered: slo["offered"].as_u64().unwrap_or(0) as usize,
            joint_lower: num(&slo["attainment_lower"]),
            joint_upper: num(&slo["attainment_upper"]),
            joint_target: policy.attainment_target,
            verdict: j.verdict(),
            binding,
            criteria,
        });
    }
    out
}
