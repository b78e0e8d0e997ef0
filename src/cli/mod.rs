//! Command-line parsing and dispatch: clap types, and the mapping of errors to
//! exit statuses. The work itself lives in the library modules.
pub mod commands;
pub mod export_parquet;

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};

use crate::exit::Exit;

/// stormlog: analytics for LLM inference profiling runs.
///
/// Load client artifacts and server telemetry into a SQLite project database
/// (`stormlog ingest`), then rebuild any run's report from it (`stormlog report`),
/// list runs, export them back, or analyze a file directly as the reference
/// `stormlog infer analyze` does.
#[derive(Debug, Parser)]
#[command(
    name = "stormlog",
    version,
    propagate_version = true,
    max_term_width = 100
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

/// Where the project database lives.
#[derive(Debug, Args, Clone)]
pub struct DbArg {
    /// The project database (created on first use).
    #[arg(
        long,
        env = "STORMLOG_DB",
        default_value = "stormlog.db",
        value_name = "PATH"
    )]
    pub db: PathBuf,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Load artifacts and server telemetry into the project database.
    ///
    /// Each file is one transaction: bad input changes nothing. The kind of a
    /// file is told by its content. The same file again is a no-op; a different
    /// file claiming a stored run id is refused unless --replace is given.
    Ingest(commands::IngestArgs),
    /// List the runs stored in the project database.
    Runs(commands::RunsArgs),
    /// Write stored runs back out: one as JSONL (artifact or telemetry), many as Parquet.
    ///
    /// `--parquet DIR` writes Hive-partitioned Parquet for DuckDB, Spark and
    /// Trino (docs/scale.md); again later, only new or changed runs.
    Export(commands::ExportArgs),
    /// Rebuild a run's analysis report from the project database.
    Report(commands::ReportArgs),
    /// Analyze an artifact file directly (same as `stormlog infer analyze`).
    Analyze(commands::AnalyzeArgs),
    /// Compare a baseline arm against a candidate arm of profile runs (as
    /// `stormlog infer compare`): paired or independent designs, gates.
    Compare(Box<crate::compare::CompareArgs>),
    /// Ask the project database anything in SQL (read-only).
    ///
    /// The query comes as an argument, from a file (-f), or from stdin. Views
    /// v_runs, v_requests, v_case_windows, v_case_summary and v_server_samples
    /// and the percentile(value, p) aggregate are there for it; docs/sql.md has
    /// the schema and worked queries. Statements that would write are refused.
    Sql(crate::sqlcmd::SqlArgs),
    /// Sample a live inference server's process (RSS) and GPU memory into telemetry JSONL.
    ///
    /// Runs on the inference host for the length of a profile; stops on
    /// --duration, SIGINT/SIGTERM, the process ending or the GPU identity changing.
    CollectServer(crate::collector::CollectArgs),
    /// Drop-in commands of the reference `stormlog infer`.
    Infer {
        #[command(subcommand)]
        command: InferCommand,
    },
}

#[derive(Debug, Subcommand)]
pub enum InferCommand {
    /// Analyze a profile artifact (the reference's `infer analyze`).
    Analyze(commands::AnalyzeArgs),
    /// Compare baseline and candidate arms of runs (the reference's `infer compare`).
    Compare(Box<crate::compare::CompareArgs>),
    /// Sample a server process and its GPU (the reference's `infer collect-server`).
    CollectServer(crate::collector::CollectArgs),
}

/// Runs the command line and returns the process exit status.
pub fn main() -> ExitCode {
    // Huge pages only where asked for (util::HugePages).
    crate::util::small_pages();
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let code = if e.use_stderr() {
                Exit::Usage
            } else {
                Exit::Ok
            };
            let _ = e.print();
            return code.into();
        }
    };
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    // Not locked for the whole command (unlike stdout): other threads write
    // to stderr too (the ingest progress bar is drawn by the reading thread),
    // and would wait on the lock until the command ends while the command
    // waits on them. Stderr is unbuffered, so each write locks it briefly.
    let mut err = std::io::stderr();
    let exit = match commands::run(cli.command, &mut out, &mut err) {
        Ok(exit) => exit,
        Err(e) => {
            if is_broken_pipe(&e) {
                // `stormlog report | head` ends quietly.
                return Exit::Unexpected.into();
            }
            let _ = writeln!(err, "Error: {}", e.message);
            e.exit
        }
    };
    if out.flush().is_err() {
        return Exit::Unexpected.into();
    }
    exit.into()
}

fn is_broken_pipe(e: &commands::CliError) -> bool {
    e.broken_pipe
}
