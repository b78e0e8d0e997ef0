-- The stored samples of one attached file, in file order, by what tells
-- them apart: when each was observed and what it measured.
-- Parameters: :file_id
-- Columns: observed_at_ns, metric
SELECT observed_at_ns, metric FROM server_samples
WHERE file_id = :file_id
ORDER BY seq
