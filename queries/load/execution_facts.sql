-- A run's fact-line segments (migrations/0007), in order.
-- Parameters: :run_id
-- Columns: body
SELECT body
FROM execution_facts
WHERE run_id = :run_id
ORDER BY segment
