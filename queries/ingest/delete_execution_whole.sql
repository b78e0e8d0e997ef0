-- Removes a run's `execution_whole` rows before `ingest --replace` writes the new artifact.
-- Parameters: :run_id
DELETE FROM execution_whole WHERE run_id = :run_id
