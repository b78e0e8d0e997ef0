//! inference-perf's `per_request_lifecycle_metrics.json` (a JSON array, one
//! object per request, times in seconds of a monotonic clock), with the
//! files beside it: `summary_lifecycle_metrics.json`,
//! `stage_N_lifecycle_metrics.json` (one per load stage: each stage is a
//! case), `config.yaml` (the declared load) and
//! `inference-perf.partial.stage_N.yaml` (the experiment id and wall times).
//! The array is read streaming, one request at a time.

use std::collections::BTreeMap;
use std::io::Read;

use serde::Deserialize;
use serde_json::Value;

use super::walk::{Prune, Walker};
use super::{defs, secs_to_ns, Case, Clock, FormatError, Import, Load, Request, Status, Tool};

#[derive(Deserialize)]
struct IpRequest {
    start_time: f64,
    end_time: f64,
    #[serde(default)]
    info: Option<IpInfo>,
    #[serde(default)]
    error: Option<IpError>,
}

#[derive(Deserialize, Default)]
struct IpInfo {
    input_tokens: Option<i64>,
    response_metrics: Option<IpResponse>,
}

#[derive(Deserialize, Default)]
struct IpResponse {
    output_tokens: Option<i64>,
    server_usage: Option<Usage>,
    chunk_times: Option<Vec<f64>>,
    output_token_times: Option<Vec<f64>>,
}

#[derive(Deserialize)]
struct Usage {
    prompt_tokens: Option<i64>,
    completion_tokens: Option<i64>,
    total_tokens: Option<i64>,
}

#[derive(Deserialize)]
struct IpError {
    error_type: Option<String>,
    error_msg: Option<String>,
}

/// The side files, as read by the caller (any may be absent).
#[derive(Default)]
pub struct Side {
    pub summary: Option<Value>,
    /// `stage_N_lifecycle_metrics.json` by N.
    pub stages: BTreeMap<usize, Value>,
    pub config_yaml: Option<String>,
    /// `inference-perf.partial.stage_N.yaml` texts.
    pub partials: Vec<String>,
}

fn request_of(q: IpRequest) -> Request {
    let ok = q.error.is_none();
    let mut r = Request::new(0, Status::Ok);
    if let Some(e) = &q.error {
        let text = format!(
            "{} {}",
            e.error_type.as_deref().unwrap_or(""),
            e.error_msg.as_deref().unwrap_or("")
        );
        let code = super::guidellm::http_status_in(&text);
        let text = text.as_str();
        r.status = Status::of_failure(code, text);
        r.http_status = code;
        r.error_type = e.error_type.clone();
        r.error_message = e.error_msg.clone();
    }
    r.started_at_ns = secs_to_ns(q.start_time);
    r.ended_at_ns = secs_to_ns(q.end_time);
    let e2e = (q.end_time - q.start_time) * 1e3;
    r.e2e_ms = Some(e2e);
    let info = q.info.unwrap_or_default();
    let resp = info.response_metrics.unwrap_or_default();
    let chunks = resp.chunk_times.as_deref().unwrap_or(&[]);
    let tokens_at = resp.output_token_times.as_deref().unwrap_or(&[]);
    r.stream = Some(!chunks.is_empty() || !tokens_at.is_empty());
    if ok {
        if let Some(first) = chunks.first().or(tokens_at.first()) {
            r.ttft_ms = Some((first - q.start_time) * 1e3);
        }
        r.chunk_gaps_ms = defs::gaps_ms(chunks);
    }
    let usage = resp.server_usage.as_ref();
    (r.output_tokens, r.output_token_source) =
        match (usage.and_then(|u| u.completion_tokens), resp.output_tokens) {
            (Some(u), _) => (Some(u), "server_usage"),
            (None, Some(o)) => (Some(o), "transformers"),
            _ => (None, "unknown"),
        };
    (r.prompt_tokens, r.prompt_token_source) =
        match (usage.and_then(|u| u.prompt_tokens), info.input_tokens) {
            (Some(u), _) => (Some(u), "server_usage"),
            (None, Some(i)) => (Some(i), "transformers"),
            _ => (None, "unknown"),
        };
    r.total_tokens =
        usage
            .and_then(|u| u.total_tokens)
            .or(match (r.prompt_tokens, r.output_tokens) {
                (Some(p), Some(o)) => Some(p + o),
                _ => None,
            });
    // inference-perf's own figures (reportgen/base.py): TTFT to the first
    // output token; TPOT from the first to the last output token over the
    // gaps; "normalized" TPOT the whole latency over the tokens (0 without
    // tokens); tokens the client's re-tokenized count.
    if ok {
        let n = resp.output_tokens.unwrap_or(0);
        r.tool.e2e_ms = Some(e2e);
        r.tool.output_tokens = resp.output_tokens;
        r.tool.itl_ms = Some(defs::tpot_including_first(e2e, n).unwrap_or(0.0));
        if tokens_at.len() > 1 {
            let (first, last) = (tokens_at[0], tokens_at[tokens_at.len() - 1]);
            r.tool.ttft_ms = Some((first - q.start_time) * 1e3);
            r.tool.tpot_ms = defs::itl_first_to_last(first, last, n);
        }
    }
    r
}

