-- 0006: `history_entries`, what `stormlog history` keeps of each run.
--
-- Why: placing a run in its series needs its comparability fields, and
-- listing it needs its headline figures; both come from a full analysis of
-- the run, several milliseconds each, which over a project of a thousand runs
-- is seconds. `history` computes an entry once and keeps it here. An entry is
-- derived data and may be deleted at any time (it is then rebuilt): it is
-- used only while its stamp matches, that is while the run's artifact hash,
-- its attached files, the SLO policy it was judged under and the stormlog
-- version that wrote it are all unchanged.
CREATE TABLE history_entries (
    run_id      TEXT NOT NULL REFERENCES runs(run_id) ON DELETE CASCADE,
    policy_key  TEXT NOT NULL,      -- '' for each run's recorded policy, else a digest of --slo
    stamp       TEXT NOT NULL,      -- artifact hash, attached files and version it was built from
    entry       TEXT NOT NULL,      -- JSON (src/history/mod.rs, Entry::to_json)
    PRIMARY KEY (run_id, policy_key)
) STRICT, WITHOUT ROWID;
