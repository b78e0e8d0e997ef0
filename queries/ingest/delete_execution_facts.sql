-- Removes a run's `execution_facts` rows before `ingest --replace` writes the new artifact.
-- Parameters: :run_id
DELETE FROM execution_facts WHERE run_id = :run_id
