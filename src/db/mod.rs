//! The project database: the only code that touches a `rusqlite::Connection`.
//!
//! Opening sets the pragmas (WAL, busy timeout, foreign keys) and applies the
//! forward-only migrations in `migrations/`, tracked by `PRAGMA user_version`,
//! in one transaction. A database written by a newer stormlog is refused.
//! Every connection gets stormlog's SQL functions (`functions`).
pub mod adhoc;
pub mod admin;
pub mod compare_read;
pub mod encode;
pub mod execution;
pub mod export;
pub mod export_pack;
pub mod failure;
pub mod functions;
pub mod history;
pub mod imports;
pub mod ingest;
pub mod pack;
pub mod raw;
pub mod read;
pub mod runs;
pub mod scan;
pub mod store;
pub mod tables;
pub mod telemetry;
pub mod writeback;

use std::path::{Path, PathBuf};
use std::time::Duration;

/// An open project database: the handle callers above `db` pass back to it.
pub use rusqlite::Connection;
use rusqlite::OpenFlags;
/// SQLite types the round-trip tests outside `db` compare and switch.
#[cfg(test)]
pub(crate) use rusqlite::{config::DbConfig, types::Value as SqlValue};

use crate::sql::Query;

/// The migrations, in order; `user_version` is the number applied.
pub(crate) const MIGRATIONS: &[(&str, &str)] = &[
    (
        "0001_initial",
        include_str!("../../migrations/0001_initial.sql"),
    ),
    (
        "0002_views",
        include_str!("../../migrations/0002_views.sql"),
    ),
    (
        "0003_requests_rowid",
        include_str!("../../migrations/0003_requests_rowid.sql"),
    ),
    (
        "0004_request_packs",
        include_str!("../../migrations/0004_request_packs.sql"),
    ),
    (
        "0005_views_ms",
        include_str!("../../migrations/0005_views_ms.sql"),
    ),
    (
        "0006_history_entries",
        include_str!("../../migrations/0006_history_entries.sql"),
    ),
    (
        "0007_execution_facts",
        include_str!("../../migrations/0007_execution_facts.sql"),
    ),
    (
        "0008_imports",
        include_str!("../../migrations/0008_imports.sql"),
    ),
    (
        "0009_typed_views",
        include_str!("../../migrations/0009_typed_views.sql"),
    ),
    (
        "0010_wide_integers",
        include_str!("../../migrations/0010_wide_integers.sql"),
    ),
    (
        "0011_typed_wide_views",
        include_str!("../../migrations/0011_typed_wide_views.sql"),
    ),
    (
        "0012_dispatches_first_contents",
        include_str!("../../migrations/0012_dispatches_first_contents.sql"),
    ),
    (
        "0013_execution_aggregates",
        include_str!("../../migrations/0013_execution_aggregates.sql"),
    ),
    (
        "0014_shared_request_fields",
        include_str!("../../migrations/0014_shared_request_fields.sql"),
    ),
    (
        "0015_request_pack_rest",
        include_str!("../../migrations/0015_request_pack_rest.sql"),
    ),
];

/// The schema every migration above leaves, as one script: a database made
/// new gets it in one step instead of replaying the history (each
/// `ALTER TABLE` of which makes SQLite parse the whole schema again: 96 M of
/// the 140 M instructions of creating a database and ingesting a small
/// run). Generated from a migrated database by [`snapshot_of`]; a test
/// checks that it is current and that both ways give the same schema.
const SNAPSHOT: &str = include_str!("../../migrations/snapshot.sql");

/// The first line of [`SNAPSHOT`]: the schema version it is.
fn snapshot_header() -> String {
    format!("-- stormlog schema version {SCHEMA_VERSION}")
}

/// The schema of `conn` as a script that makes it again: every object's
/// SQL (tables, then indexes, views and triggers, each kind in the order
/// they were made; SQLite's own objects, and the indexes a table's keys
/// make, left to SQLite).
#[cfg(test)]
fn snapshot_of(conn: &Connection) -> rusqlite::Result<String> {
    let mut stmt = conn.prepare(
        "SELECT sql FROM sqlite_schema
         WHERE sql IS NOT NULL AND substr(name, 1, 7) <> 'sqlite_'
         ORDER BY CASE type WHEN 'table' THEN 0 WHEN 'index' THEN 1 WHEN 'view' THEN 2 ELSE 3 END, rowid",
    )?;
    let sqls = stmt
        .query_map([], |r| r.get::<_, String>(0))?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    let mut out = snapshot_header();
    out.push_str(
        "\n-- Generated from a database migrations/0001-NNNN made (src/db/mod.rs,\n\
         -- `snapshot_of`); a database made new gets this script in one step.\n\
         -- Not a migration: never edit it by hand. After adding a migration:\n\
         --     STORMLOG_WRITE_SNAPSHOT=1 cargo test --lib schema_snapshot\n",
    );
    for sql in sqls {
        out.push('\n');
        out.push_str(&sql);
        out.push_str(";\n");
    }
    Ok(out)
}

