-- Stores one `infer.slo` record of an artifact in `slo_records`.
-- Parameters: :run_id, :seq, :schema_version, :session_id, :source, :digest, :slo, :nulls, :extra
--   (a field column holds the record's value when it gives the same JSON back;
--   :nulls marks fields present as null; everything else is in :extra, a JSON
--   object, or NULL).
INSERT INTO slo_records (run_id, seq, schema_version, session_id, source, digest, slo, nulls, extra)
VALUES (:run_id, :seq, :schema_version, :session_id, :source, :digest, :slo, :nulls, :extra)
