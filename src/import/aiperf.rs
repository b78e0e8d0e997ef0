//! AIPerf's `profile_export.jsonl` (one JSON object a line: `metadata` with
//! epoch-ns instants, `metrics` as `{value, unit}`, `error` on failure) and,
//! beside it, `profile_export_aiperf.json` (the run's configuration, identity
//! and AIPerf's own summary). docs/import.md maps every field.

use serde::Deserialize;
use serde_json::Value;

use super::{defs, Case, Clock, FormatError, Import, Load, Request, Status, Tool};

#[derive(Deserialize)]
struct Line {
    metadata: Meta,
    #[serde(default)]
    metrics: Metrics,
    #[serde(default)]
    error: Option<ErrorDetail>,
}

#[derive(Deserialize, Default)]
struct Meta {
    x_request_id: Option<String>,
    conversation_id: Option<String>,
    turn_index: Option<i64>,
    credit_issued_ns: Option<i64>,
    request_start_ns: Option<i64>,
    request_end_ns: Option<i64>,
    benchmark_phase: Option<String>,
    phase_name: Option<String>,
    was_cancelled: Option<bool>,
}

#[derive(Deserialize)]
struct Metric {
    value: f64,
    #[serde(default)]
    unit: Option<String>,
}

#[derive(Deserialize)]
struct ListMetric {
    value: Vec<f64>,
    #[serde(default)]
    unit: Option<String>,
}

#[derive(Deserialize, Default)]
struct Metrics {
    request_latency: Option<Metric>,
    time_to_first_token: Option<Metric>,
    inter_token_latency: Option<Metric>,
    inter_chunk_latency: Option<ListMetric>,
    output_sequence_length: Option<Metric>,
    input_sequence_length: Option<Metric>,
    usage_completion_tokens: Option<Metric>,
    usage_prompt_tokens: Option<Metric>,
    usage_total_tokens: Option<Metric>,
    error_isl: Option<Metric>,
}

#[derive(Deserialize)]
struct ErrorDetail {
    code: Option<i64>,
    #[serde(rename = "type")]
    kind: Option<String>,
    message: Option<String>,
}

/// A time metric in ms, whatever unit AIPerf wrote.
fn ms(value: f64, unit: Option<&str>, at: &str, name: &str) -> Result<f64, FormatError> {
    let factor = match unit.unwrap_or("ms") {
        "ms" => 1.0,
        "ns" => 1e-6,
        "us" => 1e-3,
        "s" | "sec" => 1e3,
        other => {
            return Err(FormatError::new(
                at,
                format!("metrics.{name}.unit is `{other}`; expected a time unit (ns, us, ms, s)"),
            ))
        }
    };
    Ok(value * factor)
}

fn metric_ms(m: &Option<Metric>, at: &str, name: &str) -> Result<Option<f64>, FormatError> {
    m.as_ref()
        .map(|m| ms(m.value, m.unit.as_deref(), at, name))
        .transpose()
}

fn count(m: &Option<Metric>) -> Option<i64> {
    m.as_ref()
        .filter(|m| m.value.is_finite() && m.value.fract() == 0.0)
        .map(|m| m.value as i64)
}

/// One parsed line: the request and the phase it belongs to.
pub struct Parsed {
    pub request: Request,
    /// AIPerf's phase (`profiling`, `warmup`, …): becomes the case.
    pub phase: String,
}

