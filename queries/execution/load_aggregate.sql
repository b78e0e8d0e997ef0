-- A run's execution aggregate (migrations/0013), when it has one.
-- Parameters: :run_id
-- Columns: figures, run_ids, identities, hook_ids, starts
SELECT figures, run_ids, identities, hook_ids, starts
FROM execution_aggregates
WHERE run_id = :run_id
