//! The commands: argument types and the glue from arguments to library calls.
use std::io::Write;
use std::path::{Path, PathBuf};

use clap::{Args, ValueEnum};
use serde_json::{json, Value};

use super::{Command, DbArg, InferCommand};
use crate::db::{self, DbError, Mode};
use crate::exit::Exit;
use crate::ingest::{self, IngestError, Kind, Outcome};
use crate::report;

/// An error on its way to stderr, with the exit status it maps to.
#[derive(Debug)]
pub struct CliError {
    pub message: String,
    pub exit: Exit,
    pub broken_pipe: bool,
}

impl CliError {
    pub fn new(exit: Exit, message: impl Into<String>) -> Self {
        CliError {
            message: message.into(),
            exit,
            broken_pipe: false,
        }
    }
}

impl From<std::io::Error> for CliError {
    fn from(e: std::io::Error) -> Self {
        CliError {
            broken_pipe: e.kind() == std::io::ErrorKind::BrokenPipe,
            message: e.to_string(),
            exit: Exit::Unexpected,
        }
    }
}

impl From<DbError> for CliError {
    fn from(e: DbError) -> Self {
        match db::failure::advice(&e) {
            Some(advice) => CliError::new(Exit::Database, format!("{e}: {advice}")),
            // Its message says what to do already.
            None if matches!(e, DbError::TooNew { .. }) => {
                CliError::new(Exit::Database, e.to_string())
            }
            None => CliError::new(Exit::Unexpected, e.to_string()),
        }
    }
}

/// An ingest's failure as the command reports it. A failure of the storage
/// (a full disk, a read-only database) names the file being ingested and
/// the database, says what to do and exits [`Exit::Database`].
pub fn ingest_failure(e: IngestError, file: &std::path::Path, db: &std::path::Path) -> CliError {
    match &e {
        IngestError::Db(inner) => match db::failure::advice(inner) {
            Some(advice) => CliError::new(
                Exit::Database,
                format!(
                    "{}: not stored in {}: {advice}; nothing of the file was stored ({inner})",
                    file.display(),
                    db.display()
                ),
            ),
            None => e.into(),
        },
        _ => e.into(),
    }
}

impl From<IngestError> for CliError {
    fn from(e: IngestError) -> Self {
        let exit = match e {
            IngestError::Invalid { .. } | IngestError::Conflict { .. } | IngestError::Io { .. } => {
                Exit::InvalidInput
            }
            IngestError::Db(_) => Exit::Unexpected,
        };
        CliError::new(exit, e.to_string())
    }
}

type Result<T> = std::result::Result<T, CliError>;

#[derive(Debug, Clone, Copy, ValueEnum, PartialEq, Eq)]
pub enum ReportFormat {
    Txt,
    Json,
}

#[derive(Debug, Clone, Copy, ValueEnum, PartialEq, Eq)]
pub enum TableFormat {
    Table,
    Json,
}

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
    /// Artifact (`infer profile` JSONL) or server telemetry (`collect-server` JSONL) files.
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<PathBuf>,
}

#[derive(Debug, Args)]
pub struct RunsArgs {
    #[command(flatten)]
    pub db: DbArg,
    /// Output format.
    #[arg(long, value_enum, default_value = "table")]
    pub format: TableFormat,
}

#[derive(Debug, Args)]
pub struct ExportArgs {
    #[command(flatten)]
    pub db: DbArg,
    /// Export the run's server telemetry instead of its artifact.
    #[arg(long)]
    pub telemetry: bool,
    /// Write to FILE instead of stdout.
    #[arg(long, short, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// The run id (see `stormlog runs`).
    pub run: String,
}

#[derive(Debug, Args)]
pub struct ReportArgs {
    #[command(flatten)]
    pub db: DbArg,
    /// Output format.
    #[arg(long, value_enum, default_value = "txt")]
    pub format: ReportFormat,
    /// Write the report to FILE (parent directories are created).
    #[arg(long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    #[command(flatten)]
    pub join: JoinFlags,
    /// Re-judge the run with an SLO criterion KEY:MS (repeatable), or a policy file path.
    #[arg(long, value_name = "KEY:MS")]
    pub slo: Vec<String>,
    /// Re-judge the run with an SLO policy file (JSON or TOML).
    #[arg(long = "slo-file", value_name = "FILE")]
    pub slo_file: Option<PathBuf>,
    /// Judge every stored run (one line per run and case) instead of reporting one.
    #[arg(long, conflicts_with = "runs")]
    pub all: bool,
    /// Exit 4 when an attainment target is not met (missed, undecided or unmeasurable).
    #[arg(long)]
    pub check: bool,
    /// Run ids (see `stormlog runs`; a unique prefix will do). One run gives
    /// its full report; several give one judgement line per run and case.
    #[arg(value_name = "RUN", required_unless_present = "all")]
    pub runs: Vec<String>,
}

