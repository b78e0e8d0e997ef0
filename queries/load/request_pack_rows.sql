-- How many requests a run's pack holds (NULL when the run has no pack): the
-- analysis reserves room for them while it counts the run's rows.
-- Parameters: :run_id
-- Columns: n
SELECT sum(requests) AS n FROM request_packs WHERE run_id = :run_id
