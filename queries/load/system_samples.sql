-- The `infer.system_sample` records of one run (artifact rows only), in file order.
-- Parameters: :run_id
-- Columns: seq, schema_version, session_id, timestamp_ns, sampler, observation_scope, device_id, device_name, device_used_bytes, device_free_bytes, device_total_bytes, process_rss_bytes, gpu_utilization_percent, metadata, nulls, extra
SELECT seq, schema_version, session_id, timestamp_ns, sampler, observation_scope, device_id, device_name, device_used_bytes, device_free_bytes, device_total_bytes, process_rss_bytes, gpu_utilization_percent, metadata, nulls, extra
FROM system_samples
WHERE run_id = :run_id
ORDER BY seq
