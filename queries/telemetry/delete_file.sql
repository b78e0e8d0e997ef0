-- Drops one attached file; its samples go with it (ON DELETE CASCADE).
-- Parameters: :file_id
DELETE FROM attached_files WHERE file_id = :file_id
