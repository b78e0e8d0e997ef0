-- Finds or creates a server identity; returns its id.
-- Parameters: :host, :pid, :process_start_ns, :device_uuid, :gpu_instance_id, :replica_id,
--   :rank, :boot_id, :group_id, :world_size
-- Columns: identity_id
INSERT INTO server_identities (host, pid, process_start_ns, device_uuid, gpu_instance_id,
                               replica_id, rank, boot_id, group_id, world_size)
VALUES (:host, :pid, :process_start_ns, :device_uuid, :gpu_instance_id,
        :replica_id, :rank, :boot_id, :group_id, :world_size)
ON CONFLICT DO UPDATE SET host = excluded.host
RETURNING identity_id
