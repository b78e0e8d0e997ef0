-- One run's row of `v_runs` without its four request counts (`cases`,
-- `requests`, `ok`, `failed` are NULL here): `export --parquet` counts them
-- itself in the walk over the run's requests it makes anyway
-- (src/db/export_pack.rs), as queries/export/run.sql counts them, and
-- falls back to that query where it cannot.
-- Parameters: :run_id
-- Columns: those of v_runs (docs/sql.md)
-- Order: one row at most
SELECT
    v.run_id, v.session_id, v.model, v.endpoint, v.started_at_ns, v.started_at,
    v.session_status,
    NULL AS cases,
    NULL AS requests,
    NULL AS ok,
    NULL AS failed,
    v.telemetry_files,
    v.artifact_name, v.artifact_sha256, v.record_count, v.ingested_at, v.started_at_ms
FROM v_runs v
WHERE v.run_id = :run_id
