//! vLLM span files (OTLP JSON, or one span per line; docs/artifact.md §3.12.3)
//! attached to a stored run, so `stormlog report` needs no files. Spans are
//! stamped with the run's identity exactly as `infer analyze --vllm-spans`
//! stamps them, and kept in `vllm_spans` with the file they came from.
use std::path::Path;

use serde_json::Value;

use super::{now_utc, read_text, IngestError, Ingested, Kind, Options, Outcome};
use crate::db::store::load_run;
use crate::db::Connection;

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
    let added = crate::db::telemetry::attach_spans(
        conn,
        run_id,
        &path.display().to_string(),
        &sha,
        text.len() as u64,
        &spans,
        &now_utc(),
    )?;
    let outcome = match added {
        true => Outcome::Added,
        false => Outcome::Unchanged,
    };
    Ok(Ingested {
        kind: Kind::Spans,
        run_id: run_id.to_owned(),
        records: spans.len() as u64,
        bytes: text.len() as u64,
        outcome,
    })
}
