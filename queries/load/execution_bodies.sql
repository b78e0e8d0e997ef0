-- The bodies of a run's bulk execution records that have no fact line
-- (legacy, refused by the parse, embedded context, or a repeated identity
-- or entity), in file order.
-- Parameters: :run_id
-- Columns: seq, body
SELECT r.seq, r.body
FROM execution_whole AS w
JOIN records AS r ON r.run_id = w.run_id AND r.seq = w.seq
WHERE w.run_id = :run_id
ORDER BY w.seq
