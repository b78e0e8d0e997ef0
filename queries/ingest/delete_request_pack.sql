-- Removes a run's packed analysis columns (before its rows are written again).
-- Parameters: :run_id
DELETE FROM request_packs WHERE run_id = :run_id
