-- A run's own row.
-- Parameters: :run_id
-- Columns: run_id, artifact_sha256, artifact_name
SELECT run_id, artifact_sha256, artifact_name
FROM runs
WHERE run_id = :run_id