/// The reference's `stormlog infer analyze` flags.
#[derive(Debug, Args)]
pub struct AnalyzeArgs {
    /// The profile artifact (JSONL written by `infer profile`).
    pub artifact: PathBuf,
    /// Output format.
    #[arg(long, value_enum, default_value = "txt")]
    pub format: ReportFormat,
    /// Write the report to FILE (parent directories are created).
    #[arg(long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Server telemetry from `collect-server` (repeatable).
    #[arg(long = "server-telemetry", value_name = "FILE")]
    pub server_telemetry: Vec<PathBuf>,
    /// Declare that the client reached the observed server directly (no proxy).
    #[arg(long = "direct-server")]
    pub direct_server: bool,
    /// vLLM spans (OTLP JSON or one span per line) to join (repeatable).
    #[arg(long = "vllm-spans", value_name = "FILE")]
    pub vllm_spans: Vec<PathBuf>,
    /// Server clock minus client clock, in ns, for a server on another host.
    #[arg(
        long = "clock-offset-ns",
        value_name = "NS",
        allow_hyphen_values = true
    )]
    pub clock_offset_ns: Option<i64>,
    /// Uncertainty of --clock-offset-ns, in ns.
    #[arg(
        long = "clock-uncertainty-ns",
        value_name = "NS",
        allow_hyphen_values = true
    )]
    pub clock_uncertainty_ns: Option<i64>,
    /// An SLO criterion KEY:MS, e.g. ttft:200 (repeatable); replaces a recorded policy.
    #[arg(long, value_name = "KEY:MS")]
    pub slo: Vec<String>,
    /// An SLO policy file (JSON, or TOML); replaces a recorded policy.
    #[arg(long = "slo-file", value_name = "FILE")]
    pub slo_file: Option<PathBuf>,
}

pub fn run(command: Command, out: &mut dyn Write, err: &mut dyn Write) -> Result<Exit> {
    match command {
        Command::Ingest(a) => cmd_ingest(a, out, err),
        Command::Runs(a) => cmd_runs(a, out),
        Command::Compare(a)
        | Command::Infer {
            command: InferCommand::Compare(a),
        } => cmd_compare(*a, out, err),
        Command::Sql(a) => crate::sqlcmd::run(&a, out, err).map_err(|e| CliError {
            broken_pipe: e.is_broken_pipe(),
            exit: e.exit(),
            message: e.to_string(),
        }),
        Command::Export(a) => cmd_export(a, out),
        Command::Report(a) => cmd_report(a, out, err),
        Command::Analyze(a)
        | Command::Infer {
            command: InferCommand::Analyze(a),
        } => cmd_analyze(a, out, err),
        Command::CollectServer(a)
        | Command::Infer {
            command: InferCommand::CollectServer(a),
        } => {
            crate::collector::run(&a, out, err).map_err(|e| CliError::new(e.exit(), e.to_string()))
        }
    }
}

fn cmd_ingest(a: IngestArgs, out: &mut dyn Write, _err: &mut dyn Write) -> Result<Exit> {
    let mut conn = db::open(&a.db.db, Mode::ReadWrite)?;
    let opts = ingest::Options {
        replace: a.replace,
        progress: true,
        run: a.run.clone(),
        skip_digest: false,
        analyze: false,
    };
    let mut failures: Vec<CliError> = Vec::new();
    for path in &a.files {
        let started = std::time::Instant::now();
        match ingest::ingest_path(&mut conn, path, &opts) {
            Ok(done) => {
                let what = match done.kind {
                    Kind::Artifact => "artifact",
                    Kind::Telemetry => "telemetry",
                    Kind::Spans => "vLLM spans",
                };
                let verb = match done.outcome {
                    Outcome::Added => "ingested",
                    Outcome::Replaced => "replaced",
                    Outcome::Unchanged => "unchanged (already ingested)",
                };
                writeln!(
                    out,
                    "{}: {what} {verb}: run {}, {} records, {:.1} MB in {:.2} s",
                    crate::util::printable(&path.display().to_string()),
                    crate::util::printable(&done.run_id),
                    done.records,
                    done.bytes as f64 / 1e6,
                    started.elapsed().as_secs_f64()
                )?;
            }
            Err(e) => failures.push(ingest_failure(e, path, &a.db.db)),
        }
    }
    match failures.len() {
        0 => Ok(Exit::Ok),
        1 => Err(failures.remove(0)),
        _ => {
            let exit = failures
                .iter()
                .map(|f| f.exit)
                .max_by_key(|e| e.code())
                .unwrap_or(Exit::InvalidInput);
            let msg = failures
                .iter()
                .map(|f| f.message.clone())
                .collect::<Vec<_>>()
                .join("\nError: ");
            Err(CliError::new(exit, msg))
        }
    }
}

