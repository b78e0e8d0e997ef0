//! Comparing a baseline arm of runs with a candidate arm, case by case
//! (the reference's `compare.compare_runs` and `run_summary`): set aside
//! runs with protocol failures, check comparability and the observer
//! contract, pair runs by block, compare every metric and apply its gate,
//! judge the attainment gate, and adjust a regression family with Holm.
//! docs/compare.md §1-§5.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::Value;

use super::compat::{
    self, Compatibility, Fields, CONFIG, INCOMPATIBLE, INCREMENTAL, OVERHEAD, UNVERIFIED,
};
use super::metrics::{
    default_metrics, evidence_coverage, fnmatch, MetricSpec, RUN_MISSES, SLO_METRICS,
};
use super::ojson::{obj, J};
use super::stats::{
    clopper_pearson, compare_values, holm, run_pass_gate, t_quantile, GateOutcome, GateRule,
    MetricComparison, Request, RunValue, FAIL, FRACTION_UNIT, INDEPENDENT, MIN_GATE_PAIRS,
    NOT_EVALUABLE, PAIRED, PASS, SIGNIFICANT,
};
use super::CompareError;
use crate::pyjson::{get, is_int, number, str_form, truthy};

pub const BASELINE: &str = "baseline";
pub const CANDIDATE: &str = "candidate";
pub const ALL_BUDGETS: &str = "all_budgets";
pub const ANY_REGRESSION: &str = "any_regression";
pub const EXCLUDE: &str = "exclude";
pub const FAIL_INCOMPLETE: &str = "fail";
const OUTCOME_UNRECOVERABLE: &str = "outcome_unrecoverable";
const CONTROL_FAILED: &str = "control_failed";
const PROTOCOL_FAILURE: &str = "protocol_failure";
pub const OVERLAP_NOT_GATED: &str = "overlap_not_gated";
const SEGMENT_SEPARATOR: char = '/';

/// How to compare: design, mode, gates and what may differ.
#[derive(Debug, Clone)]
pub struct Spec {
    pub confidence: f64,
    pub design: String,
    pub mode: String,
    pub allow: Vec<String>,
    pub allow_within_arm: Vec<String>,
    pub on_incomplete: String,
    pub gates: Vec<(String, GateRule)>,
    pub allow_not_evaluable: bool,
    pub min_attainment: Option<f64>,
    pub min_run_pass: f64,
    pub attainment_model: String,
    pub family: String,
    pub added_observers: Vec<String>,
    pub evidence_floor: f64,
    pub cases: Option<Vec<String>>,
    pub bootstrap_min_n: usize,
    pub seed: u64,
    pub fallbacks: Vec<(String, f64, String)>,
    pub min_complete_blocks: Option<i64>,
}

fn share_ok(value: Option<f64>, low_open: bool) -> bool {
    match value {
        None => true,
        Some(v) if !v.is_finite() || v > 1.0 => false,
        Some(v) => {
            if low_open {
                v > 0.0
            } else {
                v >= 0.0
            }
        }
    }
}

impl Spec {
    /// Checks the spec as the reference does, and gives each gate the
    /// comparison's pre-registered block floor.
    pub fn validated(mut self) -> Result<Self, CompareError> {
        let checks: [(bool, &str, String); 9] = [
            (
                ["auto", PAIRED, INDEPENDENT].contains(&self.design.as_str()),
                "design",
                format!("'{}'", self.design),
            ),
            (
                compat::MODES.contains(&self.mode.as_str()),
                "mode",
                format!("'{}'", self.mode),
            ),
            (
                [EXCLUDE, FAIL_INCOMPLETE].contains(&self.on_incomplete.as_str()),
                "on_incomplete",
                format!("'{}'", self.on_incomplete),
            ),
            (
                ["runs", "bernoulli"].contains(&self.attainment_model.as_str()),
                "attainment_model",
                format!("'{}'", self.attainment_model),
            ),
            (
                [ALL_BUDGETS, ANY_REGRESSION].contains(&self.family.as_str()),
                "family",
                format!("'{}'", self.family),
            ),
            (
                0.0 < self.confidence && self.confidence < 1.0,
                "confidence",
                py_float(self.confidence),
            ),
            (
                share_ok(self.min_attainment, true),
                "min_attainment",
                self.min_attainment.map_or("None".into(), py_float),
            ),
            (
                share_ok(Some(self.min_run_pass), true),
                "min_run_pass",
                py_float(self.min_run_pass),
            ),
            (
                share_ok(Some(self.evidence_floor), false),
                "evidence_floor",
                py_float(self.evidence_floor),
            ),
        ];
        for (ok, name, shown) in checks {
            if !ok {
                return Err(CompareError::usage(format!(
                    "comparison {name} {shown} is not valid"
                )));
            }
        }
        if self.family == ANY_REGRESSION && self.gates.iter().any(|(_, r)| r.rule != SIGNIFICANT) {
            return Err(CompareError::usage(
                "--family any_regression gates with the significant rule",
            ));
        }
        if let Some(floor) = self.min_complete_blocks {
            for (pattern, rule) in &mut self.gates {
                if rule.min_complete_blocks.is_some_and(|m| m != floor) {
                    return Err(CompareError::usage(format!(
                        "gate {pattern} pre-registers {} complete blocks, the comparison {floor}",
                        rule.min_complete_blocks.unwrap_or(floor)
                    )));
                }
                rule.min_complete_blocks = Some(floor);
            }
        }
        Ok(self)
    }

