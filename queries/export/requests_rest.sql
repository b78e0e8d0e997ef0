-- The columns of one run's `v_requests` rows that its request pack does not
-- hold (src/db/pack.rs), read from the table beside the pack by
-- `export --parquet` (src/db/export_pack.rs); seq lines each row up with
-- the pack's.
-- Parameters: :run_id
-- Columns: seq, case_key, status_key, http_status, error_type, error_message,
--   finish_reason, concurrency, model, endpoint, trace_id
-- Order: seq
SELECT seq, case_key, status_key, http_status, error_type, error_message,
       finish_reason, concurrency, model, endpoint, trace_id
FROM requests
WHERE run_id = :run_id
ORDER BY seq
