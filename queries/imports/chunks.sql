-- The bytes of one original file, chunk by chunk.
-- Parameters: :run_id, :file_index
-- Columns: body
-- Order: chunk
SELECT body
FROM import_file_chunks
WHERE run_id = :run_id AND file_index = :file_index
ORDER BY chunk