    /// The gate on a metric: the last pattern that matches its name.
    pub fn gate_for(&self, metric: &str) -> Option<GateRule> {
        let mut found = self
            .gates
            .iter()
            .filter(|(p, _)| fnmatch(p, metric))
            .map(|(_, r)| r.clone())
            .next_back()?;
        for (pattern, budget, unit) in &self.fallbacks {
            if fnmatch(pattern, metric) {
                found.fallback_budget = Some(*budget);
                found.fallback_unit = Some(unit.clone());
            }
        }
        Some(found)
    }

    /// The fewest complete pairs a gate needs: (pre-registered value, floor, statement).
    pub fn block_floor(&self) -> (Option<i64>, usize, String) {
        let mut planned: Vec<Option<i64>> = self
            .gates
            .iter()
            .map(|(_, r)| r.min_complete_blocks)
            .collect();
        if let Some(m) = self.min_complete_blocks {
            planned.retain(Option::is_some);
            planned.push(Some(m));
        }
        planned.sort();
        planned.dedup();
        let value = if planned.len() == 1 { planned[0] } else { None };
        let statement = match value {
            None => format!("not pre-registered (floor of {MIN_GATE_PAIRS} pairs)"),
            Some(v) => format!("{v} (pre-registered)"),
        };
        (value, MIN_GATE_PAIRS, statement)
    }

    pub fn to_record(&self) -> J {
        let strings = |v: &Vec<String>| J::Arr(v.iter().map(J::from).collect());
        let (value, floor, statement) = self.block_floor();
        obj([
            ("confidence", J::Float(self.confidence)),
            ("design", J::from(&self.design)),
            ("mode", J::from(&self.mode)),
            ("allow", strings(&self.allow)),
            ("allow_within_arm", strings(&self.allow_within_arm)),
            ("on_incomplete", J::from(&self.on_incomplete)),
            (
                "gates",
                J::Obj(
                    self.gates
                        .iter()
                        .map(|(p, r)| (p.clone(), J::Obj(r.to_record())))
                        .collect(),
                ),
            ),
            ("allow_not_evaluable", J::Bool(self.allow_not_evaluable)),
            ("min_attainment", J::from(self.min_attainment)),
            ("min_run_pass", J::Float(self.min_run_pass)),
            ("attainment_model", J::from(&self.attainment_model)),
            ("family", J::from(&self.family)),
            ("added_observers", strings(&self.added_observers)),
            ("evidence_floor", J::Float(self.evidence_floor)),
            ("cases", self.cases.as_ref().map_or(J::Null, strings)),
            ("seed", J::Int(self.seed as i64)),
            (
                "fallbacks",
                J::Arr(
                    self.fallbacks
                        .iter()
                        .map(|(p, b, u)| J::Arr(vec![J::from(p), J::Float(*b), J::from(u)]))
                        .collect(),
                ),
            ),
            (
                "min_complete_blocks",
                obj([
                    ("preregistered", J::from(value)),
                    ("floor", J::from(floor)),
                    ("statement", J::from(statement)),
                ]),
            ),
        ])
    }
}

fn py_float(x: f64) -> String {
    crate::pyjson::float_repr(x)
}

/// `str(value)` of a report value, for text.
pub fn py_str_j(v: &J) -> String {
    match v {
        J::Str(s) => s.clone(),
        J::Null => "None".into(),
        other => str_form(&other.to_value()),
    }
}

// ------------------------------------------------------------ run summary

/// One run, summarized for comparison: its report, labels, fields and failures.
#[derive(Debug, Clone)]
pub struct RunSummary {
    pub name: String,
    pub sha256: String,
    pub run_id: Value,
    pub session_id: Value,
    pub session_status: Option<String>,
    pub labels: Value,
    pub fields: Fields,
    pub report: Value,
    pub protocol_failures: Vec<String>,
    pub case_failures: BTreeMap<String, Vec<String>>,
    pub started_at_ns: Option<i64>,
    pub outcome_failures: Vec<String>,
    pub external_evidence: Vec<(String, String)>,
    pub comparable_cases: BTreeMap<String, Value>,
}

impl RunSummary {
    /// A run summary from an artifact's bytes and its analysis report: the
    /// bytes read as the analysis reads them (universal newlines, the
    /// compact context transport expanded).
    pub fn from_artifact(path: &Path, raw: &[u8], report: Value) -> Result<Self, CompareError> {
        let shown = path.display().to_string();
        let mut lines = crate::ingest::lines::Lines::hashing(raw, true);
        let mut records = Vec::new();
        while let Some(line) = lines
            .next_line()
            .map_err(|e| CompareError::input(format!("{shown}: {e}")))?
        {
            if line.trim().is_empty() {
                continue;
            }
            let record = crate::pyjson::parse(&line)
                .map_err(|e| CompareError::input(format!("{shown}: {e}")))?;
            if record.is_object() {
                records.push(record);
            }
        }
        // The compact context transport (schema 4) is expanded as analysis expands it.
        let mut contexts = crate::ingest::decode::Contexts::default();
        let mut expanded = Vec::with_capacity(records.len());
        for (index, record) in records.into_iter().enumerate() {
            match contexts.accept(record) {
                Ok(crate::ingest::decode::Line::Record { raw, .. }) => {
                    expanded.push(Value::Object(contexts.expand(&raw)))
                }
                Ok(crate::ingest::decode::Line::Definition { .. }) => {}
                Err(e) => {
                    return Err(CompareError::input(format!(
                        "{shown}: record {}: {e}",
                        index + 1
                    )))
                }
            }
        }
        let sha256 = lines.sha256_hex().unwrap_or_default();
        Ok(Self::from_records(shown, sha256, &expanded, report))
    }

