//! Runs grouped into series of comparable runs: one series per case and
//! per declared experiment/arm, holding the runs that `compare`'s
//! compatibility check lets stand beside the series' first run
//! (docs/history.md §1). Nothing here reads the database.

use serde_json::Value;
use sha2::{Digest, Sha256};

use super::Entry;
use crate::compare::compat::{self, CONFIG, INCOMPATIBLE, UNVERIFIED};
use crate::compare::metrics::default_metrics;
use crate::compare::stats::RunValue;
use crate::py::json::{get, str_form};

/// The declared labels that keep runs apart (`--allow experiment` joins them).
/// Other labels (`block`, a commit, a note) describe one run and never split.
pub const SERIES_LABELS: [&str; 2] = ["experiment", "arm"];

/// The figures listed for each run, in this order.
pub const HEADLINE: [&str; 12] = [
    "client.ttft.p50",
    "client.ttft.p90",
    "client.ttft.p99",
    "client.tpot.p50",
    "client.tpot.p90",
    "client.tpot.p99",
    "client.e2e.p50",
    "client.e2e.p90",
    "client.e2e.p99",
    "throughput_rps",
    "failure_fraction",
    "attainment",
];

/// One series: a case measured by mutually comparable runs, in time order.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    /// `CASE:xxxxxxxx`, the case and a digest of what the runs share.
    pub key: String,
    pub case_id: String,
    /// The series' experiment/arm labels (None where a run declares none).
    pub labels: Vec<(String, Option<String>)>,
    /// Indexes into the runs given to [`form`], oldest first.
    pub runs: Vec<usize>,
    /// `compatible`, or `unverified` when some run is not known to match the first.
    pub status: &'static str,
    /// Fields not known to agree between the first run and some other run.
    pub unverified: Vec<String>,
    /// Fields that differ between runs but were allowed.
    pub allowed: Vec<String>,
}

/// The order series are listed and formed in: start time, then run id.
pub fn time_order(runs: &[Entry]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..runs.len()).collect();
    order.sort_by(|&a, &b| {
        let key = |i: usize| (runs[i].started_at_ns.is_none(), runs[i].started_at_ns);
        key(a)
            .cmp(&key(b))
            .then_with(|| runs[a].run_id.cmp(&runs[b].run_id))
    });
    order
}

/// The run's value of a series label, unless `--allow` relaxes it.
fn label(run: &Entry, name: &str, allow: &[String]) -> Option<String> {
    if allow.iter().any(|a| a == name) {
        return None;
    }
    let v = get(&run.labels, name);
    (!v.is_null()).then(|| str_form(v))
}

/// Groups runs into series. Each run joins, for each of its cases, the
/// oldest series of that case and labels whose first run it is not
/// incompatible with (the check `compare` applies within an arm); a run
/// incompatible with every such series starts a new one.
pub fn form(runs: &[Entry], allow: &[String]) -> Vec<Series> {
    let mut series: Vec<Series> = Vec::new();
    for index in time_order(runs) {
        let run = &runs[index];
        let labels: Vec<(String, Option<String>)> = SERIES_LABELS
            .iter()
            .map(|n| ((*n).to_owned(), label(run, n, allow)))
            .collect();
        for case_id in run.cases.iter().map(|c| c.0.clone()) {
            let joined = series.iter_mut().find(|s| {
                s.case_id == case_id
                    && s.labels == labels
                    && compat::compatible(&runs[s.runs[0]].fields, &run.fields, allow, CONFIG)
                        .status
                        != INCOMPATIBLE
            });
            match joined {
                Some(s) => {
                    let c = compat::compatible(&runs[s.runs[0]].fields, &run.fields, allow, CONFIG);
                    if c.status == UNVERIFIED {
                        s.status = UNVERIFIED;
                    }
                    for d in c.unverified {
                        if !s.unverified.contains(&d.name) {
                            s.unverified.push(d.name);
                        }
                    }
                    for d in c.allowed {
                        if !s.allowed.contains(&d.name) {
                            s.allowed.push(d.name);
                        }
                    }
                    s.runs.push(index);
                }
                None => series.push(Series {
                    key: String::new(),
                    case_id: case_id.clone(),
                    labels: labels.clone(),
                    runs: vec![index],
                    status: compat::COMPATIBLE,
                    unverified: Vec::new(),
                    allowed: Vec::new(),
                }),
            }
        }
    }
    // A lone run's comparability is only known against a second run: the
    // fields every comparison requires are checked against the run itself.
    for s in &mut series {
        if s.runs.len() == 1 {
            let first = &runs[s.runs[0]].fields;
            let c = compat::compatible(first, first, allow, CONFIG);
            s.status = c.status;
            s.unverified = c.unverified.into_iter().map(|d| d.name).collect();
        }
        s.unverified.sort();
        s.allowed.sort();
    }
    let mut keys: Vec<String> = Vec::new();
    for s in &mut series {
        let base = series_key(&s.case_id, &s.labels, &runs[s.runs[0]], allow);
        let mut key = base.clone();
        let mut n = 2;
        while keys.contains(&key) {
            key = format!("{base}-{n}");
            n += 1;
        }
        keys.push(key.clone());
        s.key = key;
    }
    series.sort_by(|a, b| {
        a.case_id
            .cmp(&b.case_id)
            .then_with(|| a.runs[0].cmp(&b.runs[0]))
    });
    series
}

/// `CASE:` and eight hex digits of a digest over the case, the labels and
/// the first run's fields that decide comparability (not launch covariates,
/// not labels, not allowed ones): the same runs give the same key.
fn series_key(
    case_id: &str,
    labels: &[(String, Option<String>)],
    first: &Entry,
    allow: &[String],
) -> String {
    let mut hash = Sha256::new();
    hash.update(case_id.as_bytes());
    for (name, value) in labels {
        hash.update([0]);
        hash.update(name.as_bytes());
        hash.update([1]);
        hash.update(value.as_deref().unwrap_or("\u{0}").as_bytes());
    }
    for (name, field) in &first.fields {
        let class = compat::classify(name);
        if class == "launch" || class == "label" || compat::allowed_by(allow, name) {
            continue;
        }
        if !field.known() {
            continue;
        }
        hash.update([2]);
        hash.update(name.as_bytes());
        hash.update([3]);
        hash.update(crate::py::json::dumps_with(&field.value, None, ",", ":").as_bytes());
    }
    let digest = format!("{:x}", hash.finalize());
    format!("{case_id}:{}", &digest[..8])
}

/// A run's headline figures in one case, in [`HEADLINE`] order; a figure the
/// case cannot give is `Missing`.
pub fn headline(case: &Value) -> Vec<(&'static str, RunValue)> {
    let metrics = default_metrics(case);
    HEADLINE
        .iter()
        .map(|name| {
            let value = metrics
                .iter()
                .find(|m| m.name == *name)
                .map_or(RunValue::Missing, |m| m.read(case).0);
            (*name, value)
        })
        .collect()
}