/// The schema version a migration brings, by the name after its number.
const fn version_of(name: &str) -> i64 {
    let (name, mut i) = (name.as_bytes(), 0);
    while i < MIGRATIONS.len() {
        let m = MIGRATIONS[i].0.as_bytes();
        // "NNNN_" and then the name.
        if m.len() == name.len() + 5 {
            let mut j = 0;
            while j < name.len() && m[j + 5] == name[j] {
                j += 1;
            }
            if j == name.len() {
                return i as i64 + 1;
            }
        }
        i += 1;
    }
    panic!("no such migration")
}

/// The schema version whose integer columns hold integers past 64 bits.
const WIDE_INTEGERS_FROM: i64 = version_of("wide_integers");

/// How long a command waits for another one's lock on the database.
pub(crate) const BUSY_TIMEOUT: Duration = Duration::from_secs(30);

/// The schema version this build writes.
pub const SCHEMA_VERSION: i64 = MIGRATIONS.len() as i64;

#[derive(Debug, thiserror::Error)]
pub enum DbError {
    #[error("{path}: {source}")]
    Open {
        path: PathBuf,
        source: rusqlite::Error,
    },
    #[error(
        "{path}: the database has schema version {found}, newer than this stormlog understands ({SCHEMA_VERSION}); use a newer stormlog"
    )]
    TooNew { path: PathBuf, found: i64 },
    #[error("{path}: migration {name} failed: {source}")]
    Migration {
        path: PathBuf,
        name: &'static str,
        source: rusqlite::Error,
    },
    #[error("query {query}: {source}")]
    Query {
        query: &'static str,
        source: rusqlite::Error,
    },
    #[error("{0}")]
    Other(String),
    #[error(
        "no project database at {}; run `stormlog ingest FILE` first (or pass --db PATH)",
        shown(path)
    )]
    Missing { path: PathBuf },
    #[error("{}: not a stormlog database (a SQLite file stormlog did not make, or not SQLite at all); nothing was changed: pass --db PATH to a project database", path.display())]
    NotStormlog { path: PathBuf },
    #[error("{}: the database has schema version {found}, older than this stormlog's ({SCHEMA_VERSION}); `stormlog migrate --db {}` brings it up to date (read commands leave it as it is)", path.display(), path.display())]
    Older { path: PathBuf, found: i64 },
    #[error("'{name}' names {} runs ({}); give more of the run id", matches.len(), matches.join(", "))]
    AmbiguousRun { name: String, matches: Vec<String> },
    #[error("{}", unknown_run(name, suggestions))]
    UnknownRun {
        name: String,
        suggestions: Vec<String>,
    },
}

/// A relative path as a person typed it: `./stormlog.db` for `stormlog.db`.
fn shown(path: &Path) -> String {
    if path.is_relative() && path.components().count() == 1 {
        format!("./{}", path.display())
    } else {
        path.display().to_string()
    }
}

fn unknown_run(name: &str, suggestions: &[String]) -> String {
    let mut s = format!("no run '{name}' in the database");
    if suggestions.is_empty() {
        s.push_str("; `stormlog runs` lists them");
    } else {
        s.push_str(&format!("; did you mean {}?", suggestions.join(", ")));
    }
    s
}

impl DbError {
    /// The exit status a command ends with on this error: the user's input
    /// (a path or a run that is not there, a file that is not ours or of
    /// another version) is 5, a failure of the storage 6 (`failure`),
    /// anything else 1.
    pub fn exit(&self) -> crate::exit::Exit {
        match self {
            DbError::Missing { .. }
            | DbError::NotStormlog { .. }
            | DbError::Older { .. }
            | DbError::TooNew { .. }
            | DbError::UnknownRun { .. }
            | DbError::AmbiguousRun { .. } => crate::exit::Exit::InvalidInput,
            // A full disk, a read-only or busy file: 6; anything else is a bug.
            _ => failure::exit_of(self),
        }
    }

    pub fn query(q: &Query) -> impl Fn(rusqlite::Error) -> DbError + Copy {
        let name = q.name;
        move |source| DbError::Query {
            query: name,
            source,
        }
    }
}

/// How a database is opened.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Create when missing, migrate, read and write.
    ReadWrite,
    /// Must exist and be current; no writes are possible.
    ReadOnly,
    /// A throwaway database: migrated, written, never journaled or synced.
    Scratch,
}

/// Opens (creating and migrating as needed) the database at `path`.
pub fn open(path: &Path, mode: Mode) -> Result<Connection, DbError> {
    open_with(path, mode, true)
}