    /// A run summary from its decoded records (contexts expanded, in file
    /// order; requests and samples may be left out, a summary reads none),
    /// the artifact's digest (empty when unknown) and its analysis report.
    pub fn from_records(name: String, sha256: String, records: &[Value], report: Value) -> Self {
        let identity = records
            .iter()
            .find(|r| get(r, "event_type").as_str() == Some("infer.artifact"));
        let context = identity.map_or(&Value::Null, |r| get(r, "context"));
        let sessions: Vec<&Value> = records
            .iter()
            .filter(|r| get(r, "event_type").as_str() == Some("infer.session"))
            .collect();
        let status = sessions.last().map(|s| str_form(get(s, "status")));
        let (protocol, outcomes) = run_failures(records, &report, status.as_deref());
        let labels = sessions
            .first()
            .map(|s| get(get(s, "config"), "labels"))
            .filter(|l| l.is_object())
            .cloned()
            .unwrap_or_else(|| Value::Object(serde_json::Map::new()));
        let started_at_ns = sessions.first().and_then(|s| {
            let t = get(s, "timestamp_ns");
            if is_int(t) {
                t.as_i64()
            } else {
                None
            }
        });
        let mut comparable_cases = BTreeMap::new();
        if let Some(cases) = get(&report, "cases").as_object() {
            for (case_id, case) in cases {
                comparable_cases.insert(case_id.clone(), case.clone());
                for (name, segment) in get(case, "segments").as_object().into_iter().flatten() {
                    comparable_cases.insert(
                        format!("{case_id}{SEGMENT_SEPARATOR}{name}"),
                        segment.clone(),
                    );
                }
            }
        }
        RunSummary {
            name,
            sha256,
            run_id: get(context, "run_id").clone(),
            session_id: get(context, "session_id").clone(),
            case_failures: case_failures(&report, status.as_deref() == Some("completed")),
            session_status: status,
            labels,
            fields: compat::run_fields(records),
            protocol_failures: protocol,
            started_at_ns,
            outcome_failures: outcomes,
            external_evidence: external_evidence(records),
            report,
            comparable_cases,
        }
    }

    fn label(&self, key: &str) -> &Value {
        get(&self.labels, key)
    }

    fn failures_for(&self, case_id: &str) -> Vec<String> {
        let case = case_id.split(SEGMENT_SEPARATOR).next().unwrap_or(case_id);
        let mut all = self.protocol_failures.clone();
        all.extend(self.case_failures.get(case).cloned().unwrap_or_default());
        all
    }

    fn observers(&self) -> &Value {
        get(get(&self.report, "observers"), "observers")
    }

    fn block_key(&self) -> String {
        format!(
            "{}/{}",
            str_form(self.label("experiment")),
            str_form(self.label("block"))
        )
    }

    fn slo(&self, case_id: &str) -> &Value {
        self.comparable_cases
            .get(case_id)
            .map_or(&Value::Null, |c| get(c, "slo"))
    }
}

fn last_run_state(records: &[Value]) -> Option<&Value> {
    records
        .iter()
        .rev()
        .find(|r| get(r, "event_type").as_str() == Some("infer.run_state"))
}

fn run_failures(
    records: &[Value],
    report: &Value,
    status: Option<&str>,
) -> (Vec<String>, Vec<String>) {
    let mut protocol = Vec::new();
    let failure = get(get(report, "manifest"), "protocol_failure");
    if truthy(failure) {
        protocol.push(str_form(failure));
    }
    if records.iter().any(|r| {
        get(r, "event_type").as_str() == Some("infer.server_probe") && truthy(get(r, "incomplete"))
    }) {
        protocol.push("probe_incomplete".into());
    }
    let mut external: Vec<String> = Vec::new();
    let mut runner_outcomes: Vec<String> = Vec::new();
    if let Some(state) = last_run_state(records) {
        let reasons: Vec<String> = match get(state, "reasons").as_array() {
            Some(r) if !r.is_empty() => r.iter().map(str_form).collect(),
            _ => vec!["unstated".into()],
        };
        match get(state, "state").as_str() {
            Some("protocol_failure") => {
                external = reasons.iter().map(|r| format!("external:{r}")).collect()
            }
            Some("outcome_failure") => {
                runner_outcomes = reasons.iter().map(|r| format!("runner:{r}")).collect()
            }
            _ => {}
        }
    }
    let mut outcomes = if status == Some("completed") {
        vec![]
    } else {
        vec![format!("session_{}", status.unwrap_or("unknown"))]
    };
    outcomes.extend(runner_outcomes);
    if outcomes.is_empty() || !external.is_empty() {
        protocol.append(&mut external);
        return (protocol, outcomes);
    }
    outcomes.extend(protocol);
    (vec![], outcomes)
}

