-- Removes an imported run's provenance, cases and files (before a --replace).
-- Parameters: :run_id
DELETE FROM imports WHERE run_id = :run_id
