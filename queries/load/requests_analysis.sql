-- The fields of a run's client requests that the analysis reads (artifact.md
-- §3.8.2), in file order: the report never needs the rest of the row.
-- Parameters: :run_id, :from, :to (a range of seq, :to excluded; the whole
--   run is -2^63 .. 2^63-1)
-- Columns: seq, case_id, status, phase, session_id, request_id, x_request_id,
--   request_index, started_at_ns, ended_at_ns, intended_at_ns, e2e_latency_ms, ttft_ms,
--   first_chunk_latency_ms, dispatch_lag_ms, chunk_interarrival_ms, stream, prompt_tokens,
--   output_tokens, total_tokens, output_token_source, arrival_mode, held_for_slot,
--   in_flight_at_dispatch, prompt_mode, prompt_digest, prefix_group, shared_prefix_tokens,
--   task, nulls, extra
SELECT seq, case_id, status, phase, session_id, request_id, x_request_id,
       request_index, started_at_ns, ended_at_ns, intended_at_ns, e2e_latency_ms, ttft_ms,
       first_chunk_latency_ms, dispatch_lag_ms, chunk_interarrival_ms, stream, prompt_tokens,
       output_tokens, total_tokens, output_token_source, arrival_mode, held_for_slot,
       in_flight_at_dispatch, prompt_mode, prompt_digest, prefix_group, shared_prefix_tokens,
       task, nulls, extra
FROM requests
WHERE run_id = :run_id AND seq >= :from AND seq < :to
ORDER BY seq
