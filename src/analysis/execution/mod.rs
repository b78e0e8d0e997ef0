//! `telemetry.execution` (docs/report.md §6.4): how much of the run the imported
//! vLLM execution log (`infer import-execution`: steps, memberships, the
//! hook's requests) and profiler activity explain, kept as separate
//! dimensions: linkage, membership, ownership, measurement and capture loss.
//! Case figures count every step a case's request shared, so they are
//! labelled non-additive; nothing here estimates a request's GPU cost.
//!
//! `event` parses the correlation records, `resolve` de-duplicates them into
//! entities, `steps` judges each imported step, `gpu` unions busy time and
//! `loss` reads the imports' counters; `observer` judges the `execution` and
//! `trace` observers (docs/report.md §7).
pub mod event;
pub mod fact;
pub mod gpu;
pub mod loss;
pub mod observer;
pub mod resolve;
pub mod steps;

use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap};

use foldhash::fast::RandomState;
use serde_json::{json, Map, Value};

use crate::model::Request;
use crate::py::json as pyjson;
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
    /// Bulk records the database stored as fact lines ([`fact::Fact`]),
    /// and the contexts their lines name.
    pub facts: &'a [String],
    pub contexts: &'a BTreeMap<String, Value>,
    /// What the ingest aggregated of the facts (`RunData::execution_aggregate`),
    /// when the database holds it: then `facts` is empty.
    pub aggregate: Option<&'a Value>,
}

/// Whether the block can be more than `{"available": false}`, so that the
/// dispatch records are worth loading: an engine-adapter capability or an
/// iteration among the records.
pub fn needs_dispatches(data: &crate::model::RunData) -> bool {
    // The aggregate holds the figures that read them.
    data.execution_aggregate.is_none()
        && (!data.execution_facts.is_empty()
            || data.records.iter().any(|(_, r)| {
                matches!(
                    pyjson::get(r, "event_type").as_str(),
                    Some("infer.iteration") | Some("infer.capabilities")
                )
            }))
}

/// The client's request IDs to their cases: `str(request_id)` ->
/// `str(case_id)` of every `infer.request` and `infer.dispatch` record with a
/// truthy `x_request_id`, the later record winning.
///
/// A request without a `case_id` key is grouped as `unknown` by the loaded
/// view, where the reference's map says `None`; the report's cases call it
/// `unknown` too, so that request's case name differs only here.
fn cases_by_request<'a>(inputs: &Inputs<'a>) -> CaseMap<'a> {
    let mut found: Vec<(i64, Cow<'a, str>, Cow<'a, str>)> = Vec::new();
    for r in inputs.requests {
        if pyjson::truthy(&r.x_request_id) {
            found.push((
                r.seq,
                str_of(&r.request_id),
                Cow::Borrowed(r.case_key.as_str()),
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
                str_of(pyjson::get(r, "request_id")),
                str_of(pyjson::get(r, "case_id")),
            ));
        }
    }
    // Each source comes in file order: a stable sort merges the runs.
    case_map(found)
}

/// Python's `str(v)`, borrowed when `v` is a string.
fn str_of(v: &Value) -> Cow<'_, str> {
    match v {
        Value::String(s) if pyjson::sentinel_f64(s).is_none() => Cow::Borrowed(s),
        other => Cow::Owned(pyjson::str_form(other)),
    }
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

/// The hook requests' truthy `metadata.x_request_id`s among the stored
/// facts (the server-confirmed requests, docs/report.md §4.2.5; those kept as
/// records are read there), from the lines or the ingest's aggregate.
pub fn stored_hook_ids(data: &crate::model::RunData) -> Vec<String> {
    use rayon::prelude::*;
    if let Some(aggregate) = &data.execution_aggregate {
        return aggregate_strings(aggregate, "hook_ids")
            .map(str::to_owned)
            .collect();
    }
    data.execution_facts
        .par_iter()
        .flat_map_iter(|segment| {
            segment
                .lines()
                // Only hook requests' lines (`r`) carry the field.
                .filter(|line| line.starts_with('r'))
                .filter_map(|line| fact::field(line, 'r', 15))
                .filter(|x| !x.is_empty())
                .map(str::to_owned)
        })
        .collect()
}

/// The steps' `metadata.start_wall_ns` among the stored facts.
pub fn stored_step_starts(data: &crate::model::RunData) -> Vec<f64> {
    if let Some(aggregate) = &data.execution_aggregate {
        return aggregate_strings(aggregate, "starts")
            .filter_map(|v| v.parse().ok())
            .collect();
    }
    fact::lines(&data.execution_facts)
        .filter(|line| line.starts_with('i'))
        .filter_map(|line| fact::field(line, 'i', 10))
        .filter_map(|v| v.parse().ok())
        .collect()
}

