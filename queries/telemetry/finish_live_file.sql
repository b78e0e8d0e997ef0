-- Completes a telemetry file that `collect-server --db` filled while it ran:
-- its final content hash, size and sample count (a later `ingest` of the same
-- file is then recognised as already stored).
-- Parameters: :file_id, :sha256, :bytes, :record_count
UPDATE attached_files
SET sha256 = :sha256, bytes = :bytes, record_count = :record_count
WHERE file_id = :file_id
