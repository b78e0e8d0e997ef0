//! `stormlog sql`: read-only SQL over the project database, for people.
//!
//! The query comes from the argument, a file (`-f`) or stdin. Every
//! statement is prepared and checked before any runs: one that would write
//! (`INSERT`, `CREATE`, `PRAGMA x = y`, `VACUUM`, ...) or `ATTACH` another
//! database refuses the whole query, and nothing runs. The connection has
//! `PRAGMA query_only` on (`db::read`), so a statement the check misses
//! still cannot write a row. (It is not opened read-only at the file level:
//! such a connection leaves a WAL database's `-wal` and `-shm` files behind.
//! Where the directory cannot be written it is opened immutable, which is
//! read-only.) The views of `migrations/0002` and
//! the `percentile` aggregate of `db::functions` are there; docs/sql.md
//! documents them with worked queries.
pub mod format;

use std::io::{Read, Write};
use std::path::PathBuf;

use rusqlite::types::ValueRef;
use rusqlite::{Batch, Connection, Statement};

use crate::db::{self, DbError};
use crate::exit::Exit;
pub use format::{Cell, Format, ResultSet};

/// `stormlog sql` arguments.
#[derive(Debug, Clone, clap::Args)]
pub struct SqlArgs {
    #[command(flatten)]
    pub db: crate::cli::DbArg,
    /// How to print results: txt (alias table) for people, csv, json (one
    /// object per line), markdown.
    #[arg(long, value_enum, default_value = "txt")]
    pub format: Format,
    /// Read the SQL from this file.
    #[arg(
        short = 'f',
        long = "file",
        value_name = "PATH",
        conflicts_with = "query"
    )]
    pub file: Option<PathBuf>,
    /// Write the results to FILE instead of stdout.
    #[arg(long, short = 'o', value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// The SQL: one or more statements separated by `;` (stdin when neither
    /// this nor --file is given).
    pub query: Option<String>,
    /// Stop a query that runs longer than this many seconds (0: no limit).
    #[arg(long, value_name = "SECONDS", default_value_t = 60.0)]
    pub timeout: f64,
}

