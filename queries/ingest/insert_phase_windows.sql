-- Stores one `infer.phase_window` record of an artifact in `phase_windows`.
-- Parameters: :run_id, :seq, :schema_version, :session_id, :case_id, :phase, :arrival_mode, :started_at_ns, :window_ended_at_ns, :drained_at_ns, :drain_timeout_seconds, :scheduled_arrivals, :scheduled_endpoint_offset_ns, :stopped_early, :prompts_digest, :abandoned_requests, :nulls, :extra
--   (a field column holds the record's value when it gives the same JSON back;
--   :nulls marks fields present as null; everything else is in :extra, a JSON
--   object, or NULL).
INSERT INTO phase_windows (run_id, seq, schema_version, session_id, case_id, phase, arrival_mode, started_at_ns, window_ended_at_ns, drained_at_ns, drain_timeout_seconds, scheduled_arrivals, scheduled_endpoint_offset_ns, stopped_early, prompts_digest, abandoned_requests, nulls, extra)
VALUES (:run_id, :seq, :schema_version, :session_id, :case_id, :phase, :arrival_mode, :started_at_ns, :window_ended_at_ns, :drained_at_ns, :drain_timeout_seconds, :scheduled_arrivals, :scheduled_endpoint_offset_ns, :stopped_early, :prompts_digest, :abandoned_requests, :nulls, :extra)
