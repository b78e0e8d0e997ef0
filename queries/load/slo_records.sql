-- The `infer.slo` records of one run (artifact rows only), in file order.
-- Parameters: :run_id
-- Columns: seq, schema_version, session_id, source, digest, slo, nulls, extra
SELECT seq, schema_version, session_id, source, digest, slo, nulls, extra
FROM slo_records
WHERE run_id = :run_id
ORDER BY seq
