//! `stormlog export`'s flags (the Parquet ones are `cli::export_parquet`),
//! turned into `ops::export::ExportConfig`.
use std::io::Write;
use std::path::PathBuf;

use clap::Args;

use super::export_parquet::ParquetFlags;
use super::DbArg;
use crate::exit::Exit;
use crate::ops::export::{ExportConfig, ParquetRequest};

#[derive(Debug, Args)]
#[command(after_help = super::export_parquet::AFTER_HELP)]
pub struct ExportArgs {
    #[command(flatten)]
    pub db: DbArg,
    /// Export the run's server telemetry instead of its artifact.
    #[arg(long)]
    pub telemetry: bool,
    /// Write to FILE instead of stdout (parent directories are created).
    #[arg(long, short, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// An imported run: write every file that was imported for it (the
    /// result file and the files read beside it) into DIR, each under its
    /// own name, byte for byte; prints the files written.
    #[arg(long, value_name = "DIR", conflicts_with_all = ["telemetry", "output", "parquet"])]
    pub files: Option<PathBuf>,
    #[command(flatten)]
    pub parquet: ParquetFlags,
    /// With --parquet: judge every exported run under an SLO criterion KEY:MS
    /// (repeatable) into slo_verdicts/.
    #[arg(long, value_name = "KEY:MS", requires = "parquet")]
    pub slo: Vec<String>,
    /// With --parquet: judge every exported run under an SLO policy file.
    #[arg(long = "slo-file", value_name = "FILE", requires = "parquet")]
    pub slo_file: Option<PathBuf>,
    /// The run id (see `stormlog runs`); with --parquet, any number of them.
    #[arg(value_name = "RUN", required_unless_present_any = ["all", "since"])]
    pub run: Vec<String>,
}

/// Runs `export`.
pub fn run(a: ExportArgs, out: &mut dyn Write) -> crate::ops::Result<Exit> {
    let parquet = match a.parquet.parquet {
        Some(dir) => Some(ParquetRequest {
            dir,
            all: a.parquet.all,
            since: a.parquet.since,
            policy: crate::slo::policy_from_cli(&a.slo, a.slo_file.as_deref())?,
        }),
        None => None,
    };
    let config = ExportConfig {
        db: a.db.db,
        runs: a.run,
        telemetry: a.telemetry,
        output: a.output,
        files: a.files,
        parquet,
    };
    crate::ops::export::run(config, out)
}
