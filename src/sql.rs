//! The registry of named SQL statements: every file under `queries/`, one
//! statement each, compiled in with `include_str!`. A unit test prepares every
//! one against a migrated database, so a typo fails `cargo test`.

/// One named statement.
#[derive(Debug, Clone, Copy)]
pub struct Query {
    /// Path under `queries/` without `.sql`, used in error messages.
    pub name: &'static str,
    pub sql: &'static str,
}

macro_rules! query {
    ($const:ident, $path:literal) => {
        pub const $const: Query = Query {
            name: $path,
            sql: include_str!(concat!("../queries/", $path, ".sql")),
        };
    };
}

query!(EXPORT_CASES, "export/cases");
query!(EXPORT_REQUESTS, "export/requests");
query!(EXPORT_RUN, "export/run");
query!(EXPORT_RUN_BASE, "export/run_base");
query!(EXPORT_RUN_FILES, "export/run_files");
query!(EXPORT_SCHEMA_VERSION, "export/schema_version");
query!(EXPORT_SELECT_RUNS, "export/select_runs");
query!(EXPORT_SERVER_SAMPLES, "export/server_samples");
query!(EXPORT_SINCE_NS, "export/since_ns");
query!(EXPORT_REQUESTS_REST, "export/requests_rest");
query!(EXPORT_REQUEST_PACK, "export/request_pack");
query!(EXPORT_RUN_STARTED, "export/run_started");
query!(EXPORT_CASE_WINDOWS, "export/case_windows");
query!(EXPORT_REQUEST_ROWS, "export/request_rows");
query!(MIGRATE_REQUESTS_WITH_EXTRA, "migrate/requests_with_extra");
query!(
    MIGRATE_PHASE_WINDOWS_WITH_EXTRA,
    "migrate/phase_windows_with_extra"
);
query!(MIGRATE_WIDEN_REQUESTS, "migrate/widen_requests");
query!(MIGRATE_WIDEN_PHASE_WINDOWS, "migrate/widen_phase_windows");
query!(INGEST_DELETE_CACHE_STATES, "ingest/delete_cache_states");
query!(
    INGEST_DELETE_CLOCK_ALIGNMENTS,
    "ingest/delete_clock_alignments"
);
query!(INGEST_DELETE_CONTEXTS, "ingest/delete_contexts");
query!(
    INGEST_DELETE_EXECUTION_FACTS,
    "ingest/delete_execution_facts"
);
query!(
    INGEST_DELETE_EXECUTION_WHOLE,
    "ingest/delete_execution_whole"
);
query!(
    INGEST_INSERT_EXECUTION_FACTS,
    "ingest/insert_execution_facts"
);
query!(
    INGEST_INSERT_EXECUTION_WHOLE,
    "ingest/insert_execution_whole"
);
query!(LOAD_EXECUTION_FACTS, "load/execution_facts");
query!(LOAD_EXECUTION_BODIES, "load/execution_bodies");
query!(LOAD_EXECUTION_RECORDS, "load/execution_records");
query!(LOAD_EXECUTION_RECORDS_EXIST, "load/execution_records_exist");
query!(EXECUTION_DELETE_AGGREGATE, "execution/delete_aggregate");
query!(EXECUTION_INSERT_AGGREGATE, "execution/insert_aggregate");
query!(EXECUTION_LOAD_AGGREGATE, "execution/load_aggregate");
query!(EXECUTION_CASE_REQUESTS, "execution/case_requests");
query!(
    EXECUTION_RECORDS_DISPATCH_EXIST,
    "execution/records_dispatch_exist"
);
query!(EXECUTION_RUNS_TO_BACKFILL, "execution/runs_to_backfill");
query!(EXECUTION_CONTEXTS, "execution/contexts");
query!(INGEST_DELETE_PHASE_WINDOWS, "ingest/delete_phase_windows");
query!(INGEST_DELETE_RECORDS, "ingest/delete_records");
query!(INGEST_DELETE_REQUESTS, "ingest/delete_requests");
query!(INGEST_DELETE_REQUEST_PACK, "ingest/delete_request_pack");
query!(INGEST_DELETE_SESSIONS, "ingest/delete_sessions");
query!(INGEST_DELETE_SLO_RECORDS, "ingest/delete_slo_records");
query!(INGEST_DELETE_SYSTEM_SAMPLES, "ingest/delete_system_samples");
query!(INGEST_DELETE_VLLM_SCRAPES, "ingest/delete_vllm_scrapes");
query!(INGEST_DELETE_VLLM_SPANS, "ingest/delete_vllm_spans");
query!(INGEST_DELETE_WORKLOADS, "ingest/delete_workloads");
query!(INSERT_CACHE_STATES, "ingest/insert_cache_states");
query!(INSERT_CLOCK_ALIGNMENTS, "ingest/insert_clock_alignments");
query!(INGEST_INSERT_CONTEXT, "ingest/insert_context");
query!(INSERT_PHASE_WINDOWS, "ingest/insert_phase_windows");
query!(
    INGEST_INSERT_PLACEHOLDER_RUN,
    "ingest/insert_placeholder_run"
);
query!(INGEST_INSERT_RECORD, "ingest/insert_record");
query!(INSERT_REQUESTS, "ingest/insert_requests");
query!(INGEST_INSERT_REQUEST_PACK, "ingest/insert_request_pack");
query!(INGEST_INSERT_RUN, "ingest/insert_run");
query!(INSERT_SESSIONS, "ingest/insert_sessions");
query!(INSERT_SLO_RECORDS, "ingest/insert_slo_records");
query!(INSERT_SYSTEM_SAMPLES, "ingest/insert_system_samples");
query!(INSERT_VLLM_SCRAPES, "ingest/insert_vllm_scrapes");
query!(INSERT_VLLM_SPANS, "ingest/insert_vllm_spans");
query!(INSERT_WORKLOADS, "ingest/insert_workloads");
query!(HISTORY_ENTRIES, "history/entries");
query!(HISTORY_STORE_ENTRY, "history/store_entry");
query!(IMPORTS_CHUNKS, "imports/chunks");
query!(IMPORTS_DELETE, "imports/delete");
query!(IMPORTS_DELETE_CASES, "imports/delete_cases");
query!(IMPORTS_DELETE_CHUNKS, "imports/delete_chunks");
query!(IMPORTS_DELETE_FILES, "imports/delete_files");
query!(IMPORTS_FILES, "imports/files");
query!(IMPORTS_FIND, "imports/find");
query!(IMPORTS_INSERT_CASE, "imports/insert_case");
query!(IMPORTS_INSERT_CHUNK, "imports/insert_chunk");
query!(IMPORTS_INSERT_FILE, "imports/insert_file");
query!(IMPORTS_INSERT_IMPORT, "imports/insert_import");
query!(IMPORTS_NEXT_BLOB, "imports/next_blob");
query!(LOAD_ATTACHED_SPANS, "load/attached_spans");
query!(LOAD_CACHE_STATES, "load/cache_states");
query!(LOAD_CLOCK_ALIGNMENTS, "load/clock_alignments");
query!(LOAD_CONTEXTS, "load/contexts");
query!(LOAD_DISPATCHES, "load/dispatches");
query!(LOAD_PHASE_WINDOWS, "load/phase_windows");
query!(LOAD_RECORDS, "load/records");
query!(LOAD_RECORDS_ANALYSIS, "load/records_analysis");
query!(LOAD_REQUESTS, "load/requests");
query!(LOAD_REQUESTS_ANALYSIS, "load/requests_analysis");
query!(LOAD_REQUEST_COUNT, "load/request_count");
query!(LOAD_REQUEST_PACK_ROWS, "load/request_pack_rows");
query!(LOAD_REQUEST_PACK_SEGMENTS, "load/request_pack_segments");
query!(LOAD_REQUEST_SEQ_AT, "load/request_seq_at");
query!(LOAD_REQUEST_SEQ_RANGE, "load/request_seq_range");
query!(LOAD_RUN, "load/run");
query!(LOAD_RUN_STAMP, "load/run_stamp");
query!(LOAD_SESSIONS, "load/sessions");
query!(LOAD_SLO_RECORDS, "load/slo_records");
query!(LOAD_SYSTEM_SAMPLES, "load/system_samples");
query!(LOAD_VLLM_SCRAPES, "load/vllm_scrapes");
query!(LOAD_VLLM_SPANS, "load/vllm_spans");
query!(LOAD_WORKLOADS, "load/workloads");
query!(RUNS_DELETE, "runs/delete");
query!(RUNS_FIND, "runs/find");
query!(RUNS_IDS, "runs/ids");
query!(RUNS_LABELS, "runs/labels");
query!(RUNS_LIST, "runs/list");
query!(TELEMETRY_FIND_FILE, "telemetry/find_file");
query!(TELEMETRY_UNFINISHED_FILES, "telemetry/unfinished_files");
query!(TELEMETRY_FILE_SAMPLE_KEYS, "telemetry/file_sample_keys");
query!(TELEMETRY_DELETE_FILE, "telemetry/delete_file");
query!(TELEMETRY_FINISH_LIVE_FILE, "telemetry/finish_live_file");
query!(TELEMETRY_INSERT_FILE, "telemetry/insert_file");
query!(TELEMETRY_INSERT_SAMPLE, "telemetry/insert_sample");
query!(TELEMETRY_LIST_FILES, "telemetry/list_files");
query!(TELEMETRY_LOAD_SAMPLES, "telemetry/load_samples");
query!(TELEMETRY_UPSERT_IDENTITY, "telemetry/upsert_identity");

