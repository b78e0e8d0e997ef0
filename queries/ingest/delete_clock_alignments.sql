-- Removes a run's `clock_alignments` rows before `ingest --replace` writes the new artifact.
-- Parameters: :run_id
DELETE FROM clock_alignments WHERE run_id = :run_id
