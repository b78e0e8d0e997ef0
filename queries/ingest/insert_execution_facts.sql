-- Stores one segment of a run's fact lines (migrations/0007).
-- Parameters: :run_id, :segment, :lines (count), :body (the lines, newline-ended)
INSERT INTO execution_facts (run_id, segment, lines, body)
VALUES (:run_id, :segment, :lines, :body)
