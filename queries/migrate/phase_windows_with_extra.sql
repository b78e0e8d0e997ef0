-- The rows of phase_windows with an `extra` object: where an integer past 64 bits
-- waited for its column before migrations/0010_wide_integers.sql.
-- Columns: run_id, seq, extra
SELECT run_id, seq, extra FROM phase_windows WHERE extra IS NOT NULL ORDER BY run_id, seq
