//! The run's attached telemetry in the database: server telemetry files and
//! their samples (stored whole by `ingest`, a poll at a time by
//! `collect-server --db` through [`LiveSink`]), vLLM span files, and the
//! samples read back for a report.
use std::path::Path;

use rusqlite::types::Value as Sql;
use rusqlite::{params_from_iter, Connection, OptionalExtension, TransactionBehavior};
use serde_json::Value;

use super::{tables, DbError};
use crate::join::{self, ServerSample};
use crate::sql;

/// Attaches a validated telemetry file to `run_id` (the run created as a
/// placeholder if need be), in one transaction. False when the run has the
/// same file already (nothing changes).
#[allow(clippy::too_many_arguments)]
pub fn attach_file(
    conn: &mut Connection,
    run_id: &str,
    name: &str,
    sha: &str,
    bytes: u64,
    samples: &[join::SampleWithExtra],
    ingested_at: &str,
) -> Result<bool, DbError> {
    let tx = conn
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(DbError::query(&sql::TELEMETRY_INSERT_FILE))?;
    tx.execute(
        sql::INGEST_INSERT_PLACEHOLDER_RUN.sql,
        rusqlite::named_params! {":run_id": run_id, ":ingested_at": ingested_at},
    )
    .map_err(DbError::query(&sql::INGEST_INSERT_PLACEHOLDER_RUN))?;
    let existing: Option<i64> = tx
        .query_row(
            sql::TELEMETRY_FIND_FILE.sql,
            rusqlite::named_params! {":run_id": run_id, ":kind": "telemetry", ":sha256": sha},
            |r| r.get(0),
        )
        .optional()
        .map_err(DbError::query(&sql::TELEMETRY_FIND_FILE))?;
    if existing.is_some() {
        drop(tx);
        return Ok(false);
    }
    replace_killed_collection(&tx, run_id, samples)?;
    tx.execute(
        sql::TELEMETRY_INSERT_FILE.sql,
        rusqlite::named_params! {":run_id": run_id, ":kind": "telemetry", ":name": name, ":sha256": sha,
        ":bytes": bytes as i64, ":record_count": samples.len() as i64, ":ingested_at": ingested_at},
    )
    .map_err(DbError::query(&sql::TELEMETRY_INSERT_FILE))?;
    let file_id = tx.last_insert_rowid();
    SampleWriter::default().write(
        &tx,
        file_id,
        samples.iter().map(|(s, extra)| {
            (
                s,
                extra
                    .as_ref()
                    .map(|m| serde_json::Value::Object(m.clone()).to_string()),
            )
        }),
    )?;
    tx.commit()
        .map_err(DbError::query(&sql::TELEMETRY_INSERT_FILE))?;
    Ok(true)
}

/// Stores a span file's stamped spans in `vllm_spans`, attached to
/// `run_id`, in one transaction. False when the run has the same file
/// already (nothing changes).
#[allow(clippy::too_many_arguments)]
pub fn attach_spans(
    conn: &mut Connection,
    run_id: &str,
    name: &str,
    sha: &str,
    bytes: u64,
    spans: &[Value],
    ingested_at: &str,
) -> Result<bool, DbError> {
    let tx = conn
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(DbError::query(&sql::TELEMETRY_INSERT_FILE))?;
    let existing: Option<i64> = tx
        .query_row(
            sql::TELEMETRY_FIND_FILE.sql,
            rusqlite::named_params! {":run_id": run_id, ":kind": "spans", ":sha256": sha},
            |r| r.get(0),
        )
        .optional()
        .map_err(DbError::query(&sql::TELEMETRY_FIND_FILE))?;
    if existing.is_some() {
        return Ok(false);
    }
    tx.execute(
        sql::TELEMETRY_INSERT_FILE.sql,
        rusqlite::named_params! {":run_id": run_id, ":kind": "spans", ":name": name,
        ":sha256": sha, ":bytes": bytes as i64, ":record_count": spans.len() as i64, ":ingested_at": ingested_at},
    )
    .map_err(DbError::query(&sql::TELEMETRY_INSERT_FILE))?;
    let file_id = tx.last_insert_rowid();
    let spec =
        tables::spec("vllm_spans").ok_or_else(|| DbError::Other("no vllm_spans table".into()))?;
    let mut insert = tx
        .prepare(spec.insert.sql)
        .map_err(DbError::query(&spec.insert))?;
    for (seq, span) in spans.iter().enumerate() {
        let Some(map) = span.as_object() else {
            continue;
        };
        let enc = tables::split(spec, map);
        let mut params: Vec<Sql> = vec![
            Sql::Text(run_id.to_owned()),
            Sql::Integer(seq as i64),
            Sql::Integer(file_id),
        ];
        params.push(enc.schema_version);
        params.extend(enc.fields);
        params.push(Sql::Integer(enc.nulls));
        params.push(enc.extra.map_or(Sql::Null, Sql::Text));
        insert
            .execute(params_from_iter(params))
            .map_err(DbError::query(&spec.insert))?;
    }
    drop(insert);
    tx.commit()
        .map_err(DbError::query(&sql::TELEMETRY_INSERT_FILE))?;
    Ok(true)
}

