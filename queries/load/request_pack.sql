-- A run's packed analysis columns (src/db/pack.rs), if it has them.
-- Parameters: :run_id
-- Columns: requests, body
SELECT requests, body FROM request_packs WHERE run_id = :run_id
