-- The runs `export --parquet --all` (or `--since`) writes: every stored run,
-- or those whose session started at or after :since_ns.
-- Parameters: :since_ns (NULL for every run)
-- Columns: run_id
-- Order: run_id
SELECT run_id
FROM runs
WHERE :since_ns IS NULL OR started_at_ns >= :since_ns
ORDER BY run_id
