-- stormlog schema version 15
-- Generated from a database migrations/0001-NNNN made (src/db/mod.rs,
-- `snapshot_of`); a database made new gets this script in one step.
-- Not a migration: never edit it by hand. After adding a migration:
--     STORMLOG_WRITE_SNAPSHOT=1 cargo test --lib schema_snapshot

CREATE TABLE runs (
    run_id            TEXT PRIMARY KEY,
    session_id        TEXT,
    started_at_ns     INTEGER,
    model             TEXT,
    endpoint          TEXT,
    artifact_name     TEXT,            -- file name the artifact was ingested from
    artifact_sha256   TEXT,            -- content hash: the same file again is a no-op
    artifact_bytes    INTEGER,
    record_count      INTEGER,         -- decoded records (context definitions excluded)
    line_count        INTEGER,         -- physical lines of the file
    ingested_at       TEXT NOT NULL    -- UTC, ISO 8601
, started_at TEXT
    GENERATED ALWAYS AS (strftime('%Y-%m-%dT%H:%M:%fZ', started_at_ns / 1e9, 'unixepoch')) VIRTUAL, started_at_ms INTEGER
    GENERATED ALWAYS AS (started_at_ns / 1000000) VIRTUAL) STRICT;

CREATE TABLE contexts (
    run_id      TEXT NOT NULL REFERENCES runs(run_id) ON DELETE CASCADE,
    seq         INTEGER NOT NULL,       -- position of the definition line among all records
    context_id  TEXT NOT NULL,
    context     TEXT NOT NULL,          -- JSON object
    PRIMARY KEY (run_id, context_id)
) STRICT, WITHOUT ROWID;

CREATE TABLE records (
    run_id      TEXT NOT NULL REFERENCES runs(run_id) ON DELETE CASCADE,
    seq         INTEGER NOT NULL,
    event_type  TEXT,                   -- NULL when the record has none (or it is not a string)
    body        TEXT NOT NULL,          -- the record as JSON
    PRIMARY KEY (run_id, seq)
) STRICT, WITHOUT ROWID;

CREATE TABLE sessions (
    run_id          TEXT NOT NULL REFERENCES runs(run_id) ON DELETE CASCADE,
    seq             INTEGER NOT NULL,
    schema_version          INTEGER,
    session_id      TEXT,
    status          TEXT,
    timestamp_ns    INTEGER,
    config          TEXT,         -- JSON
    summary         TEXT,         -- JSON
    nulls           INTEGER NOT NULL DEFAULT 0,   -- bit i set: field i was present as null
    extra           TEXT,
    PRIMARY KEY (run_id, seq)
) STRICT, WITHOUT ROWID;

CREATE TABLE workloads (
    run_id            TEXT NOT NULL REFERENCES runs(run_id) ON DELETE CASCADE,
    seq               INTEGER NOT NULL,
    schema_version          INTEGER,
    session_id       TEXT,
    workload_digest  TEXT,
    spec_digest      TEXT,
    seed             INTEGER,
    task             TEXT,
    engine           TEXT,
    generator        TEXT,         -- JSON
    prompts          TEXT,         -- JSON
    warmup           TEXT,         -- JSON
    decoding         TEXT,         -- JSON
    tokenizer        TEXT,         -- JSON
    chat_template    TEXT,         -- JSON
    cache            TEXT,         -- JSON
    cases            TEXT,         -- JSON
    measurement      TEXT,         -- JSON
    nulls            INTEGER NOT NULL DEFAULT 0,   -- bit i set: field i was present as null
    extra            TEXT,
    PRIMARY KEY (run_id, seq)
) STRICT, WITHOUT ROWID;

CREATE TABLE cache_states (
    run_id        TEXT NOT NULL REFERENCES runs(run_id) ON DELETE CASCADE,
    seq           INTEGER NOT NULL,
    schema_version          INTEGER,
    session_id      TEXT,
    case_id         TEXT,
    requested       TEXT,
    attempted       INTEGER,      -- boolean
    acknowledged    INTEGER,      -- boolean
    verified        TEXT,
    run_kind        TEXT,
    reason          TEXT,
    reset           TEXT,         -- JSON
    nulls           INTEGER NOT NULL DEFAULT 0,   -- bit i set: field i was present as null
    extra           TEXT,
    PRIMARY KEY (run_id, seq)
) STRICT, WITHOUT ROWID;