/// The lines of a list the ingest aggregated (`RunData::execution_aggregate`): one
/// string of newline-ended items, not an array of 90,000 strings.
fn aggregate_strings<'a>(aggregate: &'a Value, key: &str) -> impl Iterator<Item = &'a str> {
    pyjson::get(aggregate, key).as_str().unwrap_or("").lines()
}

/// What the ingest keeps of a run's stored facts besides their lines
/// (`execution_aggregates`, migrations/0013), so that a report reads a few
/// values instead of every line: the block's [`figures`], and the two lists
/// the admitted requests and the observer read.
pub struct Aggregate {
    pub figures: Value,
    /// The hook requests' truthy `metadata.x_request_id`s (may repeat).
    pub hook_ids: Vec<String>,
    /// Every stored step's `metadata.start_wall_ns` as its line wrote it.
    pub starts: Vec<String>,
    /// The facts' distinct run IDs.
    pub run_ids: Vec<String>,
    /// [`identity_hash`] of every fact, sorted, without repeats.
    pub identities: Vec<u64>,
}

impl Aggregate {
    /// The facts' aggregate, `cases` being the client's request map; None
    /// when a line does not read (the report then reads the lines).
    pub fn of<'a>(
        lines: impl Iterator<Item = &'a str>,
        scopes: &HashMap<&str, fact::Scope<'_>, RandomState>,
        cases: &CaseMap<'_>,
    ) -> Option<Aggregate> {
        let mut facts = Vec::new();
        for line in lines {
            facts.push(fact::Fact::decode(line, |id| scopes.get(id))?);
        }
        let mut run_ids: Vec<String> = Vec::new();
        let mut identities = Vec::with_capacity(facts.len());
        let (mut hook_ids, mut starts) = (Vec::new(), Vec::new());
        for f in &facts {
            if !run_ids.iter().any(|r| r == f.scope.run_id) {
                run_ids.push(f.scope.run_id.to_owned());
            }
            identities.push(identity_hash(f.scope.session, f.scope.producer, f.event_id));
            if let Some(x) = &f.x_request_id {
                hook_ids.push(x.to_string());
            }
            if let Some(at) = f.start_wall {
                starts.push(format!("{at:?}"));
            }
        }
        identities.sort_unstable();
        identities.dedup();
        Some(Aggregate {
            figures: figures(&facts, cases),
            hook_ids,
            starts,
            run_ids,
            identities,
        })
    }

    /// Whether the aggregate stands for the stored facts beside these
    /// records (the run's others, decoded): the block from the lines would
    /// find no second run and no fact sharing an identity with a record's
    /// event (check_stored), and no bulk entity among the records.
    pub fn applies(run_ids: &[String], identities: &[u64], records: &[(i64, Value)]) -> bool {
        let [run] = run_ids else {
            // No fact: nothing to check; facts of two runs: the error.
            return run_ids.is_empty();
        };
        let mut first: Option<(i64, &str)> = None;
        for (seq, r) in records {
            let Some(m) = r.as_object() else { continue };
            if event::is_legacy(m) {
                continue;
            }
            let Some(e) = event::parse(m) else { continue };
            if matches!(
                e.kind,
                event::Kind::Request
                    | event::Kind::Iteration
                    | event::Kind::Membership
                    | event::Kind::Activity
            ) {
                return false;
            }
            let (session, producer, id) = e.identity();
            if identities
                .binary_search(&identity_hash(session, producer, id))
                .is_ok()
            {
                return false;
            }
            if first.is_none_or(|(s, _)| *seq < s) {
                first = Some((*seq, e.run_id()));
            }
        }
        first.is_none_or(|(_, r)| r == run)
    }
}

