-- The `infer.first_content` records of one run, in file order; a field the
-- row shares with its request (migrations/0014) is read from the request row.
-- Parameters: :run_id
-- Columns: seq, schema_version, session_id, request_id, x_request_id, case_id, phase, first_content_at_ns, timestamp_ns, nulls, extra
SELECT f.seq AS seq,
    iif(f.shared & 1, r.schema_version, f.schema_version) AS schema_version,
    iif(f.shared & 2, r.session_id, f.session_id) AS session_id,
    iif(f.shared & 4, r.request_id, f.request_id) AS request_id,
    iif(f.shared & 8, r.x_request_id, f.x_request_id) AS x_request_id,
    iif(f.shared & 16, r.case_id, f.case_id) AS case_id,
    iif(f.shared & 32, r.phase, f.phase) AS phase,
    f.first_content_at_ns AS first_content_at_ns,
    iif(f.shared & 128, r.timestamp_ns, f.timestamp_ns) AS timestamp_ns,
    f.nulls AS nulls, f.extra AS extra
FROM first_contents f
LEFT JOIN requests r ON f.shared <> 0 AND r.run_id = f.run_id AND r.seq = f.link
WHERE f.run_id = :run_id
ORDER BY f.seq
