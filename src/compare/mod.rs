//! `stormlog infer compare`: a baseline arm of profile artifacts against a
//! candidate arm, case by case, with the reference's statistics, gates,
//! JSON and text reports and exit statuses (0, or 4 when a gate fails or
//! cannot be evaluated; 5 when the runs cannot be compared, 2 for usage).
//!
//! Each artifact is analyzed with [`crate::cli::commands::analyze`]; this
//! module owns everything on top: run summaries and comparability
//! (`compat`), the metrics read from each case (`metrics`), one metric's
//! statistics and gate (`stats`, `dist`, `rng`), the comparison of the arms
//! (`engine`) and its reports (`report`, `text`, `ojson`). docs/compare.md
//! describes the behaviour in prose.

pub mod arms;
pub mod compat;
pub mod definitions;
pub mod dist;
pub mod engine;
pub mod metrics;
pub mod ojson;
pub mod report;
pub mod rng;
pub mod stats;
pub mod text;

#[cfg(test)]
mod conformance_tests;

use std::io::Write;
use std::path::{Path, PathBuf};

use crate::exit::Exit;
use engine::{RunSummary, Spec};
use stats::GateRule;

/// Why a comparison could not run. `Display` is the message without `Error: `.
#[derive(Debug, thiserror::Error)]
pub enum CompareError {
    /// The command line was wrong (exit 2).
    #[error("{0}")]
    Usage(String),
    /// The runs cannot be compared (exit 5).
    #[error("{0}")]
    Input(String),
    /// Any other failure, with its own exit status.
    #[error("{message}")]
    Other { message: String, exit: Exit },
}

impl CompareError {
    pub fn usage(message: impl Into<String>) -> Self {
        CompareError::Usage(message.into())
    }

    pub fn input(message: impl Into<String>) -> Self {
        CompareError::Input(message.into())
    }

    /// The exit status this error ends the command with.
    pub fn exit(&self) -> Exit {
        match self {
            CompareError::Usage(_) => Exit::Usage,
            CompareError::Input(_) => Exit::InvalidInput,
            CompareError::Other { exit, .. } => *exit,
        }
    }
}

impl From<std::io::Error> for CompareError {
    fn from(e: std::io::Error) -> Self {
        CompareError::Other {
            message: e.to_string(),
            exit: Exit::Unexpected,
        }
    }
}

/// The report format on stdout.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, Default)]
pub enum Format {
    #[default]
    Txt,
    Json,
    // One self-contained HTML page (to -o FILE, else stdout). Not a doc
    // comment: one would switch clap to the long help layout.
    Html,
}

