-- Stores one `infer.context` definition (compact transport, schema version 4).
-- Parameters: :run_id, :seq, :context_id, :context (JSON object)
-- A context defined again (the same definition; a conflicting one is refused
-- while decoding) keeps its first row, as the reference's registry does.
INSERT INTO contexts (run_id, seq, context_id, context)
VALUES (:run_id, :seq, :context_id, :context)
ON CONFLICT (run_id, context_id) DO NOTHING
