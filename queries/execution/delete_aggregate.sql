-- Removes a run's execution aggregate (migrations/0013) before the ingest writes its own.
-- Parameters: :run_id
DELETE FROM execution_aggregates WHERE run_id = :run_id
