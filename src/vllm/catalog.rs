//! The vLLM 0.30.0 metric catalog (docs/report.md §6.3): what each native
//! series means, the report field it is stored under, its group, unit and
//! provenance, and the retired names with their successors. The report's
//! per-engine block (docs/report.md §6.3.4) resolves every family through here.

/// One catalog entry; `requires` set means the series is optional.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Entry {
    pub name: &'static str,
    pub kind: &'static str,
    pub field: &'static str,
    pub group: &'static str,
    pub unit: Option<&'static str>,
    pub requires: Option<&'static str>,
    pub provenance: &'static str,
    pub meaning: &'static str,
}

/// Verified against vLLM 0.30.0, in the reference's order.
#[rustfmt::skip]
pub const CATALOG: &[Entry] = &[
    Entry { name: "vllm:num_requests_running", kind: "gauge", field: "running_requests", group: "scheduler", unit: Some("requests"), requires: None, provenance: "observed", meaning: "requests in the RUNNING state at scrape time" },
    Entry { name: "vllm:num_requests_waiting", kind: "gauge", field: "queue_depth", group: "scheduler", unit: Some("requests"), requires: None, provenance: "observed", meaning: "requests in the WAITING state at scrape time" },
    Entry { name: "vllm:num_requests_waiting_by_reason", kind: "gauge", field: "queue_depth_by_reason", group: "scheduler", unit: Some("requests"), requires: None, provenance: "observed", meaning: "waiting requests split by why they wait" },
    Entry { name: "vllm:engine_sleep_state", kind: "gauge", field: "engine_sleep_state", group: "scheduler", unit: None, requires: None, provenance: "observed", meaning: "1 for the engine's current sleep state" },
    Entry { name: "vllm:num_preemptions_total", kind: "counter", field: "preemptions", group: "scheduler", unit: Some("preemptions"), requires: None, provenance: "observed", meaning: "requests preempted by the scheduler" },
    Entry { name: "vllm:request_num_preemptions", kind: "histogram", field: "preemptions_per_request", group: "scheduler", unit: Some("preemptions"), requires: None, provenance: "observed", meaning: "preemptions a finished request went through" },
    Entry { name: "vllm:request_queue_time_seconds", kind: "histogram", field: "queue_time", group: "scheduler", unit: Some("seconds"), requires: None, provenance: "observed", meaning: "time a finished request spent WAITING; wall-clock residency in a scheduler phase, measured on the engine's clock; not execution time and not GPU time" },
    Entry { name: "vllm:kv_cache_usage_perc", kind: "gauge", field: "kv_cache_usage", group: "kv_cache", unit: Some("fraction"), requires: None, provenance: "observed", meaning: "fraction of KV cache blocks in use at scrape time (0 to 1 despite the name); logical occupancy, not device memory" },
    Entry { name: "vllm:cache_config_info", kind: "gauge", field: "cache_config", group: "kv_cache", unit: None, requires: None, provenance: "observed", meaning: "cache configuration carried as labels; the value is always 1" },
    Entry { name: "vllm:kv_block_lifetime_seconds", kind: "histogram", field: "kv_block_lifetime", group: "kv_cache", unit: Some("seconds"), requires: Some("--kv-cache-metrics"), provenance: "observed", meaning: "sampled KV block lifetime from allocation to eviction" },
    Entry { name: "vllm:kv_block_idle_before_evict_seconds", kind: "histogram", field: "kv_block_idle_before_evict", group: "kv_cache", unit: Some("seconds"), requires: Some("--kv-cache-metrics"), provenance: "observed", meaning: "sampled idle time of a KV block before eviction" },
    Entry { name: "vllm:kv_block_reuse_gap_seconds", kind: "histogram", field: "kv_block_reuse_gap", group: "kv_cache", unit: Some("seconds"), requires: Some("--kv-cache-metrics"), provenance: "observed", meaning: "sampled gap between reuses of a KV block" },
    Entry { name: "vllm:prefix_cache_queries_total", kind: "counter", field: "prefix_cache_queries", group: "prefix_cache", unit: Some("tokens"), requires: None, provenance: "observed", meaning: "prompt tokens looked up in the local prefix cache" },
    Entry { name: "vllm:prefix_cache_hits_total", kind: "counter", field: "prefix_cache_hits", group: "prefix_cache", unit: Some("tokens"), requires: None, provenance: "observed", meaning: "prompt tokens served from the local prefix cache" },
    Entry { name: "vllm:external_prefix_cache_queries_total", kind: "counter", field: "external_prefix_cache_queries", group: "prefix_cache", unit: Some("tokens"), requires: Some("a KV connector"), provenance: "observed", meaning: "prompt tokens looked up in an external KV cache" },
    Entry { name: "vllm:external_prefix_cache_hits_total", kind: "counter", field: "external_prefix_cache_hits", group: "prefix_cache", unit: Some("tokens"), requires: Some("a KV connector"), provenance: "observed", meaning: "prompt tokens served from an external KV cache" },
    Entry { name: "vllm:mm_cache_queries_total", kind: "counter", field: "mm_cache_queries", group: "prefix_cache", unit: Some("items"), requires: None, provenance: "observed", meaning: "multimodal cache lookups" },
    Entry { name: "vllm:mm_cache_hits_total", kind: "counter", field: "mm_cache_hits", group: "prefix_cache", unit: Some("items"), requires: None, provenance: "observed", meaning: "multimodal cache hits" },
    Entry { name: "vllm:prompt_tokens_total", kind: "counter", field: "prompt_tokens", group: "tokens", unit: Some("tokens"), requires: None, provenance: "observed", meaning: "prefill tokens processed" },
    Entry { name: "vllm:prompt_tokens_cached_total", kind: "counter", field: "prompt_tokens_cached", group: "tokens", unit: Some("tokens"), requires: None, provenance: "observed", meaning: "prompt tokens that did not need prefill compute" },
    Entry { name: "vllm:prompt_tokens_by_source_total", kind: "counter", field: "prompt_tokens_by_source", group: "tokens", unit: Some("tokens"), requires: None, provenance: "observed", meaning: "prompt tokens by where they came from" },
    Entry { name: "vllm:generation_tokens_total", kind: "counter", field: "generation_tokens", group: "tokens", unit: Some("tokens"), requires: None, provenance: "observed", meaning: "tokens generated" },
    Entry { name: "vllm:iteration_tokens_total", kind: "histogram", field: "iteration_tokens", group: "tokens", unit: Some("tokens"), requires: None, provenance: "observed", meaning: "tokens scheduled per engine step (a histogram despite the suffix)" },
    Entry { name: "vllm:request_success_total", kind: "counter", field: "request_success", group: "requests", unit: Some("requests"), requires: None, provenance: "observed", meaning: "finished requests by finish reason" },
    Entry { name: "vllm:time_to_first_token_seconds", kind: "histogram", field: "time_to_first_token", group: "request_latency", unit: Some("seconds"), requires: None, provenance: "observed", meaning: "arrival to first token; wall-clock residency in a scheduler phase, measured on the engine's clock; not execution time and not GPU time" },
    Entry { name: "vllm:inter_token_latency_seconds", kind: "histogram", field: "inter_token_latency", group: "request_latency", unit: Some("seconds"), requires: None, provenance: "observed", meaning: "gap between consecutive output tokens; wall-clock residency in a scheduler phase, measured on the engine's clock; not execution time and not GPU time" },
    Entry { name: "vllm:request_time_per_output_token_seconds", kind: "histogram", field: "time_per_output_token", group: "request_latency", unit: Some("seconds"), requires: None, provenance: "observed", meaning: "decode time per output token of a finished request; wall-clock residency in a scheduler phase, measured on the engine's clock; not execution time and not GPU time" },
    Entry { name: "vllm:e2e_request_latency_seconds", kind: "histogram", field: "e2e_latency", group: "request_latency", unit: Some("seconds"), requires: None, provenance: "observed", meaning: "arrival to finish; wall-clock residency in a scheduler phase, measured on the engine's clock; not execution time and not GPU time" },
    Entry { name: "vllm:request_inference_time_seconds", kind: "histogram", field: "inference_time", group: "request_latency", unit: Some("seconds"), requires: None, provenance: "observed", meaning: "from the scheduler admitting the request to the engine processing its last token's output; the same expression as the OpenTelemetry attribute gen_ai.latency.time_in_model_inference; with async scheduling it can start while the previous step is still running; wall-clock residency in a scheduler phase, measured on the engine's clock; not execution time and not GPU time" },
    Entry { name: "vllm:request_prefill_time_seconds", kind: "histogram", field: "prefill_time", group: "request_latency", unit: Some("seconds"), requires: None, provenance: "observed", meaning: "first schedule to first token; wall-clock residency in a scheduler phase, measured on the engine's clock; not execution time and not GPU time" },
    Entry { name: "vllm:request_decode_time_seconds", kind: "histogram", field: "decode_time", group: "request_latency", unit: Some("seconds"), requires: None, provenance: "observed", meaning: "first token to last token; wall-clock residency in a scheduler phase, measured on the engine's clock; not execution time and not GPU time" },
    Entry { name: "vllm:request_prompt_tokens", kind: "histogram", field: "request_prompt_tokens", group: "request_shape", unit: Some("tokens"), requires: None, provenance: "observed", meaning: "prompt length of finished requests" },
    Entry { name: "vllm:request_generation_tokens", kind: "histogram", field: "request_generation_tokens", group: "request_shape", unit: Some("tokens"), requires: None, provenance: "observed", meaning: "output length of finished requests" },
    Entry { name: "vllm:request_max_num_generation_tokens", kind: "histogram", field: "request_max_generation_tokens", group: "request_shape", unit: Some("tokens"), requires: None, provenance: "observed", meaning: "largest output length among a request's sequences" },
    Entry { name: "vllm:request_params_n", kind: "histogram", field: "request_params_n", group: "request_shape", unit: None, requires: None, provenance: "observed", meaning: "the n parameter of finished requests" },
    Entry { name: "vllm:request_params_max_tokens", kind: "histogram", field: "request_params_max_tokens", group: "request_shape", unit: Some("tokens"), requires: None, provenance: "observed", meaning: "the max_tokens parameter of finished requests" },
    Entry { name: "vllm:request_prefill_kv_computed_tokens", kind: "histogram", field: "request_prefill_kv_computed_tokens", group: "request_shape", unit: Some("tokens"), requires: None, provenance: "observed", meaning: "prompt tokens whose KV was computed rather than reused" },
    Entry { name: "vllm:spec_decode_num_drafts_total", kind: "counter", field: "spec_decode_drafts", group: "spec_decode", unit: Some("drafts"), requires: Some("speculative decoding"), provenance: "observed", meaning: "speculative drafts proposed" },
    Entry { name: "vllm:spec_decode_num_draft_tokens_total", kind: "counter", field: "spec_decode_draft_tokens", group: "spec_decode", unit: Some("tokens"), requires: Some("speculative decoding"), provenance: "observed", meaning: "draft tokens proposed" },
    Entry { name: "vllm:spec_decode_num_accepted_tokens_total", kind: "counter", field: "spec_decode_accepted_tokens", group: "spec_decode", unit: Some("tokens"), requires: Some("speculative decoding"), provenance: "observed", meaning: "draft tokens accepted" },
    Entry { name: "vllm:spec_decode_num_accepted_tokens_per_pos_total", kind: "counter", field: "spec_decode_accepted_tokens_per_position", group: "spec_decode", unit: Some("tokens"), requires: Some("speculative decoding"), provenance: "observed", meaning: "draft tokens accepted by draft position" },
    Entry { name: "vllm:estimated_flops_per_gpu_total", kind: "counter", field: "estimated_flops_per_gpu", group: "mfu", unit: Some("flops"), requires: Some("--enable-mfu-metrics"), provenance: "estimated", meaning: "estimated floating point operations per GPU; advances only with --enable-mfu-metrics" },
    Entry { name: "vllm:estimated_read_bytes_per_gpu_total", kind: "counter", field: "estimated_read_bytes_per_gpu", group: "mfu", unit: Some("bytes"), requires: Some("--enable-mfu-metrics"), provenance: "estimated", meaning: "estimated bytes read from memory per GPU; advances only with --enable-mfu-metrics" },
    Entry { name: "vllm:estimated_write_bytes_per_gpu_total", kind: "counter", field: "estimated_write_bytes_per_gpu", group: "mfu", unit: Some("bytes"), requires: Some("--enable-mfu-metrics"), provenance: "estimated", meaning: "estimated bytes written to memory per GPU; advances only with --enable-mfu-metrics" },
    Entry { name: "vllm:lora_requests_info", kind: "gauge", field: "lora_requests", group: "lora", unit: None, requires: Some("LoRA"), provenance: "observed", meaning: "running LoRA adapter state carried as labels" },
    Entry { name: "vllm:corrupted_requests_total", kind: "counter", field: "corrupted_requests", group: "requests", unit: Some("requests"), requires: Some("VLLM_COMPUTE_NANS_IN_LOGITS=1"), provenance: "observed", meaning: "requests whose logits held NaNs" },
];

