-- The `infer.first_content` records of one run, in file order.
-- Parameters: :run_id
-- Columns: seq, schema_version, session_id, request_id, x_request_id, case_id, phase, first_content_at_ns, timestamp_ns, nulls, extra
SELECT seq, schema_version, session_id, request_id, x_request_id, case_id, phase, first_content_at_ns, timestamp_ns, nulls, extra
FROM first_contents
WHERE run_id = :run_id
ORDER BY seq
