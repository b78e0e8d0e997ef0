-- An imported run's provenance, or no row for a run that was not imported.
-- Parameters: :run_id
-- Columns: tool, tool_version, format, format_version, identity, clock_kind, clock_domain,
--   per_request, definitions, notes
SELECT tool, tool_version, format, format_version, identity, clock_kind, clock_domain,
       per_request, definitions, notes
FROM imports
WHERE run_id = :run_id