fn external_evidence(records: &[Value]) -> Vec<(String, String)> {
    let Some(state) = last_run_state(records) else {
        return vec![];
    };
    let cause = get(state, "external_cause");
    if get(state, "state").as_str() != Some("protocol_failure") || !cause.is_object() {
        return vec![];
    }
    vec![(
        format!("external:{}", str_form(get(cause, "reason"))),
        str_form(get(cause, "evidence")),
    )]
}

fn case_failures(report: &Value, finished: bool) -> BTreeMap<String, Vec<String>> {
    let mut failures = BTreeMap::new();
    for (case_id, case) in get(report, "cases").as_object().into_iter().flatten() {
        let mut reasons = Vec::new();
        let population = get(case, "population");
        let valid = population.get("cohort_valid").is_none_or(truthy);
        if !valid && (finished || !cut_short(population)) {
            reasons.push("cohort_invalid".to_owned());
        }
        let cache = get(case, "cache");
        if get(cache, "requested").as_str() == Some("cold")
            && get(cache, "acknowledged") == &Value::Bool(false)
        {
            reasons.push("cache_reset_not_acknowledged".to_owned());
        }
        if !reasons.is_empty() {
            failures.insert(case_id.clone(), reasons);
        }
    }
    failures
}

fn cut_short(population: &Value) -> bool {
    let issues: Vec<String> = get(population, "issues")
        .as_array()
        .into_iter()
        .flatten()
        .map(str_form)
        .filter(|i| !i.starts_with("request_index_unrecorded") && !i.starts_with("abandoned"))
        .collect();
    !issues.is_empty()
        && issues
            .iter()
            .all(|i| i.starts_with("phase_window_missing") || i.starts_with("records_missing"))
}

