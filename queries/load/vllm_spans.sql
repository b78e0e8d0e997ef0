-- The `infer.vllm_span` records of one run (artifact rows only), in file order.
-- Parameters: :run_id
-- Columns: seq, schema_version, name, request_id, trace_id, span_id, start_unix_ns, end_unix_ns, attributes, extra
SELECT seq, schema_version, name, request_id, trace_id, span_id, start_unix_ns, end_unix_ns, attributes, extra
FROM vllm_spans
WHERE run_id = :run_id AND file_id IS NULL
ORDER BY seq
