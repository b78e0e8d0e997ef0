//! The analysis report (docs/report.md): assembled from a loaded run by the pure
//! passes in `analysis`, `slo` and `join`, and rendered as the reference's JSON
//! or text. Renderers return strings; only the CLI writes them out.
pub mod execution_text;
pub mod imported;
pub mod judge;
pub mod people;
mod segments;
pub mod text;

use std::collections::HashSet;

use serde_json::{json, Map, Value};

use crate::analysis::case::{self, RunContext};
use crate::analysis::observers;
use crate::model::{Request, RunData};
use crate::py::json as pyjson;

/// Everything besides the stored run that a report depends on: the policy
/// given on the command line, server telemetry, external spans and the
/// server-join flags.
#[derive(Debug, Default)]
pub struct Inputs {
    /// A policy from `--slo`/`--slo-file` (replaces a recorded one).
    pub policy: Option<(crate::slo::Policy, crate::slo::PolicySource)>,
    /// Server telemetry samples (all files, in order); `telemetry_configured`
    /// says whether any telemetry was given at all.
    pub server_samples: Vec<crate::join::ServerSample>,
    pub telemetry_configured: bool,
    pub direct_server: bool,
    pub clock_offset_ns: Option<i64>,
    pub clock_uncertainty_ns: Option<i64>,
    /// Spans from `--vllm-spans` files (stamped records).
    pub external_spans: Vec<Value>,
    /// Slices of each case's measured phase to report on their own
    /// (`--segment`), and which requests belong to them.
    pub segments: Vec<crate::analysis::segment::Segment>,
    pub membership: crate::analysis::segment::Membership,
}

/// Why a report could not be built; carries the exit status.
#[derive(Debug, thiserror::Error)]
#[error("{message}")]
pub struct ReportError {
    pub message: String,
    pub exit: crate::exit::Exit,
}

/// A built report: the JSON value plus what the text renderer needs besides.
#[derive(Debug, Clone)]
pub struct Report {
    pub json: Value,
    /// Observer names in the reference's order (the JSON map is sorted).
    pub observer_order: Vec<String>,
    /// Policy lines of the text report (SLO policy and replaced policies).
    pub policy_lines: Vec<String>,
    /// Server telemetry lines (run level), and per case.
    pub server_lines: Vec<String>,
    pub server_case_lines: std::collections::BTreeMap<String, Vec<String>>,
    /// Warnings to print on stderr before the report.
    pub warnings: Vec<String>,
    /// Lines about a run imported from another tool (report/imported.rs).
    pub import_lines: Vec<String>,
}

impl Report {
    /// `json.dumps(report, indent=2, sort_keys=True)` and a newline.
    pub fn to_json(&self) -> String {
        let mut s = pyjson::dumps_pretty(&self.json);
        s.push('\n');
        s
    }

    pub fn to_text(&self) -> String {
        let mut text = text::render(self);
        for line in &self.import_lines {
            text.push_str(line);
            text.push('\n');
        }
        text
    }
}

/// What the run's summary and the server join need of a case, gathered in
/// the case's own parallel work rather than in passes over the whole run
/// after it.
struct CaseTally {
    /// Measured requests of the case.
    requests: usize,
    /// Unsuccessful ones, by status.
    failed: std::collections::BTreeMap<String, i64>,
    /// First start and last end of the successful ones (the join's window),
    /// as the request figures found it.
    window: Option<(i64, i64)>,
}

/// Adds a run of one case's requests to the case's list: moved in when it
/// is the case's first.
fn put_run<'r>(
    by_case: &mut std::collections::BTreeMap<String, Vec<&'r Request>>,
    key: &str,
    run: &mut Vec<&'r Request>,
) {
    let list = by_case.entry(key.to_owned()).or_default();
    if list.is_empty() {
        std::mem::swap(list, run);
    } else {
        list.append(run);
    }
}