CREATE TABLE system_samples (
    run_id              TEXT NOT NULL REFERENCES runs(run_id) ON DELETE CASCADE,
    seq                 INTEGER NOT NULL,
    schema_version          INTEGER,
    session_id               TEXT,
    timestamp_ns             INTEGER,
    sampler                  TEXT,
    observation_scope        TEXT,
    device_id                INTEGER,
    device_name              TEXT,
    device_used_bytes        INTEGER,
    device_free_bytes        INTEGER,
    device_total_bytes       INTEGER,
    process_rss_bytes        INTEGER,
    gpu_utilization_percent  REAL,
    metadata                 TEXT,         -- JSON
    nulls                    INTEGER NOT NULL DEFAULT 0,   -- bit i set: field i was present as null
    extra                    TEXT,
    PRIMARY KEY (run_id, seq)
) STRICT, WITHOUT ROWID;

CREATE TABLE slo_records (
    run_id      TEXT NOT NULL REFERENCES runs(run_id) ON DELETE CASCADE,
    seq         INTEGER NOT NULL,
    schema_version          INTEGER,
    session_id      TEXT,
    source          TEXT,
    digest          TEXT,
    slo             TEXT,         -- JSON
    nulls           INTEGER NOT NULL DEFAULT 0,   -- bit i set: field i was present as null
    extra           TEXT,
    PRIMARY KEY (run_id, seq)
) STRICT, WITHOUT ROWID;

CREATE TABLE clock_alignments (
    run_id            TEXT NOT NULL REFERENCES runs(run_id) ON DELETE CASCADE,
    seq               INTEGER NOT NULL,
    schema_version          INTEGER,
    context_id         TEXT,
    event_id           TEXT,
    from_clock_domain  TEXT,
    to_clock_domain    TEXT,
    offset_ns          INTEGER,
    uncertainty_ns     INTEGER,
    valid_from_ns      INTEGER,
    valid_to_ns        INTEGER,
    metadata           TEXT,         -- JSON
    nulls              INTEGER NOT NULL DEFAULT 0,   -- bit i set: field i was present as null
    extra              TEXT,
    PRIMARY KEY (run_id, seq)
) STRICT, WITHOUT ROWID;

CREATE TABLE vllm_scrapes (
    run_id          TEXT NOT NULL REFERENCES runs(run_id) ON DELETE CASCADE,
    seq             INTEGER NOT NULL,
    schema_version          INTEGER,
    session_id         TEXT,
    case_id            TEXT,
    phase              TEXT,
    marker             TEXT,
    status             TEXT,
    observed_at_ns     INTEGER,
    completed_at_ns    INTEGER,
    timestamp_ns       INTEGER,
    interval_ms        INTEGER,
    source_url         TEXT,
    observation_scope  TEXT,
    clock_domain       TEXT,
    http_status        INTEGER,
    content_bytes      INTEGER,
    duration_ms        REAL,
    error              TEXT,
    content_digest     TEXT,
    scrape             TEXT,         -- JSON
    discovery          TEXT,         -- JSON
    nulls              INTEGER NOT NULL DEFAULT 0,   -- bit i set: field i was present as null
    extra              TEXT,
    PRIMARY KEY (run_id, seq)
) STRICT, WITHOUT ROWID;

CREATE TABLE vllm_spans (
    run_id          TEXT NOT NULL REFERENCES runs(run_id) ON DELETE CASCADE,
    file_id         INTEGER REFERENCES attached_files(file_id) ON DELETE CASCADE,
    seq             INTEGER NOT NULL,
    schema_version          INTEGER,
    session_id      TEXT,
    source          TEXT,
    name            TEXT,
    request_id      TEXT,
    trace_id        TEXT,
    span_id         TEXT,
    parent_span_id  TEXT,
    kind            TEXT,
    clock_domain    TEXT,
    received_at_ns  INTEGER,
    start_unix_ns   INTEGER,
    end_unix_ns     INTEGER,
    timestamp_ns    INTEGER,
    attributes      TEXT,         -- JSON
    resource        TEXT,         -- JSON
    scope           TEXT,         -- JSON
    status          TEXT,         -- JSON
    dropped         TEXT,         -- JSON
    nulls           INTEGER NOT NULL DEFAULT 0,   -- bit i set: field i was present as null
    extra           TEXT
) STRICT;

