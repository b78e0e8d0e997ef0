-- 0013: `execution_aggregates`, what the vLLM execution block says of a
-- run's fact lines (migrations/0007), aggregated at ingest.
--
-- Why: a report still turned every fact line of a large import into a fact
-- (90,000 requests with a step per 8: 191,250 lines) to count steps by
-- state and ownership, memberships, hook requests, capture loss, per-GPU
-- busy time and the steps each case took part in: six times the report of
-- the same run without the import. The ingest now computes those figures
-- once (src/analysis/execution/mod.rs, `Aggregate`) and keeps them here with
-- the two lists other parts of the report read (the hook requests'
-- `x_request_id`s and the steps' start times), the facts' run IDs and a
-- hash of each fact's identity: the report checks the run's other records
-- against those (a second run, or an event sharing a fact's identity) and
-- reads the lines instead whenever the check fails.
--
-- The figures depend on the client's request-to-case map, read from the
-- `requests` and `dispatches` tables at ingest, so a run gets no aggregate
-- when that map or the facts need the records themselves (a bulk record read
-- whole, an `infer.dispatch` kept in `records`, a value not held as text).
--
-- Like 0007's tables these rows are derived and may be deleted at any time
-- (a report then reads the lines). The triggers drop a run's row whenever
-- its bulk records, its dispatch records, its requests or its contexts are
-- changed by anyone but the ingest (which writes them with triggers off).
-- The migration's Rust step fills the table for the runs already stored
-- (src/db/execution.rs, `backfill`).
CREATE TABLE execution_aggregates (
    run_id      TEXT PRIMARY KEY REFERENCES runs(run_id) ON DELETE CASCADE,
    figures     TEXT NOT NULL,   -- JSON: the block's figures of the facts
    run_ids     TEXT NOT NULL,   -- JSON array: the facts' distinct run IDs
    identities  BLOB NOT NULL,   -- sorted 64-bit FNV-1a hashes, little-endian
    hook_ids    TEXT NOT NULL,   -- the hook requests' x_request_ids, newline-ended
    starts      TEXT NOT NULL    -- the steps' start_wall_ns, newline-ended
) STRICT;

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
