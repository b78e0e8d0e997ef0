//! Runs as a whole: listing, resolving a name the user typed, exporting.
use rusqlite::{Connection, OptionalExtension};
use serde_json::Value;

use super::DbError;
use crate::pyjson;
use crate::sql;

/// One line of `stormlog runs`.
#[derive(Debug, Clone)]
pub struct RunRow {
    pub run_id: String,
    pub started_at_ns: Option<i64>,
    pub model: Option<String>,
    pub endpoint: Option<String>,
    pub artifact_name: Option<String>,
    pub cases: i64,
    pub requests: i64,
    pub failures: i64,
    pub telemetry_files: i64,
    pub telemetry_samples: i64,
}

pub fn list(conn: &Connection) -> Result<Vec<RunRow>, DbError> {
    let q = &sql::RUNS_LIST;
    let mut stmt = conn.prepare(q.sql).map_err(DbError::query(q))?;
    let rows = stmt
        .query_map([], |r| {
            Ok(RunRow {
                run_id: r.get(0)?,
                started_at_ns: r.get(1)?,
                model: r.get(2)?,
                endpoint: r.get(3)?,
                artifact_name: r.get(4)?,
                cases: r.get(5)?,
                requests: r.get(6)?,
                failures: r.get(7)?,
                telemetry_files: r.get(8)?,
                telemetry_samples: r.get(9)?,
            })
        })
        .map_err(DbError::query(q))?;
    rows.collect::<Result<Vec<_>, _>>()
        .map_err(DbError::query(q))
}

/// Every stored run id, in listing order.
pub fn ids(conn: &Connection) -> Result<Vec<String>, DbError> {
    let q = &sql::RUNS_IDS;
    let mut stmt = conn.prepare(q.sql).map_err(DbError::query(q))?;
    let rows = stmt
        .query_map([], |r| r.get(0))
        .map_err(DbError::query(q))?;
    rows.collect::<Result<Vec<_>, _>>()
        .map_err(DbError::query(q))
}

/// A stored run and the experiment labels it recorded (`config.labels` of its
/// first session record; `Value::Null` when it recorded none).
#[derive(Debug, Clone, PartialEq)]
pub struct LabeledRun {
    pub run_id: String,
    pub started_at_ns: Option<i64>,
    pub labels: Value,
}

/// Every stored run with its labels, in listing order.
pub fn labeled(conn: &Connection) -> Result<Vec<LabeledRun>, DbError> {
    let q = &sql::RUNS_LABELS;
    let mut stmt = conn.prepare(q.sql).map_err(DbError::query(q))?;
    let rows = stmt
        .query_map([], |r| {
            let labels: Option<String> = r.get(2)?;
            Ok(LabeledRun {
                run_id: r.get(0)?,
                started_at_ns: r.get(1)?,
                // The query hands out an object's JSON text only.
                labels: labels
                    .and_then(|t| serde_json::from_str(&t).ok())
                    .unwrap_or(Value::Null),
            })
        })
        .map_err(DbError::query(q))?;
    rows.collect::<Result<Vec<_>, _>>()
        .map_err(DbError::query(q))
}

/// The stored run a user named: its exact id, or the one run whose id starts with it.
pub fn resolve(conn: &Connection, name: &str) -> Result<String, DbError> {
    let q = &sql::RUNS_FIND;
    let exact: Option<String> = conn
        .query_row(q.sql, rusqlite::named_params! {":run_id": name}, |r| {
            r.get(0)
        })
        .optional()
        .map_err(DbError::query(q))?;
    if let Some(id) = exact {
        return Ok(id);
    }
    let all = list(conn)?;
    let matches: Vec<&RunRow> = all.iter().filter(|r| r.run_id.starts_with(name)).collect();
    match matches.as_slice() {
        [one] => Ok(one.run_id.clone()),
        [] => Err(DbError::Other(format!(
            "no run '{name}' in the database; `stormlog runs` lists them"
        ))),
        many => Err(DbError::Other(format!(
            "'{name}' names {} runs ({}); give more of the run id",
            many.len(),
            many.iter()
                .map(|r| r.run_id.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ))),
    }
}

/// The run's artifact as JSONL: every record back in file order, compact transport kept.
pub fn export_artifact(conn: &Connection, run_id: &str) -> Result<String, DbError> {
    let mut out = String::new();
    for (_, rec) in super::store::raw_records(conn, run_id)? {
        out.push_str(&pyjson::dumps_compact(&rec));
        out.push('\n');
    }
    Ok(out)
}

/// The server samples attached to a run, files in attach order and lines in
/// order, each with the JSON of the keys it kept aside (`extra`).
pub fn telemetry_samples(
    conn: &Connection,
    run_id: &str,
) -> Result<Vec<(crate::join::ServerSample, Option<String>)>, DbError> {
    let q = &sql::TELEMETRY_LOAD_SAMPLES;
    let mut stmt = conn.prepare(q.sql).map_err(DbError::query(q))?;
    let rows = stmt
        .query_map(rusqlite::named_params! {":run_id": run_id}, |r| {
            let sample = crate::join::ServerSample {
                run_id: r.get(2)?,
                observed_at_ns: r.get(3)?,
                metric: r.get(4)?,
                value_bytes: r.get(5)?,
                state: r.get(6)?,
                source: r.get(7)?,
                interval_ms: r.get(8)?,
                detail: r.get(9)?,
                provenance: r.get(10)?,
                identity: crate::join::Identity {
                    host: r.get(12)?,
                    pid: r.get(13)?,
                    process_start_ns: r.get(14)?,
                    device_uuid: r.get(15)?,
                    gpu_instance_id: r.get(16)?,
                    replica_id: r.get(17)?,
                    rank: r.get(18)?,
                    boot_id: r.get(19)?,
                    group_id: r.get(20)?,
                    world_size: r.get(21)?,
                },
            };
            Ok((sample, r.get::<_, Option<String>>(11)?))
        })
        .map_err(DbError::query(q))?;
    rows.collect::<Result<Vec<_>, _>>()
        .map_err(DbError::query(q))
}

/// The run's server telemetry as JSONL, files in attach order: each sample as
/// the collector writes it (`join::sample_to_json`), plus the keys it kept aside.
pub fn export_telemetry(conn: &Connection, run_id: &str) -> Result<String, DbError> {
    let mut out = String::new();
    for (sample, extra) in telemetry_samples(conn, run_id)? {
        let mut rec = crate::join::sample_to_json(&sample);
        if let (Some(Ok(Value::Object(extra))), Some(obj)) =
            (extra.map(|e| pyjson::parse(&e)), rec.as_object_mut())
        {
            obj.extend(extra);
        }
        out.push_str(&pyjson::dumps_compact(&rec));
        out.push('\n');
    }
    Ok(out)
}
