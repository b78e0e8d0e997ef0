-- The `infer.request` records of one run (artifact rows only), in file order.
-- Parameters: :run_id
-- Columns: seq, schema_version, session_id, request_id, x_request_id, case_id, phase, status, request_index, started_at_ns, ended_at_ns, intended_at_ns, timestamp_ns, e2e_latency_ms, ttft_ms, first_chunk_latency_ms, dispatch_lag_ms, chunk_interarrival_ms, stream, prompt_tokens, output_tokens, total_tokens, output_token_source, arrival_mode, held_for_slot, in_flight_at_dispatch, prompt_mode, prompt_digest, prefix_group, shared_prefix_tokens, task, endpoint, model, http_status, finish_reason, error_type, error_message, concurrency, extra
SELECT seq, schema_version, session_id, request_id, x_request_id, case_id, phase, status, request_index, started_at_ns, ended_at_ns, intended_at_ns, timestamp_ns, e2e_latency_ms, ttft_ms, first_chunk_latency_ms, dispatch_lag_ms, chunk_interarrival_ms, stream, prompt_tokens, output_tokens, total_tokens, output_token_source, arrival_mode, held_for_slot, in_flight_at_dispatch, prompt_mode, prompt_digest, prefix_group, shared_prefix_tokens, task, endpoint, model, http_status, finish_reason, error_type, error_message, concurrency, extra
FROM requests
WHERE run_id = :run_id
ORDER BY seq
