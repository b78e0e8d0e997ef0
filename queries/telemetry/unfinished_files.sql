-- Telemetry a `collect-server --db` stored live and never finished (the
-- collector was killed before it could record the file's hash), with the
-- placeholder hash that names its process.
-- Parameters: :run_id
-- Columns: file_id, sha256
SELECT file_id, sha256 FROM attached_files
WHERE run_id = :run_id AND kind = 'telemetry' AND sha256 LIKE 'live:%'
ORDER BY file_id
