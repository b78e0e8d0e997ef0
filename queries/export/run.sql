-- One run's row of `v_runs`, every column in the view's order: the rows of
-- `runs.parquet`, and part of what the run's content hash covers.
-- Parameters: :run_id
-- Columns: those of v_runs (docs/sql.md)
-- Order: one row at most
SELECT
    run_id, session_id, model, endpoint, started_at_ns, started_at,
    session_status, cases, requests, ok, failed, telemetry_files,
    artifact_name, artifact_sha256, record_count, ingested_at, started_at_ms
FROM v_runs
WHERE run_id = :run_id
ORDER BY run_id
