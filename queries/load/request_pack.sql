-- The segments `from <= segment < to` of a run's packed analysis columns
-- (src/db/pack.rs), in order: a reader decodes each body as it steps.
-- Parameters: :run_id, :from, :to
-- Columns: segment, requests, body
SELECT segment, requests, body
FROM request_packs
WHERE run_id = :run_id AND segment >= :from AND segment < :to
ORDER BY segment
