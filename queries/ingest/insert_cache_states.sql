-- Stores one `infer.cache_state` record of an artifact in `cache_states`.
-- Parameters: :run_id, :seq, :schema_version, :session_id, :case_id, :requested, :attempted, :acknowledged, :verified, :run_kind, :reason, :reset, :nulls, :extra
--   (a field column holds the record's value when it gives the same JSON back;
--   :nulls marks fields present as null; everything else is in :extra, a JSON
--   object, or NULL).
INSERT INTO cache_states (run_id, seq, schema_version, session_id, case_id, requested, attempted, acknowledged, verified, run_kind, reason, reset, nulls, extra)
VALUES (:run_id, :seq, :schema_version, :session_id, :case_id, :requested, :attempted, :acknowledged, :verified, :run_kind, :reason, :reset, :nulls, :extra)
