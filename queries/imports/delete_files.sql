-- Removes an imported run's original files and their chunks (before a --replace).
-- Parameters: :run_id
DELETE FROM import_files WHERE run_id = :run_id
