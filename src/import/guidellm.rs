//! GuideLLM's `benchmarks.json`: `metadata`, `config`, then `benchmarks[i]`
//! (one per strategy of a sweep, each a case) with `requests.successful`,
//! `requests.errored` and `requests.incomplete` lists of per-request stats,
//! instants in epoch seconds (`info.timings`). Read streaming: one request
//! at a time, never the whole document as a tree.

use std::collections::BTreeMap;
use std::io::Read;

use serde::Deserialize;
use serde_json::{Map, Value};

use super::walk::{Prune, Walker};
use super::{defs, secs_to_ns, Case, Clock, FormatError, Import, Load, Request, Status, Tool};

#[derive(Deserialize)]
struct GRequest {
    request_id: Option<String>,
    response_id: Option<String>,
    #[serde(default)]
    info: GInfo,
    prompt_tokens: Option<i64>,
    output_tokens: Option<i64>,
    total_tokens: Option<i64>,
    request_start_time: Option<f64>,
    request_end_time: Option<f64>,
    request_latency: Option<f64>,
    time_to_first_token_ms: Option<f64>,
    time_per_output_token_ms: Option<f64>,
    inter_token_latency_ms: Option<f64>,
    /// Only whether it is there: null reads as None.
    response_metrics: Option<serde::de::IgnoredAny>,
}

#[derive(Deserialize, Default)]
struct GInfo {
    status: Option<String>,
    error: Option<String>,
    #[serde(default)]
    timings: GTimings,
}

#[derive(Deserialize, Default)]
struct GTimings {
    targeted_start: Option<f64>,
    request_start: Option<f64>,
    first_token_iteration: Option<f64>,
    request_end: Option<f64>,
}

/// Which members of a request stats object are read (the rest is skipped
/// unparsed; the fields of [`GRequest`]).
fn g_plan(path: &[&str], key: &str) -> Prune {
    match (path, key) {
        (
            [],
            "request_id"
            | "response_id"
            | "info"
            | "prompt_tokens"
            | "output_tokens"
            | "total_tokens"
            | "request_start_time"
            | "request_end_time"
            | "request_latency"
            | "time_to_first_token_ms"
            | "time_per_output_token_ms"
            | "inter_token_latency_ms"
            | "response_metrics",
        ) => Prune::Keep,
        _ => Prune::Skip,
    }
}

fn fmt_err(at: &str, e: impl std::fmt::Display, what: &str) -> FormatError {
    FormatError::new(at, format!("{e}; expected {what}"))
}

/// The HTTP status an error text names (`HTTP Error 500`, `status code
/// 429`, `Server error '503 …'`, `"code": 500`, or a bare reason phrase such
/// as `Internal Server Error`), or None.
pub fn http_status_in(text: &str) -> Option<i64> {
    let lower = text.to_ascii_lowercase();
    for key in [
        "http error ",
        "status code ",
        "http ",
        "error '",
        "status: ",
        "status_code=",
        "\"code\": ",
    ] {
        let mut from = 0;
        while let Some(i) = lower[from..].find(key) {
            let at = from + i + key.len();
            let digits: String = lower[at..]
                .chars()
                .take_while(char::is_ascii_digit)
                .collect();
            if digits.len() == 3 {
                return digits.parse().ok();
            }
            from = at;
        }
    }
    const PHRASES: &[(&str, i64)] = &[
        ("internal server error", 500),
        ("too many requests", 429),
        ("service unavailable", 503),
        ("bad gateway", 502),
        ("gateway timeout", 504),
        ("bad request", 400),
        ("not found", 404),
    ];
    PHRASES
        .iter()
        .find(|(p, _)| lower.contains(p))
        .map(|(_, code)| *code)
}

