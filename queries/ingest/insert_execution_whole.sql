-- Names a bulk record the report reads whole (migrations/0007).
-- Parameters: :run_id, :seq
INSERT INTO execution_whole (run_id, seq)
VALUES (:run_id, :seq)
