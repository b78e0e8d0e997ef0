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

use crate::db::adhoc::QueryError;
use crate::db::{self, Connection, DbError};
use crate::exit::Exit;
pub use format::{Cell, Format, ResultSet};

/// What `stormlog sql` is asked (`cli::sql` fills it from the flags).
#[derive(Debug, Clone)]
pub struct SqlConfig {
    /// The project database.
    pub db: PathBuf,
    /// How to print results.
    pub format: Format,
    /// Read the SQL from this file.
    pub file: Option<PathBuf>,
    /// Write the results to this file instead of stdout.
    pub output: Option<PathBuf>,
    /// The SQL (stdin when neither this nor `file` is given).
    pub query: Option<String>,
    /// Stop a query that runs longer than this many seconds (0: no limit).
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
pub fn run(args: &SqlConfig, out: &mut dyn Write, err: &mut dyn Write) -> Result<Exit, SqlError> {
    run_with_input(args, &mut std::io::stdin().lock(), out, err)
}

/// [`run`] with stdin given (tests pass a buffer).
pub fn run_with_input(
    args: &SqlConfig,
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
    let conn = open_read_only(&args.db)?;
    let results = crate::db::adhoc::query_with_timeout(&conn, &sql, args.timeout)
        .map_err(|e| query_failed(e, args.timeout))?;
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
        crate::output::write_atomic(path, &file, crate::output::Parents::Keep)
            .map_err(|e| SqlError::Usage(format!("--output {e}")))?;
    }
    Ok(Exit::Ok)
}

/// A failed query as `sql` reports it; `seconds` is the `--timeout` given.
fn query_failed(e: QueryError, seconds: f64) -> SqlError {
    match e {
        QueryError::NoStatement => SqlError::Usage(e.to_string()),
        QueryError::Refused(m) => SqlError::Refused(m),
        QueryError::Failed(m) => SqlError::Query(m),
        QueryError::TimedOut => SqlError::Timeout(seconds),
    }
}

fn query_text(args: &SqlConfig, stdin: &mut dyn Read) -> Result<String, SqlError> {
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
/// then runs each and collects its rows (`db::adhoc::query`).
pub fn query(conn: &Connection, sql: &str) -> Result<Vec<ResultSet>, SqlError> {
    crate::db::adhoc::query(conn, sql).map_err(|e| query_failed(e, 0.0))
}

#[cfg(test)]
mod tests;
