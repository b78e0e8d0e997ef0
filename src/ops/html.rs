//! `report --format html`: a run's page, or the project page for several
//! runs (`--all`). Loads each run, builds its report (as `report` does), its
//! judgements under the chosen policy, and hands them to `html`.
use crate::db::Connection;
use serde_json::Value;

use crate::db::DbError;
use crate::exit::Exit;
use crate::html::project::ProjectRun;
use crate::report::{self, judge::CaseJudgement, ReportError};
use crate::slo::{Policy, PolicySource};

/// What a page is built from besides the runs.
#[derive(Debug, Clone, Default)]
pub struct PageConfig {
    /// A policy from the command line (replaces recorded ones).
    pub policy: Option<(Policy, PolicySource)>,
    pub direct_server: bool,
    pub clock_offset_ns: Option<i64>,
    pub clock_uncertainty_ns: Option<i64>,
}

/// Why a page could not be made, with its exit status.
#[derive(Debug, thiserror::Error)]
#[error("{message}")]
pub struct PageError {
    pub message: String,
    pub exit: Exit,
}

impl From<ReportError> for PageError {
    fn from(e: ReportError) -> Self {
        PageError {
            message: e.message,
            exit: e.exit,
        }
    }
}

impl From<DbError> for PageError {
    fn from(e: DbError) -> Self {
        PageError {
            exit: e.exit(),
            message: e.to_string(),
        }
    }
}

/// One run's report, judgements and view.
struct Built {
    view: crate::html::run::RunView,
    judged: Vec<CaseJudgement>,
    json: Value,
    data_started: Option<i64>,
    model: String,
    workload: String,
}

fn build(conn: &Connection, run: &str, cfg: &PageConfig, many: bool) -> Result<Built, PageError> {
    let data = crate::db::store::load_run(conn, run)?;
    let samples = crate::ingest::telemetry::load_samples(conn, run)?;
    let spans = crate::db::store::attached_spans(conn, run)?;
    let inputs = report::Inputs {
        policy: cfg.policy.clone(),
        telemetry_configured: !samples.is_empty(),
        server_samples: samples.clone(),
        direct_server: cfg.direct_server,
        clock_offset_ns: cfg.clock_offset_ns,
        clock_uncertainty_ns: cfg.clock_uncertainty_ns,
        external_spans: spans.clone(),
        segments: Vec::new(),
        membership: Default::default(),
    };
    let rep = report::build(&data, inputs)?;
    // The judgements come from the report's own case evaluations (the
    // same figures `report --all` computes again from scratch).
    let policy = match cfg.policy.clone() {
        Some(p) => Some(p),
        None => {
            let recorded: Vec<&Value> = data.of_type("infer.slo").collect();
            crate::slo::select(None, &recorded)
                .ok()
                .and_then(|sel| sel.policy.zip(sel.source))
        }
    };
    let judged = match &policy {
        Some((p, _)) => judgements(&data.run_id, &rep.json, p),
        None => vec![],
    };
    let view = crate::html::run::view(&data, &rep, &judged, &samples);
    let config = data
        .of_type("infer.session")
        .next()
        .map(|s| crate::pyjson::get(s, "config").clone())
        .unwrap_or(Value::Null);
    let model = match crate::pyjson::get(&config, "model") {
        Value::String(s) => s.clone(),
        _ => "–".into(),
    };
    let workload = match &rep.json["workload"]["workload_digest"] {
        Value::String(s) => s.chars().take(12).collect(),
        _ => "–".into(),
    };
    // A monotonic-clock import is dated by the tool's wall time or not at all.
    let data_started = match crate::html::run::monotonic_start(&data) {
        Some(m) => m.started_ns,
        None => data.measured().filter_map(|r| r.started_at_ns()).min(),
    };
    // Freeing a few hundred thousand requests costs more than the exit
    // that follows (as `report` does): the process hands the memory back
    // as a whole. Only the project page builds more than one run, and each
    // of its runs is freed.
    if data.requests.len() > 100_000 && !many {
        std::mem::forget(data);
    }
    Ok(Built {
        view,
        judged,
        json: rep.json,
        data_started,
        model,
        workload,
    })
}

/// Each case's judgement from its `slo` block in the report.
fn judgements(run_id: &str, report: &Value, policy: &Policy) -> Vec<CaseJudgement> {
    let Some(cases) = report["cases"].as_object() else {
        return vec![];
    };
    cases
        .iter()
        .map(|(key, c)| crate::report::judge::judgement(run_id, key, c["slo"].clone(), policy))
        .collect()
}

/// The page of one run.
pub fn run_page(conn: &Connection, run: &str, cfg: &PageConfig) -> Result<String, PageError> {
    let b = build(conn, run, cfg, false)?;
    crate::html::run::render(&b.view).map_err(|message| PageError {
        message,
        exit: Exit::Unexpected,
    })
}

/// The project page over `runs`; a run that cannot be built is left out
/// and named in the returned warnings.
pub fn project_page(
    conn: &Connection,
    runs: &[String],
    cfg: &PageConfig,
) -> Result<(String, Vec<String>), PageError> {
    let mut built = Vec::new();
    let mut warnings = Vec::new();
    for id in runs {
        match build(conn, id, cfg, true) {
            Ok(b) => {
                let mut view = b.view;
                // The project page keeps each run's identity, case table and
                // load chart; the per-case distributions are on its own page.
                view.cases.clear();
                view.charts
                    .retain(|c| c.title == "Latency against offered load");
                built.push(ProjectRun {
                    view,
                    started_ns: b.data_started,
                    model: b.model,
                    workload: b.workload,
                    figures: ProjectRun::figures_of(&b.json),
                    judged: b.judged,
                });
            }
            Err(e) => warnings.push(format!("run {id}: {}", e.message)),
        }
    }
    let policy = cfg.policy.as_ref().map(|(p, _)| p.name.clone());
    let page =
        crate::html::project::render(&built, policy.as_deref()).map_err(|message| PageError {
            message,
            exit: Exit::Unexpected,
        })?;
    Ok((page, warnings))
}
