-- Stores one `infer.vllm_scrape` record of an artifact in `vllm_scrapes`.
-- Parameters: :run_id, :seq, :schema_version, :case_id, :phase, :marker, :status, :observed_at_ns, :completed_at_ns, :source_url, :scrape, :discovery, :extra
--   (each field column holds the record's value when the column reproduces it
--   exactly; everything else is in :extra, a JSON object, or NULL).
INSERT INTO vllm_scrapes (run_id, seq, schema_version, case_id, phase, marker, status, observed_at_ns, completed_at_ns, source_url, scrape, discovery, extra)
VALUES (:run_id, :seq, :schema_version, :case_id, :phase, :marker, :status, :observed_at_ns, :completed_at_ns, :source_url, :scrape, :discovery, :extra)
