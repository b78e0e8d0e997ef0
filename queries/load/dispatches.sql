-- The `infer.dispatch` records of one run, in file order; a field the row
-- shares with its request (migrations/0014) is read from the request row.
-- Parameters: :run_id
-- Columns: seq, schema_version, session_id, request_id, x_request_id, case_id, phase, intended_at_ns, started_at_ns, timestamp_ns, nulls, extra
SELECT d.seq AS seq,
    iif(d.shared & 1, r.schema_version, d.schema_version) AS schema_version,
    iif(d.shared & 2, r.session_id, d.session_id) AS session_id,
    iif(d.shared & 4, r.request_id, d.request_id) AS request_id,
    iif(d.shared & 8, r.x_request_id, d.x_request_id) AS x_request_id,
    iif(d.shared & 16, r.case_id, d.case_id) AS case_id,
    iif(d.shared & 32, r.phase, d.phase) AS phase,
    iif(d.shared & 64, r.intended_at_ns, d.intended_at_ns) AS intended_at_ns,
    iif(d.shared & 128, r.started_at_ns, d.started_at_ns) AS started_at_ns,
    iif(d.shared & 256, r.timestamp_ns, d.timestamp_ns) AS timestamp_ns,
    d.nulls AS nulls, d.extra AS extra
FROM dispatches d
LEFT JOIN requests r ON d.shared <> 0 AND r.run_id = d.run_id AND r.seq = d.link
WHERE d.run_id = :run_id
ORDER BY d.seq
