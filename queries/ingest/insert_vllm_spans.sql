-- Stores one `infer.vllm_span` record of an artifact in `vllm_spans`.
-- Parameters: :run_id, :seq, :file_id, :schema_version, :session_id, :source, :name, :request_id, :trace_id, :span_id, :parent_span_id, :kind, :clock_domain, :received_at_ns, :start_unix_ns, :end_unix_ns, :timestamp_ns, :attributes, :resource, :scope, :status, :dropped, :nulls, :extra
--   (a field column holds the record's value when it gives the same JSON back;
--   :nulls marks fields present as null; everything else is in :extra, a JSON
--   object, or NULL).
INSERT INTO vllm_spans (run_id, seq, file_id, schema_version, session_id, source, name, request_id, trace_id, span_id, parent_span_id, kind, clock_domain, received_at_ns, start_unix_ns, end_unix_ns, timestamp_ns, attributes, resource, scope, status, dropped, nulls, extra)
VALUES (:run_id, :seq, :file_id, :schema_version, :session_id, :source, :name, :request_id, :trace_id, :span_id, :parent_span_id, :kind, :clock_domain, :received_at_ns, :start_unix_ns, :end_unix_ns, :timestamp_ns, :attributes, :resource, :scope, :status, :dropped, :nulls, :extra)
