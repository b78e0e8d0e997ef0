-- The `infer.vllm_span` records of one run from attached span files, files in attach order.
-- Parameters: :run_id
-- Columns: seq, schema_version, session_id, source, name, request_id, trace_id, span_id, parent_span_id, kind, clock_domain, received_at_ns, start_unix_ns, end_unix_ns, timestamp_ns, attributes, resource, scope, status, dropped, nulls, extra
SELECT seq, schema_version, session_id, source, name, request_id, trace_id, span_id, parent_span_id, kind, clock_domain, received_at_ns, start_unix_ns, end_unix_ns, timestamp_ns, attributes, resource, scope, status, dropped, nulls, extra
FROM vllm_spans
WHERE run_id = :run_id AND file_id IS NOT NULL
ORDER BY file_id, seq
