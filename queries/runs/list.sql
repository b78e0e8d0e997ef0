-- Every stored run with its headline counts (`stormlog runs`).
-- Parameters: none
-- Columns: run_id, started_at_ns, model, endpoint, artifact_name, cases, requests,
--   failures, telemetry_files, telemetry_samples
SELECT r.run_id,
       r.started_at_ns,
       r.model,
       r.endpoint,
       r.artifact_name,
       (SELECT count(DISTINCT q.case_key) FROM requests q
         WHERE q.run_id = r.run_id AND q.phase = 'measured') AS cases,
       (SELECT count(*) FROM requests q
         WHERE q.run_id = r.run_id AND q.phase = 'measured') AS requests,
       (SELECT count(*) FROM requests q
         WHERE q.run_id = r.run_id AND q.phase = 'measured' AND q.status_key <> 'ok') AS failures,
       (SELECT count(*) FROM attached_files f
         WHERE f.run_id = r.run_id AND f.kind = 'telemetry') AS telemetry_files,
       (SELECT count(*) FROM attached_files f JOIN server_samples s ON s.file_id = f.file_id
         WHERE f.run_id = r.run_id AND f.kind = 'telemetry') AS telemetry_samples
FROM runs r
ORDER BY r.started_at_ns IS NULL, r.started_at_ns, r.run_id