/// A stable 64-bit hash (FNV-1a) of an event's identity: the aggregate's
/// check for a clash with a record's event (a match sends the report to
/// the lines, which compare the identities themselves).
pub fn identity_hash(session: &str, producer: &str, id: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for part in [session, producer, id] {
        for b in part.bytes().chain([0x1f]) {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
    }
    h
}

/// The block (docs/report.md §6.4).
pub fn block(inputs: &Inputs<'_>) -> Value {
    if let Some(aggregate) = inputs.aggregate {
        return from_aggregate(inputs.records, pyjson::get(aggregate, "figures"));
    }
    let (events, mut skipped) = events(inputs.records);
    let imports = loss::imports(&events);
    let graph = match resolve::resolve(&events) {
        Ok(g) => g,
        Err(e) => return unresolved(e, imports),
    };
    // The stored lines' contexts, and the resolved entities' own.
    let line_scopes: HashMap<&str, fact::Scope<'_>, RandomState> = inputs
        .contexts
        .iter()
        .filter_map(|(id, c)| c.as_object().map(|c| (id.as_str(), fact::Scope::of(c))))
        .collect();
    let entities: Vec<&Event<'_>> = graph
        .requests
        .iter()
        .chain(graph.iterations.values())
        .chain(&graph.memberships)
        .chain(&graph.activities)
        .collect();
    let entity_scopes: Vec<fact::Scope<'_>> = entities
        .iter()
        .map(|e| fact::Scope::of(e.context))
        .collect();
    let mut facts: Vec<fact::Fact<'_>> = Vec::with_capacity(entities.len());
    facts.extend(
        entities
            .iter()
            .zip(&entity_scopes)
            .filter_map(|(e, scope)| fact::Fact::of(e, scope)),
    );
    let resolved = facts.len();
    // The segments decode in parallel (a large import has millions of lines),
    // each into its own part, appended in segment order.
    use rayon::prelude::*;
    let decoded: Vec<(Vec<fact::Fact<'_>>, usize)> = inputs
        .facts
        .par_iter()
        .map(|segment| {
            let (mut part, mut refused) = (Vec::new(), 0);
            for line in segment.lines() {
                match fact::Fact::decode(line, |id| line_scopes.get(id)) {
                    Some(f) => part.push(f),
                    // A line that does not read is counted like a record the parse refuses.
                    None => refused += 1,
                }
            }
            (part, refused)
        })
        .collect();
    facts.reserve(decoded.iter().map(|(part, _)| part.len()).sum());
    for (part, refused) in decoded {
        facts.extend(part);
        skipped += refused;
    }
    if let Err(e) = check_stored(&events, &facts[resolved..]) {
        return unresolved(e, imports);
    }
    // No import and no imported step: the block is `{"available": false}`
    // whatever the requests' cases are ([`assemble`]), so the map of every
    // request to its case is not built (most runs have no execution data).
    if imports.is_empty() && !facts.iter().any(imported_step) {
        return json!({"available": false});
    }
    let cases = cases_by_request(inputs);
    assemble(figures(&facts, &cases), imports, skipped)
}

/// The block from what the ingest aggregated of the stored facts
/// ([`figures`], `execution_aggregates`): the records read whole are only
/// the few non-bulk ones (the load checked that no stored fact clashes with
/// them, db/execution.rs).
fn from_aggregate(records: &[(i64, Value)], aggregate: &Value) -> Value {
    let (events, skipped) = events(records);
    let imports = loss::imports(&events);
    if let Err(e) = resolve::resolve(&events) {
        return unresolved(e, imports);
    }
    assemble(aggregate.clone(), imports, skipped)
}

/// The client's request IDs to their cases ([`cases_by_request`]).
pub type CaseMap<'a> = HashMap<Cow<'a, str>, Cow<'a, str>, RandomState>;

/// The client requests' `(seq, request_id, case, x_request_id)` to their
/// [`CaseMap`], as the block builds it (the later record winning).
pub fn case_map<'a>(
    found: impl IntoIterator<Item = (i64, Cow<'a, str>, Cow<'a, str>)>,
) -> CaseMap<'a> {
    let mut found: Vec<_> = found.into_iter().collect();
    found.sort_by_key(|(seq, _, _)| *seq);
    found.into_iter().map(|(_, id, case)| (id, case)).collect()
}

/// Python's `str(v)` of a request ID or case (the map's keys and values).
pub fn str_form_of(v: &Value) -> Cow<'_, str> {
    str_of(v)
}

