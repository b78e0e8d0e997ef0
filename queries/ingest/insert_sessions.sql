-- Stores one `infer.session` record of an artifact in `sessions`.
-- Parameters: :run_id, :seq, :schema_version, :session_id, :status, :timestamp_ns, :config, :summary, :extra
--   (each field column holds the record's value when the column reproduces it
--   exactly; everything else is in :extra, a JSON object, or NULL).
INSERT INTO sessions (run_id, seq, schema_version, session_id, status, timestamp_ns, config, summary, extra)
VALUES (:run_id, :seq, :schema_version, :session_id, :status, :timestamp_ns, :config, :summary, :extra)
