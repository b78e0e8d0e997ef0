//! The dispatch from a parsed command to its `cli` module, which checks the
//! flags into a plain config and calls `ops`. (Until the analyze pipeline
//! and the compare glue move to `ops`, their lines are kept here as they were.)
use std::io::Write;
use std::path::PathBuf;

use serde_json::Value;

use super::{Command, InferCommand};
use crate::db::{self, DbError};
use crate::exit::Exit;
use crate::ingest::{self, IngestError};
use crate::report;

pub use crate::ops::ingest::ingest_failure;
/// An error on its way to stderr, with the exit status it maps to
/// (`ops::Error`; the old name keeps working).
pub use crate::ops::Error as CliError;
use crate::slo::policy_from_cli as cli_policy;

type Result<T> = std::result::Result<T, CliError>;

pub fn run(command: Command, out: &mut dyn Write, err: &mut dyn Write) -> Result<Exit> {
    match command {
        Command::Ingest(a) => super::ingest::run(a, out, err),
        Command::Runs(a) => super::runs::run(a, out, err),
        Command::Migrate(a) => super::migrate::run(a, out),
        Command::Compare(a) => cmd_compare(*a, false, out, err),
        Command::Infer {
            command: InferCommand::Compare(a),
        } => cmd_compare(*a, true, out, err),
        Command::Sql(a) => super::sql::run(a, out, err),
        Command::History(a) => super::history::run(a, out),
        Command::Export(a) => super::export::run(a, out),
        Command::Slo(a) => super::slo::run(a, out, err),
        Command::Report(a) => super::report::run(a, out, err),
        Command::Analyze(a)
        | Command::Infer {
            command: InferCommand::Analyze(a),
        } => super::analyze::run(a, out, err),
        Command::CollectServer(a)
        | Command::Infer {
            command: InferCommand::CollectServer(a),
        } => super::collect::run(a, out, err),
    }
}

/// Reads `--vllm-spans` files (artifact.md §3.12.3); errors as `vLLM telemetry: <reason>`.
fn external_spans(paths: &[PathBuf], data: &crate::model::RunData) -> Result<Vec<Value>> {
    if paths.is_empty() {
        return Ok(Vec::new());
    }
    let records: Vec<Value> = data.records.iter().map(|(_, r)| r.clone()).collect();
    let mut spans = Vec::new();
    for path in paths {
        let invalid =
            |reason: String| CliError::new(Exit::InvalidInput, format!("vLLM telemetry: {reason}"));
        let text = ingest::read_text(path).map_err(|e| invalid(file_reason(e)))?;
        spans.extend(crate::vllm::load_span_file(path, &text, &records).map_err(invalid)?);
    }
    Ok(spans)
}

/// Why an input file could not be read, without the path: the reason the
/// reference prints after its own prefix (`--server-telemetry PATH: `, ...).
fn file_reason(e: IngestError) -> String {
    match e {
        IngestError::Invalid { message, .. } => message,
        IngestError::Io { source, .. } => os_reason(&source),
        other => other.to_string(),
    }
}

/// The OS's error text without Rust's " (os error N)" suffix.
fn os_reason(e: &std::io::Error) -> String {
    let s = e.to_string();
    match s.find(" (os error") {
        Some(i) => s[..i].to_owned(),
        None => s,
    }
}

/// What `infer analyze` is asked: the artifact and every flag that reaches the analysis.
#[derive(Debug, Clone, Default)]
pub struct AnalyzeRequest {
    pub artifact: PathBuf,
    pub server_telemetry: Vec<PathBuf>,
    pub vllm_spans: Vec<PathBuf>,
    pub slo: Vec<String>,
    pub slo_file: Option<PathBuf>,
    pub direct_server: bool,
    pub clock_offset_ns: Option<i64>,
    pub clock_uncertainty_ns: Option<i64>,
    /// Slices of each case's measured phase, reported beside it (compare --segment).
    pub segments: Vec<crate::analysis::segment::Segment>,
    pub membership: crate::analysis::segment::Membership,
}

/// `infer analyze` without the output: load the files into an in-memory
/// database and build the report through the same path as `report`. The
/// checks run in the reference's order (artifact.md §5).
pub fn analyze(a: &AnalyzeRequest) -> Result<report::Report> {
    if !a.artifact.exists() {
        return Err(CliError::new(
            Exit::InvalidInput,
            format!("Input file '{}' not found", a.artifact.display()),
        ));
    }
    let policy = cli_policy(&a.slo, a.slo_file.as_deref())?;
    // A scratch database in a temporary file (deleted afterwards) keeps the
    // run's pages out of memory; the report then reads it like any stored run.
    let mut clock = crate::util::Phases::from_env();
    let (mut conn, scratch) = db::open_scratch()?;
    let opts = ingest::Options {
        skip_digest: true,
        analyze: true,
        ..Default::default()
    };
    let done = ingest::ingest_artifact(&mut conn, &a.artifact, &opts)?;
    clock.mark("ingest");
    let data = crate::db::store::load_run(&conn, &done.run_id)?;
    clock.mark("load");
    // The recorded policy is checked before the server files are read (E5-E7 before E8).
    if policy.is_none() {
        let recorded: Vec<&Value> = data.of_type("infer.slo").collect();
        crate::slo::select(None, &recorded)?;
    }
    for path in &a.server_telemetry {
        crate::ingest::telemetry::attach(
            &mut conn,
            path,
            Some(&done.run_id),
            &ingest::Options::default(),
        )
        .map_err(|e| {
            CliError::new(
                Exit::InvalidInput,
                format!("--server-telemetry {}: {}", path.display(), file_reason(e)),
            )
        })?;
    }
    let samples = crate::ingest::telemetry::load_samples(&conn, &done.run_id)?;
    let spans = external_spans(&a.vllm_spans, &data)?;
    let inputs = report::Inputs {
        policy,
        telemetry_configured: !a.server_telemetry.is_empty(),
        server_samples: samples,
        direct_server: a.direct_server,
        clock_offset_ns: a.clock_offset_ns,
        clock_uncertainty_ns: a.clock_uncertainty_ns,
        external_spans: spans,
        segments: a.segments.clone(),
        membership: a.membership,
    };
    let rep = report::build(&data, inputs)?;
    clock.mark("report");
    // The caller exits right after the report: skip freeing the run's data.
    std::mem::forget(data);
    drop(conn);
    drop(scratch);
    Ok(rep)
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
fn cmd_compare(
    mut a: crate::compare::CompareArgs,
    drop_in: bool,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<Exit> {
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
                return Err(CliError::new(
                    Exit::InvalidInput,
                    format!("{what}: {missing}"),
                ));
            }
            implicit_db = Some(path.clone());
            a.db = Some(path);
        }
    }
    let no_db = a.db.is_none();
    crate::compare::run(&a, out, err).map_err(|e| {
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
        CliError {
            message,
            exit: e.exit(),
            broken_pipe,
        }
    })
}
