-- 0009: every column of the views carries a declared type an outside
-- client can see (`PRAGMA table_info(v_requests)`); names, order and values
-- stay as 0005 and 0008 made them.
--
-- Why: SQLite declares a view column's type only when it is a bare table
-- column. DuckDB's `sqlite_scan` (its SQLite is 3.38) reads an untyped view
-- column as BLOB, and SQLite before 3.41 gives even a CAST no type. So:
--
-- * Values derived from one row of `runs` or `phase_windows` (the ISO 8601
--   text, the milliseconds, the window's length) become VIRTUAL generated
--   columns of those tables (typed, never stored), which the views select
--   bare: typed for every client.
-- * Everything else is a CAST in the view, which SQLite 3.41 and later
--   (stormlog's own 3.46, current Python builds) report as INT, REAL or
--   TEXT. Not generated columns on `requests` and `server_samples`: SQLite
--   computes generated columns at every INSERT as well (and type-checks a
--   STRICT row twice then), which costs about 1,900 instructions a row for
--   the first column and more for each other. Five on `requests` took the
--   INSERT of 30,000 requests from 258 to 337 million instructions (callgrind),
--   4% of an `infer analyze`; the views pay for their arithmetic on read.
--
-- A generated column needs SQLite 3.31 (2020) or later to open the file.

ALTER TABLE runs ADD COLUMN started_at TEXT
    GENERATED ALWAYS AS (strftime('%Y-%m-%dT%H:%M:%fZ', started_at_ns / 1e9, 'unixepoch')) VIRTUAL;
ALTER TABLE runs ADD COLUMN started_at_ms INTEGER
    GENERATED ALWAYS AS (started_at_ns / 1000000) VIRTUAL;

ALTER TABLE phase_windows ADD COLUMN window_s REAL
    GENERATED ALWAYS AS ((drained_at_ns - started_at_ns) / 1e9) VIRTUAL;
ALTER TABLE phase_windows ADD COLUMN started_at TEXT
    GENERATED ALWAYS AS (strftime('%Y-%m-%dT%H:%M:%fZ', started_at_ns / 1e9, 'unixepoch')) VIRTUAL;
ALTER TABLE phase_windows ADD COLUMN drained_at TEXT
    GENERATED ALWAYS AS (strftime('%Y-%m-%dT%H:%M:%fZ', drained_at_ns / 1e9, 'unixepoch')) VIRTUAL;
ALTER TABLE phase_windows ADD COLUMN started_at_ms INTEGER
    GENERATED ALWAYS AS (started_at_ns / 1000000) VIRTUAL;
ALTER TABLE phase_windows ADD COLUMN drained_at_ms INTEGER
    GENERATED ALWAYS AS (drained_at_ns / 1000000) VIRTUAL;

-- v_case_summary reads v_case_windows: dropped first, made last.
DROP VIEW v_case_summary;

-- One row per run: the artifact's facts and its request counts.
DROP VIEW v_runs;
CREATE VIEW v_runs AS
SELECT
    r.run_id,
    r.session_id,
    r.model,
    r.endpoint,
    r.started_at_ns,
    r.started_at,
    CAST((SELECT s.status FROM sessions s
      WHERE s.run_id = r.run_id AND s.status IS NOT NULL AND s.status <> ''
      ORDER BY s.seq DESC LIMIT 1) AS TEXT) AS session_status,
    CAST((SELECT count(DISTINCT q.case_key) FROM requests q
      WHERE q.run_id = r.run_id AND q.phase = 'measured') AS INTEGER) AS cases,
    CAST((SELECT count(*) FROM requests q
      WHERE q.run_id = r.run_id AND q.phase = 'measured') AS INTEGER) AS requests,
    CAST((SELECT count(*) FROM requests q
      WHERE q.run_id = r.run_id AND q.phase = 'measured' AND q.status = 'ok') AS INTEGER) AS ok,
    CAST((SELECT count(*) FROM requests q
      WHERE q.run_id = r.run_id AND q.phase = 'measured' AND q.status_key <> 'ok') AS INTEGER) AS failed,
    CAST((SELECT count(*) FROM attached_files f
      WHERE f.run_id = r.run_id AND f.kind = 'telemetry') AS INTEGER) AS telemetry_files,
    r.artifact_name,
    r.artifact_sha256,
    r.record_count,
    r.ingested_at,
    r.started_at_ms
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
    CAST(CASE WHEN q.status = 'ok' THEN 1 ELSE 0 END AS INTEGER) AS ok,
    q.http_status,
    q.error_type,
    q.error_message,
    q.finish_reason,
    q.e2e_latency_ms AS e2e_ms,
    q.ttft_ms,
    q.first_chunk_latency_ms AS first_chunk_ms,
    q.dispatch_lag_ms,
    CAST((q.ended_at_ns - q.intended_at_ns) / 1e6 AS REAL) AS e2e_from_intended_ms,
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
    w.window_s,
    CAST((w.started_at_ns - r.started_at_ns) / 1e9 AS REAL) AS started_s,
    CAST((w.drained_at_ns - r.started_at_ns) / 1e9 AS REAL) AS drained_s,
    w.stopped_early,
    w.scheduled_arrivals,
    w.started_at,
    w.drained_at,
    w.started_at_ms,
    w.drained_at_ms
FROM phase_windows w
JOIN runs r ON r.run_id = w.run_id
WHERE w.seq = (SELECT max(w2.seq) FROM phase_windows w2
               WHERE w2.run_id = w.run_id AND w2.case_id IS w.case_id AND w2.phase IS w.phase);

-- Per run, phase and case: counts, failure rate, and latency summaries over
-- the successful requests. Percentiles need stormlog's `percentile`
-- aggregate, which the stock shell lacks, so they are left to queries.
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
    CAST(strftime('%Y-%m-%dT%H:%M:%fZ', s.observed_at_ns / 1e9, 'unixepoch') AS TEXT) AS observed_at,
    CAST((s.observed_at_ns - r.started_at_ns) / 1e9 AS REAL) AS observed_s,
    s.metric,
    s.state,
    s.value_bytes,
    CAST(s.value_bytes / 1048576.0 AS REAL) AS value_mib,
    s.source,
    s.interval_ms,
    s.provenance,
    s.detail,
    CAST(s.observed_at_ns / 1000000 AS INTEGER) AS observed_at_ms
FROM server_samples s
JOIN attached_files f ON f.file_id = s.file_id
JOIN server_identities i ON i.identity_id = s.identity_id
JOIN runs r ON r.run_id = f.run_id;

-- One row per imported run.
DROP VIEW v_imports;
CREATE VIEW v_imports AS
SELECT
    i.run_id,
    i.tool,
    i.tool_version,
    i.format,
    i.format_version,
    i.identity,
    i.clock_kind,
    i.clock_domain,
    i.per_request,
    i.definitions,
    i.notes,
    CAST((SELECT count(*) FROM import_cases c WHERE c.run_id = i.run_id) AS INTEGER) AS cases,
    CAST((SELECT count(*) FROM requests q
      WHERE q.run_id = i.run_id AND q.phase = 'measured') AS INTEGER) AS requests,
    i.ingested_at
FROM imports i;

-- Requests of imported runs: stormlog's figures beside the tool's own.
DROP VIEW v_import_requests;
CREATE VIEW v_import_requests AS
SELECT
    q.run_id,
    i.tool,
    q.case_key,
    q.phase,
    q.seq,
    q.request_id,
    q.status,
    q.http_status,
    q.error_type,
    q.error_message,
    q.ttft_ms,
    q.e2e_latency_ms AS e2e_ms,
    CAST(CASE WHEN q.output_token_source = 'server_usage' AND q.output_tokens > 1
         THEN (q.e2e_latency_ms - q.ttft_ms) / (q.output_tokens - 1) END AS REAL) AS tpot_ms,
    q.output_tokens,
    q.output_token_source,
    q.prompt_tokens,
    CAST(json_extract(q.extra, '$.tool.ttft_ms') AS REAL) AS tool_ttft_ms,
    CAST(json_extract(q.extra, '$.tool.e2e_ms') AS REAL) AS tool_e2e_ms,
    CAST(json_extract(q.extra, '$.tool.tpot_ms') AS REAL) AS tool_tpot_ms,
    CAST(json_extract(q.extra, '$.tool.itl_ms') AS REAL) AS tool_itl_ms,
    CAST(json_extract(q.extra, '$.tool.output_tokens') AS INTEGER) AS tool_output_tokens,
    q.started_at_ns,
    q.ended_at_ns,
    i.clock_kind
FROM requests q
JOIN imports i ON i.run_id = q.run_id;
