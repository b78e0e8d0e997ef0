//! One run summarized for comparison (the reference's
//! `stormlog.infer.run_summary`): its report, labels, comparable fields,
//! protocol and outcome failures, read from its decoded records.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::Value;

use super::compat::{self, Fields};
use super::CompareError;
use crate::py::json::{get, is_int, str_form, truthy};

/// Between a case and its segment in a comparable case's id (`case/segment`).
pub const SEGMENT_SEPARATOR: char = '/';

/// One run, summarized for comparison: its report, labels, fields and failures.
#[derive(Debug, Clone, PartialEq)]
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
            let record = crate::py::json::parse(&line)
                .map_err(|e| CompareError::input(format!("{shown}: {e}")))?;
            if record.is_object() {
                records.push(record);
            }
        }
        // The compact context transport (schema 4) is expanded as analysis expands it.
        let mut contexts = crate::model::transport::Contexts::default();
        let mut expanded = Vec::with_capacity(records.len());
        for (index, record) in records.into_iter().enumerate() {
            match contexts.accept(record) {
                Ok(crate::model::transport::Line::Record { raw, .. }) => {
                    expanded.push(Value::Object(contexts.expand(&raw)))
                }
                Ok(crate::model::transport::Line::Definition { .. }) => {}
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

    pub(crate) fn label(&self, key: &str) -> &Value {
        get(&self.labels, key)
    }

    pub(crate) fn failures_for(&self, case_id: &str) -> Vec<String> {
        let case = case_id.split(SEGMENT_SEPARATOR).next().unwrap_or(case_id);
        let mut all = self.protocol_failures.clone();
        all.extend(self.case_failures.get(case).cloned().unwrap_or_default());
        all
    }

    pub(crate) fn observers(&self) -> &Value {
        get(get(&self.report, "observers"), "observers")
    }

    pub(crate) fn block_key(&self) -> String {
        format!(
            "{}/{}",
            str_form(self.label("experiment")),
            str_form(self.label("block"))
        )
    }

    pub(crate) fn slo(&self, case_id: &str) -> &Value {
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
