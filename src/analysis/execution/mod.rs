//! `telemetry.execution` (report.md §6.4): how much of the run the imported
//! vLLM execution log (`infer import-execution`: steps, memberships, the
//! hook's requests) and profiler activity explain, kept as separate
//! dimensions: linkage, membership, ownership, measurement and capture loss.
//! Case figures count every step a case's request shared, so they are
//! labelled non-additive; nothing here estimates a request's GPU cost.
//!
//! `event` parses the correlation records, `resolve` de-duplicates them into
//! entities, `steps` judges each imported step, `gpu` unions busy time and
//! `loss` reads the imports' counters; `observer` judges the `execution` and
//! `trace` observers (report.md §7).
pub mod event;
pub mod gpu;
pub mod loss;
pub mod observer;
pub mod resolve;
pub mod steps;

use std::collections::{BTreeMap, HashMap};

use foldhash::fast::RandomState;
use serde_json::{json, Map, Value};

use crate::model::Request;
use crate::pyjson;
use event::Event;

/// `context.source` of what `infer import-execution` wrote.
pub const IMPORT_SOURCE: &str = "stormlog.infer.import_execution";

const NON_ADDITIVE: &str = "steps shared between cases or with other clients count in each";

/// What the block reads of a run: its decoded records (requests and samples
/// aside), its client requests and its `infer.dispatch` records (the
/// analysis load leaves those out; see [`needs_dispatches`]).
pub struct Inputs<'a> {
    pub records: &'a [(i64, Value)],
    pub requests: &'a [Request],
    pub dispatches: &'a [(i64, Value)],
}

/// Whether the block can be more than `{"available": false}`, so that the
/// dispatch records are worth loading: an engine-adapter capability or an
/// iteration among the records.
pub fn needs_dispatches(records: &[(i64, Value)]) -> bool {
    records.iter().any(|(_, r)| {
        matches!(
            pyjson::get(r, "event_type").as_str(),
            Some("infer.iteration") | Some("infer.capabilities")
        )
    })
}

/// The client's request IDs to their cases: `str(request_id)` ->
/// `str(case_id)` of every `infer.request` and `infer.dispatch` record with a
/// truthy `x_request_id`, the later record winning.
///
/// A request without a `case_id` key is grouped as `unknown` by the loaded
/// view, where the reference's map says `None`; the report's cases call it
/// `unknown` too, so that request's case name differs only here.
fn cases_by_request(inputs: &Inputs<'_>) -> HashMap<String, String, RandomState> {
    let mut found: Vec<(i64, String, String)> = Vec::new();
    for r in inputs.requests {
        if pyjson::truthy(&r.x_request_id) {
            found.push((
                r.seq,
                pyjson::str_form(&r.request_id),
                r.case_key.to_string(),
            ));
        }
    }
    let records = inputs.records.iter().chain(inputs.dispatches);
    for (seq, r) in records {
        let kind = pyjson::get(r, "event_type").as_str();
        if matches!(kind, Some("infer.request") | Some("infer.dispatch"))
            && pyjson::truthy(pyjson::get(r, "x_request_id"))
        {
            found.push((
                *seq,
                pyjson::str_form(pyjson::get(r, "request_id")),
                pyjson::str_form(pyjson::get(r, "case_id")),
            ));
        }
    }
    found.sort_by_key(|(seq, _, _)| *seq);
    found.into_iter().map(|(_, id, case)| (id, case)).collect()
}

/// The correlation events among the records, and how many failed the parse.
fn events(records: &[(i64, Value)]) -> (Vec<Event<'_>>, usize) {
    let mut events = Vec::new();
    let mut skipped = 0;
    for (_, r) in records {
        let Some(m) = r.as_object() else { continue };
        if event::is_legacy(m) {
            continue;
        }
        match event::parse(m) {
            Some(e) => events.push(e),
            None => skipped += 1,
        }
    }
    (events, skipped)
}

