-- A run's `infer.activity_ref`, `infer.iteration`, `infer.membership` and
-- `infer.request` records kept whole in `records` (the request rows there
-- are version 2: the hook's), in file order. Read whole only when the slim
-- rows are missing or stale; `records_analysis` leaves these types out.
-- Parameters: :run_id
-- Columns: seq, body
SELECT seq, body FROM records INDEXED BY records_type
WHERE run_id = :run_id
  AND event_type IN ('infer.activity_ref', 'infer.iteration', 'infer.membership', 'infer.request')
ORDER BY seq
