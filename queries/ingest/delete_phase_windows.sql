-- Removes a run's `phase_windows` rows before `ingest --replace` writes the new artifact.
-- Parameters: :run_id
DELETE FROM phase_windows WHERE run_id = :run_id