/// Parses line `line_no` (1-based) of the per-request file; None for a blank line.
pub fn parse_line(line_no: u64, text: &str) -> Result<Option<Parsed>, FormatError> {
    if text.trim().is_empty() {
        return Ok(None);
    }
    let at = format!("line {line_no}");
    let line: Line = serde_json::from_str(text).map_err(|e| {
        FormatError::new(
            &at,
            format!(
                "{e}; expected an AIPerf record {{\"metadata\": {{...}}, \"metrics\": {{...}}}}"
            ),
        )
    })?;
    let m = &line.metadata;
    let phase = m
        .benchmark_phase
        .clone()
        .or_else(|| m.phase_name.clone())
        .unwrap_or_else(|| "profiling".to_owned());
    let mt = &line.metrics;
    let status = match (&line.error, m.was_cancelled) {
        (Some(e), _) => Status::of_failure(e.code, e.message.as_deref().unwrap_or("")),
        (None, Some(true)) => Status::Cancelled,
        _ => Status::Ok,
    };
    let mut r = Request::new(0, status);
    r.phase = if phase == "warmup" {
        "warmup"
    } else {
        "measured"
    };
    r.request_id = m.x_request_id.clone().or_else(|| {
        m.conversation_id
            .as_ref()
            .map(|c| format!("{c}:{}", m.turn_index.unwrap_or(0)))
    });
    r.x_request_id = m.x_request_id.clone();
    r.started_at_ns = m.request_start_ns;
    r.ended_at_ns = m.request_end_ns;
    let e2e = metric_ms(&mt.request_latency, &at, "request_latency")?;
    let ttft = metric_ms(&mt.time_to_first_token, &at, "time_to_first_token")?;
    r.e2e_ms = match (e2e, m.request_start_ns, m.request_end_ns) {
        (Some(v), _, _) => Some(v),
        // A failure has no request_latency: its elapsed time until the error.
        (None, Some(a), Some(b)) if status != Status::Ok && b > a => Some((b - a) as f64 / 1e6),
        _ => None,
    };
    r.ttft_ms = ttft;
    r.stream = Some(ttft.is_some() || mt.inter_chunk_latency.is_some());
    if let Some(l) = &mt.inter_chunk_latency {
        for v in &l.value {
            r.chunk_gaps_ms
                .push(ms(*v, l.unit.as_deref(), &at, "inter_chunk_latency")?);
        }
    }
    let osl = count(&mt.output_sequence_length);
    let usage_out = count(&mt.usage_completion_tokens);
    (r.output_tokens, r.output_token_source) = match (usage_out, osl) {
        (Some(u), _) => (Some(u), "server_usage"),
        (None, Some(o)) => (Some(o), "transformers"),
        _ => (None, "unknown"),
    };
    let isl = count(&mt.input_sequence_length).or_else(|| count(&mt.error_isl));
    (r.prompt_tokens, r.prompt_token_source) = match (count(&mt.usage_prompt_tokens), isl) {
        (Some(u), _) => (Some(u), "server_usage"),
        (None, Some(i)) => (Some(i), "transformers"),
        _ => (None, "unknown"),
    };
    r.total_tokens = count(&mt.usage_total_tokens).or(match (r.prompt_tokens, r.output_tokens) {
        (Some(p), Some(o)) => Some(p + o),
        _ => None,
    });
    r.tool.ttft_ms = ttft;
    r.tool.e2e_ms = e2e;
    r.tool.tpot_ms = metric_ms(&mt.inter_token_latency, &at, "inter_token_latency")?;
    r.tool.output_tokens = osl;
    if let Some(e) = &line.error {
        r.http_status = e.code;
        r.error_type = e.kind.clone();
        r.error_message = e.message.clone();
    }
    // AIPerf issues a credit when the request may be sent; for request-rate
    // phases that is the schedule, but AIPerf does not say which it was, so
    // it is kept as the tool's figure, not as an intended time.
    let _ = m.credit_issued_ns;
    Ok(Some(Parsed { request: r, phase }))
}