CREATE TABLE attached_files (
    file_id       INTEGER PRIMARY KEY,
    run_id        TEXT NOT NULL REFERENCES runs(run_id) ON DELETE CASCADE,
    kind          TEXT NOT NULL,        -- 'telemetry' | 'spans'
    name          TEXT NOT NULL,        -- file name as given
    sha256        TEXT NOT NULL,
    bytes         INTEGER NOT NULL,
    record_count  INTEGER NOT NULL,
    ingested_at   TEXT NOT NULL,
    UNIQUE (run_id, kind, sha256)
) STRICT;

CREATE TABLE server_identities (
    identity_id       INTEGER PRIMARY KEY,
    host              TEXT NOT NULL,
    pid               INTEGER NOT NULL,
    process_start_ns  INTEGER NOT NULL,
    device_uuid       TEXT,
    gpu_instance_id   TEXT,
    replica_id        TEXT,
    rank              INTEGER,
    boot_id           TEXT,
    group_id          TEXT,
    world_size        INTEGER,
    UNIQUE (host, pid, process_start_ns, device_uuid, gpu_instance_id, replica_id, rank, boot_id, group_id, world_size)
) STRICT;

CREATE TABLE server_samples (
    file_id         INTEGER NOT NULL REFERENCES attached_files(file_id) ON DELETE CASCADE,
    seq             INTEGER NOT NULL,   -- line order within the file
    identity_id     INTEGER NOT NULL REFERENCES server_identities(identity_id),
    sample_run_id   TEXT NOT NULL,      -- the run id the collector recorded
    observed_at_ns  INTEGER NOT NULL,
    metric          TEXT NOT NULL,
    value_bytes     INTEGER,
    state           TEXT NOT NULL,
    source          TEXT NOT NULL,
    interval_ms     INTEGER NOT NULL,
    detail          TEXT,
    provenance      TEXT NOT NULL,
    extra           TEXT,
    PRIMARY KEY (file_id, seq)
) STRICT;

CREATE TABLE request_packs (
    run_id    TEXT NOT NULL REFERENCES runs(run_id) ON DELETE CASCADE,
    segment   INTEGER NOT NULL,   -- 0, 1, ...: the run's requests in order, in segments
    requests  INTEGER NOT NULL,   -- request rows in this segment
    body      BLOB NOT NULL, rest BLOB,      -- the packed values, column names included
    PRIMARY KEY (run_id, segment)
) STRICT;

CREATE TABLE history_entries (
    run_id      TEXT NOT NULL REFERENCES runs(run_id) ON DELETE CASCADE,
    policy_key  TEXT NOT NULL,      -- '' for each run's recorded policy, else a digest of --slo
    stamp       TEXT NOT NULL,      -- artifact hash, attached files and version it was built from
    entry       TEXT NOT NULL,      -- JSON (src/history/mod.rs, Entry::to_json)
    PRIMARY KEY (run_id, policy_key)
) STRICT, WITHOUT ROWID;

CREATE TABLE execution_facts (
    run_id   TEXT NOT NULL REFERENCES runs(run_id) ON DELETE CASCADE,
    segment  INTEGER NOT NULL,   -- 0, 1, ...
    lines    INTEGER NOT NULL,   -- fact lines in `body`
    body     TEXT NOT NULL,      -- the lines, each ended by a newline
    PRIMARY KEY (run_id, segment)
) STRICT;

CREATE TABLE execution_whole (
    run_id  TEXT NOT NULL REFERENCES runs(run_id) ON DELETE CASCADE,
    seq     INTEGER NOT NULL,   -- a bulk record the report reads whole from `records`
    PRIMARY KEY (run_id, seq)
) STRICT, WITHOUT ROWID;

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

CREATE TABLE import_file_chunks (
    blob_id     INTEGER NOT NULL REFERENCES import_files(blob_id)
                    ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED,
    chunk       INTEGER NOT NULL,       -- 0, 1, ...: the file's bytes in order
    body        BLOB NOT NULL,
    PRIMARY KEY (blob_id, chunk)
) STRICT;

