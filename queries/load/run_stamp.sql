-- What tells one ingest of a run from another: readers of a run on separate
-- connections compare it, so that none reads a run that another ingest has
-- since replaced.
-- Parameters: :run_id
-- Columns: artifact_sha256, ingested_at
SELECT artifact_sha256, ingested_at FROM runs WHERE run_id = :run_id
