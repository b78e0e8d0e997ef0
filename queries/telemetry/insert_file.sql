-- Attaches a telemetry or span file to a run.
-- Parameters: :run_id, :kind, :name, :sha256, :bytes, :record_count, :ingested_at
INSERT INTO attached_files (run_id, kind, name, sha256, bytes, record_count, ingested_at)
VALUES (:run_id, :kind, :name, :sha256, :bytes, :record_count, :ingested_at)
