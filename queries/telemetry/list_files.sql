-- The files attached to a run, in attach order.
-- Parameters: :run_id
-- Columns: file_id, kind, name, sha256, record_count
SELECT file_id, kind, name, sha256, record_count
FROM attached_files
WHERE run_id = :run_id
ORDER BY file_id