/// Assembles the run from the parsed lines and the summary file beside them.
pub fn assemble(parsed: Vec<Parsed>, summary: Option<Value>) -> Import {
    let mut imp = Import::new(Tool::AiPerf, Clock::UnixEpoch);
    imp.format_version = None;
    let mut phases: Vec<String> = Vec::new();
    for p in parsed {
        let case = match phases.iter().position(|x| *x == p.phase) {
            Some(i) => i,
            None => {
                phases.push(p.phase.clone());
                phases.len() - 1
            }
        };
        let mut r = p.request;
        r.case = case;
        imp.requests.push(r);
    }
    let s = summary.unwrap_or(Value::Null);
    let cfg = s.get("input_config").cloned().unwrap_or(Value::Null);
    imp.tool_version = s
        .get("aiperf_version")
        .and_then(Value::as_str)
        .map(str::to_owned);
    imp.format_version = s
        .get("schema_version")
        .and_then(Value::as_str)
        .map(str::to_owned);
    imp.identity = s
        .get("benchmark_id")
        .and_then(Value::as_str)
        .map(|id| format!("aiperf-{id}"));
    imp.model = cfg
        .pointer("/models/items/0/name")
        .and_then(Value::as_str)
        .map(str::to_owned);
    let ep = cfg.get("endpoint");
    let base = ep
        .and_then(|e| e.pointer("/urls/0"))
        .and_then(Value::as_str);
    let path = match ep.and_then(|e| e.get("type")).and_then(Value::as_str) {
        Some("chat") => "/v1/chat/completions",
        Some("completions") => "/v1/completions",
        _ => "",
    };
    imp.endpoint = base.map(|b| format!("{}{path}", b.trim_end_matches('/')));
    let phase_cfgs: Vec<Value> = cfg
        .get("phases")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    for name in &phases {
        let pc = phase_cfgs
            .iter()
            .find(|p| p.get("name").and_then(Value::as_str) == Some(name))
            .or_else(|| (phases.len() == 1).then(|| phase_cfgs.first()).flatten());
        let load = pc.map(load_of).unwrap_or_default();
        imp.cases.push(Case {
            case_id: if name == "warmup" || load.arrival_mode.is_none() {
                name.clone()
            } else {
                load.case_id()
            },
            load,
            started_at_ns: None,
            ended_at_ns: None,
            scheduled_ns: None,
            summary: if name == "profiling" || phases.len() == 1 {
                s.clone()
            } else {
                Value::Null
            },
        });
    }
    if imp.cases.is_empty() {
        imp.cases.push(Case {
            case_id: "profiling".into(),
            load: Load::default(),
            started_at_ns: None,
            ended_at_ns: None,
            scheduled_ns: None,
            summary: s.clone(),
        });
    }
    super::unique_case_ids(&mut imp.cases);
    // Windows: the requests' own span per case.
    for (i, c) in imp.cases.iter_mut().enumerate() {
        let rs = imp.requests.iter().filter(|r| r.case == i);
        c.started_at_ns = rs.clone().filter_map(|r| r.started_at_ns).min();
        c.ended_at_ns = rs.filter_map(|r| r.ended_at_ns).max();
    }
    imp.config = cfg;
    imp.summary = s;
    imp.define_stormlog();
    imp.define(
        "tool.ttft",
        "AIPerf time_to_first_token: request start -> first token response, ms",
    );
    imp.define(
        "tool.e2e",
        "AIPerf request_latency: request start -> last response, ms",
    );
    imp.define(
        "tool.tpot",
        "AIPerf inter_token_latency: (request_latency - time_to_first_token) / (output_sequence_length - 1), ms",
    );
    imp.define(
        "tool.chunk_interarrival",
        "AIPerf inter_chunk_latency: gaps between responses (chunks), ms",
    );
    imp.define(
        "tool.output_tokens",
        "AIPerf output_sequence_length: AIPerf's tokenizer over the output text",
    );
    imp.define(
        "tool.percentiles",
        "AIPerf: numpy linear interpolation (p1..p99), over successful requests",
    );
    imp.define(
        "tool.failures",
        "AIPerf: records with an `error` object; request_count counts successes only",
    );
    imp.define(
        "time_base",
        "AIPerf: epoch nanoseconds (time.time_ns), stored as is",
    );
    imp
}

fn load_of(p: &Value) -> Load {
    let kind = p
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_owned();
    let rate = p
        .get("request_rate")
        .and_then(Value::as_f64)
        .or_else(|| p.get("rate").and_then(Value::as_f64));
    let concurrency = p.get("concurrency").and_then(Value::as_i64);
    let arrival_mode = match kind.as_str() {
        "concurrency" => Some("closed"),
        "request_rate" | "poisson" => match p.get("arrival_pattern").and_then(Value::as_str) {
            Some("constant") => Some("fixed-rate"),
            _ => Some("poisson"),
        },
        "constant" => Some("fixed-rate"),
        _ => None,
    };
    let mut detail = std::collections::BTreeMap::new();
    for (k, v) in p.as_object().into_iter().flatten() {
        detail.insert(k.clone(), v.clone());
    }
    Load {
        arrival_mode,
        tool_mode: kind,
        rate_per_second: rate,
        concurrency,
        detail,
    }
}

/// AIPerf's per-request ITL recomputed from its own fields (for checks).
pub fn tool_itl(r: &Request) -> Option<f64> {
    defs::tpot_excluding_first(r.tool.e2e_ms?, r.tool.ttft_ms?, r.tool.output_tokens?)
}
