//! `stormlog history` and `stormlog history check`, from the project
//! database alone: every run's entry (kept in `history_entries`, rebuilt
//! when its stamp changes), the series, and for a check the full summaries
//! of the run and its baseline, judged by `history::check`.

use std::path::PathBuf;

use rayon::prelude::*;

use crate::compare::engine::RunSummary;
use crate::compare::stats::GateRule;
use crate::db::{self, Mode};
use crate::exit::Exit;
use crate::history::check::{self, CaseCheck, Rules};
use crate::history::listing::{self, Baseline, ListOptions, SeriesListing};
use crate::history::Entry;

/// Why `history` stopped; `exit()` is the status it ends with.
#[derive(Debug, thiserror::Error)]
pub enum HistoryError {
    /// The command line was wrong (exit 2).
    #[error("{0}")]
    Usage(String),
    /// The runs named cannot be checked (exit 5).
    #[error("{0}")]
    Input(String),
    /// The database failed (exit 1).
    #[error("{0}")]
    Db(#[from] db::DbError),
}

impl HistoryError {
    pub fn exit(&self) -> Exit {
        match self {
            HistoryError::Usage(_) => Exit::Usage,
            HistoryError::Input(_) => Exit::InvalidInput,
            HistoryError::Db(e) => e.exit(),
        }
    }
}

/// Where the runs come from and how they are judged.
#[derive(Debug, Clone, Default)]
pub struct Source {
    pub db: PathBuf,
    /// `--slo` criteria or one policy file, judging every run (empty: each run's own).
    pub slo: Vec<String>,
}

/// `stormlog history`'s result.
#[derive(Debug, Clone)]
pub struct Listing {
    pub series: Vec<SeriesListing>,
    pub runs: usize,
    /// Entries rebuilt this time (the rest came from the cache).
    pub rebuilt: usize,
}

/// Lists the series of the project.
pub fn list(source: &Source, options: &ListOptions) -> Result<Listing, HistoryError> {
    let (conn, writable) = open_project(&source.db)?;
    let policy = policy(&source.slo)?;
    let (entries, rebuilt) = load_entries(&conn, writable, policy.as_ref())?;
    let series = listing::list(&entries, options);
    if let Some(wanted) = &options.series {
        if series.is_empty() {
            return Err(HistoryError::Input(format!(
                "no series has the key '{wanted}'; `stormlog history` lists the keys"
            )));
        }
    }
    Ok(Listing {
        series,
        runs: entries.len(),
        rebuilt,
    })
}

/// How `history check` names its baseline.
#[derive(Debug, Clone, PartialEq)]
pub enum BaselineArg {
    Last(usize),
    /// A date or time (UTC): `2026-11-29` or `2026-11-29T14:00:00Z`.
    Since(String),
    Runs(Vec<String>),
}

/// What `history check` is asked.
#[derive(Debug, Clone)]
pub struct CheckConfig {
    pub run: String,
    pub baseline: BaselineArg,
    pub gates: Vec<String>,
    pub confidence: f64,
    pub allow: Vec<String>,
    pub cases: Vec<String>,
    pub allow_not_evaluable: bool,
}

/// `stormlog history check`'s result.
#[derive(Debug, Clone)]
pub struct CheckResult {
    pub run_id: String,
    pub baseline: BaselineArg,
    pub confidence: f64,
    pub cases: Vec<CaseCheck>,
    pub allow_not_evaluable: bool,
    /// Whether a gate failed (or was not evaluable and that was not allowed).
    pub gate_failed: bool,
}

impl CheckResult {
    pub fn exit(&self) -> Exit {
        if self.gate_failed {
            Exit::GateFailed
        } else {
            Exit::Ok
        }
    }
}

/// Checks one run against earlier runs of its series.
pub fn check(source: &Source, config: &CheckConfig) -> Result<CheckResult, HistoryError> {
    let rules = rules(config)?;
    let (conn, writable) = open_project(&source.db)?;
    let resolve =
        |name: &str| db::runs::resolve(&conn, name).map_err(|e| HistoryError::Input(e.to_string()));
    let target_id = resolve(&config.run)?;
    let policy = policy(&source.slo)?;
    let (entries, _) = load_entries(&conn, writable, policy.as_ref())?;
    let index_of = |id: &str| entries.iter().position(|e| e.run_id == id);
    let Some(target) = index_of(&target_id) else {
        return Err(HistoryError::Input(format!(
            "run {target_id} is not stored"
        )));
    };
    let baseline = match &config.baseline {
        BaselineArg::Last(n) => Baseline::Last(*n),
        BaselineArg::Since(text) => Baseline::Since(since_ns(text)?),
        BaselineArg::Runs(names) => {
            let mut runs = Vec::new();
            for name in names {
                let id = resolve(name)?;
                if id == target_id {
                    return Err(HistoryError::Usage(format!(
                        "--baseline runs: {id} is the run being checked"
                    )));
                }
                if let Some(i) = index_of(&id) {
                    if !runs.contains(&i) {
                        runs.push(i);
                    }
                }
            }
            Baseline::Runs(runs)
        }
    };
    let mut chosen = listing::baselines(&entries, target, &baseline, &config.allow);
    if !config.cases.is_empty() {
        for wanted in &config.cases {
            if !chosen.iter().any(|(c, _, _)| c == wanted) {
                return Err(HistoryError::Usage(format!(
                    "--case {wanted}: run {target_id} has no such case"
                )));
            }
        }
        chosen.retain(|(c, _, _)| config.cases.contains(c));
    }
    // Full summaries only for the runs the check reads.
    let mut needed: Vec<usize> = vec![target];
    for (_, _, runs) in &chosen {
        for &i in runs {
            if !needed.contains(&i) {
                needed.push(i);
            }
        }
    }
    let ids: Vec<String> = needed.iter().map(|&i| entries[i].run_id.clone()).collect();
    // A summary reads no per-request record (`RunSummary::from_records`):
    // with them, 500 baseline runs of the project bench held 4.2 GB. Of
    // each run the check reads its fields, failures and the blocks of the
    // cases checked (`check::check_case`), never its report (999 whole
    // summaries held 276 MB).
    let checked: Vec<&String> = chosen.iter().map(|(c, _, _)| c).collect();
    let summaries = summaries_kept(
        &conn,
        &ids,
        policy.as_ref(),
        Records::WithoutRequests,
        |mut s| {
            s.report = serde_json::Value::Null;
            s.comparable_cases.retain(|c, _| checked.contains(&c));
            s
        },
    )?;
    let summary_of = |i: usize| -> &RunSummary {
        let at = needed.iter().position(|&n| n == i).unwrap_or(0);
        &summaries[at]
    };
    let mut cases = Vec::new();
    for (case_id, key, runs) in &chosen {
        let baseline: Vec<&RunSummary> = runs.iter().map(|&i| summary_of(i)).collect();
        let mut case = check::check_case(
            case_id,
            summary_of(target),
            &baseline,
            &rules,
            matches!(config.baseline, BaselineArg::Runs(_)),
        )
            .map_err(|e| {
                HistoryError::Input(format!(
                    "case {}: run {} is not comparable with {target_id}: {}; pass --allow FIELD for a difference that is intended",
                    e.case_id,
                    e.baseline_run,
                    e.fields.join(", ")
                ))
            })?;
        case.series_key = key.clone();
        cases.push(case);
    }
    let gate_failed = check::gate_failed(&cases, config.allow_not_evaluable);
    Ok(CheckResult {
        run_id: target_id,
        baseline: config.baseline.clone(),
        confidence: config.confidence,
        cases,
        allow_not_evaluable: config.allow_not_evaluable,
        gate_failed,
    })
}

fn rules(config: &CheckConfig) -> Result<Rules, HistoryError> {
    if !(0.0 < config.confidence && config.confidence < 1.0) {
        return Err(HistoryError::Usage(format!(
            "--confidence {}: use a number between 0 and 1, e.g. 0.95",
            config.confidence
        )));
    }
    let mut gates: Vec<(String, GateRule)> = Vec::new();
    for text in &config.gates {
        let gate = crate::compare::gate_flag(text, None)
            .map_err(|e| HistoryError::Usage(e.to_string()))?;
        gates.push(gate);
    }
    Ok(Rules {
        gates,
        confidence: config.confidence,
        allow: config.allow.clone(),
    })
}

type Policy = (crate::slo::Policy, crate::slo::PolicySource);

fn policy(slo: &[String]) -> Result<Option<Policy>, HistoryError> {
    crate::slo::policy_from_cli(slo, None).map_err(|e| {
        if e.exit() == Exit::Usage {
            HistoryError::Usage(e.to_string())
        } else {
            HistoryError::Input(e.to_string())
        }
    })
}

/// The cache key of a policy: '' for each run's recorded one.
fn policy_key(policy: Option<&Policy>) -> String {
    policy.map_or_else(String::new, |(p, _)| crate::slo::digest(p))
}

/// What an entry was built by, besides the database's part of the stamp.
fn version_stamp() -> String {
    format!(
        "|stormlog {}|entry {}",
        env!("CARGO_PKG_VERSION"),
        crate::history::ENTRY_FORMAT
    )
}

/// Every run's entry: kept ones whose stamp matches, the rest rebuilt (in
/// parallel) and kept. Returns the entries (by run id) and how many were rebuilt.
/// Opens the project as the read commands do (a missing, foreign or
/// other-version database is refused and left alone), then for writing the
/// entry cache where the file can be written; where it cannot, the entries
/// are built and not kept (the `bool` says which).
fn open_project(path: &std::path::Path) -> Result<(db::Connection, bool), HistoryError> {
    let read = db::read::open_for_reading(path)?;
    match db::open(path, Mode::ReadWrite) {
        Ok(conn) => Ok((conn, true)),
        Err(_) => Ok((read, false)),
    }
}

fn load_entries(
    conn: &db::Connection,
    writable: bool,
    policy: Option<&Policy>,
) -> Result<(Vec<Entry>, usize), HistoryError> {
    let key = policy_key(policy);
    let rows = db::history::entries(conn, &key)?;
    let version = version_stamp();
    let mut entries: Vec<Option<Entry>> = Vec::with_capacity(rows.len());
    let mut missing: Vec<usize> = Vec::new();
    for (i, row) in rows.iter().enumerate() {
        let kept = row
            .cached
            .as_ref()
            .filter(|(stamp, _)| *stamp == format!("{}{version}", row.stamp))
            .and_then(|(_, text)| serde_json::from_str(text).ok())
            .and_then(|v| Entry::from_json(&v));
        if kept.is_none() {
            missing.push(i);
        }
        entries.push(kept);
    }
    // A few runs at a time, each chunk's entries kept as it is built.
    for chunk in missing.chunks(LOADED_AT_ONCE) {
        let ids: Vec<String> = chunk.iter().map(|&i| rows[i].run_id.clone()).collect();
        let built = summaries(conn, &ids, policy, Records::WithoutRequests)?;
        let mut kept = Vec::new();
        for (&i, summary) in chunk.iter().zip(&built) {
            let entry = Entry::from_summary(summary);
            kept.push((
                rows[i].run_id.clone(),
                format!("{}{version}", rows[i].stamp),
                entry.to_json().to_string(),
            ));
            entries[i] = Some(entry);
        }
        if writable {
            db::history::store_entries(conn, &key, &kept)?;
        }
    }
    let rebuilt = missing.len();
    Ok((entries.into_iter().flatten().collect(), rebuilt))
}

/// Stored runs read for analysis on this thread.
struct Loaded {
    run_id: String,
    data: crate::model::RunData,
    spans: Vec<serde_json::Value>,
    artifact: String,
}

/// Which of a run's records a summary is built from.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Records {
    /// Every record, as `compare --db` exports them (what the lean
    /// summaries are tested against).
    #[cfg(test)]
    All,
    /// All but the per-request records (requests, dispatches, first
    /// contents), for an entry and a check: what a summary takes from the records (fields,
    /// labels, sessions, run state) is in the others, and the requests are
    /// most of a run. The report, built from the whole run, gives the figures.
    WithoutRequests,
}

