-- Stores one `infer.system_sample` record of an artifact in `system_samples`.
-- Parameters: :run_id, :seq, :schema_version, :timestamp_ns, :sampler, :device_id, :device_name, :device_used_bytes, :device_free_bytes, :device_total_bytes, :process_rss_bytes, :gpu_utilization_percent, :extra
--   (each field column holds the record's value when the column reproduces it
--   exactly; everything else is in :extra, a JSON object, or NULL).
INSERT INTO system_samples (run_id, seq, schema_version, timestamp_ns, sampler, device_id, device_name, device_used_bytes, device_free_bytes, device_total_bytes, process_rss_bytes, gpu_utilization_percent, extra)
VALUES (:run_id, :seq, :schema_version, :timestamp_ns, :sampler, :device_id, :device_name, :device_used_bytes, :device_free_bytes, :device_total_bytes, :process_rss_bytes, :gpu_utilization_percent, :extra)
