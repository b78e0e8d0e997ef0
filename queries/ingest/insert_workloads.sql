-- Stores one `infer.workload` record of an artifact in `workloads`.
-- Parameters: :run_id, :seq, :schema_version, :session_id, :workload_digest, :spec_digest, :seed, :task, :engine, :generator, :prompts, :warmup, :decoding, :tokenizer, :chat_template, :cache, :cases, :measurement, :nulls, :extra
--   (a field column holds the record's value when it gives the same JSON back;
--   :nulls marks fields present as null; everything else is in :extra, a JSON
--   object, or NULL).
INSERT INTO workloads (run_id, seq, schema_version, session_id, workload_digest, spec_digest, seed, task, engine, generator, prompts, warmup, decoding, tokenizer, chat_template, cache, cases, measurement, nulls, extra)
VALUES (:run_id, :seq, :schema_version, :session_id, :workload_digest, :spec_digest, :seed, :task, :engine, :generator, :prompts, :warmup, :decoding, :tokenizer, :chat_template, :cache, :cases, :measurement, :nulls, :extra)
