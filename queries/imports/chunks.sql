-- The bytes of one original file of a run, chunk by chunk.
-- Parameters: :run_id, :file_index
-- Columns: body
-- Order: chunk
SELECT c.body
FROM import_files f
JOIN import_file_chunks c ON c.blob_id = f.blob_id
WHERE f.run_id = :run_id AND f.file_index = :file_index
ORDER BY c.chunk
