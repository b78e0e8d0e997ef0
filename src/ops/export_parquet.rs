//! `stormlog export --parquet DIR`: the project as Hive-partitioned Parquet
//! for DuckDB, Spark and Trino (docs/scale.md).
//!
//! ```text
//! DIR/_stormlog.json                               manifest: versions, runs, content hashes
//! DIR/runs.parquet                                 v_runs, one row per exported run
//! DIR/requests/run_id=<id>/part-0.parquet          v_requests
//! DIR/cases/run_id=<id>/part-0.parquet             v_case_summary
//! DIR/telemetry_samples/run_id=<id>/part-0.parquet v_server_samples
//! DIR/slo_verdicts/run_id=<id>/part-0.parquet      with --slo / --slo-file
//! ```
//!
//! Incremental: a run whose content hash (db::export::content_hash) is the
//! one the manifest holds is not read again. Safe: every file is written
//! under a hidden temporary name and renamed into place, the manifest last,
//! so a reader never sees half a file and a killed export leaves the files
//! of the last one whole. A table a run has no rows of gets no file.
// Built without the writer, only the error that says so is used.
#![cfg_attr(not(feature = "parquet"), allow(dead_code, unused_imports))]
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use serde::{Deserialize, Serialize};

use crate::columnar::{self, Kind, TableDef, PER_RUN, RUNS, SLO_VERDICTS};
use crate::db::{self, DbError};
use crate::exit::Exit;
use crate::slo::{Policy, PolicySource};

/// The manifest's name in the export directory.
pub const MANIFEST: &str = "_stormlog.json";
/// What the manifest's `format` says.
pub const FORMAT: &str = "stormlog-parquet";
/// Bumped when the files' layout or columns change: every run is then
/// written again.
pub const FORMAT_VERSION: u32 = 1;
/// Each run's file in a partition.
pub const PART: &str = "part-0.parquet";

/// What to export.
#[derive(Debug, Clone)]
pub struct ParquetConfig {
    pub db: PathBuf,
    pub dir: PathBuf,
    /// Run ids or unique prefixes; empty with `all` or `since`.
    pub runs: Vec<String>,
    /// Every stored run; runs exported before and since deleted are removed.
    pub all: bool,
    /// Only runs whose session started at or after this date (SQLite date text).
    pub since: Option<String>,
    /// Judge every exported run under this policy into `slo_verdicts/`.
    pub policy: Option<(Policy, PolicySource)>,
}

/// What one run's export wrote.
#[derive(Debug, Clone, Serialize)]
pub struct RunWritten {
    pub run_id: String,
    /// Rows per table (tables without rows are absent).
    pub rows: BTreeMap<String, u64>,
    pub bytes: u64,
}

/// What an export did.
#[derive(Debug, Clone, Serialize)]
pub struct ParquetSummary {
    pub dir: PathBuf,
    pub written: Vec<RunWritten>,
    /// Runs whose content hash was unchanged: nothing read or written.
    pub unchanged: usize,
    /// Runs removed from the export (gone from the database, `--all`).
    pub removed: Vec<String>,
    /// Whether `runs.parquet` and the manifest were written.
    pub manifest_written: bool,
    /// Bytes of every file written.
    pub bytes: u64,
    /// Request rows written.
    pub requests: u64,
}

