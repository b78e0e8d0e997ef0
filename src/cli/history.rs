//! `stormlog history` and `stormlog history check`: flags into plain
//! configs for `ops::history`, its results through `history::render`.

use std::io::Write;
use std::path::PathBuf;

use clap::{Args, Subcommand, ValueEnum};

use super::DbArg;
use crate::exit::Exit;
use crate::history::listing::ListOptions;
use crate::history::render;
use crate::ops::history::{self as ops, BaselineArg, CheckConfig, HistoryError, Source};
use crate::ops::Error as CliError;

/// The output formats of `history`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Default)]
pub enum Format {
    #[default]
    Txt,
    Json,
    Csv,
}

const LIST_EXAMPLES: &str = "\
Examples:
  stormlog history                                  every series, its runs and change points
  stormlog history --series c2_in64_out16           the series whose key starts so
  stormlog history --allow engine.max_num_seqs      one series across that setting
  stormlog history --slo ttft:200 --format csv      attainment under a policy, as CSV
  stormlog history check RUN --baseline last:5 --gate 'client.e2e.p50=non-inferiority:0.05'

Runs form a series when `compare` would let them stand side by side: the same
case, the same experiment and arm labels, and no blocking difference in model,
weights, engine configuration or workload. docs/history.md has the details.";

const CHECK_EXAMPLES: &str = "\
Examples:
  stormlog history check nightly-42 --gate 'client.ttft.p90=non-inferiority:0.10'
  stormlog history check nightly-42 --baseline since:2026-11-01 --gate 'client.*.p50=significant:0'
  stormlog history check nightly-42 --baseline runs nightly-40,nightly-41 --allow-not-evaluable

Exit status: 0 when every gate passes (or there are none), 4 when a gate fails
or cannot be evaluated (unless --allow-not-evaluable), 5 when a named baseline
run is not comparable, 2 for a usage error.";

/// `stormlog history`.
#[derive(Debug, Args)]
#[command(args_conflicts_with_subcommands = true, after_help = LIST_EXAMPLES)]
pub struct HistoryArgs {
    #[command(subcommand)]
    pub command: Option<HistoryCommand>,
    #[command(flatten)]
    pub db: DbArg,
    /// Only the series with this key (or whose key starts with it, e.g. a case id)
    #[arg(long, value_name = "KEY")]
    pub series: Option<String>,
    /// A field (or vllm_config pointer, or the label experiment/arm) that may differ within a series (repeatable)
    #[arg(long, value_name = "FIELD")]
    pub allow: Vec<String>,
    /// An SLO criterion (KEY:MS) or policy file judging every run's attainment (repeatable)
    #[arg(long, value_name = "POLICY")]
    pub slo: Vec<String>,
    /// Search change points in these metrics only (patterns, e.g. 'client.ttft.*'; repeatable)
    #[arg(long, value_name = "METRIC")]
    pub metric: Vec<String>,
    /// The fewest runs on each side of a change point
    #[arg(long = "min-segment", default_value_t = 3, value_name = "RUNS")]
    pub min_segment: usize,
    /// Confidence of a change point (Bonferroni-adjusted over the splits tried)
    #[arg(long, default_value_t = 0.95)]
    pub confidence: f64,
    /// Output format
    #[arg(long, value_enum, default_value_t = Format::Txt)]
    pub format: Format,
    /// Write to FILE instead of stdout
    #[arg(short = 'o', long, value_name = "FILE")]
    pub output: Option<PathBuf>,
}

#[derive(Debug, Subcommand)]
pub enum HistoryCommand {
    /// Check a run against earlier runs of its series: a verdict per metric and case, gates.
    ///
    /// The baseline runs are replicates; the run is judged by a t prediction
    /// interval on the log ratio (the difference for a fraction), with
    /// `compare`'s gate rules. Exit 4 when a gate fails or cannot be evaluated.
    #[command(after_help = CHECK_EXAMPLES)]
    Check(CheckArgs),
}

/// `stormlog history check`.
#[derive(Debug, Args)]
pub struct CheckArgs {
    /// The run to check (its id, or a unique prefix)
    #[arg(value_name = "RUN")]
    pub run: String,
    #[command(flatten)]
    pub db: DbArg,
    /// The baseline: last:N earlier runs of the series, since:DATE (UTC), or runs R1,R2,...
    #[arg(long, default_value = "last:5", num_args = 1..=2, value_name = "SPEC")]
    pub baseline: Vec<String>,
    /// Gate a metric (or pattern), e.g. client.e2e.p95=non-inferiority:0.05 (repeatable)
    #[arg(long, value_name = "METRIC=RULE:BUDGET")]
    pub gate: Vec<String>,
    /// An SLO criterion (KEY:MS) or policy file judging every run (repeatable)
    #[arg(long, value_name = "POLICY")]
    pub slo: Vec<String>,
    /// A field that may differ between the run and its baseline (repeatable)
    #[arg(long, value_name = "FIELD")]
    pub allow: Vec<String>,
    /// Only this case (repeatable)
    #[arg(long = "case", value_name = "CASE")]
    pub case: Vec<String>,
    /// Exit 0 when a gate cannot be evaluated (too few baseline runs, unverified comparability)
    #[arg(long = "allow-not-evaluable")]
    pub allow_not_evaluable: bool,
    /// Two-sided confidence of the intervals
    #[arg(long, default_value_t = 0.95)]
    pub confidence: f64,
    /// Output format
    #[arg(long, value_enum, default_value_t = Format::Txt)]
    pub format: Format,
    /// Write to FILE instead of stdout
    #[arg(short = 'o', long, value_name = "FILE")]
    pub output: Option<PathBuf>,
}

