//! Command-line parsing and dispatch: every clap type (one file per
//! command), each command's flags checked into a plain config for `ops`, and
//! the mapping of errors to exit statuses. The work itself lives in `ops`.
pub mod analyze;
pub mod collect;
pub mod commands;
pub mod compare;
pub mod export;
pub mod export_parquet;
pub mod history;
pub mod ingest;
pub mod join;
pub mod migrate;
pub mod report;
pub mod runs;
pub mod slo;
pub mod sql;

use std::io::Write;
use std::path::PathBuf;

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
    max_term_width = 100,
    after_help = "Examples:
  stormlog ingest examples/fixed_rate.jsonl examples/telemetry_joined.jsonl
  stormlog runs
  stormlog report fixed_rate
  stormlog report --all --slo ttft:500@95% --check
  stormlog --db team.db sql \"SELECT run_id, requests FROM v_runs\"

--db PATH (before or after the command, or $STORMLOG_DB) picks the project database, ./stormlog.db \
by default; only `ingest`, `runs delete` and `migrate` create or change it.

Exit statuses: 0 ok, 1 unexpected error (a bug), 2 usage, 3 findings, 4 a gate failed or could \
not be judged, 5 invalid input (a file, a run or a database that is not there or not right), 130 \
interrupted."
)]
pub struct Cli {
    // Its id is DbArg's, so a value given here reaches the command's
    // `DbArg`: clap carries a global argument's value down to a subcommand
    // that declares the same id, the one given on the command line winning
    // over a default or the environment. Hidden: a global argument shows in
    // every command's help, the drop-in `infer` ones included, which have no
    // database; the commands with one show their own `--db`, and the
    // top-level help says it works before the command.
    /// The project database (default ./stormlog.db, or $STORMLOG_DB).
    #[arg(
        long = "db",
        id = "db",
        global = true,
        value_name = "PATH",
        hide = true
    )]
    pub db: Option<PathBuf>,
    #[command(subcommand)]
    pub command: Command,
}

