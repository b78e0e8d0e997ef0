-- The files attached to a run and how many samples each holds so far: the
-- rest of what a run's content hash covers (a live collector's file grows
-- under the same row).
-- Parameters: :run_id
-- Columns: file_id, kind, name, sha256, bytes, record_count, ingested_at,
--   samples, last_seq
-- Order: file_id
SELECT
    f.file_id, f.kind, f.name, f.sha256, f.bytes, f.record_count,
    f.ingested_at,
    (SELECT count(*) FROM server_samples s WHERE s.file_id = f.file_id) AS samples,
    (SELECT max(s.seq) FROM server_samples s WHERE s.file_id = f.file_id) AS last_seq
FROM attached_files f
WHERE f.run_id = :run_id
ORDER BY f.file_id
