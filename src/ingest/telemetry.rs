//! Server telemetry files (docs/telemetry.md): validated with the reference's loader
//! rules, then attached to a run: the run id their samples carry (`ingest`), or
//! the run being analyzed (`infer analyze --server-telemetry`).
use std::path::Path;

use super::{now_utc, read_text, IngestError, Ingested, Kind, Options, Outcome};
use crate::db::Connection;
use crate::join;

/// The database's telemetry reads and the live collector's sink, kept at
/// their old paths for their callers.
pub use crate::db::telemetry::{load_samples, LiveSink};

/// Reads and validates a telemetry file; errors carry the reference's reason text.
pub fn load(path: &Path) -> Result<(Vec<join::SampleWithExtra>, String, u64), IngestError> {
    let text = read_text(path)?;
    let sha = crate::util::sha256_bytes(text.as_bytes());
    let bytes = text.len() as u64;
    let samples =
        join::load_telemetry_with_extras(&text).map_err(|message| IngestError::Invalid {
            path: path.to_owned(),
            message,
        })?;
    Ok((samples, sha, bytes))
}

/// Ingests a telemetry file, attached to the run id of its first sample.
pub fn ingest_telemetry(
    conn: &mut Connection,
    path: &Path,
    opts: &Options,
) -> Result<Ingested, IngestError> {
    attach(conn, path, None, opts)
}

/// Attaches a telemetry file to `run_id` (or, when None, to its samples' run id).
pub fn attach(
    conn: &mut Connection,
    path: &Path,
    run_id: Option<&str>,
    _opts: &Options,
) -> Result<Ingested, IngestError> {
    let (samples, sha, bytes) = load(path)?;
    let run_id = run_id
        .map(str::to_owned)
        .unwrap_or_else(|| samples[0].0.run_id.clone());
    if let Some(p) = crate::db::imports::provenance(conn, &run_id)? {
        if p.clock_kind == "monotonic" {
            return Err(IngestError::invalid(
                path,
                format!(
                    "run '{run_id}' was imported from {} whose instants are on a monotonic clock \
                     with no epoch anchor (stored relative to the run's start, clock domain {}): \
                     server telemetry, stamped on the epoch clock, cannot be placed on it, so \
                     nothing was attached",
                    p.tool, p.clock_domain
                ),
            ));
        }
    }
    let added = crate::db::telemetry::attach_file(
        conn,
        &run_id,
        &path.display().to_string(),
        &sha,
        bytes,
        &samples,
        &now_utc(),
    )?;
    if !added {
        return Ok(Ingested {
            kind: Kind::Telemetry,
            run_id,
            records: samples.len() as u64,
            bytes,
            outcome: Outcome::Unchanged,
        });
    }
    Ok(Ingested {
        kind: Kind::Telemetry,
        run_id,
        records: samples.len() as u64,
        bytes,
        outcome: Outcome::Added,
    })
}
