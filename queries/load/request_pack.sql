-- The segments of a run's packed analysis columns (src/db/pack.rs), in order.
-- Parameters: :run_id
-- Columns: segment, requests, body
SELECT segment, requests, body FROM request_packs WHERE run_id = :run_id ORDER BY segment
