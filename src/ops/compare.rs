//! `infer compare` as a function of a plain [`CompareConfig`]: each arm's
//! runs analyzed (artifacts through [`crate::ops::analyze`], stored runs
//! loaded from the project database) and summarized from what was decoded,
//! compared by [`crate::compare`], and reported as text, JSON or HTML with
//! the reference's exit statuses (docs/compare.md §0).

use std::io::Write;
use std::path::{Path, PathBuf};

use crate::compare::compat::Mode;
use crate::compare::engine::{self, RunSummary, Spec};
use crate::compare::spec::{
    choice, gate_flag, number, AttainmentModel, Design, Family, OnIncomplete,
};
use crate::compare::{arms, definitions, metrics, ojson, report, text, CompareError};
use crate::exit::Exit;

/// The report format on stdout.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Format {
    #[default]
    Txt,
    Json,
    /// One self-contained HTML page (to the report path, else stdout).
    Html,
}

/// Everything `infer compare` is asked, as the reference's flags name it;
/// the choices (`mode`, `design`, ...) as their flags spell them, checked
/// when the comparison spec is built.
#[derive(Debug, Clone)]
pub struct CompareConfig {
    /// The baseline arm's artifacts (with `db`: stored run ids; with
    /// `experiment`: the one arm label, default `baseline`).
    pub baseline: Vec<PathBuf>,
    /// The candidate arm's, likewise (default arm label `candidate`).
    pub candidate: Vec<PathBuf>,
    pub experiment: Option<String>,
    pub block: Vec<String>,
    pub db: Option<PathBuf>,
    pub case: Vec<String>,
    pub slo: Vec<String>,
    pub slo_file: Option<PathBuf>,
    pub mode: String,
    pub design: String,
    pub allow: Vec<String>,
    pub allow_within_arm: Vec<String>,
    pub added_observers: String,
    pub gate: Vec<String>,
    pub fallback: Vec<String>,
    pub min_complete_blocks: Option<i64>,
    pub min_attainment: Option<f64>,
    pub min_run_pass: f64,
    pub attainment_model: String,
    pub family: String,
    pub on_incomplete: String,
    pub allow_not_evaluable: bool,
    pub evidence_floor: f64,
    pub confidence: f64,
    pub seed: u64,
    pub vllm_spans: Vec<PathBuf>,
    pub segment: Vec<String>,
    pub segment_membership: String,
    pub format: Format,
    /// Also write the JSON report (with `Format::Html`, the page) here.
    pub report: Option<PathBuf>,
    /// The command line as the report's `tool.argv` records it; empty means
    /// the process's own arguments.
    pub argv: Vec<String>,
    /// The report's `generated_at_utc`; None means now (tests pin it).
    pub generated_at: Option<String>,
    /// The folder relative artifact paths are read from (None: the working
    /// directory); reports still name each path as given.
    pub base_dir: Option<PathBuf>,
}

impl Default for CompareConfig {
    /// The flags' defaults.
    fn default() -> Self {
        CompareConfig {
            baseline: vec![],
            candidate: vec![],
            experiment: None,
            block: vec![],
            db: None,
            case: vec![],
            slo: vec![],
            slo_file: None,
            mode: "config".into(),
            design: "auto".into(),
            allow: vec![],
            allow_within_arm: vec![],
            added_observers: String::new(),
            gate: vec![],
            fallback: vec![],
            min_complete_blocks: None,
            min_attainment: None,
            min_run_pass: 0.5,
            attainment_model: "runs".into(),
            family: "all_budgets".into(),
            on_incomplete: "exclude".into(),
            allow_not_evaluable: false,
            evidence_floor: 1.0,
            confidence: 0.95,
            seed: 0,
            vllm_spans: vec![],
            segment: vec![],
            segment_membership: "arrival".into(),
            format: Format::Txt,
            report: None,
            argv: vec![],
            generated_at: None,
            base_dir: None,
        }
    }
}