/// The block (report.md §6.4).
pub fn block(inputs: &Inputs<'_>) -> Value {
    let (events, skipped) = events(inputs.records);
    let imports = loss::imports(&events);
    let graph = match resolve::resolve(&events) {
        Ok(g) => g,
        Err(e) => {
            return json!({"available": !imports.is_empty(), "error": e.to_string(), "imports": imports})
        }
    };
    let iterations: HashMap<_, _, RandomState> = graph
        .iterations
        .iter()
        .filter(|(_, it)| it.source() == IMPORT_SOURCE)
        .map(|(k, v)| (*k, *v))
        .collect();
    if imports.is_empty() && iterations.is_empty() {
        return json!({"available": false});
    }
    let cases = cases_by_request(inputs);
    let steps = steps::Steps::new(iterations, &graph.memberships, &cases);
    let (mut scopes, unmeasured) = gpu::dimensions(&graph.activities, &steps);
    let mut memberships: BTreeMap<&str, i64> = BTreeMap::new();
    for m in &graph.memberships {
        if m.reference("iteration_ref")
            .is_some_and(|it| steps.iterations.contains_key(&it))
        {
            *memberships.entry(steps::ownership(m)).or_default() += 1;
        }
    }
    let mut block = json!({
        "available": true,
        "iterations": iteration_counts(&steps),
        "memberships": memberships,
        "requests": request_counts(&graph.requests, cases.len()),
        "capture_loss": loss::capture_loss(&imports, &steps),
        "cases": case_coverage(&steps, &mut scopes),
        "non_additive": NON_ADDITIVE,
        "unmeasured": unmeasured,
        "imports": imports,
    });
    let gpu: Map<String, Value> = scopes
        .iter_mut()
        .map(|(k, scope)| (k.clone(), scope.summary()))
        .collect();
    block["gpu"] = Value::Object(gpu);
    if skipped > 0 {
        block["skipped_records"] = json!(skipped);
    }
    block
}

fn iteration_counts(steps: &steps::Steps<'_, '_>) -> Value {
    let mut states: BTreeMap<String, i64> = BTreeMap::new();
    let mut owners: BTreeMap<&str, i64> = BTreeMap::new();
    for (r, it) in &steps.iterations {
        let state = match it.meta("state") {
            v if pyjson::truthy(v) => pyjson::str_form(v),
            _ => "complete".into(),
        };
        *states.entry(state).or_default() += 1;
        *owners.entry(steps.ownership(r)).or_default() += 1;
    }
    json!({
        "total": steps.iterations.len(),
        "complete": states.get("complete").copied().unwrap_or(0),
        "incomplete": states.get(steps::INCOMPLETE).copied().unwrap_or(0),
        "ownership": owners,
    })
}

/// The hook's requests by ownership, and how many of the run's it bound.
fn request_counts(requests: &[Event<'_>], run_total: usize) -> Value {
    let mut owners: BTreeMap<String, i64> = BTreeMap::new();
    let mut bound: std::collections::BTreeSet<&str> = Default::default();
    for r in requests.iter().filter(|r| r.source() == IMPORT_SOURCE) {
        let owner = match r.meta("ownership") {
            v if pyjson::truthy(v) => pyjson::str_form(v),
            _ => "unknown".into(),
        };
        if owner == steps::OWN {
            if let Some(req) = r.reference("request_ref") {
                bound.insert(req.id);
            }
        }
        *owners.entry(owner).or_default() += 1;
    }
    json!({
        "executions": owners,
        "run_requests_bound": bound.len(),
        "run_requests_total": run_total,
    })
}

/// Per case: its steps, how many were shared, and its linked GPU time per
/// scope (a union over every step it took part in).
fn case_coverage(steps: &steps::Steps<'_, '_>, scopes: &mut BTreeMap<String, gpu::Scope>) -> Value {
    let mut cases: BTreeMap<&str, (i64, i64)> = BTreeMap::new();
    for r in steps.iterations.keys() {
        let of = steps.cases(r);
        let shared = steps.shared(r, of.len());
        for case in of {
            let entry = cases.entry(case).or_default();
            entry.0 += 1;
            entry.1 += i64::from(shared);
        }
    }
    let mut out = Map::new();
    for (case, (n, shared)) in cases {
        let mut gpu = Map::new();
        for (key, scope) in scopes.iter_mut() {
            if let Some(items) = scope.cases.get_mut(case) {
                gpu.insert(key.clone(), json!({"linked_ns": gpu::union_ns(items)}));
            }
        }
        out.insert(
            case.to_owned(),
            json!({"iterations": n, "shared_iterations": shared, "non_additive": shared > 0, "gpu": gpu}),
        );
    }
    Value::Object(out)
}
