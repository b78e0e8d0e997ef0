-- A run's records that have no typed table, in file order.
-- Parameters: :run_id
-- Columns: seq, body
SELECT seq, body
FROM records
WHERE run_id = :run_id
ORDER BY seq