fn request_of(g: GRequest, kind: &str, case: usize, rate_driven: bool) -> Request {
    let t = &g.info.timings;
    let status = match kind {
        "successful" => Status::Ok,
        "incomplete" => Status::Cancelled,
        _ => {
            let text = g.info.error.as_deref().unwrap_or("");
            Status::of_failure(http_status_in(text), text)
        }
    };
    let mut r = Request::new(case, status);
    r.request_id = g.request_id.clone();
    r.response_id = g.response_id.clone();
    let start = t.request_start.or(g.request_start_time);
    let end = t.request_end.or(g.request_end_time);
    r.started_at_ns = start.and_then(secs_to_ns);
    r.ended_at_ns = end.and_then(secs_to_ns);
    if rate_driven {
        r.intended_at_ns = t.targeted_start.and_then(secs_to_ns);
    }
    r.e2e_ms = match (start, end) {
        (Some(a), Some(b)) => Some((b - a) * 1e3),
        _ => None,
    };
    if status == Status::Ok {
        r.ttft_ms = match (start, t.first_token_iteration) {
            (Some(a), Some(f)) => Some((f - a) * 1e3),
            _ => None,
        };
    }
    r.stream = Some(t.first_token_iteration.is_some());
    r.prompt_tokens = g.prompt_tokens;
    r.output_tokens = g.output_tokens;
    r.total_tokens = g.total_tokens;
    // GuideLLM prefers the server's usage (response_metrics) when present;
    // otherwise its counts come from its own tokenizer.
    let source = if g.response_metrics.is_some() {
        "server_usage"
    } else {
        "transformers"
    };
    r.output_token_source = if g.output_tokens.is_some() {
        source
    } else {
        "unknown"
    };
    r.prompt_token_source = if g.prompt_tokens.is_some() {
        source
    } else {
        "unknown"
    };
    r.tool.ttft_ms = g.time_to_first_token_ms;
    r.tool.e2e_ms = g.request_latency.map(|s| s * 1e3);
    r.tool.tpot_ms = g.time_per_output_token_ms;
    r.tool.itl_ms = g.inter_token_latency_ms;
    if status != Status::Ok {
        r.http_status = g.info.error.as_deref().and_then(http_status_in);
        r.error_message = g.info.error.clone();
        r.error_type = g.info.status.clone();
    }
    r
}

fn parse_value(raw: &[u8], at: &str) -> Result<Value, FormatError> {
    serde_json::from_slice(raw).map_err(|e| fmt_err(at, e, "JSON"))
}

/// Reads a whole `benchmarks.json`.
pub fn parse(reader: impl Read) -> Result<Import, FormatError> {
    let mut w = Walker::new(reader);
    let mut imp = Import::new(Tool::GuideLlm, Clock::UnixEpoch);
    let mut top = Map::new();
    let mut saw_benchmarks = false;
    w.begin_object().map_err(FormatError::from)?;
    let mut first = true;
    while let Some(key) = w.next_key(first)? {
        first = false;
        if key != "benchmarks" {
            let raw = w.capture()?;
            top.insert(key.clone(), parse_value(&raw, &key)?);
            continue;
        }
        saw_benchmarks = true;
        w.begin_array()?;
        let mut i = 0usize;
        let mut first_b = true;
        while w.next_element(first_b)? {
            first_b = false;
            benchmark(&mut w, &mut imp, i)?;
            i += 1;
        }
    }
    if !w.at_end() {
        return Err(w.error("unexpected data after the document").into());
    }
    if !saw_benchmarks {
        return Err(FormatError::new(
            "benchmarks",
            "missing; expected GuideLLM's `benchmarks` list (is this a GuideLLM benchmarks.json?)",
        ));
    }
    let meta = top.get("metadata").cloned().unwrap_or(Value::Null);
    imp.tool_version = meta
        .get("guidellm_version")
        .and_then(Value::as_str)
        .map(str::to_owned);
    imp.format_version = meta.get("version").map(|v| match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    });
    let config = top.get("config").cloned().unwrap_or(Value::Null);
    let backend = config.pointer("/spec/backend");
    imp.model = backend
        .and_then(|b| b.get("model"))
        .and_then(Value::as_str)
        .map(str::to_owned);
    imp.endpoint = backend.and_then(|b| {
        let target = b.get("target").and_then(Value::as_str)?;
        let route = b
            .get("request_format")
            .and_then(Value::as_str)
            .unwrap_or("");
        Some(format!("{}{route}", target.trim_end_matches('/')))
    });
    imp.config = config;
    imp.summary = Value::Object(top);
    imp.define_stormlog();
    imp.define(
        "tool.ttft",
        "GuideLLM time_to_first_token_ms: request_start -> first token iteration, ms",
    );
    imp.define(
        "tool.e2e",
        "GuideLLM request_latency: request_start -> request_end, s (stored in ms)",
    );
    imp.define(
        "tool.tpot",
        "GuideLLM time_per_output_token_ms: request_latency / output_tokens (first token included); \
         summarised weighted by output tokens",
    );
    imp.define(
        "tool.itl",
        "GuideLLM inter_token_latency_ms: (last token - first token) / (output_tokens - 1); \
         summarised weighted by output_tokens - 1",
    );
    imp.define(
        "tool.percentiles",
        "GuideLLM: the sorted value at index int(q/100 * n), no interpolation (token-weighted for TPOT and ITL)",
    );
    imp.define(
        "tool.failures",
        "GuideLLM: requests.errored (info.error) and requests.incomplete (cancelled) are kept apart from successes",
    );
    imp.define("time_base", "GuideLLM: epoch seconds (float), stored as ns");
    super::unique_case_ids(&mut imp.cases);
    if imp.cases.is_empty() {
        imp.notes.push("the file has no benchmarks".into());
    }
    Ok(imp)
}

