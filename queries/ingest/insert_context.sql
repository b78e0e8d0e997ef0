-- Stores one `infer.context` definition (compact transport, schema version 4).
-- Parameters: :run_id, :seq, :context_id, :context (JSON object)
INSERT INTO contexts (run_id, seq, context_id, context)
VALUES (:run_id, :seq, :context_id, :context)
