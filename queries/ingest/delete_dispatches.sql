-- Removes a run's `dispatches` rows before `ingest --replace` writes the new artifact.
-- Parameters: :run_id
DELETE FROM dispatches WHERE run_id = :run_id
