-- Every stored run id, in the order `stormlog runs` lists them.
-- Parameters: none
-- Columns: run_id
SELECT run_id
FROM runs
ORDER BY started_at_ns IS NULL, started_at_ns, run_id
