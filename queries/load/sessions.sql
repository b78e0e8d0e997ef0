-- The `infer.session` records of one run (artifact rows only), in file order.
-- Parameters: :run_id
-- Columns: seq, schema_version, session_id, status, timestamp_ns, config, summary, nulls, extra
SELECT seq, schema_version, session_id, status, timestamp_ns, config, summary, nulls, extra
FROM sessions
WHERE run_id = :run_id
ORDER BY seq
