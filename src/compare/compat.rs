//! Whether two runs measured the same thing, field by field (the
//! reference's `compatibility` and `config_classes`). A run's fields come
//! from its artifact: the `before` server description, the server's probe
//! answers, the workload record, the observers and the operator's
//! declarations, each with its provenance. docs/compare.md §2.

use std::collections::BTreeMap;

use serde_json::Value;
use sha2::{Digest, Sha256};

use super::ojson::{obj, J};
use crate::pyjson::{dumps_with, get, py_eq};

pub const COMPATIBLE: &str = "compatible";
pub const UNVERIFIED: &str = "unverified";
pub const INCOMPATIBLE: &str = "incompatible";
/// What a comparison may see differ: only allowed fields (`config`); the
/// candidate adds observers to an observer-free baseline (`overhead`); it
/// adds declared observers to shared ones (`incremental`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Config,
    Overhead,
    Incremental,
}

impl Mode {
    /// The name as `--mode` and the reports spell it.
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Config => "config",
            Mode::Overhead => "overhead",
            Mode::Incremental => "incremental",
        }
    }

    /// The mode a flag's text names, if any.
    pub fn from_name(text: &str) -> Option<Self> {
        [Mode::Config, Mode::Overhead, Mode::Incremental]
            .into_iter()
            .find(|m| m.as_str() == text)
    }
}

impl std::fmt::Display for Mode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The plain comparison of two runs' fields (history compares so).
pub const CONFIG: Mode = Mode::Config;
const IDENTITY: &str = "identity";
const LAUNCH: &str = "launch";
const OBSERVATION: &str = "observation";
const LABEL: &str = "label";
const UNCLASSIFIED: &str = "unclassified";
const OBSERVED: &str = "observed";
const REPORTED: &str = "reported";
const INFERRED: &str = "inferred";
const DECLARED: &str = "declared";
const VLLM_CONFIG: &str = "vllm_config";
const VLLM_ENV: &str = "vllm_env";
const SCOPE_VLLM_CONFIG: &str = "scope.vllm_config";
const SCOPE_VLLM_ENV: &str = "scope.vllm_env";
const SCOPE_ENVIRON: &str = "scope.environ";
const REQUIRED_V1: [&str; 6] = [
    "model.weights_digest",
    "engine.version",
    "gpu.name",
    "gpu.driver_version",
    "workload.spec_digest",
    VLLM_CONFIG,
];
const VERIFIED_EVIDENCE: [&str; 3] = [
    "pinned_commit_verified",
    "pinned_snapshot_verified",
    "staged_snapshot_verified",
];

