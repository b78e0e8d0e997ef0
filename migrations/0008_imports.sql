-- 0008: runs imported from other benchmarking tools (docs/import.md).
--
-- Why: an imported run's requests, cases and windows go into the same tables
-- as a profiled run's (mapped onto artifact records), but what its figures
-- mean, which clock its instants are on and the tool's own files are facts
-- no artifact table holds. `imports` keeps the provenance of meaning (tool,
-- version, format, the definition of every figure), `import_cases` the load
-- each case declared and the tool's own summary of it, `import_files` and
-- `import_file_chunks` the original files, so `export` gives them back.

CREATE TABLE imports (
    run_id          TEXT PRIMARY KEY REFERENCES runs(run_id) ON DELETE CASCADE,
    tool            TEXT NOT NULL,      -- aiperf | guidellm | inference-perf | vllm-bench-serve
    tool_version    TEXT,
    format          TEXT NOT NULL,      -- the per-request (or result) file's format
    format_version  TEXT,               -- the format's own version field, if any
    identity        TEXT,               -- the tool's id of the run; NULL: named by content hash
    clock_kind      TEXT NOT NULL,      -- unix_epoch | monotonic
    clock_domain    TEXT NOT NULL,      -- unix_epoch_ns | <tool>/monotonic_relative_ns
    per_request     INTEGER NOT NULL,   -- boolean: per-request data exists
    definitions     TEXT NOT NULL,      -- JSON object: figure -> definition
    config          TEXT,               -- JSON: the tool's configuration as written
    summary         TEXT,               -- JSON: the tool's run-level summary
    notes           TEXT NOT NULL,      -- JSON list of strings: what could not be read
    ingested_at     TEXT NOT NULL
) STRICT;

CREATE TABLE import_cases (
    run_id           TEXT NOT NULL REFERENCES runs(run_id) ON DELETE CASCADE,
    case_index       INTEGER NOT NULL,
    case_id          TEXT NOT NULL,
    arrival_mode     TEXT,              -- stormlog's: closed | fixed-rate | poisson; NULL: no equivalent
    tool_mode        TEXT NOT NULL,     -- the tool's own name for the load
    rate_per_second  REAL,
    concurrency      INTEGER,
    declared         TEXT,              -- JSON: everything else the tool declared
    summary          TEXT,              -- JSON: the tool's own aggregates of the case
    PRIMARY KEY (run_id, case_index)
) STRICT;

CREATE TABLE import_files (
    run_id      TEXT NOT NULL REFERENCES runs(run_id) ON DELETE CASCADE,
    file_index  INTEGER NOT NULL,       -- 0: the per-request (or result) file
    role        TEXT NOT NULL,          -- per_request | summary | stage | config | stage_config
    name        TEXT NOT NULL,          -- file name as read
    sha256      TEXT NOT NULL,
    bytes       INTEGER NOT NULL,
    blob_id     INTEGER NOT NULL UNIQUE, -- its bytes in import_file_chunks
    PRIMARY KEY (run_id, file_index)
) STRICT;

-- Keyed by a blob id rather than the run: the per-request file is stored
-- while it is parsed, before the run id it names is known (the foreign key
-- is checked at commit).
CREATE TABLE import_file_chunks (
    blob_id     INTEGER NOT NULL REFERENCES import_files(blob_id)
                    ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED,
    chunk       INTEGER NOT NULL,       -- 0, 1, ...: the file's bytes in order
    body        BLOB NOT NULL,
    PRIMARY KEY (blob_id, chunk)
) STRICT;

-- Imported runs with their provenance.
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
    (SELECT count(*) FROM import_cases c WHERE c.run_id = i.run_id) AS cases,
    (SELECT count(*) FROM requests q WHERE q.run_id = i.run_id AND q.phase = 'measured') AS requests,
    i.ingested_at
FROM imports i;

-- Requests of imported runs: stormlog's figures beside the tool's own.
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
    CASE WHEN q.output_token_source = 'server_usage' AND q.output_tokens > 1
         THEN (q.e2e_latency_ms - q.ttft_ms) / (q.output_tokens - 1) END AS tpot_ms,
    q.output_tokens,
    q.output_token_source,
    q.prompt_tokens,
    json_extract(q.extra, '$.tool.ttft_ms') AS tool_ttft_ms,
    json_extract(q.extra, '$.tool.e2e_ms') AS tool_e2e_ms,
    json_extract(q.extra, '$.tool.tpot_ms') AS tool_tpot_ms,
    json_extract(q.extra, '$.tool.itl_ms') AS tool_itl_ms,
    json_extract(q.extra, '$.tool.output_tokens') AS tool_output_tokens,
    q.started_at_ns,
    q.ended_at_ns,
    i.clock_kind
FROM requests q
JOIN imports i ON i.run_id = q.run_id;
