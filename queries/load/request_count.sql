-- How many requests a run has (the analysis reserves room for them at once).
-- Parameters: :run_id
-- Columns: n
SELECT count(*) AS n FROM requests WHERE run_id = :run_id