/// Builds the report of a loaded run (docs/report.md §1, in the reference's order).
pub fn build(data: &RunData, inputs: Inputs) -> Result<Report, ReportError> {
    use crate::exit::Exit;
    let recorded: Vec<&Value> = data.of_type("infer.slo").collect();
    let selected = crate::slo::select(inputs.policy, &recorded).map_err(|e| ReportError {
        exit: e.exit(),
        message: e.to_string(),
    })?;
    // vLLM records are checked strictly, in record order (docs/artifact.md §5 E10).
    // Their indexes count every decoded record, requests and samples
    // included, so the record order is rebuilt only when there is one.
    let is_vllm_record = |r: &Value| {
        matches!(
            pyjson::get(r, "event_type").as_str(),
            Some("infer.vllm_scrape") | Some("infer.vllm_span")
        )
    };
    if data.records.iter().any(|(_, r)| is_vllm_record(r)) {
        let mut seqs: Vec<(i64, Option<&Value>)> =
            Vec::with_capacity(data.records.len() + data.requests.len() + data.samples.len());
        seqs.extend(data.records.iter().map(|(seq, r)| (*seq, Some(r))));
        seqs.extend(data.requests.iter().map(|r| (r.seq, None)));
        seqs.extend(data.samples.iter().map(|s| (s.seq, None)));
        seqs.sort_unstable_by_key(|(seq, _)| *seq);
        let all: Vec<(usize, &Value)> = seqs
            .iter()
            .enumerate()
            .filter_map(|(index, (_, r))| r.filter(|r| is_vllm_record(r)).map(|r| (index, r)))
            .collect();
        crate::vllm::validate_records(&all).map_err(|reason| ReportError {
            exit: Exit::InvalidInput,
            message: format!("vLLM telemetry: {reason}"),
        })?;
    }
    let artifact_spans: Vec<Value> = data.of_type("infer.vllm_span").cloned().collect();
    let mut all_spans = artifact_spans;
    all_spans.extend(inputs.external_spans.iter().cloned());
    let span_join = crate::vllm::join_spans(&all_spans, &data.requests);
    // The vLLM passes read measured requests among the records; give them the
    // fields they read, only when there is vLLM evidence to read them for.
    // Without any, the block is absent and the vLLM observers not requested.
    let vllm_records: Option<Vec<Value>> = vllm_relevant(data, &inputs.external_spans).then(|| {
        let mut v: Vec<(i64, Value)> = data.records.clone();
        v.extend(data.requests.iter().map(|r| {
            let case_id = if r.case_key == "unknown" {
                Value::Null
            } else {
                Value::String(r.case_key.to_string())
            };
            (
                r.seq,
                json!({"event_type": "infer.request", "phase": r.phase, "case_id": case_id,
                       "x_request_id": r.x_request_id, "status": r.status}),
            )
        }));
        v.sort_by_key(|(seq, _)| *seq);
        v.into_iter().map(|(_, r)| r).collect()
    });
    let vllm = match &vllm_records {
        Some(records) => {
            crate::vllm::vllm_block(records, &inputs.external_spans, &span_join, &data.requests)
        }
        None => json!({"status": "absent"}),
    };
    let spans = crate::slo::Spans {
        joined: &span_join.joined,
        quarantined: &span_join.quarantined,
    };
    let admitted = admitted_ids(data, &inputs.external_spans, &span_join);
    let ctx = RunContext::new(data, admitted);
    let mut by_case: std::collections::BTreeMap<String, Vec<&Request>> = Default::default();
    // Whether any measured request holds a token count Python cannot
    // convert (the check below looks no further when none does).
    let mut unconvertible = false;
    {
        // Requests of one case come in runs: the key is looked up (and its
        // text copied) once per run, not per request. A case's first run is
        // moved into the map, not copied; the first run has room for every
        // request, so that a run of one case grows without a copy (a fresh
        // page is dear on the machines stormlog is measured on).
        let mut run: Vec<&Request> = Vec::with_capacity(data.requests.len());
        let mut run_key: Option<&str> = None;
        for r in data.measured() {
            unconvertible |= r.output_tokens_call_error().is_some();
            if run_key != Some(r.case_key.as_str()) {
                if let Some(key) = run_key {
                    put_run(&mut by_case, key, &mut run);
                }
                run_key = Some(r.case_key.as_str());
            }
            run.push(r);
        }
        if let Some(key) = run_key {
            put_run(&mut by_case, key, &mut run);
        }
    }
    // The reference reads each streamed request's `int(output_tokens or 0)`
    // for its tokens per chunk, case by case in key order, and stops at the
    // first value Python cannot convert (a NaN, a word, a list). Only a
    // request that holds such a value can stop it, and the gathering above
    // saw whether one does: most runs skip the pass over every request
    // (3% of a 90,000-request report's `perf` samples, before the case's
    // parallel blocks).
    for reqs in by_case.values().filter(|_| unconvertible) {
        case::tokens_per_chunk_inputs(reqs).map_err(|message| ReportError {
            exit: Exit::Unexpected,
            message,
        })?;
    }
    let mut metric_keys: Vec<(&str, &str)> = vec![
        ("client.ttft", "client"),
        ("client.ttft_from_intended", "client"),
        ("client.e2e", "client"),
        ("client.e2e_from_intended", "client"),
        ("client.tpot", "client"),
    ];
    // Server latency metrics appear once any measured request has a trusted span.
    let any_trusted_span = !span_join.joined.is_empty()
        && data.measured().any(|r| {
            r.x_request_id
                .as_str()
                .is_some_and(|x| span_join.joined.contains_key(x))
        });
    if any_trusted_span {
        metric_keys.extend([
            ("server.ttft", "server"),
            ("server.e2e", "server"),
            ("server.queue", "server"),
        ]);
    }
    let spans_ref = &spans;
    let metric_fns: Vec<Box<case::MetricFn>> = metric_keys
        .iter()
        .map(|(k, _)| {
            // The key is resolved once, not per request.
            let key = crate::slo::criteria::CriterionKey::from_key(k)
                .filter(|key| !key.is_aggregate_only());
            Box::new(move |r: &Request| {
                key.and_then(|key| crate::slo::measure_value(r, key, spans_ref))
            }) as Box<case::MetricFn>
        })
        .collect();
    let metrics: Vec<(&str, &str, &case::MetricFn)> = metric_keys
        .iter()
        .zip(&metric_fns)
        .map(|((k, b), f)| (*k, *b, f.as_ref()))
        .collect();
    let policy = selected.policy.as_ref().zip(selected.source);
    let (segments, membership) = (&inputs.segments, inputs.membership);
    let built: Vec<(String, Value, CaseTally)> = {
        use rayon::prelude::*;
        by_case
            .par_iter()
            .map(|(key, reqs)| {
                // The blocks are independent passes over the case's requests
                // (one each): the latency block (a selection per metric; its
                // pass sets the failures aside for the case's tally) beside
                // the population, the arrival, prompt, length and stream
                // blocks, the request figures' pass and the policy's judging
                // of each request. The request figures and the slo record
                // are made last: they read the population's rate interval
                // (and the figures the latency block's order statistics).
                //
                // Paired for two cores: this thread runs the latency block,
                // then the population; another takes the rest, the stream
                // pass first. A 90,000-request case split 149 M / 147 M
                // instructions so (callgrind), where the population beside
                // the stream pass made one thread's share 169 M of 296 M.
                let window = ctx.windows.get(key).copied();
                let ((latency, pop), (passes, (figures, judged))) = rayon::join(
                    || {
                        rayon::join(
                            || case::latency(reqs, &metrics),
                            || case::population(&ctx, key, reqs),
                        )
                    },
                    || {
                        rayon::join(
                            || case::passes(reqs, window),
                            || {
                                rayon::join(
                                    || case::figures_pass(reqs),
                                    || {
                                        policy.map(|(policy, _)| {
                                            crate::slo::evaluate::judge_case(reqs, policy, &spans)
                                        })
                                    },
                                )
                            },
                        )
                    },
                );
                let mut c = Map::new();
                let rate = pop.intervals.get("rate").cloned().unwrap_or(Value::Null);
                let ok_window = case::finish_request_figures(
                    figures,
                    reqs,
                    &data.samples,
                    &rate,
                    &latency.sorted,
                    &mut c,
                );
                for (name, block) in passes {
                    c.insert(name.into(), block);
                }
                c.insert(
                    "cache".into(),
                    case::cache(ctx.cache_states.get(key).copied()),
                );
                c.insert("latency".into(), latency.block);
                if let (Some((policy, source)), Some(judged)) = (policy, judged) {
                    c.insert(
                        "slo".into(),
                        crate::slo::evaluate::evaluate_judged(
                            judged,
                            policy,
                            source,
                            &rate,
                            &pop.population,
                        ),
                    );
                }
                if !segments.is_empty() {
                    let blocks = segments::block(
                        segments, membership, &pop, reqs, &ctx, &metrics, policy, &spans,
                    );
                    c.insert("segments".into(), blocks);
                }
                c.insert("population".into(), pop.population);
                c.insert("intervals".into(), pop.intervals);
                let tally = CaseTally {
                    requests: reqs.len(),
                    failed: latency.failed_by_status,
                    window: ok_window,
                };
                (key.clone(), Value::Object(c), tally)
            })
            .collect()
    };
    let mut cases = Map::new();
    let mut windows: Vec<crate::join::CaseWindow> = Vec::with_capacity(built.len());
    let (mut total, mut failed) = (0usize, 0usize);
    let mut by_status: std::collections::BTreeMap<String, i64> = Default::default();
    for (key, case, tally) in built {
        total += tally.requests;
        for (status, n) in tally.failed {
            failed += n as usize;
            *by_status.entry(status).or_insert(0) += n;
        }
        windows.push(crate::join::CaseWindow {
            case_key: key.clone(),
            window: tally.window,
        });
        cases.insert(key, case);
    }
    // The server join (the reference's server join (`stormlog.infer.analysis._server_join`)): placement, coverage, per-case memory.
    let join_records: Vec<Value> = data
        .records
        .iter()
        .map(|(_, r)| r)
        .filter(|r| {
            matches!(
                pyjson::get(r, "event_type").as_str(),
                Some("infer.artifact") | Some("infer.clock_alignment")
            )
        })
        .cloned()
        .collect();
    let joined = crate::join::join(crate::join::JoinInputs {
        artifact_records: &join_records,
        cases: &windows,
        samples: inputs.server_samples,
        configured: inputs.telemetry_configured,
        direct_server: inputs.direct_server,
        clock_offset_ns: inputs.clock_offset_ns,
        clock_uncertainty_ns: inputs.clock_uncertainty_ns,
    })
    .map_err(|e| ReportError {
        exit: e.exit(),
        message: e.to_string(),
    })?;
    for (key, mem) in &joined.cases {
        if let Some(Value::Object(m)) = cases.get_mut(key).and_then(|c| c.get_mut("memory")) {
            mem.insert_into(m);
        }
    }
    let failure_rate = if total == 0 {
        0.0
    } else {
        failed as f64 / total as f64
    };
    let mut extra_obs = Map::new();
    if let Some(records) = &vllm_records {
        let (metrics_obs, spans_obs) =
            crate::vllm::observers(records, &vllm, &span_join, &data.requests);
        if let Some(o) = metrics_obs {
            extra_obs.insert("vllm_metrics".into(), o);
        }
        if let Some(o) = spans_obs {
            extra_obs.insert("vllm_spans".into(), o);
        }
    }
    let (obs, observer_order) = observers::observers(data, &extra_obs);
    let json = json!({
        "analysis_version": 2,
        "slo": selected.report_slo,
        "manifest": null,
        "observers": obs,
        "summary": {
            "total_requests": total,
            "successful_requests": total - failed,
            "failed_requests": failed,
            "failure_rate": failure_rate,
            "failures_by_status": by_status,
            "case_count": cases.len(),
            "session_status": session_status(data),
        },
        "cases": cases,
        "workload": workload(data),
        "telemetry": {
            "client_observation_scope": "client_local",
            "server_join": joined.server_join,
            "server_targets": joined.server_targets,
            "vllm": vllm,
            "execution": crate::analysis::execution::block(&crate::analysis::execution::Inputs {
                records: &data.records,
                requests: &data.requests,
                dispatches: &data.dispatches,
                facts: &data.execution_facts,
                contexts: &data.execution_contexts,
                aggregate: data.execution_aggregate.as_ref(),
            }),
        },
    });
    let mut server_lines = joined.run_text_lines;
    server_lines.extend(crate::vllm::run_text_lines(&json["telemetry"]["vllm"]));
    server_lines.extend(execution_text::lines(&json["telemetry"]["execution"]));
    let mut server_case_lines = joined.case_text_lines;
    if let Some(cases) = json["cases"].as_object() {
        for key in cases.keys() {
            let lines = crate::vllm::case_text_lines(&json["telemetry"]["vllm"], key);
            server_case_lines
                .entry(key.clone())
                .or_default()
                .extend(lines);
        }
    }
    Ok(Report {
        json,
        observer_order,
        policy_lines: selected.text_lines,
        server_lines,
        server_case_lines,
        warnings: selected.warnings,
        import_lines: Vec::new(),
    })
}

