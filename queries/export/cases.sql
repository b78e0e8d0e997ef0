-- One run's rows of `v_case_summary`, every column in the view's order, for
-- `export --parquet` (docs/scale.md).
-- Parameters: :run_id
-- Columns: those of v_case_summary (docs/sql.md)
-- Order: phase, case_key
SELECT
    run_id, phase, case_key, requests, ok, failed, failure_rate,
    e2e_mean_ms, e2e_min_ms, e2e_max_ms, ttft_mean_ms, ttft_min_ms,
    ttft_max_ms, output_tokens, window_s
FROM v_case_summary
WHERE run_id = :run_id
ORDER BY phase, case_key
