//! An [`Import`] as stormlog artifact records (docs/artifact.md §3): one
//! `infer.session`, one `infer.workload` with each case's declared load, an
//! `infer.phase_window` per case and an `infer.request` per request, so the
//! ingest stores an imported run in the same tables as a profiled one. The
//! tool's own per-request figures ride along under the request's `tool` key
//! (kept in `requests.extra`).

use serde::Serialize;
use serde_json::{json, Value};

use super::{Case, Import, Request};

/// The header records (session, workload, windows), as JSON lines.
pub fn header_lines(imp: &Import, run_id: &str) -> Vec<String> {
    // A monotonic run's instants start at 0: the session is dated only by
    // the wall time the tool recorded, if any.
    let start = imp.started_ns();
    let mut out = Vec::new();
    let stream = imp.requests.iter().find_map(|r| r.stream);
    out.push(
        json!({
            "event_type": "infer.session",
            "schema_version": 1,
            "session_id": run_id,
            "status": "completed",
            "timestamp_ns": start,
            "config": {
                "model": imp.model,
                "endpoint": imp.endpoint,
                "stream": stream,
                "imported_from": {
                    "tool": imp.tool.name(),
                    "tool_version": imp.tool_version,
                    "format": imp.tool.format(),
                    "clock_domain": imp.clock.domain(imp.tool),
                    "clock_kind": imp.clock.kind(),
                    "wall_time": imp.wall_time,
                },
            },
        })
        .to_string(),
    );
    let cases: Vec<Value> = imp.cases.iter().map(workload_case).collect();
    out.push(
        json!({
            "event_type": "infer.workload",
            "schema_version": 1,
            "session_id": run_id,
            "generator": {"name": imp.tool.name(), "version": imp.tool_version},
            "cases": cases,
        })
        .to_string(),
    );
    for c in &imp.cases {
        if c.started_at_ns.is_none() && c.ended_at_ns.is_none() {
            continue;
        }
        out.push(
            json!({
                "event_type": "infer.phase_window",
                "schema_version": 1,
                "session_id": run_id,
                "case_id": c.case_id,
                "phase": "measured",
                "arrival_mode": c.load.arrival_mode,
                "started_at_ns": c.started_at_ns,
                "window_ended_at_ns": c.ended_at_ns,
                "drained_at_ns": c.ended_at_ns,
                "stopped_early": false,
                "scheduled_endpoint_offset_ns": c.scheduled_ns,
                "scheduled_arrivals": match (c.scheduled_ns, c.load.rate_per_second) {
                    (Some(ns), Some(rate)) if c.load.concurrency.is_none() => {
                        Some((ns as f64 / 1e9 * rate).round() as i64)
                    }
                    _ => None,
                },
            })
            .to_string(),
        );
    }
    out
}

fn workload_case(c: &Case) -> Value {
    let mut arrival = serde_json::Map::new();
    arrival.insert("mode".into(), json!(c.load.arrival_mode));
    if let Some(r) = c.load.rate_per_second {
        arrival.insert("rate_per_second".into(), json!(r));
    }
    arrival.insert("tool_mode".into(), json!(c.load.tool_mode));
    if !c.load.detail.is_empty() {
        arrival.insert("declared".into(), json!(c.load.detail));
    }
    json!({
        "case_id": c.case_id,
        "arrival": arrival,
        "concurrency": c.load.concurrency,
    })
}

#[derive(Serialize)]
struct ToolOut<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    ttft_ms: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    e2e_ms: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tpot_ms: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    itl_ms: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    output_tokens: Option<i64>,
    tool: &'a str,
}

#[derive(Serialize)]
struct RequestOut<'a> {
    event_type: &'static str,
    schema_version: i64,
    session_id: &'a str,
    request_id: &'a str,
    x_request_id: Option<&'a str>,
    case_id: &'a str,
    phase: &'a str,
    status: &'a str,
    request_index: i64,
    started_at_ns: Option<i64>,
    ended_at_ns: Option<i64>,
    intended_at_ns: Option<i64>,
    timestamp_ns: Option<i64>,
    e2e_latency_ms: Option<f64>,
    ttft_ms: Option<f64>,
    first_chunk_latency_ms: Option<f64>,
    dispatch_lag_ms: Option<f64>,
    chunk_interarrival_ms: &'a [f64],
    stream: Option<bool>,
    prompt_tokens: Option<i64>,
    output_tokens: Option<i64>,
    total_tokens: Option<i64>,
    output_token_source: &'a str,
    prompt_token_source: &'a str,
    arrival_mode: Option<&'a str>,
    concurrency: Option<i64>,
    endpoint: Option<&'a str>,
    model: Option<&'a str>,
    http_status: Option<i64>,
    finish_reason: Option<&'a str>,
    error_type: Option<&'a str>,
    error_message: Option<&'a str>,
    response_id: Option<&'a str>,
    tool: ToolOut<'a>,
}

