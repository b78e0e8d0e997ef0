//! `stormlog analyze` / `infer analyze`'s flags (the reference's), turned
//! into an analyze request; the report is written by `ops::report::emit`.
use std::io::Write;
use std::path::PathBuf;

use clap::{Args, ValueEnum};

use super::join::JoinFlags;
use crate::exit::Exit;
use crate::ops::join::JoinConfig;
use crate::ops::report::ReportFormat as Format;

#[derive(Debug, Clone, Copy, ValueEnum, PartialEq, Eq)]
pub enum ReportFormat {
    Txt,
    Json,
}

impl From<ReportFormat> for Format {
    fn from(f: ReportFormat) -> Self {
        match f {
            ReportFormat::Txt => Format::Txt,
            ReportFormat::Json => Format::Json,
        }
    }
}

/// The reference's `stormlog infer analyze` flags.
#[derive(Debug, Args)]
pub struct AnalyzeArgs {
    /// The profile artifact (the load client's JSONL).
    pub artifact: PathBuf,
    /// Output format: txt for people, json.
    #[arg(long, value_enum, default_value = "txt")]
    pub format: ReportFormat,
    /// Write the report to FILE instead of stdout (parent directories are created).
    #[arg(long, short = 'o', value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Server telemetry from `collect-server` (repeatable).
    #[arg(long = "server-telemetry", value_name = "FILE")]
    pub server_telemetry: Vec<PathBuf>,
    /// vLLM spans (OTLP JSON or one span per line) to join (repeatable).
    // Listed in the help between --direct-server and --clock-offset-ns, as
    // the reference lists it: clap numbers options in declaration order and
    // orders a tie by name, so this one shares --direct-server's number
    // (the one after --server-telemetry's) and sorts after it.
    #[arg(long = "vllm-spans", value_name = "FILE", display_order = 4)]
    pub vllm_spans: Vec<PathBuf>,
    #[command(flatten)]
    pub join: JoinFlags,
    /// An SLO criterion KEY:MS, e.g. ttft:200 (repeatable); replaces a recorded policy.
    #[arg(long, value_name = "KEY:MS")]
    pub slo: Vec<String>,
    /// An SLO policy file (JSON, or TOML); replaces a recorded policy.
    #[arg(long = "slo-file", value_name = "FILE")]
    pub slo_file: Option<PathBuf>,
}

/// Runs `analyze`: the pipeline, then the report written as asked.
pub fn run(a: AnalyzeArgs, out: &mut dyn Write, err: &mut dyn Write) -> crate::ops::Result<Exit> {
    let join = JoinConfig::from(&a.join);
    let request = crate::ops::analyze::AnalyzeConfig {
        artifact: a.artifact,
        server_telemetry: a.server_telemetry,
        vllm_spans: a.vllm_spans,
        slo: a.slo,
        slo_file: a.slo_file,
        direct_server: join.direct_server,
        clock_offset_ns: join.clock_offset_ns,
        clock_uncertainty_ns: join.clock_uncertainty_ns,
        ..Default::default()
    };
    let analyzed = crate::ops::analyze::analyze(&request)?;
    // The command exits right after the report: skip freeing the run's data.
    std::mem::forget(analyzed.data);
    crate::ops::report::emit(
        &analyzed.report,
        a.format.into(),
        a.output.as_deref(),
        out,
        err,
    )
}
