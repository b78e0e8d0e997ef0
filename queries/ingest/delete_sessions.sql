-- Removes a run's `sessions` rows before `ingest --replace` writes the new artifact.
-- Parameters: :run_id
DELETE FROM sessions WHERE run_id = :run_id
