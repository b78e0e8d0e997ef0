-- The runs whose fact lines (migrations/0007) have no aggregate yet
-- (migrations/0013 fills them), and no bulk record read whole.
-- Columns: run_id
SELECT f.run_id
FROM execution_facts AS f
WHERE f.segment = 0
  AND NOT EXISTS (SELECT 1 FROM execution_aggregates AS a WHERE a.run_id = f.run_id)
  AND NOT EXISTS (SELECT 1 FROM execution_whole AS w WHERE w.run_id = f.run_id)
ORDER BY f.run_id
