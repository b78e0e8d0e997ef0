-- The `infer.cache_state` records of one run (artifact rows only), in file order.
-- Parameters: :run_id
-- Columns: seq, schema_version, session_id, case_id, requested, attempted, acknowledged, verified, run_kind, reason, reset, nulls, extra
SELECT seq, schema_version, session_id, case_id, requested, attempted, acknowledged, verified, run_kind, reason, reset, nulls, extra
FROM cache_states
WHERE run_id = :run_id
ORDER BY seq
