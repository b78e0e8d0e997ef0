//! `stormlog ingest`: files into the project database, one transaction per file.
//!
//! The kind of a file is told by its content: a first record of event type
//! `infer.telemetry_sample` makes it server telemetry, anything else is read as
//! a client artifact (docs/artifact.md). Bad input changes nothing: the transaction
//! is rolled back and the error names the file and the line.
pub mod lines;
pub mod peers;
pub mod spans;
#[cfg(test)]
mod store_tests;
pub mod telemetry;
pub mod words;

use std::fs::File;
use std::io::BufReader;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use crate::db::encode as fast;
use crate::db::ingest::{without_triggers, ArtifactRun, ArtifactTx};
use crate::db::store::Writer;
use crate::db::{Connection, DbError};
use crate::model::transport::{Contexts, Line};
use crate::py::json as pyjson;
use lines::Lines;

/// Why an ingest failed.
#[derive(Debug, thiserror::Error)]
pub enum IngestError {
    /// The input is not valid; nothing was stored.
    #[error("{display}: {message}", display = .path.display())]
    Invalid { path: PathBuf, message: String },
    /// A different file already holds this run id.
    #[error(
        "{display}: run '{run}' is already stored from another file ({existing}); pass --replace to replace it",
        display = .path.display(),
        run = crate::util::printable(.run_id)
    )]
    Conflict {
        path: PathBuf,
        run_id: String,
        existing: String,
    },
    #[error("{display}: {source}", display = .path.display())]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(transparent)]
    Db(#[from] DbError),
}

impl IngestError {
    pub(crate) fn invalid(path: &Path, message: impl Into<String>) -> Self {
        IngestError::Invalid {
            path: path.to_owned(),
            message: message.into(),
        }
    }

    fn at_line(path: &Path, line: u64, message: impl std::fmt::Display) -> Self {
        Self::invalid(path, format!("line {line}: {message}"))
    }
}

/// What kind of file an input is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Artifact,
    Telemetry,
    /// A vLLM span file (OTLP JSON or span lines); needs a run to attach to.
    Spans,
    /// Another tool's results (docs/import.md).
    Import(crate::import::Tool),
}

/// What happened to one file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    Added,
    Replaced,
    Unchanged,
}

#[derive(Debug, Clone)]
pub struct Ingested {
    pub kind: Kind,
    pub run_id: String,
    pub records: u64,
    pub bytes: u64,
    pub outcome: Outcome,
}

#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Replace a run stored from a different file.
    pub replace: bool,
    /// Attach telemetry and span files to this run instead of the run id they carry.
    pub run: Option<String>,
    /// Draw a progress bar on stderr.
    pub progress: bool,
    /// Do not hash the artifact. The digest only tells a file ingested again
    /// from a different one, so a scratch database for one report skips it
    /// (`artifact_sha256` stays NULL).
    pub skip_digest: bool,
    /// The run id an import is stored under (default: the tool's own id of
    /// the run, else a content hash).
    pub run_id: Option<String>,
    /// The ingest behind `infer analyze`, which words its refusals as the
    /// reference does: invalid UTF-8 by byte position only, and the recorded
    /// SLO policy (`infer.slo`) left for analyze to check in the reference's
    /// order. Otherwise ingest names the line, and refuses a file whose
    /// policy a report would refuse. Its scratch database also leaves out
    /// the records no report reads (`Writer::report_only`).
    pub analyze: bool,
}

fn open(path: &Path) -> Result<File, IngestError> {
    let file = File::open(path).map_err(|source| IngestError::Io {
        path: path.to_owned(),
        source,
    })?;
    if file.metadata().map(|m| m.is_dir()).unwrap_or(false) {
        return Err(IngestError::invalid(path, "Is a directory"));
    }
    Ok(file)
}

