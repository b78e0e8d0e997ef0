-- Stores one `infer.first_content` record of an artifact in `first_contents`,
-- the fields it shares with its request row left out (migrations/0014).
-- Parameters: :run_id, :seq, :schema_version, :session_id, :request_id, :x_request_id, :case_id, :phase, :first_content_at_ns, :timestamp_ns, :nulls, :extra, :link, :shared
--   (as ingest/insert_first_contents; a field whose bit is set in :shared is
--   NULL here and read from the request row whose seq is :link).
INSERT INTO first_contents (run_id, seq, schema_version, session_id, request_id, x_request_id, case_id, phase, first_content_at_ns, timestamp_ns, nulls, extra, link, shared)
VALUES (:run_id, :seq, :schema_version, :session_id, :request_id, :x_request_id, :case_id, :phase, :first_content_at_ns, :timestamp_ns, :nulls, :extra, :link, :shared)
