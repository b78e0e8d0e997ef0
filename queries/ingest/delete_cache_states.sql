-- Removes a run's `cache_states` rows before `ingest --replace` writes the new artifact.
-- Parameters: :run_id
DELETE FROM cache_states WHERE run_id = :run_id
