-- Removes a run's `slo_records` rows before `ingest --replace` writes the new artifact.
-- Parameters: :run_id
DELETE FROM slo_records WHERE run_id = :run_id
