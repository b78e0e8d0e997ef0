-- The server samples attached to a run: files in the order they were attached,
-- lines in file order.
-- Parameters: :run_id
-- Columns: file_id, seq, sample_run_id, observed_at_ns, metric, value_bytes, state, source,
--   interval_ms, detail, provenance, extra, host, pid, process_start_ns, device_uuid,
--   gpu_instance_id, replica_id, rank, boot_id, group_id, world_size
SELECT s.file_id, s.seq, s.sample_run_id, s.observed_at_ns, s.metric, s.value_bytes, s.state,
       s.source, s.interval_ms, s.detail, s.provenance, s.extra,
       i.host, i.pid, i.process_start_ns, i.device_uuid, i.gpu_instance_id, i.replica_id,
       i.rank, i.boot_id, i.group_id, i.world_size
FROM attached_files f
JOIN server_samples s ON s.file_id = f.file_id
JOIN server_identities i ON i.identity_id = s.identity_id
WHERE f.run_id = :run_id AND f.kind = 'telemetry'
ORDER BY f.file_id, s.seq