/// Drops what a killed `collect-server --db` stored of this file: an
/// unfinished live file of the run whose collector is gone and whose
/// samples begin the file's, in order. The file then stores its samples
/// once, as after a clean stop (where the collector records the file's
/// hash and ingesting it again changes nothing). A collection still
/// running is left alone.
fn replace_killed_collection(
    tx: &Connection,
    run_id: &str,
    samples: &[join::SampleWithExtra],
) -> Result<(), DbError> {
    let unfinished: Vec<(i64, String)> = {
        let mut stmt = tx
            .prepare(sql::TELEMETRY_UNFINISHED_FILES.sql)
            .map_err(DbError::query(&sql::TELEMETRY_UNFINISHED_FILES))?;
        let rows = stmt
            .query_map(rusqlite::named_params! {":run_id": run_id}, |r| {
                Ok((r.get(0)?, r.get(1)?))
            })
            .map_err(DbError::query(&sql::TELEMETRY_UNFINISHED_FILES))?;
        rows.collect::<Result<_, _>>()
            .map_err(DbError::query(&sql::TELEMETRY_UNFINISHED_FILES))?
    };
    for (file_id, placeholder) in unfinished {
        if collector_alive(&placeholder) {
            continue;
        }
        let stored: Vec<(i64, String)> = {
            let mut stmt = tx
                .prepare(sql::TELEMETRY_FILE_SAMPLE_KEYS.sql)
                .map_err(DbError::query(&sql::TELEMETRY_FILE_SAMPLE_KEYS))?;
            let rows = stmt
                .query_map(rusqlite::named_params! {":file_id": file_id}, |r| {
                    Ok((r.get(0)?, r.get(1)?))
                })
                .map_err(DbError::query(&sql::TELEMETRY_FILE_SAMPLE_KEYS))?;
            rows.collect::<Result<_, _>>()
                .map_err(DbError::query(&sql::TELEMETRY_FILE_SAMPLE_KEYS))?
        };
        let begins_the_file = !stored.is_empty()
            && stored.len() <= samples.len()
            && stored.iter().zip(samples).all(|((at, metric), (s, _))| {
                *at == s.observed_at_ns && metric.as_str() == s.metric.as_str()
            });
        if begins_the_file {
            tx.execute(
                sql::TELEMETRY_DELETE_FILE.sql,
                rusqlite::named_params! {":file_id": file_id},
            )
            .map_err(DbError::query(&sql::TELEMETRY_DELETE_FILE))?;
        }
    }
    Ok(())
}

/// Whether the collector named by a live file's placeholder hash
/// (`live:<pid>:<nanos>`) still runs on this host. Where that cannot be
/// told, it is taken to run (nothing is replaced).
fn collector_alive(placeholder: &str) -> bool {
    let pid = placeholder
        .strip_prefix("live:")
        .and_then(|rest| rest.split(':').next())
        .and_then(|pid| pid.parse::<u32>().ok());
    match pid {
        Some(pid) if cfg!(target_os = "linux") => {
            pid == std::process::id() || Path::new("/proc").join(pid.to_string()).exists()
        }
        _ => true,
    }
}

/// Appends samples to an attached telemetry file: finds or creates each
/// identity once, then inserts the samples in order. Used by `ingest` (a whole
/// file) and by `collect-server --db` (a poll at a time).
#[derive(Default)]
struct SampleWriter {
    identities: std::collections::HashMap<join::Identity, i64>,
    /// The next sample's position in its file.
    seq: i64,
}