/// A scalar of a flat `key: value` line of YAML under `section` (enough for
/// the few facts read from inference-perf's config; the whole text is kept).
fn yaml_scalar(text: &str, key: &str) -> Option<String> {
    text.lines().find_map(|l| {
        let t = l.trim_start();
        let rest = t.strip_prefix(key)?.strip_prefix(':')?;
        let v = rest.trim().trim_matches('\'').trim_matches('"');
        (!v.is_empty()).then(|| v.to_owned())
    })
}

/// A scalar `key` directly inside the top-level `section:` of a YAML text.
fn yaml_section_scalar(text: &str, section: &str, key: &str) -> Option<String> {
    let mut inside = false;
    let mut depth: Option<usize> = None;
    for l in text.lines() {
        let lead = l.len() - l.trim_start().len();
        let t = l.trim();
        if t.is_empty() || t.starts_with('#') {
            continue;
        }
        if lead == 0 {
            inside = t == format!("{section}:");
            depth = None;
            continue;
        }
        if !inside {
            continue;
        }
        let d = *depth.get_or_insert(lead);
        if lead != d {
            continue;
        }
        if let Some(v) = t.strip_prefix(key).and_then(|r| r.strip_prefix(':')) {
            let v = v.trim().trim_matches('\'').trim_matches('"');
            return (!v.is_empty()).then(|| v.to_owned());
        }
    }
    None
}

/// The `load.stages` list of config.yaml: each stage's rate, duration and
/// concurrency.
fn yaml_stages(text: &str) -> Vec<BTreeMap<String, String>> {
    let mut out: Vec<BTreeMap<String, String>> = Vec::new();
    let mut in_stages = false;
    let mut indent = 0usize;
    for l in text.lines() {
        let lead = l.len() - l.trim_start().len();
        let t = l.trim();
        if t == "stages:" {
            in_stages = true;
            indent = lead;
            continue;
        }
        if !in_stages || t.is_empty() {
            continue;
        }
        if lead < indent || (lead == indent && !t.starts_with("- ")) {
            in_stages = false;
            continue;
        }
        let (new, kv) = match t.strip_prefix("- ") {
            Some(kv) => (true, kv),
            None => (false, t),
        };
        if new {
            out.push(BTreeMap::new());
        }
        if let (Some(last), Some((k, v))) = (out.last_mut(), kv.split_once(':')) {
            last.insert(k.trim().to_owned(), v.trim().to_owned());
        }
    }
    out
}

