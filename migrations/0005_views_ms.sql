-- 0005: the views again, each instant also in whole milliseconds since the
-- Unix epoch (`*_at_ms`), and the case windows' instants as ISO 8601 text.
--
-- Why: nanosecond stamps pass 2^53, past which JavaScript and many JSON
-- clients (Datasette's JSON API among them) round them; a millisecond count
-- stays exact there for the next 285,000 years. The columns are added at the
-- end of each view, so every column 0002 documented keeps its name and place.
-- (Computed view columns carry no declared type in SQLite, whatever their
-- expression: docs/sql.md says how DuckDB reads them.)

-- One row per run: the artifact's facts and its request counts.
DROP VIEW v_runs;
CREATE VIEW v_runs AS
SELECT
    r.run_id,
    r.session_id,
    r.model,
    r.endpoint,
    r.started_at_ns,
    strftime('%Y-%m-%dT%H:%M:%fZ', r.started_at_ns / 1e9, 'unixepoch') AS started_at,
    (SELECT s.status FROM sessions s
      WHERE s.run_id = r.run_id AND s.status IS NOT NULL AND s.status <> ''
      ORDER BY s.seq DESC LIMIT 1) AS session_status,
    (SELECT count(DISTINCT q.case_key) FROM requests q
      WHERE q.run_id = r.run_id AND q.phase = 'measured') AS cases,
    (SELECT count(*) FROM requests q
      WHERE q.run_id = r.run_id AND q.phase = 'measured') AS requests,
    (SELECT count(*) FROM requests q
      WHERE q.run_id = r.run_id AND q.phase = 'measured' AND q.status = 'ok') AS ok,
    (SELECT count(*) FROM requests q
      WHERE q.run_id = r.run_id AND q.phase = 'measured' AND q.status_key <> 'ok') AS failed,
    (SELECT count(*) FROM attached_files f
      WHERE f.run_id = r.run_id AND f.kind = 'telemetry') AS telemetry_files,
    r.artifact_name,
    r.artifact_sha256,
    r.record_count,
    r.ingested_at,
    r.started_at_ns / 1000000 AS started_at_ms
FROM runs r;

-- One row per client request (every phase; the report reads `measured`).
DROP VIEW v_requests;
CREATE VIEW v_requests AS
SELECT
    q.run_id,
    q.case_key,
    q.case_id,
    q.phase,
    q.seq,
    q.request_id,
    q.request_index,
    q.status,
    q.status_key,
    CASE WHEN q.status = 'ok' THEN 1 ELSE 0 END AS ok,
    q.http_status,
    q.error_type,
    q.error_message,
    q.finish_reason,
    q.e2e_latency_ms AS e2e_ms,
    q.ttft_ms,
    q.first_chunk_latency_ms AS first_chunk_ms,
    q.dispatch_lag_ms,
    (q.ended_at_ns - q.intended_at_ns) / 1e6 AS e2e_from_intended_ms,
    q.prompt_tokens,
    q.output_tokens,
    q.total_tokens,
    q.output_token_source,
    q.stream,
    q.arrival_mode,
    q.concurrency,
    q.in_flight_at_dispatch,
    q.model,
    q.endpoint,
    q.intended_at_ns,
    q.started_at_ns,
    q.ended_at_ns,
    strftime('%Y-%m-%dT%H:%M:%fZ', q.started_at_ns / 1e9, 'unixepoch') AS started_at,
    strftime('%Y-%m-%dT%H:%M:%fZ', q.ended_at_ns / 1e9, 'unixepoch') AS ended_at,
    (q.started_at_ns - r.started_at_ns) / 1e9 AS started_s,
    (q.ended_at_ns - r.started_at_ns) / 1e9 AS ended_s,
    q.x_request_id,
    q.trace_id,
    q.intended_at_ns / 1000000 AS intended_at_ms,
    q.started_at_ns / 1000000 AS started_at_ms,
    q.ended_at_ns / 1000000 AS ended_at_ms
FROM requests q
JOIN runs r ON r.run_id = q.run_id;

-- The window of each (run, case, phase): the last phase-window record, as
-- the report reads it.
DROP VIEW v_case_windows;
CREATE VIEW v_case_windows AS
SELECT
    w.run_id,
    w.case_id AS case_key,
    w.phase,
    w.arrival_mode,
    w.started_at_ns,
    w.window_ended_at_ns,
    w.drained_at_ns,
    (w.drained_at_ns - w.started_at_ns) / 1e9 AS window_s,
    (w.started_at_ns - r.started_at_ns) / 1e9 AS started_s,
    (w.drained_at_ns - r.started_at_ns) / 1e9 AS drained_s,
    w.stopped_early,
    w.scheduled_arrivals,
    strftime('%Y-%m-%dT%H:%M:%fZ', w.started_at_ns / 1e9, 'unixepoch') AS started_at,
    strftime('%Y-%m-%dT%H:%M:%fZ', w.drained_at_ns / 1e9, 'unixepoch') AS drained_at,
    w.started_at_ns / 1000000 AS started_at_ms,
    w.drained_at_ns / 1000000 AS drained_at_ms
FROM phase_windows w
JOIN runs r ON r.run_id = w.run_id
WHERE w.seq = (SELECT max(w2.seq) FROM phase_windows w2
               WHERE w2.run_id = w.run_id AND w2.case_id IS w.case_id AND w2.phase IS w.phase);

-- Per run, phase and case: counts, failure rate, and latency summaries over
-- the successful requests. Percentiles need stormlog's `percentile`
-- aggregate, which the stock shell lacks, so they are left to queries.
DROP VIEW v_case_summary;
CREATE VIEW v_case_summary AS
SELECT
    q.run_id,
    q.phase,
    q.case_key,
    count(*) AS requests,
    sum(q.status = 'ok') AS ok,
    sum(q.status_key <> 'ok') AS failed,
    1.0 * sum(q.status_key <> 'ok') / count(*) AS failure_rate,
    avg(CASE WHEN q.status = 'ok' THEN q.e2e_latency_ms END) AS e2e_mean_ms,
    min(CASE WHEN q.status = 'ok' THEN q.e2e_latency_ms END) AS e2e_min_ms,
    max(CASE WHEN q.status = 'ok' THEN q.e2e_latency_ms END) AS e2e_max_ms,
    avg(CASE WHEN q.status = 'ok' THEN q.ttft_ms END) AS ttft_mean_ms,
    min(CASE WHEN q.status = 'ok' THEN q.ttft_ms END) AS ttft_min_ms,
    max(CASE WHEN q.status = 'ok' THEN q.ttft_ms END) AS ttft_max_ms,
    sum(q.output_tokens) AS output_tokens,
    (SELECT w.window_s FROM v_case_windows w
      WHERE w.run_id = q.run_id AND w.case_key = q.case_key AND w.phase = q.phase) AS window_s
FROM requests q
GROUP BY q.run_id, q.phase, q.case_key;

-- Server telemetry samples with the identity they were taken under and the
-- run their file is attached to. `observed_s` counts from the run's start on
-- the assumption that the server shares the client's clock (same host);
-- for a remote server it is off by the clock offset.
DROP VIEW v_server_samples;
CREATE VIEW v_server_samples AS
SELECT
    f.run_id,
    s.sample_run_id,
    s.file_id,
    f.name AS file_name,
    s.seq,
    i.host,
    i.pid,
    i.process_start_ns,
    i.boot_id,
    i.device_uuid,
    i.gpu_instance_id,
    i.replica_id,
    i.rank,
    i.group_id,
    i.world_size,
    s.observed_at_ns,
    strftime('%Y-%m-%dT%H:%M:%fZ', s.observed_at_ns / 1e9, 'unixepoch') AS observed_at,
    (s.observed_at_ns - r.started_at_ns) / 1e9 AS observed_s,
    s.metric,
    s.state,
    s.value_bytes,
    s.value_bytes / 1048576.0 AS value_mib,
    s.source,
    s.interval_ms,
    s.provenance,
    s.detail,
    s.observed_at_ns / 1000000 AS observed_at_ms
FROM server_samples s
JOIN attached_files f ON f.file_id = s.file_id
JOIN server_identities i ON i.identity_id = s.identity_id
JOIN runs r ON r.run_id = f.run_id;
