-- The `infer.workload` records of one run (artifact rows only), in file order.
-- Parameters: :run_id
-- Columns: seq, schema_version, session_id, workload_digest, spec_digest, seed, task, engine, generator, prompts, warmup, decoding, tokenizer, chat_template, cache, cases, measurement, nulls, extra
SELECT seq, schema_version, session_id, workload_digest, spec_digest, seed, task, engine, generator, prompts, warmup, decoding, tokenizer, chat_template, cache, cases, measurement, nulls, extra
FROM workloads
WHERE run_id = :run_id
ORDER BY seq