/// Why `stormlog sql` failed.
#[derive(Debug, thiserror::Error)]
pub enum SqlError {
    /// The command line asked for something impossible.
    #[error("{0}")]
    Usage(String),
    /// A statement would write; nothing ran.
    #[error("{0}")]
    Refused(String),
    /// A statement did not prepare or failed while running.
    #[error("{0}")]
    Query(String),
    /// The query ran past `--timeout` and was stopped.
    #[error("the query ran longer than --timeout {0} s and was stopped; nothing was changed. Narrow it (a LIMIT, a WHERE, a bound on a recursive CTE) or pass a larger --timeout (0 for none)")]
    Timeout(f64),
    #[error(transparent)]
    Db(#[from] DbError),
    #[error("{0}")]
    Io(#[from] std::io::Error),
}

impl SqlError {
    /// The exit status this failure maps to.
    pub fn exit(&self) -> Exit {
        match self {
            SqlError::Usage(_) => Exit::Usage,
            SqlError::Refused(_) | SqlError::Query(_) | SqlError::Timeout(_) => Exit::InvalidInput,
            SqlError::Db(e) => e.exit(),
            SqlError::Io(_) => Exit::Unexpected,
        }
    }

    /// Whether the reader went away (`stormlog sql ... | head`).
    pub fn is_broken_pipe(&self) -> bool {
        matches!(self, SqlError::Io(e) if e.kind() == std::io::ErrorKind::BrokenPipe)
    }
}

/// Runs `stormlog sql`, reading the query from stdin when no other source is given.
pub fn run(args: &SqlArgs, out: &mut dyn Write, err: &mut dyn Write) -> Result<Exit, SqlError> {
    run_with_input(args, &mut std::io::stdin().lock(), out, err)
}

/// [`run`] with stdin given (tests pass a buffer).
pub fn run_with_input(
    args: &SqlArgs,
    stdin: &mut dyn Read,
    out: &mut dyn Write,
    _err: &mut dyn Write,
) -> Result<Exit, SqlError> {
    let sql = query_text(args, stdin)?;
    if !(args.timeout >= 0.0 && args.timeout.is_finite()) {
        return Err(SqlError::Usage(format!(
            "--timeout {}: give a number of seconds, 0 or more",
            args.timeout
        )));
    }
    let conn = open_read_only(&args.db.db)?;
    let results = with_timeout(&conn, args.timeout, || query(&conn, &sql))?;
    let mut file = Vec::new();
    let sink: &mut dyn Write = if args.output.is_some() {
        &mut file
    } else {
        out
    };
    for (i, rs) in results.iter().enumerate() {
        // A blank line between results keeps several tables readable; JSON
        // lines need no separator.
        if i > 0 && args.format != Format::Json {
            writeln!(sink)?;
        }
        format::write(args.format, rs, sink)?;
    }
    sink.flush()?;
    if let Some(path) = &args.output {
        std::fs::write(path, &file)
            .map_err(|e| SqlError::Usage(format!("--output {}: {}", path.display(), e)))?;
    }
    Ok(Exit::Ok)
}

/// Runs `work` on `conn`, interrupting SQLite once `seconds` have passed
/// (0: never). A watcher thread waits on a channel that the end of the
/// work closes, so a finished query costs no waiting.
fn with_timeout<T>(
    conn: &Connection,
    seconds: f64,
    work: impl FnOnce() -> Result<T, SqlError>,
) -> Result<T, SqlError> {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;
    if seconds == 0.0 {
        return work();
    }
    let handle = conn.get_interrupt_handle();
    let fired = Arc::new(AtomicBool::new(false));
    let (done, wait) = std::sync::mpsc::channel::<()>();
    let watcher = {
        let fired = Arc::clone(&fired);
        let limit = std::time::Duration::from_secs_f64(seconds.min(1e9));
        std::thread::spawn(move || {
            if let Err(std::sync::mpsc::RecvTimeoutError::Timeout) = wait.recv_timeout(limit) {
                fired.store(true, Ordering::SeqCst);
                handle.interrupt();
            }
        })
    };
    let result = work();
    drop(done);
    let _ = watcher.join();
    match result {
        Err(_) if fired.load(Ordering::SeqCst) => Err(SqlError::Timeout(seconds)),
        other => other,
    }
}

fn query_text(args: &SqlArgs, stdin: &mut dyn Read) -> Result<String, SqlError> {
    match (&args.query, &args.file) {
        (Some(_), Some(_)) => Err(SqlError::Usage(
            "give the SQL either as an argument or with --file, not both".into(),
        )),
        (Some(q), None) => Ok(q.clone()),
        (None, Some(path)) => std::fs::read_to_string(path)
            .map_err(|e| SqlError::Usage(format!("--file {}: {e}", path.display()))),
        (None, None) => {
            let mut s = String::new();
            stdin
                .read_to_string(&mut s)
                .map_err(|e| SqlError::Usage(format!("reading the SQL from stdin: {e}")))?;
            Ok(s)
        }
    }
}

/// Opens the database at `path` so that nothing can write through the
/// connection (`db::read`: never created, migrated or left with `-wal`/`-shm`
/// files it did not have; `query_only` at the SQL level).
pub fn open_read_only(path: &std::path::Path) -> Result<Connection, SqlError> {
    Ok(db::read::open_for_reading(path)?)
}

/// Prepares every statement of `sql`, refuses the lot if any would write,
/// then runs each and collects its rows. Statements without result columns
/// (e.g. `BEGIN`) give no result set.
pub fn query(conn: &Connection, sql: &str) -> Result<Vec<ResultSet>, SqlError> {
    let mut stmts: Vec<Statement<'_>> = Vec::new();
    let mut batch = Batch::new(conn, sql);
    loop {
        let n = stmts.len() + 1;
        match batch.next() {
            Ok(Some(s)) => stmts.push(s),
            Ok(None) => break,
            Err(e) => return Err(SqlError::Query(format!("statement {n}: {e}"))),
        }
    }
    if stmts.is_empty() {
        return Err(SqlError::Usage("no SQL statement given".into()));
    }
    for (i, s) in stmts.iter().enumerate() {
        check(i + 1, s)?;
    }
    let mut results = Vec::new();
    for (i, s) in stmts.iter_mut().enumerate() {
        if let Some(rs) = run_one(i + 1, s)? {
            results.push(rs);
        }
    }
    Ok(results)
}

const ONLY_READS: &str = "`stormlog sql` only reads the database; nothing was changed";

/// Refuses a statement that would write, or attach a database (SQLite
/// counts `ATTACH` as read-only, but the attached file could be written).
fn check(n: usize, stmt: &Statement<'_>) -> Result<(), SqlError> {
    let text = stmt.expanded_sql().unwrap_or_default();
    let words = leading_words(&text, 2);
    let first = words.first().map(String::as_str).unwrap_or("");
    let refuse = |what: &str| {
        Err(SqlError::Refused(format!(
            "statement {n} refused: {what}; {ONLY_READS}"
        )))
    };
    match first {
        "ATTACH" | "DETACH" => {
            return refuse(&format!(
                "{first} is not allowed (an attached database could be written); query one database per `--db`"
            ))
        }
        "VACUUM" => return refuse("VACUUM writes a database file"),
        // `PRAGMA name = value` and `PRAGMA name(value)` set; only the bare
        // form and the table-valued ones (`table_info(t)`) read.
        "PRAGMA" if text.contains('=') || (text.contains('(') && !reading_pragma(&text)) => {
            return refuse("a PRAGMA that sets a value")
        }
        _ => {}
    }
    if !stmt.readonly() {
        let kind = if first.is_empty() { "it" } else { first };
        return refuse(&format!("{kind} would change the database"));
    }
    Ok(())
}

/// Pragmas whose argument names what to read, not a value to set.
fn reading_pragma(text: &str) -> bool {
    const READING: &[&str] = &[
        "TABLE_INFO",
        "TABLE_XINFO",
        "TABLE_LIST",
        "INDEX_INFO",
        "INDEX_XINFO",
        "INDEX_LIST",
        "FOREIGN_KEY_LIST",
        "FOREIGN_KEY_CHECK",
        "INTEGRITY_CHECK",
        "QUICK_CHECK",
    ];
    let words = leading_words(text, 2);
    words.get(1).is_some_and(|w| {
        // `PRAGMA main.table_info(t)`: the name is after the schema.
        let name = w.rsplit('.').next().unwrap_or(w);
        READING.contains(&name)
    })
}

/// The first `n` words of `sql` (upper-cased), skipping comments.
fn leading_words(sql: &str, n: usize) -> Vec<String> {
    let mut words = Vec::new();
    let mut rest = sql;
    while words.len() < n {
        rest = rest.trim_start();
        if let Some(r) = rest.strip_prefix("--") {
            rest = r.split_once('\n').map_or("", |(_, after)| after);
            continue;
        }
        if let Some(r) = rest.strip_prefix("/*") {
            rest = r.split_once("*/").map_or("", |(_, after)| after);
            continue;
        }
        let end = rest
            .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == '.'))
            .unwrap_or(rest.len());
        if end == 0 {
            break;
        }
        words.push(rest[..end].to_ascii_uppercase());
        rest = &rest[end..];
    }
    words
}

