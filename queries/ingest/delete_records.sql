-- Removes a run's `records` rows before `ingest --replace` writes the new artifact.
-- Parameters: :run_id
DELETE FROM records WHERE run_id = :run_id