/// Retired names and their successors (`None`: removed without one).
#[rustfmt::skip]
pub const RETIRED: &[(&str, Option<&str>)] = &[
    ("vllm:gpu_cache_usage_perc", Some("vllm:kv_cache_usage_perc")),
    ("vllm:gpu_prefix_cache_queries_total", Some("vllm:prefix_cache_queries_total")),
    ("vllm:gpu_prefix_cache_hits_total", Some("vllm:prefix_cache_hits_total")),
    ("vllm:time_in_queue_requests", Some("vllm:request_queue_time_seconds")),
    ("vllm:model_forward_time_milliseconds", None),
    ("vllm:model_execute_time_milliseconds", None),
    ("vllm:num_requests_swapped", None),
    ("vllm:cpu_cache_usage_perc", None),
    ("vllm:request_params_best_of", None),
    ("vllm:kv_offload_total_bytes", None),
    ("vllm:kv_offload_total_time", None),
    ("vllm:kv_offload_size", None),
];

/// Prefixes of optional subsystems: such series are vLLM's even when the
/// catalog does not name them one by one.
pub const OPTIONAL_PREFIXES: &[(&str, &str)] = &[
    ("vllm:kv_offload_", "kv_transfer"),
    ("vllm:spec_decode_", "spec_decode"),
    ("vllm:diffusion_", "diffusion"),
];

