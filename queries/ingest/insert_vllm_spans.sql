-- Stores one `infer.vllm_span` record of an artifact in `vllm_spans`.
-- Parameters: :run_id, :seq, :file_id, :schema_version, :name, :request_id, :trace_id, :span_id, :start_unix_ns, :end_unix_ns, :attributes, :extra
--   (each field column holds the record's value when the column reproduces it
--   exactly; everything else is in :extra, a JSON object, or NULL).
INSERT INTO vllm_spans (run_id, seq, file_id, schema_version, name, request_id, trace_id, span_id, start_unix_ns, end_unix_ns, attributes, extra)
VALUES (:run_id, :seq, :file_id, :schema_version, :name, :request_id, :trace_id, :span_id, :start_unix_ns, :end_unix_ns, :attributes, :extra)
