-- Whether this exact file (by content) is already attached to the run.
-- Parameters: :run_id, :kind, :sha256
-- Columns: file_id
SELECT file_id FROM attached_files
WHERE run_id = :run_id AND kind = :kind AND sha256 = :sha256