/// Why an export failed; `exit()` is the status.
#[derive(Debug, thiserror::Error)]
pub enum ParquetError {
    #[error(transparent)]
    Db(#[from] DbError),
    #[error(transparent)]
    Read(#[from] db::export::ReadError),
    #[cfg(feature = "parquet")]
    #[error(transparent)]
    Write(#[from] columnar::writer::WriteError),
    #[error("{path}: {message}")]
    Manifest { path: PathBuf, message: String },
    #[error("--since {0:?}: not a date; give e.g. 2026-11-29 or 2026-11-29T14:00:00Z")]
    Since(String),
    #[error("{0}")]
    Usage(String),
    #[error(
        "this stormlog was built without Parquet export; build it with `cargo build --features parquet`"
    )]
    NotBuilt,
}

impl ParquetError {
    pub fn exit(&self) -> Exit {
        match self {
            ParquetError::Since(_) | ParquetError::Usage(_) | ParquetError::NotBuilt => Exit::Usage,
            ParquetError::Manifest { .. } => Exit::InvalidInput,
            ParquetError::Db(DbError::Other(_)) => Exit::InvalidInput,
            ParquetError::Db(e) => e.exit(),
            _ => Exit::Unexpected,
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct ColumnEntry {
    name: String,
    #[serde(rename = "type")]
    kind: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct TableEntry {
    /// The view the rows come from.
    source: String,
    /// Where the files are, relative to the export directory.
    path: String,
    columns: Vec<ColumnEntry>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
struct PolicyEntry {
    name: String,
    digest: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct RunEntry {
    content_hash: String,
    /// The folder name under each table: `run_id=<escaped id>`.
    partition: String,
    /// Rows per table, as written.
    rows: BTreeMap<String, u64>,
}

/// `_stormlog.json`.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Manifest {
    format: String,
    format_version: u32,
    stormlog_version: String,
    /// The project database's schema version (PRAGMA user_version).
    schema_version: i64,
    compression: String,
    timestamps: String,
    tables: BTreeMap<String, TableEntry>,
    slo_policy: Option<PolicyEntry>,
    runs: BTreeMap<String, RunEntry>,
}

fn kind_name(k: Kind) -> &'static str {
    match k {
        Kind::Int => "INT64",
        Kind::Real => "DOUBLE",
        Kind::Text => "STRING",
        Kind::Instant => "TIMESTAMP(NANOS,UTC)",
    }
}

fn table_entry(t: &TableDef, path: String) -> TableEntry {
    TableEntry {
        source: t.source.to_owned(),
        path,
        columns: t
            .columns
            .iter()
            .map(|c| ColumnEntry {
                name: c.name.to_owned(),
                kind: kind_name(c.kind).to_owned(),
            })
            .collect(),
    }
}

fn fresh_manifest(schema_version: i64, policy: Option<PolicyEntry>) -> Manifest {
    let mut tables = BTreeMap::new();
    for t in PER_RUN.iter().copied().chain([&SLO_VERDICTS]) {
        tables.insert(
            t.name.to_owned(),
            table_entry(t, format!("{}/run_id=*/{PART}", t.name)),
        );
    }
    tables.insert(
        RUNS.name.to_owned(),
        table_entry(&RUNS, "runs.parquet".to_owned()),
    );
    Manifest {
        format: FORMAT.to_owned(),
        format_version: FORMAT_VERSION,
        stormlog_version: env!("CARGO_PKG_VERSION").to_owned(),
        schema_version,
        compression: "snappy".to_owned(),
        timestamps: "INT64 nanoseconds since the Unix epoch, TIMESTAMP(NANOS, UTC)".to_owned(),
        tables,
        slo_policy: policy,
        runs: BTreeMap::new(),
    }
}

/// The previous export's manifest; None when the directory has none.
fn read_manifest(dir: &Path) -> Result<Option<Manifest>, ParquetError> {
    let path = dir.join(MANIFEST);
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => {
            return Err(ParquetError::Manifest {
                path,
                message: e.to_string(),
            })
        }
    };
    let m: Manifest = serde_json::from_str(&text).map_err(|e| ParquetError::Manifest {
        path: path.clone(),
        message: format!(
            "not a stormlog export manifest ({e}); export into an empty directory, or remove the file to start over"
        ),
    })?;
    if m.format != FORMAT {
        return Err(ParquetError::Manifest {
            path,
            message: format!(
                "format {:?}, not {FORMAT:?}; export into another directory",
                m.format
            ),
        });
    }
    Ok(Some(m))
}

/// What every run's files depend on besides the run itself.
fn salt(schema_version: i64, policy: Option<&PolicyEntry>) -> Vec<u8> {
    let mut s = format!("{FORMAT} {FORMAT_VERSION} schema {schema_version}\n");
    for t in PER_RUN.iter().copied().chain([&SLO_VERDICTS, &RUNS]) {
        s.push_str(t.name);
        for c in t.columns {
            s.push(' ');
            s.push_str(c.name);
            s.push(':');
            s.push_str(kind_name(c.kind));
        }
        s.push('\n');
    }
    match policy {
        Some(p) => s.push_str(&format!("slo {} {}\n", p.name, p.digest)),
        None => s.push_str("slo none\n"),
    }
    s.into_bytes()
}

/// The lines printed after an export.
pub fn render_summary(s: &ParquetSummary) -> String {
    let mut text = format!(
        "{}: {} run(s) written ({} requests, {} bytes), {} unchanged, {} removed\n",
        s.dir.display(),
        s.written.len(),
        s.requests,
        s.bytes,
        s.unchanged,
        s.removed.len()
    );
    if !s.manifest_written {
        text.push_str("nothing changed; nothing written\n");
    }
    text
}

/// Exports the selected runs into `cfg.dir`.
#[cfg(not(feature = "parquet"))]
pub fn export_parquet(_cfg: &ParquetConfig) -> Result<ParquetSummary, ParquetError> {
    Err(ParquetError::NotBuilt)
}

/// Exports the selected runs into `cfg.dir`.
#[cfg(feature = "parquet")]
pub fn export_parquet(cfg: &ParquetConfig) -> Result<ParquetSummary, ParquetError> {
    write::run(cfg)
}

#[cfg(feature = "parquet")]
mod write {
    use super::*;
    use crate::columnar::writer::{self, PartWriter};
    use crate::columnar::{Batch, Cell};

    pub(super) fn run(cfg: &ParquetConfig) -> Result<ParquetSummary, ParquetError> {
        let conn = db::read::open_for_reading(&cfg.db)?;
        let schema_version = db::export::schema_version(&conn)?;
        let since_ns = match &cfg.since {
            Some(s) => Some(
                db::export::since_ns(&conn, s)?.ok_or_else(|| ParquetError::Since(s.clone()))?,
            ),
            None => None,
        };
        let mut selected: Vec<String> = if cfg.runs.is_empty() {
            if !cfg.all && cfg.since.is_none() {
                return Err(ParquetError::Usage(
                    "name the runs to export, or pass --all or --since".to_owned(),
                ));
            }
            db::export::select_runs(&conn, since_ns)?
        } else {
            let mut v = Vec::new();
            for name in &cfg.runs {
                let id = db::runs::resolve(&conn, name)?;
                if since_ns.is_none() || db::export::select_runs(&conn, since_ns)?.contains(&id) {
                    v.push(id);
                }
            }
            v
        };
        selected.sort();
        selected.dedup();

        let policy_entry = cfg.policy.as_ref().map(|(p, _)| PolicyEntry {
            name: p.name.clone(),
            digest: crate::slo::digest(p),
        });
        let salt = salt(schema_version, policy_entry.as_ref());
        std::fs::create_dir_all(&cfg.dir).map_err(|e| ParquetError::Manifest {
            path: cfg.dir.clone(),
            message: format!("cannot create the export directory: {e}"),
        })?;
        let previous = read_manifest(&cfg.dir)?;
        remove_stale_temps(&cfg.dir);
        let mut manifest = fresh_manifest(schema_version, policy_entry);
        if let Some(prev) = &previous {
            manifest.runs = prev.runs.clone();
        }

        let mut summary = ParquetSummary {
            dir: cfg.dir.clone(),
            written: Vec::new(),
            unchanged: 0,
            removed: Vec::new(),
            manifest_written: false,
            bytes: 0,
            requests: 0,
        };
        // Runs are independent: a few workers, each on a connection of its
        // own, read and write them; this thread keeps the manifest.
        let old_hashes: BTreeMap<String, String> = manifest
            .runs
            .iter()
            .filter(|(_, e)| files_present(&cfg.dir, e))
            .map(|(id, e)| (id.clone(), e.content_hash.clone()))
            .collect();
        // Twice the cores, at most sixteen: a worker waits on the disk for
        // each file's sync about as long as it computes, and holds one run
        // of at most a batch of rows (bigger ones take turns, below).
        let workers = std::thread::available_parallelism()
            .map_or(1, |n| 2 * n.get())
            .clamp(2, 16)
            .min(selected.len().max(1));
        let next = AtomicUsize::new(0);
        let stop = AtomicBool::new(false);
        let big = std::sync::Mutex::new(());
        let mut failure: Option<ParquetError> = None;
        // Each run's v_runs row as its hash read it, for runs.parquet.
        let mut run_rows = BTreeMap::new();
        let mut last_checkpoint = std::time::Instant::now();
        // The workers' files are synced and renamed by threads of their own
        // (as many as the workers), and are all in place before a manifest
        // names them.
        let landing = writer::Landing::new(workers);
        std::thread::scope(|scope| -> Result<(), ParquetError> {
            let (tx, rx) = std::sync::mpsc::channel::<Result<Outcome, ParquetError>>();
            for _ in 0..workers {
                let tx = tx.clone();
                let (next, stop, selected, old_hashes, salt, big, landing) =
                    (&next, &stop, &selected, &old_hashes, &salt, &big, &landing);
                scope.spawn(move || {
                    let conn = match db::read::open_for_reading(&cfg.db) {
                        Ok(c) => c,
                        Err(e) => {
                            let _ = tx.send(Err(e.into()));
                            return;
                        }
                    };
                    while !stop.load(Ordering::Relaxed) {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        let Some(id) = selected.get(i) else {
                            break;
                        };
                        let old = old_hashes.get(id).map(String::as_str);
                        let r = export_run(&conn, cfg, id, old, salt, big, landing);
                        let failed = r.is_err();
                        if tx.send(r).is_err() || failed {
                            break;
                        }
                    }
                });
            }
            drop(tx);
            for msg in rx {
                match msg {
                    Ok(Outcome::Gone) => {}
                    Ok(Outcome::Unchanged(id, row)) => {
                        summary.unchanged += 1;
                        run_rows.insert(id, row);
                    }
                    Ok(Outcome::Written(hash, row, written)) => {
                        run_rows.insert(written.run_id.clone(), row);
                        summary.bytes += written.bytes;
                        summary.requests += written.rows.get("requests").copied().unwrap_or(0);
                        manifest.runs.insert(
                            written.run_id.clone(),
                            RunEntry {
                                content_hash: hash,
                                partition: columnar::partition_dir(&written.run_id),
                                rows: written.rows.clone(),
                            },
                        );
                        summary.written.push(written);
                        // A killed export still keeps what it finished: the
                        // manifest is brought up to date every few seconds.
                        if last_checkpoint.elapsed() > std::time::Duration::from_secs(5) {
                            landing.wait()?;
                            finish(&conn, &cfg.dir, &manifest, &run_rows, &mut summary)?;
                            last_checkpoint = std::time::Instant::now();
                        }
                    }
                    Err(e) => {
                        stop.store(true, Ordering::Relaxed);
                        failure.get_or_insert(e);
                    }
                }
            }
            Ok(())
        })?;
        // Every file written is in place (or the first that is not says why,
        // and no manifest names what may be missing).
        landing.wait()?;
        if let Some(e) = failure {
            // What finished is kept: the manifest names it.
            finish(&conn, &cfg.dir, &manifest, &run_rows, &mut summary)?;
            return Err(e);
        }
        summary.written.sort_by(|a, b| a.run_id.cmp(&b.run_id));
        if cfg.all && cfg.since.is_none() {
            let gone: Vec<String> = manifest
                .runs
                .keys()
                .filter(|id| selected.binary_search(id).is_err())
                .cloned()
                .collect();
            for id in gone {
                if let Some(entry) = manifest.runs.remove(&id) {
                    remove_run(&cfg.dir, &entry.partition)?;
                }
                summary.removed.push(id);
            }
        }
        let changed = !summary.written.is_empty() || !summary.removed.is_empty();
        let same_header = previous.as_ref().is_some_and(|p| {
            p.format_version == manifest.format_version
                && p.schema_version == manifest.schema_version
                && p.slo_policy == manifest.slo_policy
        });
        if changed || !same_header || !cfg.dir.join("runs.parquet").exists() {
            finish(&conn, &cfg.dir, &manifest, &run_rows, &mut summary)?;
        }
        Ok(summary)
    }

    /// What became of one selected run.
    enum Outcome {
        /// Deleted from the database since it was selected.
        Gone,
        Unchanged(String, db::export::RunRow),
        Written(String, db::export::RunRow, RunWritten),
    }

    /// One run, read in one transaction so that its hash and its rows agree:
    /// skipped when its hash is `old`, else written.
    fn export_run(
        conn: &db::Connection,
        cfg: &ParquetConfig,
        id: &str,
        old: Option<&str>,
        salt: &[u8],
        big: &std::sync::Mutex<()>,
        landing: &writer::Landing,
    ) -> Result<Outcome, ParquetError> {
        let _snapshot = db::export::Snapshot::begin(conn)?;
        // A run not exported before is written whatever its hash: its
        // `v_runs` counts come from the walk over its requests that writes
        // them (db::export_pack), not from a walk of their own, and the hash
        // after. The values, and so the hash, are the view's either way.
        let base = match old {
            None => match db::export::run_base(conn, id)? {
                Some(base) => Some(base),
                None => return Ok(Outcome::Gone),
            },
            Some(_) => None,
        };
        let known = match base {
            Some(_) => None,
            None => {
                let Some((hash, row)) = db::export::content_hash_and_row(conn, id, salt)? else {
                    return Ok(Outcome::Gone);
                };
                if old == Some(hash.as_str()) {
                    return Ok(Outcome::Unchanged(id.to_owned(), row));
                }
                Some((hash, row))
            }
        };
        // Memory is bounded by one run, not by the workers: a run of more
        // than a batch is written while no other such run is.
        let _big = if db::export::request_rows(conn, id)? > db::export::BATCH_ROWS as u64 {
            Some(
                big.lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner),
            )
        } else {
            None
        };
        let partition = columnar::partition_dir(id);
        let (written, counts) =
            write_run(conn, &cfg.dir, id, &partition, cfg.policy.as_ref(), landing)?;
        let (hash, row) = match (known, base) {
            (Some(known), _) => known,
            (None, base) => {
                let row = match (base, counts) {
                    (Some(base), Some(counts)) => base.with_counts(counts),
                    _ => db::export::run_row_of(conn, id)?.ok_or_else(|| {
                        ParquetError::Usage(format!("run {id}: gone while it was exported"))
                    })?,
                };
                (db::export::hash_of(conn, id, salt, &row)?, row)
            }
        };
        Ok(Outcome::Written(hash, row, written))
    }

    /// Writes `runs.parquet` for the manifest's runs, then the manifest.
    fn finish(
        conn: &db::Connection,
        dir: &Path,
        manifest: &Manifest,
        run_rows: &BTreeMap<String, db::export::RunRow>,
        summary: &mut ParquetSummary,
    ) -> Result<(), ParquetError> {
        let ids: Vec<String> = manifest.runs.keys().cloned().collect();
        let batch = db::export::runs_batch_with(conn, &ids, run_rows)?;
        let mut w = PartWriter::create(&dir.join("runs.parquet"), &RUNS)?;
        w.write(&batch)?;
        summary.bytes += w.finish()?.bytes;
        let mut text =
            serde_json::to_string_pretty(manifest).map_err(|e| ParquetError::Manifest {
                path: dir.join(MANIFEST),
                message: e.to_string(),
            })?;
        text.push('\n');
        writer::write_atomic(&dir.join(MANIFEST), text.as_bytes())?;
        summary.bytes += text.len() as u64;
        summary.manifest_written = true;
        Ok(())
    }

    /// Whether every file the manifest says a run has is there.
    fn files_present(dir: &Path, entry: &RunEntry) -> bool {
        entry
            .rows
            .iter()
            .filter(|(_, &n)| n > 0)
            .all(|(t, _)| dir.join(t).join(&entry.partition).join(PART).is_file())
    }

    /// Writes one run's partitions; tables it has no rows of lose their old file.
    fn write_run(
        conn: &db::Connection,
        dir: &Path,
        run_id: &str,
        partition: &str,
        policy: Option<&(Policy, PolicySource)>,
        landing: &writer::Landing,
    ) -> Result<(RunWritten, Option<db::export::RunCounts>), ParquetError> {
        let mut out = RunWritten {
            run_id: run_id.to_owned(),
            rows: BTreeMap::new(),
            bytes: 0,
        };
        // The case summary summed beside the requests, where it was.
        let mut cases: Option<Batch> = None;
        let mut counts = None;
        for table in PER_RUN {
            let dest = dir.join(table.name).join(partition).join(PART);
            let mut part: Option<PartWriter> = None;
            if table.name == columnar::CASES.name {
                if let Some(batch) = cases.take() {
                    if !batch.is_empty() {
                        let mut w = PartWriter::create(&dest, table)?;
                        w.write(&batch)?;
                        part = Some(w);
                    }
                    place(
                        part,
                        &dest,
                        table.name,
                        batch.rows() as u64,
                        &mut out,
                        landing,
                    )?;
                    continue;
                }
            }
            // A run's requests come from its pack where it has one that
            // serves (db::export_pack); else, or after a part of them (the
            // file then starts again), from the view.
            if table.name == columnar::REQUESTS.name {
                let packed = db::export_pack::for_each_request_batch(conn, run_id, |batch| {
                    let w = match &mut part {
                        Some(w) => w,
                        None => part.insert(PartWriter::create(&dest, table)?),
                    };
                    w.write(batch)?;
                    Ok::<(), ParquetError>(())
                })?;
                if let Some(served) = packed {
                    place(part, &dest, table.name, served.requests, &mut out, landing)?;
                    cases = served.cases;
                    counts = served.counts;
                    continue;
                }
                if part.take().is_some() {
                    let _ = std::fs::remove_file(writer::temp_path(&dest));
                }
            }
            let rows = db::export::for_each_batch(conn, table, run_id, |batch| {
                let w = match &mut part {
                    Some(w) => w,
                    None => part.insert(PartWriter::create(&dest, table)?),
                };
                w.write(batch)?;
                Ok::<(), ParquetError>(())
            })?;
            place(part, &dest, table.name, rows, &mut out, landing)?;
        }
        let dest = dir.join(SLO_VERDICTS.name).join(partition).join(PART);
        let mut part = None;
        let mut rows = 0;
        if let Some((policy, source)) = policy {
            let batch = verdicts(conn, run_id, policy, *source)?;
            rows = batch.rows() as u64;
            if rows > 0 {
                let mut w = PartWriter::create(&dest, &SLO_VERDICTS)?;
                w.write(&batch)?;
                part = Some(w);
            }
        }
        place(part, &dest, SLO_VERDICTS.name, rows, &mut out, landing)?;
        Ok((out, counts))
    }

    /// Hands a finished file to `landing` (to be synced and renamed into
    /// place), or removes the old one where the run has no rows now.
    fn place(
        part: Option<PartWriter>,
        dest: &Path,
        table: &str,
        rows: u64,
        out: &mut RunWritten,
        landing: &writer::Landing,
    ) -> Result<(), ParquetError> {
        match part {
            Some(w) => {
                let done = w.finish_into(landing)?;
                out.bytes += done.bytes;
                out.rows.insert(table.to_owned(), rows);
            }
            None => remove_file(dest)?,
        }
        Ok(())
    }

    fn remove_file(path: &Path) -> Result<(), ParquetError> {
        match std::fs::remove_file(path) {
            Ok(()) => {
                writer::sync_dir(path);
                if let Some(dir) = path.parent() {
                    let _ = std::fs::remove_dir(dir); // only when empty
                }
                Ok(())
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(source) => Err(writer::WriteError::Io {
                path: path.to_path_buf(),
                source,
            }
            .into()),
        }
    }

    /// Removes a run's files from every table.
    fn remove_run(dir: &Path, partition: &str) -> Result<(), ParquetError> {
        for t in PER_RUN.iter().copied().chain([&SLO_VERDICTS]) {
            remove_file(&dir.join(t.name).join(partition).join(PART))?;
        }
        Ok(())
    }

    /// Temporary files a killed export left in the table folders.
    fn remove_stale_temps(dir: &Path) {
        let mut folders = vec![dir.to_path_buf()];
        for t in PER_RUN.iter().copied().chain([&SLO_VERDICTS]) {
            if let Ok(parts) = std::fs::read_dir(dir.join(t.name)) {
                folders.extend(parts.flatten().map(|e| e.path()));
            }
        }
        for folder in folders {
            let Ok(entries) = std::fs::read_dir(&folder) else {
                continue;
            };
            for e in entries.flatten() {
                if writer::is_temp_name(&e.file_name().to_string_lossy()) {
                    let _ = std::fs::remove_file(e.path());
                }
            }
        }
    }

    /// One row per case: the run judged under the policy, as `report --all`
    /// judges it.
    fn verdicts(
        conn: &db::Connection,
        run_id: &str,
        policy: &Policy,
        source: PolicySource,
    ) -> Result<Batch, ParquetError> {
        let data = db::store::load_run(conn, run_id)?;
        let spans = db::store::attached_spans(conn, run_id)?;
        let judged = crate::report::judge::judge_run(&data, policy, source, &spans);
        let mut batch = Batch::new(&SLO_VERDICTS);
        for j in &judged {
            let v = j.to_json();
            for (i, col) in SLO_VERDICTS.columns.iter().enumerate() {
                let field = &v[col.name];
                let text;
                let cell = match (col.kind, field) {
                    (_, serde_json::Value::Null) => Cell::Null,
                    (Kind::Text, serde_json::Value::String(s)) => Cell::Text(s),
                    (Kind::Text, other) => {
                        text = serde_json::to_string(other).unwrap_or_default();
                        Cell::Text(&text)
                    }
                    (_, serde_json::Value::Number(n)) => match n.as_i64() {
                        Some(x) if col.kind == Kind::Int => Cell::Int(x),
                        _ => n.as_f64().map_or(Cell::Null, Cell::Real),
                    },
                    _ => Cell::Null,
                };
                batch
                    .push(i, cell)
                    .map_err(|source| db::export::ReadError::Type {
                        run_id: run_id.to_owned(),
                        source,
                    })?;
            }
            batch.end_row();
        }
        Ok(batch)
    }
}