const PER_REQUEST: [&str; 3] = ["infer.request", "infer.dispatch", "infer.first_content"];

/// How many runs are held loaded at once while their summaries are built.
const LOADED_AT_ONCE: usize = 32;

/// Summaries of stored runs, as `compare --db` builds them: each run's
/// report rebuilt under the policy, and its records exported back. The
/// runs are loaded [`LOADED_AT_ONCE`] at a time, so that memory follows
/// that many runs and not all the runs named (a `history check` against
/// `last:999` held every run's requests at once: 1.4 GB).
fn summaries(
    conn: &db::Connection,
    ids: &[String],
    policy: Option<&Policy>,
    records: Records,
) -> Result<Vec<RunSummary>, HistoryError> {
    summaries_kept(conn, ids, policy, records, |s| s)
}

/// [`summaries`], each passed through `keep` as soon as its chunk is built,
/// so that a caller keeping a part of each holds only that part of most.
fn summaries_kept(
    conn: &db::Connection,
    ids: &[String],
    policy: Option<&Policy>,
    records: Records,
    keep: impl Fn(RunSummary) -> RunSummary,
) -> Result<Vec<RunSummary>, HistoryError> {
    let mut built = Vec::with_capacity(ids.len());
    for chunk in ids.chunks(LOADED_AT_ONCE) {
        built.extend(
            summaries_of(conn, chunk, policy, records)?
                .into_iter()
                .map(&keep),
        );
    }
    Ok(built)
}

