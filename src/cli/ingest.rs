//! `stormlog ingest`'s flags, turned into `ops::ingest::IngestConfig`.
use std::io::Write;
use std::path::PathBuf;

use clap::Args;

use super::DbArg;
use crate::exit::Exit;
use crate::ops::ingest::IngestConfig;

#[derive(Debug, Args)]
pub struct IngestArgs {
    #[command(flatten)]
    pub db: DbArg,
    /// Replace a run already stored from a different file.
    #[arg(long)]
    pub replace: bool,
    /// Attach telemetry and vLLM span files to this run (default: the run id
    /// telemetry carries; span files always need it).
    #[arg(long, value_name = "RUN")]
    pub run: Option<String>,
    /// Store an imported tool's run under this id (default: the tool's own
    /// id of the run, else the tool's name and a content hash).
    #[arg(long = "run-id", value_name = "ID")]
    pub run_id: Option<String>,
    /// Files to load, told apart by content: artifacts (the load client's
    /// JSONL), server telemetry (`collect-server` JSONL), vLLM span files, or
    /// another tool's results (AIPerf, GuideLLM, inference-perf, vLLM bench
    /// serve): a result file or the tool's output folder (docs/import.md).
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<PathBuf>,
}

/// Runs `ingest`.
pub fn run(a: IngestArgs, out: &mut dyn Write, err: &mut dyn Write) -> crate::ops::Result<Exit> {
    let config = IngestConfig {
        db: a.db.db,
        replace: a.replace,
        run: a.run,
        run_id: a.run_id,
        files: a.files,
    };
    crate::ops::ingest::run(&config, out, err)
}
