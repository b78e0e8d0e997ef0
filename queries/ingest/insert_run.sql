-- Registers a run (or fills in the artifact of a run that telemetry created first).
-- Parameters: :run_id, :session_id, :started_at_ns, :model, :endpoint, :artifact_name,
--   :artifact_sha256, :artifact_bytes, :record_count, :line_count, :ingested_at
INSERT INTO runs (run_id, session_id, started_at_ns, model, endpoint, artifact_name,
                  artifact_sha256, artifact_bytes, record_count, line_count, ingested_at)
VALUES (:run_id, :session_id, :started_at_ns, :model, :endpoint, :artifact_name,
        :artifact_sha256, :artifact_bytes, :record_count, :line_count, :ingested_at)
ON CONFLICT (run_id) DO UPDATE SET
    session_id = excluded.session_id,
    started_at_ns = excluded.started_at_ns,
    model = excluded.model,
    endpoint = excluded.endpoint,
    artifact_name = excluded.artifact_name,
    artifact_sha256 = excluded.artifact_sha256,
    artifact_bytes = excluded.artifact_bytes,
    record_count = excluded.record_count,
    line_count = excluded.line_count,
    ingested_at = excluded.ingested_at