/// Runs `infer compare`: writes the report to `out` and returns the exit
/// status (0 or 4). An error's report (exit 5) is written before it returns.
pub fn run(
    args: &CompareConfig,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<Exit, CompareError> {
    let spec = comparison_spec(args)?;
    let argv = if args.argv.is_empty() {
        std::env::args().skip(1).collect()
    } else {
        args.argv.clone()
    };
    let generated_at = args.generated_at.clone().unwrap_or_else(now_utc);
    let compared = summarize_and_compare(args, spec, err);
    let comparison = match compared {
        Ok(c) => c,
        Err(e @ CompareError::Input(_)) => {
            let report = report::error_report(&e.to_string(), 5, &argv, &generated_at);
            if let Some(path) = &args.report {
                write_report(path, &report)?;
            }
            if args.format == Format::Json {
                writeln!(out, "{}", report.dumps_pretty())?;
            }
            return Err(e);
        }
        Err(e) => return Err(e),
    };
    let exit_code = comparison.exit_code();
    if args.format == Format::Html {
        let shown = report::comparison_report(&comparison, exit_code, &argv, None, &generated_at);
        let json: serde_json::Value =
            serde_json::from_str(&shown.dumps_pretty()).map_err(|e| CompareError::Other {
                message: format!("the comparison report: {e}"),
                exit: Exit::Unexpected,
            })?;
        // Each run's own report, for the distributions the page overlays.
        let arms: Vec<crate::html::compare::ArmRun> = comparison
            .runs
            .iter()
            .map(|(arm, r)| crate::html::compare::ArmRun {
                arm: arm.clone(),
                name: r.name.clone(),
                report: &r.report,
            })
            .collect();
        let page =
            crate::html::compare::render(&json, &arms).map_err(|message| CompareError::Other {
                message,
                exit: Exit::Unexpected,
            })?;
        match &args.report {
            Some(path) => {
                if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
                    std::fs::create_dir_all(parent)
                        .map_err(|e| CompareError::input(format!("{}: {e}", parent.display())))?;
                }
                std::fs::write(path, page)
                    .map_err(|e| CompareError::input(format!("{}: {e}", path.display())))?;
                writeln!(out, "HTML comparison saved to: {}", path.display())?;
            }
            None => out.write_all(page.as_bytes())?,
        }
        return Ok(if exit_code == 4 {
            Exit::GateFailed
        } else {
            Exit::Ok
        });
    }
    if args.format == Format::Json || args.report.is_some() {
        if let Some(path) = &args.report {
            let name = path.file_name().map(|n| n.to_string_lossy().into_owned());
            let on_file = report::comparison_report(
                &comparison,
                exit_code,
                &argv,
                name.as_deref(),
                &generated_at,
            );
            write_report(path, &on_file)?;
        }
        if args.format == Format::Json {
            let shown =
                report::comparison_report(&comparison, exit_code, &argv, None, &generated_at);
            writeln!(out, "{}", shown.dumps_pretty())?;
        }
    }
    if args.format == Format::Txt {
        writeln!(out, "{}", text::comparison_lines(&comparison).join("\n"))?;
    }
    Ok(if exit_code == 4 {
        Exit::GateFailed
    } else {
        Exit::Ok
    })
}

fn summarize_and_compare(
    args: &CompareConfig,
    spec: Spec,
    err: &mut dyn Write,
) -> Result<engine::Comparison, CompareError> {
    let policy = flag_policy(args)?;
    if let Some(db) = &args.db {
        let conn = crate::db::read::open_for_reading(db).map_err(|e| CompareError::Other {
            message: e.to_string(),
            exit: e.exit(),
        })?;
        let summarize = |runs: &[String]| -> Result<Vec<RunSummary>, CompareError> {
            runs.iter()
                .map(|r| stored_summary(&conn, r, args, policy.clone()))
                .collect()
        };
        let (baseline, candidate) = match &args.experiment {
            Some(experiment) => experiment_arms(&conn, experiment, args, err)?,
            None => {
                let ids = |runs: &[PathBuf]| -> Vec<String> {
                    runs.iter()
                        .map(|r| r.to_string_lossy().into_owned())
                        .collect()
                };
                (ids(&args.baseline), ids(&args.candidate))
            }
        };
        let provenance = |runs: &[String]| -> Vec<Option<crate::import::Provenance>> {
            runs.iter()
                .map(|r| {
                    let id = crate::db::runs::resolve(&conn, r).ok()?;
                    crate::db::imports::provenance(&conn, &id).ok().flatten()
                })
                .collect()
        };
        let definitions_differ =
            definitions::findings(&provenance(&baseline), &provenance(&candidate));
        let baseline = summarize(&baseline)?;
        let candidate = summarize(&candidate)?;
        let mut compared = engine::compare_runs(baseline, candidate, spec)?;
        compared.warnings.extend(definitions_differ);
        return Ok(compared);
    }
    if args.experiment.is_some() {
        return Err(CompareError::usage(
            "--experiment chooses stored runs: give the project database with --db",
        ));
    }
    let summarize = |paths: &[PathBuf]| -> Result<Vec<RunSummary>, CompareError> {
        paths.iter().map(|p| summary(p, args)).collect()
    };
    let baseline = summarize(&args.baseline)?;
    let candidate = summarize(&args.candidate)?;
    engine::compare_runs(baseline, candidate, spec)
}

