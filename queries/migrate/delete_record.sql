-- Removes one `records` row a migration moved to a typed table.
-- Parameters: :run_id, :seq
DELETE FROM records WHERE run_id = :run_id AND seq = :seq
