-- Every run's `records` rows of one record type, for a migration that moves
-- them to a typed table (src/db/store.rs, move_to_typed_tables).
-- Parameters: :event_type
-- Columns: run_id, seq, body
SELECT run_id, seq, body FROM records
WHERE event_type = :event_type
ORDER BY run_id, seq
