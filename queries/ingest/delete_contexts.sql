-- Removes a run's `contexts` rows before `ingest --replace` writes the new artifact.
-- Parameters: :run_id
DELETE FROM contexts WHERE run_id = :run_id
