-- Records an imported run's provenance (one row per run).
-- Parameters: :run_id, :tool, :tool_version, :format, :format_version, :identity,
--   :clock_kind, :clock_domain, :per_request, :definitions, :config, :summary, :notes, :ingested_at
INSERT INTO imports (run_id, tool, tool_version, format, format_version, identity, clock_kind,
                     clock_domain, per_request, definitions, config, summary, notes, ingested_at)
VALUES (:run_id, :tool, :tool_version, :format, :format_version, :identity, :clock_kind,
        :clock_domain, :per_request, :definitions, :config, :summary, :notes, :ingested_at)
