-- 0004: `request_packs`, a compact copy of each run's analysis columns.
--
-- Why: a report reads 31 columns of every request of a run. Through SQLite
-- that is a virtual-machine step per value; at 300,000 requests, over half a
-- second before any figure is computed. The ingest also writes the values
-- those columns hold into packed blobs of up to 8,192 requests each
-- (src/db/pack.rs describes the layout), which a report decodes in parallel
-- in a fraction of that.
--
-- The rows in `requests` stay the truth; a pack is derived from them and may
-- be deleted at any time (a report then reads the rows). The triggers below
-- drop a run's pack whenever one of its request rows is inserted, changed or
-- deleted by anyone but the ingest (which writes the pack itself, with
-- triggers off), so an edit made with SQL is never hidden by an old pack. A
-- reader also checks the pack's row count against the run's.
CREATE TABLE request_packs (
    run_id    TEXT NOT NULL REFERENCES runs(run_id) ON DELETE CASCADE,
    segment   INTEGER NOT NULL,   -- 0, 1, ...: the run's requests in order, in segments
    requests  INTEGER NOT NULL,   -- request rows in this segment
    body      BLOB NOT NULL,      -- the packed values, column names included
    PRIMARY KEY (run_id, segment)
) STRICT;

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
