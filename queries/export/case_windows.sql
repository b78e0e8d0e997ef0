-- Each case's measurement window of one run (`v_case_windows`), which
-- `v_case_summary`'s `window_s` looks up; `export --parquet` sums the rest
-- of a run's case summary from the request rows it reads anyway
-- (src/db/export_pack.rs).
-- Parameters: :run_id
-- Columns: case_key, phase, window_s
-- Order: case_key, phase
SELECT case_key, phase, window_s
FROM v_case_windows
WHERE run_id = :run_id
ORDER BY case_key, phase
