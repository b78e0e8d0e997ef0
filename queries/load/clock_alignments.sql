-- The `infer.clock_alignment` records of one run (artifact rows only), in file order.
-- Parameters: :run_id
-- Columns: seq, schema_version, context_id, event_id, from_clock_domain, to_clock_domain, offset_ns, uncertainty_ns, valid_from_ns, valid_to_ns, metadata, nulls, extra
SELECT seq, schema_version, context_id, event_id, from_clock_domain, to_clock_domain, offset_ns, uncertainty_ns, valid_from_ns, valid_to_ns, metadata, nulls, extra
FROM clock_alignments
WHERE run_id = :run_id
ORDER BY seq
