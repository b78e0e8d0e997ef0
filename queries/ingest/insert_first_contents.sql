-- Stores one `infer.first_content` record of an artifact in `first_contents`.
-- Parameters: :run_id, :seq, :schema_version, :session_id, :request_id, :x_request_id, :case_id, :phase, :first_content_at_ns, :timestamp_ns, :nulls, :extra
--   (a field column holds the record's value when it gives the same JSON back;
--   :nulls marks fields present as null; everything else is in :extra, a JSON
--   object, or NULL).
INSERT INTO first_contents (run_id, seq, schema_version, session_id, request_id, x_request_id, case_id, phase, first_content_at_ns, timestamp_ns, nulls, extra)
VALUES (:run_id, :seq, :schema_version, :session_id, :request_id, :x_request_id, :case_id, :phase, :first_content_at_ns, :timestamp_ns, :nulls, :extra)
