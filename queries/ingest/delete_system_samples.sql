-- Removes a run's `system_samples` rows before `ingest --replace` writes the new artifact.
-- Parameters: :run_id
DELETE FROM system_samples WHERE run_id = :run_id
