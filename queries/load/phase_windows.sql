-- The `infer.phase_window` records of one run (artifact rows only), in file order.
-- Parameters: :run_id
-- Columns: seq, schema_version, session_id, case_id, phase, arrival_mode, started_at_ns, window_ended_at_ns, drained_at_ns, drain_timeout_seconds, scheduled_arrivals, scheduled_endpoint_offset_ns, stopped_early, prompts_digest, abandoned_requests, nulls, extra
SELECT seq, schema_version, session_id, case_id, phase, arrival_mode, started_at_ns, window_ended_at_ns, drained_at_ns, drain_timeout_seconds, scheduled_arrivals, scheduled_endpoint_offset_ns, stopped_early, prompts_digest, abandoned_requests, nulls, extra
FROM phase_windows
WHERE run_id = :run_id
ORDER BY seq
