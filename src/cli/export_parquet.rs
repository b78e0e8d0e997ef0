//! `stormlog export --parquet DIR`'s flags and `export`'s examples. The
//! work is `ops::export_parquet`.
use std::path::PathBuf;

use clap::Args;

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
