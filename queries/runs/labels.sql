-- Each stored run's experiment labels (`compare --db --experiment`): the
-- `config.labels` object of its first session record whose config is an
-- object, which is where `infer compare` reads a run's labels from.
-- Parameters: none
-- Columns: run_id, started_at_ns, labels (JSON object text, or NULL)
-- Order: by start time (runs without one last), then run id
SELECT r.run_id,
       r.started_at_ns,
       (SELECT CASE json_type(s.config, '$.labels')
                 WHEN 'object' THEN json_extract(s.config, '$.labels')
               END
          FROM sessions s
         WHERE s.run_id = r.run_id
           AND json_valid(s.config)
           AND json_type(s.config) = 'object'
         ORDER BY s.seq
         LIMIT 1) AS labels
FROM runs r
ORDER BY r.started_at_ns IS NULL, r.started_at_ns, r.run_id
