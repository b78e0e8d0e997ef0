//! Server telemetry files (telemetry.md): validated with the reference's loader
//! rules and attached to the run id their samples carry.
use std::path::Path;

use rusqlite::Connection;

use super::{IngestError, Ingested, Options};

pub fn ingest_telemetry(
    _conn: &mut Connection,
    path: &Path,
    _opts: Options,
) -> Result<Ingested, IngestError> {
    Err(IngestError::Invalid {
        path: path.to_owned(),
        message: "telemetry ingest is not wired yet".into(),
    })
}