fn run_one(n: usize, stmt: &mut Statement<'_>) -> Result<Option<ResultSet>, SqlError> {
    let columns: Vec<String> = stmt.column_names().iter().map(|c| c.to_string()).collect();
    let failed = |e: rusqlite::Error| {
        if e.sqlite_error_code() == Some(rusqlite::ErrorCode::ReadOnly) {
            SqlError::Refused(format!("statement {n} refused: {e}; {ONLY_READS}"))
        } else {
            SqlError::Query(format!("statement {n}: {e}"))
        }
    };
    let width = columns.len();
    let mut rows_out = Vec::new();
    let mut rows = stmt.query([]).map_err(failed)?;
    while let Some(row) = rows.next().map_err(failed)? {
        let mut cells = Vec::with_capacity(width);
        for i in 0..width {
            cells.push(match row.get_ref(i).map_err(failed)? {
                ValueRef::Null => Cell::Null,
                ValueRef::Integer(v) => Cell::Int(v),
                ValueRef::Real(v) => Cell::Real(v),
                ValueRef::Text(t) => Cell::Text(String::from_utf8_lossy(t).into_owned()),
                ValueRef::Blob(b) => Cell::Blob(b.to_vec()),
            });
        }
        rows_out.push(cells);
    }
    if width == 0 {
        return Ok(None);
    }
    Ok(Some(ResultSet {
        columns,
        rows: rows_out,
    }))
}

#[cfg(test)]
mod tests;