/// [`open`], with `wal: false` leaving a writable database in its journal
/// mode ([`open_for_ingest`]).
fn open_with(path: &Path, mode: Mode, wal: bool) -> Result<Connection, DbError> {
    let flags = match mode {
        Mode::ReadWrite => OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_CREATE,
        Mode::ReadOnly => OpenFlags::SQLITE_OPEN_READ_ONLY,
        Mode::Scratch => OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_CREATE,
    } | OpenFlags::SQLITE_OPEN_NO_MUTEX
        | OpenFlags::SQLITE_OPEN_URI;
    if mode == Mode::ReadOnly && !path.exists() {
        return Err(DbError::Other(format!(
            "{}: no such database; `stormlog ingest` creates it",
            path.display()
        )));
    }
    let conn = Connection::open_with_flags(path, flags).map_err(|source| DbError::Open {
        path: path.to_owned(),
        source,
    })?;
    prepare_with(conn, path, mode, wal)
}

/// Opens the database an ingest writes, as [`open`] in [`Mode::ReadWrite`],
/// except that a database this call creates (no file, or an empty one) is
/// left in SQLite's rollback-journal mode; `true` says so, and the caller
/// switches it to WAL with [`use_wal`] when its writing is done.
///
/// WAL writes every page twice (the log, then the checkpoint into the
/// database) and re-reads the log; a rollback journal writes a page appended
/// to the file once and journals only the few pages that existed before the
/// transaction. Atomicity is the same: a killed ingest leaves a hot journal,
/// and the next open rolls the file back to what it was (an empty, migrated
/// database). The cost is that a reader of a database being created waits
/// for the ingest's commit (up to the busy timeout) instead of reading the
/// empty database beside it. A 90,000-request artifact ingest into a new
/// database: 0.85-0.97 s with WAL, 0.69-0.71 s without (quick build,
/// interleaved; docs/performance.md). A database left in rollback mode by a
/// killed process becomes WAL at its next writing open.
pub fn open_for_ingest(path: &Path) -> Result<(Connection, bool), DbError> {
    let fresh = std::fs::metadata(path).map_or(true, |m| m.len() == 0);
    Ok((open_with(path, Mode::ReadWrite, !fresh)?, fresh))
}

/// Switches a database [`open_for_ingest`] created to WAL, for readers to go
/// on beside later writers.
pub fn use_wal(conn: &Connection, path: &Path) -> Result<(), DbError> {
    set_wal(conn).map_err(|source| DbError::Open {
        path: path.to_owned(),
        source,
    })
}

/// A scratch database in a temporary file that is deleted when the returned
/// handle drops (used by `infer analyze`): a run's pages stay on disk instead
/// of in the process, and nothing needs to survive a crash, so the journal is
/// off and nothing is synced.
pub fn open_scratch() -> Result<(Connection, tempfile::TempPath), DbError> {
    let file = tempfile::Builder::new()
        .prefix("stormlog-analyze-")
        .suffix(".db")
        .tempfile()
        .map_err(|e| DbError::Other(format!("cannot create a scratch database: {e}")))?;
    let path = file.into_temp_path();
    let conn = Connection::open(&path).map_err(|source| DbError::Open {
        path: path.to_path_buf(),
        source,
    })?;
    let open_err = |source| DbError::Open {
        path: path.to_path_buf(),
        source,
    };
    conn.pragma_update(None, "journal_mode", "OFF")
        .map_err(open_err)?;
    conn.pragma_update(None, "synchronous", "OFF")
        .map_err(open_err)?;
    let conn = prepare(conn, &path, Mode::Scratch)?;
    Ok((conn, path))
}

/// An in-memory database, migrated (used by tests).
pub fn open_memory() -> Result<Connection, DbError> {
    let conn = Connection::open_in_memory().map_err(|source| DbError::Open {
        path: PathBuf::from(":memory:"),
        source,
    })?;
    prepare(conn, Path::new(":memory:"), Mode::ReadWrite)
}

fn prepare(conn: Connection, path: &Path, mode: Mode) -> Result<Connection, DbError> {
    prepare_with(conn, path, mode, true)
}

