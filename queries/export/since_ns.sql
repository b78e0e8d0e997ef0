-- A date or date-time the user typed (`--since`), as nanoseconds since the
-- Unix epoch; NULL when SQLite's date functions cannot read it. Whole
-- seconds are counted in integers, so a date is exact; a fraction of a
-- second is rounded to the microsecond.
-- Parameters: :since (e.g. 2026-11-29, 2026-11-29T14:00:00Z)
-- Columns: since_ns
-- Order: one row
SELECT unixepoch(:since) * 1000000000
       + CAST(round((unixepoch(:since, 'subsec') - unixepoch(:since)) * 1e6) AS INTEGER) * 1000
       AS since_ns
ORDER BY 1
