-- Removes a run's `workloads` rows before `ingest --replace` writes the new artifact.
-- Parameters: :run_id
DELETE FROM workloads WHERE run_id = :run_id
