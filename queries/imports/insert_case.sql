-- Records one case of an imported run: its declared load and the tool's own summary.
-- Parameters: :run_id, :case_index, :case_id, :arrival_mode, :tool_mode, :rate_per_second,
--   :concurrency, :declared, :summary
INSERT INTO import_cases (run_id, case_index, case_id, arrival_mode, tool_mode, rate_per_second,
                          concurrency, declared, summary)
VALUES (:run_id, :case_index, :case_id, :arrival_mode, :tool_mode, :rate_per_second,
        :concurrency, :declared, :summary)