/// An SLO error as compare reports it: a bad flag is a usage error.
fn slo_error(e: crate::slo::SloError) -> CompareError {
    match e.exit() {
        Exit::Usage => CompareError::Usage(e.to_string()),
        _ => CompareError::Input(e.to_string()),
    }
}

/// The policy flags are judged once, before any artifact is read, as the
/// reference does; stored runs are judged by the policy they give.
fn flag_policy(args: &CompareConfig) -> Result<Option<FlagPolicy>, CompareError> {
    crate::slo::policy_from_cli(&args.slo, args.slo_file.as_deref()).map_err(slo_error)
}

/// A policy from `--slo` / `--slo-file`, with where it came from.
type FlagPolicy = (crate::slo::Policy, crate::slo::PolicySource);

fn summary(shown: &Path, args: &CompareConfig) -> Result<RunSummary, CompareError> {
    let resolved = args
        .base_dir
        .as_ref()
        .map_or_else(|| shown.to_path_buf(), |dir| dir.join(shown));
    let path = resolved.as_path();
    if !path.exists() {
        return Err(CompareError::input(format!(
            "artifact {} not found",
            shown.display()
        )));
    }
    let (segments, membership) = segments(args)?;
    let config = crate::ops::analyze::AnalyzeConfig {
        artifact: path.to_path_buf(),
        vllm_spans: args.vllm_spans.clone(),
        slo: args.slo.clone(),
        slo_file: args.slo_file.clone(),
        segments,
        membership,
        digest: true,
        ..Default::default()
    };
    let analyzed = crate::ops::analyze::analyze(&config).map_err(|e| match e.exit {
        Exit::InvalidInput => CompareError::Input(e.message),
        Exit::Usage => CompareError::Usage(e.message),
        exit => CompareError::Other {
            message: e.message,
            exit,
        },
    })?;
    Ok(summary_of(
        shown.display().to_string(),
        analyzed.sha256,
        analyzed.data,
        analyzed.report.json,
    ))
}

/// A run's summary from what its analysis decoded: the records moved out
/// of the run (its requests and samples are not read by a summary).
fn summary_of(
    name: String,
    sha256: Option<String>,
    data: crate::model::RunData,
    report: serde_json::Value,
) -> RunSummary {
    let records: Vec<serde_json::Value> = data.records.into_iter().map(|(_, r)| r).collect();
    RunSummary::from_records(name, sha256.unwrap_or_default(), &records, report)
}

/// The run ids of the two arms `--experiment` names (arms::choose), said on
/// stderr with any attempt a retry superseded, as no run id was given.
fn experiment_arms(
    conn: &crate::db::Connection,
    experiment: &str,
    args: &CompareConfig,
    err: &mut dyn Write,
) -> Result<(Vec<String>, Vec<String>), CompareError> {
    let one = |flag: &str, given: &[PathBuf], default: &str| -> Result<String, CompareError> {
        match given {
            [] => Ok(default.to_owned()),
            [arm] => Ok(arm.to_string_lossy().into_owned()),
            _ => Err(CompareError::usage(format!(
                "with --experiment, {flag} names one arm (the arm label its runs recorded)"
            ))),
        }
    };
    let choice = arms::ArmChoice {
        experiment: experiment.to_owned(),
        baseline: one("--baseline", &args.baseline, "baseline")?,
        candidate: one("--candidate", &args.candidate, "candidate")?,
        blocks: args.block.clone(),
    };
    let runs = crate::db::runs::labeled(conn).map_err(|e| CompareError::input(e.to_string()))?;
    let chosen = arms::choose(&runs, &choice)?;
    writeln!(
        err,
        "experiment {experiment}: {} = {}; {} = {}",
        choice.baseline,
        chosen.baseline.join(", "),
        choice.candidate,
        chosen.candidate.join(", ")
    )?;
    for (left, by) in &chosen.superseded {
        writeln!(
            err,
            "  {left} left out: a later attempt, {by}, supersedes it"
        )?;
    }
    Ok((chosen.baseline, chosen.candidate))
}

/// A stored run's summary: its report rebuilt from the database (with the
/// policy flags, as `infer analyze` would judge it) and the records the
/// report was built from, with the digest its ingest recorded.
fn stored_summary(
    conn: &crate::db::Connection,
    name: &str,
    args: &CompareConfig,
    policy: Option<FlagPolicy>,
) -> Result<RunSummary, CompareError> {
    let db_error = |e: crate::db::DbError| CompareError::input(e.to_string());
    let run = crate::db::runs::resolve(conn, name).map_err(db_error)?;
    let (segments, membership) = segments(args)?;
    let data = crate::db::store::load_run(conn, &run).map_err(db_error)?;
    let spans = crate::db::store::attached_spans(conn, &run).map_err(db_error)?;
    let inputs = crate::report::Inputs {
        policy,
        external_spans: spans,
        segments,
        membership,
        ..Default::default()
    };
    let report = crate::report::build(&data, inputs).map_err(|e| CompareError::Other {
        message: e.message,
        exit: e.exit,
    })?;
    let sha256 = crate::db::compare_read::artifact_sha256(conn, &run).map_err(db_error)?;
    Ok(summary_of(run, sha256, data, report.json))
}