fn failed(e: HistoryError) -> CliError {
    CliError::new(e.exit(), e.to_string())
}

/// `last:N`, `since:DATE`, `runs R1,R2` (or `runs:R1,R2`).
pub fn baseline(words: &[String]) -> Result<BaselineArg, HistoryError> {
    let text = words.join(" ");
    let usage = || {
        HistoryError::Usage(format!(
            "--baseline '{text}': use last:N, since:DATE or runs R1,R2,..."
        ))
    };
    let (kind, rest) = match words {
        [one] => one.split_once(':').ok_or_else(usage)?,
        [kind, rest] if kind == "runs" => (kind.as_str(), rest.as_str()),
        _ => return Err(usage()),
    };
    match kind {
        "last" => match rest.parse::<usize>() {
            Ok(n) if n > 0 => Ok(BaselineArg::Last(n)),
            _ => Err(usage()),
        },
        "since" if !rest.is_empty() => {
            ops::since_ns(rest)?;
            Ok(BaselineArg::Since(rest.to_owned()))
        }
        "runs" => {
            let runs: Vec<String> = rest
                .split(',')
                .map(str::trim)
                .filter(|r| !r.is_empty())
                .map(str::to_owned)
                .collect();
            if runs.is_empty() {
                return Err(usage());
            }
            Ok(BaselineArg::Runs(runs))
        }
        _ => Err(usage()),
    }
}

fn baseline_text(b: &BaselineArg) -> String {
    match b {
        BaselineArg::Last(n) => format!("last:{n}"),
        BaselineArg::Since(d) => format!("since:{d}"),
        BaselineArg::Runs(r) => format!("runs {}", r.join(",")),
    }
}

fn emit(text: &str, output: &Option<PathBuf>, out: &mut dyn Write) -> Result<(), CliError> {
    match output {
        Some(path) => {
            crate::output::write_atomic(path, text.as_bytes(), crate::output::Parents::Keep)
                .map_err(CliError::from)
        }
        None => out.write_all(text.as_bytes()).map_err(CliError::from),
    }
}

/// Runs `stormlog history [check]`.
pub fn run(a: HistoryArgs, out: &mut dyn Write) -> Result<Exit, CliError> {
    if let Some(HistoryCommand::Check(c)) = a.command {
        return check(c, out);
    }
    if !(0.0 < a.confidence && a.confidence < 1.0) {
        return Err(CliError::new(
            Exit::Usage,
            format!(
                "--confidence {}: use a number between 0 and 1",
                a.confidence
            ),
        ));
    }
    if a.min_segment < 2 {
        return Err(CliError::new(
            Exit::Usage,
            "--min-segment: at least 2 runs on each side (a side needs a variance)",
        ));
    }
    let source = Source {
        db: a.db.db.clone(),
        slo: a.slo.clone(),
    };
    let options = ListOptions {
        allow: a.allow.clone(),
        series: a.series.clone(),
        metrics: a.metric.clone(),
        min_segment: a.min_segment,
        confidence: a.confidence,
    };
    let listing = ops::list(&source, &options).map_err(failed)?;
    let text = match a.format {
        Format::Txt => render::listing_text(&listing.series, listing.runs),
        Format::Json => {
            let method = serde_json::json!({
                "name": "binary_segmentation_welch_t",
                "min_segment": a.min_segment,
                "confidence": a.confidence,
                "adjustment": "bonferroni over the splits tried in a segment",
                "scale": "log for latencies and rates, difference for fractions",
            });
            render::listing_json(&listing.series, listing.runs, &method)
        }
        Format::Csv => render::listing_csv(&listing.series),
    };
    emit(&text, &a.output, out)?;
    Ok(Exit::Ok)
}

fn check(c: CheckArgs, out: &mut dyn Write) -> Result<Exit, CliError> {
    let config = CheckConfig {
        run: c.run.clone(),
        baseline: baseline(&c.baseline).map_err(failed)?,
        gates: c.gate.clone(),
        confidence: c.confidence,
        allow: c.allow.clone(),
        cases: c.case.clone(),
        allow_not_evaluable: c.allow_not_evaluable,
    };
    let source = Source {
        db: c.db.db.clone(),
        slo: c.slo.clone(),
    };
    let result = ops::check(&source, &config).map_err(failed)?;
    let view = render::CheckView {
        run_id: &result.run_id,
        baseline: baseline_text(&result.baseline),
        confidence: result.confidence,
        cases: &result.cases,
        allow_not_evaluable: result.allow_not_evaluable,
        gate_failed: result.gate_failed,
    };
    let text = match c.format {
        Format::Txt => render::check_text(&view),
        Format::Json => render::check_json(&view),
        Format::Csv => render::check_csv(&view),
    };
    emit(&text, &c.output, out)?;
    Ok(result.exit())
}
