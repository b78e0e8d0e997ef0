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
    /// Bodies of bulk records not reduced yet: (seq, body) in file order.
    pending: Vec<(i64, String)>,
}

/// Bulk bodies reduced together.
const BATCH: usize = 2048;

impl<'c> FactWriter<'c> {
    pub fn new(conn: &'c Connection) -> Result<Self, DbError> {
        Ok(FactWriter {
            conn,
            contexts: Contexts::default(),
            rows: Vec::new(),
            keys: HashMap::default(),
            pending: Vec::new(),
        })
    }

    /// A context definition of the file (the lines name their context).
    pub fn context(&mut self, id: &str, context: &Value) {
        // The records waiting were written before it: they read the
        // contexts as they were.
        self.settle();
        self.contexts.insert(id.to_owned(), context.clone());
    }

    /// Notes a `records` row: a bulk type gets a line, or none when the
    /// report must read its body. The bodies wait in a batch, reduced in
    /// parallel ([`FactWriter::settle`]): a large import has millions.
    pub fn note(&mut self, seq: i64, event_type: Option<&str>, body: &str) {
        if !event_type.is_some_and(|t| exec::BULK_TYPES.contains(&t)) {
            return;
        }
        self.pending.push((seq, body.to_owned()));
        if self.pending.len() >= BATCH {
            self.settle();
        }
    }

