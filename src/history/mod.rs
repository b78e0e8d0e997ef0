//! `stormlog history`: the project's own past runs as series of comparable
//! runs (`series`), a run checked against earlier runs of its series
//! (`check`), and where a series' level shifted (`changes`), with their
//! renderers (`render`). The comparability rules and the gate rules are
//! `compare`'s (src/compare/), applied to stored runs; docs/history.md
//! says what the statistics claim. Pure: `ops::history` reads the database.

pub mod changes;
pub mod check;
pub mod listing;
pub mod render;
pub mod series;

use serde_json::{json, Map, Value};

use crate::compare::compat::{Fields, RunField};
use crate::compare::engine::RunSummary;
use crate::compare::stats::RunValue;
use crate::py::json::{get, str_form};

/// What `history` keeps of a run: enough to place it in its series and list
/// its headline figures. Built from a full [`RunSummary`] once, and kept in
/// the database's cache as [`Entry::to_json`].
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    pub run_id: String,
    pub started_at_ns: Option<i64>,
    /// The session's declared labels (an object).
    pub labels: Value,
    pub fields: Fields,
    /// Each case of the report, in report order, with its headline figures.
    pub cases: Vec<(String, Vec<(&'static str, RunValue)>)>,
    pub protocol_failures: Vec<String>,
}

/// The cache's layout; a different number is rebuilt, never read.
pub const ENTRY_FORMAT: i64 = 1;

/// A run summary's id as stored (the artifact's run id, else its name).
pub fn summary_run_id(run: &RunSummary) -> String {
    match &run.run_id {
        Value::String(s) => s.clone(),
        Value::Null => run.name.clone(),
        other => str_form(other),
    }
}

fn value_json(v: RunValue) -> Value {
    let finite = |x: f64| serde_json::Number::from_f64(x).map_or(Value::Null, Value::Number);
    match v {
        RunValue::Missing => Value::Null,
        RunValue::Point(x) => finite(x),
        RunValue::Range(a, b) => json!([finite(a), finite(b)]),
    }
}

fn json_value(v: &Value) -> RunValue {
    match v {
        Value::Number(n) => n.as_f64().map_or(RunValue::Missing, RunValue::Point),
        Value::Array(items) => match (
            items.first().and_then(Value::as_f64),
            items.get(1).and_then(Value::as_f64),
        ) {
            (Some(a), Some(b)) => RunValue::Range(a, b),
            _ => RunValue::Missing,
        },
        _ => RunValue::Missing,
    }
}

/// Provenance words are `&'static` in `RunField`; a cached one maps back.
fn provenance(word: &str) -> Option<&'static str> {
    ["observed", "reported", "inferred", "declared"]
        .into_iter()
        .find(|p| *p == word)
}

impl Entry {
    /// The entry of a fully summarized run.
    pub fn from_summary(run: &RunSummary) -> Entry {
        let cases = get(&run.report, "cases")
            .as_object()
            .map(|m| {
                m.iter()
                    .map(|(id, case)| (id.clone(), series::headline(case)))
                    .collect()
            })
            .unwrap_or_default();
        Entry {
            run_id: summary_run_id(run),
            started_at_ns: run.started_at_ns,
            labels: run.labels.clone(),
            fields: run.fields.clone(),
            cases,
            protocol_failures: run.protocol_failures.clone(),
        }
    }

    /// The entry as the cache stores it.
    pub fn to_json(&self) -> Value {
        let fields: Map<String, Value> = self
            .fields
            .iter()
            .map(|(name, f)| {
                (
                    name.clone(),
                    json!([f.value, f.source, f.provenance, f.null_is_value]),
                )
            })
            .collect();
        let cases: Vec<Value> = self
            .cases
            .iter()
            .map(|(id, figures)| {
                let figures: Map<String, Value> = figures
                    .iter()
                    .map(|(n, v)| ((*n).to_owned(), value_json(*v)))
                    .collect();
                json!([id, figures])
            })
            .collect();
        json!({
            "format": ENTRY_FORMAT,
            "run_id": self.run_id,
            "started_at_ns": self.started_at_ns,
            "labels": self.labels,
            "fields": fields,
            "cases": cases,
            "protocol_failures": self.protocol_failures,
        })
    }

    /// An entry read back from the cache; None when it is not one this
    /// version wrote (it is then rebuilt).
    pub fn from_json(v: &Value) -> Option<Entry> {
        if get(v, "format").as_i64() != Some(ENTRY_FORMAT) {
            return None;
        }
        let mut fields = Fields::new();
        for (name, f) in get(v, "fields").as_object()? {
            let item = f.as_array()?;
            fields.insert(
                name.clone(),
                RunField {
                    value: item.first()?.clone(),
                    source: item.get(1)?.as_str()?.to_owned(),
                    provenance: provenance(item.get(2)?.as_str()?)?,
                    null_is_value: item.get(3)?.as_bool()?,
                },
            );
        }
        let mut cases = Vec::new();
        for case in get(v, "cases").as_array()? {
            let id = case.get(0)?.as_str()?.to_owned();
            let stored = case.get(1)?;
            let figures = series::HEADLINE
                .iter()
                .map(|n| (*n, json_value(get(stored, n))))
                .collect();
            cases.push((id, figures));
        }
        Some(Entry {
            run_id: get(v, "run_id").as_str()?.to_owned(),
            started_at_ns: get(v, "started_at_ns").as_i64(),
            labels: get(v, "labels").clone(),
            fields,
            cases,
            protocol_failures: get(v, "protocol_failures")
                .as_array()?
                .iter()
                .filter_map(|p| p.as_str().map(str::to_owned))
                .collect(),
        })
    }

    /// The headline figures of one case, if the run has it.
    pub fn figures(&self, case_id: &str) -> Option<&[(&'static str, RunValue)]> {
        self.cases
            .iter()
            .find(|(id, _)| id == case_id)
            .map(|(_, f)| f.as_slice())
    }
}
