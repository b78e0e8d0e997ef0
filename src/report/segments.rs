//! The `segments` block of a case (`--segment`; docs/compare.md §6): each
//! slice of the case's measured phase reported on its own, as the
//! reference's `analysis._segment_report` builds it.
use serde_json::{json, Map, Value};

use crate::analysis::case::{self, RunContext};
use crate::model::Request;

/// One segment of a case (analysis::segment): its population, interval,
/// throughput (by arrival only), latency and SLO, as the reference's
/// `_segment_report` builds them.
#[allow(clippy::too_many_arguments)]
pub(super) fn segment_block(
    segment: &crate::analysis::segment::Segment,
    membership: crate::analysis::segment::Membership,
    intervals: &Value,
    reqs: &[&Request],
    ctx: &RunContext,
    metrics: &[(&str, &str, &case::MetricFn)],
    policy: Option<(&crate::slo::Policy, crate::slo::PolicySource)>,
    spans: &crate::slo::Spans,
) -> Value {
    use crate::analysis::segment::{self, Membership};
    use crate::model::request::int_of;
    let slice = segment::slice(segment, membership, intervals, reqs);
    let population = segment::population(&slice.members, ctx.admitted.as_ref());
    let by_arrival = membership == Membership::Arrival;
    let rate = if by_arrival {
        slice.interval.clone()
    } else {
        Value::Null
    };
    let ok: Vec<&Request> = slice.by_id.iter().copied().filter(|r| r.is_ok()).collect();
    let output: i64 = ok.iter().map(|r| int_of(r.output_tokens())).sum();
    let total: i64 = ok.iter().map(|r| int_of(r.total_tokens())).sum();
    let mut block = Map::new();
    block.insert("population".into(), population);
    block.insert(
        "intervals".into(),
        json!({"rate": slice.interval, "membership": membership.as_str(),
               "rate_reason": if by_arrival { Value::Null } else { json!("overlapping_cohort") }}),
    );
    block.insert(
        "throughput".into(),
        case::throughput(ok.len(), output, total, &rate),
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