/// The catalog entry named exactly `name`.
pub fn entry(name: &str) -> Option<&'static Entry> {
    CATALOG.iter().find(|e| e.name == name)
}

/// The current name of a family and the retired alias it was found under:
/// a catalog name is itself, a retired name with a successor resolves to
/// the successor, anything else is itself.
pub fn resolve_name(name: &str) -> (String, Option<String>) {
    if entry(name).is_some() {
        return (name.to_owned(), None);
    }
    match RETIRED.iter().find(|(old, _)| *old == name) {
        Some((_, Some(successor))) => ((*successor).to_owned(), Some(name.to_owned())),
        _ => (name.to_owned(), None),
    }
}

/// The catalog entry a (possibly retired) family name resolves to.
pub fn resolved_entry(name: &str) -> Option<&'static Entry> {
    entry(&resolve_name(name).0)
}

/// The family's group: the catalog's, else by optional prefix, else `other`.
pub fn family_group(name: &str) -> &'static str {
    if let Some(e) = resolved_entry(name) {
        return e.group;
    }
    OPTIONAL_PREFIXES
        .iter()
        .find(|(prefix, _)| name.starts_with(prefix))
        .map_or("other", |(_, group)| group)
}

/// The `*_created` companion that stamps when a counter or histogram was made.
/// prometheus_client names a counter's stamp without `_total` but a
/// histogram's with its full name (`vllm:iteration_tokens_total_created`).
pub fn created_family_for(name: &str, kind: &str) -> Option<String> {
    if name.ends_with("_created") {
        return None;
    }
    let base = match name.strip_suffix("_total") {
        Some(base) if kind == "counter" => base,
        _ => name,
    };
    Some(format!("{base}_created"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolves_retired_names_to_successors() {
        assert_eq!(
            resolve_name("vllm:gpu_cache_usage_perc"),
            (
                "vllm:kv_cache_usage_perc".to_owned(),
                Some("vllm:gpu_cache_usage_perc".to_owned())
            )
        );
        assert_eq!(
            resolve_name("vllm:num_requests_swapped"),
            ("vllm:num_requests_swapped".to_owned(), None)
        );
        assert_eq!(
            family_group("vllm:gpu_prefix_cache_hits_total"),
            "prefix_cache"
        );
        assert_eq!(family_group("vllm:kv_offload_bytes"), "kv_transfer");
        assert_eq!(family_group("vllm:whatever"), "other");
        assert_eq!(CATALOG.len(), 46);
    }

    #[test]
    fn created_companions() {
        assert_eq!(
            created_family_for("vllm:prompt_tokens_total", "counter").as_deref(),
            Some("vllm:prompt_tokens_created")
        );
        assert_eq!(
            created_family_for("vllm:iteration_tokens_total", "histogram").as_deref(),
            Some("vllm:iteration_tokens_total_created")
        );
        assert_eq!(created_family_for("vllm:x_created", "counter"), None);
    }
}
