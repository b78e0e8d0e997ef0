-- One run's row of `v_runs`, every column in the view's order: the rows of
-- `runs.parquet`, and part of what the run's content hash covers. The view's
-- four request counts (`cases`, `requests`, `ok`, `failed`) walk the run's
-- requests once each; here one walk counts all four, with the view's
-- conditions (a NULL status or status_key counts in neither `ok` nor
-- `failed`), and the view gives the rest (its unused counts not evaluated).
-- Parameters: :run_id
-- Columns: those of v_runs (docs/sql.md)
-- Order: one row at most
SELECT
    v.run_id, v.session_id, v.model, v.endpoint, v.started_at_ns, v.started_at,
    v.session_status,
    CAST(c.cases AS INTEGER) AS cases,
    CAST(c.requests AS INTEGER) AS requests,
    CAST(c.ok AS INTEGER) AS ok,
    CAST(c.failed AS INTEGER) AS failed,
    v.telemetry_files,
    v.artifact_name, v.artifact_sha256, v.record_count, v.ingested_at, v.started_at_ms
FROM v_runs v,
    (SELECT count(DISTINCT q.case_key) AS cases,
            count(*) AS requests,
            count(CASE WHEN q.status = 'ok' THEN 1 END) AS ok,
            count(CASE WHEN q.status_key <> 'ok' THEN 1 END) AS failed
     FROM requests q
     WHERE q.run_id = :run_id AND q.phase = 'measured') c
WHERE v.run_id = :run_id
