-- The segments of a run's pack and how many requests each holds, in order
-- (none when the run has no pack): the analysis reserves room for them and
-- shares the segments out among its readers before it reads any body.
-- Parameters: :run_id
-- Columns: segment, requests
SELECT segment, requests FROM request_packs WHERE run_id = :run_id ORDER BY segment