/// The flags of `stormlog infer compare`, as the reference names them.
#[derive(clap::Args, Debug, Clone)]
pub struct CompareArgs {
    /// The baseline arm's artifacts (with --db: stored run ids; with
    /// --experiment: the one arm name its runs recorded, default `baseline`)
    #[arg(long, num_args = 1.., required_unless_present = "experiment", value_name = "ARTIFACT")]
    pub baseline: Vec<PathBuf>,
    /// The candidate arm's artifacts (with --db: stored run ids; with
    /// --experiment: the one arm name its runs recorded, default `candidate`)
    #[arg(long, num_args = 1.., required_unless_present = "experiment", value_name = "ARTIFACT")]
    pub candidate: Vec<PathBuf>,
    /// With --db: compare the stored runs that recorded this experiment label,
    /// the arms chosen by the arm labels --baseline and --candidate name
    #[arg(long, value_name = "NAME")]
    pub experiment: Option<String>,
    /// With --experiment: only the runs of this block (repeatable)
    #[arg(long = "block", value_name = "BLOCK", requires = "experiment")]
    pub block: Vec<String>,
    /// Compare runs stored in this project database: --baseline and
    /// --candidate then name run ids (a unique prefix will do), and no file
    /// is read.
    #[arg(long, value_name = "PATH")]
    pub db: Option<PathBuf>,
    /// Only this case (repeatable)
    #[arg(long = "case", value_name = "CASE")]
    pub case: Vec<String>,
    /// An SLO criterion to judge both arms by, instead of each run's own (repeatable)
    #[arg(long, value_name = "CRITERION")]
    pub slo: Vec<String>,
    /// An SLO policy file to judge both arms by
    #[arg(long = "slo-file", value_name = "FILE")]
    pub slo_file: Option<PathBuf>,
    /// config: only allowed fields differ; overhead: the candidate adds observers to an
    /// observer-free baseline; incremental: it adds declared observers to shared ones
    #[arg(long, default_value = "config", value_parser = ["config", "overhead", "incremental"])]
    pub mode: String,
    /// auto pairs runs by block when every run has one
    #[arg(long, default_value = "auto", value_parser = ["auto", "paired_blocks", "independent"])]
    pub design: String,
    /// A field or vllm_config JSON pointer that may differ between arms (repeatable)
    #[arg(long, value_name = "FIELD")]
    pub allow: Vec<String>,
    /// A field or vllm_config JSON pointer that may differ between the runs of one arm
    #[arg(long = "allow-within-arm", value_name = "FIELD")]
    pub allow_within_arm: Vec<String>,
    /// Observers the candidate adds, in incremental mode
    #[arg(long = "added-observers", default_value = "", value_name = "NAME,...")]
    pub added_observers: String,
    /// Gate a metric (or pattern), e.g. client.e2e.p95=non-inferiority:0.05
    #[arg(long, value_name = "METRIC=RULE:BUDGET")]
    pub gate: Vec<String>,
    /// A pre-registered budget on the difference, for a log ratio left undefined by a zero
    #[arg(long, value_name = "METRIC=BUDGET:UNIT")]
    pub fallback: Vec<String>,
    /// A gate is not evaluable with fewer complete blocks (baseline and candidate pairs) than this
    #[arg(long = "min-complete-blocks", value_name = "N")]
    pub min_complete_blocks: Option<i64>,
    /// Add a per-case gate: candidate runs whose SLO attainment lower bound reaches this share (0-1)
    #[arg(long = "min-attainment", value_name = "SHARE")]
    pub min_attainment: Option<f64>,
    /// The share of candidate runs that must pass --min-attainment (lower confidence bound)
    #[arg(long = "min-run-pass", default_value_t = 0.5, value_name = "SHARE")]
    pub min_run_pass: f64,
    /// bernoulli pools requests as independent trials: model-based
    #[arg(long = "attainment-model", default_value = "runs", value_parser = ["runs", "bernoulli"])]
    pub attainment_model: String,
    /// all_budgets: each gate on its own; any_regression: Holm's step-down over the family (significant gates)
    #[arg(long, default_value = "all_budgets", value_parser = ["all_budgets", "any_regression"])]
    pub family: String,
    /// A block that lost a run: exclude it, or fail its gates (protocol_failure)
    #[arg(long = "on-incomplete", default_value = "exclude", value_parser = ["exclude", "fail"])]
    pub on_incomplete: String,
    /// Exit 0 when a gate cannot be evaluated: for exploration, recorded
    #[arg(long = "allow-not-evaluable")]
    pub allow_not_evaluable: bool,
    /// The least SLO evidence coverage (0-1) every run needs for its SLO metrics to be compared
    #[arg(long = "evidence-floor", default_value_t = 1.0, value_name = "SHARE")]
    pub evidence_floor: f64,
    /// Confidence level of the intervals and gates
    #[arg(long, default_value_t = 0.95, value_name = "LEVEL")]
    pub confidence: f64,
    /// Seed of the bootstrap resampling (the same seed gives the same intervals)
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// vLLM spans collected elsewhere, for every run
    #[arg(long = "vllm-spans", value_name = "FILE")]
    pub vllm_spans: Vec<PathBuf>,
    /// Also compare this slice of each case's measured phase, START to END seconds
    /// from its start, as the case `<case>/NAME` (repeatable)
    #[arg(long, value_name = "NAME=START:END")]
    pub segment: Vec<String>,
    /// A segment's requests: those that arrived in it, or that overlap it
    /// (overlap: no rates, never gated)
    #[arg(long = "segment-membership", default_value = "arrival", value_parser = ["arrival", "overlap"])]
    pub segment_membership: String,
    /// Report format on stdout: txt for people, json, html (one page; to -o FILE when given)
    #[arg(long, value_enum, default_value_t = Format::Txt)]
    pub format: Format,
    /// Also write the JSON report to this file (--report, the reference's name, works too); with --format html, the page
    #[arg(
        long = "output",
        short = 'o',
        visible_alias = "report",
        value_name = "FILE"
    )]
    pub report: Option<PathBuf>,
    /// The command line as the report's `tool.argv` records it; empty means
    /// the process's own arguments.
    #[arg(skip)]
    pub argv: Vec<String>,
    /// The report's `generated_at_utc`; None means now (tests pin it).
    #[arg(skip)]
    pub generated_at: Option<String>,
    /// The folder relative artifact paths are read from (None: the working
    /// directory); reports still name each path as given.
    #[arg(skip)]
    pub base_dir: Option<PathBuf>,
}

