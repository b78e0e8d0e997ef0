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
            None => CliError::new(e.exit(), e.to_string()),
        }
    }
}

/// An ingest's failure as the command reports it. A failure of the storage
/// (a full disk, a read-only database) names the file being ingested and
/// the database, says what to do and exits [`Exit::Database`]; bad input is
/// said in stormlog's words ([`refusal`]).
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
        _ => refusal(e),
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

/// `report`'s formats: the two of `analyze`, and a self-contained HTML page.
#[derive(Debug, Clone, Copy, ValueEnum, PartialEq, Eq)]
pub enum ReportPageFormat {
    // Text for people; the reference's report JSON (`--all`: the
    // judgements); one self-contained HTML file with charts (`--all`: the
    // project page). Plain comments: doc comments on the values would switch
    // clap to the long help layout.
    Txt,
    Json,
    Html,
    Csv,
}

impl ReportPageFormat {
    fn plain(self) -> ReportFormat {
        match self {
            ReportPageFormat::Json => ReportFormat::Json,
            _ => ReportFormat::Txt,
        }
    }
}

/// How a table of rows is printed.
#[derive(Debug, Clone, Copy, ValueEnum, PartialEq, Eq)]
pub enum TableFormat {
    /// Aligned columns for a terminal.
    #[value(name = "txt", alias = "table")]
    Table,
    /// A JSON array of objects.
    Json,
    /// Comma-separated values with a header line.
    Csv,
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

#[derive(Debug, Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct RunsArgs {
    #[command(flatten)]
    pub db: DbArg,
    /// Output format: txt (alias table) for people, json, csv.
    #[arg(long, value_enum, default_value = "txt")]
    pub format: TableFormat,
    #[command(subcommand)]
    pub action: Option<RunsAction>,
}

#[derive(Debug, clap::Subcommand)]
pub enum RunsAction {
    /// Delete runs and everything attached to them (requests, records,
    /// telemetry, spans), all in one transaction.
    #[command(
        visible_alias = "rm",
        after_help = "Examples:\n  stormlog runs delete o100            # a stray ingest\n  stormlog runs delete r1 r2 --yes     # no question on a terminal"
    )]
    Delete(RunsDeleteArgs),
}

#[derive(Debug, Args)]
pub struct MigrateArgs {
    #[command(flatten)]
    pub db: DbArg,
}

#[derive(Debug, Args)]
pub struct RunsDeleteArgs {
    #[command(flatten)]
    pub db: DbArg,
    /// Delete without asking (on a terminal, stormlog asks first).
    #[arg(long, short = 'y')]
    pub yes: bool,
    /// Whole run ids (see `stormlog runs`; a prefix is only suggested back).
    #[arg(required = true, value_name = "RUN")]
    pub runs: Vec<String>,
}

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
    pub parquet: super::export_parquet::ParquetFlags,
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

#[derive(Debug, Args)]
pub struct ReportArgs {
    #[command(flatten)]
    pub db: DbArg,
    /// Output format: txt for people, json (the reference's report JSON),
    /// html (one self-contained page with charts; with --all, the project page),
    /// csv (one row per judged case: the judgement lines of --all).
    #[arg(long, value_enum, default_value = "txt")]
    pub format: ReportPageFormat,
    /// Write the report to FILE instead of stdout (parent directories are created).
    #[arg(long, short = 'o', value_name = "FILE")]
    pub output: Option<PathBuf>,
    #[command(flatten)]
    pub join: JoinFlags,
    /// Re-judge the run with an SLO criterion KEY:MS[@TARGET] (repeatable),
    /// e.g. ttft:500@95%: at most 500 ms, met by at least 95% of the offered
    /// requests. Or the path of a policy file.
    #[arg(long, value_name = "KEY:MS[@TARGET]")]
    pub slo: Vec<String>,
    /// Re-judge the run with an SLO policy file (JSON or TOML).
    #[arg(long = "slo-file", value_name = "FILE")]
    pub slo_file: Option<PathBuf>,
    /// The joint attainment target of a --slo policy (every criterion passes),
    /// as 90% or 0.9.
    #[arg(long, value_name = "TARGET", requires = "slo")]
    pub target: Option<String>,
    /// Judge every stored run (one line per run and case) instead of reporting one.
    #[arg(long, conflicts_with = "runs")]
    pub all: bool,
    /// Exit 4 unless every attainment target is met; also when nothing could
    /// be judged (no policy, no target, no case).
    #[arg(long)]
    pub check: bool,
    /// Also report this slice of each case's measured phase, NAME=START:END in
    /// seconds from the phase's start, as a case of its own (repeatable; one
    /// run's report only). See docs/compare.md, "Segments".
    #[arg(long, value_name = "NAME=START:END", conflicts_with = "all")]
    pub segment: Vec<String>,
    /// A segment's requests: those that arrived in it, or that overlap it
    /// (overlap: no rates, as requests in flight grow with their latency).
    #[arg(long = "segment-membership", value_enum, default_value = "arrival")]
    pub segment_membership: SegmentMembership,
    /// Run ids (see `stormlog runs`; a unique prefix will do). One run gives
    /// its full report; several give one judgement line per run and case.
    #[arg(value_name = "RUN")]
    pub runs: Vec<String>,
}