/// Tells an artifact from a telemetry file by its first non-blank line.
pub fn sniff(path: &Path) -> Result<Kind, IngestError> {
    let mut lines = Lines::new(BufReader::new(open(path)?));
    while let Some(line) = lines.next_line().map_err(|source| IngestError::Io {
        path: path.to_owned(),
        source,
    })? {
        // Not UTF-8: the artifact reader refuses it, naming the line.
        if lines.utf8_error.is_some() {
            return Ok(Kind::Artifact);
        }
        if crate::py::text::is_blank(&line) {
            continue;
        }
        return Ok(match pyjson::parse(&line) {
            Ok(v) => match v.get("event_type").and_then(Value::as_str) {
                Some("infer.telemetry_sample") => Kind::Telemetry,
                Some(_) => Kind::Artifact,
                // Span files: OTLP JSON documents, or span lines without an event type.
                None if v.get("resourceSpans").is_some() || v.get("name").is_some() => Kind::Spans,
                None => Kind::Artifact,
            },
            // A pretty-printed OTLP document does not parse line by line.
            Err(_) if line.trim() == "{" => Kind::Spans,
            Err(_) => Kind::Artifact,
        });
    }
    Ok(Kind::Artifact)
}

/// Ingests one file of either kind.
pub fn ingest_path(
    conn: &mut Connection,
    path: &Path,
    opts: &Options,
) -> Result<Ingested, IngestError> {
    ingest_path_ahead(conn, path, opts, None)
}

/// [`ingest_path`], given the file's [`Reading`] when [`read_ahead`] already
/// started it (while the file before it was being written).
pub fn ingest_path_ahead(
    conn: &mut Connection,
    path: &Path,
    opts: &Options,
    ahead: Option<Reading>,
) -> Result<Ingested, IngestError> {
    if let Some(reading) = ahead {
        return without_triggers(conn, |conn| write_artifact(conn, reading, opts));
    }
    match route(path)? {
        // With the foreign-key checks off, as for an artifact (and for the
        // same reason: the run's row is written first and never deleted, so
        // they could not fail, and they cost a statement journal and a
        // lookup per row): a replaced import deletes its rows, files and
        // chunks itself (db::imports).
        Route::Peers | Route::Kind(Kind::Import(_)) => {
            without_triggers(conn, |conn| peers::ingest(conn, path, opts))
        }
        Route::Kind(Kind::Artifact) => ingest_artifact(conn, path, opts),
        Route::Kind(Kind::Telemetry) => telemetry::attach(conn, path, opts.run.as_deref(), opts),
        Route::Kind(Kind::Spans) => match opts.run.as_deref() {
            Some(run) => spans::attach(conn, path, run, opts),
            None => Err(IngestError::invalid(
                path,
                "a vLLM span file belongs to a run: pass --run RUN (see `stormlog runs`)",
            )),
        },
    }
}

/// Where [`ingest_path`] sends a file.
enum Route {
    /// Another tool's results: a folder of its output, or a file whose
    /// content names the tool.
    Peers,
    /// What the file's first line says it is.
    Kind(Kind),
}

fn route(path: &Path) -> Result<Route, IngestError> {
    if path.is_dir() || peers::detect(path)?.is_some() {
        return Ok(Route::Peers);
    }
    Ok(Route::Kind(sniff(path)?))
}

pub(crate) use crate::db::ingest::now_utc;

/// Run-level facts gathered while streaming.
#[derive(Default)]
struct Facts {
    run_id: Option<String>,
    session_id: Option<String>,
    started_at_ns: Option<i64>,
    model: Option<String>,
    endpoint: Option<String>,
    has_session_or_request: bool,
}

impl Facts {
    /// What a fast-path line says about the run.
    fn observe_line(&mut self, f: &fast::LineFacts) {
        if f.is_session {
            self.has_session_or_request = true;
            if self.session_id.is_none() {
                self.session_id = f.session_id.clone();
                self.started_at_ns = f.timestamp_ns;
                self.model = f.model.clone();
                self.endpoint = f.endpoint.clone();
            }
        }
        if f.is_request {
            self.has_session_or_request = true;
        }
        if self.run_id.is_none() {
            self.run_id = f.artifact_run_id.clone();
        }
    }

