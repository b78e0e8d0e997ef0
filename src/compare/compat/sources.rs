//! Where a run's comparable fields are read from: the server description,
//! its launch-bound model identity, the probe answers, the workload, the
//! observers and the operator's declared treatments.

use super::*;

pub(super) fn section<'a>(doc: &'a Value, name: &str) -> &'a Value {
    let v = get(doc, name);
    if v.is_object() {
        v
    } else {
        &Value::Null
    }
}

pub(super) fn entries(v: &Value) -> Vec<(&String, &Value)> {
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

pub(super) fn description_fields(description: &Value) -> Fields {
    let mut values: Vec<(String, Value)> = Vec::new();
    let gpus = section(description, "gpus");
    let devices: Vec<&Value> = get(gpus, "devices")
        .as_array()
        .map(|d| {
            d.iter()
                .filter(|d| crate::py::json::truthy(get(d, "server_pids")))
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
        .map(|d| crate::py::json::str_form(get(d, "uuid")))
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
    let source = format!("describe-server ({})", crate::py::json::str_form(&evidence));
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

pub(super) fn launch_bound_fields(records: &[Value], description: &Value) -> Fields {
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
    let source = format!(
        "experiment runner ({})",
        crate::py::json::str_form(evidence)
    );
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

pub(super) fn probe_fields(records: &[Value]) -> Fields {
    const SERVER_INFO: &str = "/server_info?config_format=json";
    let before: Vec<&Value> = records
        .iter()
        .filter(|r| {
            get(r, "event_type").as_str() == Some("infer.server_probe")
                && get(r, "phase").as_str() == Some("before")
        })
        .collect();
    let answered = before.iter().find(|r| {
        crate::py::json::truthy(get(section(section(r, "answers"), SERVER_INFO), "body"))
    });
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
pub(super) fn collect_leaves(value: &Value, pointer: String, out: &mut Vec<(String, Value)>) {
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

pub(super) fn workload_fields(records: &[Value]) -> Fields {
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

pub(super) fn traffic(spec: &Value) -> Option<Value> {
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

pub(super) fn numbers_as_values(v: &Value) -> Value {
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

pub(super) fn digest_str(v: &Value) -> Value {
    let canonical = dumps_with(v, None, ",", ":");
    Value::from(format!("{:x}", Sha256::digest(canonical.as_bytes())))
}

pub(super) fn digest(v: &Value) -> Value {
    if v.is_null() {
        Value::Null
    } else {
        digest_str(v)
    }
}

pub(super) fn observer_fields(records: &[Value]) -> Fields {
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
            let name = crate::py::json::str_form(get(item, "name"));
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