    /// Reduces the waiting bodies to their lines and comparison keys, then
    /// notes each in file order.
    fn settle(&mut self) {
        use rayon::prelude::*;
        let pending = std::mem::take(&mut self.pending);
        let contexts = &self.contexts;
        let reduced: Vec<(i64, Option<String>, Vec<u128>)> = pending
            .into_par_iter()
            .map(|(seq, body)| {
                let Ok(Value::Object(raw)) = crate::py::json::parse(&body) else {
                    return (seq, None, Vec::new());
                };
                let context_id = raw
                    .get("context_id")
                    .and_then(Value::as_str)
                    .map(str::to_owned);
                let decoded = contexts.expand_owned(raw);
                let (line, keys) = exec::line_and_keys(&decoded, context_id.as_deref());
                let keys = keys
                    .map(|(identity, entity)| {
                        std::iter::once(identity)
                            .chain(entity)
                            .map(|k| key_hash(&k))
                            .collect()
                    })
                    .unwrap_or_default();
                (seq, line, keys)
            })
            .collect();
        for (seq, line, keys) in reduced {
            let at = self.rows.len();
            self.rows.push((seq, line));
            for key in keys {
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
    /// ingested with its lines) and the records to read whole, then the
    /// lines' aggregate when `aggregate` asks for it (a scratch database,
    /// which stores no request rows for its request-to-case map, leaves it
    /// out: its report reads the lines, to the same block).
    pub fn finish(mut self, run_id: &str, aggregate: bool) -> Result<(), DbError> {
        self.settle();
        let q = &sql::EXECUTION_DELETE_AGGREGATE;
        self.conn
            .execute(q.sql, rusqlite::named_params! {":run_id": run_id})
            .map_err(DbError::query(q))?;
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
        // Every record has its line: the report can read their aggregate.
        if aggregate && self.rows.iter().all(|(_, line)| line.is_some()) {
            let lines = self.rows.iter().filter_map(|(_, l)| l.as_deref());
            write_aggregate(self.conn, run_id, lines, self.contexts.entries())?;
        }
        Ok(())
    }
}

/// Computes and stores the aggregate of a run's fact lines
/// ([`exec::Aggregate`], migrations/0013), unless the run's request-to-case
/// map needs what the tables do not hold as text, or a line does not read.
fn write_aggregate<'a, 'c>(
    conn: &Connection,
    run_id: &str,
    lines: impl Iterator<Item = &'a str>,
    contexts: impl Iterator<Item = (&'c String, &'c Value)>,
) -> Result<(), DbError> {
    let Some(found) = case_rows(conn, run_id)? else {
        return Ok(());
    };
    let cases = exec::case_map(
        found
            .iter()
            .map(|(seq, id, case)| (*seq, id.as_str().into(), case.as_str().into())),
    );
    let scopes: HashMap<&str, exec::fact::Scope<'_>, foldhash::fast::RandomState> = contexts
        .filter_map(|(id, c)| {
            c.as_object()
                .map(|c| (id.as_str(), exec::fact::Scope::of(c)))
        })
        .collect();
    let Some(aggregate) = exec::Aggregate::of(lines, &scopes, &cases) else {
        return Ok(());
    };
    let joined = |items: &[String]| {
        let mut out = String::new();
        for item in items {
            out.push_str(item);
            out.push('\n');
        }
        out
    };
    let identities: Vec<u8> = aggregate
        .identities
        .iter()
        .flat_map(|h| h.to_le_bytes())
        .collect();
    let q = &sql::EXECUTION_INSERT_AGGREGATE;
    conn.execute(
        q.sql,
        rusqlite::named_params! {
            ":run_id": run_id,
            ":figures": aggregate.figures.to_string(),
            ":run_ids": Value::from(aggregate.run_ids.clone()).to_string(),
            ":identities": identities,
            ":hook_ids": joined(&aggregate.hook_ids),
            ":starts": joined(&aggregate.starts),
        },
    )
    .map_err(DbError::query(q))?;
    Ok(())
}

/// `(seq, str(request_id), case)` of a client request or dispatch record.
type CaseRow = (i64, String, String);

/// The `(seq, str(request_id), case)` of the run's requests and dispatch
/// records with a truthy `x_request_id` (the block's request-to-case map),
/// read from their tables; None when a row keeps one of those values
/// outside its column, or a dispatch record is kept in `records`.
fn case_rows(conn: &Connection, run_id: &str) -> Result<Option<Vec<CaseRow>>, DbError> {
    let q = &sql::EXECUTION_RECORDS_DISPATCH_EXIST;
    let kept: bool = conn
        .query_row(q.sql, rusqlite::named_params! {":run_id": run_id}, |r| {
            r.get(0)
        })
        .map_err(DbError::query(q))?;
    if kept {
        return Ok(None);
    }
    let q = &sql::EXECUTION_CASE_REQUESTS;
    let mut stmt = conn.prepare(q.sql).map_err(DbError::query(q))?;
    let mut rows = stmt
        .query(rusqlite::named_params! {":run_id": run_id})
        .map_err(DbError::query(q))?;
    let mut out = Vec::new();
    while let Some(row) = rows.next().map_err(DbError::query(q))? {
        let text = |i: usize| -> Result<Option<String>, DbError> {
            row.get::<_, Option<String>>(i).map_err(DbError::query(q))
        };
        let seq: i64 = row.get(0).map_err(DbError::query(q))?;
        let (id, x, case) = (text(1)?, text(2)?, text(3)?);
        let extra: bool = row.get(4).map_err(DbError::query(q))?;
        // A value missing from its column may be in `extra` (not text).
        if extra && (id.is_none() || x.is_none() || case.is_none()) {
            return Ok(None);
        }
        let x = x.map_or(Value::Null, Value::String);
        if !crate::py::json::truthy(&x) {
            continue;
        }
        let form = |v: Option<String>| {
            let v = v.map_or(Value::Null, Value::String);
            exec::str_form_of(&v).into_owned()
        };
        out.push((seq, form(id), form(case)));
    }
    Ok(Some(out))
}

/// Fills `execution_aggregates` for the runs stored before it
/// (migrations/0013): each run with fact lines and no record read whole.
pub fn backfill(conn: &Connection) -> Result<(), DbError> {
    let q = &sql::EXECUTION_RUNS_TO_BACKFILL;
    let runs: Vec<String> = conn
        .prepare(q.sql)
        .and_then(|mut s| s.query_map([], |r| r.get(0))?.collect())
        .map_err(DbError::query(q))?;
    for run_id in runs {
        let q = &sql::LOAD_EXECUTION_FACTS;
        let segments: Vec<String> = conn
            .prepare(q.sql)
            .and_then(|mut s| {
                s.query_map(rusqlite::named_params! {":run_id": run_id}, |r| r.get(0))?
                    .collect()
            })
            .map_err(DbError::query(q))?;
        let q = &sql::EXECUTION_CONTEXTS;
        let contexts: Vec<(String, String)> = conn
            .prepare(q.sql)
            .and_then(|mut s| {
                s.query_map(rusqlite::named_params! {":run_id": run_id}, |r| {
                    Ok((r.get(0)?, r.get(1)?))
                })?
                .collect()
            })
            .map_err(DbError::query(q))?;
        let contexts: Vec<(String, Value)> = contexts
            .into_iter()
            .filter_map(|(id, c)| Some((id, serde_json::from_str(&c).ok()?)))
            .collect();
        write_aggregate(
            conn,
            &run_id,
            exec::fact::lines(&segments),
            contexts.iter().map(|(id, c)| (id, c)),
        )?;
    }
    Ok(())
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
    match crate::py::json::parse(text) {
        Ok(Value::Object(m)) => Ok(m),
        Ok(_) => Err(DbError::Other(format!("records row {seq}: not an object"))),
        Err(e) => Err(DbError::Other(format!("records row {seq}: {e}"))),
    }
}

/// The run's aggregate when it has one and it stands for its fact lines
/// beside `records` ([`exec::Aggregate::applies`]): `{"figures": the block's
/// figures, "hook_ids": ..., "starts": ...}`, the lists as newline-ended text.
fn aggregate(
    conn: &Connection,
    run_id: &str,
    records: &[(i64, Value)],
) -> Result<Option<Value>, DbError> {
    let q = &sql::EXECUTION_LOAD_AGGREGATE;
    let row: Option<(String, String, Vec<u8>, String, String)> = conn
        .query_row(q.sql, rusqlite::named_params! {":run_id": run_id}, |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?))
        })
        .map(Some)
        .or_else(|e| match e {
            rusqlite::Error::QueryReturnedNoRows => Ok(None),
            e => Err(e),
        })
        .map_err(DbError::query(q))?;
    let Some((figures, run_ids, identities, hook_ids, starts)) = row else {
        return Ok(None);
    };
    let (Ok(figures), Ok(run_ids)) = (
        serde_json::from_str::<Value>(&figures),
        serde_json::from_str::<Vec<String>>(&run_ids),
    ) else {
        return Ok(None);
    };
    if identities.len() % 8 != 0 {
        return Ok(None);
    }
    let identities: Vec<u64> = identities
        .chunks_exact(8)
        .filter_map(|c| c.try_into().ok().map(u64::from_le_bytes))
        .collect();
    if !exec::Aggregate::applies(&run_ids, &identities, records) {
        return Ok(None);
    }
    Ok(Some(serde_json::json!({
        "figures": figures,
        "hook_ids": hook_ids,
        "starts": starts,
    })))
}

/// Reads the run's bulk execution records: the fact-line segments into
/// `facts`, the records without a line (decoded) into `records`. A run
/// without segments (a database older than them, or records edited with
/// SQL) has every bulk record read whole.
pub fn load(
    conn: &Connection,
    run_id: &str,
    contexts: &Contexts,
    data: &mut crate::model::RunData,
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
    if let Some(aggregate) = aggregate(conn, run_id, &data.records)? {
        data.execution_aggregate = Some(aggregate);
        return Ok(());
    }
    let (records, facts) = (&mut data.records, &mut data.execution_facts);
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