// ------------------------------------------------------------ comparison

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
    fn new(arm: &str, run: &RunSummary, case: &str, reasons: Vec<String>) -> Self {
        Excluded {
            arm: arm.into(),
            run: run.name.clone(),
            case: case.into(),
            reasons,
            evidence: vec![],
            attempt_kept: None,
        }
    }

    fn with_evidence(mut self, run: &RunSummary) -> Self {
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

    fn attainment_status(case: &CaseResult) -> Option<(String, J)> {
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

type Arms = [(&'static str, Vec<RunSummary>); 2];

fn arm_runs<'a>(arms: &'a Arms, arm: &str) -> &'a [RunSummary] {
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

fn check_each_run_once(arms: &Arms) -> Result<(), CompareError> {
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

fn all_runs(arms: &Arms) -> impl Iterator<Item = &RunSummary> {
    arms.iter().flat_map(|(_, r)| r.iter())
}

fn check_cases_exist(arms: &Arms, spec: &Spec) -> Result<(), CompareError> {
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

fn check_cases_hold_requests(arms: &Arms, spec: &Spec) -> Result<(), CompareError> {
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

fn check_one_slo_policy(arms: &Arms, spec: &Spec) -> Result<(), CompareError> {
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

fn design(arms: &Arms, spec: &Spec) -> Result<&'static str, CompareError> {
    let labelled = all_runs(arms).all(|r| !r.label("block").is_null());
    if spec.design == PAIRED && !labelled {
        return Err(CompareError::input(
            "a paired design needs every run labelled with --block",
        ));
    }
    Ok(if spec.design == INDEPENDENT || !labelled {
        INDEPENDENT
    } else {
        PAIRED
    })
}

fn case_ids(arms: &Arms, spec: &Spec) -> Vec<String> {
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

fn set_aside(excluded: &[Excluded], run: &RunSummary, case_id: &str) -> bool {
    excluded
        .iter()
        .any(|i| i.run == run.name && i.case == case_id)
}

fn standing(arms: &Arms, spec: &Spec, design: &str) -> (Vec<Excluded>, Arms) {
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

fn superseded(arms: &Arms, spec: &Spec, design: &str) -> Vec<Excluded> {
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

fn unpaired_blocks(arms: &Arms, spec: &Spec, excluded: &[Excluded]) -> Vec<Excluded> {
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

fn same_realization(a: &RunSummary, b: &RunSummary) -> bool {
    let (Some(x), Some(y)) = (
        a.fields.get("workload.realization_digest"),
        b.fields.get("workload.realization_digest"),
    ) else {
        return true;
    };
    if !(x.known() && y.known()) {
        return true;
    }
    crate::pyjson::py_eq(&x.value, &y.value)
}

fn blocks_set_aside(arms: &Arms, excluded: &[Excluded], case_id: &str) -> Vec<String> {
    let mut found: Vec<String> = all_runs(arms)
        .filter(|r| set_aside(excluded, r, case_id))
        .map(RunSummary::block_key)
        .collect();
    found.sort();
    found.dedup();
    found
}

fn partners(arms: &Arms, spec: &Spec, excluded: &[Excluded]) -> Vec<Excluded> {
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

fn lost(case_id: &str, arms: &Arms, excluded: &[Excluded], design: &str) -> (String, Vec<String>) {
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

// --------------------------------------------------------- comparability

type CompatOut = (
    Compatibility,
    Vec<(String, String, Vec<String>)>,
    Vec<WithinArm>,
);

fn compatibility(usable: &Arms, spec: &Spec) -> Result<CompatOut, CompareError> {
    let mut within = Vec::new();
    for (arm, runs) in usable {
        for run in runs.iter().skip(1) {
            let result =
                compat::compatible(&runs[0].fields, &run.fields, &spec.allow_within_arm, CONFIG);
            if result.status == INCOMPATIBLE {
                return Err(CompareError::input(incompatible(
                    &format!("{arm} runs"),
                    &result,
                    "--allow-within-arm",
                )));
            }
            within.push((*arm, runs[0].name.clone(), run.name.clone(), result));
        }
    }
    let anywhere: Vec<String> = spec
        .allow
        .iter()
        .chain(&spec.allow_within_arm)
        .cloned()
        .collect();
    let (baseline, candidate) = (arm_runs(usable, BASELINE), arm_runs(usable, CANDIDATE));
    let mut cross: Vec<(&RunSummary, &RunSummary)> = vec![(&baseline[0], &candidate[0])];
    cross.extend(candidate.iter().skip(1).map(|r| (&baseline[0], r)));
    cross.extend(baseline.iter().skip(1).map(|r| (r, &candidate[0])));
    let mut across = Vec::new();
    for (first, second) in cross {
        let result = compat::compatible(&first.fields, &second.fields, &anywhere, &spec.mode);
        if result.status == INCOMPATIBLE {
            return Err(CompareError::input(incompatible(
                "the arms", &result, "--allow",
            )));
        }
        across.push((first.name.clone(), second.name.clone(), result));
    }
    let results: Vec<(&String, &String, &Compatibility)> = within
        .iter()
        .map(|(_, a, b, r)| (a, b, r))
        .chain(across.iter().map(|(a, b, r)| (a, b, r)))
        .collect();
    let pairs: Vec<(String, String, Vec<String>)> = results
        .iter()
        .filter(|(_, _, r)| r.status == UNVERIFIED)
        .map(|(a, b, r)| {
            let mut names: Vec<String> = r.unverified.iter().map(|d| d.name.clone()).collect();
            names.sort();
            ((*a).clone(), (*b).clone(), names)
        })
        .collect();
    let mut worst = across[0].2.clone();
    if results.iter().any(|(_, _, r)| r.status == UNVERIFIED) {
        let mut names: Vec<compat::Difference> = Vec::new();
        for (_, _, r) in results.iter().filter(|(_, _, r)| r.status == UNVERIFIED) {
            for item in &r.unverified {
                if !names.iter().any(|d| d.name == item.name) {
                    names.push(item.clone());
                }
            }
        }
        worst.status = UNVERIFIED;
        worst.unverified = names;
    }
    let mut mixed = Vec::new();
    for (arm, runs) in usable {
        let mut names: Vec<String> = within
            .iter()
            .filter(|(a, ..)| a == arm)
            .flat_map(|(_, _, _, r)| r.allowed.iter().map(|d| d.name.clone()))
            .collect();
        names.sort();
        names.dedup();
        for name in names {
            let values = runs
                .iter()
                .map(|r| {
                    (
                        r.name.clone(),
                        r.fields.get(&name).map_or(Value::Null, |f| f.value.clone()),
                    )
                })
                .collect();
            mixed.push(WithinArm {
                arm: (*arm).to_owned(),
                field: name,
                values,
            });
        }
    }
    Ok((worst, pairs, mixed))
}

fn incompatible(what: &str, result: &Compatibility, flag: &str) -> String {
    let fields: Vec<String> = result
        .blocking
        .iter()
        .take(5)
        .map(|d| {
            format!(
                "{} ({} vs {})",
                d.name,
                crate::pyjson::str_form(&repr_value(&d.a)),
                crate::pyjson::str_form(&repr_value(&d.b))
            )
        })
        .collect();
    let more = if result.blocking.len() > 5 {
        format!(" and {} more", result.blocking.len() - 5)
    } else {
        String::new()
    };
    let place = if flag == "--allow-within-arm" {
        "within an arm "
    } else {
        ""
    };
    format!(
        "{what} are incompatible: {}{more}; allow a difference {place}with {flag}",
        fields.join(", ")
    )
}

/// A value as Python's `repr` shows it (strings quoted).
fn repr_value(v: &Value) -> Value {
    match v {
        Value::String(s) if crate::pyjson::sentinel_f64(s).is_none() => {
            Value::String(format!("'{s}'"))
        }
        other => other.clone(),
    }
}

fn requested(runs: &[RunSummary]) -> Vec<String> {
    let mut names: Vec<String> = runs
        .iter()
        .flat_map(|r| {
            r.observers()
                .as_object()
                .into_iter()
                .flatten()
                .filter(|(_, s)| truthy(get(s, "requested")))
                .map(|(n, _)| n.clone())
        })
        .collect();
    names.sort();
    names.dedup();
    names
}

fn unhealthy(runs: &[RunSummary], names: &[String]) -> Vec<String> {
    let mut issues = Vec::new();
    for run in runs {
        for name in names {
            let state = get(run.observers(), name);
            if get(state, "healthy") == &Value::Bool(true) {
                continue;
            }
            let word = if truthy(get(state, "active")) && get(state, "healthy").is_null() {
                "unjudged"
            } else {
                "not active and healthy"
            };
            issues.push(format!("{name} {word} in {}", run.name));
        }
    }
    issues
}

fn observer_contract(usable: &Arms, spec: &Spec) -> Result<Vec<String>, CompareError> {
    let (baseline, candidate) = (arm_runs(usable, BASELINE), arm_runs(usable, CANDIDATE));
    if spec.mode == OVERHEAD {
        let present = requested(baseline);
        if !present.is_empty() {
            return Err(CompareError::input(format!(
                "an overhead comparison needs a baseline without observers; it ran {}",
                present.join(", ")
            )));
        }
        return Ok(unhealthy(candidate, &requested(candidate)));
    }
    if spec.mode == INCREMENTAL {
        let (base, cand) = (requested(baseline), requested(candidate));
        let added: Vec<String> = cand.iter().filter(|n| !base.contains(n)).cloned().collect();
        let undeclared: Vec<String> = added
            .iter()
            .filter(|n| !spec.added_observers.contains(n))
            .cloned()
            .collect();
        if !undeclared.is_empty() {
            return Err(CompareError::input(format!(
                "observers added in the candidate must be declared with --added-observers: {}",
                undeclared.join(", ")
            )));
        }
        let shared: Vec<String> = base.iter().filter(|n| cand.contains(n)).cloned().collect();
        let mut both: Vec<String> = shared.iter().chain(&added).cloned().collect();
        both.sort();
        both.dedup();
        let mut issues = unhealthy(baseline, &shared);
        issues.extend(unhealthy(candidate, &both));
        return Ok(issues);
    }
    Ok(vec![])
}

// ------------------------------------------------------------------ cases

fn case(
    case_id: &str,
    arms: &Arms,
    excluded: &[Excluded],
    design: &str,
    spec: &Spec,
    compatibility: &Compatibility,
    observer_issues: &[String],
) -> Result<CaseResult, CompareError> {
    let kept: Arms = [
        (
            BASELINE,
            arm_runs(arms, BASELINE)
                .iter()
                .filter(|r| !set_aside(excluded, r, case_id))
                .cloned()
                .collect(),
        ),
        (
            CANDIDATE,
            arm_runs(arms, CANDIDATE)
                .iter()
                .filter(|r| !set_aside(excluded, r, case_id))
                .cloned()
                .collect(),
        ),
    ];
    let attrition: Vec<Excluded> = excluded
        .iter()
        .filter(|i| i.case == case_id)
        .cloned()
        .collect();
    let lost = lost(case_id, arms, excluded, design);
    let membership = membership(case_id, &kept);
    let mut spec = spec.clone();
    if membership.as_deref() == Some("overlap") {
        // Requests in flight during a segment are length-biased: diagnostics.
        spec.gates.clear();
        spec.fallbacks.clear();
        spec.min_attainment = None;
    }
    let blocked = if compatibility.status == UNVERIFIED {
        Some("unverified")
    } else if !observer_issues.is_empty() {
        Some("observer_not_active")
    } else if !lost.1.is_empty() && spec.on_incomplete == FAIL_INCOMPLETE {
        Some(PROTOCOL_FAILURE)
    } else {
        None
    };
    let control_failed = arm_runs(&kept, BASELINE)
        .iter()
        .any(|r| !r.outcome_failures.is_empty() || !r.comparable_cases.contains_key(case_id));
    let contrast = blocked.or(control_failed.then_some(CONTROL_FAILED));
    let metrics = case_metrics(case_id, &kept, design, &spec, contrast)?;
    let absent_gates = spec
        .gates
        .iter()
        .filter(|(p, _)| !metrics.iter().any(|m| fnmatch(p, &m.name)))
        .map(|(p, r)| {
            (
                p.clone(),
                GateOutcome::new(NOT_EVALUABLE, Some("metric_absent"), r),
            )
        })
        .collect();
    let mut result = CaseResult {
        metrics,
        absent_gates,
        attainment_gate: None,
        attainment_mean: None,
        attrition,
        set_aside: lost,
        gated: membership.as_deref() != Some("overlap"),
        membership,
    };
    if let Some(target) = spec.min_attainment {
        let slo_blocked = blocked
            .map(str::to_owned)
            .or_else(|| slo_blocker(case_id, &kept));
        let (gate, mean) = attainment_gate(
            case_id,
            arm_runs(&kept, CANDIDATE),
            &spec,
            target,
            slo_blocked.as_deref(),
        );
        result.attainment_gate = Some(gate);
        result.attainment_mean = mean;
    }
    Ok(result)
}

fn membership(case_id: &str, kept: &Arms) -> Option<String> {
    let mut found: Vec<String> = all_runs(kept)
        .filter_map(|r| r.comparable_cases.get(case_id))
        .map(|c| get(get(c, "intervals"), "membership"))
        .filter(|m| !m.is_null())
        .map(str_form)
        .collect();
    found.sort();
    found.dedup();
    if found.iter().any(|m| m == "overlap") {
        return Some("overlap".into());
    }
    found.pop()
}

fn unjudged_overlap(cases: &mut [(String, CaseResult)], spec: &Spec) {
    if cases.iter().any(|(_, c)| c.gated) {
        return;
    }
    for (_, case) in cases.iter_mut() {
        case.absent_gates = spec
            .gates
            .iter()
            .map(|(p, r)| {
                (
                    p.clone(),
                    GateOutcome::new(NOT_EVALUABLE, Some(OVERLAP_NOT_GATED), r),
                )
            })
            .collect();
        if spec.min_attainment.is_some() {
            case.attainment_gate = Some(obj([
                ("status", J::from(NOT_EVALUABLE)),
                ("reason", J::from(OVERLAP_NOT_GATED)),
            ]));
        }
    }
}

fn case_metrics(
    case_id: &str,
    kept: &Arms,
    design: &str,
    spec: &Spec,
    blocked: Option<&str>,
) -> Result<Vec<MetricComparison>, CompareError> {
    let Some(reference) = all_runs(kept).find_map(|r| r.comparable_cases.get(case_id)) else {
        return Ok(vec![]);
    };
    default_metrics(reference)
        .iter()
        .map(|m| metric(m, case_id, kept, design, spec, blocked))
        .collect()
}

fn metric(
    metric: &MetricSpec,
    case_id: &str,
    kept: &Arms,
    design: &str,
    spec: &Spec,
    blocked: Option<&str>,
) -> Result<MetricComparison, CompareError> {
    let mut values: Vec<Vec<RunValue>> = vec![vec![], vec![]];
    let mut reasons: Vec<String> = Vec::new();
    let mut lost_arms: Vec<&str> = Vec::new();
    for (i, (arm, runs)) in kept.iter().enumerate() {
        for run in runs {
            let case = run.comparable_cases.get(case_id);
            let (value, reason) = match case {
                None => (RunValue::Missing, Some("case_missing".to_owned())),
                Some(c) => metric.read(c),
            };
            values[i].push(value);
            if let Some(r) = reason.filter(|r| !r.is_empty()) {
                reasons.push(r);
            }
            if value == RunValue::Missing && (case.is_none() || !run.outcome_failures.is_empty()) {
                lost_arms.push(arm);
            }
        }
    }
    let gate = spec.gate_for(&metric.name);
    let lost_outcome = if lost_arms.contains(&CANDIDATE) {
        Some(OUTCOME_UNRECOVERABLE.to_owned())
    } else if let Some(b) = blocked {
        Some(b.to_owned())
    } else if lost_arms.contains(&BASELINE) {
        Some(CONTROL_FAILED.to_owned())
    } else {
        None
    };
    let unavailable =
        lost_outcome.or_else(|| metric_blocker(metric, case_id, kept, &reasons, spec));
    let failing = unavailable
        .as_deref()
        .is_some_and(|u| u == PROTOCOL_FAILURE || u == OUTCOME_UNRECOVERABLE);
    let blocks = (design == PAIRED).then(|| {
        (
            arm_runs(kept, BASELINE)
                .iter()
                .map(RunSummary::block_key)
                .collect(),
            arm_runs(kept, CANDIDATE)
                .iter()
                .map(RunSummary::block_key)
                .collect(),
        )
    });
    let trials = metric.trials.map(|_| {
        let counts = |arm: &str| -> Vec<Option<i64>> {
            arm_runs(kept, arm)
                .iter()
                .map(|r| {
                    r.comparable_cases
                        .get(case_id)
                        .and_then(|c| metric.trials_in(c))
                })
                .collect()
        };
        (counts(BASELINE), counts(CANDIDATE))
    });
    let request = Request {
        name: metric.name.clone(),
        direction: metric.direction.into(),
        scale: metric.scale.into(),
        unit: metric.unit.into(),
        value_unit: Some(metric.value_unit.into()),
        confidence: spec.confidence,
        gate: if failing { None } else { gate.clone() },
        bootstrap_min_n: spec.bootstrap_min_n,
        seed: spec.seed,
        unavailable: unavailable.clone(),
        trials,
        blocks,
    };
    let mut compared = compare_values(&request, &values[0], &values[1])?;
    if let Some(u) = &unavailable {
        if compared.reason.is_none() || u == OUTCOME_UNRECOVERABLE || u == CONTROL_FAILED {
            compared.reason = Some(u.clone());
        }
    }
    if failing {
        if let Some(rule) = &gate {
            compared.gate = Some(GateOutcome::new(FAIL, unavailable.as_deref(), rule));
        }
    }
    Ok(compared)
}

fn metric_blocker(
    metric: &MetricSpec,
    case_id: &str,
    kept: &Arms,
    reasons: &[String],
    spec: &Spec,
) -> Option<String> {
    let mut reasons: Vec<&String> = reasons
        .iter()
        .filter(|r| metric.unit != FRACTION_UNIT || !RUN_MISSES.contains(&r.as_str()))
        .collect();
    reasons.sort();
    if let Some(first) = reasons.first() {
        return Some((*first).clone());
    }
    if !metric.slo {
        return None;
    }
    if let Some(differs) = slo_blocker(case_id, kept) {
        return Some(differs);
    }
    let below = all_runs(kept)
        .filter_map(|r| r.comparable_cases.get(case_id))
        .any(|c| evidence_coverage(c).is_none_or(|v| v < spec.evidence_floor));
    below.then(|| "evidence_coverage_below_floor".into())
}

fn slo_blocker(case_id: &str, kept: &Arms) -> Option<String> {
    let mut digests: Vec<String> = all_runs(kept)
        .map(|r| get(r.slo(case_id), "slo_digest"))
        .filter(|d| !d.is_null())
        .map(str_form)
        .collect();
    digests.sort();
    digests.dedup();
    (digests.len() > 1).then(|| "slo_policy_differs".into())
}

// ------------------------------------------------------------- attainment

fn attainment_gate(
    case_id: &str,
    candidate: &[RunSummary],
    spec: &Spec,
    target: f64,
    blocked: Option<&str>,
) -> (J, Option<J>) {
    let lowers: Vec<Option<f64>> = candidate
        .iter()
        .map(|r| number(get(r.slo(case_id), "attainment_lower")))
        .collect();
    let known: Vec<f64> = lowers.iter().flatten().copied().collect();
    let undecided = |status: &str, reason: &str| {
        obj([("status", J::from(status)), ("reason", J::from(reason))])
    };
    if let Some(b) = blocked {
        return (
            undecided(
                if b == PROTOCOL_FAILURE {
                    FAIL
                } else {
                    NOT_EVALUABLE
                },
                b,
            ),
            None,
        );
    }
    if spec
        .min_complete_blocks
        .is_some_and(|m| (candidate.len() as i64) < m)
    {
        return (undecided(NOT_EVALUABLE, "blocks_below_preregistered"), None);
    }
    let lost_slo = candidate.iter().any(|r| {
        !r.comparable_cases.contains_key(case_id)
            || (!r.outcome_failures.is_empty() && !truthy(r.slo(case_id)))
    });
    if spec.attainment_model == "bernoulli" && lost_slo {
        return (undecided(FAIL, OUTCOME_UNRECOVERABLE), None);
    }
    if known.is_empty() {
        return (undecided(NOT_EVALUABLE, "no_slo_evaluation"), None);
    }
    let mut gate = if spec.attainment_model == "bernoulli" {
        let count = |key: &str| -> u64 {
            candidate
                .iter()
                .map(|r| crate::pyjson::int_value(get(r.slo(case_id), key)).max(0) as u64)
                .sum()
        };
        let (met, offered) = (count("met"), count("offered"));
        let bound = clopper_pearson(met, offered.max(1), spec.confidence, "independent_requests");
        let mut record = bound.to_record();
        record.set(
            "status",
            J::from(if bound.lower >= target { PASS } else { FAIL }),
        );
        record
    } else {
        let meeting = known.iter().filter(|v| **v >= target).count() as u64;
        run_pass_gate(
            meeting,
            lowers.len() as u64,
            spec.min_run_pass,
            spec.confidence,
        )
    };
    gate.set("target", J::Float(target));
    gate.set("runs_unmeasurable", J::from(lowers.len() - known.len()));
    (gate, Some(mean_interval(&known, spec.confidence)))
}

fn mean_interval(values: &[f64], confidence: f64) -> J {
    let n = values.len() as f64;
    let mean = values.iter().sum::<f64>() / n;
    if values.len() < 2 {
        return obj([
            ("mean", J::Float(mean)),
            ("lower", J::Null),
            ("upper", J::Null),
            ("model", J::from("normal_run_means")),
        ]);
    }
    let sd = (values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0)).sqrt();
    let half = t_quantile(confidence, n - 1.0) * sd / n.sqrt();
    obj([
        ("mean", J::Float(mean)),
        ("lower", J::Float(mean - half)),
        ("upper", J::Float(mean + half)),
        ("model", J::from("normal_run_means")),
    ])
}

// ---------------------------------------------------------------- family

fn with_family(c: &mut Comparison) {
    if c.spec.family != ANY_REGRESSION {
        return;
    }
    let mut p_values: Vec<(String, Option<f64>)> = Vec::new();
    for (case_id, case) in &c.cases {
        for m in &case.metrics {
            let Some(gate) = &m.gate else { continue };
            if !(gate.reason.is_none() || gate.reason.as_deref() == Some("exceeds_budget")) {
                continue;
            }
            if let Some(p) = m.best.as_ref().and_then(|b| b.p_worse) {
                p_values.push((format!("{case_id}/{}", m.name), Some(p)));
            }
        }
    }
    let rejected = holm(&p_values, (1.0 - c.spec.confidence) / 2.0);
    for (case_id, case) in &mut c.cases {
        for m in &mut case.metrics {
            let key = format!("{case_id}/{}", m.name);
            let Some(is_rejected) = rejected.iter().find(|(k, _)| *k == key).map(|(_, r)| *r)
            else {
                continue;
            };
            let Some(gate) = m.gate.clone() else { continue };
            if gate.status == NOT_EVALUABLE {
                continue;
            }
            let Some(effect) = m.best.as_ref().and_then(|b| b.effect) else {
                continue;
            };
            let bad = if m.direction == "lower_is_better" {
                effect
            } else {
                -effect
            };
            let failed = is_rejected && bad > gate.rule.budget;
            let mut outcome = GateOutcome::new(
                if failed { FAIL } else { PASS },
                failed.then_some("exceeds_budget_holm"),
                &gate.rule,
            );
            outcome.case = Some("best_case".into());
            m.gate = Some(outcome);
        }
    }
    let mut names: Vec<&String> = rejected
        .iter()
        .filter(|(_, r)| *r)
        .map(|(k, _)| k)
        .collect();
    names.sort();
    c.family = Some(obj([
        ("name", J::from(ANY_REGRESSION)),
        ("method", J::from("holm")),
        ("tests", J::from(p_values.len())),
        ("rejected", J::Arr(names.into_iter().map(J::from).collect())),
    ]));
}
