-- Removes a run's packed analysis columns before `ingest --replace` writes the new artifact.
-- Parameters: :run_id
DELETE FROM request_packs WHERE run_id = :run_id
