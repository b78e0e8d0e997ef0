-- A blob id no stored file uses (inside the ingest's write transaction).
-- Columns: blob_id
SELECT max(coalesce((SELECT max(blob_id) FROM import_files), 0),
           coalesce((SELECT max(blob_id) FROM import_file_chunks), 0)) + 1 AS blob_id
