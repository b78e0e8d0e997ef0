-- 0011: the views' integer columns keep a declared INTEGER type after 0010.
--
-- Why: 0010 made the integer fields of `requests` and `phase_windows` ANY,
-- so that a value past 64 bits is kept exactly (as decimal text) in its
-- column. A view selecting such a column bare then declares no usable type
-- (`PRAGMA table_info` says BLOB), which undid 0009 for outside clients
-- (DuckDB's scanner, Datasette). The views now cast those columns to
-- INTEGER; a value past 64 bits reads NULL in a view (an INTEGER cannot
-- hold it, and a clamped number would be wrong) and exactly in the table.
-- Names, order and every other value are as 0009 made them.

-- v_case_summary reads v_case_windows: dropped first, made last.
DROP VIEW v_case_summary;
DROP VIEW v_requests;
DROP VIEW v_case_windows;
DROP VIEW v_import_requests;

CREATE VIEW v_requests AS
SELECT
    q.run_id,
    q.case_key,
    q.case_id,
    q.phase,
    q.seq,
    q.request_id,
    CAST(CASE WHEN typeof(q.request_index) = 'integer' THEN q.request_index END AS INTEGER) AS request_index,
    q.status,
    q.status_key,
    CAST(CASE WHEN q.status = 'ok' THEN 1 ELSE 0 END AS INTEGER) AS ok,
    CAST(CASE WHEN typeof(q.http_status) = 'integer' THEN q.http_status END AS INTEGER) AS http_status,
    q.error_type,
    q.error_message,
    q.finish_reason,
    q.e2e_latency_ms AS e2e_ms,
    q.ttft_ms,
    q.first_chunk_latency_ms AS first_chunk_ms,
    q.dispatch_lag_ms,
    CAST((q.ended_at_ns - q.intended_at_ns) / 1e6 AS REAL) AS e2e_from_intended_ms,
    CAST(CASE WHEN typeof(q.prompt_tokens) = 'integer' THEN q.prompt_tokens END AS INTEGER) AS prompt_tokens,
    CAST(CASE WHEN typeof(q.output_tokens) = 'integer' THEN q.output_tokens END AS INTEGER) AS output_tokens,
    CAST(CASE WHEN typeof(q.total_tokens) = 'integer' THEN q.total_tokens END AS INTEGER) AS total_tokens,
    q.output_token_source,
    q.stream,
    q.arrival_mode,
    CAST(CASE WHEN typeof(q.concurrency) = 'integer' THEN q.concurrency END AS INTEGER) AS concurrency,
    CAST(CASE WHEN typeof(q.in_flight_at_dispatch) = 'integer' THEN q.in_flight_at_dispatch END AS INTEGER) AS in_flight_at_dispatch,
    q.model,
    q.endpoint,
    CAST(CASE WHEN typeof(q.intended_at_ns) = 'integer' THEN q.intended_at_ns END AS INTEGER) AS intended_at_ns,
    CAST(CASE WHEN typeof(q.started_at_ns) = 'integer' THEN q.started_at_ns END AS INTEGER) AS started_at_ns,
    CAST(CASE WHEN typeof(q.ended_at_ns) = 'integer' THEN q.ended_at_ns END AS INTEGER) AS ended_at_ns,
    CAST(strftime('%Y-%m-%dT%H:%M:%fZ', q.started_at_ns / 1e9, 'unixepoch') AS TEXT) AS started_at,
    CAST(strftime('%Y-%m-%dT%H:%M:%fZ', q.ended_at_ns / 1e9, 'unixepoch') AS TEXT) AS ended_at,
    CAST((q.started_at_ns - r.started_at_ns) / 1e9 AS REAL) AS started_s,
    CAST((q.ended_at_ns - r.started_at_ns) / 1e9 AS REAL) AS ended_s,
    q.x_request_id,
    q.trace_id,
    CAST(q.intended_at_ns / 1000000 AS INTEGER) AS intended_at_ms,
    CAST(q.started_at_ns / 1000000 AS INTEGER) AS started_at_ms,
    CAST(q.ended_at_ns / 1000000 AS INTEGER) AS ended_at_ms
FROM requests q
JOIN runs r ON r.run_id = q.run_id;

CREATE VIEW v_case_windows AS
SELECT
    w.run_id,
    w.case_id AS case_key,
    w.phase,
    w.arrival_mode,
    CAST(CASE WHEN typeof(w.started_at_ns) = 'integer' THEN w.started_at_ns END AS INTEGER) AS started_at_ns,
    CAST(CASE WHEN typeof(w.window_ended_at_ns) = 'integer' THEN w.window_ended_at_ns END AS INTEGER) AS window_ended_at_ns,
    CAST(CASE WHEN typeof(w.drained_at_ns) = 'integer' THEN w.drained_at_ns END AS INTEGER) AS drained_at_ns,
    w.window_s,
    CAST((w.started_at_ns - r.started_at_ns) / 1e9 AS REAL) AS started_s,
    CAST((w.drained_at_ns - r.started_at_ns) / 1e9 AS REAL) AS drained_s,
    w.stopped_early,
    CAST(CASE WHEN typeof(w.scheduled_arrivals) = 'integer' THEN w.scheduled_arrivals END AS INTEGER) AS scheduled_arrivals,
    w.started_at,
    w.drained_at,
    w.started_at_ms,
    w.drained_at_ms
FROM phase_windows w
JOIN runs r ON r.run_id = w.run_id
WHERE w.seq = (SELECT max(w2.seq) FROM phase_windows w2
               WHERE w2.run_id = w.run_id AND w2.case_id IS w.case_id AND w2.phase IS w.phase);

CREATE VIEW v_import_requests AS
SELECT
    q.run_id,
    i.tool,
    q.case_key,
    q.phase,
    q.seq,
    q.request_id,
    q.status,
    CAST(CASE WHEN typeof(q.http_status) = 'integer' THEN q.http_status END AS INTEGER) AS http_status,
    q.error_type,
    q.error_message,
    q.ttft_ms,
    q.e2e_latency_ms AS e2e_ms,
    CAST(CASE WHEN q.output_token_source = 'server_usage' AND q.output_tokens > 1
         THEN (q.e2e_latency_ms - q.ttft_ms) / (q.output_tokens - 1) END AS REAL) AS tpot_ms,
    CAST(CASE WHEN typeof(q.output_tokens) = 'integer' THEN q.output_tokens END AS INTEGER) AS output_tokens,
    q.output_token_source,
    CAST(CASE WHEN typeof(q.prompt_tokens) = 'integer' THEN q.prompt_tokens END AS INTEGER) AS prompt_tokens,
    CAST(json_extract(q.extra, '$.tool.ttft_ms') AS REAL) AS tool_ttft_ms,
    CAST(json_extract(q.extra, '$.tool.e2e_ms') AS REAL) AS tool_e2e_ms,
    CAST(json_extract(q.extra, '$.tool.tpot_ms') AS REAL) AS tool_tpot_ms,
    CAST(json_extract(q.extra, '$.tool.itl_ms') AS REAL) AS tool_itl_ms,
    CAST(json_extract(q.extra, '$.tool.output_tokens') AS INTEGER) AS tool_output_tokens,
    CAST(CASE WHEN typeof(q.started_at_ns) = 'integer' THEN q.started_at_ns END AS INTEGER) AS started_at_ns,
    CAST(CASE WHEN typeof(q.ended_at_ns) = 'integer' THEN q.ended_at_ns END AS INTEGER) AS ended_at_ns,
    i.clock_kind
FROM requests q
JOIN imports i ON i.run_id = q.run_id;

CREATE VIEW v_case_summary AS
SELECT
    q.run_id,
    q.phase,
    q.case_key,
    CAST(count(*) AS INTEGER) AS requests,
    CAST(sum(q.status = 'ok') AS INTEGER) AS ok,
    CAST(sum(q.status_key <> 'ok') AS INTEGER) AS failed,
    CAST(1.0 * sum(q.status_key <> 'ok') / count(*) AS REAL) AS failure_rate,
    CAST(avg(CASE WHEN q.status = 'ok' THEN q.e2e_latency_ms END) AS REAL) AS e2e_mean_ms,
    CAST(min(CASE WHEN q.status = 'ok' THEN q.e2e_latency_ms END) AS REAL) AS e2e_min_ms,
    CAST(max(CASE WHEN q.status = 'ok' THEN q.e2e_latency_ms END) AS REAL) AS e2e_max_ms,
    CAST(avg(CASE WHEN q.status = 'ok' THEN q.ttft_ms END) AS REAL) AS ttft_mean_ms,
    CAST(min(CASE WHEN q.status = 'ok' THEN q.ttft_ms END) AS REAL) AS ttft_min_ms,
    CAST(max(CASE WHEN q.status = 'ok' THEN q.ttft_ms END) AS REAL) AS ttft_max_ms,
    CAST(sum(q.output_tokens) AS INTEGER) AS output_tokens,
    CAST((SELECT w.window_s FROM v_case_windows w
      WHERE w.run_id = q.run_id AND w.case_key = q.case_key AND w.phase = q.phase) AS REAL) AS window_s
FROM requests q
GROUP BY q.run_id, q.phase, q.case_key;
