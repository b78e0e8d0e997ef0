//! Comparing a baseline arm of runs with a candidate arm (the reference's
//! `stormlog.infer.compare.compare_runs`): what a comparison found
//! ([`Comparison`]) and its entry, [`compare_runs`]: the checks before
//! anything is compared, runs set aside (superseded attempts, protocol
//! failures, unpaired blocks), then comparability (`comparability`), each
//! case (`cases`, `attainment`) and the regression family (`family`).
//! docs/compare.md §1-§5.

use serde_json::Value;

pub use super::spec::Spec;
pub use super::summary::RunSummary;

use super::cases::{case, unjudged_overlap};
use super::comparability::{compatibility, observer_contract};
use super::compat::Compatibility;
use super::family::with_family;
use super::metrics::SLO_METRICS;
use super::ojson::{obj, J};
use super::spec::Design;
use super::stats::{GateOutcome, MetricComparison, FAIL, INDEPENDENT, NOT_EVALUABLE, PAIRED};
use super::CompareError;
use crate::py::json::{get, number, str_form, truthy};

pub const BASELINE: &str = "baseline";
pub const CANDIDATE: &str = "candidate";
pub(super) const OUTCOME_UNRECOVERABLE: &str = "outcome_unrecoverable";
pub(super) const CONTROL_FAILED: &str = "control_failed";
pub(super) const PROTOCOL_FAILURE: &str = "protocol_failure";
pub const OVERLAP_NOT_GATED: &str = "overlap_not_gated";

/// `str(value)` of a report value, for text.
pub fn py_str_j(v: &J) -> String {
    match v {
        J::Str(s) => s.clone(),
        J::Null => "None".into(),
        other => str_form(&other.to_value()),
    }
}

/// A (run, case) set aside, with its reasons.
#[derive(Debug, Clone)]
pub struct Excluded {
    pub arm: String,
    pub run: String,
    pub case: String,
    pub reasons: Vec<String>,
    pub evidence: Vec<(String, String)>,
    pub attempt_kept: Option<String>,
}

impl Excluded {
    pub(super) fn new(arm: &str, run: &RunSummary, case: &str, reasons: Vec<String>) -> Self {
        Excluded {
            arm: arm.into(),
            run: run.name.clone(),
            case: case.into(),
            reasons,
            evidence: vec![],
            attempt_kept: None,
        }
    }

    pub(super) fn with_evidence(mut self, run: &RunSummary) -> Self {
        self.evidence = run
            .external_evidence
            .iter()
            .filter(|(r, _)| self.reasons.contains(r))
            .cloned()
            .collect();
        self
    }

    pub fn to_record(&self) -> J {
        let mut record = obj([
            ("arm", J::from(&self.arm)),
            ("run", J::from(&self.run)),
            ("case", J::from(&self.case)),
            (
                "reasons",
                J::Arr(self.reasons.iter().map(J::from).collect()),
            ),
        ]);
        if !self.evidence.is_empty() {
            record.set(
                "evidence",
                J::Obj(
                    self.evidence
                        .iter()
                        .map(|(k, v)| (k.clone(), J::from(v)))
                        .collect(),
                ),
            );
        }
        if let Some(kept) = &self.attempt_kept {
            record.set("attempt_kept", J::from(kept));
        }
        record
    }

    /// Why it was set aside, the evidence for an external cause, and the attempt kept.
    pub fn reasons_text(&self) -> String {
        let mut text = self.reasons.join(", ");
        if !self.evidence.is_empty() {
            let shown: Vec<&str> = self.evidence.iter().map(|(_, v)| v.as_str()).collect();
            text.push_str(&format!("; evidence: {}", shown.join("; ")));
        }
        match &self.attempt_kept {
            Some(kept) => format!("{text}; kept {kept}"),
            None => text,
        }
    }
}

/// Each allowed field an arm's runs differ in, with every run's value.
#[derive(Debug, Clone)]
pub struct WithinArm {
    pub arm: String,
    pub field: String,
    pub values: Vec<(String, Value)>,
}

/// One case compared.
#[derive(Debug, Clone)]
pub struct CaseResult {
    pub metrics: Vec<MetricComparison>,
    pub absent_gates: Vec<(String, GateOutcome)>,
    pub attainment_gate: Option<J>,
    pub attainment_mean: Option<J>,
    pub attrition: Vec<Excluded>,
    pub set_aside: (String, Vec<String>),
    pub membership: Option<String>,
    pub gated: bool,
}