/// [`prepare`], `wal` as in [`open_with`].
fn prepare_with(
    mut conn: Connection,
    path: &Path,
    mode: Mode,
    wal: bool,
) -> Result<Connection, DbError> {
    let open_err = |source| DbError::Open {
        path: path.to_owned(),
        source,
    };
    conn.busy_timeout(BUSY_TIMEOUT).map_err(open_err)?;
    // A run's loaders use cached statements: `report --all` loads every run
    // with the same few dozen queries, and re-parsing them per run was 8% of
    // its instructions (docs/scale.md). rusqlite keeps 16 by default.
    conn.set_prepared_statement_cache_capacity(128);
    if mode == Mode::ReadWrite {
        refuse_foreign(&conn, path)?;
    }
    // Every stormlog connection speaks the same SQL, so a query from
    // docs/sql.md gives the report's figures wherever it runs.
    functions::register(&conn).map_err(open_err)?;
    if mode != Mode::ReadOnly {
        // 64 KiB pages for a new database (an existing one keeps its own):
        // runs are appended in key order and read back whole. A 300,000-
        // request ingest measured 3.3-3.9 s with them against 4.3-4.8 s with
        // 4 KiB pages; a scratch database for analyze, 0.2 s less and half the
        // system time. Set before WAL and before the schema, which fix it.
        conn.pragma_update(None, "page_size", 65536)
            .map_err(open_err)?;
    }
    if mode == Mode::ReadWrite {
        // WAL lets readers go on while an ingest writes; NORMAL sync is safe in WAL
        // (a crash loses at most the last transaction, never corrupts).
        if wal {
            set_wal(&conn).map_err(open_err)?;
        }
        conn.pragma_update(None, "synchronous", "NORMAL")
            .map_err(open_err)?;
    }
    if mode != Mode::ReadOnly {
        // Inserts append in key order and reads scan a run once, so a small
        // page cache serves: 8 MiB for a kept database, 2 MiB for a scratch one
        // (its 64 KiB pages are written once; a 90,000-request analyze peaked
        // 10 MB lower with it, at the same speed).
        let kib = if mode == Mode::Scratch { 2048 } else { 8192 };
        conn.pragma_update(None, "cache_size", -kib)
            .map_err(open_err)?;
    }
    // A scratch database is written by one ingest and read by one report, both
    // ours: checking each row's parent run would cost a lookup per row for
    // nothing. Every database a person keeps enforces the keys.
    conn.pragma_update(None, "foreign_keys", mode != Mode::Scratch)
        .map_err(open_err)?;
    let found: i64 = conn
        .pragma_query_value(None, "user_version", |r| r.get(0))
        .map_err(open_err)?;
    if found > SCHEMA_VERSION {
        return Err(DbError::TooNew {
            path: path.to_owned(),
            found,
        });
    }
    if found < SCHEMA_VERSION {
        if mode == Mode::ReadOnly {
            return Err(DbError::Other(format!(
                "{}: the database has schema version {found}; open it once with a writing command (e.g. `stormlog ingest`) to migrate it to {SCHEMA_VERSION}",
                path.display()
            )));
        }
        migrate(&mut conn, path, found)?;
    }
    Ok(conn)
}