/// The `--segment` slices and their membership, checked as the reference
/// checks them: each run's analysis parses them again (after finding its
/// artifact), and refuses a name given twice (an unanticipated error there:
/// exit 1).
fn segments(
    args: &CompareConfig,
) -> Result<
    (
        Vec<crate::analysis::segment::Segment>,
        crate::analysis::segment::Membership,
    ),
    CompareError,
> {
    use crate::analysis::segment::{check_unique, Membership, Segment, SegmentError};
    let refused = |e: SegmentError| match e {
        SegmentError::Usage(m) => CompareError::Usage(m),
        SegmentError::Unexpected(message) => CompareError::Other {
            message,
            exit: Exit::Unexpected,
        },
    };
    let segments = args
        .segment
        .iter()
        .map(|t| Segment::parse(t))
        .collect::<Result<Vec<_>, _>>()
        .map_err(refused)?;
    check_unique(&segments).map_err(refused)?;
    let membership = Membership::parse(&args.segment_membership).unwrap_or_default();
    Ok((segments, membership))
}

/// The comparison spec the flags describe, checked as the reference checks it.
pub fn comparison_spec(args: &CompareConfig) -> Result<Spec, CompareError> {
    let mut gates = Vec::new();
    for text in &args.gate {
        gates.push(gate_flag(text, args.min_complete_blocks)?);
    }
    let mut fallbacks = Vec::new();
    for text in &args.fallback {
        let (metric, rest) = text.split_once('=').unwrap_or((text, ""));
        let (budget, unit) = rest.split_once(':').unwrap_or((rest, ""));
        if metric.is_empty() || budget.is_empty() || unit.is_empty() {
            return Err(CompareError::usage(format!(
                "--fallback '{text}': use METRIC=BUDGET:UNIT"
            )));
        }
        fallbacks.push((
            metric.to_owned(),
            number(budget, &format!("--fallback '{text}'"))?,
            unit.to_owned(),
        ));
    }
    let gated: Vec<String> = gates
        .iter()
        .flat_map(|(p, _)| metrics::metric_names(p))
        .collect();
    for (pattern, _, _) in &fallbacks {
        if !metrics::metric_names(pattern)
            .iter()
            .any(|n| gated.contains(n))
        {
            return Err(CompareError::usage(format!(
                "--fallback {pattern}: matches no gated metric, so it would never apply"
            )));
        }
    }
    Spec {
        confidence: args.confidence,
        design: choice("design", &args.design, Design::from_name)?,
        mode: choice("mode", &args.mode, Mode::from_name)?,
        allow: args.allow.clone(),
        allow_within_arm: args.allow_within_arm.clone(),
        on_incomplete: choice(
            "on_incomplete",
            &args.on_incomplete,
            OnIncomplete::from_name,
        )?,
        gates,
        allow_not_evaluable: args.allow_not_evaluable,
        min_attainment: args.min_attainment,
        min_run_pass: args.min_run_pass,
        attainment_model: choice(
            "attainment_model",
            &args.attainment_model,
            AttainmentModel::from_name,
        )?,
        family: choice("family", &args.family, Family::from_name)?,
        added_observers: args
            .added_observers
            .split(',')
            .filter(|n| !n.is_empty())
            .map(str::to_owned)
            .collect(),
        evidence_floor: args.evidence_floor,
        cases: (!args.case.is_empty()).then(|| args.case.clone()),
        bootstrap_min_n: 10,
        seed: args.seed,
        fallbacks,
        min_complete_blocks: args.min_complete_blocks,
    }
    .validated()
}

/// Writes a report file as the reference does: indented JSON and a newline,
/// through a temporary file renamed into place.
fn write_report(path: &Path, report: &ojson::J) -> Result<(), CompareError> {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = path.with_file_name(format!("{name}.tmp"));
    let failed = |e: std::io::Error| CompareError::Other {
        message: format!("{}: {e}", path.display()),
        exit: Exit::Unexpected,
    };
    std::fs::write(&tmp, format!("{}\n", report.dumps_pretty())).map_err(failed)?;
    std::fs::rename(&tmp, path).map_err(failed)
}

/// Now, as `%Y-%m-%dT%H:%M:%SZ`.
fn now_utc() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    crate::util::iso8601_utc(secs)
}
