-- Whether a run keeps an `infer.dispatch` record in `records` (not in its
-- typed table): the execution aggregate's case map then needs the body.
-- Parameters: :run_id
-- Columns: found (0 or 1)
SELECT EXISTS (
    SELECT 1 FROM records INDEXED BY records_type
    WHERE run_id = :run_id AND event_type = 'infer.dispatch'
) AS found
