-- Every stored run with its history stamp and its cached entry under one policy
-- (`stormlog history`): the entry is NULL when none was kept for that policy.
-- The stamp is what the entry depends on besides the policy and the version:
-- the artifact's hash and the run's attached files.
-- Parameters: :policy_key
-- Columns: run_id, stamp, cached_stamp, entry
SELECT r.run_id,
       coalesce(r.artifact_sha256, '') || '/' ||
         coalesce((SELECT group_concat(f.kind || ':' || f.sha256, ',')
                   FROM (SELECT kind, sha256 FROM attached_files a
                         WHERE a.run_id = r.run_id ORDER BY a.file_id) f), '') AS stamp,
       h.stamp AS cached_stamp,
       h.entry
FROM runs r
LEFT JOIN history_entries h ON h.run_id = r.run_id AND h.policy_key = :policy_key
ORDER BY r.run_id
