-- Stores one `infer.slo` record of an artifact in `slo_records`.
-- Parameters: :run_id, :seq, :schema_version, :source, :digest, :slo, :extra
--   (each field column holds the record's value when the column reproduces it
--   exactly; everything else is in :extra, a JSON object, or NULL).
INSERT INTO slo_records (run_id, seq, schema_version, source, digest, slo, extra)
VALUES (:run_id, :seq, :schema_version, :source, :digest, :slo, :extra)
