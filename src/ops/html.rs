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
    pub join: super::join::JoinConfig,
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
    has_policy: bool,
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
        direct_server: cfg.join.direct_server,
        clock_offset_ns: cfg.join.clock_offset_ns,
        clock_uncertainty_ns: cfg.join.clock_uncertainty_ns,
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
    let has_policy = policy.is_some();
    let judged = match &policy {
        Some((p, _)) => judgements(&data.run_id, &rep.json, p),
        None => vec![],
    };
    let view = {
        let slo_view = crate::ops::slo::RunView::new(&data, &spans, None);
        let extras = extras(&slo_view, policy.as_ref());
        crate::html::run::view(&data, &rep, &judged, &samples, &extras)
    };
    let config = data
        .of_type("infer.session")
        .next()
        .map(|s| crate::py::json::get(s, "config").clone())
        .unwrap_or(Value::Null);
    let model = match crate::py::json::get(&config, "model") {
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
        has_policy,
        view,
        judged,
        json: rep.json,
        data_started,
        model,
        workload,
    })
}

/// The run's attainment curves (for the policy's criteria, joint with the
/// policy; TTFT and E2E without one) and its capacity sweeps (with a policy
/// that sets targets), from the functions `slo curve` and `slo capacity`
/// call, so the page and those commands give the same figures.
fn extras<'a>(
    view: &'a crate::ops::slo::RunView,
    policy: Option<&(Policy, PolicySource)>,
) -> crate::html::run::Extras<'a> {
    use crate::ops::slo::{capacity, curve};
    use crate::slo::CriterionKey;
    let criteria: Vec<CriterionKey> = match policy {
        Some((p, _)) => p.criteria.iter().map(|c| c.key).collect(),
        None => ["client.ttft", "client.e2e"]
            .iter()
            .filter_map(|k| CriterionKey::from_key(k))
            .collect(),
    };
    let curves = curve::curves(
        view,
        &curve::CurveConfig {
            criteria,
            thresholds: None,
            joint: policy.cloned(),
        },
    );
    let sweeps = match policy {
        Some((p, source))
            if p.attainment_target.is_some()
                || p.criteria.iter().any(|c| c.attainment_target.is_some()) =>
        {
            capacity::sweeps(capacity::points(view, p, *source, capacity::Load::Auto))
        }
        _ => Vec::new(),
    };
    crate::html::run::Extras {
        curves,
        sweeps,
        spans: view.spans(),
    }
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

/// A page and the judgements it shows, for `--check`.
#[derive(Debug)]
pub struct Page {
    pub html: String,
    /// Every judged case of every run on the page.
    pub judged: Vec<CaseJudgement>,
    /// Runs without a policy to judge them by.
    pub unjudged: Vec<String>,
    /// Runs left out of a project page, with why.
    pub warnings: Vec<String>,
}

/// The page of one run.
pub fn run_page(conn: &Connection, run: &str, cfg: &PageConfig) -> Result<Page, PageError> {
    let b = build(conn, run, cfg, false)?;
    let html = crate::html::run::render(&b.view).map_err(|message| PageError {
        message,
        exit: Exit::Unexpected,
    })?;
    Ok(Page {
        html,
        unjudged: if b.has_policy {
            vec![]
        } else {
            vec![run.to_owned()]
        },
        judged: b.judged,
        warnings: vec![],
    })
}

/// The project page over `runs`; a run that cannot be built is left out
/// and named in the returned warnings.
pub fn project_page(
    db_path: &std::path::Path,
    runs: &[String],
    cfg: &PageConfig,
) -> Result<Page, PageError> {
    let mut built = Vec::new();
    let mut warnings = Vec::new();
    let mut judged = Vec::new();
    let mut unjudged = Vec::new();
    // Each run's page is built alone, on as many workers as cores (1,000
    // runs of 3,000 requests: 8.3 s on one), and cut down to what the
    // project page keeps before the next: its identity, case table and
    // load chart (the per-case distributions are on its own page).
    let pages = super::judge_all::each_run(db_path, runs, |conn, id| {
        build(conn, id, cfg, true).map(|b| {
            let mut view = b.view;
            view.cases.clear();
            view.charts
                .retain(|c| c.title == "Latency against offered load");
            let run = ProjectRun {
                view,
                started_ns: b.data_started,
                model: b.model,
                workload: b.workload,
                figures: ProjectRun::figures_of(&b.json),
                judged: b.judged,
            };
            (run, b.has_policy)
        })
    })?;
    for (id, page) in runs.iter().zip(pages) {
        match page {
            Ok((run, has_policy)) => {
                if !has_policy {
                    unjudged.push(id.clone());
                }
                judged.extend(run.judged.iter().cloned());
                built.push(run);
            }
            Err(e) => warnings.push(format!("run {id}: {}", e.message)),
        }
    }
    let policy = cfg.policy.as_ref().map(|(p, _)| p.name.clone());
    let html =
        crate::html::project::render(&built, policy.as_deref()).map_err(|message| PageError {
            message,
            exit: Exit::Unexpected,
        })?;
    Ok(Page {
        html,
        judged,
        unjudged,
        warnings,
    })
}
