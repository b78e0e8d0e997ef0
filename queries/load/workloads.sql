-- The `infer.workload` records of one run (artifact rows only), in file order.
-- Parameters: :run_id
-- Columns: seq, schema_version, workload_digest, seed, task, cases, measurement, extra
SELECT seq, schema_version, workload_digest, seed, task, cases, measurement, extra
FROM workloads
WHERE run_id = :run_id
ORDER BY seq