/// [`summaries`] of a few runs, loaded on this thread and built in
/// parallel.
fn summaries_of(
    conn: &db::Connection,
    ids: &[String],
    policy: Option<&Policy>,
    records: Records,
) -> Result<Vec<RunSummary>, HistoryError> {
    let mut loaded = Vec::with_capacity(ids.len());
    for id in ids {
        let artifact = match records {
            #[cfg(test)]
            Records::All => db::runs::export_artifact(conn, id)?,
            Records::WithoutRequests => {
                let mut out = String::new();
                for (_, record) in db::store::raw_records_except(conn, id, &PER_REQUEST)? {
                    let kind = crate::py::json::get(&record, "event_type").as_str();
                    if kind.is_some_and(|k| PER_REQUEST.contains(&k)) {
                        continue;
                    }
                    out.push_str(&crate::py::json::dumps_compact(&record));
                    out.push('\n');
                }
                out
            }
        };
        loaded.push(Loaded {
            run_id: id.clone(),
            data: db::store::load_run(conn, id)?,
            spans: db::store::attached_spans(conn, id)?,
            artifact,
        });
    }
    loaded
        .into_par_iter()
        .map(|l| {
            let inputs = crate::report::Inputs {
                policy: policy.cloned(),
                external_spans: l.spans,
                ..Default::default()
            };
            let report = crate::report::build(&l.data, inputs)
                .map_err(|e| HistoryError::Input(format!("run {}: {}", l.run_id, e.message)))?;
            RunSummary::from_artifact(
                std::path::Path::new(&l.run_id),
                l.artifact.as_bytes(),
                report.json,
            )
            .map_err(|e| HistoryError::Input(format!("run {}: {e}", l.run_id)))
        })
        .collect()
}

