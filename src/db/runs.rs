//! Runs as a whole: listing, resolving a name the user typed, exporting.
use rusqlite::{Connection, OptionalExtension};
use serde_json::{json, Value};

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

/// `scope` and `counter_owner` of a telemetry metric (telemetry.md §2.3).
pub fn metric_scope(metric: &str) -> (&'static str, &'static str) {
    match metric {
        "process_rss_bytes" => ("server_process", "operating_system_process"),
        "process_gpu_used_bytes" => ("server_process", "gpu_process"),
        "allocator_allocated_bytes" | "allocator_reserved_bytes" => ("server_process", "allocator"),
        "engine_cache_occupied_bytes" => ("server_process", "engine_cache"),
        "device_memory_used_bytes" | "device_memory_reserved_bytes" => ("gpu_device", "gpu_device"),
        _ => ("gpu_instance", "gpu_instance"),
    }
}

/// The run's server telemetry as JSONL, files in attach order.
pub fn export_telemetry(conn: &Connection, run_id: &str) -> Result<String, DbError> {
    let q = &sql::TELEMETRY_LOAD_SAMPLES;
    let mut stmt = conn.prepare(q.sql).map_err(DbError::query(q))?;
    let mut rows = stmt
        .query(rusqlite::named_params! {":run_id": run_id})
        .map_err(DbError::query(q))?;
    let mut out = String::new();
    while let Some(r) = rows.next().map_err(DbError::query(q))? {
        let g = |i: usize| -> Result<Value, DbError> {
            let v: rusqlite::types::Value = r.get(i).map_err(DbError::query(q))?;
            Ok(match v {
                rusqlite::types::Value::Null => Value::Null,
                rusqlite::types::Value::Integer(i) => json!(i),
                rusqlite::types::Value::Real(f) => json!(f),
                rusqlite::types::Value::Text(s) => json!(s),
                rusqlite::types::Value::Blob(_) => Value::Null,
            })
        };
        let metric = g(4)?;
        let (scope, owner) = metric_scope(metric.as_str().unwrap_or(""));
        let host = g(12)?;
        let boot = g(19)?;
        let domain = match boot.as_str() {
            Some(b) => format!("{}/{b}/unix_epoch_ns", host.as_str().unwrap_or("")),
            None => format!("{}/unix_epoch_ns", host.as_str().unwrap_or("")),
        };
        let mut rec = json!({
            "schema_version": 1, "event_type": "infer.telemetry_sample", "scope": scope, "counter_owner": owner,
            "clock_domain": domain, "run_id": g(2)?, "observed_at_ns": g(3)?, "metric": metric,
            "value_bytes": g(5)?, "state": g(6)?, "source": g(7)?, "interval_ms": g(8)?, "detail": g(9)?,
            "provenance": g(10)?,
            "identity": {"host": host, "pid": g(13)?, "process_start_ns": g(14)?, "device_uuid": g(15)?,
                         "gpu_instance_id": g(16)?, "replica_id": g(17)?, "rank": g(18)?, "boot_id": boot,
                         "group_id": g(20)?, "world_size": g(21)?},
        });
        if let (Some(extra), Some(obj)) = (
            g(11)?
                .as_str()
                .and_then(|e| serde_json::from_str::<Value>(e).ok()),
            rec.as_object_mut(),
        ) {
            if let Some(extra) = extra.as_object() {
                for (k, v) in extra {
                    obj.insert(k.clone(), v.clone());
                }
            }
        }
        out.push_str(&pyjson::dumps_compact(&rec));
        out.push('\n');
    }
    Ok(out)
}
