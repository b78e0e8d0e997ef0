-- Stores one `infer.workload` record of an artifact in `workloads`.
-- Parameters: :run_id, :seq, :schema_version, :workload_digest, :seed, :task, :cases, :measurement, :extra
--   (each field column holds the record's value when the column reproduces it
--   exactly; everything else is in :extra, a JSON object, or NULL).
INSERT INTO workloads (run_id, seq, schema_version, workload_digest, seed, task, cases, measurement, extra)
VALUES (:run_id, :seq, :schema_version, :workload_digest, :seed, :task, :cases, :measurement, :extra)
