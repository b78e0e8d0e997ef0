-- Records one original file of an imported run (its bytes are under :blob_id).
-- Parameters: :run_id, :file_index, :role, :name, :sha256, :bytes, :blob_id
INSERT INTO import_files (run_id, file_index, role, name, sha256, bytes, blob_id)
VALUES (:run_id, :file_index, :role, :name, :sha256, :bytes, :blob_id)
