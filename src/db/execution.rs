//! The execution import's bulk records (`infer.activity_ref`,
//! `infer.iteration`, `infer.membership`, the hook's `infer.request`) as
//! fact lines, `execution_facts` (migrations/0007): written beside the
//! whole records at ingest, read by the report instead of the bodies.
use std::collections::HashMap;

use rusqlite::Connection;
use serde_json::{Map, Value};

use super::DbError;
use crate::analysis::execution as exec;
use crate::model::transport::Contexts;
use crate::sql;

/// A 128-bit hash of a comparison key, by two fixed seeds.
fn key_hash(key: &str) -> u128 {
    use std::hash::BuildHasher;
    let a = foldhash::fast::FixedState::with_seed(0x5eed_0001).hash_one(key);
    let b = foldhash::fast::FixedState::with_seed(0x5eed_0002).hash_one(key);
    (u128::from(a) << 64) | u128::from(b)
}

/// Fact lines per stored segment.
const SEGMENT_LINES: usize = 16_384;

/// Collects an ingest's fact lines; they are written at the end, once every
/// repeated identity or entity is known.
pub struct FactWriter<'c> {
    conn: &'c Connection,
    contexts: Contexts,
    /// (seq, line) in file order; a line is dropped when its key repeats.
    rows: Vec<(i64, Option<String>)>,
    /// Comparison key (hashed: a clash only sends two records to be read
    /// whole, which gives the same report) -> the first row holding it.
    keys: HashMap<u128, usize, foldhash::fast::RandomState>,
}

impl<'c> FactWriter<'c> {
    pub fn new(conn: &'c Connection) -> Result<Self, DbError> {
        Ok(FactWriter {
            conn,
            contexts: Contexts::default(),
            rows: Vec::new(),
            keys: HashMap::default(),
        })
    }

    /// A context definition of the file (the lines name their context).
    pub fn context(&mut self, id: &str, context: &Value) {
        self.contexts.insert(id.to_owned(), context.clone());
    }

    /// Notes a `records` row: a bulk type gets a line, or none when the
    /// report must read its body.
    pub fn note(&mut self, seq: i64, event_type: Option<&str>, body: &str) {
        if !event_type.is_some_and(|t| exec::BULK_TYPES.contains(&t)) {
            return;
        }
        let Ok(Value::Object(raw)) = crate::pyjson::parse(body) else {
            self.rows.push((seq, None));
            return;
        };
        let context_id = raw
            .get("context_id")
            .and_then(Value::as_str)
            .map(str::to_owned);
        let decoded = self.contexts.expand_owned(raw);
        let line = exec::fact_line(&decoded, context_id.as_deref());
        let at = self.rows.len();
        self.rows.push((seq, line));
        if let Some((identity, entity)) = exec::comparison_keys(&decoded) {
            for key in std::iter::once(identity).chain(entity) {
                let key = key_hash(&key);
                match self.keys.get(&key) {
                    Some(&first) => {
                        self.rows[first].1 = None;
                        self.rows[at].1 = None;
                    }
                    None => {
                        self.keys.insert(key, at);
                    }
                }
            }
        }
    }

    /// Writes the segments (segment 0 even when empty: it marks the run as
    /// ingested with its lines) and the records to read whole.
    pub fn finish(self, run_id: &str) -> Result<(), DbError> {
        if self.rows.is_empty() {
            return Ok(());
        }
        let (qf, qw) = (
            &sql::INGEST_INSERT_EXECUTION_FACTS,
            &sql::INGEST_INSERT_EXECUTION_WHOLE,
        );
        let mut facts = self.conn.prepare(qf.sql).map_err(DbError::query(qf))?;
        let mut whole = self.conn.prepare(qw.sql).map_err(DbError::query(qw))?;
        let (mut segment, mut lines, mut body) = (0i64, 0usize, String::new());
        let mut flush = |segment: &mut i64, lines: &mut usize, body: &mut String| {
            facts
                .execute(rusqlite::params![
                    run_id,
                    *segment,
                    *lines as i64,
                    body.as_str()
                ])
                .map_err(DbError::query(qf))?;
            *segment += 1;
            *lines = 0;
            body.clear();
            Ok::<(), DbError>(())
        };
        for (seq, line) in &self.rows {
            match line {
                Some(line) => {
                    body.push_str(line);
                    body.push('\n');
                    lines += 1;
                    if lines == SEGMENT_LINES {
                        flush(&mut segment, &mut lines, &mut body)?;
                    }
                }
                None => {
                    whole
                        .execute(rusqlite::params![run_id, seq])
                        .map_err(DbError::query(qw))?;
                }
            }
        }
        if lines > 0 || segment == 0 {
            flush(&mut segment, &mut lines, &mut body)?;
        }
        Ok(())
    }
}

/// `seq, text` rows of a query.
fn texts(conn: &Connection, q: &sql::Query, run_id: &str) -> Result<Vec<(i64, String)>, DbError> {
    let mut stmt = conn.prepare(q.sql).map_err(DbError::query(q))?;
    let rows = stmt
        .query_map(rusqlite::named_params! {":run_id": run_id}, |r| {
            Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?))
        })
        .map_err(DbError::query(q))?;
    rows.collect::<Result<_, _>>().map_err(DbError::query(q))
}

fn parsed(seq: i64, text: &str) -> Result<Map<String, Value>, DbError> {
    match crate::pyjson::parse(text) {
        Ok(Value::Object(m)) => Ok(m),
        Ok(_) => Err(DbError::Other(format!("records row {seq}: not an object"))),
        Err(e) => Err(DbError::Other(format!("records row {seq}: {e}"))),
    }
}

/// Reads the run's bulk execution records: the fact-line segments into
/// `facts`, the records without a line (decoded) into `records`. A run
/// without segments (a database older than them, or records edited with
/// SQL) has every bulk record read whole.
pub fn load(
    conn: &Connection,
    run_id: &str,
    contexts: &Contexts,
    records: &mut Vec<(i64, Value)>,
    facts: &mut Vec<String>,
) -> Result<(), DbError> {
    let q = &sql::LOAD_EXECUTION_RECORDS_EXIST;
    let exist: bool = conn
        .query_row(q.sql, rusqlite::named_params! {":run_id": run_id}, |r| {
            r.get(0)
        })
        .map_err(DbError::query(q))?;
    if !exist {
        return Ok(());
    }
    let q = &sql::LOAD_EXECUTION_FACTS;
    let mut stmt = conn.prepare(q.sql).map_err(DbError::query(q))?;
    *facts = stmt
        .query_map(rusqlite::named_params! {":run_id": run_id}, |r| {
            r.get::<_, String>(0)
        })
        .map_err(DbError::query(q))?
        .collect::<Result<_, _>>()
        .map_err(DbError::query(q))?;
    let bodies = if facts.is_empty() {
        texts(conn, &sql::LOAD_EXECUTION_RECORDS, run_id)?
    } else {
        texts(conn, &sql::LOAD_EXECUTION_BODIES, run_id)?
    };
    use rayon::prelude::*;
    let decoded: Vec<(i64, Value)> = bodies
        .into_par_iter()
        .map(|(seq, text)| {
            parsed(seq, &text).map(|m| (seq, Value::Object(contexts.expand_owned(m))))
        })
        .collect::<Result<_, _>>()?;
    records.extend(decoded);
    Ok(())
}
