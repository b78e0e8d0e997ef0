-- Removes a run's `vllm_scrapes` rows before `ingest --replace` writes the new artifact.
-- Parameters: :run_id
DELETE FROM vllm_scrapes WHERE run_id = :run_id
