-- The first and last sequence numbers of a run's requests (NULLs when it has
-- none): a reader checks a pack's ends against them. Each is one descent of
-- the (run_id, seq) key, where min(seq) and max(seq) in one SELECT would
-- walk all of the run's entries.
-- Parameters: :run_id
-- Columns: first, last
SELECT (SELECT min(seq) FROM requests WHERE run_id = :run_id) AS first,
       (SELECT max(seq) FROM requests WHERE run_id = :run_id) AS last
