//! The class of each run field (identity, launch, observation, label):
//! the reference's `stormlog.infer.config_classes` tables, version 1.

use super::*;

pub(super) const ALIASES: &[(&str, &str)] = &[
    ("engine.dtype", "/model_config/dtype"),
    ("engine.max_model_len", "/model_config/max_model_len"),
    ("engine.quantization", "/model_config/quantization"),
    ("engine.max_num_seqs", "/scheduler_config/max_num_seqs"),
    (
        "engine.max_num_batched_tokens",
        "/scheduler_config/max_num_batched_tokens",
    ),
    (
        "engine.chunked_prefill",
        "/scheduler_config/enable_chunked_prefill",
    ),
    (
        "engine.async_scheduling",
        "/scheduler_config/async_scheduling",
    ),
    (
        "engine.stream_interval",
        "/scheduler_config/stream_interval",
    ),
    (
        "engine.prefix_caching",
        "/cache_config/enable_prefix_caching",
    ),
    ("engine.kv_cache_dtype", "/cache_config/cache_dtype"),
    ("engine.block_size", "/cache_config/block_size"),
    (
        "engine.gpu_memory_utilization",
        "/cache_config/gpu_memory_utilization",
    ),
    (
        "engine.tensor_parallel_size",
        "/parallel_config/tensor_parallel_size",
    ),
    (
        "engine.pipeline_parallel_size",
        "/parallel_config/pipeline_parallel_size",
    ),
    (
        "engine.data_parallel_size",
        "/parallel_config/data_parallel_size",
    ),
    ("engine.compilation_mode", "/compilation_config/mode"),
    (
        "engine.cudagraph_mode",
        "/compilation_config/cudagraph_mode",
    ),
    ("engine.attention_backend", "/attention_config/backend"),
    ("engine.speculative", "/speculative_config"),
];

pub(super) const CONFIG_CLASSES_V1: &[(&str, &str)] = &[
    ("/model_config", IDENTITY),
    ("/model_config/served_model_name", LABEL),
    ("/model_config/hf_token", LABEL),
    ("/speculative_config/target_model_config/hf_token", LABEL),
    ("/speculative_config/draft_model_config/hf_token", LABEL),
    ("/model_config/allowed_local_media_path", LAUNCH),
    ("/cache_config", IDENTITY),
    ("/parallel_config", IDENTITY),
    ("/parallel_config/data_parallel_master_ip", LAUNCH),
    ("/parallel_config/data_parallel_master_port", LAUNCH),
    ("/parallel_config/data_parallel_rpc_port", LAUNCH),
    ("/parallel_config/master_addr", LAUNCH),
    ("/parallel_config/master_port", LAUNCH),
    ("/parallel_config/_coord_store_port", LAUNCH),
    ("/parallel_config/distributed_timeout_seconds", LAUNCH),
    ("/parallel_config/cpu_distributed_timeout_seconds", LAUNCH),
    ("/scheduler_config", IDENTITY),
    ("/device_config", IDENTITY),
    ("/load_config", IDENTITY),
    ("/load_config/download_dir", LAUNCH),
    ("/offload_config", IDENTITY),
    ("/attention_config", IDENTITY),
    ("/engram_config", IDENTITY),
    ("/mamba_config", IDENTITY),
    ("/kernel_config", IDENTITY),
    ("/lora_config", IDENTITY),
    ("/speculative_config", IDENTITY),
    ("/watermark_config", IDENTITY),
    ("/diffusion_config", IDENTITY),
    ("/structured_outputs_config", IDENTITY),
    ("/observability_config", OBSERVATION),
    ("/quant_config", IDENTITY),
    ("/compilation_config", IDENTITY),
    ("/compilation_config/cache_dir", LAUNCH),
    ("/compilation_config/local_cache_dir", LAUNCH),
    ("/compilation_config/debug_dump_path", LAUNCH),
    ("/compilation_config/compilation_time", LAUNCH),
    ("/compilation_config/encoder_compilation_time", LAUNCH),
    ("/profiler_config", OBSERVATION),
    ("/kv_transfer_config", IDENTITY),
    ("/kv_transfer_config/kv_ip", LAUNCH),
    ("/kv_transfer_config/kv_port", LAUNCH),
    ("/kv_transfer_config/engine_id", LAUNCH),
    ("/kv_events_config", OBSERVATION),
    ("/ec_transfer_config", IDENTITY),
    ("/ec_transfer_config/ec_ip", LAUNCH),
    ("/ec_transfer_config/ec_port", LAUNCH),
    ("/ec_transfer_config/engine_id", LAUNCH),
    ("/ec_manager_config", IDENTITY),
    ("/reasoning_config", IDENTITY),
    ("/additional_config", IDENTITY),
    ("/instance_id", LAUNCH),
    ("/optimization_level", IDENTITY),
    ("/performance_mode", IDENTITY),
    ("/weight_transfer_config", IDENTITY),
    ("/shutdown_timeout", LAUNCH),
];

