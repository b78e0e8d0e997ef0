-- The database's schema version, named in the export's manifest.
-- Parameters: none
-- Columns: user_version
-- Order: one row
SELECT user_version FROM pragma_user_version ORDER BY 1
