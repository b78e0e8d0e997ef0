-- Stores one segment of a run's packed analysis columns (src/db/pack.rs),
-- and (NULL where not packed) the same rows' other export columns.
-- Parameters: :run_id, :segment, :requests, :body, :rest
INSERT INTO request_packs (run_id, segment, requests, body, rest)
VALUES (:run_id, :segment, :requests, :body, :rest)
