-- Removes a run's `first_contents` rows before `ingest --replace` writes the new artifact.
-- Parameters: :run_id
DELETE FROM first_contents WHERE run_id = :run_id