    fn observe(&mut self, decoded: &Map<String, Value>) {
        let et = decoded.get("event_type").and_then(Value::as_str);
        match et {
            Some("infer.artifact") if self.run_id.is_none() => {
                if let Some(id) = decoded
                    .get("context")
                    .and_then(|c| c.get("run_id"))
                    .and_then(Value::as_str)
                {
                    self.run_id = Some(id.to_owned());
                }
            }
            Some("infer.session") => {
                self.has_session_or_request = true;
                if self.session_id.is_none() {
                    self.session_id = decoded
                        .get("session_id")
                        .and_then(Value::as_str)
                        .map(str::to_owned);
                    self.started_at_ns = decoded.get("timestamp_ns").and_then(Value::as_i64);
                    if let Some(cfg) = decoded.get("config") {
                        self.model = cfg.get("model").and_then(Value::as_str).map(str::to_owned);
                        self.endpoint = cfg
                            .get("endpoint")
                            .and_then(Value::as_str)
                            .map(str::to_owned);
                    }
                }
            }
            Some("infer.request") => self.has_session_or_request = true,
            _ => {}
        }
    }
}

/// What to do with the rows of the file being read.
enum Sink {
    /// Run id not known yet: keep the rows.
    Buffer(Vec<Pending>),
    /// Writing into the transaction.
    Write,
    /// The run exists from another file (or this very file): only hash the rest.
    Skip {
        existing_sha: Option<String>,
        existing_name: String,
    },
}

enum Pending {
    Row(i64, Box<fast::Row>),
    Context(i64, String, Value),
    Record(i64, Map<String, Value>, bool),
}

/// A batch of prepared lines: (physical line number, what it became).
type Batch = Vec<(u64, fast::Prepared)>;

/// What the reader thread reports when the file ends.
struct ReadEnd {
    line_count: u64,
    bytes: u64,
    sha256: Option<String>,
    /// The first invalid UTF-8 (Python's message) and its line.
    utf8_error: Option<(String, u64)>,
}

/// Lines per prepared batch. Up to four batches are alive at once (two
/// queued, one being prepared, one being written), each line with its
/// encoded row: about 3.5 MB for `large`'s lines. Every page the ingest
/// touches stays resident for the rest of an analyze (the allocator returns
/// freed memory to the system only after a delay), so this bounds the
/// analyze's peak as much as the ingest's. With 512 lines and four queued
/// batches the ingest peaked at 21-39 MB of a 90,000-request analyze, and
/// the analyze at up to 94 MB; with these, at 20-21 MB, at the same speed.
const BATCH_LINES: usize = 256;

/// Reads the file and prepares batches of lines in parallel, in order.
fn read_batches(
    file: File,
    digest: bool,
    keep: fast::Keep,
    bar: Option<indicatif::ProgressBar>,
    tx: std::sync::mpsc::SyncSender<Batch>,
) -> std::io::Result<ReadEnd> {
    use rayon::prelude::*;
    let mut lines = Lines::hashing(BufReader::with_capacity(1 << 20, file), digest);
    loop {
        let mut raw: Vec<(u64, String)> = Vec::with_capacity(BATCH_LINES);
        while raw.len() < BATCH_LINES {
            match lines.next_line()? {
                // The file is refused for invalid UTF-8 whatever follows:
                // nothing more is read or prepared (a huge bad line costs
                // the line, not a parse of it).
                Some(_) if lines.utf8_error.is_some() => break,
                Some(l) => raw.push((lines.line_no, l)),
                None => break,
            }
        }
        if let Some(bar) = &bar {
            bar.set_position(lines.bytes_read);
        }
        let done = raw.len() < BATCH_LINES || lines.utf8_error.is_some();
        let batch: Batch = raw
            .into_par_iter()
            .map(|(n, l)| (n, fast::prepare_as(l, keep)))
            .collect();
        if !batch.is_empty() && tx.send(batch).is_err() {
            break; // the writer stopped (an error): stop reading
        }
        if done {
            break;
        }
    }
    if let Some(bar) = &bar {
        bar.finish_and_clear();
    }
    let (line_count, bytes) = (lines.line_no, lines.bytes_read);
    let utf8_error = lines.utf8_error.take().map(|m| (m, lines.utf8_error_line));
    Ok(ReadEnd {
        line_count,
        bytes,
        sha256: lines.sha256_hex(),
        utf8_error,
    })
}

