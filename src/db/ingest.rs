//! The SQLite side of an artifact ingest: the file's one transaction, the
//! run it fills in or replaces, and the trigger switch around it. `ingest`
//! decides what is stored; this module runs the statements.
use rusqlite::{Connection, OptionalExtension, Transaction, TransactionBehavior};

use super::store::Writer;
use super::DbError;
use crate::sql;

/// Runs `f` with the connection's triggers and foreign-key checks off, then
/// restores both settings whatever happened (a failed ingest has rolled
/// back). Both are set outside any transaction (SQLite ignores a change of
/// `foreign_keys` inside one).
///
/// The only triggers drop a run's request pack when its rows change
/// (migrations/0004_request_packs.sql); an ingest writes the pack itself,
/// and one trigger per row written would cost a statement per request.
///
/// Every row an artifact ingest writes names its run, whose `runs` row the
/// ingest writes (or finds) first, in the same transaction, before any of
/// them (`start_run`), and it deletes no `runs` row (a replaced run's rows
/// are deleted table by table, `ArtifactTx::delete_artifact_rows`): the
/// checks could never fail, and nothing cascades. Checked, each row cost a
/// lookup of its run (a cursor opened, a descent of the `runs` key, the
/// cursor closed), and a multi-row insert a statement journal: an
/// immediate foreign key counted over many rows is judged at the
/// statement's end, so SQLite keeps a copy of every page the statement
/// changes, to undo it alone (see [`crate::db::store`]'s batched inserts,
/// `INSERT OR FAIL`).
pub fn without_triggers<T, E: From<DbError>>(
    conn: &mut Connection,
    f: impl FnOnce(&mut Connection) -> Result<T, E>,
) -> Result<T, E> {
    use rusqlite::config::DbConfig::SQLITE_DBCONFIG_ENABLE_FKEY as KEYS;
    use rusqlite::config::DbConfig::SQLITE_DBCONFIG_ENABLE_TRIGGER as TRIGGERS;
    let config = |e: rusqlite::Error| DbError::Other(format!("cannot switch triggers: {e}"));
    // (set_db_config answers the setting after the change, not before it.)
    let was = conn.db_config(TRIGGERS).map_err(config)?;
    let keys = conn.db_config(KEYS).map_err(config)?;
    conn.set_db_config(TRIGGERS, false).map_err(config)?;
    if let Err(e) = conn.set_db_config(KEYS, false) {
        let _ = conn.set_db_config(TRIGGERS, was);
        return Err(E::from(config(e)));
    }
    let done = f(conn);
    let restored = conn.set_db_config(TRIGGERS, was);
    let restored_keys = conn.set_db_config(KEYS, keys);
    let done = done?;
    restored.map_err(config)?;
    restored_keys.map_err(config)?;
    Ok(done)
}

/// The `ingested_at` stamp of a row written now (UTC, ISO 8601).
pub fn now_utc() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    crate::util::iso8601_utc(secs)
}

/// The run-level row of an ingested artifact.
pub struct ArtifactRun<'a> {
    pub run_id: &'a str,
    pub session_id: Option<&'a str>,
    pub started_at_ns: Option<i64>,
    pub model: Option<&'a str>,
    pub endpoint: Option<&'a str>,
    pub artifact_name: &'a str,
    pub artifact_sha256: Option<&'a str>,
    pub artifact_bytes: i64,
    pub record_count: i64,
    pub line_count: i64,
    pub ingested_at: &'a str,
}

/// One artifact file's transaction: nothing it wrote is kept unless
/// [`ArtifactTx::commit`] is called.
pub struct ArtifactTx<'c> {
    tx: Transaction<'c>,
}

impl<'c> ArtifactTx<'c> {
    /// Begins the transaction (immediate: the ingest will write).
    pub fn begin(conn: &'c mut Connection) -> Result<Self, DbError> {
        // The multi-row inserts keep a statement journal (the pages they
        // change, to undo one statement alone); in a temporary file that is
        // 64 KiB written per page touched, ~40 MB per 6.9 MB artifact. In
        // memory it holds the one statement's few pages. Set before the
        // transaction, which fixes where the journal goes.
        conn.pragma_update(None, "temp_store", "MEMORY")
            .map_err(DbError::query(&sql::INGEST_INSERT_RUN))?;
        let tx = conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(DbError::query(&sql::INGEST_INSERT_RUN))?;
        Ok(ArtifactTx { tx })
    }

    /// The stored run's artifact hash and name, when the run exists (both
    /// None for a run that telemetry alone created).
    #[allow(clippy::type_complexity)]
    pub fn existing_run(
        &self,
        run_id: &str,
    ) -> Result<Option<(Option<String>, Option<String>)>, DbError> {
        self.tx
            .query_row(
                sql::RUNS_FIND.sql,
                rusqlite::named_params! {":run_id": run_id},
                |r| Ok((r.get(1)?, r.get(2)?)),
            )
            .optional()
            .map_err(DbError::query(&sql::RUNS_FIND))
    }

    /// Creates the run without an artifact, unless it exists.
    pub fn insert_placeholder_run(&self, run_id: &str, ingested_at: &str) -> Result<(), DbError> {
        self.tx
            .execute(
                sql::INGEST_INSERT_PLACEHOLDER_RUN.sql,
                rusqlite::named_params! {":run_id": run_id, ":ingested_at": ingested_at},
            )
            .map_err(DbError::query(&sql::INGEST_INSERT_PLACEHOLDER_RUN))?;
        Ok(())
    }

    /// Removes a run's artifact rows but keeps the run and its attached files.
    pub fn delete_artifact_rows(&self, run_id: &str) -> Result<(), DbError> {
        for q in sql::DELETE_ARTIFACT {
            self.tx
                .execute(q.sql, rusqlite::named_params! {":run_id": run_id})
                .map_err(DbError::query(q))?;
        }
        Ok(())
    }

    /// The writer of the run's rows, inside this transaction.
    pub fn writer(&self, run_id: &str) -> Result<Writer<'_>, DbError> {
        Writer::new(&self.tx, run_id)
    }

    /// Records the run's artifact, then commits everything written.
    pub fn commit_run(self, run: &ArtifactRun<'_>) -> Result<(), DbError> {
        self.tx
            .execute(
                sql::INGEST_INSERT_RUN.sql,
                rusqlite::named_params! {
                    ":run_id": run.run_id,
                    ":session_id": run.session_id,
                    ":started_at_ns": run.started_at_ns,
                    ":model": run.model,
                    ":endpoint": run.endpoint,
                    ":artifact_name": run.artifact_name,
                    ":artifact_sha256": run.artifact_sha256,
                    ":artifact_bytes": run.artifact_bytes,
                    ":record_count": run.record_count,
                    ":line_count": run.line_count,
                    ":ingested_at": run.ingested_at,
                },
            )
            .map_err(DbError::query(&sql::INGEST_INSERT_RUN))?;
        self.tx
            .commit()
            .map_err(DbError::query(&sql::INGEST_INSERT_RUN))
    }
}