/// What the block says of the bulk facts: every figure but the imports,
/// the capture loss's counters and `skipped_records`. `imported` is how
/// many imported steps there were (none and no import: not available).
pub fn figures(facts: &[fact::Fact<'_>], cases: &CaseMap<'_>) -> Value {
    let of_kind =
        |k: event::Kind| -> Vec<&fact::Fact<'_>> { facts.iter().filter(|f| f.kind == k).collect() };
    let iterations: HashMap<_, _, RandomState> = of_kind(event::Kind::Iteration)
        .into_iter()
        .filter(|it| it.scope.source == IMPORT_SOURCE)
        .filter_map(|it| it.main.map(|r| (r, it)))
        .collect();
    let memberships = of_kind(event::Kind::Membership);
    let activities = of_kind(event::Kind::Activity);
    let requests: Vec<&fact::Fact<'_>> = of_kind(event::Kind::Request);
    let steps = steps::Steps::new(iterations, &memberships, cases);
    let (mut scopes, unmeasured) = gpu::dimensions(&activities, &steps);
    let mut owners: BTreeMap<&str, i64> = BTreeMap::new();
    for m in memberships.iter().copied() {
        if m.main.is_some_and(|it| steps.iterations.contains_key(&it)) {
            *owners.entry(steps::ownership(m)).or_default() += 1;
        }
    }
    let its = steps.iterations.values();
    let incomplete = its
        .clone()
        .filter(|it| it.label.as_deref() == Some(steps::INCOMPLETE))
        .count();
    let update_failed = its.filter(|it| it.update_failed).count();
    let cases_block = case_coverage(&steps, &mut scopes);
    let gpu: Map<String, Value> = scopes
        .iter_mut()
        .map(|(k, scope)| (k.clone(), scope.summary()))
        .collect();
    json!({
        "imported": steps.iterations.len(),
        "iterations": iteration_counts(&steps),
        "memberships": owners,
        "requests": request_counts(&requests, cases.len()),
        "incomplete_iterations": incomplete,
        "update_failed_iterations": update_failed,
        "cases": cases_block,
        "unmeasured": unmeasured,
        "gpu": gpu,
    })
}

/// Whether a fact is one of the steps [`figures`] counts as `imported`: an
/// iteration the import brought, with the request it ran for.
fn imported_step(f: &fact::Fact<'_>) -> bool {
    f.kind == event::Kind::Iteration && f.scope.source == IMPORT_SOURCE && f.main.is_some()
}

/// The block from the facts' [`figures`], the imports and the records the
/// parse refused.
fn assemble(mut figures: Value, imports: Vec<Value>, skipped: usize) -> Value {
    let imported = figures["imported"].as_u64().unwrap_or(0);
    if imports.is_empty() && imported == 0 {
        return json!({"available": false});
    }
    let mut take = |k: &str| figures.get_mut(k).map(Value::take).unwrap_or(Value::Null);
    let loss = loss::capture_loss(
        &imports,
        take("incomplete_iterations").as_u64().unwrap_or(0),
        take("update_failed_iterations").as_u64().unwrap_or(0),
    );
    let mut block = json!({
        "available": true,
        "iterations": take("iterations"),
        "memberships": take("memberships"),
        "requests": take("requests"),
        "capture_loss": loss,
        "cases": take("cases"),
        "non_additive": NON_ADDITIVE,
        "unmeasured": take("unmeasured"),
        "imports": imports,
        "gpu": take("gpu"),
    });
    if skipped > 0 {
        block["skipped_records"] = json!(skipped);
    }
    block
}

fn unresolved(e: resolve::ResolveError, imports: Vec<Value>) -> Value {
    json!({"available": !imports.is_empty(), "error": e.to_string(), "imports": imports})
}

/// Up to this many parsed events, a stored fact is checked against each.
const FEW_EVENTS: usize = 16;

/// The stored facts against the parsed events: one run, and no identity
/// shared with an event of another kind (the ingest kept every bulk record
/// whose identity or entity repeats among the bulk records as a body, so
/// the only possible clash is with another kind's event: a conflict).
fn check_stored(
    events: &[Event<'_>],
    stored: &[fact::Fact<'_>],
) -> Result<(), resolve::ResolveError> {
    if stored.is_empty() {
        return Ok(());
    }
    let run = events
        .first()
        .map_or(stored[0].scope.run_id, |e| e.run_id());
    if stored.iter().any(|f| f.scope.run_id != run) {
        return Err(resolve::ResolveError::MultipleRuns);
    }
    // The parsed events are mostly few (the capabilities, alignments and
    // records read whole) and the stored facts many: then a fact's event ID
    // is compared with theirs, cheaper than hashing its identity.
    let identities: Vec<(&str, &str, &str)> = events.iter().map(Event::identity).collect();
    let clash = if identities.len() <= FEW_EVENTS {
        stored.iter().any(|f| {
            identities.iter().any(|&(session, producer, id)| {
                id == f.event_id && session == f.scope.session && producer == f.scope.producer
            })
        })
    } else {
        let set: std::collections::HashSet<(&str, &str, &str), RandomState> =
            identities.into_iter().collect();
        stored
            .iter()
            .any(|f| set.contains(&(f.scope.session, f.scope.producer, f.event_id)))
    };
    if clash {
        return Err(resolve::ResolveError::ConflictingEvent);
    }
    Ok(())
}

fn iteration_counts(steps: &steps::Steps<'_, '_>) -> Value {
    let mut states: BTreeMap<String, i64> = BTreeMap::new();
    let mut owners: BTreeMap<&str, i64> = BTreeMap::new();
    for (r, it) in &steps.iterations {
        let state = it.label.as_deref().unwrap_or("complete").to_owned();
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
fn request_counts(requests: &[&fact::Fact<'_>], run_total: usize) -> Value {
    let mut owners: HashMap<&str, i64, RandomState> = HashMap::default();
    let mut bound: std::collections::HashSet<&str, RandomState> = Default::default();
    for r in requests.iter().filter(|r| r.scope.source == IMPORT_SOURCE) {
        let owner = r.label.as_deref().unwrap_or("unknown");
        if owner == steps::OWN {
            if let Some(req) = r.main {
                bound.insert(req.id);
            }
        }
        *owners.entry(owner).or_default() += 1;
    }
    let owners: BTreeMap<&str, i64> = owners.into_iter().collect();
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

/// The event types an execution import (and a profiler trace) writes in
/// bulk; the database keeps them in a slim form besides (migrations/0007).
pub const BULK_TYPES: [&str; 4] = [
    "infer.activity_ref",
    "infer.iteration",
    "infer.membership",
    "infer.request",
];

/// The stored line of a decoded bulk record ([`fact::Fact::encode`]):
/// None when the report must read the record itself: a legacy record, one
/// the parse refuses, one without the compact transport's `context_id`
/// (`raw_context_id`), or one whose strings do not fit a line.
pub fn fact_line(decoded: &Map<String, Value>, raw_context_id: Option<&str>) -> Option<String> {
    let context_id = raw_context_id?;
    if event::is_legacy(decoded) {
        return None;
    }
    let e = event::parse(decoded)?;
    // The line names its context; the fact's scope is not written.
    let scope = fact::Scope::default();
    fact::Fact::of(&e, &scope)?.encode(context_id)
}

/// [`fact_line`] and [`comparison_keys`] of one decoded bulk record, from
/// one parse (the ingest's cost per record).
pub fn line_and_keys(
    decoded: &Map<String, Value>,
    raw_context_id: Option<&str>,
) -> (Option<String>, Option<(String, Option<String>)>) {
    if event::is_legacy(decoded) {
        return (None, None);
    }
    let Some(e) = event::parse(decoded) else {
        return (None, None);
    };
    let line = raw_context_id.and_then(|context_id| {
        let scope = fact::Scope::default();
        fact::Fact::of(&e, &scope)?.encode(context_id)
    });
    (line, Some(keys_of(&e)))
}

/// The keys under which two events are compared whole: their identity
/// (session, producer, event id) and, for an entity, its kind and key.
/// None for a record the parse refuses (it is only counted). Two bulk
/// records sharing a key are both read whole by the report.
pub fn comparison_keys(record: &Map<String, Value>) -> Option<(String, Option<String>)> {
    if event::is_legacy(record) {
        return None;
    }
    event::parse(record).map(|e| keys_of(&e))
}

fn keys_of(e: &Event<'_>) -> (String, Option<String>) {
    let (session, producer, id) = e.identity();
    let identity = format!("{session}\u{1f}{producer}\u{1f}{id}");
    let r = |k: &str| {
        e.reference(k).map_or_else(
            || "\u{1e}".to_owned(),
            |r| format!("{}\u{1f}{}", r.producer, r.id),
        )
    };
    let entity = match e.kind {
        event::Kind::Request => Some(format!(
            "r\u{1d}{}\u{1d}{}",
            r("request_ref"),
            r("attempt_ref")
        )),
        event::Kind::Iteration => Some(format!("i\u{1d}{}", r("iteration_ref"))),
        event::Kind::Membership => Some(format!(
            "m\u{1d}{}\u{1d}{}\u{1d}{}\u{1d}{}",
            r("request_ref"),
            r("attempt_ref"),
            r("iteration_ref"),
            e.field("role").as_str().unwrap_or("")
        )),
        event::Kind::Activity => Some(format!("a\u{1d}{}", r("activity_ref"))),
        _ => None,
    };
    (identity, entity)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests;
