//! `stormlog export --parquet DIR`: the flags, and the summary printed after.
//! The work is `ops::export_parquet`.
use std::io::Write;
use std::path::PathBuf;

use clap::Args;

use super::commands::CliError;
use crate::exit::Exit;
use crate::ops::export_parquet::{self, ParquetConfig, ParquetSummary};

/// The flags `export` has for Parquet (docs/scale.md).
#[derive(Debug, Args, Default)]
pub struct ParquetFlags {
    /// Write runs as Hive-partitioned Parquet into DIR (for DuckDB, Spark,
    /// Trino) instead of JSONL; again later, only new or changed runs are written.
    #[arg(long, value_name = "DIR", conflicts_with_all = ["telemetry", "output"])]
    pub parquet: Option<PathBuf>,
    /// With --parquet: every stored run (runs deleted since the last export
    /// are removed from DIR).
    #[arg(long, requires = "parquet")]
    pub all: bool,
    /// With --parquet: only runs whose session started at or after DATE
    /// (2026-11-29, or 2026-11-29T14:00:00Z; UTC).
    #[arg(long, value_name = "DATE", requires = "parquet")]
    pub since: Option<String>,
}

pub const AFTER_HELP: &str = "\
Examples:
  stormlog export RUN > run.jsonl                 # the artifact back as JSONL
  stormlog export --telemetry RUN -o server.jsonl
  stormlog export --parquet lake --all            # every run as Parquet
  stormlog export --parquet lake --since 2026-11-01 --slo ttft:200
  duckdb -c \"SELECT count(*) FROM 'lake/requests/*/*.parquet'\"";

/// Runs the Parquet export and prints what it did.
pub fn run(
    dir: PathBuf,
    flags: &ParquetFlags,
    db: PathBuf,
    runs: Vec<String>,
    policy: Option<(crate::slo::Policy, crate::slo::PolicySource)>,
    out: &mut dyn Write,
) -> Result<Exit, CliError> {
    if flags.all && !runs.is_empty() {
        return Err(CliError::new(
            Exit::Usage,
            "--all exports every run; name runs or pass --all, not both",
        ));
    }
    let cfg = ParquetConfig {
        db,
        dir,
        runs,
        all: flags.all,
        since: flags.since.clone(),
        policy,
    };
    let summary =
        export_parquet::export_parquet(&cfg).map_err(|e| CliError::new(e.exit(), e.to_string()))?;
    out.write_all(render(&summary).as_bytes())?;
    Ok(Exit::Ok)
}

/// The lines printed after an export.
pub fn render(s: &ParquetSummary) -> String {
    let mut text = format!(
        "{}: {} run(s) written ({} requests, {} bytes), {} unchanged, {} removed\n",
        s.dir.display(),
        s.written.len(),
        s.requests,
        s.bytes,
        s.unchanged,
        s.removed.len()
    );
    if !s.manifest_written {
        text.push_str("nothing changed; nothing written\n");
    }
    text
}