/// Which members of a request record are read (the rest is skipped unparsed).
fn ip_plan(path: &[&str], key: &str) -> Prune {
    match (path, key) {
        ([], "start_time" | "end_time" | "error") => Prune::Keep,
        ([], "info") | (["info"], "response_metrics") => Prune::Walk,
        (["info"], "input_tokens") => Prune::Keep,
        (
            ["info", "response_metrics"],
            "output_tokens" | "server_usage" | "chunk_times" | "output_token_times",
        ) => Prune::Keep,
        _ => Prune::Skip,
    }
}

/// Reads the per-request array and the side files into a run.
pub fn parse(reader: impl Read, side: Side) -> Result<Import, FormatError> {
    let mut w = Walker::new(reader);
    let mut imp = Import::new(Tool::InferencePerf, Clock::Monotonic);
    w.begin_array()?;
    let mut i = 0usize;
    let mut first = true;
    while w.next_element(first)? {
        first = false;
        // The request and response texts and the response chunks are most
        // of a record's bytes and no figure needs them: the walker skips
        // them (they stay in the stored original file).
        let raw = w.capture_pruned(&ip_plan)?;
        let q: IpRequest = serde_json::from_slice(&raw).map_err(|e| {
            FormatError::new(
                format!("[{i}]"),
                format!(
                    "{e}; expected an inference-perf request record with start_time and end_time"
                ),
            )
        })?;
        imp.requests.push(request_of(q));
        i += 1;
    }
    if !w.at_end() {
        return Err(w.error("unexpected data after the array").into());
    }
    // Stages: requests in start order, as many to each stage as its file counts.
    let counts: Vec<(usize, usize)> = side
        .stages
        .iter()
        .map(|(n, v)| {
            let c = |k: &str| v.pointer(k).and_then(Value::as_u64).unwrap_or(0) as usize;
            (*n, c("/successes/count") + c("/failures/count"))
        })
        .collect();
    let cfg = side.config_yaml.clone().unwrap_or_default();
    let load_type = yaml_section_scalar(&cfg, "load", "type").unwrap_or_default();
    let stage_cfg = yaml_stages(&cfg);
    let total: usize = counts.iter().map(|c| c.1).sum();
    let staged = !counts.is_empty() && total == imp.requests.len();
    if !counts.is_empty() && !staged {
        imp.notes.push(format!(
            "the stage files count {total} requests but the per-request file has {}: one case holds them all",
            imp.requests.len()
        ));
    }
    let mut order: Vec<usize> = (0..imp.requests.len()).collect();
    order.sort_by(|&a, &b| {
        imp.requests[a]
            .started_at_ns
            .cmp(&imp.requests[b].started_at_ns)
    });
    let stage_list: Vec<(usize, usize)> = if staged {
        counts
    } else {
        vec![(0, imp.requests.len())]
    };
    let mut at = 0usize;
    for (ci, (n, count)) in stage_list.iter().enumerate() {
        for &ri in &order[at..at + count] {
            imp.requests[ri].case = ci;
        }
        at += count;
        let sc = stage_cfg.get(*n);
        let num = |k: &str| {
            sc.and_then(|m| m.get(k))
                .and_then(|v| v.parse::<f64>().ok())
        };
        let rate = num("rate");
        let concurrency = num("concurrency_level").map(|c| c as i64);
        let scheduled_ns = num("duration").and_then(super::secs_to_ns);
        let arrival_mode = match (load_type.as_str(), concurrency) {
            (_, Some(_)) => Some("closed"),
            ("constant", _) => Some("fixed-rate"),
            ("poisson", _) => Some("poisson"),
            _ => None,
        };
        let mut detail = BTreeMap::new();
        for (k, v) in sc.into_iter().flatten() {
            detail.insert(k.clone(), Value::from(v.clone()));
        }
        if staged {
            detail.insert("stage".into(), Value::from(*n));
        }
        let load = Load {
            arrival_mode,
            tool_mode: load_type.clone(),
            rate_per_second: rate,
            concurrency,
            detail,
        };
        imp.cases.push(Case {
            case_id: if staged || load.arrival_mode.is_some() {
                load.case_id()
            } else {
                "all".to_owned()
            },
            load,
            started_at_ns: None,
            ended_at_ns: None,
            scheduled_ns,
            summary: if staged {
                side.stages.get(n).cloned().unwrap_or(Value::Null)
            } else {
                side.summary.clone().unwrap_or(Value::Null)
            },
        });
    }
    super::unique_case_ids(&mut imp.cases);
    for (ci, c) in imp.cases.iter_mut().enumerate() {
        let rs = imp.requests.iter().filter(|r| r.case == ci);
        c.started_at_ns = rs.clone().filter_map(|r| r.started_at_ns).min();
        c.ended_at_ns = rs.filter_map(|r| r.ended_at_ns).max();
    }
    imp.rebase_to_first_instant();
    imp.identity = side
        .partials
        .iter()
        .find_map(|p| yaml_scalar(p, "eid"))
        .map(|e| e.to_owned());
    imp.format_version = side.partials.iter().find_map(|p| yaml_scalar(p, "version"));
    // The stage reports carry wall times (UTC) beside the monotonic
    // instants: the earliest stage start dates the run.
    if let Some((ns, text)) = side
        .partials
        .iter()
        .filter_map(|p| yaml_scalar(p, "start"))
        .filter_map(|t| super::parse_utc(&t).map(|ns| (ns, t)))
        .min()
    {
        imp.wall_start_ns = Some(ns);
        imp.wall_time = Some(format!(
            "{text} (UTC; inference-perf's run.time.start of its first stage)"
        ));
    }
    imp.model = yaml_section_scalar(&cfg, "server", "model_name").filter(|m| m != "null");
    let route = match yaml_section_scalar(&cfg, "api", "type").as_deref() {
        Some("chat") => "/v1/chat/completions",
        Some("completion") => "/v1/completions",
        _ => "",
    };
    imp.endpoint = yaml_section_scalar(&cfg, "server", "base_url")
        .filter(|b| b != "null")
        .map(|b| format!("{}{route}", b.trim_end_matches('/')));
    imp.config = Value::from(cfg);
    imp.summary = side.summary.unwrap_or(Value::Null);
    imp.define_stormlog();
    imp.define(
        "tool.ttft",
        "inference-perf time_to_first_token: start_time -> first output token time, s",
    );
    imp.define(
        "tool.e2e",
        "inference-perf request_latency: end_time - start_time, s",
    );
    imp.define(
        "tool.tpot",
        "inference-perf time_per_output_token: (last output token time - first) / (output_tokens - 1), \
         streamed requests with more than one token time",
    );
    imp.define(
        "tool.itl",
        "inference-perf normalized_time_per_output_token: request_latency / output_tokens (first token \
         included; 0 without tokens)",
    );
    imp.define(
        "tool.inter_token_latency",
        "inference-perf inter_token_latency: every gap between consecutive output token times, pooled",
    );
    imp.define(
        "tool.percentiles",
        "inference-perf: numpy linear interpolation",
    );
    imp.define(
        "tool.failures",
        "inference-perf: records with an `error` object (error_type, error_msg)",
    );
    imp.define(
        "time_base",
        "inference-perf: monotonic seconds (time.perf_counter) with no epoch anchor; stored relative to the first request's start",
    );
    Ok(imp)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn stages_of_a_config() {
        let y = "load:\n  type: constant\n  stages:\n  - rate: 8.0\n    duration: 5\n  - rate: 16.0\n    duration: 4\n  sweep: null\n";
        let s = yaml_stages(y);
        assert_eq!(s.len(), 2);
        assert_eq!(s[1].get("rate").map(String::as_str), Some("16.0"));
        let y2 = format!("api:\n  type: completion\n{y}");
        assert_eq!(
            yaml_section_scalar(&y2, "load", "type").as_deref(),
            Some("constant")
        );
        assert_eq!(
            yaml_section_scalar(&y2, "api", "type").as_deref(),
            Some("completion")
        );
    }
}
