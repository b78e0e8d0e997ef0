-- The `infer.vllm_scrape` records of one run (artifact rows only), in file order.
-- Parameters: :run_id
-- Columns: seq, schema_version, session_id, case_id, phase, marker, status, observed_at_ns, completed_at_ns, timestamp_ns, interval_ms, source_url, observation_scope, clock_domain, http_status, content_bytes, duration_ms, error, content_digest, scrape, discovery, nulls, extra
SELECT seq, schema_version, session_id, case_id, phase, marker, status, observed_at_ns, completed_at_ns, timestamp_ns, interval_ms, source_url, observation_scope, clock_domain, http_status, content_bytes, duration_ms, error, content_digest, scrape, discovery, nulls, extra
FROM vllm_scrapes
WHERE run_id = :run_id
ORDER BY seq