fn cmd_runs(a: RunsArgs, out: &mut dyn Write) -> Result<Exit> {
    let conn = db::open(&a.db.db, Mode::ReadWrite)?;
    let rows = crate::db::runs::list(&conn)?;
    match a.format {
        TableFormat::Json => {
            let v: Vec<Value> = rows
                .iter()
                .map(|r| {
                    json!({"run_id": r.run_id, "started_at_ns": r.started_at_ns, "started_at": r.started_at_ns.map(|ns| crate::util::iso8601_utc((ns / 1_000_000_000) as u64)),
                           "model": r.model, "endpoint": r.endpoint, "artifact": r.artifact_name, "cases": r.cases,
                           "requests": r.requests, "failures": r.failures, "telemetry_files": r.telemetry_files,
                           "telemetry_samples": r.telemetry_samples, "telemetry": r.telemetry_files > 0})
                })
                .collect();
            writeln!(
                out,
                "{}",
                serde_json::to_string_pretty(&v).unwrap_or_default()
            )?;
        }
        TableFormat::Table => {
            let header = [
                "RUN",
                "STARTED (UTC)",
                "MODEL",
                "ENDPOINT",
                "CASES",
                "REQUESTS",
                "FAILURES",
                "TELEMETRY",
            ];
            let body: Vec<Vec<String>> = rows
                .iter()
                .map(|r| {
                    vec![
                        r.run_id.clone(),
                        r.started_at_ns.map_or("-".into(), |ns| {
                            crate::util::iso8601_utc((ns / 1_000_000_000) as u64)
                        }),
                        r.model.clone().unwrap_or_else(|| "-".into()),
                        r.endpoint.clone().unwrap_or_else(|| "-".into()),
                        r.cases.to_string(),
                        r.requests.to_string(),
                        r.failures.to_string(),
                        if r.telemetry_files > 0 {
                            format!("{} samples", r.telemetry_samples)
                        } else {
                            "no".into()
                        },
                    ]
                })
                .collect();
            out.write_all(crate::util::table(&header, &body).as_bytes())?;
            if rows.is_empty() {
                writeln!(out, "(no runs; `stormlog ingest FILE` adds one)")?;
            }
        }
    }
    Ok(Exit::Ok)
}

fn cmd_export(a: ExportArgs, out: &mut dyn Write) -> Result<Exit> {
    let conn = db::open(&a.db.db, Mode::ReadWrite)?;
    let run = crate::db::runs::resolve(&conn, &a.run)?;
    let text = if a.telemetry {
        crate::db::runs::export_telemetry(&conn, &run)?
    } else {
        crate::db::runs::export_artifact(&conn, &run)?
    };
    match a.output {
        Some(path) => write_file(&path, &text)?,
        None => out.write_all(text.as_bytes())?,
    }
    Ok(Exit::Ok)
}

fn write_file(path: &Path, text: &str) -> Result<()> {
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent)
            .map_err(|e| CliError::new(Exit::Unexpected, format!("{}: {e}", parent.display())))?;
    }
    std::fs::write(path, text)
        .map_err(|e| CliError::new(Exit::Unexpected, format!("{}: {e}", path.display())))
}