/// Everything a comparison found.
#[derive(Debug, Clone)]
pub struct Comparison {
    pub spec: Spec,
    pub design: String,
    pub runs: Vec<(String, RunSummary)>,
    pub excluded: Vec<Excluded>,
    pub compatibility: Compatibility,
    pub observer_issues: Vec<String>,
    pub cases: Vec<(String, CaseResult)>,
    pub family: Option<J>,
    pub started: (Vec<i64>, Vec<i64>),
    pub warnings: Vec<String>,
    pub unverified_pairs: Vec<(String, String, Vec<String>)>,
    pub allowed_within_arm: Vec<WithinArm>,
}

impl Comparison {
    /// Every gate outcome: (case, name, outcome), absent gates included.
    pub fn gates(&self) -> Vec<(&str, &str, &GateOutcome, bool)> {
        let mut found = Vec::new();
        for (case_id, case) in &self.cases {
            for metric in &case.metrics {
                if let Some(g) = &metric.gate {
                    found.push((case_id.as_str(), metric.name.as_str(), g, false));
                }
            }
            for (pattern, g) in &case.absent_gates {
                found.push((case_id.as_str(), pattern.as_str(), g, true));
            }
        }
        found
    }

    pub fn gate_count(&self) -> usize {
        self.gates().len()
            + self
                .cases
                .iter()
                .filter(|(_, c)| {
                    c.attainment_gate
                        .as_ref()
                        .is_some_and(|g| !matches!(g, J::Obj(v) if v.is_empty()))
                })
                .count()
    }

    pub(super) fn attainment_status(case: &CaseResult) -> Option<(String, J)> {
        let gate = case.attainment_gate.as_ref()?;
        Some((py_str_j(gate.get("status")), gate.get("reason").clone()))
    }

    pub fn failed(&self) -> Vec<(String, String)> {
        let mut failed: Vec<(String, String)> = self
            .gates()
            .into_iter()
            .filter(|g| g.2.status == FAIL)
            .map(|(c, n, _, _)| (c.to_owned(), n.to_owned()))
            .collect();
        for (case_id, case) in &self.cases {
            if Self::attainment_status(case).is_some_and(|(s, _)| s == FAIL) {
                failed.push((case_id.clone(), "min_attainment".into()));
            }
        }
        failed
    }

    pub fn not_evaluable(&self) -> Vec<(String, String, J)> {
        let mut found: Vec<(String, String, J)> = self
            .gates()
            .into_iter()
            .filter(|g| g.2.status == NOT_EVALUABLE)
            .map(|(c, n, g, _)| (c.to_owned(), n.to_owned(), J::from(g.reason.clone())))
            .collect();
        for (case_id, case) in &self.cases {
            if let Some((status, reason)) = Self::attainment_status(case) {
                if status == NOT_EVALUABLE {
                    found.push((case_id.clone(), "min_attainment".into(), reason));
                }
            }
        }
        found
    }

    /// 4 when a gate failed, or could not be evaluated unless that is allowed.
    pub fn exit_code(&self) -> i64 {
        if !self.failed().is_empty()
            || (!self.not_evaluable().is_empty() && !self.spec.allow_not_evaluable)
        {
            4
        } else {
            0
        }
    }
}

// ------------------------------------------------------------------ entry

/// The two arms' runs, baseline first.
pub(super) type Arms = [(&'static str, Vec<RunSummary>); 2];

pub(super) fn arm_runs<'a>(arms: &'a Arms, arm: &str) -> &'a [RunSummary] {
    arms.iter()
        .find(|(a, _)| *a == arm)
        .map_or(&[], |(_, r)| r.as_slice())
}

