-- 0014: a dispatch or first-content row leaves out the fields its request
-- row already holds.
--
-- Why: a real artifact has an `infer.dispatch` and an `infer.first_content`
-- beside every `infer.request`, and both repeat the request's session_id,
-- request_id, x_request_id, case_id, phase and schema_version (a dispatch
-- its three instants too): about 120 bytes a row, a quarter of a kept
-- database (90,000 requests: 95 MB of a 205 MB artifact, 22 MB of it these
-- two tables). Now the ingest links such a row to the request row of the
-- same request_id (`link`: the request's seq) and stores NULL for every
-- field whose value is exactly the request's (same type, same value); bit i
-- of `shared` says field i is the request's (bit 0 schema_version, then the
-- table's fields in column order). A row is read through the views below
-- and queries/load/*.sql, which take such a field from the linked row.
--
-- The columns are added, not the tables rebuilt: rows stored before have
-- `shared` 0 and keep every value, as they read now. Only the ingest sets
-- `shared` (a scratch database for one report never does: its requests have
-- no rows). A request row edited or deleted with SQL changes what its linked
-- rows read for their shared fields.
-- The two columns of each table are added by the code that applies this
-- script, just before it and only where they are missing (src/db/mod.rs,
-- `add_missing_columns`), so the script can be applied again to a database
-- that has them:
--     link    INTEGER                      the seq of the request row
--     shared  INTEGER NOT NULL DEFAULT 0   bit i: field i is that row's
DROP VIEW IF EXISTS v_dispatches;
DROP VIEW IF EXISTS v_first_contents;

-- 0012's views, the shared fields read from the linked request row.
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
