//! `stormlog slo …`: clap types for the SLO questions asked of stored runs,
//! turned into the plain configs of `ops::slo` (docs/slo.md).
use std::io::Write;
use std::path::PathBuf;

use clap::{Args, Subcommand, ValueEnum};

use super::DbArg;
use crate::exit::Exit;
use crate::ops::slo::{self as ops, render, runs, Selection, SloOpsError};
use crate::ops::{write_output, Error as CliError};
use crate::slo::policy_from_cli as cli_policy;

type Result<T> = std::result::Result<T, CliError>;

impl From<SloOpsError> for CliError {
    fn from(e: SloOpsError) -> Self {
        CliError::new(e.exit, e.message)
    }
}

const EXAMPLES: &str = "\
Examples:
  stormlog slo curve RUN --criterion ttft --range 10:500:50 --format csv
  stormlog slo curve RUN --criterion ttft --thresholds 50,100,200 --joint policy.toml
  stormlog slo frontier --all --target 0.99 --criterion ttft --criterion e2e
  stormlog slo binding RUN --slo ttft:200 --slo e2e:2000
  stormlog slo capacity RUN1 RUN2 --slo policy.toml --load rate
  stormlog slo diff RUN --slo ttft:150 --against ttft:200 --format csv -o flips.csv

Definitions and a worked example: docs/slo.md.";

/// SLO questions of stored runs, answered from their requests.
#[derive(Debug, Args)]
#[command(after_help = EXAMPLES)]
pub struct SloArgs {
    #[command(subcommand)]
    pub command: SloCommand,
}

#[derive(Debug, Subcommand)]
pub enum SloCommand {
    /// Attainment as a function of a criterion's threshold, per case.
    ///
    /// A point at T is exactly the case's per-criterion figure under
    /// `report RUN --slo KEY:T`: every offered request counts, failures and
    /// drops as misses, unknowns as the gap between the two bounds.
    #[command(after_help = EXAMPLES)]
    Curve(CurveArgs),
    /// The smallest threshold whose attainment (lower bound) reaches a target.
    ///
    /// With an order-statistic confidence interval for it, or `unreachable`
    /// with the reason when failures or unknowns alone keep attainment below.
    #[command(after_help = EXAMPLES)]
    Frontier(FrontierArgs),
    /// Which criterion binds: each one's attainment beside the joint one.
    ///
    /// Also the joint attainment without each criterion, and how far each
    /// limit can tighten or loosen before the case's verdict changes.
    #[command(after_help = EXAMPLES)]
    Binding(BindingArgs),
    /// The highest offered load that meets every attainment target.
    ///
    /// Over sweeps of cases that share a workload and differ in arrival rate
    /// or concurrency; says none_pass, all_pass or not_monotone instead of
    /// guessing.
    #[command(after_help = EXAMPLES)]
    Capacity(CapacityArgs),
    /// Requests whose verdict differs between two policies.
    ///
    /// Counted per case and criterion (request ids with --format json or
    /// csv), with the attainment and verdict under each policy.
    #[command(after_help = EXAMPLES)]
    Diff(DiffArgs),
}

#[derive(Debug, Clone, Copy, ValueEnum, PartialEq, Eq)]
pub enum OutFormat {
    Txt,
    Json,
    Csv,
    // One self-contained HTML page with charts.
    // A plain comment: doc comments on values switch clap's help layout.
    Html,
}

/// What every `slo` command reads and writes.
#[derive(Debug, Args)]
pub struct Common {
    #[command(flatten)]
    pub db: DbArg,
    /// Run ids (see `stormlog runs`; a unique prefix will do).
    #[arg(value_name = "RUN", required_unless_present = "all")]
    pub runs: Vec<String>,
    /// Every stored run.
    #[arg(long, conflicts_with = "runs")]
    pub all: bool,
    /// Only cases whose id matches PATTERN (`*` any characters, `?` one).
    #[arg(long, value_name = "PATTERN")]
    pub case: Option<String>,
    /// Output format (html: one self-contained page with charts).
    #[arg(long, value_enum, default_value = "txt")]
    pub format: OutFormat,
    /// Write the result to FILE (parent directories are created).
    #[arg(long, short, value_name = "FILE")]
    pub output: Option<PathBuf>,
}

