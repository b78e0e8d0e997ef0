-- One run's rows of `v_server_samples`, every column in the view's order,
-- for `export --parquet` (docs/scale.md).
-- Parameters: :run_id
-- Columns: those of v_server_samples (docs/sql.md)
-- Order: file_id, seq
SELECT
    run_id, sample_run_id, file_id, file_name, seq, host, pid,
    process_start_ns, boot_id, device_uuid, gpu_instance_id, replica_id,
    rank, group_id, world_size, observed_at_ns, observed_at, observed_s,
    metric, state, value_bytes, value_mib, source, interval_ms, provenance,
    detail, observed_at_ms
FROM v_server_samples
WHERE run_id = :run_id
ORDER BY file_id, seq
