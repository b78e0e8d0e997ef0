-- 0007: `execution_facts` and `execution_whole`, the vLLM execution
-- import's bulk records as the report reads them.
--
-- Why: `infer import-execution` adds a step per few requests, a membership
-- per request and step, a hook request per request, and profiler traces add
-- GPU activities: a 300,000-request run can carry millions of these records,
-- about 1.3 KB of JSON each, of which the report reads a handful of fields.
-- Parsing every stored body made the report several times slower than the
-- same run without the import. The ingest also writes each `infer.iteration`,
-- `infer.membership`, `infer.activity_ref` and version-2 `infer.request`
-- record of `records` as a line of the few fields the report reads (the
-- layout in src/analysis/execution/fact.rs), in segments of up to 16,384
-- lines (`execution_facts`: a report reads a few long values, not a row
-- per record), or names it in `execution_whole` where the report must read
-- the body: a legacy or malformed record, one with an embedded context, or
-- one whose identity or entity another bulk record shares (the report
-- compares such copies whole). A run ingested with bulk records has at
-- least segment 0, possibly empty.
--
-- The rows in `records` stay the truth (export reads them there); these are
-- derived and may be deleted at any time: a report then reads the bodies.
-- The triggers drop a run's rows whenever one of its records of those types
-- is inserted, changed or deleted by anyone but the ingest (which writes them
-- itself, with triggers off).
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
