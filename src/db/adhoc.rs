//! Ad-hoc read-only SQL over the project database (`stormlog sql`'s
//! statements): every statement prepared and checked before any runs, one
//! that would write (or `ATTACH` a database) refusing the lot, an optional
//! time limit, and the rows as plain values.
use rusqlite::types::ValueRef;
use rusqlite::{Batch, Connection, Statement};

/// One value of a result row, with its SQLite type.
#[derive(Debug, Clone, PartialEq)]
pub enum Cell {
    Null,
    Int(i64),
    Real(f64),
    Text(String),
    Blob(Vec<u8>),
}

/// A statement's result: column names and rows.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ResultSet {
    pub columns: Vec<String>,
    pub rows: Vec<Vec<Cell>>,
}

/// Why a query gave no results.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum QueryError {
    /// The text holds no statement.
    #[error("no SQL statement given")]
    NoStatement,
    /// A statement would write; nothing ran.
    #[error("{0}")]
    Refused(String),
    /// A statement did not prepare or failed while running.
    #[error("{0}")]
    Failed(String),
    /// The time limit passed and the query was interrupted.
    #[error("the query ran past its time limit")]
    TimedOut,
}

/// [`query`], interrupted once `seconds` have passed (0: no limit). A
/// watcher thread waits on a channel that the end of the work closes, so a
/// finished query costs no waiting.
pub fn query_with_timeout(
    conn: &Connection,
    sql: &str,
    seconds: f64,
) -> Result<Vec<ResultSet>, QueryError> {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;
    if seconds == 0.0 {
        return query(conn, sql);
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
    let result = query(conn, sql);
    drop(done);
    let _ = watcher.join();
    match result {
        Err(_) if fired.load(Ordering::SeqCst) => Err(QueryError::TimedOut),
        other => other,
    }
}

/// Prepares every statement of `sql`, refuses the lot if any would write,
/// then runs each and collects its rows. Statements without result columns
/// (e.g. `BEGIN`) give no result set.
pub fn query(conn: &Connection, sql: &str) -> Result<Vec<ResultSet>, QueryError> {
    let mut stmts: Vec<Statement<'_>> = Vec::new();
    let mut batch = Batch::new(conn, sql);
    loop {
        let n = stmts.len() + 1;
        match batch.next() {
            Ok(Some(s)) => stmts.push(s),
            Ok(None) => break,
            Err(e) => return Err(QueryError::Failed(format!("statement {n}: {e}"))),
        }
    }
    if stmts.is_empty() {
        return Err(QueryError::NoStatement);
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
fn check(n: usize, stmt: &Statement<'_>) -> Result<(), QueryError> {
    let text = stmt.expanded_sql().unwrap_or_default();
    let words = leading_words(&text, 2);
    let first = words.first().map(String::as_str).unwrap_or("");
    let refuse = |what: &str| {
        Err(QueryError::Refused(format!(
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

fn run_one(n: usize, stmt: &mut Statement<'_>) -> Result<Option<ResultSet>, QueryError> {
    let columns: Vec<String> = stmt.column_names().iter().map(|c| c.to_string()).collect();
    let failed = |e: rusqlite::Error| {
        if e.sqlite_error_code() == Some(rusqlite::ErrorCode::ReadOnly) {
            QueryError::Refused(format!("statement {n} refused: {e}; {ONLY_READS}"))
        } else {
            QueryError::Failed(format!("statement {n}: {e}"))
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
mod tests {
    use super::leading_words;

    #[test]
    fn leading_words_skip_comments() {
        assert_eq!(
            leading_words("  -- x\n /* y */ pragma main.user_version", 2),
            ["PRAGMA", "MAIN.USER_VERSION"]
        );
        assert_eq!(leading_words("/* unterminated", 1), Vec::<String>::new());
    }
}
