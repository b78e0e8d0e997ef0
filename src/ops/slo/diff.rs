//! `slo diff`: which requests change verdict between two policies (docs/slo.md
//! "Diff"). Every request of a case is judged under both by `judge_request`;
//! per criterion both policies hold, the successful requests whose outcome
//! differs are counted (and named), as are the requests whose joint verdict
//! differs; beside them, each policy's attainment and verdict, as `report
//! --slo` gives them.

use std::collections::BTreeMap;

use super::RunView;
use crate::py::json as pyjson;
pub use crate::slo::answers::{CaseDiff, CriterionDiff, Flip, Side};
use crate::slo::judge::{judge_request, Outcome, Verdict};
use crate::slo::{Policy, PolicySource};

fn verdict_str(v: Verdict) -> &'static str {
    match v {
        Verdict::Met => "met",
        Verdict::Missed => "missed",
        Verdict::Unknown => "unknown",
    }
}

fn side(j: &crate::report::judge::CaseJudgement) -> Side {
    let s = &j.slo;
    Side {
        policy: pyjson::str_form(&s["slo_name"]),
        digest: pyjson::str_form(&s["slo_digest"]),
        met: s["met"].as_u64().unwrap_or(0),
        missed: s["missed"].as_u64().unwrap_or(0),
        unknown: s["unknown"].as_u64().unwrap_or(0),
        attainment_lower: s["attainment_lower"].as_f64(),
        attainment_upper: s["attainment_upper"].as_f64(),
        verdict: j.verdict(),
    }
}

/// Flips gathered by (from, to), in first-seen order of request.
#[derive(Default)]
struct Flips(BTreeMap<(&'static str, &'static str), Vec<String>>);

impl Flips {
    fn add(&mut self, from: &'static str, to: &'static str, id: String) {
        if from != to {
            self.0.entry((from, to)).or_default().push(id);
        }
    }

    fn into_vec(self) -> Vec<Flip> {
        self.0
            .into_iter()
            .map(|((from, to), ids)| Flip {
                from,
                to,
                count: ids.len(),
                request_ids: ids,
            })
            .collect()
    }
}

/// The differences of one run between `slo` (new) and `against` (old).
pub fn diffs(
    view: &RunView,
    slo: &(Policy, PolicySource),
    against: &(Policy, PolicySource),
) -> Vec<CaseDiff> {
    let spans = view.spans();
    let under_slo = view.judge(&slo.0, slo.1);
    let under_against = view.judge(&against.0, against.1);
    let (a, b) = (&slo.0, &against.0);
    let mut out = Vec::new();
    for ((case, reqs), (js, ja)) in view.cases.iter().zip(under_slo.iter().zip(&under_against)) {
        let shared: Vec<(usize, usize)> = a
            .criteria
            .iter()
            .enumerate()
            .filter_map(|(i, c)| {
                b.criteria
                    .iter()
                    .position(|d| d.key == c.key)
                    .map(|k| (i, k))
            })
            .collect();
        let mut verdicts = Flips::default();
        let mut per: Vec<(Flips, usize, usize)> =
            shared.iter().map(|_| (Flips::default(), 0, 0)).collect();
        for r in reqs {
            let (x, y) = (judge_request(a, r, &spans), judge_request(b, r, &spans));
            let id = pyjson::str_form(&r.request_id);
            verdicts.add(verdict_str(y.verdict), verdict_str(x.verdict), id.clone());
            if !r.is_ok() {
                continue;
            }
            for (n, &(i, k)) in shared.iter().enumerate() {
                let (ox, oy) = (x.criteria[i].outcome, y.criteria[k].outcome);
                per[n].1 += usize::from(ox == Outcome::Pass);
                per[n].2 += usize::from(oy == Outcome::Pass);
                per[n].0.add(oy.as_str(), ox.as_str(), id.clone());
            }
        }
        let criteria = shared
            .iter()
            .zip(per)
            .map(|(&(i, k), (flips, slo_pass, against_pass))| CriterionDiff {
                criterion: a.criteria[i].key.as_str().to_owned(),
                slo_ms: a.criteria[i].max_ms,
                against_ms: b.criteria[k].max_ms,
                slo_pass,
                against_pass,
                flips: flips.into_vec(),
            })
            .collect();
        let only = |p: &Policy, q: &Policy| {
            p.criteria
                .iter()
                .filter(|c| q.criterion(c.key).is_none())
                .map(|c| c.key.as_str().to_owned())
                .collect()
        };
        out.push(CaseDiff {
            run_id: view.run_id().to_owned(),
            case: case.clone(),
            offered: reqs.len(),
            slo: side(js),
            against: side(ja),
            verdict_flips: verdicts.into_vec(),
            criteria,
            only_in_slo: only(a, b),
            only_in_against: only(b, a),
        });
    }
    out
}
