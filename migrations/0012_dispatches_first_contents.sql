-- 0012: `dispatches` and `first_contents`, typed tables for the two
-- per-request records of a real artifact (`infer.dispatch`,
-- `infer.first_content`, artifact.md §3.7).
--
-- Why: an artifact holds one of each beside every `infer.request`, so two
-- thirds of a real run's records were kept whole in `records` as JSON
-- bodies: every key spelled out in every row, and a second b-tree (the
-- `(run_id, event_type)` index) to keep them apart from the few records the
-- analysis reads there. As typed rows they cost what a request row costs:
-- columns in their units, keys named once by the schema, one key index.
-- The tables follow `requests` (0003): rowid tables, appended in file order,
-- the `(run_id, seq)` key in an index of small entries; `nulls` and `extra`
-- keep them lossless as every typed table is (0001).
--
-- The rows already in `records` are moved here by the code that applies
-- this migration (src/db/mod.rs), with the very split an ingest uses, so a
-- moved record is stored exactly as an ingest would store it now.
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
    extra           TEXT,
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
    extra                TEXT,
    PRIMARY KEY (run_id, seq)
) STRICT;

-- One row per `infer.dispatch`: when each request was meant to go and when
-- it went (the send's lag behind its intended arrival, in ms), instants also
-- in whole ms as 0005 gives them.
CREATE VIEW v_dispatches AS
SELECT
    d.run_id,
    d.case_id,
    d.phase,
    d.seq,
    d.request_id,
    d.x_request_id,
    d.intended_at_ns,
    d.started_at_ns,
    (d.started_at_ns - d.intended_at_ns) / 1e6 AS dispatch_lag_ms,
    d.intended_at_ns / 1000000 AS intended_at_ms,
    d.started_at_ns / 1000000 AS started_at_ms
FROM dispatches d;

-- One row per `infer.first_content`: when each request's first content
-- arrived.
CREATE VIEW v_first_contents AS
SELECT
    f.run_id,
    f.case_id,
    f.phase,
    f.seq,
    f.request_id,
    f.x_request_id,
    f.first_content_at_ns,
    f.first_content_at_ns / 1000000 AS first_content_at_ms
FROM first_contents f;