/// Runs `infer compare`: writes the report to `out` and returns the exit
/// status (0 or 4). An error's report (exit 5) is written before it returns.
pub fn run(
    args: &CompareArgs,
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
    args: &CompareArgs,
    spec: Spec,
    err: &mut dyn Write,
) -> Result<engine::Comparison, CompareError> {
    check_slo_flags(args)?;
    if let Some(db) = &args.db {
        let conn = crate::db::read::open_for_reading(db).map_err(|e| CompareError::Other {
            message: e.to_string(),
            exit: e.exit(),
        })?;
        let summarize = |runs: &[String]| -> Result<Vec<RunSummary>, CompareError> {
            runs.iter()
                .map(|r| stored_summary(&conn, r, args))
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

/// The policy flags are judged once, before any artifact is read, as the reference does.
fn check_slo_flags(args: &CompareArgs) -> Result<(), CompareError> {
    let slo_error = |e: crate::slo::SloError| {
        if e.exit_code() == Exit::Usage.code() {
            CompareError::Usage(e.to_string())
        } else {
            CompareError::Input(e.to_string())
        }
    };
    if !args.slo.is_empty() && args.slo_file.is_some() {
        return Err(slo_error(crate::slo::SloError::slo_and_slo_file()));
    }
    if let Some(path) = &args.slo_file {
        crate::slo::load_file(path, &path.display().to_string()).map_err(slo_error)?;
    } else if !args.slo.is_empty() {
        crate::slo::policy_from_flags(&args.slo).map_err(slo_error)?;
    }
    Ok(())
}

fn summary(shown: &Path, args: &CompareArgs) -> Result<RunSummary, CompareError> {
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
    let request = crate::cli::commands::AnalyzeRequest {
        artifact: path.to_path_buf(),
        vllm_spans: args.vllm_spans.clone(),
        slo: args.slo.clone(),
        slo_file: args.slo_file.clone(),
        segments,
        membership,
        ..Default::default()
    };
    let report = crate::cli::commands::analyze(&request).map_err(|e| match e.exit {
        Exit::InvalidInput => CompareError::Input(e.message),
        Exit::Usage => CompareError::Usage(e.message),
        exit => CompareError::Other {
            message: e.message,
            exit,
        },
    })?;
    let raw =
        std::fs::read(path).map_err(|e| CompareError::input(format!("{}: {e}", path.display())))?;
    RunSummary::from_artifact(shown, &raw, report.json)
}

/// The run ids of the two arms `--experiment` names (arms::choose), said on
/// stderr with any attempt a retry superseded, as no run id was given.
fn experiment_arms(
    conn: &rusqlite::Connection,
    experiment: &str,
    args: &CompareArgs,
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
/// policy flags, as `infer analyze` would judge it) and its records exported
/// back, so no artifact file is needed.
fn stored_summary(
    conn: &rusqlite::Connection,
    name: &str,
    args: &CompareArgs,
) -> Result<RunSummary, CompareError> {
    let db_error = |e: crate::db::DbError| CompareError::input(e.to_string());
    let run = crate::db::runs::resolve(conn, name).map_err(db_error)?;
    let (segments, membership) = segments(args)?;
    let policy = if let Some(path) = &args.slo_file {
        Some((
            crate::slo::load_file(path, &path.display().to_string())
                .map_err(|e| CompareError::input(e.to_string()))?,
            crate::slo::PolicySource::File,
        ))
    } else if !args.slo.is_empty() {
        Some(
            crate::slo::policy_from_flags(&args.slo)
                .map_err(|e| CompareError::usage(e.to_string()))?,
        )
    } else {
        None
    };
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
    let raw = crate::db::runs::export_artifact(conn, &run).map_err(db_error)?;
    RunSummary::from_artifact(Path::new(&run), raw.as_bytes(), report.json)
}

fn number(text: &str, flag: &str) -> Result<f64, CompareError> {
    let value: f64 = text
        .trim()
        .parse()
        .map_err(|_| CompareError::usage(format!("{flag}: '{text}' is not a number")))?;
    if !value.is_finite() {
        return Err(CompareError::usage(format!(
            "{flag}: '{text}' is not a finite number"
        )));
    }
    Ok(value)
}

/// The `--segment` slices and their membership, checked as the reference
/// checks them: each run's analysis parses them again (after finding its
/// artifact), and refuses a name given twice (an unanticipated error there:
/// exit 1).
fn segments(
    args: &CompareArgs,
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

/// One `--gate METRIC=RULE:BUDGET` flag, checked as the reference checks it.
pub fn gate_flag(
    text: &str,
    min_complete_blocks: Option<i64>,
) -> Result<(String, GateRule), CompareError> {
    let (metric, rest) = text.split_once('=').unwrap_or((text, ""));
    let (rule, budget) = rest.split_once(':').unwrap_or((rest, ""));
    let unit = metrics::metric_unit(metric);
    let flag = format!("--gate '{text}'");
    if metric.is_empty() || rule.is_empty() || budget.is_empty() {
        return Err(CompareError::usage(format!(
            "{flag}: use METRIC=RULE:BUDGET"
        )));
    }
    let Some(unit) = unit else {
        return Err(CompareError::usage(format!(
            "{flag}: '{metric}' names no metric, or metrics in different units"
        )));
    };
    let amount = number(budget, &flag)?;
    if let Some(vacuous) = metrics::vacuous_budget(metric, amount) {
        return Err(CompareError::usage(format!("{flag}: {vacuous}")));
    }
    Ok((
        metric.to_owned(),
        GateRule::new(rule, amount, unit, min_complete_blocks)?,
    ))
}

/// The comparison spec the flags describe, checked as the reference checks it.
pub fn comparison_spec(args: &CompareArgs) -> Result<Spec, CompareError> {
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
        design: args.design.clone(),
        mode: args.mode.clone(),
        allow: args.allow.clone(),
        allow_within_arm: args.allow_within_arm.clone(),
        on_incomplete: args.on_incomplete.clone(),
        gates,
        allow_not_evaluable: args.allow_not_evaluable,
        min_attainment: args.min_attainment,
        min_run_pass: args.min_run_pass,
        attainment_model: args.attainment_model.clone(),
        family: args.family.clone(),
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
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    // Howard Hinnant's civil_from_days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rem / 3_600,
        rem % 3_600 / 60,
        rem % 60
    )
}
