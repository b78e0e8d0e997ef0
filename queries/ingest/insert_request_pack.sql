-- Stores a run's packed analysis columns (src/db/pack.rs), replacing any.
-- Parameters: :run_id, :requests, :body
INSERT INTO request_packs (run_id, requests, body) VALUES (:run_id, :requests, :body)
ON CONFLICT (run_id) DO UPDATE SET requests = excluded.requests, body = excluded.body
