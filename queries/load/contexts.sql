-- A run's `infer.context` definitions, in file order.
-- Parameters: :run_id
-- Columns: seq, context_id, context
SELECT seq, context_id, context
FROM contexts
WHERE run_id = :run_id
ORDER BY seq
