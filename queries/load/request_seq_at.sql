-- The sequence number of a run's request at a position (0-based) in file
-- order: where the analysis splits a large run to read its halves at once.
-- Parameters: :run_id, :offset
-- Columns: seq
SELECT seq FROM requests WHERE run_id = :run_id ORDER BY seq LIMIT 1 OFFSET :offset
