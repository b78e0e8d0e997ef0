-- The segments `from <= segment < to` of a run's packed analysis columns
-- (src/db/pack.rs), in order, by their table row: a reader reads each body
-- through an incremental blob handle into a buffer of its own, reused from
-- segment to segment.
-- Parameters: :run_id, :from, :to
-- Columns: segment, requests, rowid
SELECT segment, requests, rowid
FROM request_packs
WHERE run_id = :run_id AND segment >= :from AND segment < :to
ORDER BY segment
