-- About how many request rows a run has, for the export to write a run of
-- more than a batch while no other such run is written: its request packs'
-- count (a row per segment; the export checks the pack against the rows as
-- it reads them) where it has packs, else a walk of its rows.
-- Parameters: :run_id
-- Columns: n
-- Order: one row
SELECT coalesce(
    (SELECT sum(requests) FROM request_packs WHERE run_id = :run_id),
    (SELECT count(*) FROM requests WHERE run_id = :run_id)
) AS n
