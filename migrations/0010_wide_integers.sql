-- 0010: integer fields of requests and phase windows keep any integer.
--
-- Why: a JSON integer has no size (the reference reads it as a Python int),
-- but a STRICT INTEGER column holds only 64 bits. A value past them
-- (`output_tokens` 2^63, `ended_at_ns` 10^40) was kept only in the row's
-- `extra` while its column read NULL, so `SELECT output_tokens FROM requests`
-- said "no value" for a value that was there. These columns become ANY (the
-- one other type a STRICT table allows): an integer within 64 bits is stored
-- as the SQLite integer it was, one past them as its exact decimal text
-- (nothing else is ever stored in them: a value of another type still goes
-- to `extra`). SQL arithmetic on such a text reads it as a float.
--
-- The tables are rebuilt: rows copied in order, the request packs' triggers
-- made again; phase windows keep 0009's generated columns. Legacy renaming leaves the views' text as it is; they name the
-- new tables once the rows are in. Rows of earlier versions holding such a
-- value in `extra` get it in the column after this script (src/db/mod.rs).
PRAGMA legacy_alter_table = ON;

ALTER TABLE requests RENAME TO requests_0008;

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

INSERT INTO requests SELECT * FROM requests_0008 ORDER BY rowid;
DROP TABLE requests_0008;

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

ALTER TABLE phase_windows RENAME TO phase_windows_0008;

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

INSERT INTO phase_windows (run_id, seq, schema_version, session_id, case_id, phase,
    arrival_mode, started_at_ns, window_ended_at_ns, drained_at_ns, drain_timeout_seconds,
    scheduled_arrivals, scheduled_endpoint_offset_ns, stopped_early, prompts_digest,
    abandoned_requests, nulls, extra)
SELECT run_id, seq, schema_version, session_id, case_id, phase,
    arrival_mode, started_at_ns, window_ended_at_ns, drained_at_ns, drain_timeout_seconds,
    scheduled_arrivals, scheduled_endpoint_offset_ns, stopped_early, prompts_digest,
    abandoned_requests, nulls, extra
FROM phase_windows_0008;
DROP TABLE phase_windows_0008;

PRAGMA legacy_alter_table = OFF;