/// Where the project database lives: flatten this into a command that uses
/// one. `--db` also works before the command (`Cli::db`).
#[derive(Debug, Args, Clone)]
pub struct DbArg {
    /// The project database (default ./stormlog.db; also $STORMLOG_DB, and
    /// accepted before the command). Only `ingest`, `runs delete` and
    /// `migrate` create or change it.
    #[arg(
        long,
        env = "STORMLOG_DB",
        hide_env_values = true,
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
    #[command(after_help = "Examples:
  stormlog ingest run.jsonl                          # an artifact
  stormlog ingest run.jsonl run.telemetry.jsonl      # with the server's telemetry
  stormlog ingest --run r1 spans.jsonl               # vLLM spans for run r1
  stormlog ingest --replace run.jsonl                # a new file for a stored run id

With several files, each is its own transaction: one line per file says what was stored or why
nothing of it was, then a summary; the exit status is 5 when any file was refused.")]
    Ingest(ingest::IngestArgs),
    /// List the runs stored in the project database.
    #[command(after_help = "Examples:
  stormlog runs
  stormlog runs --format json
  stormlog runs delete o100                          # remove a run and all it holds")]
    Runs(runs::RunsArgs),
    /// Write stored runs back out: one as JSONL (artifact or telemetry), many as Parquet.
    ///
    /// `--parquet DIR` writes Hive-partitioned Parquet for DuckDB, Spark and
    /// Trino (docs/scale.md); again later, only new or changed runs.
    #[command(after_help = "Examples:
  stormlog export fixed_rate > fixed_rate.jsonl      # the artifact, record for record
  stormlog export telemetry_joined --telemetry -o server.jsonl
  stormlog export --parquet lake/ --all              # every run, as Parquet")]
    Export(export::ExportArgs),
    /// Rebuild a run's analysis report from the project database.
    #[command(after_help = "Examples:
  stormlog report fixed_rate
  stormlog report fixed_rate --format json -o report.json
  stormlog report fixed_rate --format html -o run.html  # one page with charts
  stormlog report --all --format html -o project.html   # every run
  stormlog report telemetry_joined --direct-server   # the client reached the server directly
  stormlog report fixed_rate --slo ttft:500@95% --slo e2e:4000 --target 90%
  stormlog report --all --slo-file examples/slo/interactive.toml --check
  stormlog report --all --slo ttft:500@95% --format csv -o judgements.csv

--check exits 4 unless every target is met, and also when nothing could be judged: no policy, a
policy without targets, no case.")]
    Report(report::ReportArgs),
    /// Analyze an artifact file directly (same as `stormlog infer analyze`).
    #[command(after_help = "Examples:
  stormlog analyze examples/fixed_rate.jsonl
  stormlog analyze examples/telemetry_joined.jsonl --server-telemetry \\
      examples/telemetry_joined.telemetry.jsonl --direct-server --format json")]
    Analyze(analyze::AnalyzeArgs),
    /// Compare a baseline arm against a candidate arm of profile runs (as
    /// `stormlog infer compare`): paired or independent designs, gates.
    #[command(after_help = "Examples:
  stormlog compare \\
      --baseline examples/compare/baseline_b1.jsonl examples/compare/baseline_b2.jsonl \\
      --candidate examples/compare/candidate_b1.jsonl examples/compare/candidate_b2.jsonl
  stormlog compare --baseline cmp_baseline_b1 cmp_baseline_b2 \\
      --candidate cmp_candidate_b1 cmp_candidate_b2 \\
      --gate 'client.ttft.p50=non-inferiority:0.10' -o compare.json

Arms that are files are read as artifacts. When none is, they are stored run ids in the project
database: --db PATH (before or after the command), else $STORMLOG_DB, else ./stormlog.db.")]
    Compare(Box<compare::CompareArgs>),
    /// Series of comparable runs over time, their change points, and a run checked against them.
    ///
    /// Runs group into series as `compare` decides comparability; each run is
    /// listed with its headline figures. `history check RUN` judges a run
    /// against earlier runs of its series and exits 4 when a gate fails.
    History(history::HistoryArgs),
    /// Ask the project database anything in SQL (read-only).
    ///
    /// The query comes as an argument, from a file (-f), or from stdin. The
    /// views v_runs, v_requests, v_case_windows, v_case_summary,
    /// v_server_samples, v_imports, v_import_requests, v_dispatches and
    /// v_first_contents and the percentile(value, p) aggregate are there for
    /// it; docs/sql.md has the schema and worked queries. Statements that
    /// would write are refused.
    #[command(after_help = "Examples:
  stormlog sql \"SELECT run_id, requests, failed FROM v_runs\"
  stormlog sql --format csv -o ttft.csv \"SELECT run_id, case_key, ttft_ms FROM v_requests\"
  stormlog sql -f query.sql --format json")]
    Sql(sql::SqlArgs),
    /// Sample a live inference server's process (RSS) and GPU memory into telemetry JSONL.
    ///
    /// Runs on the inference host for the length of a profile; stops on
    /// --duration, SIGINT/SIGTERM, the process ending or the GPU identity changing.
    #[command(after_help = "Examples:
  stormlog collect-server --run-id r1 --pid 4242 --output server.jsonl --duration 600
  stormlog collect-server --run-id r1 --pid 4242 --output server.jsonl --no-gpu --db stormlog.db")]
    CollectServer(collect::CollectArgs),
    /// Bring the project database to this stormlog's schema version.
    ///
    /// Commands that only read refuse a database from an older stormlog
    /// rather than change it; this applies the missing migrations (schema
    /// only, in one transaction; no stored record changes).
    #[command(after_help = "Example:
  stormlog migrate --db old.db")]
    Migrate(migrate::MigrateArgs),
    /// SLO questions of stored runs: attainment curves, the tightest
    /// threshold met, the binding criterion, capacity, verdict changes.
    Slo(slo::SloArgs),
    /// Drop-in commands of the reference `stormlog infer`.
    #[command(after_help = "Examples:
  stormlog infer analyze examples/fixed_rate.jsonl --format json
  stormlog infer compare --baseline a.jsonl --candidate b.jsonl --report compare.json")]
    Infer {
        #[command(subcommand)]
        command: InferCommand,
    },
}

#[derive(Debug, Subcommand)]
pub enum InferCommand {
    /// Analyze a profile artifact (the reference's `infer analyze`).
    #[command(after_help = "Example:
  stormlog infer analyze examples/fixed_rate.jsonl --format json")]
    Analyze(analyze::AnalyzeArgs),
    /// Compare baseline and candidate arms of runs (the reference's `infer compare`).
    #[command(after_help = "Example:
  stormlog infer compare --baseline examples/compare/baseline_b1.jsonl \\
      --candidate examples/compare/candidate_b1.jsonl --format json --report compare.json")]
    Compare(Box<compare::CompareArgs>),
    /// Sample a server process and its GPU (the reference's `infer collect-server`).
    #[command(after_help = "Example:
  stormlog infer collect-server --run-id r1 --pid 4242 --output server.jsonl --duration 600")]
    CollectServer(collect::CollectArgs),
}

/// Runs the command line and returns the process exit status.
/// Runs the command line; the status to exit with (`main` exits).
pub fn main() -> Exit {
    // No transparent huge pages (util::small_pages says why).
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
            return code;
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
                return Exit::Unexpected;
            }
            let _ = writeln!(err, "Error: {}", e.message);
            e.exit
        }
    };
    if out.flush().is_err() {
        return Exit::Unexpected;
    }
    exit
}

fn is_broken_pipe(e: &crate::ops::Error) -> bool {
    e.broken_pipe
}
