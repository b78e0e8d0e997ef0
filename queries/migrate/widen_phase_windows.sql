-- One row of phase_windows: the integers past 64 bits moved from `extra` into
-- their columns (as decimal text), `extra` without them.
-- Parameters: :run_id, :seq, :extra, and one per integer column (NULL: kept)
UPDATE phase_windows
   SET started_at_ns = coalesce(:started_at_ns, started_at_ns),
       window_ended_at_ns = coalesce(:window_ended_at_ns, window_ended_at_ns),
       drained_at_ns = coalesce(:drained_at_ns, drained_at_ns),
       scheduled_arrivals = coalesce(:scheduled_arrivals, scheduled_arrivals),
       scheduled_endpoint_offset_ns = coalesce(:scheduled_endpoint_offset_ns, scheduled_endpoint_offset_ns),
       extra = :extra
 WHERE run_id = :run_id AND seq = :seq
