-- 0001: the first shape of the project database.
--
-- Why this shape: every record of an ingested file is kept (losslessness is the
-- promise of `stormlog ingest`), in typed tables where analysis or people query
-- it, and whole (as JSON) where no table exists yet. Each typed row carries
-- `seq` (its position among the file's decoded records, so file order can be
-- rebuilt) and `extra` (a JSON object of the keys that have no column, or whose
-- value the column cannot reproduce exactly; NULL when there are none).
-- Timestamps are integer nanoseconds since the Unix epoch, latencies REAL ms.
-- Record tables are WITHOUT ROWID, clustered by (run_id, seq): one b-tree per
-- table, rows appended in file order, a run read back in one range scan.

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
) STRICT;

-- `infer.context` definitions of the compact transport (schema version 4).
CREATE TABLE contexts (
    run_id      TEXT NOT NULL REFERENCES runs(run_id) ON DELETE CASCADE,
    seq         INTEGER NOT NULL,       -- position of the definition line among all records
    context_id  TEXT NOT NULL,
    context     TEXT NOT NULL,          -- JSON object
    PRIMARY KEY (run_id, context_id)
) STRICT, WITHOUT ROWID;

-- Records with no typed table, kept whole (decoded form without the context,
-- which stays in `contexts` and is referenced by `context_id` inside `body`).
CREATE TABLE records (
    run_id      TEXT NOT NULL REFERENCES runs(run_id) ON DELETE CASCADE,
    seq         INTEGER NOT NULL,
    event_type  TEXT,                   -- NULL when the record has none (or it is not a string)
    body        TEXT NOT NULL,          -- the record as JSON
    PRIMARY KEY (run_id, seq)
) STRICT, WITHOUT ROWID;
CREATE INDEX records_type ON records(run_id, event_type);

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

CREATE TABLE phase_windows (
    run_id                        TEXT NOT NULL REFERENCES runs(run_id) ON DELETE CASCADE,
    seq                           INTEGER NOT NULL,
    schema_version          INTEGER,
    session_id                    TEXT,
    case_id                       TEXT,
    phase                         TEXT,
    arrival_mode                  TEXT,
    started_at_ns                 INTEGER,
    window_ended_at_ns            INTEGER,
    drained_at_ns                 INTEGER,
    drain_timeout_seconds         REAL,
    scheduled_arrivals            INTEGER,
    scheduled_endpoint_offset_ns  INTEGER,
    stopped_early                 INTEGER,      -- boolean
    prompts_digest                TEXT,
    abandoned_requests            TEXT,         -- JSON
    nulls                         INTEGER NOT NULL DEFAULT 0,   -- bit i set: field i was present as null
    extra                         TEXT,
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

-- One row per client request (`infer.request` schema version 1).
-- `case_key` and `status_key` are derived: the case id and status as the
-- report groups them (string form; `unknown` for a missing case id, `None`
-- for a missing status). Every other column is the record's own field.
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
    request_index           INTEGER,
    started_at_ns           INTEGER,
    ended_at_ns             INTEGER,
    intended_at_ns          INTEGER,
    timestamp_ns            INTEGER,
    e2e_latency_ms          REAL,
    ttft_ms                 REAL,
    first_chunk_latency_ms  REAL,
    dispatch_lag_ms         REAL,
    chunk_interarrival_ms   BLOB,         -- little-endian f64 values
    stream                  INTEGER,      -- boolean
    prompt_tokens           INTEGER,
    output_tokens           INTEGER,
    total_tokens            INTEGER,
    output_token_source     TEXT,
    prompt_token_source     TEXT,
    prompt_token_exact      INTEGER,      -- boolean
    output_token_exact      INTEGER,      -- boolean
    target_input_tokens     INTEGER,
    target_output_tokens    INTEGER,
    arrival_mode            TEXT,
    held_for_slot           INTEGER,      -- boolean
    in_flight_at_dispatch   INTEGER,
    max_in_flight           INTEGER,
    concurrency             INTEGER,
    prompt_mode             TEXT,
    prompt_id               TEXT,
    prompt_digest           TEXT,
    prefix_group            INTEGER,
    shared_prefix_tokens    INTEGER,
    task                    TEXT,
    engine                  TEXT,
    endpoint                TEXT,
    model                   TEXT,
    http_status             INTEGER,
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

-- Spans: recorded in the artifact (`infer.vllm_span`, file_id NULL) or from
-- span files attached to the run (file_id set; seq counts within the file).
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
CREATE UNIQUE INDEX vllm_spans_key ON vllm_spans(run_id, ifnull(file_id, -1), seq);

-- Files attached to a run besides its artifact: server telemetry, span files.
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

-- The identities server samples were taken under (telemetry.md §2.2).
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

-- Server telemetry samples (`infer.telemetry_sample`). scope, counter_owner
-- and clock_domain are derived from metric and identity (validated at ingest).
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
