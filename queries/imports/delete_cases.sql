-- Removes an imported run's cases (before a --replace).
-- Parameters: :run_id
DELETE FROM import_cases WHERE run_id = :run_id