/// docs/artifact.md §3.1: the last truthy `infer.session.status`, as a string.
fn session_status(data: &RunData) -> Value {
    data.of_type("infer.session")
        .map(|s| pyjson::get(s, "status"))
        .filter(|s| pyjson::truthy(s))
        .last()
        .map_or(Value::Null, |s| json!(pyjson::str_form(s)))
}

/// docs/report.md §5.
fn workload(data: &RunData) -> Value {
    match data.of_type("infer.workload").next() {
        None => Value::Null,
        Some(w) => {
            let mut m = Map::new();
            for k in [
                "workload_digest",
                "seed",
                "generator",
                "prompts",
                "warmup",
                "decoding",
                "tokenizer",
                "chat_template",
            ] {
                m.insert(k.into(), pyjson::get(w, k).clone());
            }
            Value::Object(m)
        }
    }
}

/// docs/report.md §4.2.5: ids the server confirmed, or None without any source.
pub(crate) fn admitted_ids(
    data: &RunData,
    external_spans: &[Value],
    join: &crate::vllm::SpanJoin,
) -> Option<HashSet<String>> {
    let mut hook: HashSet<String> = data
        .of_type("infer.request")
        .filter(|r| pyjson::get(r, "schema_version").as_i64() == Some(2))
        .map(|r| pyjson::get(pyjson::get(r, "metadata"), "x_request_id"))
        .filter(|x| pyjson::truthy(x))
        .map(pyjson::str_form)
        .collect();
    hook.extend(crate::analysis::execution::stored_hook_ids(data));
    let span_source = !external_spans.is_empty()
        || data.of_type("infer.vllm_span").next().is_some()
        || data.of_type("infer.session").any(|s| {
            pyjson::get(s, "config").is_object()
                && !pyjson::get(pyjson::get(s, "config"), "vllm_spans").is_null()
        });
    if hook.is_empty() && !span_source {
        return None;
    }
    let mut ids = crate::vllm::admitted_ids(join);
    ids.extend(hook);
    Some(ids)
}

/// Whether the run carries any vLLM evidence (scrapes, spans, capabilities, span settings).
fn vllm_relevant(data: &RunData, external_spans: &[Value]) -> bool {
    !external_spans.is_empty()
        || data.records.iter().any(|(_, r)| {
            matches!(
                pyjson::get(r, "event_type").as_str(),
                Some("infer.vllm_scrape") | Some("infer.vllm_span")
            ) || (pyjson::get(r, "event_type").as_str() == Some("infer.capabilities")
                // Only `vllm.*` components feed the block (vllm::engine):
                // an execution import's engine adapter or a trace collector
                // alone leaves it absent.
                && pyjson::str_form(pyjson::get(r, "component")).starts_with("vllm."))
                || (pyjson::get(r, "event_type").as_str() == Some("infer.session")
                    && (pyjson::get(pyjson::get(r, "config"), "vllm_spans").is_object()
                        || pyjson::get(pyjson::get(r, "config"), "vllm_metrics").is_object()))
        })
}
