-- A run's untyped records that the analysis reads, in file order. Left out:
-- `infer.first_content`, `infer.phase_start` and `infer.summary` (never read
-- by the analysis, artifact.md §3.7), `infer.dispatch` (one per request,
-- read only by the vLLM execution block, which needs execution imports:
-- the run's `infer.capabilities` / `infer.iteration` records, kept here),
-- and the execution import's bulk records, `infer.activity_ref`,
-- `infer.iteration`, `infer.membership` and the hook's `infer.request`
-- (read as fact lines from `execution_facts`, migrations/0007).
--
-- The types left out are skipped by ranges of the (run_id, event_type)
-- index, each arm one range between them: a run of N requests can hold a
-- dispatch and a first-content record per request, and a filter over the
-- run's records would read every one of them (90,000 requests: 75 ms,
-- against under 1 ms by the ranges). INDEXED BY keeps the planner on the
-- index: for the ORDER BY it would rather walk the primary key.
-- Parameters: :run_id
-- Columns: seq, body
SELECT seq, body FROM records INDEXED BY records_type
WHERE run_id = :run_id AND event_type IS NULL
UNION ALL
SELECT seq, body FROM records INDEXED BY records_type
WHERE run_id = :run_id AND event_type < 'infer.activity_ref'
UNION ALL
SELECT seq, body FROM records INDEXED BY records_type
WHERE run_id = :run_id AND event_type > 'infer.activity_ref' AND event_type < 'infer.dispatch'
UNION ALL
SELECT seq, body FROM records INDEXED BY records_type
WHERE run_id = :run_id AND event_type > 'infer.dispatch' AND event_type < 'infer.first_content'
UNION ALL
SELECT seq, body FROM records INDEXED BY records_type
WHERE run_id = :run_id AND event_type > 'infer.first_content' AND event_type < 'infer.iteration'
UNION ALL
SELECT seq, body FROM records INDEXED BY records_type
WHERE run_id = :run_id AND event_type > 'infer.iteration' AND event_type < 'infer.membership'
UNION ALL
SELECT seq, body FROM records INDEXED BY records_type
WHERE run_id = :run_id AND event_type > 'infer.membership' AND event_type < 'infer.phase_start'
UNION ALL
SELECT seq, body FROM records INDEXED BY records_type
WHERE run_id = :run_id AND event_type > 'infer.phase_start' AND event_type < 'infer.request'
UNION ALL
SELECT seq, body FROM records INDEXED BY records_type
WHERE run_id = :run_id AND event_type > 'infer.request' AND event_type < 'infer.summary'
UNION ALL
SELECT seq, body FROM records INDEXED BY records_type
WHERE run_id = :run_id AND event_type > 'infer.summary'
ORDER BY seq