const ALIASES: &[(&str, &str)] = &[
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

const CONFIG_CLASSES_V1: &[(&str, &str)] = &[
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

const VLLM_ENV_CLASSES_V1: &[(&str, &str)] = &[
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

const FIELD_CLASSES_V1: &[(&str, &str)] = &[
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

fn table_get(table: &[(&str, &'static str)], key: &str) -> Option<&'static str> {
    table.iter().find(|(k, _)| *k == key).map(|(_, v)| *v)
}

fn config_class(pointer: &str) -> &'static str {
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

fn field_class(name: &str) -> &'static str {
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

/// One field of a run: its value, where it came from, and how it is known.
#[derive(Debug, Clone, PartialEq)]
pub struct RunField {
    pub value: Value,
    pub source: String,
    pub provenance: &'static str,
    /// A `null` that is a setting (vLLM's configuration), not missing evidence.
    pub null_is_value: bool,
}

fn is_redacted(v: &Value) -> bool {
    get(v, "redacted") == &Value::Bool(true)
}

impl RunField {
    fn new(value: Value, source: &str, provenance: &'static str) -> Self {
        RunField {
            value,
            source: source.to_owned(),
            provenance,
            null_is_value: false,
        }
    }

    pub fn known(&self) -> bool {
        let unavailable = self.value.is_object() && self.value.get("unavailable").is_some();
        let missing = self.value.is_null() && !self.null_is_value;
        !(missing || is_redacted(&self.value) || unavailable)
            && self.provenance != INFERRED
            && self.provenance != DECLARED
    }
}

pub type Fields = BTreeMap<String, RunField>;

/// One field on which two runs differ, or are not known to agree.
#[derive(Debug, Clone, PartialEq)]
pub struct Difference {
    pub name: String,
    pub class: &'static str,
    pub a: Value,
    pub b: Value,
    pub reason: &'static str,
}

impl Difference {
    pub fn to_record(&self) -> J {
        obj([
            ("field", J::from(&self.name)),
            ("class", J::from(self.class)),
            ("a", J::Raw(self.a.clone())),
            ("b", J::Raw(self.b.clone())),
            ("reason", J::from(self.reason)),
        ])
    }
}

/// The result of comparing two runs' fields.
#[derive(Debug, Clone, PartialEq)]
pub struct Compatibility {
    pub status: &'static str,
    pub mode: Mode,
    pub blocking: Vec<Difference>,
    pub unverified: Vec<Difference>,
    pub allowed: Vec<Difference>,
    pub covariates: Vec<Difference>,
    pub observation: Vec<Difference>,
    pub unknown: Vec<String>,
}

impl Compatibility {
    pub fn to_record(&self) -> J {
        let list =
            |items: &Vec<Difference>| J::Arr(items.iter().map(Difference::to_record).collect());
        obj([
            ("status", J::from(self.status)),
            ("mode", J::from(self.mode.as_str())),
            ("classes", J::from("config_classes_v1")),
            ("blocking", list(&self.blocking)),
            ("unverified", list(&self.unverified)),
            ("allowed", list(&self.allowed)),
            ("covariates", list(&self.covariates)),
            ("observation", list(&self.observation)),
            (
                "unknown",
                J::Arr(self.unknown.iter().map(J::from).collect()),
            ),
        ])
    }
}

fn allowance(name: &str) -> String {
    if let Some(pointer) = table_get(ALIASES, name) {
        return format!("{VLLM_CONFIG}{pointer}");
    }
    if name.starts_with('/') {
        return format!("{VLLM_CONFIG}{name}");
    }
    name.to_owned()
}

fn covers(allowance: &str, name: &str) -> bool {
    name == allowance
        || name.starts_with(&format!("{allowance}/"))
        || name.starts_with(&format!("{allowance}."))
}

/// Whether one of the `--allow` names covers a field, as `compatible` decides it.
pub fn allowed_by(allowed: &[String], name: &str) -> bool {
    allowed.iter().any(|a| covers(&allowance(a), name))
}

fn known(item: Option<&RunField>) -> bool {
    item.is_some_and(RunField::known)
}

fn read_scope(fields: &Fields, name: &str) -> bool {
    let scope = if name.starts_with("vllm_config/") {
        Some(SCOPE_VLLM_CONFIG)
    } else if name.starts_with("vllm_env/") {
        Some(SCOPE_VLLM_ENV)
    } else if name.starts_with("environ.") {
        Some(SCOPE_ENVIRON)
    } else {
        None
    };
    scope.is_some_and(|s| known(fields.get(s)))
}

fn value_of(item: Option<&RunField>) -> Value {
    item.map_or(Value::Null, |f| f.value.clone())
}

fn one_sided(name: &str, a: &Fields, b: &Fields) -> Option<Difference> {
    let (first, second) = (a.get(name), b.get(name));
    match (first, second) {
        (None, Some(s)) if read_scope(a, name) => Some(Difference {
            name: name.into(),
            class: classify(name),
            a: Value::Null,
            b: s.value.clone(),
            reason: if s.known() {
                "only_in_b"
            } else {
                "differs_unverified"
            },
        }),
        (Some(f), None) if read_scope(b, name) => Some(Difference {
            name: name.into(),
            class: classify(name),
            a: f.value.clone(),
            b: Value::Null,
            reason: if f.known() {
                "only_in_a"
            } else {
                "differs_unverified"
            },
        }),
        _ => None,
    }
}

fn compared(
    name: &str,
    class: &'static str,
    first: Option<&RunField>,
    second: Option<&RunField>,
) -> Option<Difference> {
    let (a, b) = (value_of(first), value_of(second));
    let make = |reason| {
        Some(Difference {
            name: name.into(),
            class,
            a: a.clone(),
            b: b.clone(),
            reason,
        })
    };
    if known(first) && known(second) {
        if py_eq(&a, &b) {
            return None;
        }
        return make(if class == UNCLASSIFIED {
            "unclassified"
        } else {
            "differs"
        });
    }
    if a.is_null() && b.is_null() {
        return None;
    }
    let disagree = !a.is_null() && !b.is_null() && !py_eq(&a, &b);
    make(if disagree {
        "differs_unverified"
    } else {
        "unknown"
    })
}

fn required_known(name: &str, fields: &Fields) -> bool {
    if name == VLLM_CONFIG {
        return known(fields.get(SCOPE_VLLM_CONFIG));
    }
    known(fields.get(name))
}

/// Whether runs `a` and `b` measured the same thing.
pub fn compatible(a: &Fields, b: &Fields, allowed: &[String], mode: Mode) -> Compatibility {
    let allowances: Vec<String> = allowed.iter().map(|n| allowance(n)).collect();
    let mut c = Compatibility {
        status: COMPATIBLE,
        mode,
        blocking: vec![],
        unverified: vec![],
        allowed: vec![],
        covariates: vec![],
        observation: vec![],
        unknown: vec![],
    };
    let mut names: Vec<&String> = a.keys().chain(b.keys()).collect();
    names.sort();
    names.dedup();
    for name in names {
        let difference = one_sided(name, a, b)
            .or_else(|| compared(name, classify(name), a.get(name), b.get(name)));
        let Some(d) = difference else { continue };
        if d.class == LABEL {
            continue;
        }
        match d.reason {
            "unknown" if d.class == IDENTITY || d.class == UNCLASSIFIED => c.unverified.push(d),
            "unknown" => c.unknown.push(d.name),
            "differs_unverified" => c.unverified.push(d),
            _ => {
                if allowances.iter().any(|al| covers(al, &d.name)) {
                    c.allowed.push(d);
                } else if d.class == LAUNCH {
                    c.covariates.push(d);
                } else if d.class == OBSERVATION && mode != CONFIG {
                    c.observation.push(d);
                } else {
                    c.blocking.push(d);
                }
            }
        }
    }
    let shown: Vec<String> = c.unverified.iter().map(|d| d.name.clone()).collect();
    for name in REQUIRED_V1 {
        if !(shown.iter().any(|s| s == name) || required_known(name, a) && required_known(name, b))
        {
            c.unverified.push(Difference {
                name: name.into(),
                class: IDENTITY,
                a: value_of(a.get(name)),
                b: value_of(b.get(name)),
                reason: "unknown",
            });
        }
    }
    c.status = if !c.blocking.is_empty() {
        INCOMPATIBLE
    } else if !c.unverified.is_empty() {
        UNVERIFIED
    } else {
        COMPATIBLE
    };
    c
}

// ---------------------------------------------------------------- sources

fn section<'a>(doc: &'a Value, name: &str) -> &'a Value {
    let v = get(doc, name);
    if v.is_object() {
        v
    } else {
        &Value::Null
    }
}

fn entries(v: &Value) -> Vec<(&String, &Value)> {
    v.as_object()
        .map(|m| m.iter().collect())
        .unwrap_or_default()
}

/// Every comparable field of one run's artifact.
pub fn run_fields(records: &[Value]) -> Fields {
    let mut fields = Fields::new();
    let manifests = |role: &str| -> Vec<&Value> {
        records
            .iter()
            .filter(|r| {
                get(r, "event_type").as_str() == Some("infer.manifest")
                    && get(r, "role").as_str() == Some(role)
            })
            .collect()
    };
    if let Some(before) = manifests("before").last() {
        let description = get(before, "description");
        fields.extend(description_fields(description));
        fields.extend(launch_bound_fields(records, description));
    }
    // What Stormlog observed outranks what the server reported.
    for (name, item) in probe_fields(records) {
        fields.entry(name).or_insert(item);
    }
    fields.extend(workload_fields(records));
    fields.extend(observer_fields(records));
    if let Some(declared) = manifests("declared").last() {
        for (name, value) in entries(get(declared, "fields")) {
            fields
                .entry(name.clone())
                .or_insert_with(|| RunField::new(value.clone(), "declared", DECLARED));
        }
    }
    fields
}

fn description_fields(description: &Value) -> Fields {
    let mut values: Vec<(String, Value)> = Vec::new();
    let gpus = section(description, "gpus");
    let devices: Vec<&Value> = get(gpus, "devices")
        .as_array()
        .map(|d| {
            d.iter()
                .filter(|d| crate::pyjson::truthy(get(d, "server_pids")))
                .collect()
        })
        .unwrap_or_default();
    values.push((
        "gpu.driver_version".into(),
        get(gpus, "driver_version").clone(),
    ));
    values.push((
        "gpu.cuda_driver_version".into(),
        get(gpus, "cuda_driver_version").clone(),
    ));
    let mut uuids: Vec<String> = devices
        .iter()
        .map(|d| crate::pyjson::str_form(get(d, "uuid")))
        .collect();
    uuids.sort();
    values.push((
        "gpu.uuids".into(),
        if uuids.is_empty() {
            Value::Null
        } else {
            Value::from(uuids)
        },
    ));
    let has_gpus = gpus.as_object().is_some_and(|m| !m.is_empty());
    values.push((
        "gpu.count".into(),
        if has_gpus {
            Value::from(devices.len())
        } else {
            Value::Null
        },
    ));
    let settings: Vec<&Value> = devices.iter().map(|d| section(d, "settings")).collect();
    let mut names: Vec<&String> = settings
        .iter()
        .flat_map(|s| entries(s).into_iter().map(|(k, _)| k))
        .collect();
    names.sort();
    names.dedup();
    for name in names {
        let all: Vec<Value> = settings.iter().map(|s| get(s, name).clone()).collect();
        let mut distinct: Vec<Value> = Vec::new();
        for v in all {
            if !distinct.iter().any(|d| py_eq(d, &v)) {
                distinct.push(v);
            }
        }
        let value = match distinct.len() {
            0 => Value::Null,
            1 => distinct.remove(0),
            _ => Value::from(distinct),
        };
        values.push((format!("gpu.{name}"), value));
    }
    let runtime = section(description, "runtime");
    values.push(("runtime.python".into(), get(runtime, "python").clone()));
    for (package, version) in entries(section(runtime, "packages")) {
        values.push((format!("runtime.{package}"), version.clone()));
    }
    let log = section(description, "log");
    for name in [
        "attention_backend",
        "kv_cache_size_tokens",
        "cudagraph_captures",
    ] {
        if let Some(v) = log.get(name) {
            values.push((format!("effective.{name}"), v.clone()));
        }
    }
    let server = section(description, "server");
    values.push((
        "host.start_method".into(),
        get(section(server, "start_method"), "configured").clone(),
    ));
    values.push((
        "host.nproc".into(),
        get(section(description, "host"), "nproc").clone(),
    ));
    for (name, value) in entries(section(server, "environ")) {
        if !name.starts_with("VLLM_") {
            values.push((format!("environ.{name}"), value.clone()));
        }
    }
    let mut fields: Fields = values
        .into_iter()
        .map(|(n, v)| (n, RunField::new(v, "describe-server", OBSERVED)))
        .collect();
    if get(server, "environ").is_object() {
        fields.insert(
            SCOPE_ENVIRON.into(),
            RunField::new(Value::Bool(true), "describe-server", OBSERVED),
        );
    }
    let model = section(description, "model");
    let evidence = get(model, "identity_evidence").clone();
    let source = format!("describe-server ({})", crate::pyjson::str_form(&evidence));
    let add = |fields: &mut Fields, name: &str, value: Value, provenance| {
        fields.insert(name.into(), RunField::new(value, &source, provenance));
    };
    add(
        &mut fields,
        "model.configured",
        get(model, "configured").clone(),
        OBSERVED,
    );
    add(
        &mut fields,
        "model.configured_revision",
        get(model, "configured_revision").clone(),
        OBSERVED,
    );
    add(
        &mut fields,
        "model.resolved_snapshot",
        get(model, "resolved_snapshot").clone(),
        INFERRED,
    );
    add(
        &mut fields,
        "model.weights_digest",
        get(model, "weights_digest").clone(),
        INFERRED,
    );
    add(
        &mut fields,
        "model.identity_evidence",
        evidence.clone(),
        OBSERVED,
    );
    add(
        &mut fields,
        "server.chat_template_digest",
        get(model, "chat_template_digest").clone(),
        INFERRED,
    );
    add(
        &mut fields,
        "server.generation_config",
        digest(get(model, "generation_config")),
        INFERRED,
    );
    fields
}

fn launch_bound_fields(records: &[Value], description: &Value) -> Fields {
    let server = section(description, "server");
    let binds = |r: &Value| {
        let bound = section(r, "server");
        let (pid, ticks) = (get(server, "pid"), get(server, "start_ticks"));
        !pid.is_null()
            && !ticks.is_null()
            && py_eq(get(bound, "pid"), pid)
            && py_eq(get(bound, "start_ticks"), ticks)
            && py_eq(
                get(r, "boot_id"),
                get(section(description, "host"), "boot_id"),
            )
    };
    let record = records
        .iter()
        .rev()
        .find(|r| get(r, "event_type").as_str() == Some("infer.model_identity") && binds(r));
    let model = record.map_or(&Value::Null, |r| section(r, "model"));
    let evidence = get(model, "identity_evidence");
    let described = section(description, "model");
    let agrees = ["weights_digest", "resolved_snapshot"].iter().all(|n| {
        let d = get(described, n);
        d.is_null() || py_eq(d, get(model, n))
    });
    let verified = evidence
        .as_str()
        .is_some_and(|e| VERIFIED_EVIDENCE.contains(&e));
    if !verified || !agrees {
        return Fields::new();
    }
    let source = format!("experiment runner ({})", crate::pyjson::str_form(evidence));
    [
        ("model.weights_digest", get(model, "weights_digest").clone()),
        (
            "model.resolved_snapshot",
            get(model, "resolved_snapshot").clone(),
        ),
        (
            "server.chat_template_digest",
            get(described, "chat_template_digest").clone(),
        ),
        (
            "server.generation_config",
            digest(get(described, "generation_config")),
        ),
        ("model.identity_evidence", evidence.clone()),
    ]
    .into_iter()
    .map(|(n, v)| (n.to_owned(), RunField::new(v, &source, OBSERVED)))
    .collect()
}

fn probe_fields(records: &[Value]) -> Fields {
    const SERVER_INFO: &str = "/server_info?config_format=json";
    let before: Vec<&Value> = records
        .iter()
        .filter(|r| {
            get(r, "event_type").as_str() == Some("infer.server_probe")
                && get(r, "phase").as_str() == Some("before")
        })
        .collect();
    let answered = before
        .iter()
        .find(|r| crate::pyjson::truthy(get(section(section(r, "answers"), SERVER_INFO), "body")));
    let probe = answered.or(before.first()).copied().unwrap_or(&Value::Null);
    let answers = section(probe, "answers");
    let mut fields = Fields::new();
    let version = get(section(answers, "/version"), "body");
    if version.is_object() {
        fields.insert(
            "engine.version".into(),
            RunField::new(get(version, "version").clone(), "/version", REPORTED),
        );
    }
    let info = get(section(answers, SERVER_INFO), "body");
    if info.is_object() {
        let source = "/server_info";
        let setting = |v: &Value| RunField {
            value: v.clone(),
            source: source.into(),
            provenance: REPORTED,
            null_is_value: true,
        };
        if get(info, "vllm_config").is_object() {
            fields.insert(
                SCOPE_VLLM_CONFIG.into(),
                RunField::new(Value::Bool(true), source, REPORTED),
            );
            let mut leaves = Vec::new();
            collect_leaves(get(info, "vllm_config"), String::new(), &mut leaves);
            for (pointer, value) in leaves {
                fields.insert(format!("{VLLM_CONFIG}{pointer}"), setting(&value));
            }
        }
        if get(info, "vllm_env").is_object() {
            fields.insert(
                SCOPE_VLLM_ENV.into(),
                RunField::new(Value::Bool(true), source, REPORTED),
            );
            for (name, value) in entries(get(info, "vllm_env")) {
                fields.insert(format!("{VLLM_ENV}/{name}"), setting(value));
            }
        }
        for (package, version) in entries(section(section(info, "system_env"), "packages")) {
            fields.insert(
                format!("runtime.{package}"),
                RunField::new(version.clone(), source, REPORTED),
            );
        }
    }
    fields
}

/// Every leaf of a JSON document by RFC 6901 pointer; a redacted marker is a leaf.
fn collect_leaves(value: &Value, pointer: String, out: &mut Vec<(String, Value)>) {
    match value {
        Value::Object(m) if !m.is_empty() && !is_redacted(value) => {
            for (key, item) in m {
                let token = key.replace('~', "~0").replace('/', "~1");
                collect_leaves(item, format!("{pointer}/{token}"), out);
            }
        }
        Value::Array(items) if !items.is_empty() => {
            for (i, item) in items.iter().enumerate() {
                collect_leaves(item, format!("{pointer}/{i}"), out);
            }
        }
        _ => out.push((pointer, value.clone())),
    }
}

fn workload_fields(records: &[Value]) -> Fields {
    let Some(workload) = records
        .iter()
        .find(|r| get(r, "event_type").as_str() == Some("infer.workload"))
    else {
        return Fields::new();
    };
    let (spec, realization) = workload_digests(workload);
    let measurement = get(workload, "measurement");
    let source = "infer.workload";
    [
        ("workload.spec_digest", spec),
        ("workload.realization_digest", realization),
        (
            "workload.timeout_seconds",
            get(measurement, "timeout_seconds").clone(),
        ),
        (
            "workload.drain_timeout_seconds",
            get(measurement, "drain_timeout_seconds").clone(),
        ),
        (
            "workload.request_deadline_seconds",
            get(measurement, "request_deadline_seconds").clone(),
        ),
    ]
    .into_iter()
    .map(|(n, v)| (n.to_owned(), RunField::new(v, source, OBSERVED)))
    .collect()
}

/// The workload's spec and realization digests, recomputed from its record.
pub fn workload_digests(record: &Value) -> (Value, Value) {
    match traffic(record) {
        Some(traffic) => {
            let mut without_seed = traffic.clone();
            if let Value::Object(m) = &mut without_seed {
                m.remove("seed");
            }
            (digest_str(&without_seed), digest_str(&traffic))
        }
        None => (
            get(record, "spec_digest").clone(),
            get(record, "workload_digest").clone(),
        ),
    }
}

fn traffic(spec: &Value) -> Option<Value> {
    let cases = spec.get("cases")?.as_array()?;
    let mut open_loop = false;
    for case in cases {
        let arrival = case.as_object()?.get("arrival");
        let mode = arrival.map_or(&Value::Null, |a| get(a, "mode"));
        if mode.as_str() != Some("closed") {
            open_loop = true;
        }
    }
    let measurement = spec.get("measurement")?;
    let mut shaping = vec!["request_count", "duration_seconds"];
    if open_loop {
        shaping.extend(["max_in_flight", "overflow"]);
    }
    let mut m = serde_json::Map::new();
    for f in shaping {
        m.insert(f.into(), measurement.get(f)?.clone());
    }
    let case_traffic: Option<Vec<Value>> = cases
        .iter()
        .map(|case| {
            let arrival = case.get("arrival")?;
            let trace = get(arrival, "trace");
            if trace.is_null() {
                return Some(case.clone());
            }
            let shaped = serde_json::json!({"arrivals": trace.get("arrivals")?, "digest": trace.get("digest")?});
            let mut arrival = arrival.clone();
            arrival.as_object_mut()?.insert("trace".into(), shaped);
            let mut case = case.clone();
            case.as_object_mut()?.insert("arrival".into(), arrival);
            Some(case)
        })
        .collect();
    let mut t = serde_json::Map::new();
    t.insert("seed".into(), spec.get("seed")?.clone());
    t.insert("generator".into(), spec.get("generator")?.clone());
    t.insert("cases".into(), Value::from(case_traffic?));
    t.insert("measurement".into(), Value::Object(m));
    t.insert("prompts".into(), spec.get("prompts")?.clone());
    t.insert("warmup".into(), spec.get("warmup")?.clone());
    t.insert("decoding".into(), numbers_as_values(spec.get("decoding")?));
    t.insert("tokenizer".into(), spec.get("tokenizer")?.clone());
    t.insert(
        "cache_requested".into(),
        spec.get("cache")?.get("requested")?.clone(),
    );
    let task = spec.get("task").cloned().unwrap_or(Value::from("chat"));
    if task.as_str() != Some("chat") {
        t.insert("text_task_version".into(), Value::from(1));
        t.insert("task".into(), task);
    }
    Some(Value::Object(t))
}

fn numbers_as_values(v: &Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.iter()
                .map(|(k, x)| (k.clone(), numbers_as_values(x)))
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(numbers_as_values).collect()),
        Value::Number(n) if n.is_f64() => match n.as_f64() {
            Some(f) if f.fract() == 0.0 && f.abs() < 9.0e15 => Value::from(f as i64),
            _ => v.clone(),
        },
        _ => v.clone(),
    }
}

fn digest_str(v: &Value) -> Value {
    let canonical = dumps_with(v, None, ",", ":");
    Value::from(format!("{:x}", Sha256::digest(canonical.as_bytes())))
}

fn digest(v: &Value) -> Value {
    if v.is_null() {
        Value::Null
    } else {
        digest_str(v)
    }
}

fn observer_fields(records: &[Value]) -> Fields {
    let session = records
        .iter()
        .find(|r| get(r, "event_type").as_str() == Some("infer.session"));
    let config = session.map_or(&Value::Null, |s| get(s, "config"));
    let mut fields = Fields::new();
    for (name, key) in [
        ("system_sampler", "system_sampler"),
        ("vllm_metrics", "vllm_metrics"),
        ("vllm_spans", "vllm_spans"),
        ("trace", "trace"),
        ("execution", "vllm_execution_dir"),
    ] {
        if let Some(v) = config.get(key) {
            fields.insert(
                format!("observer.{name}"),
                RunField::new(v.clone(), "infer.session", OBSERVED),
            );
        }
    }
    for record in records
        .iter()
        .filter(|r| get(r, "event_type").as_str() == Some("infer.treatments"))
    {
        for item in get(record, "treatments").as_array().into_iter().flatten() {
            let name = crate::pyjson::str_form(get(item, "name"));
            fields.insert(
                format!("observer.treatment:{name}"),
                RunField::new(
                    get(item, "command_sha256").clone(),
                    "experiment runner",
                    OBSERVED,
                ),
            );
        }
    }
    fields
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes_follow_the_longest_pointer_or_prefix() {
        assert_eq!(
            classify("vllm_config/scheduler_config/max_num_seqs"),
            IDENTITY
        );
        assert_eq!(
            classify("vllm_config/model_config/served_model_name"),
            LABEL
        );
        assert_eq!(classify("vllm_config/instance_id"), LAUNCH);
        assert_eq!(classify("vllm_config/unknown_thing"), UNCLASSIFIED);
        assert_eq!(classify("vllm_env/VLLM_PORT"), LAUNCH);
        assert_eq!(classify("environ.STORMLOG_RUN_MARK"), LABEL);
        assert_eq!(classify("environ.STORMLOG_X"), OBSERVATION);
        assert_eq!(classify("workload.realization_digest"), LAUNCH);
        assert_eq!(classify("observer.trace"), OBSERVATION);
    }

    #[test]
    fn an_allowed_alias_moves_a_difference_out_of_blocking() {
        let field = |v: Value| RunField {
            value: v,
            source: "/server_info".into(),
            provenance: REPORTED,
            null_is_value: true,
        };
        let mut a = Fields::new();
        let mut b = Fields::new();
        a.insert(
            "vllm_config/scheduler_config/max_num_seqs".into(),
            field(Value::from(256)),
        );
        b.insert(
            "vllm_config/scheduler_config/max_num_seqs".into(),
            field(Value::from(2)),
        );
        let blocked = compatible(&a, &b, &[], CONFIG);
        assert_eq!(blocked.status, INCOMPATIBLE);
        let allowed = compatible(&a, &b, &["engine.max_num_seqs".to_owned()], CONFIG);
        assert_eq!(allowed.allowed.len(), 1);
        assert_eq!(allowed.status, UNVERIFIED);
    }
}