/// One request as an `infer.request` line. `index` is its position among
/// its case's requests (the artifact's `request_index`).
pub fn request_line(imp: &Import, run_id: &str, r: &Request, index: i64) -> String {
    let case = imp.cases.get(r.case);
    let case_id = case.map_or("unknown", |c| c.case_id.as_str());
    let own_id;
    let request_id = match &r.request_id {
        Some(id) => id.as_str(),
        None => {
            own_id = format!("{case_id}_{}_{index}", r.phase);
            own_id.as_str()
        }
    };
    let lag = match (r.started_at_ns, r.intended_at_ns) {
        (Some(s), Some(i)) => Some((s - i) as f64 / 1e6),
        _ => None,
    };
    let out = RequestOut {
        event_type: "infer.request",
        schema_version: 1,
        session_id: run_id,
        request_id,
        x_request_id: r.x_request_id.as_deref(),
        case_id,
        phase: r.phase,
        status: r.status.as_str(),
        request_index: index,
        started_at_ns: r.started_at_ns,
        ended_at_ns: r.ended_at_ns,
        intended_at_ns: r.intended_at_ns,
        timestamp_ns: r.started_at_ns,
        e2e_latency_ms: r.e2e_ms,
        ttft_ms: r.ttft_ms,
        first_chunk_latency_ms: r.ttft_ms,
        dispatch_lag_ms: lag,
        chunk_interarrival_ms: &r.chunk_gaps_ms,
        stream: r.stream,
        prompt_tokens: r.prompt_tokens,
        output_tokens: r.output_tokens,
        total_tokens: r.total_tokens,
        output_token_source: r.output_token_source,
        prompt_token_source: r.prompt_token_source,
        arrival_mode: case.and_then(|c| c.load.arrival_mode),
        concurrency: case.and_then(|c| c.load.concurrency),
        endpoint: imp.endpoint.as_deref(),
        model: imp.model.as_deref(),
        http_status: r.http_status,
        finish_reason: r.finish_reason.as_deref(),
        error_type: r.error_type.as_deref(),
        error_message: r.error_message.as_deref(),
        response_id: r.response_id.as_deref(),
        tool: ToolOut {
            ttft_ms: r.tool.ttft_ms,
            e2e_ms: r.tool.e2e_ms,
            tpot_ms: r.tool.tpot_ms,
            itl_ms: r.tool.itl_ms,
            output_tokens: r.tool.output_tokens,
            tool: imp.tool.name(),
        },
    };
    // Every value is a plain number, string or list: serialising cannot fail.
    serde_json::to_string(&out).unwrap_or_default()
}

/// The `extra` object of a request row: the tool's own figures under `tool`.
pub fn tool_extra(imp: &Import, r: &Request) -> String {
    #[derive(Serialize)]
    struct Extra<'a> {
        tool: ToolOut<'a>,
    }
    let out = Extra {
        tool: ToolOut {
            ttft_ms: r.tool.ttft_ms,
            e2e_ms: r.tool.e2e_ms,
            tpot_ms: r.tool.tpot_ms,
            itl_ms: r.tool.itl_ms,
            output_tokens: r.tool.output_tokens,
            tool: imp.tool.name(),
        },
    };
    serde_json::to_string(&out).unwrap_or_default()
}

/// The request id a request is stored under: the tool's, else
/// `<case>_<phase>_<index>` as stormlog names its own.
pub fn request_id(imp: &Import, r: &Request, index: i64) -> String {
    match &r.request_id {
        Some(id) => id.clone(),
        None => {
            let case = imp
                .cases
                .get(r.case)
                .map_or("unknown", |c| c.case_id.as_str());
            format!("{case}_{}_{index}", r.phase)
        }
    }
}

/// Each request's index within its case, in file order.
pub fn request_indexes(imp: &Import) -> Vec<i64> {
    let mut next = vec![0i64; imp.cases.len().max(1)];
    imp.requests
        .iter()
        .map(|r| {
            let slot = r.case.min(next.len() - 1);
            let i = next[slot];
            next[slot] += 1;
            i
        })
        .collect()
}
