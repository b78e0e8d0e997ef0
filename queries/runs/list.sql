-- Every stored run with its headline counts (`stormlog runs`).
-- Parameters: none
-- Columns: run_id, started_at_ns, model, endpoint, artifact_name, cases, requests,
--   failures, telemetry_files, telemetry_samples, clock_kind, wall_time
--   (clock_kind: an imported run's clock, NULL for a profiled run; wall_time:
--   the tool's own timestamp of a monotonic-clock import, as shown)
SELECT r.run_id,
       r.started_at_ns,
       r.model,
       r.endpoint,
       r.artifact_name,
       coalesce(c.cases, 0) AS cases,
       coalesce(c.requests, 0) AS requests,
       coalesce(c.failures, 0) AS failures,
       (SELECT count(*) FROM attached_files f
         WHERE f.run_id = r.run_id AND f.kind = 'telemetry') AS telemetry_files,
       (SELECT count(*) FROM attached_files f JOIN server_samples s ON s.file_id = f.file_id
         WHERE f.run_id = r.run_id AND f.kind = 'telemetry') AS telemetry_samples,
       i.clock_kind,
       (SELECT json_extract(s.config, '$.imported_from.wall_time') FROM sessions s
         WHERE s.run_id = r.run_id AND json_valid(s.config)
         ORDER BY s.seq LIMIT 1) AS wall_time
FROM runs r
LEFT JOIN imports i ON i.run_id = r.run_id
-- One pass over the requests for all three counts (three correlated
-- subqueries read every run's requests three times).
LEFT JOIN (SELECT q.run_id,
                  count(DISTINCT q.case_key) AS cases,
                  count(*) AS requests,
                  count(*) FILTER (WHERE q.status_key <> 'ok') AS failures
           FROM requests q
           WHERE q.phase = 'measured'
           GROUP BY q.run_id) c ON c.run_id = r.run_id
ORDER BY r.started_at_ns IS NULL, r.started_at_ns, r.run_id