/// A policy as `report` takes it.
#[derive(Debug, Args, Clone, Default)]
pub struct PolicyArgs {
    /// An SLO criterion KEY:MS (repeatable), or a policy file; default: each
    /// run's recorded policy.
    #[arg(long, value_name = "KEY:MS")]
    pub slo: Vec<String>,
    /// An SLO policy file (JSON or TOML).
    #[arg(long = "slo-file", value_name = "FILE")]
    pub slo_file: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct CurveArgs {
    #[command(flatten)]
    pub common: Common,
    /// The criterion whose threshold moves (repeatable: one curve each), as
    /// `--slo` names it: ttft, e2e, tpot, server.queue…
    #[arg(long, value_name = "KEY", required = true)]
    pub criterion: Vec<String>,
    /// Thresholds in ms, comma-separated.
    #[arg(long, value_name = "MS,MS,…", conflicts_with = "range")]
    pub thresholds: Option<String>,
    /// N thresholds from LO to HI ms (N defaults to 25). Without --thresholds
    /// or --range: 25 from the smallest to the largest observed value.
    #[arg(long, value_name = "LO:HI[:N]")]
    pub range: Option<String>,
    /// Space --range's thresholds geometrically.
    #[arg(long, requires = "range")]
    pub log: bool,
    /// Also give the joint attainment when the criterion moves and the
    /// policy's other criteria stay: KEY:MS (repeatable), a policy file, or
    /// `recorded` for each run's recorded policy.
    #[arg(long, value_name = "POLICY")]
    pub joint: Vec<String>,
}

#[derive(Debug, Args)]
pub struct FrontierArgs {
    #[command(flatten)]
    pub common: Common,
    /// The attainment to reach, as a share in (0, 1], e.g. 0.99.
    #[arg(long, value_name = "P")]
    pub target: f64,
    /// Criteria (repeatable); default: every per-request criterion some
    /// successful request of the run has a value for.
    #[arg(long, value_name = "KEY")]
    pub criterion: Vec<String>,
    /// Coverage of the threshold's interval, in (0, 1).
    #[arg(long, value_name = "C", default_value_t = 0.95)]
    pub confidence: f64,
}

#[derive(Debug, Args)]
pub struct BindingArgs {
    #[command(flatten)]
    pub common: Common,
    #[command(flatten)]
    pub policy: PolicyArgs,
}

#[derive(Debug, Clone, Copy, ValueEnum, PartialEq, Eq)]
pub enum LoadArg {
    Rate,
    Concurrency,
    Auto,
}

#[derive(Debug, Args)]
pub struct CapacityArgs {
    #[command(flatten)]
    pub common: Common,
    #[command(flatten)]
    pub policy: PolicyArgs,
    /// Which workload field is the load: the arrival rate, the concurrency,
    /// or the rate where a case has one and the concurrency otherwise.
    #[arg(long, value_enum, default_value = "auto")]
    pub load: LoadArg,
}

#[derive(Debug, Args)]
pub struct DiffArgs {
    #[command(flatten)]
    pub common: Common,
    #[command(flatten)]
    pub policy: PolicyArgs,
    /// The policy to compare against: KEY:MS (repeatable) or a policy file;
    /// default: each run's recorded policy (--slo then defaults to nothing:
    /// give at least one of the two).
    #[arg(long, value_name = "KEY:MS")]
    pub against: Vec<String>,
}

pub fn run(a: SloArgs, out: &mut dyn Write, _err: &mut dyn Write) -> Result<Exit> {
    let (text, output) = match a.command {
        SloCommand::Curve(c) => (curve(&c)?, c.common.output),
        SloCommand::Frontier(c) => (frontier(&c)?, c.common.output),
        SloCommand::Binding(c) => (binding(&c)?, c.common.output),
        SloCommand::Capacity(c) => (capacity(&c)?, c.common.output),
        SloCommand::Diff(c) => (diff(&c)?, c.common.output),
    };
    match output {
        Some(path) => {
            write_output(&path, text.as_bytes())?;
            writeln!(out, "Results saved to: {}", path.display())?;
        }
        None => out.write_all(text.as_bytes())?,
    }
    Ok(Exit::Ok)
}

fn selection(c: &Common) -> Selection {
    Selection {
        db: c.db.db.clone(),
        runs: c.runs.clone(),
        all: c.all,
        case: c.case.clone(),
    }
}

fn format(c: &Common) -> render::Format {
    match c.format {
        OutFormat::Txt => render::Format::Txt,
        OutFormat::Json => render::Format::Json,
        OutFormat::Csv => render::Format::Csv,
        // Every command renders its page before asking for this.
        OutFormat::Html => render::Format::Txt,
    }
}

fn html_page(page: std::result::Result<String, String>) -> Result<String> {
    page.map_err(|message| CliError::new(Exit::Unexpected, message))
}

fn given(p: &PolicyArgs) -> Result<runs::Given> {
    Ok(cli_policy(&p.slo, p.slo_file.as_deref())?)
}

fn keys(names: &[String]) -> Result<Vec<crate::slo::CriterionKey>> {
    Ok(names
        .iter()
        .map(|n| ops::parse_key(n))
        .collect::<ops::Result<Vec<_>>>()?)
}

fn curve(a: &CurveArgs) -> Result<String> {
    let thresholds = match (&a.thresholds, &a.range) {
        (Some(t), _) => Some(ops::curve::Thresholds::parse_list(t)?),
        (None, Some(r)) => Some(ops::curve::Thresholds::parse_range(r, a.log)?),
        _ => None,
    };
    let criteria = keys(&a.criterion)?;
    let joint: Option<runs::Given> = match a.joint.as_slice() {
        [] => None,
        [one] if one == "recorded" => Some(None),
        flags => Some(Some(crate::slo::policy_from_flags(flags)?)),
    };
    let curves = runs::curves(
        &selection(&a.common),
        &criteria,
        thresholds.as_ref(),
        joint.as_ref(),
    )?;
    if a.common.format == OutFormat::Html {
        return html_page(crate::html::slo::curves(&curves));
    }
    Ok(render::curves(&curves, format(&a.common)))
}

fn frontier(a: &FrontierArgs) -> Result<String> {
    let criteria = keys(&a.criterion)?;
    let rows = runs::frontiers(&selection(&a.common), a.target, &criteria, a.confidence)?;
    if a.common.format == OutFormat::Html {
        return html_page(crate::html::slo::frontiers(&rows));
    }
    Ok(render::frontiers(&rows, format(&a.common)))
}

fn binding(a: &BindingArgs) -> Result<String> {
    let rows = runs::bindings(&selection(&a.common), &given(&a.policy)?)?;
    if a.common.format == OutFormat::Html {
        return html_page(crate::html::slo::bindings(&rows));
    }
    Ok(render::bindings(&rows, format(&a.common)))
}

fn capacity(a: &CapacityArgs) -> Result<String> {
    let load = match a.load {
        LoadArg::Rate => ops::capacity::Load::Rate,
        LoadArg::Concurrency => ops::capacity::Load::Concurrency,
        LoadArg::Auto => ops::capacity::Load::Auto,
    };
    let sweeps = runs::capacities(&selection(&a.common), &given(&a.policy)?, load)?;
    if a.common.format == OutFormat::Html {
        return html_page(crate::html::slo::capacities(&sweeps));
    }
    Ok(render::capacities(&sweeps, format(&a.common)))
}

fn diff(a: &DiffArgs) -> Result<String> {
    let slo = given(&a.policy)?;
    let against = if a.against.is_empty() {
        None
    } else {
        Some(crate::slo::policy_from_flags(&a.against)?)
    };
    let rows = runs::diffs(&selection(&a.common), &slo, &against)?;
    if a.common.format == OutFormat::Html {
        return html_page(crate::html::slo::diffs(&rows));
    }
    Ok(render::diffs(&rows, format(&a.common)))
}