/// `--baseline since:DATE`: a UTC date (`YYYY-MM-DD`) or time
/// (`YYYY-MM-DDTHH:MM:SSZ`), as nanoseconds since the epoch.
pub fn since_ns(text: &str) -> Result<i64, HistoryError> {
    let bad = || {
        HistoryError::Usage(format!(
            "--baseline since:{text}: use a UTC date or time, e.g. since:2026-11-29 or since:2026-11-29T14:00:00Z"
        ))
    };
    let (date, time) = match text.split_once('T') {
        Some((d, t)) => (d, Some(t.strip_suffix('Z').unwrap_or(t))),
        None => (text, None),
    };
    let parts: Vec<&str> = date.split('-').collect();
    let [y, m, d] = parts.as_slice() else {
        return Err(bad());
    };
    let (y, m, d): (i64, i64, i64) = (
        y.parse().map_err(|_| bad())?,
        m.parse().map_err(|_| bad())?,
        d.parse().map_err(|_| bad())?,
    );
    // Years outside 1970..=2262 do not fit nanoseconds since the epoch in an i64.
    if !(1..=12).contains(&m) || !(1..=31).contains(&d) || !(1970..=2262).contains(&y) {
        return Err(bad());
    }
    let mut seconds = 0i64;
    if let Some(t) = time {
        let hms: Vec<&str> = t.split(':').collect();
        if hms.is_empty() || hms.len() > 3 {
            return Err(bad());
        }
        let mut scale = 3600;
        for part in hms {
            let v: i64 = part.parse().map_err(|_| bad())?;
            if !(0..60).contains(&v) && scale != 3600 || !(0..24).contains(&v) && scale == 3600 {
                return Err(bad());
            }
            seconds += v * scale;
            scale /= 60;
        }
    }
    // Howard Hinnant's days_from_civil.
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    (days * 86_400 + seconds)
        .checked_mul(1_000_000_000)
        .ok_or_else(bad)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[allow(clippy::unwrap_used)]
    fn an_entry_built_without_the_request_records_is_the_full_summarys() {
        let cases = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/conformance/cases");
        let mut conn = db::open_memory().unwrap();
        let files = [
            "compare_config/baseline_b1.jsonl",
            "closed_matrix/artifact.jsonl",
            "failures/artifact.jsonl",
            "interrupted/artifact.jsonl",
            "slo_file/artifact.jsonl",
            "shared_prefix/artifact.jsonl",
        ];
        let mut ids = Vec::new();
        for f in files {
            let done =
                crate::ingest::ingest_path(&mut conn, &cases.join(f), &Default::default()).unwrap();
            ids.push(done.run_id);
        }
        for judged in [None, policy(&["ttft:20".to_owned()]).unwrap()] {
            let full = summaries(&conn, &ids, judged.as_ref(), Records::All).unwrap();
            let lean = summaries(&conn, &ids, judged.as_ref(), Records::WithoutRequests).unwrap();
            for (a, b) in full.iter().zip(&lean) {
                // All but the digest of the text it was read from, which
                // neither an entry nor a check reads.
                let unhashed = |s: &RunSummary| RunSummary {
                    sha256: String::new(),
                    ..s.clone()
                };
                assert_eq!(unhashed(a), unhashed(b), "{}", a.name);
                assert_eq!(Entry::from_summary(a), Entry::from_summary(b), "{}", a.name);
                let kept = Entry::from_json(&Entry::from_summary(a).to_json());
                assert_eq!(kept.as_ref(), Some(&Entry::from_summary(a)), "{}", a.name);
            }
        }
    }

    #[test]
    fn since_reads_dates_and_times_in_utc() {
        assert_eq!(since_ns("1970-01-02").ok(), Some(86_400_000_000_000));
        // 2026-11-29T14:14:16Z, the compare_config runs' day.
        assert_eq!(
            since_ns("2026-11-29T14:14:16Z").ok(),
            Some(1_795_961_656_000_000_000)
        );
        for bad in ["2026-13-01", "yesterday", "2026-11-29T25:00", "1900-01-01"] {
            assert!(since_ns(bad).is_err(), "{bad}");
        }
    }
}
