//! The reads `compare` makes of a stored run besides its records: the
//! artifact digest the ingest recorded, so a stored run is summarized from
//! what was loaded and never exported back to text.
use rusqlite::OptionalExtension;

use super::{Connection, DbError};
use crate::sql;

/// The SHA-256 (lower-case hex) of the artifact a run was ingested from;
/// None when the run is not stored or its ingest skipped the digest.
pub fn artifact_sha256(conn: &Connection, run_id: &str) -> Result<Option<String>, DbError> {
    let q = &sql::RUNS_FIND;
    let found: Option<Option<String>> = conn
        .query_row(q.sql, rusqlite::named_params! {":run_id": run_id}, |r| {
            r.get(1)
        })
        .optional()
        .map_err(DbError::query(q))?;
    Ok(found.flatten())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    #[test]
    fn the_digest_is_the_ingested_files_or_none_when_skipped() {
        let dir = tempfile::tempdir().unwrap();
        let artifact = dir.path().join("a.jsonl");
        std::fs::write(
            &artifact,
            concat!(
                r#"{"event_type": "infer.session", "schema_version": 1, "session_id": "s", "status": "completed"}"#,
                "\r\n"
            ),
        )
        .unwrap();
        for skip_digest in [false, true] {
            let mut conn = crate::db::open_memory().unwrap();
            let opts = crate::ingest::Options {
                skip_digest,
                ..Default::default()
            };
            let done = crate::ingest::ingest_artifact(&mut conn, &artifact, &opts).unwrap();
            let want = (!skip_digest).then(|| crate::util::sha256_file(&artifact).unwrap());
            assert_eq!(super::artifact_sha256(&conn, &done.run_id).unwrap(), want);
            assert_eq!(super::artifact_sha256(&conn, "no-such-run").unwrap(), None);
        }
    }
}
