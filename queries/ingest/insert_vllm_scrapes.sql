-- Stores one `infer.vllm_scrape` record of an artifact in `vllm_scrapes`.
-- Parameters: :run_id, :seq, :schema_version, :session_id, :case_id, :phase, :marker, :status, :observed_at_ns, :completed_at_ns, :timestamp_ns, :interval_ms, :source_url, :observation_scope, :clock_domain, :http_status, :content_bytes, :duration_ms, :error, :content_digest, :scrape, :discovery, :nulls, :extra
--   (a field column holds the record's value when it gives the same JSON back;
--   :nulls marks fields present as null; everything else is in :extra, a JSON
--   object, or NULL).
INSERT INTO vllm_scrapes (run_id, seq, schema_version, session_id, case_id, phase, marker, status, observed_at_ns, completed_at_ns, timestamp_ns, interval_ms, source_url, observation_scope, clock_domain, http_status, content_bytes, duration_ms, error, content_digest, scrape, discovery, nulls, extra)
VALUES (:run_id, :seq, :schema_version, :session_id, :case_id, :phase, :marker, :status, :observed_at_ns, :completed_at_ns, :timestamp_ns, :interval_ms, :source_url, :observation_scope, :clock_domain, :http_status, :content_bytes, :duration_ms, :error, :content_digest, :scrape, :discovery, :nulls, :extra)
