-- A run's context definitions (the fact lines name them).
-- Parameters: :run_id
-- Columns: context_id, context (JSON object)
SELECT context_id, context FROM contexts WHERE run_id = :run_id
