-- Removes the stored bytes of an imported run's original files (before a
-- --replace; the import runs with foreign-key checks off, so deleting the
-- files does not cascade to their chunks).
-- Parameters: :run_id
DELETE FROM import_file_chunks
WHERE blob_id IN (SELECT blob_id FROM import_files WHERE run_id = :run_id)
