-- Stores one `infer.cache_state` record of an artifact in `cache_states`.
-- Parameters: :run_id, :seq, :schema_version, :case_id, :requested, :attempted, :acknowledged, :verified, :run_kind, :reason, :reset, :extra
--   (each field column holds the record's value when the column reproduces it
--   exactly; everything else is in :extra, a JSON object, or NULL).
INSERT INTO cache_states (run_id, seq, schema_version, case_id, requested, attempted, acknowledged, verified, run_kind, reason, reset, extra)
VALUES (:run_id, :seq, :schema_version, :case_id, :requested, :attempted, :acknowledged, :verified, :run_kind, :reason, :reset, :extra)