/// Ingests a client artifact (docs/artifact.md), streaming it: one thread reads and
/// prepares lines (in parallel batches), this one decodes the context transport
/// in order and writes rows into one transaction.
///
/// Triggers are off on the connection meanwhile: the only ones drop a run's
/// request pack when its rows change (migrations/0004_request_packs.sql), and
/// the ingest writes the pack itself. Firing one per row written would cost
/// the ingest a statement per request.
pub fn ingest_artifact(
    conn: &mut Connection,
    path: &Path,
    opts: &Options,
) -> Result<Ingested, IngestError> {
    let reading = Reading::start(path, opts)?;
    without_triggers(conn, |conn| write_artifact(conn, reading, opts))
}

/// A client artifact being read and prepared on a thread of its own
/// ([`read_batches`]), up to the queue's few batches ahead of its writing.
/// Started by [`ingest_artifact`], or by [`read_ahead`] while the file
/// before it is still being written; nothing is written until
/// [`ingest_path_ahead`] takes it, in its own transaction.
pub struct Reading {
    path: PathBuf,
    recv: std::sync::mpsc::Receiver<Batch>,
    reader: std::thread::JoinHandle<std::io::Result<ReadEnd>>,
    /// Drawn only once the writing starts (a file read ahead stays quiet
    /// while the one before it shows its bar).
    bar: Option<indicatif::ProgressBar>,
}

impl Reading {
    fn start(path: &Path, opts: &Options) -> Result<Reading, IngestError> {
        let file = open(path)?;
        let total = file.metadata().map(|m| m.len()).unwrap_or(0);
        let bar = crate::util::progress_bar(opts.progress, total, path);
        if let Some(bar) = &bar {
            bar.set_draw_target(indicatif::ProgressDrawTarget::hidden());
        }
        let digest = !opts.skip_digest;
        // A scratch database keeps only what a report reads
        // (`Writer::report_only`): what it drops is not encoded either.
        let keep = match opts.analyze {
            true => fast::Keep::Report,
            false => fast::Keep::All,
        };
        // Two queued batches (see BATCH_LINES).
        let (send, recv) = std::sync::mpsc::sync_channel::<Batch>(2);
        let reader_bar = bar.clone();
        let reader = std::thread::spawn(move || read_batches(file, digest, keep, reader_bar, send));
        Ok(Reading {
            path: path.to_owned(),
            recv,
            reader,
            bar,
        })
    }
}

/// Starts reading `path` ahead of its ingest when it is a client artifact
/// (what [`ingest_path`] would ingest with [`ingest_artifact`]); None for
/// any other file, or one that cannot be read now (its ingest then says
/// why, in its turn).
pub fn read_ahead(path: &Path, opts: &Options) -> Option<Reading> {
    match route(path) {
        Ok(Route::Kind(Kind::Artifact)) => Reading::start(path, opts).ok(),
        _ => None,
    }
}

