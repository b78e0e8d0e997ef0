-- Stores one `infer.clock_alignment` record of an artifact in `clock_alignments`.
-- Parameters: :run_id, :seq, :schema_version, :context_id, :event_id, :from_clock_domain, :to_clock_domain, :offset_ns, :uncertainty_ns, :valid_from_ns, :valid_to_ns, :metadata, :nulls, :extra
--   (a field column holds the record's value when it gives the same JSON back;
--   :nulls marks fields present as null; everything else is in :extra, a JSON
--   object, or NULL).
INSERT INTO clock_alignments (run_id, seq, schema_version, context_id, event_id, from_clock_domain, to_clock_domain, offset_ns, uncertainty_ns, valid_from_ns, valid_to_ns, metadata, nulls, extra)
VALUES (:run_id, :seq, :schema_version, :context_id, :event_id, :from_clock_domain, :to_clock_domain, :offset_ns, :uncertainty_ns, :valid_from_ns, :valid_to_ns, :metadata, :nulls, :extra)
