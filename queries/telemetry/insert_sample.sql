-- Stores one server telemetry sample.
-- Parameters: :file_id, :seq, :identity_id, :sample_run_id, :observed_at_ns, :metric,
--   :value_bytes, :state, :source, :interval_ms, :detail, :provenance, :extra
INSERT INTO server_samples (file_id, seq, identity_id, sample_run_id, observed_at_ns, metric,
                            value_bytes, state, source, interval_ms, detail, provenance, extra)
VALUES (:file_id, :seq, :identity_id, :sample_run_id, :observed_at_ns, :metric,
        :value_bytes, :state, :source, :interval_ms, :detail, :provenance, :extra)