fn write_artifact(
    conn: &mut Connection,
    reading: Reading,
    opts: &Options,
) -> Result<Ingested, IngestError> {
    let Reading {
        path,
        recv,
        reader,
        bar,
    } = reading;
    let path = path.as_path();
    if let Some(bar) = bar.as_ref().filter(|b| !b.is_finished()) {
        bar.set_draw_target(indicatif::ProgressDrawTarget::stderr());
    }
    let tx = ArtifactTx::begin(conn)?;
    let mut contexts = Contexts::default();
    let mut facts = Facts::default();
    let mut sink = Sink::Buffer(Vec::new());
    let mut writer: Option<Writer> = None;
    let mut seq: i64 = 0;
    let mut first_error: Option<IngestError> = None;
    let mut outcome = Outcome::Added;
    let mut failure: Option<IngestError> = None;
    // The recorded SLO policies and their lines (a report takes exactly one).
    let mut slo_records: Vec<(u64, Value)> = Vec::new();
    'batches: for batch in recv.iter() {
        for (line_no, prepared) in batch {
            if first_error.is_some() {
                continue;
            }
            let pending = match prepared {
                fast::Prepared::Blank => continue,
                fast::Prepared::Error(e) => {
                    first_error = Some(IngestError::at_line(path, line_no, e));
                    continue;
                }
                fast::Prepared::Row(row) => {
                    let event_type = match row.table {
                        Some(t) => Some(crate::db::tables::TABLES[t].event_type),
                        None => row.event_type.as_deref(),
                    };
                    if event_type == Some("infer.slo") {
                        if let Ok(v) = pyjson::parse(&row.line) {
                            slo_records.push((line_no, v));
                        }
                    }
                    facts.observe_line(&row.facts);
                    Pending::Row(seq, row)
                }
                fast::Prepared::Value(parsed) => match contexts.accept(parsed) {
                    Err(e) => {
                        first_error = Some(IngestError::at_line(path, line_no, e));
                        continue;
                    }
                    Ok(Line::Definition {
                        context_id,
                        context,
                    }) => Pending::Context(seq, context_id, context),
                    Ok(Line::Record { raw, transport }) => {
                        let expanded = contexts.expand(&raw);
                        if expanded.get("event_type").and_then(Value::as_str) == Some("infer.slo") {
                            slo_records.push((line_no, Value::Object(expanded.clone())));
                        }
                        facts.observe(&expanded);
                        Pending::Record(seq, raw, transport)
                    }
                },
            };
            seq += 1;
            let step = (|| -> Result<(), IngestError> {
                if let Sink::Buffer(buf) = &mut sink {
                    buf.push(pending);
                    if let Some(run_id) = facts.run_id.clone() {
                        let buffered = std::mem::take(buf);
                        sink = start_run(&tx, path, &run_id, opts, &mut outcome)?;
                        if matches!(sink, Sink::Write) {
                            let mut w = tx.writer(&run_id)?.report_only(opts.analyze);
                            for p in buffered {
                                write_pending(&mut w, p)?;
                            }
                            writer = Some(w);
                        }
                    }
                    return Ok(());
                }
                if let (Sink::Write, Some(w)) = (&sink, writer.as_mut()) {
                    write_pending(w, pending)?;
                }
                Ok(())
            })();
            if let Err(e) = step {
                failure = Some(e);
                break 'batches;
            }
        }
    }
    drop(recv);
    let end = reader
        .join()
        .map_err(|_| IngestError::invalid(path, "the reader thread panicked"))?
        .map_err(|source| IngestError::Io {
            path: path.to_owned(),
            source,
        })?;
    if let Some(e) = failure {
        return Err(e);
    }
    // Python reads the whole file first: invalid UTF-8 anywhere wins.
    if let Some((msg, line)) = end.utf8_error {
        // `infer analyze` words it as the reference does (a byte position);
        // ingest says the line too.
        return Err(match opts.analyze {
            true => IngestError::invalid(path, msg),
            false => IngestError::at_line(path, line, msg),
        });
    }
    if let Some(e) = first_error {
        return Err(e);
    }
    if !facts.has_session_or_request {
        return Err(IngestError::invalid(
            path,
            "not an inference artifact (no infer.session or infer.request records)",
        ));
    }
    if !opts.analyze && !slo_records.is_empty() {
        let recorded: Vec<&Value> = slo_records.iter().map(|(_, v)| v).collect();
        if let Err(e) = crate::slo::select(None, &recorded) {
            // The second record when there are several, else the one.
            let line = slo_records.get(1).unwrap_or(&slo_records[0]).0;
            return Err(IngestError::at_line(path, line, e));
        }
    }
    let sha = end.sha256;
    let (line_count, bytes) = (end.line_count, end.bytes);
    // A legacy artifact without `infer.artifact`: its session id names the run.
    if let Sink::Buffer(buf) = &mut sink {
        let run_id = facts.session_id.clone().unwrap_or_else(|| match &sha {
            Some(sha) => format!("run-{}", &sha[..12]),
            None => "run".to_owned(),
        });
        facts.run_id = Some(run_id.clone());
        let buffered = std::mem::take(buf);
        sink = start_run(&tx, path, &run_id, opts, &mut outcome)?;
        if matches!(sink, Sink::Write) {
            let mut w = tx.writer(&run_id)?.report_only(opts.analyze);
            for p in buffered {
                write_pending(&mut w, p)?;
            }
            writer = Some(w);
        }
    }
    // (Consumed whole, so its borrow of the transaction ends here.)
    writer.map(Writer::finish).transpose()?;
    let run_id = facts.run_id.clone().unwrap_or_default();
    if let Sink::Skip {
        existing_sha,
        existing_name,
    } = sink
    {
        if existing_sha.is_some() && existing_sha == sha {
            // The same file again: nothing changes.
            drop(tx);
            return Ok(Ingested {
                kind: Kind::Artifact,
                run_id,
                records: seq as u64,
                bytes,
                outcome: Outcome::Unchanged,
            });
        }
        return Err(IngestError::Conflict {
            path: path.to_owned(),
            run_id,
            existing: existing_name,
        });
    }
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    tx.commit_run(&ArtifactRun {
        run_id: &run_id,
        session_id: facts.session_id.as_deref(),
        started_at_ns: facts.started_at_ns,
        model: facts.model.as_deref(),
        endpoint: facts.endpoint.as_deref(),
        artifact_name: &name,
        artifact_sha256: sha.as_deref(),
        artifact_bytes: bytes as i64,
        record_count: seq,
        line_count: line_count as i64,
        ingested_at: &now_utc(),
    })?;
    Ok(Ingested {
        kind: Kind::Artifact,
        run_id,
        records: seq as u64,
        bytes,
        outcome,
    })
}