/// Compare two arms of runs; an input error when they cannot be compared.
pub fn compare_runs(
    baseline: Vec<RunSummary>,
    candidate: Vec<RunSummary>,
    spec: Spec,
) -> Result<Comparison, CompareError> {
    if baseline.is_empty() || candidate.is_empty() {
        return Err(CompareError::input("each arm needs at least one run"));
    }
    let arms: Arms = [(BASELINE, baseline), (CANDIDATE, candidate)];
    check_each_run_once(&arms)?;
    check_cases_exist(&arms, &spec)?;
    check_cases_hold_requests(&arms, &spec)?;
    check_one_slo_policy(&arms, &spec)?;
    let design = design(&arms, &spec)?;
    let (mut excluded, standing) = standing(&arms, &spec, design);
    let usable: Arms = [
        (
            BASELINE,
            arm_runs(&standing, BASELINE)
                .iter()
                .filter(|r| r.protocol_failures.is_empty())
                .cloned()
                .collect(),
        ),
        (
            CANDIDATE,
            arm_runs(&standing, CANDIDATE)
                .iter()
                .filter(|r| r.protocol_failures.is_empty())
                .cloned()
                .collect(),
        ),
    ];
    if usable.iter().any(|(_, r)| r.is_empty()) {
        return Err(CompareError::input(
            "an arm has no usable run: every run was excluded",
        ));
    }
    let (compatibility, unverified_pairs, allowed_within_arm) = compatibility(&usable, &spec)?;
    let observer_issues = observer_contract(&usable, &spec)?;
    if design == PAIRED {
        let unpaired = unpaired_blocks(&standing, &spec, &excluded);
        excluded.extend(unpaired);
        let partners = partners(&standing, &spec, &excluded);
        excluded.extend(partners);
    }
    let mut cases = Vec::new();
    for case_id in case_ids(&arms, &spec) {
        let result = case(
            &case_id,
            &standing,
            &excluded,
            design,
            &spec,
            &compatibility,
            &observer_issues,
        )?;
        cases.push((case_id, result));
    }
    unjudged_overlap(&mut cases, &spec);
    let starts = |arm: &str| -> Vec<i64> {
        let mut s: Vec<i64> = arm_runs(&arms, arm)
            .iter()
            .filter_map(|r| r.started_at_ns)
            .collect();
        s.sort_unstable();
        s
    };
    let started = (starts(BASELINE), starts(CANDIDATE));
    let mut warnings = Vec::new();
    if let (Some(last_base), Some(first_cand)) = (started.0.iter().max(), started.1.iter().min()) {
        if last_base < first_cand {
            warnings.push("every baseline run came before every candidate run: drift over time is confounded with the change".to_owned());
        }
    }
    let runs = arms
        .iter()
        .flat_map(|(arm, runs)| runs.iter().map(move |r| ((*arm).to_owned(), r.clone())))
        .collect();
    let mut comparison = Comparison {
        spec,
        design: design.to_owned(),
        runs,
        excluded,
        compatibility,
        observer_issues,
        cases,
        family: None,
        started,
        warnings,
        unverified_pairs,
        allowed_within_arm,
    };
    with_family(&mut comparison);
    Ok(comparison)
}

pub(super) fn check_each_run_once(arms: &Arms) -> Result<(), CompareError> {
    let mut seen: Vec<((String, String), (String, String))> = Vec::new();
    for (arm, runs) in arms {
        for run in runs {
            let mut keys = vec![("path".to_owned(), run.name.clone())];
            if !run.sha256.is_empty() {
                keys.push(("sha256".into(), run.sha256.clone()));
            }
            if truthy(&run.session_id) {
                keys.push(("session".into(), str_form(&run.session_id)));
            }
            let matched: Vec<&(String, String)> = keys
                .iter()
                .filter(|k| seen.iter().any(|(s, _)| s == *k))
                .collect();
            if let Some(first) = matched.first() {
                let (other_arm, other) = seen
                    .iter()
                    .find(|(s, _)| s == *first)
                    .map(|(_, v)| v.clone())
                    .unwrap_or_default();
                let place = if other_arm == *arm {
                    "twice"
                } else {
                    "in both arms"
                };
                let message = if matched.iter().all(|(k, _)| k == "session") {
                    format!(
                        "run {} is the same run (session {}) as {other}, given {place}",
                        run.name, first.1
                    )
                } else {
                    format!("run {} is given {place}", run.name)
                };
                return Err(CompareError::input(message));
            }
            for key in keys {
                seen.push((key, ((*arm).to_owned(), run.name.clone())));
            }
        }
    }
    Ok(())
}

pub(super) fn all_runs(arms: &Arms) -> impl Iterator<Item = &RunSummary> {
    arms.iter().flat_map(|(_, r)| r.iter())
}

pub(super) fn check_cases_exist(arms: &Arms, spec: &Spec) -> Result<(), CompareError> {
    let mut present: Vec<&String> = all_runs(arms)
        .flat_map(|r| r.comparable_cases.keys())
        .collect();
    present.sort();
    present.dedup();
    let missing: Vec<&String> = spec
        .cases
        .iter()
        .flatten()
        .filter(|c| !present.contains(c))
        .collect();
    if missing.is_empty() {
        return Ok(());
    }
    let names: Vec<&str> = missing.iter().map(|s| s.as_str()).collect();
    let have: Vec<&str> = present.iter().map(|s| s.as_str()).collect();
    Err(CompareError::usage(format!(
        "case {} is in no run; the runs have {}",
        names.join(", "),
        if have.is_empty() {
            "no case".to_owned()
        } else {
            have.join(", ")
        }
    )))
}

