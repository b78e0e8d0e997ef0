-- The columns of a run's client requests and dispatch records that the
-- execution block's request-to-case map reads (src/analysis/execution/mod.rs),
-- with whether the row keeps values outside its columns (`extra`).
-- Parameters: :run_id
-- Columns: seq, request_id, x_request_id, case (requests: case_key; dispatches: case_id), has_extra
SELECT seq, request_id, x_request_id, case_key, extra IS NOT NULL
FROM requests
WHERE run_id = :run_id
UNION ALL
SELECT seq, request_id, x_request_id, case_id, extra IS NOT NULL
FROM dispatches
WHERE run_id = :run_id
