-- Creates an empty run row so telemetry can attach before its artifact arrives.
-- Parameters: :run_id, :ingested_at
INSERT INTO runs (run_id, ingested_at) VALUES (:run_id, :ingested_at)
ON CONFLICT (run_id) DO NOTHING
