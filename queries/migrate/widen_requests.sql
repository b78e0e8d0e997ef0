-- One row of requests: the integers past 64 bits moved from `extra` into
-- their columns (as decimal text), `extra` without them.
-- Parameters: :run_id, :seq, :extra, and one per integer column (NULL: kept)
UPDATE requests
   SET request_index = coalesce(:request_index, request_index),
       started_at_ns = coalesce(:started_at_ns, started_at_ns),
       ended_at_ns = coalesce(:ended_at_ns, ended_at_ns),
       intended_at_ns = coalesce(:intended_at_ns, intended_at_ns),
       timestamp_ns = coalesce(:timestamp_ns, timestamp_ns),
       prompt_tokens = coalesce(:prompt_tokens, prompt_tokens),
       output_tokens = coalesce(:output_tokens, output_tokens),
       total_tokens = coalesce(:total_tokens, total_tokens),
       target_input_tokens = coalesce(:target_input_tokens, target_input_tokens),
       target_output_tokens = coalesce(:target_output_tokens, target_output_tokens),
       in_flight_at_dispatch = coalesce(:in_flight_at_dispatch, in_flight_at_dispatch),
       max_in_flight = coalesce(:max_in_flight, max_in_flight),
       concurrency = coalesce(:concurrency, concurrency),
       prefix_group = coalesce(:prefix_group, prefix_group),
       shared_prefix_tokens = coalesce(:shared_prefix_tokens, shared_prefix_tokens),
       http_status = coalesce(:http_status, http_status),
       extra = :extra
 WHERE run_id = :run_id AND seq = :seq
