-- Removes a run's `requests` rows before `ingest --replace` writes the new artifact.
-- Parameters: :run_id
DELETE FROM requests WHERE run_id = :run_id