pub(super) fn check_cases_hold_requests(arms: &Arms, spec: &Spec) -> Result<(), CompareError> {
    for case_id in case_ids(arms, spec) {
        let offered: Vec<&Value> = all_runs(arms)
            .filter_map(|r| r.comparable_cases.get(&case_id))
            .map(|c| get(get(c, "population"), "offered"))
            .collect();
        if !offered.is_empty() && offered.iter().all(|v| number(v) == Some(0.0)) {
            return Err(CompareError::input(format!(
                "{case_id} holds no request in any run: a segment outside every run's measured phase compares nothing"
            )));
        }
    }
    Ok(())
}

pub(super) fn check_one_slo_policy(arms: &Arms, spec: &Spec) -> Result<(), CompareError> {
    let gated =
        spec.min_attainment.is_some() || SLO_METRICS.iter().any(|n| spec.gate_for(n).is_some());
    if !gated {
        return Ok(());
    }
    let mut digests: Vec<String> = all_runs(arms)
        .flat_map(|r| r.comparable_cases.values())
        .map(|c| get(get(c, "slo"), "slo_digest"))
        .filter(|d| !d.is_null())
        .map(str_form)
        .collect();
    digests.sort();
    digests.dedup();
    if digests.len() > 1 {
        let shown: Vec<String> = digests
            .iter()
            .map(|d| d.chars().take(12).collect())
            .collect();
        return Err(CompareError::input(format!(
            "the runs were judged by different SLO policies ({}); give --slo or --slo-file to judge them all by one",
            shown.join(", ")
        )));
    }
    Ok(())
}

pub(super) fn design(arms: &Arms, spec: &Spec) -> Result<&'static str, CompareError> {
    let labelled = all_runs(arms).all(|r| !r.label("block").is_null());
    if spec.design == Design::PairedBlocks && !labelled {
        return Err(CompareError::input(
            "a paired design needs every run labelled with --block",
        ));
    }
    Ok(if spec.design == Design::Independent || !labelled {
        INDEPENDENT
    } else {
        PAIRED
    })
}

pub(super) fn case_ids(arms: &Arms, spec: &Spec) -> Vec<String> {
    if let Some(cases) = &spec.cases {
        return cases.clone();
    }
    let mut ids: Vec<String> = all_runs(arms)
        .flat_map(|r| r.comparable_cases.keys().cloned())
        .collect();
    ids.sort();
    ids.dedup();
    ids
}

pub(super) fn set_aside(excluded: &[Excluded], run: &RunSummary, case_id: &str) -> bool {
    excluded
        .iter()
        .any(|i| i.run == run.name && i.case == case_id)
}

pub(super) fn standing(arms: &Arms, spec: &Spec, design: &str) -> (Vec<Excluded>, Arms) {
    let mut excluded = superseded(arms, spec, design);
    let replaced: Vec<String> = excluded.iter().map(|i| i.run.clone()).collect();
    let standing: Arms = [
        (
            BASELINE,
            arm_runs(arms, BASELINE)
                .iter()
                .filter(|r| !replaced.contains(&r.name))
                .cloned()
                .collect(),
        ),
        (
            CANDIDATE,
            arm_runs(arms, CANDIDATE)
                .iter()
                .filter(|r| !replaced.contains(&r.name))
                .cloned()
                .collect(),
        ),
    ];
    let ids = case_ids(&standing, spec);
    for (arm, runs) in &standing {
        for run in runs {
            for case_id in &ids {
                let failures = run.failures_for(case_id);
                if !failures.is_empty() {
                    excluded.push(Excluded::new(arm, run, case_id, failures).with_evidence(run));
                }
            }
        }
    }
    (excluded, standing)
}

