//! The `segments` block of a case (`--segment`; docs/compare.md §6): each
//! slice of the case's measured phase reported on its own, as the
//! reference's `analysis._segment_report` builds it.
use serde_json::{json, Map, Value};

use crate::analysis::case::{self, RunContext};
use crate::analysis::segment::{Membership, Segment};
use crate::model::Request;

/// Every segment of one case, by name; built in parallel, as each is a pass
/// over the case's requests and a sort per latency metric.
#[allow(clippy::too_many_arguments)]
pub(super) fn block(
    segments: &[Segment],
    membership: Membership,
    population: &case::Population,
    reqs: &[&Request],
    ctx: &RunContext,
    metrics: &[(&str, &str, &case::MetricFn)],
    policy: Option<(&crate::slo::Policy, crate::slo::PolicySource)>,
    spans: &crate::slo::Spans,
) -> Value {
    use rayon::prelude::*;
    // Distinct string ids (no duplicate among them, as the population
    // found) are distinct as text too: a segment's requests by id are then
    // its members, with no set of ids to build.
    let duplicated = crate::py::json::get(&population.population, "issues")
        .as_array()
        .is_some_and(|issues| {
            issues.iter().any(|i| {
                i.as_str()
                    .is_some_and(|i| i.starts_with("duplicate_request_id"))
            })
        });
    let ids_distinct = !duplicated && reqs.iter().all(|r| r.request_id.is_string());
    let blocks: Vec<(String, Value)> = segments
        .par_iter()
        .map(|segment| {
            let block = segment_block(
                segment,
                membership,
                &population.intervals,
                reqs,
                ids_distinct,
                ctx,
                metrics,
                policy,
                spans,
            );
            (segment.name.clone(), block)
        })
        .collect();
    Value::Object(blocks.into_iter().collect())
}

/// One segment of a case (analysis::segment): its population, interval,
/// throughput (by arrival only), latency and SLO, as the reference's
/// `_segment_report` builds them.
#[allow(clippy::too_many_arguments)]
fn segment_block(
    segment: &Segment,
    membership: Membership,
    intervals: &Value,
    reqs: &[&Request],
    ids_distinct: bool,
    ctx: &RunContext,
    metrics: &[(&str, &str, &case::MetricFn)],
    policy: Option<(&crate::slo::Policy, crate::slo::PolicySource)>,
    spans: &crate::slo::Spans,
) -> Value {
    use crate::analysis::segment;
    use crate::py::Int;
    let slice = segment::slice(segment, membership, intervals, reqs, ids_distinct);
    let population = segment::population(&slice.members, ctx.admitted.as_ref());
    let by_arrival = membership == Membership::Arrival;
    let rate = if by_arrival {
        slice.interval.clone()
    } else {
        Value::Null
    };
    let ok: Vec<&Request> = slice.by_id.iter().copied().filter(|r| r.is_ok()).collect();
    // Exact sums, as the case's own throughput takes them (Python's ints).
    let output = ok
        .iter()
        .fold(Int::default(), |sum, r| sum.add(&r.output_tokens_int()));
    let total = ok
        .iter()
        .fold(Int::default(), |sum, r| sum.add(&r.total_tokens_int()));
    let mut block = Map::new();
    block.insert("population".into(), population);
    block.insert(
        "intervals".into(),
        json!({"rate": slice.interval, "membership": membership.as_str(),
               "rate_reason": if by_arrival { Value::Null } else { json!("overlapping_cohort") }}),
    );
    block.insert(
        "throughput".into(),
        case::throughput(ok.len(), &output, &total, &rate),
    );
    block.insert("latency".into(), case::latency(&slice.by_id, metrics).block);
    if let Some((policy, source)) = policy {
        // A segment's cohort is not judged on its own: no validity to carry.
        block.insert(
            "slo".into(),
            crate::slo::evaluate_case(&slice.by_id, policy, source, &rate, &Value::Null, spans),
        );
    }
    Value::Object(block)
}
