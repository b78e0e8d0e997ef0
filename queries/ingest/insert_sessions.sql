-- Stores one `infer.session` record of an artifact in `sessions`.
-- Parameters: :run_id, :seq, :schema_version, :session_id, :status, :timestamp_ns, :config, :summary, :nulls, :extra
--   (a field column holds the record's value when it gives the same JSON back;
--   :nulls marks fields present as null; everything else is in :extra, a JSON
--   object, or NULL).
INSERT INTO sessions (run_id, seq, schema_version, session_id, status, timestamp_ns, config, summary, nulls, extra)
VALUES (:run_id, :seq, :schema_version, :session_id, :status, :timestamp_ns, :config, :summary, :nulls, :extra)
