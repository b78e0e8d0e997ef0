-- When a run started, in nanoseconds, for the `started_s`/`ended_s` of its
-- `v_requests` rows (what the view's join with `runs` reads).
-- Parameters: :run_id
-- Columns: started_at_ns
-- Order: one row at most
SELECT started_at_ns FROM runs WHERE run_id = :run_id
