//! The flags of `stormlog compare` and the drop-in `infer compare` (clap),
//! turned into the plain [`CompareConfig`] that [`crate::ops::compare`] runs.
use std::io::Write;
use std::path::PathBuf;

use crate::compare::CompareError;
use crate::db::DbError;
use crate::exit::Exit;
use crate::ops::compare::{self as op, CompareConfig};

#[cfg(test)]
mod conformance_tests;

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

impl From<Format> for op::Format {
    fn from(f: Format) -> Self {
        match f {
            Format::Txt => op::Format::Txt,
            Format::Json => op::Format::Json,
            Format::Html => op::Format::Html,
        }
    }
}

impl CompareArgs {
    /// The plain config these flags describe.
    pub fn config(&self) -> CompareConfig {
        CompareConfig {
            baseline: self.baseline.clone(),
            candidate: self.candidate.clone(),
            experiment: self.experiment.clone(),
            block: self.block.clone(),
            db: self.db.clone(),
            case: self.case.clone(),
            slo: self.slo.clone(),
            slo_file: self.slo_file.clone(),
            mode: self.mode.clone(),
            design: self.design.clone(),
            allow: self.allow.clone(),
            allow_within_arm: self.allow_within_arm.clone(),
            added_observers: self.added_observers.clone(),
            gate: self.gate.clone(),
            fallback: self.fallback.clone(),
            min_complete_blocks: self.min_complete_blocks,
            min_attainment: self.min_attainment,
            min_run_pass: self.min_run_pass,
            attainment_model: self.attainment_model.clone(),
            family: self.family.clone(),
            on_incomplete: self.on_incomplete.clone(),
            allow_not_evaluable: self.allow_not_evaluable,
            evidence_floor: self.evidence_floor,
            confidence: self.confidence,
            seed: self.seed,
            vllm_spans: self.vllm_spans.clone(),
            segment: self.segment.clone(),
            segment_membership: self.segment_membership.clone(),
            format: self.format.into(),
            report: self.report.clone(),
            argv: self.argv.clone(),
            generated_at: self.generated_at.clone(),
            base_dir: self.base_dir.clone(),
        }
    }
}

/// Runs `infer compare` with these flags ([`crate::ops::compare::run`]).
pub fn run(
    args: &CompareArgs,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<Exit, CompareError> {
    op::run(&args.config(), out, err)
}

/// The project database a command uses when no --db is given: $STORMLOG_DB
/// (when set and not empty), else ./stormlog.db, as `DbArg` has it.
fn default_db_path() -> PathBuf {
    std::env::var_os("STORMLOG_DB")
        .filter(|v| !v.is_empty())
        .map_or_else(|| PathBuf::from("stormlog.db"), PathBuf::from)
}

/// `compare` and the drop-in `infer compare` (`drop_in`: the reference's
/// messages, unchanged).
pub fn dispatch(
    mut a: CompareArgs,
    drop_in: bool,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> crate::ops::Result<Exit> {
    // The report records the command line as the reference spells it.
    if a.argv.is_empty() {
        let args: Vec<String> = std::env::args().skip(1).collect();
        let from = args
            .iter()
            .position(|x| x == "compare")
            .map_or(0, |i| i + 1);
        a.argv = ["infer".to_owned(), "compare".to_owned()]
            .into_iter()
            .chain(args[from..].iter().cloned())
            .collect();
    }
    let first_missing = a
        .baseline
        .iter()
        .chain(&a.candidate)
        .find(|p| !p.exists())
        .cloned();
    // `compare` finds its database as every other command does (--db before
    // or after the command, $STORMLOG_DB, ./stormlog.db) when no arm names a
    // file: the arms are then run ids. Arms that are files are read as
    // artifacts, with or without a database about. The drop-in `infer
    // compare` reads files unless --db is given, as the reference does.
    let mut implicit_db = None;
    if !drop_in && a.db.is_none() {
        let any_file = a.baseline.iter().chain(&a.candidate).any(|p| p.exists());
        if a.experiment.is_some() || !any_file {
            let path = default_db_path();
            if !path.exists() {
                let what = match (&a.experiment, &first_missing) {
                    (Some(_), _) | (None, None) => "--experiment chooses stored runs".to_owned(),
                    (None, Some(arm)) => format!(
                        "{} is not a file, and as a run id it needs a project database",
                        crate::util::printable(&arm.display().to_string())
                    ),
                };
                let missing = DbError::Missing { path };
                return Err(crate::ops::Error::new(
                    Exit::InvalidInput,
                    format!("{what}: {missing}"),
                ));
            }
            implicit_db = Some(path.clone());
            a.db = Some(path);
        }
    }
    let no_db = a.db.is_none();
    run(&a, out, err).map_err(|e| {
        let mut message = e.to_string();
        let broken_pipe = message.contains("Broken pipe");
        if let (false, true, Some(missing)) = (drop_in, no_db, &first_missing) {
            message.push_str(&format!(
                "; if {} is a stored run id, pass --db PATH (before or after `compare`)",
                missing.display()
            ));
        }
        if let (Some(path), None) = (&implicit_db, &a.experiment) {
            if e.exit() == Exit::InvalidInput {
                message.push_str(&format!(
                    "; no arm names a file, so the arms were read as run ids in {}",
                    path.display()
                ));
            }
        }
        crate::ops::Error {
            message,
            exit: e.exit(),
            broken_pipe,
        }
    })
}
