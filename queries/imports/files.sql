-- The original files of an imported run.
-- Parameters: :run_id
-- Columns: file_index, role, name, sha256, bytes
-- Order: file_index
SELECT file_index, role, name, sha256, bytes
FROM import_files
WHERE run_id = :run_id
ORDER BY file_index
