-- A run's pack segments for `export --parquet` (src/db/export_pack.rs), in
-- order: the packed analysis columns and, where the ingest packed them
-- (migrations/0015), the export's other columns of the same rows; `rest`
-- NULL: read them from the table (queries/export/requests_rest.sql).
-- Parameters: :run_id
-- Columns: segment, requests, body, rest
SELECT segment, requests, body, rest
FROM request_packs
WHERE run_id = :run_id
ORDER BY segment