/// Refuses a SQLite file another program made (schema objects but no
/// stormlog `user_version`), before anything (WAL, page size, the schema)
/// would change it. An empty file or a new one becomes a stormlog database.
fn refuse_foreign(conn: &Connection, path: &Path) -> Result<(), DbError> {
    let refusal = |e: rusqlite::Error| match e.sqlite_error_code() {
        Some(rusqlite::ErrorCode::NotADatabase) => DbError::NotStormlog {
            path: path.to_owned(),
        },
        _ => DbError::Open {
            path: path.to_owned(),
            source: e,
        },
    };
    // Both read by one statement, so from one snapshot: read apart, another
    // command creating the same database could commit its schema between
    // them (version 0, then objects), and this one refuse a database that
    // is ours (`two_ingests_at_once_both_land`, about one round in 30).
    let (version, objects): (i64, i64) = conn
        .query_row(
            "SELECT (SELECT user_version FROM pragma_user_version), \
                    (SELECT count(*) FROM sqlite_schema)",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .map_err(refusal)?;
    if version == 0 && objects > 0 {
        return Err(DbError::NotStormlog {
            path: path.to_owned(),
        });
    }
    Ok(())
}

/// Switches the connection to WAL. Changing the journal mode takes an
/// exclusive lock without SQLite's busy handler, so two commands creating the
/// same database at once could see "database is locked": retry for as long as
/// the busy timeout would have waited.
fn set_wal(conn: &Connection) -> rusqlite::Result<()> {
    let started = std::time::Instant::now();
    loop {
        match conn.pragma_update(None, "journal_mode", "WAL") {
            Err(rusqlite::Error::SqliteFailure(e, _))
                if e.code == rusqlite::ErrorCode::DatabaseBusy
                    && started.elapsed() < BUSY_TIMEOUT =>
            {
                std::thread::sleep(Duration::from_millis(5));
            }
            other => return other,
        }
    }
}

fn migrate(conn: &mut Connection, path: &Path, from: i64) -> Result<(), DbError> {
    migrate_with(conn, path, from, true)
}

/// [`migrate`]; `snapshot`: whether a database made new may get the
/// current schema in one step ([`SNAPSHOT`]) instead of every migration.
fn migrate_with(
    conn: &mut Connection,
    path: &Path,
    from: i64,
    snapshot: bool,
) -> Result<(), DbError> {
    // IMMEDIATE: two processes opening a fresh database at once must not both migrate.
    let tx = conn
        .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
        .map_err(|source| DbError::Open {
            path: path.to_owned(),
            source,
        })?;
    let now: i64 = tx
        .pragma_query_value(None, "user_version", |r| r.get(0))
        .map_err(|source| DbError::Open {
            path: path.to_owned(),
            source,
        })?;
    let start = now.max(from);
    if snapshot && start == 0 && is_empty(&tx) && SNAPSHOT.starts_with(&snapshot_header()) {
        // A database made new: the current schema in one step, and nothing
        // to move, pack or backfill.
        return tx
            .execute_batch(SNAPSHOT)
            .and_then(|()| tx.pragma_update(None, "user_version", SCHEMA_VERSION))
            .and_then(|()| tx.commit())
            .map_err(|source| DbError::Migration {
                path: path.to_owned(),
                name: "snapshot",
                source,
            });
    }
    for (i, (name, sql)) in MIGRATIONS.iter().enumerate().skip(start as usize) {
        add_missing_columns(&tx, name).map_err(|source| DbError::Migration {
            path: path.to_owned(),
            name,
            source,
        })?;
        tx.execute_batch(sql).map_err(|source| DbError::Migration {
            path: path.to_owned(),
            name,
            source,
        })?;
        tx.pragma_update(None, "user_version", (i + 1) as i64)
            .map_err(|source| DbError::Migration {
                path: path.to_owned(),
                name,
                source,
            })?;
    }
    if start < PACKS_FROM && SCHEMA_VERSION >= PACKS_FROM {
        // Runs ingested before request packs existed get theirs now, once.
        pack_every_run(&tx)?;
    }
    if start < WIDE_INTEGERS_FROM && SCHEMA_VERSION >= WIDE_INTEGERS_FROM {
        // Integers past 64 bits kept in `extra` get their columns.
        store::widen_integers(&tx)?;
    }
    let typed = applied_by("0012_dispatches_first_contents");
    if start < typed && SCHEMA_VERSION >= typed {
        // Their records, kept whole until then, move to the new tables.
        store::move_to_typed_tables(&tx, &["infer.dispatch", "infer.first_content"])?;
    }
    let aggregates = applied_by("0013_execution_aggregates");
    if start < aggregates && SCHEMA_VERSION >= aggregates {
        // Last: its figures read the dispatches moved just above.
        execution::backfill(&tx)?;
    }
    tx.commit().map_err(|source| DbError::Open {
        path: path.to_owned(),
        source,
    })
}

/// Whether the database has no schema object at all.
fn is_empty(conn: &Connection) -> bool {
    conn.query_row("SELECT count(*) FROM sqlite_schema", [], |r| {
        r.get::<_, i64>(0)
    })
    .is_ok_and(|n| n == 0)
}

/// The columns a migration adds in code rather than in its script, each
/// where its table lacks it: a database that has them (the migration applied
/// again) keeps them and their values. 0014: `dispatches` and
/// `first_contents` get `link` and `shared`; 0015: `request_packs` gets `rest`.
fn add_missing_columns(conn: &Connection, migration: &str) -> rusqlite::Result<()> {
    let columns: &[(&str, &str, &str)] = match migration {
        "0014_shared_request_fields" => &[
            ("dispatches", "link", "INTEGER"),
            ("dispatches", "shared", "INTEGER NOT NULL DEFAULT 0"),
            ("first_contents", "link", "INTEGER"),
            ("first_contents", "shared", "INTEGER NOT NULL DEFAULT 0"),
        ],
        "0015_request_pack_rest" => &[("request_packs", "rest", "BLOB")],
        _ => &[],
    };
    for (table, column, decl) in columns {
        let present: i64 = conn.query_row(
            "SELECT count(*) FROM pragma_table_info(?1) WHERE name = ?2",
            [table, column],
            |r| r.get(0),
        )?;
        if present == 0 {
            conn.execute_batch(&format!("ALTER TABLE {table} ADD COLUMN {column} {decl}"))?;
        }
    }
    Ok(())
}

/// The schema version that added `request_packs`.
const PACKS_FROM: i64 = 4;

/// The schema version a database has once migration `name` is applied
/// (past the last one for a name not in the list).
fn applied_by(name: &str) -> i64 {
    MIGRATIONS
        .iter()
        .position(|(n, _)| *n == name)
        .map_or(i64::MAX, |i| i as i64 + 1)
}

/// Packs every run's request rows (a migration's backfill).
fn pack_every_run(conn: &Connection) -> Result<(), DbError> {
    let q = &crate::sql::RUNS_IDS;
    let ids: Vec<String> = conn
        .prepare(q.sql)
        .and_then(|mut s| s.query_map([], |r| r.get(0))?.collect())
        .map_err(DbError::query(q))?;
    for id in ids {
        store::store_pack(conn, &id, &store::pack_rows(conn, &id)?)?;
    }
    Ok(())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn every_registered_query_prepares() {
        let conn = open_memory().unwrap();
        for q in crate::sql::ALL {
            if let Err(e) = conn.prepare(q.sql) {
                panic!("query {} does not prepare: {e}", q.name);
            }
        }
    }

    /// Every schema object, SQLite's own and the key indexes included, with
    /// its SQL, and every table's columns.
    fn schema_of(conn: &Connection) -> Vec<String> {
        let mut out: Vec<String> = conn
            .prepare("SELECT type, name, tbl_name, ifnull(sql, '') FROM sqlite_schema")
            .unwrap()
            .query_map([], |r| {
                Ok(format!(
                    "{} {} {} {}",
                    r.get::<_, String>(0)?,
                    r.get::<_, String>(1)?,
                    r.get::<_, String>(2)?,
                    r.get::<_, String>(3)?
                ))
            })
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        let tables: Vec<String> = conn
            .prepare("SELECT name FROM sqlite_schema WHERE type = 'table'")
            .unwrap()
            .query_map([], |r| r.get(0))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        for t in tables {
            let cols: Vec<String> = conn
                .prepare("SELECT cid, name, type, \"notnull\", ifnull(dflt_value, ''), pk, hidden FROM pragma_table_xinfo(?1)")
                .unwrap()
                .query_map([&t], |r| {
                    Ok(format!(
                        "{t}.{}: {} {} {} {} {} {}",
                        r.get::<_, i64>(0)?,
                        r.get::<_, String>(1)?,
                        r.get::<_, String>(2)?,
                        r.get::<_, i64>(3)?,
                        r.get::<_, String>(4)?,
                        r.get::<_, i64>(5)?,
                        r.get::<_, i64>(6)?
                    ))
                })
                .unwrap()
                .collect::<Result<_, _>>()
                .unwrap();
            out.extend(cols);
        }
        out.sort();
        out
    }

    /// migrations/snapshot.sql is the schema the migrations make, and a
    /// database made new through it has exactly their objects and columns.
    /// `STORMLOG_WRITE_SNAPSHOT=1` rewrites the file (after a new migration).
    #[test]
    fn schema_snapshot_is_current_and_makes_the_migrated_schema() {
        let mut by_history = Connection::open_in_memory().unwrap();
        migrate_with(&mut by_history, Path::new(":memory:"), 0, false).unwrap();
        let want = snapshot_of(&by_history).unwrap();
        if std::env::var_os("STORMLOG_WRITE_SNAPSHOT").is_some() {
            let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("migrations/snapshot.sql");
            std::fs::write(file, &want).unwrap();
        } else {
            assert!(
                SNAPSHOT == want,
                "migrations/snapshot.sql is not the schema the migrations make; \
                 rewrite it: STORMLOG_WRITE_SNAPSHOT=1 cargo test --lib schema_snapshot"
            );
        }
        let fresh = open_memory().unwrap();
        let version = |c: &Connection| -> i64 {
            c.pragma_query_value(None, "user_version", |r| r.get(0))
                .unwrap()
        };
        assert_eq!(version(&fresh), SCHEMA_VERSION);
        assert_eq!(version(&by_history), SCHEMA_VERSION);
        let (made, migrated) = (schema_of(&fresh), schema_of(&by_history));
        assert!(made.len() > 100, "{} objects and columns", made.len());
        assert_eq!(made, migrated);
    }

    /// Only a database without any schema object is made from the snapshot;
    /// one with objects goes through the migrations from its version.
    #[test]
    fn a_database_with_objects_is_migrated_not_remade() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("v13.db");
        old_database(
            &path,
            13,
            "INSERT INTO runs (run_id, ingested_at) VALUES ('r', 'now');",
        );
        let conn = open(&path, Mode::ReadWrite).unwrap();
        let runs: i64 = conn
            .query_row("SELECT count(*) FROM runs", [], |r| r.get(0))
            .unwrap();
        assert_eq!(runs, 1);
        let mut by_history = Connection::open_in_memory().unwrap();
        migrate_with(&mut by_history, Path::new(":memory:"), 0, false).unwrap();
        assert_eq!(schema_of(&conn), schema_of(&by_history));
    }

    #[test]
    fn newer_database_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.db");
        {
            let conn = open(&path, Mode::ReadWrite).unwrap();
            conn.pragma_update(None, "user_version", SCHEMA_VERSION + 1)
                .unwrap();
        }
        let err = open(&path, Mode::ReadWrite).unwrap_err().to_string();
        assert!(err.contains("newer than this stormlog"), "{err}");
    }

    /// Writes a database at `path` as schema version `version` left it, with
    /// the rows `rows` (SQL) in it.
    fn old_database(path: &Path, version: usize, rows: &str) {
        let mut conn = Connection::open(path).unwrap();
        let tx = conn.transaction().unwrap();
        for (_, sql) in &MIGRATIONS[..version] {
            tx.execute_batch(sql).unwrap();
        }
        tx.pragma_update(None, "user_version", version as i64)
            .unwrap();
        tx.execute_batch(rows).unwrap();
        tx.commit().unwrap();
    }

    #[test]
    fn requests_written_before_0003_keep_their_rows_key_and_views() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("v2.db");
        old_database(
            &path,
            2,
            "INSERT INTO runs (run_id, ingested_at) VALUES ('r', 'now');
             INSERT INTO requests (run_id, seq, case_key, status_key, request_id, ttft_ms)
             VALUES ('r', 7, 'c', 'ok', 'second', 2.5), ('r', 3, 'c', 'ok', 'first', 1.5);",
        );
        let conn = open(&path, Mode::ReadWrite).unwrap();
        let v: i64 = conn
            .pragma_query_value(None, "user_version", |r| r.get(0))
            .unwrap();
        assert_eq!(v, SCHEMA_VERSION);
        let rows: Vec<(i64, String, f64)> = conn
            .prepare("SELECT seq, request_id, ttft_ms FROM v_requests ORDER BY seq")
            .unwrap()
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(
            rows,
            [(3, "first".to_owned(), 1.5), (7, "second".to_owned(), 2.5)]
        );
        let table: String = conn
            .query_row(
                "SELECT group_concat(name || ': ' || sql, '; ') FROM sqlite_schema
                 WHERE tbl_name LIKE 'requests%' AND type = 'table'",
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert!(
            table.starts_with("requests: CREATE TABLE requests ("),
            "{table}"
        );
        assert!(!table.contains("WITHOUT ROWID"), "{table}");
        let dup = conn.execute(
            "INSERT INTO requests (run_id, seq, case_key, status_key) VALUES ('r', 3, 'c', 'ok')",
            [],
        );
        assert!(dup.unwrap_err().to_string().contains("UNIQUE"));
        let check: String = conn
            .query_row("PRAGMA integrity_check", [], |r| r.get(0))
            .unwrap();
        assert_eq!(check, "ok");
    }

    /// Runs stored before request packs get theirs in the migration that adds
    /// them: the pack of their rows, read back as the rows read.
    #[test]
    fn runs_stored_before_0004_are_packed_by_the_migration() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("v3.db");
        old_database(
            &path,
            3,
            "INSERT INTO runs (run_id, ingested_at) VALUES ('r', 'now'), ('empty', 'now');
             INSERT INTO requests (run_id, seq, case_key, status_key, request_id, ttft_ms)
             VALUES ('r', 7, 'c', 'ok', 'second', 2), ('r', 3, 'c', 'ok', 'first', 1.5);",
        );
        let conn = open(&path, Mode::ReadWrite).unwrap();
        let packs: Vec<(String, i64, i64, Vec<u8>)> = conn
            .prepare("SELECT run_id, segment, requests, body FROM request_packs ORDER BY run_id")
            .unwrap()
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        // A run without requests has no segment.
        assert_eq!(packs.len(), 1);
        assert_eq!((packs[0].0.as_str(), packs[0].1, packs[0].2), ("r", 0, 2));
        assert_eq!(
            vec![(2, packs[0].3.clone())],
            store::pack_rows(&conn, "r").unwrap()
        );
        let data = store::load_run(&conn, "r").unwrap();
        let got: Vec<(i64, Option<f64>)> =
            data.requests.iter().map(|r| (r.seq, r.ttft_ms())).collect();
        // The integer 2 in the REAL column reads back as the real 2.0.
        assert_eq!(got, [(3, Some(1.5)), (7, Some(2.0))]);
    }

    /// Defect 1 of issue 23: a database of the schema before 0010 kept an
    /// integer past 64 bits only in `extra`, its column NULL. The migration
    /// keeps every row and value and moves such integers into their columns,
    /// as text; the report reads the same values, from a fresh pack.
    #[test]
    fn defect_1_the_migration_moves_integers_past_64_bits_into_their_columns() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("v8.db");
        old_database(
            &path,
            version_of("wide_integers") as usize - 1,
            r#"INSERT INTO runs (run_id, ingested_at) VALUES ('r', 'now');
             INSERT INTO requests (run_id, seq, case_key, status_key, request_id, ttft_ms,
                                   output_tokens, started_at_ns, extra)
             VALUES ('r', 1, 'c', 'ok', 'a', 1.5, NULL, 5,
                     '{"output_tokens":9223372036854775808,"mine":[1,NaN]}'),
                    ('r', 2, 'c', 'ok', 'b', 2.5, 12, NULL,
                     '{"started_at_ns":-1000000000000000000000000000000}'),
                    ('r', 3, 'c', 'ok', 'c', 3.5, 7, 9, NULL);
             INSERT INTO phase_windows (run_id, seq, case_id, drained_at_ns, extra)
             VALUES ('r', 0, 'c', NULL,
                     '{"drained_at_ns":10000000000000000000000000000000000000000}');"#,
        );
        let conn = open(&path, Mode::ReadWrite).unwrap();
        type Row = (
            i64,
            String,
            f64,
            Option<String>,
            Option<String>,
            Option<String>,
        );
        let rows: Vec<Row> = conn
            .prepare(
                "SELECT seq, request_id, ttft_ms, CAST(output_tokens AS TEXT) || ':' ||
                        typeof(output_tokens), CAST(started_at_ns AS TEXT) || ':' ||
                        typeof(started_at_ns), extra FROM requests ORDER BY seq",
            )
            .unwrap()
            .query_map([], |r| {
                Ok((
                    r.get(0)?,
                    r.get(1)?,
                    r.get(2)?,
                    r.get(3)?,
                    r.get(4)?,
                    r.get(5)?,
                ))
            })
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        let text = |s: &str| Some(s.to_owned());
        assert_eq!(
            rows,
            [
                (
                    1,
                    "a".into(),
                    1.5,
                    text("9223372036854775808:text"),
                    text("5:integer"),
                    // What was not an integer past 64 bits stays in `extra`.
                    text(r#"{"mine":[1,"\u0001NaN"]}"#),
                ),
                (
                    2,
                    "b".into(),
                    2.5,
                    text("12:integer"),
                    text("-1000000000000000000000000000000:text"),
                    None
                ),
                (
                    3,
                    "c".into(),
                    3.5,
                    text("7:integer"),
                    text("9:integer"),
                    None
                ),
            ]
        );
        let drained: (String, String, Option<String>) = conn
            .query_row(
                "SELECT drained_at_ns, typeof(drained_at_ns), extra FROM phase_windows",
                [],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
            )
            .unwrap();
        assert_eq!(
            drained,
            (
                "10000000000000000000000000000000000000000".into(),
                "text".into(),
                None
            )
        );
        // The run was packed again, and the pack and the rows read alike.
        let packs: i64 = conn
            .query_row("SELECT count(*) FROM request_packs", [], |r| r.get(0))
            .unwrap();
        assert_eq!(packs, 1);
        let data = store::load_run(&conn, "r").unwrap();
        let tokens: Vec<Option<String>> = data
            .requests
            .iter()
            .map(|r| Some(r.output_tokens_int().to_string()))
            .collect();
        assert_eq!(tokens, [text("9223372036854775808"), text("12"), text("7")]);
        let starts: Vec<Option<String>> = data
            .requests
            .iter()
            .map(|r| r.started_at().map(|i| i.to_string()))
            .collect();
        assert_eq!(
            starts,
            [
                text("5"),
                text("-1000000000000000000000000000000"),
                text("9")
            ]
        );
        let check: String = conn
            .query_row("PRAGMA integrity_check", [], |r| r.get(0))
            .unwrap();
        assert_eq!(check, "ok");
    }

    #[test]
    fn a_scratch_database_has_big_pages_no_journal_and_goes_away() {
        let (conn, path) = open_scratch().unwrap();
        let pragma = |name: &str| -> String {
            conn.pragma_query_value(None, name, |r| r.get::<_, rusqlite::types::Value>(0))
                .map(|v| format!("{v:?}"))
                .unwrap()
        };
        assert_eq!(pragma("page_size"), "Integer(65536)");
        assert_eq!(pragma("cache_size"), "Integer(-2048)");
        assert_eq!(pragma("journal_mode"), "Text(\"off\")");
        assert_eq!(pragma("foreign_keys"), "Integer(0)");
        assert_eq!(pragma("user_version"), format!("Integer({SCHEMA_VERSION})"));
        let file = path.to_path_buf();
        assert!(file.exists());
        drop(conn);
        drop(path);
        assert!(!file.exists());
    }

    #[test]
    fn a_new_project_database_has_big_pages_and_wal_an_old_one_keeps_its_pages() {
        let dir = tempfile::tempdir().unwrap();
        let page_size = |c: &Connection| -> i64 {
            c.pragma_query_value(None, "page_size", |r| r.get(0))
                .unwrap()
        };
        let fresh = dir.path().join("new.db");
        let conn = open(&fresh, Mode::ReadWrite).unwrap();
        assert_eq!(page_size(&conn), 65536);
        let journal: String = conn
            .pragma_query_value(None, "journal_mode", |r| r.get(0))
            .unwrap();
        assert_eq!(journal, "wal");
        // An older stormlog database, made with 4 KiB pages.
        let old = dir.path().join("old.db");
        let made = Connection::open(&old).unwrap();
        made.execute_batch("PRAGMA page_size = 4096;").unwrap();
        made.execute_batch(MIGRATIONS[0].1).unwrap();
        made.pragma_update(None, "user_version", 1).unwrap();
        drop(made);
        let conn = open(&old, Mode::ReadWrite).unwrap();
        assert_eq!(page_size(&conn), 4096);
    }

    #[test]
    fn a_writing_command_refuses_another_programs_sqlite_file() {
        let dir = tempfile::tempdir().unwrap();
        let theirs = dir.path().join("theirs.db");
        Connection::open(&theirs)
            .unwrap()
            .execute_batch("CREATE TABLE t (x); INSERT INTO t VALUES (1);")
            .unwrap();
        let before = std::fs::read(&theirs).unwrap();
        let err = open(&theirs, Mode::ReadWrite).unwrap_err();
        assert!(matches!(err, DbError::NotStormlog { .. }), "{err}");
        assert_eq!(std::fs::read(&theirs).unwrap(), before);
        // An empty file becomes a project database.
        let empty = dir.path().join("empty.db");
        std::fs::write(&empty, "").unwrap();
        assert!(open(&empty, Mode::ReadWrite).is_ok());
    }

    #[test]
    fn migration_is_recorded() {
        let conn = open_memory().unwrap();
        let v: i64 = conn
            .pragma_query_value(None, "user_version", |r| r.get(0))
            .unwrap();
        assert_eq!(v, SCHEMA_VERSION);
    }
}