impl SampleWriter {
    fn write<'a>(
        &mut self,
        conn: &Connection,
        file_id: i64,
        samples: impl IntoIterator<Item = (&'a ServerSample, Option<String>)>,
    ) -> Result<(), DbError> {
        let mut ident = conn
            .prepare_cached(sql::TELEMETRY_UPSERT_IDENTITY.sql)
            .map_err(DbError::query(&sql::TELEMETRY_UPSERT_IDENTITY))?;
        let mut insert = conn
            .prepare_cached(sql::TELEMETRY_INSERT_SAMPLE.sql)
            .map_err(DbError::query(&sql::TELEMETRY_INSERT_SAMPLE))?;
        for (s, extra) in samples {
            let id = match self.identities.get(&s.identity) {
                Some(id) => *id,
                None => {
                    let i = &s.identity;
                    let id: i64 = ident
                        .query_row(
                            rusqlite::named_params! {":host": i.host, ":pid": i.pid, ":process_start_ns": i.process_start_ns,
                            ":device_uuid": i.device_uuid, ":gpu_instance_id": i.gpu_instance_id, ":replica_id": i.replica_id,
                            ":rank": i.rank, ":boot_id": i.boot_id, ":group_id": i.group_id, ":world_size": i.world_size},
                            |r| r.get(0),
                        )
                        .map_err(DbError::query(&sql::TELEMETRY_UPSERT_IDENTITY))?;
                    self.identities.insert(i.clone(), id);
                    id
                }
            };
            insert
                .execute(rusqlite::named_params! {
                    ":file_id": file_id, ":seq": self.seq, ":identity_id": id, ":sample_run_id": s.run_id,
                    ":observed_at_ns": s.observed_at_ns, ":metric": s.metric, ":value_bytes": s.value_bytes,
                    ":state": s.state, ":source": s.source, ":interval_ms": s.interval_ms, ":detail": s.detail,
                    ":provenance": s.provenance, ":extra": extra,
                })
                .map_err(DbError::query(&sql::TELEMETRY_INSERT_SAMPLE))?;
            self.seq += 1;
        }
        Ok(())
    }
}

/// The server samples attached to a run, files in attach order, lines in order.
pub fn load_samples(conn: &Connection, run_id: &str) -> Result<Vec<ServerSample>, DbError> {
    Ok(crate::db::runs::telemetry_samples(conn, run_id)?
        .into_iter()
        .map(|(s, _)| s)
        .collect())
}

/// The collector's sink for `collect-server --db`: every poll goes to the
/// JSONL file as usual and, in its own short transaction, into the project
/// database, attached to the run id, so reports can read a run in progress
/// (WAL: readers are not blocked). When the collection ends, the attached
/// file gets its final hash, so ingesting the same file later changes nothing.
pub struct LiveSink {
    inner: crate::collector::output::JsonlSink,
    output: std::path::PathBuf,
    /// Polls on their way to the database thread (`None` once closed):
    /// sampling never waits on the database, however long another writer
    /// holds it.
    send: Option<std::sync::mpsc::Sender<Vec<ServerSample>>>,
    thread: Option<std::thread::JoinHandle<()>>,
    /// The database thread's first failure, reported at the next poll.
    failed: std::sync::Arc<std::sync::Mutex<Option<String>>>,
}

fn sink_error(path: &Path, e: impl std::fmt::Display) -> crate::collector::output::SinkError {
    crate::collector::output::SinkError::Write {
        path: path.to_owned(),
        source: std::io::Error::other(e.to_string()),
    }
}

/// The `--db` sink of `collect-server` ([`crate::collector::DbSinkOpener`]).
pub fn open_live_sink(
    db: &Path,
    run_id: &str,
    output: &Path,
    file: crate::collector::output::JsonlSink,
) -> Result<Box<dyn crate::collector::output::SampleSink>, String> {
    match LiveSink::open(db, run_id, output, file) {
        Ok(sink) => Ok(Box::new(sink)),
        Err(e) => Err(e.to_string()),
    }
}

