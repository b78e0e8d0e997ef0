-- Stores one chunk of an original file's bytes.
-- Parameters: :run_id, :file_index, :chunk, :body
INSERT INTO import_file_chunks (run_id, file_index, chunk, body)
VALUES (:run_id, :file_index, :chunk, :body)
