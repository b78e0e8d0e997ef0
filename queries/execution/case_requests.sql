-- The columns of a run's client requests and dispatch records that the
-- execution block's request-to-case map reads (src/analysis/execution/mod.rs),
-- with whether the row keeps values outside its columns (`extra`); a
-- dispatch's field shared with its request (migrations/0014) is read there.
-- Parameters: :run_id
-- Columns: seq, request_id, x_request_id, case (requests: case_key; dispatches: case_id), has_extra
SELECT seq, request_id, x_request_id, case_key, extra IS NOT NULL
FROM requests
WHERE run_id = :run_id
UNION ALL
SELECT d.seq AS seq,
    iif(d.shared & 4, r.request_id, d.request_id) AS request_id,
    iif(d.shared & 8, r.x_request_id, d.x_request_id) AS x_request_id,
    iif(d.shared & 16, r.case_id, d.case_id) AS case_id,
    d.extra IS NOT NULL
FROM dispatches d
LEFT JOIN requests r ON d.shared <> 0 AND r.run_id = d.run_id AND r.seq = d.link
WHERE d.run_id = :run_id
