-- The `infer.vllm_scrape` records of one run (artifact rows only), in file order.
-- Parameters: :run_id
-- Columns: seq, schema_version, case_id, phase, marker, status, observed_at_ns, completed_at_ns, source_url, scrape, discovery, extra
SELECT seq, schema_version, case_id, phase, marker, status, observed_at_ns, completed_at_ns, source_url, scrape, discovery, extra
FROM vllm_scrapes
WHERE run_id = :run_id
ORDER BY seq
