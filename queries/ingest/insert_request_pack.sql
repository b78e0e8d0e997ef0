-- Stores one segment of a run's packed analysis columns (src/db/pack.rs).
-- Parameters: :run_id, :segment, :requests, :body
INSERT INTO request_packs (run_id, segment, requests, body)
VALUES (:run_id, :segment, :requests, :body)
