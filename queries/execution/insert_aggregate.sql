-- Stores what the ingest aggregated of a run's fact lines (migrations/0013).
-- Parameters: :run_id, :figures, :run_ids, :identities, :hook_ids, :starts
INSERT INTO execution_aggregates (run_id, figures, run_ids, identities, hook_ids, starts)
VALUES (:run_id, :figures, :run_ids, :identities, :hook_ids, :starts)