pub(super) fn superseded(arms: &Arms, spec: &Spec, design: &str) -> Vec<Excluded> {
    if design != PAIRED {
        return vec![];
    }
    let mut found = Vec::new();
    let ids = case_ids(arms, spec);
    for (arm, runs) in arms {
        let mut blocks: Vec<(String, Vec<&RunSummary>)> = Vec::new();
        for run in runs {
            let key = run.block_key();
            match blocks.iter_mut().find(|(k, _)| *k == key) {
                Some((_, list)) => list.push(run),
                None => blocks.push((key, vec![run])),
            }
        }
        for (_, mut attempts) in blocks.into_iter().filter(|(_, a)| a.len() > 1) {
            if attempts.iter().all(|r| r.started_at_ns.is_some()) {
                attempts.sort_by_key(|r| r.started_at_ns.unwrap_or(0));
            }
            let kept_index = attempts
                .iter()
                .position(|r| !r.outcome_failures.is_empty() && r.protocol_failures.is_empty())
                .unwrap_or(attempts.len() - 1);
            let kept = attempts[kept_index].name.clone();
            for (index, run) in attempts.iter().enumerate() {
                if index == kept_index {
                    continue;
                }
                let reason = if index > kept_index {
                    "retry_of_outcome_failure"
                } else {
                    "superseded"
                };
                for case_id in &ids {
                    let mut reasons = vec![reason.to_owned()];
                    reasons.extend(run.failures_for(case_id));
                    let mut item = Excluded::new(arm, run, case_id, reasons).with_evidence(run);
                    item.attempt_kept = Some(kept.clone());
                    found.push(item);
                }
            }
        }
    }
    found
}

pub(super) fn unpaired_blocks(arms: &Arms, spec: &Spec, excluded: &[Excluded]) -> Vec<Excluded> {
    let mut blocks: Vec<(String, Vec<(&str, &RunSummary)>)> = Vec::new();
    for (arm, runs) in arms {
        for run in runs.iter().filter(|r| r.protocol_failures.is_empty()) {
            let key = run.block_key();
            match blocks.iter_mut().find(|(k, _)| *k == key) {
                Some((_, members)) => {
                    members.retain(|(a, _)| a != arm);
                    members.push((arm, run));
                }
                None => blocks.push((key, vec![(arm, run)])),
            }
        }
    }
    let ids = case_ids(arms, spec);
    let mut found = Vec::new();
    for (_, pair) in blocks {
        if pair.len() != 2 || same_realization(pair[0].1, pair[1].1) {
            continue;
        }
        for (arm, run) in pair {
            for case_id in &ids {
                if !set_aside(excluded, run, case_id) {
                    found.push(Excluded::new(
                        arm,
                        run,
                        case_id,
                        vec!["block_realization_differs".into()],
                    ));
                }
            }
        }
    }
    found
}

pub(super) fn same_realization(a: &RunSummary, b: &RunSummary) -> bool {
    let (Some(x), Some(y)) = (
        a.fields.get("workload.realization_digest"),
        b.fields.get("workload.realization_digest"),
    ) else {
        return true;
    };
    if !(x.known() && y.known()) {
        return true;
    }
    crate::py::json::py_eq(&x.value, &y.value)
}

pub(super) fn blocks_set_aside(arms: &Arms, excluded: &[Excluded], case_id: &str) -> Vec<String> {
    let mut found: Vec<String> = all_runs(arms)
        .filter(|r| set_aside(excluded, r, case_id))
        .map(RunSummary::block_key)
        .collect();
    found.sort();
    found.dedup();
    found
}

pub(super) fn partners(arms: &Arms, spec: &Spec, excluded: &[Excluded]) -> Vec<Excluded> {
    let mut found = Vec::new();
    for case_id in case_ids(arms, spec) {
        let lost = blocks_set_aside(arms, excluded, &case_id);
        for (arm, runs) in arms {
            for run in runs {
                if lost.contains(&run.block_key()) && !set_aside(excluded, run, &case_id) {
                    found.push(Excluded::new(
                        arm,
                        run,
                        &case_id,
                        vec!["block_set_aside".into()],
                    ));
                }
            }
        }
    }
    found
}

pub(super) fn lost(
    case_id: &str,
    arms: &Arms,
    excluded: &[Excluded],
    design: &str,
) -> (String, Vec<String>) {
    if design != PAIRED {
        let mut items: Vec<String> = all_runs(arms)
            .filter(|r| set_aside(excluded, r, case_id))
            .map(|r| r.name.clone())
            .collect();
        items.sort();
        items.dedup();
        return ("run".into(), items);
    }
    let keys = |arm: &str| -> Vec<String> {
        arm_runs(arms, arm)
            .iter()
            .map(RunSummary::block_key)
            .collect()
    };
    let (a, b) = (keys(BASELINE), keys(CANDIDATE));
    let mut items = blocks_set_aside(arms, excluded, case_id);
    items.extend(a.iter().filter(|k| !b.contains(k)).cloned());
    items.extend(b.iter().filter(|k| !a.contains(k)).cloned());
    items.sort();
    items.dedup();
    ("block".into(), items)
}
