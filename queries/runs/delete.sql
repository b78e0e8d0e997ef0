-- Deletes a run; every row attached to it goes with it (ON DELETE CASCADE:
-- records, requests and their pack, telemetry files and samples, spans).
-- Parameters: :run_id
DELETE FROM runs WHERE run_id = :run_id