/// Walks `benchmarks[i]`: its requests streaming, the rest kept as JSON.
fn benchmark(w: &mut Walker<impl Read>, imp: &mut Import, i: usize) -> Result<(), FormatError> {
    let here = format!("benchmarks[{i}]");
    w.begin_object()?;
    let case = imp.cases.len();
    let mut rest = Map::new();
    let mut pending: Vec<(String, GRequest)> = Vec::new();
    let mut first = true;
    while let Some(key) = w.next_key(first)? {
        first = false;
        if key != "requests" {
            let raw = w.capture()?;
            rest.insert(key.clone(), parse_value(&raw, &format!("{here}.{key}"))?);
            continue;
        }
        if w.null()? {
            continue;
        }
        w.begin_object()?;
        let mut first_k = true;
        while let Some(kind) = w.next_key(first_k)? {
            first_k = false;
            if !matches!(kind.as_str(), "successful" | "errored" | "incomplete") || w.null()? {
                // `total` repeats the three lists (or is null).
                w.skip()?;
                continue;
            }
            w.begin_array()?;
            let mut j = 0usize;
            let mut first_e = true;
            while w.next_element(first_e)? {
                first_e = false;
                // The prompt, the output text and the token metrics are
                // skipped by the walker: no figure needs them.
                let raw = w.capture_pruned(&g_plan)?;
                let g: GRequest = serde_json::from_slice(&raw).map_err(|e| {
                    fmt_err(
                        &format!("{here}.requests.{kind}[{j}]"),
                        e,
                        "a GuideLLM request stats object",
                    )
                })?;
                pending.push((kind.clone(), g));
                j += 1;
            }
        }
    }
    let strategy = rest
        .get("config")
        .and_then(|c| c.get("strategy"))
        .cloned()
        .unwrap_or(Value::Null);
    let kind = strategy
        .get("type_")
        .and_then(Value::as_str)
        .unwrap_or("benchmark")
        .to_owned();
    let rate = strategy.get("rate").and_then(Value::as_f64);
    let streams = strategy.get("streams").and_then(Value::as_i64);
    let max_conc = strategy.get("max_concurrency").and_then(Value::as_i64);
    let (arrival_mode, concurrency) = match kind.as_str() {
        "constant" => (Some("fixed-rate"), None),
        "poisson" => (Some("poisson"), None),
        "synchronous" => (Some("closed"), Some(1)),
        "concurrent" => (Some("closed"), streams),
        "throughput" => (Some("closed"), max_conc),
        _ => (None, None),
    };
    let rate_driven = matches!(kind.as_str(), "constant" | "poisson");
    let mut detail = BTreeMap::new();
    if let Value::Object(m) = &strategy {
        for (k, v) in m {
            detail.insert(k.clone(), v.clone());
        }
    }
    let start = rest.get("start_time").and_then(Value::as_f64);
    let end = rest.get("end_time").and_then(Value::as_f64);
    for (kind, g) in pending {
        imp.requests.push(request_of(g, &kind, case, rate_driven));
    }
    if let Some(id) = rest
        .get("config")
        .and_then(|c| c.get("run_id"))
        .and_then(Value::as_str)
    {
        imp.identity.get_or_insert_with(|| format!("guidellm-{id}"));
    }
    let load = Load {
        arrival_mode,
        tool_mode: kind,
        rate_per_second: rate.filter(|_| rate_driven),
        concurrency,
        detail,
    };
    imp.cases.push(Case {
        case_id: load.case_id(),
        load,
        started_at_ns: start.and_then(secs_to_ns),
        ended_at_ns: end.and_then(secs_to_ns),
        scheduled_ns: None,
        summary: Value::Object(rest),
    });
    Ok(())
}

/// GuideLLM's own per-request ITL from the raw token times (for checks).
pub fn itl_from_timings(first_token_s: f64, last_token_s: f64, tokens: i64) -> Option<f64> {
    defs::itl_first_to_last(first_token_s, last_token_s, tokens)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn http_status_is_read_from_error_text() {
        assert_eq!(
            http_status_in("HTTPStatusError: Server error '500 Internal Server Error' for url"),
            Some(500)
        );
        assert_eq!(http_status_in("status code 429"), Some(429));
        assert_eq!(http_status_in("HTTP Error 500"), Some(500));
        assert_eq!(http_status_in("Internal Server Error"), Some(500));
        assert_eq!(http_status_in("{\"code\": 503}"), Some(503));
        assert_eq!(http_status_in("connection refused"), None);
    }
}
