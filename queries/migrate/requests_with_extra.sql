-- The rows of requests with an `extra` object: where an integer past 64 bits
-- waited for its column before migrations/0010_wide_integers.sql.
-- Columns: run_id, seq, extra
SELECT run_id, seq, extra FROM requests WHERE extra IS NOT NULL ORDER BY run_id, seq
