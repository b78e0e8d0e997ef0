//! vLLM span files (OTLP JSON, or one span per line; artifact.md §3.12.3)
//! attached to a stored run, so `stormlog report` needs no files. Spans are
//! stamped with the run's identity exactly as `infer analyze --vllm-spans`
//! stamps them, and kept in `vllm_spans` with the file they came from.
use std::path::Path;

use rusqlite::types::Value as Sql;
use rusqlite::{params_from_iter, Connection, OptionalExtension, TransactionBehavior};
use serde_json::Value;

use super::{now_utc, read_text, IngestError, Ingested, Kind, Options, Outcome};
use crate::db::store::load_run;
use crate::db::tables;
use crate::db::DbError;
use crate::sql;

/// Attaches a span file to `run_id`, whose artifact must already be stored.
pub fn attach(
    conn: &mut Connection,
    path: &Path,
    run_id: &str,
    _opts: &Options,
) -> Result<Ingested, IngestError> {
    let text = read_text(path)?;
    let sha = crate::util::sha256_bytes(text.as_bytes());
    let data = load_run(conn, run_id)?;
    if data.requests.is_empty() && data.records.is_empty() {
        return Err(IngestError::Invalid {
            path: path.to_owned(),
            message: format!(
                "run '{run_id}' has no artifact in the database; ingest the artifact first"
            ),
        });
    }
    let records: Vec<Value> = data.records.iter().map(|(_, r)| r.clone()).collect();
    let spans = crate::vllm::load_span_file(path, &text, &records).map_err(|reason| {
        IngestError::Invalid {
            path: path.to_owned(),
            message: format!("vLLM telemetry: {reason}"),
        }
    })?;
    let tx = conn
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(DbError::query(&sql::TELEMETRY_INSERT_FILE))?;
    let existing: Option<i64> = tx
        .query_row(
            sql::TELEMETRY_FIND_FILE.sql,
            rusqlite::named_params! {":run_id": run_id, ":kind": "spans", ":sha256": sha},
            |r| r.get(0),
        )
        .optional()
        .map_err(DbError::query(&sql::TELEMETRY_FIND_FILE))?;
    let outcome = if existing.is_some() {
        Outcome::Unchanged
    } else {
        tx.execute(
            sql::TELEMETRY_INSERT_FILE.sql,
            rusqlite::named_params! {":run_id": run_id, ":kind": "spans", ":name": path.display().to_string(),
            ":sha256": sha, ":bytes": text.len() as i64, ":record_count": spans.len() as i64, ":ingested_at": now_utc()},
        )
        .map_err(DbError::query(&sql::TELEMETRY_INSERT_FILE))?;
        let file_id = tx.last_insert_rowid();
        let spec = tables::spec("vllm_spans")
            .ok_or_else(|| DbError::Other("no vllm_spans table".into()))?;
        let mut insert = tx
            .prepare(spec.insert.sql)
            .map_err(DbError::query(&spec.insert))?;
        for (seq, span) in spans.iter().enumerate() {
            let Some(map) = span.as_object() else {
                continue;
            };
            let enc = tables::split(spec, map);
            let mut params: Vec<Sql> = vec![
                Sql::Text(run_id.to_owned()),
                Sql::Integer(seq as i64),
                Sql::Integer(file_id),
            ];
            params.push(enc.schema_version);
            params.extend(enc.fields);
            params.push(Sql::Integer(enc.nulls));
            params.push(enc.extra.map_or(Sql::Null, Sql::Text));
            insert
                .execute(params_from_iter(params))
                .map_err(DbError::query(&spec.insert))?;
        }
        drop(insert);
        tx.commit()
            .map_err(DbError::query(&sql::TELEMETRY_INSERT_FILE))?;
        Outcome::Added
    };
    Ok(Ingested {
        kind: Kind::Spans,
        run_id: run_id.to_owned(),
        records: spans.len() as u64,
        bytes: text.len() as u64,
        outcome,
    })
}