CREATE TABLE requests (
    run_id                  TEXT NOT NULL REFERENCES runs(run_id) ON DELETE CASCADE,
    seq                     INTEGER NOT NULL,
    case_key                TEXT NOT NULL,    -- derived: case id as the report groups it
    status_key              TEXT NOT NULL,    -- derived: status as the report counts it
    schema_version          INTEGER,
    session_id              TEXT,
    request_id              TEXT,
    x_request_id            TEXT,
    case_id                 TEXT,
    phase                   TEXT,
    status                  TEXT,
    request_index           ANY,          -- integer: decimal text past 64 bits
    started_at_ns           ANY,          -- integer: decimal text past 64 bits
    ended_at_ns             ANY,          -- integer: decimal text past 64 bits
    intended_at_ns          ANY,          -- integer: decimal text past 64 bits
    timestamp_ns            ANY,          -- integer: decimal text past 64 bits
    e2e_latency_ms          REAL,
    ttft_ms                 REAL,
    first_chunk_latency_ms  REAL,
    dispatch_lag_ms         REAL,
    chunk_interarrival_ms   BLOB,         -- little-endian f64 values
    stream                  INTEGER,      -- boolean
    prompt_tokens           ANY,          -- integer: decimal text past 64 bits
    output_tokens           ANY,          -- integer: decimal text past 64 bits
    total_tokens            ANY,          -- integer: decimal text past 64 bits
    output_token_source     TEXT,
    prompt_token_source     TEXT,
    prompt_token_exact      INTEGER,      -- boolean
    output_token_exact      INTEGER,      -- boolean
    target_input_tokens     ANY,          -- integer: decimal text past 64 bits
    target_output_tokens    ANY,          -- integer: decimal text past 64 bits
    arrival_mode            TEXT,
    held_for_slot           INTEGER,      -- boolean
    in_flight_at_dispatch   ANY,          -- integer: decimal text past 64 bits
    max_in_flight           ANY,          -- integer: decimal text past 64 bits
    concurrency             ANY,          -- integer: decimal text past 64 bits
    prompt_mode             TEXT,
    prompt_id               TEXT,
    prompt_digest           TEXT,
    prefix_group            ANY,          -- integer: decimal text past 64 bits
    shared_prefix_tokens    ANY,          -- integer: decimal text past 64 bits
    task                    TEXT,
    engine                  TEXT,
    endpoint                TEXT,
    model                   TEXT,
    http_status             ANY,          -- integer: decimal text past 64 bits
    finish_reason           TEXT,
    error_type              TEXT,
    error_message           TEXT,
    response_id             TEXT,
    system_fingerprint      TEXT,
    trace_id                TEXT,
    span_id                 TEXT,
    nulls                   INTEGER NOT NULL DEFAULT 0,   -- bit i set: field i was present as null
    extra                   TEXT,
    PRIMARY KEY (run_id, seq)
) STRICT;

CREATE TABLE phase_windows (
    run_id                        TEXT NOT NULL REFERENCES runs(run_id) ON DELETE CASCADE,
    seq                           INTEGER NOT NULL,
    schema_version          INTEGER,
    session_id                    TEXT,
    case_id                       TEXT,
    phase                         TEXT,
    arrival_mode                  TEXT,
    started_at_ns                 ANY,          -- integer: decimal text past 64 bits
    window_ended_at_ns            ANY,          -- integer: decimal text past 64 bits
    drained_at_ns                 ANY,          -- integer: decimal text past 64 bits
    drain_timeout_seconds         REAL,
    scheduled_arrivals            ANY,          -- integer: decimal text past 64 bits
    scheduled_endpoint_offset_ns  ANY,          -- integer: decimal text past 64 bits
    stopped_early                 INTEGER,      -- boolean
    prompts_digest                TEXT,
    abandoned_requests            TEXT,         -- JSON
    nulls                         INTEGER NOT NULL DEFAULT 0,   -- bit i set: field i was present as null
    extra                         TEXT,
    -- 0009's derived columns, computed on read, never stored.
    window_s      REAL GENERATED ALWAYS AS ((drained_at_ns - started_at_ns) / 1e9) VIRTUAL,
    started_at    TEXT GENERATED ALWAYS AS (strftime('%Y-%m-%dT%H:%M:%fZ', started_at_ns / 1e9, 'unixepoch')) VIRTUAL,
    drained_at    TEXT GENERATED ALWAYS AS (strftime('%Y-%m-%dT%H:%M:%fZ', drained_at_ns / 1e9, 'unixepoch')) VIRTUAL,
    -- A time past 64 bits has no INTEGER milliseconds: NULL there, as in the views (0011).
    started_at_ms INTEGER GENERATED ALWAYS AS
        (CASE WHEN typeof(started_at_ns) = 'integer' THEN started_at_ns / 1000000 END) VIRTUAL,
    drained_at_ms INTEGER GENERATED ALWAYS AS
        (CASE WHEN typeof(drained_at_ns) = 'integer' THEN drained_at_ns / 1000000 END) VIRTUAL,
    PRIMARY KEY (run_id, seq)
) STRICT, WITHOUT ROWID;

