//! `stormlog ingest`: each file its own transaction, one line per file
//! saying what was stored or why nothing of it was, then a summary.
use std::io::Write;
use std::path::{Path, PathBuf};

use super::{Error, Result};
use crate::db;
use crate::exit::Exit;
use crate::ingest::{self, IngestError, Kind, Outcome};

/// What `ingest` is asked.
#[derive(Debug, Clone, Default)]
pub struct IngestConfig {
    pub db: PathBuf,
    /// Replace a run already stored from a different file.
    pub replace: bool,
    /// The run telemetry and span files attach to.
    pub run: Option<String>,
    /// The id an imported tool's run is stored under.
    pub run_id: Option<String>,
    pub files: Vec<PathBuf>,
}

/// Ingests every file in order; the exit status is the worst refusal's.
pub fn run(c: &IngestConfig, out: &mut dyn Write, err: &mut dyn Write) -> Result<Exit> {
    // A new database's commits sync the whole file, and a WAL database's
    // checkpoints the log and the file: their pages go to the disk while
    // the ingest goes on instead (db::writeback; it opens each file once
    // the file is there). Declared before the connection, so that it is
    // dropped after it on every path: closing its descriptor of the
    // database would drop the locks SQLite holds on the file (POSIX).
    let mut wal = c.db.clone().into_os_string();
    wal.push("-wal");
    let _writeback = db::writeback::Writeback::start(vec![c.db.clone(), wal.into()]);
    // A database this command creates is written without WAL's second copy
    // and becomes WAL when the command is done (db::open_for_ingest).
    let (mut conn, fresh) = db::open_for_ingest(&c.db)?;
    // A WAL database's log is copied into it by a thread of its own while
    // the ingest writes (db::writeback::Checkpointer); stopped before the
    // connection closes, so that the close still finds itself the last one
    // and removes the log.
    let checkpointer = match fresh {
        true => None,
        false => db::writeback::Checkpointer::start(&c.db),
    };
    let done = ingest_files(&mut conn, c, out, err);
    drop(checkpointer);
    if fresh {
        // What was ingested is committed either way; a database left in
        // rollback mode (a reader held it) becomes WAL at its next writing open.
        if let Err(e) = db::use_wal(&conn, &c.db) {
            writeln!(
                err,
                "warning: {e}; the database switches to WAL at its next ingest"
            )?;
        }
    }
    done
}

fn ingest_files(
    conn: &mut db::Connection,
    c: &IngestConfig,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<Exit> {
    let opts = ingest::Options {
        replace: c.replace,
        progress: true,
        run: c.run.clone(),
        skip_digest: false,
        run_id: c.run_id.clone(),
        analyze: false,
    };
    // Each file is its own transaction: one line per file, in argument
    // order, says what landed or why nothing of it did.
    let mut tally = [0usize; 3]; // stored, unchanged, refused
    let mut worst = Exit::Ok;
    // While a file is written, the next one, if it is an artifact, is
    // already being read and prepared on threads of its own (a few batches
    // ahead: ingest::Reading), so the cores are not idle while one file ends
    // (its last rows, its pack, the commit) and the next begins. Each file
    // is still written in its own transaction, in argument order.
    let mut ahead: Option<ingest::Reading> = None;
    for (i, path) in c.files.iter().enumerate() {
        let started = std::time::Instant::now();
        let reading = ahead.take();
        ahead = c
            .files
            .get(i + 1)
            .and_then(|next| ingest::read_ahead(next, &opts));
        match ingest::ingest_path_ahead(conn, path, &opts, reading) {
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
                let e = ingest_failure(e, path, &c.db);
                if e.exit.code() > worst.code() {
                    worst = e.exit;
                }
                writeln!(err, "Error: {}", e.message)?;
            }
        }
    }
    if c.files.len() > 1 {
        let [stored, unchanged, refused] = tally;
        let mut line = format!("{} files: {stored} stored", c.files.len());
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

/// An ingest's failure as the command reports it. A failure of the storage
/// (a full disk, a read-only database) names the file being ingested and
/// the database, says what to do and exits [`Exit::Database`]; bad input is
/// said in stormlog's words ([`refusal`]).
pub fn ingest_failure(e: IngestError, file: &Path, db: &Path) -> Error {
    match &e {
        IngestError::Db(inner) => match db::failure::advice(inner) {
            Some(advice) => Error::new(
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

/// An ingest failure in stormlog's words (`ingest::words`), with the fix where one is known.
fn refusal(e: IngestError) -> Error {
    match e {
        IngestError::Invalid { path, message } => {
            let plain = ingest::words::plain(&message);
            let sep = if plain.starts_with("is not ") {
                " "
            } else {
                ": "
            };
            Error::new(
                Exit::InvalidInput,
                format!("{}{sep}{plain}; nothing from it was stored", path.display()),
            )
        }
        other => other.into(),
    }
}
