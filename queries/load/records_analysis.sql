-- A run's untyped records that the analysis reads, in file order. Left out:
-- `infer.first_content`, `infer.phase_start` and `infer.summary` (never read
-- by the analysis, artifact.md §3.7) and `infer.dispatch` (one per request,
-- read only by the vLLM execution block, which needs execution imports:
-- the run's `infer.capabilities` / `infer.iteration` records, kept here).
-- Parameters: :run_id
-- Columns: seq, body
SELECT seq, body
FROM records
WHERE run_id = :run_id
  AND (event_type IS NULL
       OR event_type NOT IN ('infer.first_content', 'infer.phase_start', 'infer.summary', 'infer.dispatch'))
ORDER BY seq