impl LiveSink {
    pub fn open(
        db: &Path,
        run_id: &str,
        output: &Path,
        inner: crate::collector::output::JsonlSink,
    ) -> Result<Self, DbError> {
        let conn = crate::db::open(db, crate::db::Mode::ReadWrite)?;
        let (send, recv) = std::sync::mpsc::channel::<Vec<ServerSample>>();
        let failed = std::sync::Arc::new(std::sync::Mutex::new(None));
        let thread = {
            let failed = std::sync::Arc::clone(&failed);
            let (output, run_id) = (output.to_owned(), run_id.to_owned());
            std::thread::spawn(move || {
                // Even the file's first row waits on the thread: another
                // writer may hold the database as the collection starts.
                match attach_live_file(&conn, &run_id, &output) {
                    Ok(file_id) => store_polls(conn, file_id, &output, &recv, &failed),
                    Err(e) => {
                        if let Ok(mut slot) = failed.lock() {
                            slot.get_or_insert_with(|| e.to_string());
                        }
                    }
                }
            })
        };
        Ok(LiveSink {
            inner,
            output: output.to_owned(),
            send: Some(send),
            thread: Some(thread),
            failed,
        })
    }
}

/// Attaches a live collection's file to its run (the run created as a
/// placeholder if need be), under a placeholder hash until it is complete.
fn attach_live_file(conn: &Connection, run_id: &str, output: &Path) -> Result<i64, DbError> {
    conn.execute(
        sql::INGEST_INSERT_PLACEHOLDER_RUN.sql,
        rusqlite::named_params! {":run_id": run_id, ":ingested_at": super::ingest::now_utc()},
    )
    .map_err(DbError::query(&sql::INGEST_INSERT_PLACEHOLDER_RUN))?;
    // A placeholder hash, unique to this collection, that names its process.
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    let placeholder = format!("live:{}:{nanos}", std::process::id());
    conn.execute(
        sql::TELEMETRY_INSERT_FILE.sql,
        rusqlite::named_params! {":run_id": run_id, ":kind": "telemetry", ":name": output.display().to_string(),
        ":sha256": placeholder, ":bytes": 0i64, ":record_count": 0i64, ":ingested_at": super::ingest::now_utc()},
    )
    .map_err(DbError::query(&sql::TELEMETRY_INSERT_FILE))?;
    Ok(conn.last_insert_rowid())
}

/// The database thread of a [`LiveSink`]: stores each poll as it comes,
/// one transaction each, and when the collection ends gives the attached
/// file its final hash.
fn store_polls(
    mut conn: Connection,
    file_id: i64,
    output: &Path,
    recv: &std::sync::mpsc::Receiver<Vec<ServerSample>>,
    failed: &std::sync::Mutex<Option<String>>,
) {
    let mut writer = SampleWriter::default();
    for samples in recv {
        let stored = (|| {
            let tx = conn
                .transaction_with_behavior(TransactionBehavior::Immediate)
                .map_err(DbError::query(&sql::TELEMETRY_INSERT_SAMPLE))?;
            writer.write(&tx, file_id, samples.iter().map(|s| (s, None)))?;
            tx.commit()
                .map_err(DbError::query(&sql::TELEMETRY_INSERT_SAMPLE))
        })();
        if let Err(e) = stored {
            if let Ok(mut slot) = failed.lock() {
                slot.get_or_insert_with(|| e.to_string());
            }
            return;
        }
    }
    // Best effort: the samples are stored already; only the hash is final here.
    if let Ok(bytes) = std::fs::read(output) {
        let _ = conn.execute(
            sql::TELEMETRY_FINISH_LIVE_FILE.sql,
            rusqlite::named_params! {":file_id": file_id, ":sha256": crate::util::sha256_bytes(&bytes),
            ":bytes": bytes.len() as i64, ":record_count": writer.seq},
        );
    }
}

impl crate::collector::output::SampleSink for LiveSink {
    fn write_poll(
        &mut self,
        context: &crate::collector::output::RecordContext,
        poll: &crate::collector::output::Poll,
    ) -> Result<(), crate::collector::output::SinkError> {
        self.inner.write_poll(context, poll)?;
        if let Some(e) = self.failed.lock().ok().and_then(|slot| slot.clone()) {
            return Err(sink_error(&self.output, e));
        }
        // The very lines just written, read back as the loader reads them.
        let text = context.render_poll(poll);
        let samples = join::load_telemetry_text(&text).map_err(|e| sink_error(&self.output, e))?;
        if let Some(send) = &self.send {
            // A closed channel means the thread failed; the next poll says why.
            let _ = send.send(samples);
        }
        Ok(())
    }
}

impl Drop for LiveSink {
    fn drop(&mut self) {
        // The thread stores what is queued, then finishes the file.
        self.send = None;
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}