CREATE TABLE dispatches (
    run_id          TEXT NOT NULL REFERENCES runs(run_id) ON DELETE CASCADE,
    seq             INTEGER NOT NULL,
    schema_version  INTEGER,
    session_id      TEXT,
    request_id      TEXT,
    x_request_id    TEXT,
    case_id         TEXT,
    phase           TEXT,
    intended_at_ns  INTEGER,
    started_at_ns   INTEGER,
    timestamp_ns    INTEGER,
    nulls           INTEGER NOT NULL DEFAULT 0,   -- bit i set: field i was present as null
    extra           TEXT, link INTEGER, shared INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (run_id, seq)
) STRICT;

CREATE TABLE first_contents (
    run_id               TEXT NOT NULL REFERENCES runs(run_id) ON DELETE CASCADE,
    seq                  INTEGER NOT NULL,
    schema_version       INTEGER,
    session_id           TEXT,
    request_id           TEXT,
    x_request_id         TEXT,
    case_id              TEXT,
    phase                TEXT,
    first_content_at_ns  INTEGER,
    timestamp_ns         INTEGER,
    nulls                INTEGER NOT NULL DEFAULT 0,   -- bit i set: field i was present as null
    extra                TEXT, link INTEGER, shared INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (run_id, seq)
) STRICT;

CREATE TABLE execution_aggregates (
    run_id      TEXT PRIMARY KEY REFERENCES runs(run_id) ON DELETE CASCADE,
    figures     TEXT NOT NULL,   -- JSON: the block's figures of the facts
    run_ids     TEXT NOT NULL,   -- JSON array: the facts' distinct run IDs
    identities  BLOB NOT NULL,   -- sorted 64-bit FNV-1a hashes, little-endian
    hook_ids    TEXT NOT NULL,   -- the hook requests' x_request_ids, newline-ended
    starts      TEXT NOT NULL    -- the steps' start_wall_ns, newline-ended
) STRICT;

CREATE INDEX records_type ON records(run_id, event_type);

CREATE UNIQUE INDEX vllm_spans_key ON vllm_spans(run_id, ifnull(file_id, -1), seq);

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

CREATE VIEW v_dispatches AS
SELECT
    d.run_id,
    iif(d.shared & 16, r.case_id, d.case_id) AS case_id,
    iif(d.shared & 32, r.phase, d.phase) AS phase,
    d.seq,
    iif(d.shared & 4, r.request_id, d.request_id) AS request_id,
    iif(d.shared & 8, r.x_request_id, d.x_request_id) AS x_request_id,
    iif(d.shared & 64, r.intended_at_ns, d.intended_at_ns) AS intended_at_ns,
    iif(d.shared & 128, r.started_at_ns, d.started_at_ns) AS started_at_ns,
    (iif(d.shared & 128, r.started_at_ns, d.started_at_ns)
        - iif(d.shared & 64, r.intended_at_ns, d.intended_at_ns)) / 1e6 AS dispatch_lag_ms,
    iif(d.shared & 64, r.intended_at_ns, d.intended_at_ns) / 1000000 AS intended_at_ms,
    iif(d.shared & 128, r.started_at_ns, d.started_at_ns) / 1000000 AS started_at_ms
FROM dispatches d
LEFT JOIN requests r ON d.shared <> 0 AND r.run_id = d.run_id AND r.seq = d.link;

CREATE VIEW v_first_contents AS
SELECT
    f.run_id,
    iif(f.shared & 16, r.case_id, f.case_id) AS case_id,
    iif(f.shared & 32, r.phase, f.phase) AS phase,
    f.seq,
    iif(f.shared & 4, r.request_id, f.request_id) AS request_id,
    iif(f.shared & 8, r.x_request_id, f.x_request_id) AS x_request_id,
    f.first_content_at_ns,
    f.first_content_at_ns / 1000000 AS first_content_at_ms
FROM first_contents f
LEFT JOIN requests r ON f.shared <> 0 AND r.run_id = f.run_id AND r.seq = f.link;

CREATE TRIGGER execution_facts_insert AFTER INSERT ON records
WHEN new.event_type IN ('infer.iteration', 'infer.membership', 'infer.activity_ref', 'infer.request')
BEGIN
    DELETE FROM execution_facts WHERE run_id = new.run_id;
    DELETE FROM execution_whole WHERE run_id = new.run_id;
