-- Removes a run's artifact spans (not those of attached span files) before `ingest --replace`.
-- Parameters: :run_id
DELETE FROM vllm_spans WHERE run_id = :run_id AND file_id IS NULL