fn emit(
    rep: &report::Report,
    format: ReportFormat,
    output: Option<&Path>,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<Exit> {
    for w in &rep.warnings {
        writeln!(err, "Warning: {}", crate::util::printable(w))?;
    }
    let text = match format {
        ReportFormat::Json => rep.to_json(),
        ReportFormat::Txt => rep.to_text(),
    };
    match output {
        Some(path) => {
            write_file(path, &text)?;
            writeln!(out, "Analysis report saved to: {}", path.display())?;
        }
        None => out.write_all(text.as_bytes())?,
    }
    Ok(Exit::Ok)
}

impl From<crate::slo::SloError> for CliError {
    fn from(e: crate::slo::SloError) -> Self {
        let exit = if e.exit_code() == 2 {
            Exit::Usage
        } else {
            Exit::InvalidInput
        };
        CliError::new(exit, e.to_string())
    }
}

impl From<report::ReportError> for CliError {
    fn from(e: report::ReportError) -> Self {
        CliError::new(e.exit, e.message)
    }
}

/// The policy given on the command line (`--slo` or `--slo-file`), if any.
fn cli_policy(
    slo: &[String],
    slo_file: Option<&Path>,
) -> Result<Option<(crate::slo::Policy, crate::slo::PolicySource)>> {
    if !slo.is_empty() && slo_file.is_some() {
        return Err(crate::slo::SloError::slo_and_slo_file().into());
    }
    if let Some(path) = slo_file {
        let policy = crate::slo::load_file(path, &path.display().to_string())?;
        return Ok(Some((policy, crate::slo::PolicySource::File)));
    }
    if !slo.is_empty() {
        return Ok(Some(crate::slo::policy_from_flags(slo)?));
    }
    Ok(None)
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

/// Flags shared by `report` and `infer analyze` that change the server join.
#[derive(Debug, Args, Clone, Default)]
pub struct JoinFlags {
    /// Declare that the client reached the observed server directly (no proxy).
    #[arg(long = "direct-server")]
    pub direct_server: bool,
    /// Server clock minus client clock, in ns, for a server on another host.
    #[arg(
        long = "clock-offset-ns",
        value_name = "NS",
        allow_hyphen_values = true
    )]
    pub clock_offset_ns: Option<i64>,
    /// Uncertainty of --clock-offset-ns, in ns.
    #[arg(
        long = "clock-uncertainty-ns",
        value_name = "NS",
        allow_hyphen_values = true
    )]
    pub clock_uncertainty_ns: Option<i64>,
}

fn cmd_report(a: ReportArgs, out: &mut dyn Write, err: &mut dyn Write) -> Result<Exit> {
    let policy = cli_policy(&a.slo, a.slo_file.as_deref())?;
    let conn = db::open(&a.db.db, Mode::ReadWrite)?;
    if a.all || a.runs.len() > 1 {
        return judge_runs(&conn, &a, policy, out, err);
    }
    let mut clock = crate::util::Phases::from_env();
    clock.mark("open");
    let run = crate::db::runs::resolve(&conn, &a.runs[0])?;
    let data = crate::db::store::load_run(&conn, &run)?;
    clock.mark("load");
    let samples = crate::ingest::telemetry::load_samples(&conn, &run)?;
    let spans = crate::db::store::attached_spans(&conn, &run)?;
    let inputs = report::Inputs {
        policy: policy.clone(),
        telemetry_configured: !samples.is_empty(),
        server_samples: samples,
        direct_server: a.join.direct_server,
        clock_offset_ns: a.join.clock_offset_ns,
        clock_uncertainty_ns: a.join.clock_uncertainty_ns,
        external_spans: spans.clone(),
    };
    let rep = report::build(&data, inputs)?;
    clock.mark("report");
    let exit = emit(&rep, a.format, a.output.as_deref(), out, err)?;
    let exit = if a.check {
        let judged = judgements(&data, policy, &spans)?;
        gate(&judged, err)?
    } else {
        exit
    };
    // Freeing a few hundred thousand requests costs more than the exit that
    // follows: the process hands the memory back as a whole.
    std::mem::forget(data);
    std::mem::forget(rep);
    Ok(exit)
}

/// The judgements of one run under the given policy, or its recorded one.
fn judgements(
    data: &crate::model::RunData,
    policy: Option<(crate::slo::Policy, crate::slo::PolicySource)>,
    spans: &[Value],
) -> Result<Vec<report::judge::CaseJudgement>> {
    let (policy, source) = match policy {
        Some(p) => p,
        None => {
            let recorded: Vec<&Value> = data.of_type("infer.slo").collect();
            let selected = crate::slo::select(None, &recorded)?;
            match selected.policy.zip(selected.source) {
                Some(p) => p,
                None => return Ok(vec![]),
            }
        }
    };
    Ok(report::judge::judge_run(data, &policy, source, spans))
}

