-- Stores one chunk of an original file's bytes.
-- Parameters: :blob_id, :chunk, :body
INSERT INTO import_file_chunks (blob_id, chunk, body)
VALUES (:blob_id, :chunk, :body)