/// Decides, once the run id is known, whether rows are written or skipped.
fn start_run(
    tx: &ArtifactTx<'_>,
    path: &Path,
    run_id: &str,
    opts: &Options,
    outcome: &mut Outcome,
) -> Result<Sink, IngestError> {
    let existing = tx.existing_run(run_id)?;
    match existing {
        // A run created by telemetry alone has no artifact yet: fill it in.
        None | Some((None, _)) => {
            tx.insert_placeholder_run(run_id, &now_utc())?;
            Ok(Sink::Write)
        }
        Some((Some(sha), name)) => {
            if opts.replace {
                let file_sha =
                    crate::util::sha256_file(path).map_err(|source| IngestError::Io {
                        path: path.to_owned(),
                        source,
                    })?;
                if file_sha == sha {
                    return Ok(Sink::Skip {
                        existing_sha: Some(sha),
                        existing_name: name.unwrap_or_default(),
                    });
                }
                tx.delete_artifact_rows(run_id)?;
                *outcome = Outcome::Replaced;
                return Ok(Sink::Write);
            }
            Ok(Sink::Skip {
                existing_sha: Some(sha),
                existing_name: name.unwrap_or_default(),
            })
        }
    }
}

fn write_pending(w: &mut Writer, p: Pending) -> Result<(), DbError> {
    match p {
        Pending::Row(seq, row) => w.row(seq, row),
        Pending::Context(seq, id, ctx) => w.context(seq, &id, &ctx),
        Pending::Record(seq, raw, transport) => w.record(seq, &raw, transport),
    }
}

/// Reads a whole file's text for loaders that need it at once (small files).
pub fn read_text(path: &Path) -> Result<String, IngestError> {
    let mut bytes = Vec::new();
    std::io::Read::read_to_end(&mut open(path)?, &mut bytes).map_err(|source| IngestError::Io {
        path: path.to_owned(),
        source,
    })?;
    String::from_utf8(bytes).map_err(|e| {
        let err = e.utf8_error();
        IngestError::invalid(path, lines::utf8_message(e.as_bytes(), &err, 0))
    })
}
