-- A run's `infer.dispatch` records, in file order: read only for the vLLM
-- execution block (report.md §6.4), whose request-to-case map counts them
-- beside the requests; the analysis load leaves them out otherwise.
-- Parameters: :run_id
-- Columns: seq, body
SELECT seq, body FROM records INDEXED BY records_type
WHERE run_id = :run_id AND event_type = 'infer.dispatch'
ORDER BY seq
