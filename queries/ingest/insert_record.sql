-- Stores a record that has no typed table, whole.
-- Parameters: :run_id, :seq, :event_type, :body (JSON object)
INSERT INTO records (run_id, seq, event_type, body)
VALUES (:run_id, :seq, :event_type, :body)
