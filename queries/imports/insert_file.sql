-- Records one original file of an imported run.
-- Parameters: :run_id, :file_index, :role, :name, :sha256, :bytes
INSERT INTO import_files (run_id, file_index, role, name, sha256, bytes)
VALUES (:run_id, :file_index, :role, :name, :sha256, :bytes)