/// Which requests belong to a segment (`--segment-membership`).
#[derive(Debug, Clone, Copy, ValueEnum, PartialEq, Eq)]
pub enum SegmentMembership {
    /// Those whose intended arrival (else send time) falls in it.
    Arrival,
    /// Those in flight at any time during it.
    Overlap,
}

impl From<SegmentMembership> for crate::analysis::segment::Membership {
    fn from(m: SegmentMembership) -> Self {
        match m {
            SegmentMembership::Arrival => Self::Arrival,
            SegmentMembership::Overlap => Self::Overlap,
        }
    }
}

/// `--segment` values, checked as `infer compare` checks them; every
/// refusal is a usage error here (exit 2).
fn report_segments(texts: &[String]) -> Result<Vec<crate::analysis::segment::Segment>> {
    use crate::analysis::segment::{check_unique, Segment};
    let usage =
        |e: crate::analysis::segment::SegmentError| CliError::new(Exit::Usage, e.to_string());
    let segments = texts
        .iter()
        .map(|t| Segment::parse(t))
        .collect::<std::result::Result<Vec<_>, _>>()
        .map_err(usage)?;
    check_unique(&segments).map_err(usage)?;
    Ok(segments)
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
        Command::Runs(a) => cmd_runs(a, out, err),
        Command::Migrate(a) => cmd_migrate(a, out),
        Command::Compare(a) => cmd_compare(*a, false, out, err),
        Command::Infer {
            command: InferCommand::Compare(a),
        } => cmd_compare(*a, true, out, err),
        Command::Sql(a) => crate::sqlcmd::run(&a, out, err).map_err(|e| CliError {
            broken_pipe: e.is_broken_pipe(),
            exit: e.exit(),
            message: e.to_string(),
        }),
        Command::History(a) => super::history::run(a, out),
        Command::Export(a) => cmd_export(a, out),
        Command::Slo(a) => super::slo::run(a, out, err),
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

fn cmd_ingest(a: IngestArgs, out: &mut dyn Write, err: &mut dyn Write) -> Result<Exit> {
    let mut conn = db::open(&a.db.db, Mode::ReadWrite)?;
    let opts = ingest::Options {
        replace: a.replace,
        progress: true,
        run: a.run.clone(),
        skip_digest: false,
        run_id: a.run_id.clone(),
        analyze: false,
    };
    // Each file is its own transaction: one line per file, in argument
    // order, says what landed or why nothing of it did.
    let mut tally = [0usize; 3]; // stored, unchanged, refused
    let mut worst = Exit::Ok;
    for path in &a.files {
        let started = std::time::Instant::now();
        match ingest::ingest_path(&mut conn, path, &opts) {
            Ok(done) => {
                let what = match done.kind {
                    Kind::Artifact => "artifact",
                    Kind::Telemetry => "telemetry",
                    Kind::Spans => "vLLM spans",
                    Kind::Import(tool) => tool.name(),
                };
                let verb = match done.outcome {
                    Outcome::Added => "ingested",
                    Outcome::Replaced => "replaced",
                    Outcome::Unchanged => "unchanged (already ingested)",
                };
                tally[usize::from(done.outcome == Outcome::Unchanged)] += 1;
                writeln!(
                    out,
                    "{}: {what} {verb}: run {}, {} records, {} in {}",
                    crate::util::printable(&path.display().to_string()),
                    crate::util::printable(&done.run_id),
                    done.records,
                    crate::util::human_bytes(done.bytes),
                    crate::util::human_seconds(started.elapsed().as_secs_f64())
                )?;
            }
            Err(e) => {
                tally[2] += 1;
                let e = ingest_failure(e, path, &a.db.db);
                if e.exit.code() > worst.code() {
                    worst = e.exit;
                }
                writeln!(err, "Error: {}", e.message)?;
            }
        }
    }
    if a.files.len() > 1 {
        let [stored, unchanged, refused] = tally;
        let mut line = format!("{} files: {stored} stored", a.files.len());
        if unchanged > 0 {
            line.push_str(&format!(", {unchanged} unchanged"));
        }
        if refused > 0 {
            line.push_str(&format!(
                ", {refused} refused (nothing of a refused file was stored; the others were)"
            ));
        }
        writeln!(out, "{line}")?;
    }
    Ok(worst)
}

/// An ingest failure in stormlog's words (`ingest::words`), with the fix where one is known.
fn refusal(e: IngestError) -> CliError {
    match e {
        IngestError::Invalid { path, message } => {
            let plain = ingest::words::plain(&message);
            let sep = if plain.starts_with("is not ") {
                " "
            } else {
                ": "
            };
            CliError::new(
                Exit::InvalidInput,
                format!("{}{sep}{plain}; nothing from it was stored", path.display()),
            )
        }
        other => other.into(),
    }
}

/// The database at `path` for a command that changes an existing one: never
/// created (a missing one is the read commands' refusal), migrated if older.
fn open_existing(path: &Path) -> Result<rusqlite::Connection> {
    if !path.exists() {
        return Err(DbError::Missing {
            path: path.to_owned(),
        }
        .into());
    }
    Ok(db::open(path, Mode::ReadWrite)?)
}

fn cmd_migrate(a: MigrateArgs, out: &mut dyn Write) -> Result<Exit> {
    let conn = open_existing(&a.db.db)?;
    let version: i64 = conn
        .pragma_query_value(None, "user_version", |r| r.get(0))
        .map_err(|e| CliError::new(Exit::Unexpected, format!("{}: {e}", a.db.db.display())))?;
    writeln!(out, "{}: schema version {version}", a.db.db.display())?;
    Ok(Exit::Ok)
}

fn cmd_runs_delete(a: RunsDeleteArgs, out: &mut dyn Write, err: &mut dyn Write) -> Result<Exit> {
    let mut conn = open_existing(&a.db.db)?;
    let ids: Vec<String> = a
        .runs
        .iter()
        .map(|r| crate::db::runs::resolve_whole(&conn, r))
        .collect::<std::result::Result<_, _>>()?;
    use std::io::IsTerminal;
    if !a.yes && std::io::stdin().is_terminal() {
        write!(
            err,
            "Delete {} and everything attached? [y/N] ",
            ids.join(", ")
        )?;
        let mut answer = String::new();
        std::io::stdin().read_line(&mut answer)?;
        if !matches!(answer.trim(), "y" | "Y" | "yes") {
            writeln!(err, "Nothing deleted.")?;
            return Ok(Exit::Ok);
        }
    }
    for id in crate::db::runs::delete(&mut conn, &ids)? {
        writeln!(out, "deleted run {id}")?;
    }
    Ok(Exit::Ok)
}

fn cmd_runs(a: RunsArgs, out: &mut dyn Write, err: &mut dyn Write) -> Result<Exit> {
    if let Some(RunsAction::Delete(d)) = a.action {
        return cmd_runs_delete(d, out, err);
    }
    let conn = db::read::open_for_reading(&a.db.db)?;
    let rows = crate::db::runs::list(&conn)?;
    match a.format {
        TableFormat::Json => {
            let v: Vec<Value> = rows
                .iter()
                .map(|r| {
                    json!({"run_id": r.run_id, "started_at_ns": r.started_at_ns, "started_at": r.started_at_ns.map(|ns| crate::util::iso8601_utc((ns / 1_000_000_000) as u64)),
                           "clock": r.clock_kind, "tool_wall_time": r.wall_time,
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
        TableFormat::Table | TableFormat::Csv => {
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
                        r.started_shown(),
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
            if a.format == TableFormat::Csv {
                for row in std::iter::once(header.map(str::to_owned).to_vec()).chain(body) {
                    let cells: Vec<String> = row
                        .iter()
                        .map(|c| crate::sqlcmd::format::csv_field(c))
                        .collect();
                    writeln!(out, "{}", cells.join(","))?;
                }
                return Ok(Exit::Ok);
            }
            out.write_all(crate::util::table(&header, &body).as_bytes())?;
            if rows.is_empty() {
                writeln!(out, "(no runs; `stormlog ingest FILE` adds one)")?;
            }
        }
    }
    Ok(Exit::Ok)
}

fn cmd_export(a: ExportArgs, out: &mut dyn Write) -> Result<Exit> {
    if let Some(dir) = a.parquet.parquet.clone() {
        let policy = cli_policy(&a.slo, a.slo_file.as_deref())?;
        return super::export_parquet::run(dir, &a.parquet, a.db.db, a.run, policy, out);
    }
    let [name] = a.run.as_slice() else {
        return Err(CliError::new(
            Exit::Usage,
            "export writes one run as JSONL; name exactly one (--parquet DIR takes several)",
        ));
    };
    let conn = db::read::open_for_reading(&a.db.db)?;
    let run = crate::db::runs::resolve(&conn, name)?;
    if let Some(dir) = &a.files {
        return export_files(&conn, &run, dir, out);
    }
    if !a.telemetry {
        // An imported run: the tool's own result file, as it was read.
        if let Some((index, _, _)) = crate::db::imports::files(&conn, &run)?.first() {
            let bytes = crate::db::imports::original(&conn, &run, *index)?;
            match a.output {
                Some(path) => std::fs::write(&path, &bytes).map_err(|e| {
                    CliError::new(Exit::Unexpected, format!("{}: {e}", path.display()))
                })?,
                None => out.write_all(&bytes)?,
            }
            return Ok(Exit::Ok);
        }
    }
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

/// `export RUN --files DIR`: every original file of an imported run, by name.
fn export_files(conn: &db::Connection, run: &str, dir: &Path, out: &mut dyn Write) -> Result<Exit> {
    let files = crate::db::imports::files(conn, run)?;
    if files.is_empty() {
        return Err(CliError::new(
            Exit::Usage,
            format!(
                "run {run} was not imported from another tool's files: it has no original files \
                 to write (`stormlog export {run}` gives its artifact back)"
            ),
        ));
    }
    // Names come from the database: only a plain file name is written, so
    // no stored name can reach outside DIR.
    let plain = |n: &str| {
        let p = Path::new(n);
        !n.is_empty()
            && p.components().count() == 1
            && matches!(p.components().next(), Some(std::path::Component::Normal(_)))
    };
    if let Some((_, _, bad)) = files.iter().find(|(_, _, n)| !plain(n)) {
        return Err(CliError::new(
            Exit::Unexpected,
            format!("run {run}: the stored file name {bad:?} is not a plain file name"),
        ));
    }
    std::fs::create_dir_all(dir)
        .map_err(|e| CliError::new(Exit::Unexpected, format!("{}: {e}", dir.display())))?;
    for (index, role, name) in &files {
        let bytes = crate::db::imports::original(conn, run, *index)?;
        let path = dir.join(name);
        std::fs::write(&path, &bytes)
            .map_err(|e| CliError::new(Exit::Unexpected, format!("{}: {e}", path.display())))?;
        writeln!(out, "{} ({role}, {} bytes)", path.display(), bytes.len())?;
    }
    Ok(Exit::Ok)
}

pub(crate) fn write_file(path: &Path, text: &str) -> Result<()> {
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
    let text = match format {
        ReportFormat::Json => rep.to_json(),
        ReportFormat::Txt => rep.to_text(),
    };
    write_report(rep, &text, output, out, err)
}

/// `emit` for stormlog's own `report`: its text in people's units, with hints
/// (`report::people`); the JSON is the reference's.
fn emit_for_people(
    rep: &report::Report,
    format: ReportFormat,
    output: Option<&Path>,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<Exit> {
    if format == ReportFormat::Json {
        return emit(rep, format, output, out, err);
    }
    let text = report::people::for_people(&rep.to_text());
    write_report(rep, &text, output, out, err)
}

/// The report's warnings on stderr (their stored names escaped), then its
/// rendered `text` to `output` or stdout.
fn write_report(
    rep: &report::Report,
    text: &str,
    output: Option<&Path>,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<Exit> {
    for w in &rep.warnings {
        writeln!(err, "Warning: {}", crate::util::printable(w))?;
    }
    match output {
        Some(path) => {
            write_file(path, text)?;
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
pub(crate) fn cli_policy(
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

/// `report`'s policy: `cli_policy` with the targets stormlog's own flags may
/// carry (`slo::targets`), and a plain word for a policy file that is not there.
fn report_policy(a: &ReportArgs) -> Result<Option<(crate::slo::Policy, crate::slo::PolicySource)>> {
    let mut criteria = Vec::new();
    let mut marginal = Vec::new();
    for flag in &a.slo {
        let is_file = flag.ends_with(".toml") || flag.ends_with(".json");
        if is_file && !Path::new(flag).is_file() {
            return Err(CliError::new(
                Exit::Usage,
                format!("--slo {flag}: no such policy file (a --slo value is KEY:MS[@TARGET] or the path of a .toml or .json policy)"),
            ));
        }
        let (criterion, target) = if is_file {
            (flag.as_str(), None)
        } else {
            crate::slo::targets::split_target(flag)?
        };
        criteria.push(criterion.to_owned());
        marginal.push(target);
    }
    let joint = a
        .target
        .as_deref()
        .map(|t| crate::slo::targets::parse_target("--target", t))
        .transpose()?;
    let mut policy = cli_policy(&criteria, a.slo_file.as_deref())?;
    if let Some((p, crate::slo::PolicySource::Flags)) = policy.as_mut() {
        crate::slo::targets::apply(p, &marginal, joint);
    } else if marginal.iter().any(Option::is_some) || joint.is_some() {
        return Err(CliError::new(
            Exit::Usage,
            "targets (@TARGET, --target) go with --slo KEY:MS criteria; a policy file carries its own",
        ));
    }
    Ok(policy)
}

fn cmd_report(a: ReportArgs, out: &mut dyn Write, err: &mut dyn Write) -> Result<Exit> {
    if !a.all && a.runs.is_empty() {
        return Err(CliError::new(
            Exit::Usage,
            "name a run (`stormlog runs` lists them), or pass --all to judge every run",
        ));
    }
    let policy = report_policy(&a)?;
    let segments = report_segments(&a.segment)?;
    if !segments.is_empty() && (a.all || a.runs.len() > 1 || a.format == ReportPageFormat::Csv) {
        return Err(CliError::new(
            Exit::Usage,
            "--segment needs one run's report: several runs (or --format csv) give judgement lines, which have no segments",
        ));
    }
    let conn = db::read::open_for_reading(&a.db.db)?;
    if a.format == ReportPageFormat::Html {
        return report_html(&conn, &a, policy, out, err);
    }
    if a.all || a.runs.len() > 1 || a.format == ReportPageFormat::Csv {
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
        segments,
        membership: a.segment_membership.into(),
    };
    let has_policy = policy.is_some() || data.of_type("infer.slo").next().is_some();
    let mut rep = report::build(&data, inputs)?;
    if let Some(p) = crate::db::imports::provenance(&conn, &run)? {
        report::imported::annotate(&mut rep, &p, &data);
    }
    clock.mark("report");
    let exit = emit_for_people(&rep, a.format.plain(), a.output.as_deref(), out, err)?;
    let exit = if a.check {
        let judged = judgements(&data, policy, &spans)?;
        let unjudged = if judged.is_empty() && !has_policy {
            vec![run.clone()]
        } else {
            vec![]
        };
        gate(&judged, &unjudged, err)?
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

/// `--check`: exit 4 unless every target of every judged case was met, and
/// also when nothing could be judged: no case, a run without a policy
/// (`unjudged`), or a policy without targets. A gate that cannot fail
/// would pass every build.
fn gate(
    judged: &[report::judge::CaseJudgement],
    unjudged: &[String],
    err: &mut dyn Write,
) -> Result<Exit> {
    let mut failed = false;
    for id in unjudged {
        writeln!(
            err,
            "check failed: run {id}: no SLO policy to judge it by; pass --slo KEY:MS@TARGET or --slo-file FILE"
        )?;
        failed = true;
    }
    if judged.is_empty() && unjudged.is_empty() {
        writeln!(err, "check failed: nothing to judge (no run, or no case)")?;
        failed = true;
    }
    for j in judged {
        match j.verdict() {
            "met" => {}
            "no target" => {
                writeln!(
                    err,
                    "check failed: run {} case {}: no target; the policy sets no attainment target (add one: --slo ttft:500@95%, --target 90%)",
                    j.run_id, j.case_id
                )?;
                failed = true;
            }
            verdict => {
                writeln!(
                    err,
                    "check failed: run {} case {}: {verdict}",
                    j.run_id, j.case_id
                )?;
                failed = true;
            }
        }
    }
    Ok(if failed { Exit::GateFailed } else { Exit::Ok })
}

/// `report --all` / several runs: one judgement line per run and case.
fn judge_runs(
    conn: &db::Connection,
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
    // Runs are loaded and judged on several threads (ops::judge_all).
    let judged_all = crate::ops::judge_all::load_and_judge(&a.db.db, &ids, |data, spans| {
        judgements(data, policy.clone(), spans)
    })?;
    let mut rows = Vec::new();
    let mut unjudged = Vec::new();
    for (id, judged) in ids.into_iter().zip(judged_all) {
        match judged {
            Ok(j) if j.is_empty() => {
                writeln!(
                    err,
                    "Warning: run {} has no policy to judge it by; pass --slo or --slo-file",
                    crate::util::printable(&id)
                )?;
                unjudged.push(id);
            }
            Ok(j) => rows.extend(j),
            Err(e) => writeln!(
                err,
                "Warning: run {}: {}",
                crate::util::printable(&id),
                crate::util::printable(&e.message)
            )?,
        }
    }
    let text = match a.format {
        ReportPageFormat::Csv => report::judge::render_csv(&rows),
        ReportPageFormat::Json => {
            let v: Vec<Value> = rows
                .iter()
                .map(report::judge::CaseJudgement::to_json)
                .collect();
            let mut s = crate::pyjson::dumps_pretty(&Value::Array(v));
            s.push('\n');
            s
        }
        ReportPageFormat::Txt | ReportPageFormat::Html => report::judge::render_table(&rows),
    };
    match &a.output {
        Some(path) => {
            write_file(path, &text)?;
            writeln!(out, "Judgements saved to: {}", path.display())?;
        }
        None => out.write_all(text.as_bytes())?,
    }
    if a.check {
        return gate(&rows, &unjudged, err);
    }
    Ok(Exit::Ok)
}

/// `report --format html`: one run's page, or the project page (`--all`, several runs).
fn report_html(
    conn: &db::Connection,
    a: &ReportArgs,
    policy: Option<(crate::slo::Policy, crate::slo::PolicySource)>,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<Exit> {
    let cfg = crate::ops::html::PageConfig {
        policy,
        direct_server: a.join.direct_server,
        clock_offset_ns: a.join.clock_offset_ns,
        clock_uncertainty_ns: a.join.clock_uncertainty_ns,
    };
    let page_err = |e: crate::ops::html::PageError| CliError::new(e.exit, e.message);
    let page = if a.all || a.runs.len() > 1 {
        let ids: Vec<String> = if a.all {
            crate::db::runs::ids(conn)?
        } else {
            a.runs
                .iter()
                .map(|r| crate::db::runs::resolve(conn, r))
                .collect::<std::result::Result<_, _>>()?
        };
        let page = crate::ops::html::project_page(conn, &ids, &cfg).map_err(page_err)?;
        for w in &page.warnings {
            writeln!(err, "Warning: {}", crate::util::printable(w))?;
        }
        page
    } else {
        let run = crate::db::runs::resolve(conn, &a.runs[0])?;
        crate::ops::html::run_page(conn, &run, &cfg).map_err(page_err)?
    };
    match &a.output {
        Some(path) => {
            write_file(path, &page.html)?;
            writeln!(out, "HTML report saved to: {}", path.display())?;
        }
        None => out.write_all(page.html.as_bytes())?,
    }
    // `--check` with a page: the page is written either way (it shows why),
    // then the exit status is the gate's, judged as the page shows it.
    if a.check {
        return gate(&page.judged, &page.unjudged, err);
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
        ..Default::default()
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
