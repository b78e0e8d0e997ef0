-- Whether a run keeps any `infer.activity_ref`, `infer.iteration`,
-- `infer.membership` or version-2 `infer.request` record in `records`.
-- Parameters: :run_id
-- Columns: found (0 or 1)
SELECT EXISTS (
    SELECT 1 FROM records INDEXED BY records_type
    WHERE run_id = :run_id
      AND event_type IN ('infer.activity_ref', 'infer.iteration', 'infer.membership', 'infer.request')
) AS found
