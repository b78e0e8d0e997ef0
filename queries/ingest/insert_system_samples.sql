-- Stores one `infer.system_sample` record of an artifact in `system_samples`.
-- Parameters: :run_id, :seq, :schema_version, :session_id, :timestamp_ns, :sampler, :observation_scope, :device_id, :device_name, :device_used_bytes, :device_free_bytes, :device_total_bytes, :process_rss_bytes, :gpu_utilization_percent, :metadata, :nulls, :extra
--   (a field column holds the record's value when it gives the same JSON back;
--   :nulls marks fields present as null; everything else is in :extra, a JSON
--   object, or NULL).
INSERT INTO system_samples (run_id, seq, schema_version, session_id, timestamp_ns, sampler, observation_scope, device_id, device_name, device_used_bytes, device_free_bytes, device_total_bytes, process_rss_bytes, gpu_utilization_percent, metadata, nulls, extra)
VALUES (:run_id, :seq, :schema_version, :session_id, :timestamp_ns, :sampler, :observation_scope, :device_id, :device_name, :device_used_bytes, :device_free_bytes, :device_total_bytes, :process_rss_bytes, :gpu_utilization_percent, :metadata, :nulls, :extra)