pub(super) const VLLM_ENV_CLASSES_V1: &[(&str, &str)] = &[
    ("VLLM_PORT", LAUNCH),
    ("VLLM_HOST_IP", LAUNCH),
    ("VLLM_RPC_BASE_PATH", LAUNCH),
    ("VLLM_CACHE_ROOT", LAUNCH),
    ("VLLM_CONFIG_ROOT", LAUNCH),
    ("VLLM_ASSETS_CACHE", LAUNCH),
    ("VLLM_SERVER_DEV_MODE", OBSERVATION),
    ("VLLM_LOGGING_LEVEL", OBSERVATION),
    ("VLLM_LOGGING_PREFIX", OBSERVATION),
    ("VLLM_LOGGING_CONFIG_PATH", OBSERVATION),
    ("VLLM_CONFIGURE_LOGGING", OBSERVATION),
    ("VLLM_LOG_STATS_INTERVAL", OBSERVATION),
    ("VLLM_TRACE_FUNCTION", OBSERVATION),
    ("VLLM_TORCH_PROFILER_DIR", OBSERVATION),
    ("VLLM_PROCESS_NAME_PREFIX", LABEL),
    ("VLLM_OBJECT_STORAGE_SHM_BUFFER_NAME", LABEL),
];

pub(super) const FIELD_CLASSES_V1: &[(&str, &str)] = &[
    ("model.", IDENTITY),
    ("model.configured", LABEL),
    ("tokenizer.", IDENTITY),
    ("server.chat_template_digest", IDENTITY),
    ("server.generation_config", IDENTITY),
    ("server.served_models", LABEL),
    ("engine.", IDENTITY),
    ("effective.", IDENTITY),
    ("runtime.", IDENTITY),
    ("gpu.", IDENTITY),
    ("gpu.uuids", LAUNCH),
    ("host.", LAUNCH),
    ("host.start_method", IDENTITY),
    ("environ.", IDENTITY),
    ("environ.CUDA_VISIBLE_DEVICES", LAUNCH),
    ("environ.HF_HOME", LAUNCH),
    ("environ.HF_HUB_CACHE", LAUNCH),
    ("environ.TORCHINDUCTOR_CACHE_DIR", LAUNCH),
    ("environ.TRITON_CACHE_DIR", LAUNCH),
    ("environ.OTEL_", OBSERVATION),
    ("environ.STORMLOG_", OBSERVATION),
    ("environ.STORMLOG_RUN_MARK", LABEL),
    ("workload.", IDENTITY),
    ("workload.realization_digest", LAUNCH),
    ("observer.", OBSERVATION),
    ("experiment.", LABEL),
    ("scope.", LABEL),
];

pub(super) fn table_get(table: &[(&str, &'static str)], key: &str) -> Option<&'static str> {
    table.iter().find(|(k, _)| *k == key).map(|(_, v)| *v)
}

pub(super) fn config_class(pointer: &str) -> &'static str {
    let mut path = pointer.to_owned();
    while !path.is_empty() {
        if let Some(class) = table_get(CONFIG_CLASSES_V1, &path) {
            return class;
        }
        path = if path.len() > 1 && path[1..].contains('/') {
            path.rsplit_once('/')
                .map_or(String::new(), |(a, _)| a.to_owned())
        } else {
            String::new()
        };
    }
    UNCLASSIFIED
}

pub(super) fn field_class(name: &str) -> &'static str {
    if let Some(class) = table_get(FIELD_CLASSES_V1, name) {
        return class;
    }
    FIELD_CLASSES_V1
        .iter()
        .filter(|(p, _)| (p.ends_with('.') || p.ends_with('_')) && name.starts_with(p))
        .max_by_key(|(p, _)| p.len())
        .map_or(UNCLASSIFIED, |(_, c)| c)
}

/// The class of any run field name.
pub fn classify(name: &str) -> &'static str {
    if let Some(pointer) = name
        .strip_prefix(VLLM_CONFIG)
        .filter(|p| p.starts_with('/'))
    {
        return config_class(pointer);
    }
    if let Some(env) = name.strip_prefix("vllm_env/") {
        return table_get(VLLM_ENV_CLASSES_V1, env).unwrap_or(IDENTITY);
    }
    field_class(name)
}