// The per-request records beside `infer.request` (migrations/0012).
query!(INGEST_DELETE_DISPATCHES, "ingest/delete_dispatches");
query!(INGEST_DELETE_FIRST_CONTENTS, "ingest/delete_first_contents");
query!(INSERT_DISPATCHES, "ingest/insert_dispatches");
query!(INSERT_FIRST_CONTENTS, "ingest/insert_first_contents");
query!(INSERT_DISPATCHES_SHARED, "ingest/insert_dispatches_shared");
query!(
    INSERT_FIRST_CONTENTS_SHARED,
    "ingest/insert_first_contents_shared"
);
query!(LOAD_FIRST_CONTENTS, "load/first_contents");
query!(MIGRATE_DELETE_RECORD, "migrate/delete_record");
query!(MIGRATE_RECORDS_OF_TYPE, "migrate/records_of_type");

/// Every registered statement.
pub const ALL: &[Query] = &[
    MIGRATE_REQUESTS_WITH_EXTRA,
    MIGRATE_PHASE_WINDOWS_WITH_EXTRA,
    MIGRATE_WIDEN_REQUESTS,
    MIGRATE_WIDEN_PHASE_WINDOWS,
    EXPORT_CASES,
    EXPORT_REQUESTS,
    EXPORT_RUN,
    EXPORT_RUN_BASE,
    EXPORT_RUN_FILES,
    EXPORT_SCHEMA_VERSION,
    EXPORT_SELECT_RUNS,
    EXPORT_SERVER_SAMPLES,
    EXPORT_SINCE_NS,
    EXPORT_REQUESTS_REST,
    EXPORT_REQUEST_PACK,
    EXPORT_RUN_STARTED,
    EXPORT_REQUEST_ROWS,
    EXPORT_CASE_WINDOWS,
    INGEST_DELETE_CACHE_STATES,
    INGEST_DELETE_CLOCK_ALIGNMENTS,
    INGEST_DELETE_CONTEXTS,
    INGEST_DELETE_EXECUTION_FACTS,
    INGEST_DELETE_EXECUTION_WHOLE,
    INGEST_INSERT_EXECUTION_FACTS,
    INGEST_INSERT_EXECUTION_WHOLE,
    LOAD_EXECUTION_FACTS,
    LOAD_EXECUTION_BODIES,
    LOAD_EXECUTION_RECORDS,
    LOAD_EXECUTION_RECORDS_EXIST,
    INGEST_DELETE_PHASE_WINDOWS,
    INGEST_DELETE_RECORDS,
    INGEST_DELETE_REQUESTS,
    INGEST_DELETE_REQUEST_PACK,
    INGEST_DELETE_SESSIONS,
    INGEST_DELETE_SLO_RECORDS,
    INGEST_DELETE_SYSTEM_SAMPLES,
    INGEST_DELETE_VLLM_SCRAPES,
    INGEST_DELETE_VLLM_SPANS,
    INGEST_DELETE_WORKLOADS,
    INSERT_CACHE_STATES,
    INSERT_CLOCK_ALIGNMENTS,
    INGEST_INSERT_CONTEXT,
    INSERT_PHASE_WINDOWS,
    INGEST_INSERT_PLACEHOLDER_RUN,
    INGEST_INSERT_RECORD,
    INSERT_REQUESTS,
    INGEST_INSERT_REQUEST_PACK,
    INGEST_INSERT_RUN,
    INSERT_SESSIONS,
    INSERT_SLO_RECORDS,
    INSERT_SYSTEM_SAMPLES,
    INSERT_VLLM_SCRAPES,
    INSERT_VLLM_SPANS,
    INSERT_WORKLOADS,
    HISTORY_ENTRIES,
    HISTORY_STORE_ENTRY,
    IMPORTS_CHUNKS,
    IMPORTS_DELETE,
    IMPORTS_DELETE_CASES,
    IMPORTS_DELETE_CHUNKS,
    IMPORTS_DELETE_FILES,
    IMPORTS_FILES,
    IMPORTS_FIND,
    IMPORTS_INSERT_CASE,
    IMPORTS_INSERT_CHUNK,
    IMPORTS_INSERT_FILE,
    IMPORTS_INSERT_IMPORT,
    IMPORTS_NEXT_BLOB,
    LOAD_ATTACHED_SPANS,
    LOAD_CACHE_STATES,
    LOAD_CLOCK_ALIGNMENTS,
    LOAD_CONTEXTS,
    LOAD_DISPATCHES,
    LOAD_PHASE_WINDOWS,
    LOAD_RECORDS,
    LOAD_RECORDS_ANALYSIS,
    LOAD_REQUESTS,
    LOAD_REQUESTS_ANALYSIS,
    LOAD_REQUEST_COUNT,
    LOAD_REQUEST_PACK_ROWS,
    LOAD_REQUEST_PACK_SEGMENTS,
    LOAD_REQUEST_SEQ_RANGE,
    LOAD_REQUEST_SEQ_AT,
    LOAD_RUN,
    LOAD_RUN_STAMP,
    LOAD_SESSIONS,
    LOAD_SLO_RECORDS,
    LOAD_SYSTEM_SAMPLES,
    LOAD_VLLM_SCRAPES,
    LOAD_VLLM_SPANS,
    LOAD_WORKLOADS,
    RUNS_DELETE,
    RUNS_FIND,
    RUNS_IDS,
    RUNS_LABELS,
    RUNS_LIST,
    TELEMETRY_FIND_FILE,
    TELEMETRY_UNFINISHED_FILES,
    TELEMETRY_FILE_SAMPLE_KEYS,
    TELEMETRY_DELETE_FILE,
    TELEMETRY_FINISH_LIVE_FILE,
    TELEMETRY_INSERT_FILE,
    TELEMETRY_INSERT_SAMPLE,
    TELEMETRY_LIST_FILES,
    TELEMETRY_LOAD_SAMPLES,
    TELEMETRY_UPSERT_IDENTITY,
    INGEST_DELETE_DISPATCHES,
    INGEST_DELETE_FIRST_CONTENTS,
    INSERT_DISPATCHES,
    INSERT_FIRST_CONTENTS,
    INSERT_DISPATCHES_SHARED,
    INSERT_FIRST_CONTENTS_SHARED,
    LOAD_FIRST_CONTENTS,
    MIGRATE_DELETE_RECORD,
    MIGRATE_RECORDS_OF_TYPE,
];

/// The statements that clear a run's artifact rows (attached files stay).
pub const DELETE_ARTIFACT: &[Query] = &[
    INGEST_DELETE_CACHE_STATES,
    INGEST_DELETE_CLOCK_ALIGNMENTS,
    INGEST_DELETE_CONTEXTS,
    INGEST_DELETE_EXECUTION_FACTS,
    INGEST_DELETE_EXECUTION_WHOLE,
    INGEST_DELETE_PHASE_WINDOWS,
    INGEST_DELETE_RECORDS,
    INGEST_DELETE_REQUESTS,
    INGEST_DELETE_REQUEST_PACK,
    INGEST_DELETE_SESSIONS,
    INGEST_DELETE_SLO_RECORDS,
    INGEST_DELETE_SYSTEM_SAMPLES,
    INGEST_DELETE_VLLM_SCRAPES,
    INGEST_DELETE_VLLM_SPANS,
    INGEST_DELETE_WORKLOADS,
    INGEST_DELETE_DISPATCHES,
    INGEST_DELETE_FIRST_CONTENTS,
];
