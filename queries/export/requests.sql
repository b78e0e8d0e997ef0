-- One run's rows of `v_requests`, every column in the view's order, for
-- `export --parquet` (docs/scale.md).
-- Parameters: :run_id
-- Columns: those of v_requests (docs/sql.md)
-- Order: seq
SELECT
    run_id, case_key, case_id, phase, seq, request_id, request_index,
    status, status_key, ok, http_status, error_type, error_message,
    finish_reason, e2e_ms, ttft_ms, first_chunk_ms, dispatch_lag_ms,
    e2e_from_intended_ms, prompt_tokens, output_tokens, total_tokens,
    output_token_source, stream, arrival_mode, concurrency,
    in_flight_at_dispatch, model, endpoint, intended_at_ns, started_at_ns,
    ended_at_ns, started_at, ended_at, started_s, ended_s, x_request_id,
    trace_id, intended_at_ms, started_at_ms, ended_at_ms
FROM v_requests
WHERE run_id = :run_id
ORDER BY seq