END;

CREATE TRIGGER execution_facts_update AFTER UPDATE ON records
WHEN old.event_type IN ('infer.iteration', 'infer.membership', 'infer.activity_ref', 'infer.request')
  OR new.event_type IN ('infer.iteration', 'infer.membership', 'infer.activity_ref', 'infer.request')
BEGIN
    DELETE FROM execution_facts WHERE run_id IN (old.run_id, new.run_id);
    DELETE FROM execution_whole WHERE run_id IN (old.run_id, new.run_id);
END;

CREATE TRIGGER execution_facts_delete AFTER DELETE ON records
WHEN old.event_type IN ('infer.iteration', 'infer.membership', 'infer.activity_ref', 'infer.request')
BEGIN
    DELETE FROM execution_facts WHERE run_id = old.run_id;
    DELETE FROM execution_whole WHERE run_id = old.run_id;
END;

CREATE TRIGGER request_packs_insert AFTER INSERT ON requests
BEGIN
    DELETE FROM request_packs WHERE run_id = new.run_id;
END;

CREATE TRIGGER request_packs_update AFTER UPDATE ON requests
BEGIN
    DELETE FROM request_packs WHERE run_id IN (old.run_id, new.run_id);
END;

CREATE TRIGGER request_packs_delete AFTER DELETE ON requests
BEGIN
    DELETE FROM request_packs WHERE run_id = old.run_id;
END;

CREATE TRIGGER execution_aggregates_records_insert AFTER INSERT ON records
WHEN new.event_type IN ('infer.iteration', 'infer.membership', 'infer.activity_ref', 'infer.request', 'infer.dispatch')
BEGIN
    DELETE FROM execution_aggregates WHERE run_id = new.run_id;
END;

CREATE TRIGGER execution_aggregates_records_update AFTER UPDATE ON records
WHEN old.event_type IN ('infer.iteration', 'infer.membership', 'infer.activity_ref', 'infer.request', 'infer.dispatch')
  OR new.event_type IN ('infer.iteration', 'infer.membership', 'infer.activity_ref', 'infer.request', 'infer.dispatch')
BEGIN
    DELETE FROM execution_aggregates WHERE run_id IN (old.run_id, new.run_id);
END;

CREATE TRIGGER execution_aggregates_records_delete AFTER DELETE ON records
WHEN old.event_type IN ('infer.iteration', 'infer.membership', 'infer.activity_ref', 'infer.request', 'infer.dispatch')
BEGIN
    DELETE FROM execution_aggregates WHERE run_id = old.run_id;
END;

CREATE TRIGGER execution_aggregates_requests_insert AFTER INSERT ON requests
BEGIN
    DELETE FROM execution_aggregates WHERE run_id = new.run_id;
END;

CREATE TRIGGER execution_aggregates_requests_update AFTER UPDATE ON requests
BEGIN
    DELETE FROM execution_aggregates WHERE run_id IN (old.run_id, new.run_id);
END;

CREATE TRIGGER execution_aggregates_requests_delete AFTER DELETE ON requests
BEGIN
    DELETE FROM execution_aggregates WHERE run_id = old.run_id;
END;

CREATE TRIGGER execution_aggregates_dispatches_insert AFTER INSERT ON dispatches
BEGIN
    DELETE FROM execution_aggregates WHERE run_id = new.run_id;
END;

CREATE TRIGGER execution_aggregates_dispatches_update AFTER UPDATE ON dispatches
BEGIN
    DELETE FROM execution_aggregates WHERE run_id IN (old.run_id, new.run_id);
END;

CREATE TRIGGER execution_aggregates_dispatches_delete AFTER DELETE ON dispatches
BEGIN
    DELETE FROM execution_aggregates WHERE run_id = old.run_id;
END;

CREATE TRIGGER execution_aggregates_contexts_insert AFTER INSERT ON contexts
BEGIN
    DELETE FROM execution_aggregates WHERE run_id = new.run_id;
END;

CREATE TRIGGER execution_aggregates_contexts_update AFTER UPDATE ON contexts
BEGIN
    DELETE FROM execution_aggregates WHERE run_id IN (old.run_id, new.run_id);
END;

CREATE TRIGGER execution_aggregates_contexts_delete AFTER DELETE ON contexts
BEGIN
    DELETE FROM execution_aggregates WHERE run_id = old.run_id;
END;