/// `--check`: exit 4 unless every target of every judged case was met.
fn gate(judged: &[report::judge::CaseJudgement], err: &mut dyn Write) -> Result<Exit> {
    let failing: Vec<&report::judge::CaseJudgement> = judged
        .iter()
        .filter(|j| !matches!(j.verdict(), "met" | "no target"))
        .collect();
    if failing.is_empty() {
        return Ok(Exit::Ok);
    }
    for j in &failing {
        writeln!(
            err,
            "check failed: run {} case {}: {}",
            j.run_id,
            j.case_id,
            j.verdict()
        )?;
    }
    Ok(Exit::GateFailed)
}

/// `report --all` / several runs: one judgement line per run and case.
fn judge_runs(
    conn: &rusqlite::Connection,
    a: &ReportArgs,
    policy: Option<(crate::slo::Policy, crate::slo::PolicySource)>,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<Exit> {
    let ids: Vec<String> = if a.all {
        crate::db::runs::ids(conn)?
    } else {
        a.runs
            .iter()
            .map(|r| crate::db::runs::resolve(conn, r))
            .collect::<std::result::Result<_, _>>()?
    };
    // One thread reads runs (its own connection), this one judges them: the
    // two overlap, and only a couple of runs are in memory at a time.
    let path = a.db.db.clone();
    let (send, recv) =
        std::sync::mpsc::sync_channel::<(String, Result<(crate::model::RunData, Vec<Value>)>)>(2);
    let reader_ids = ids.clone();
    let reader = std::thread::spawn(move || -> Result<()> {
        let conn = db::open(&path, Mode::ReadOnly)?;
        for id in reader_ids {
            let loaded = crate::db::store::load_run(&conn, &id)
                .and_then(|data| Ok((data, crate::db::store::attached_spans(&conn, &id)?)))
                .map_err(CliError::from);
            if send.send((id, loaded)).is_err() {
                break;
            }
        }
        Ok(())
    });
    let mut rows = Vec::new();
    for (id, loaded) in recv.iter() {
        let judged = loaded.and_then(|(data, spans)| judgements(&data, policy.clone(), &spans));
        match judged {
            Ok(j) if j.is_empty() => writeln!(
                err,
                "Warning: run {} has no policy to judge it by; pass --slo or --slo-file",
                crate::util::printable(&id)
            )?,
            Ok(j) => rows.extend(j),
            Err(e) => writeln!(
                err,
                "Warning: run {}: {}",
                crate::util::printable(&id),
                crate::util::printable(&e.message)
            )?,
        }
    }
    reader
        .join()
        .map_err(|_| CliError::new(Exit::Unexpected, "the reading thread panicked"))??;
    let text = match a.format {
        ReportFormat::Json => {
            let v: Vec<Value> = rows
                .iter()
                .map(report::judge::CaseJudgement::to_json)
                .collect();
            let mut s = crate::pyjson::dumps_pretty(&Value::Array(v));
            s.push('\n');
            s
        }
        ReportFormat::Txt => report::judge::render_table(&rows),
    };
    match &a.output {
        Some(path) => {
            write_file(path, &text)?;
            writeln!(out, "Judgements saved to: {}", path.display())?;
        }
        None => out.write_all(text.as_bytes())?,
    }
    if a.check {
        return gate(&rows, err);
    }
    Ok(Exit::Ok)
}

fn cmd_analyze(a: AnalyzeArgs, out: &mut dyn Write, err: &mut dyn Write) -> Result<Exit> {
    let request = AnalyzeRequest {
        artifact: a.artifact,
        server_telemetry: a.server_telemetry,
        vllm_spans: a.vllm_spans,
        slo: a.slo,
        slo_file: a.slo_file,
        direct_server: a.direct_server,
        clock_offset_ns: a.clock_offset_ns,
        clock_uncertainty_ns: a.clock_uncertainty_ns,
    };
    let rep = analyze(&request)?;
    emit(&rep, a.format, a.output.as_deref(), out, err)
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
    };
    let rep = report::build(&data, inputs)?;
    clock.mark("report");
    // The caller exits right after the report: skip freeing the run's data.
    std::mem::forget(data);
    drop(conn);
    drop(scratch);
    Ok(rep)
}

fn cmd_compare(
    mut a: crate::compare::CompareArgs,
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
    crate::compare::run(&a, out, err).map_err(|e| CliError::new(e.exit(), e.to_string()))
}
