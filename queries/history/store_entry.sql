-- Keeps (or replaces) a run's history entry under one policy.
-- Parameters: :run_id, :policy_key, :stamp, :entry
INSERT OR REPLACE INTO history_entries (run_id, policy_key, stamp, entry)
VALUES (:run_id, :policy_key, :stamp, :entry)
