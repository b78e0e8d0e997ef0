//! Segments: slices of a case's measured phase, by offsets in seconds from
//! its start (`compare --segment NAME=START:END`, `report --segment`), each
//! reported beside its case as a case of its own (docs/compare.md,
//! "Segments").
//!
//! A segment's requests are those that arrived in it (`arrival`: the
//! intended arrival, else the send time, in `[start, end)`) or that overlap
//! it (`overlap`: sent before its end and ended at or after its start). Its
//! interval is the slice clipped to the case's measured span (or, without
//! one, its rate interval). Under `overlap` it has no rates: requests in
//! flight per second of a slice grow with their latency, so a slower server
//! would look faster. The reference's semantics, including its messages and
//! the order its checks run in.
use std::borrow::Cow;
use std::collections::{BTreeMap, HashSet};

use serde_json::{json, Value};

use crate::model::Request;
use crate::py::int::{int_value, Int};
use crate::py::json as pyjson;

/// Which requests belong to a segment.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Membership {
    /// Those that arrived in it: a cohort with rates.
    #[default]
    Arrival,
    /// Those in flight during it: shares and latency, no rates.
    Overlap,
}

impl Membership {
    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "arrival" => Some(Membership::Arrival),
            "overlap" => Some(Membership::Overlap),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Membership::Arrival => "arrival",
            Membership::Overlap => "overlap",
        }
    }

    /// The interval's numerator cohort.
    fn cohort(self) -> &'static str {
        match self {
            Membership::Arrival => "arrival_cohort",
            Membership::Overlap => "overlapping",
        }
    }
}

/// A validated segment: a short identifier and `0 <= start < end`.
///
/// The offsets are whole nanoseconds held in an `f64`: `round(seconds *
/// 1e9)` of a finite float is an integer a float holds exactly, so the
/// checks compare what the reference's integers compare, however large.
#[derive(Debug, Clone, PartialEq)]
pub struct Segment {
    pub name: String,
    pub start_offset_ns: f64,
    pub end_offset_ns: f64,
}

/// Why a segment was refused; the reference ends the first with exit 2 and
/// the other with exit 1 (an error it does not anticipate).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SegmentError {
    #[error("{0}")]
    Usage(String),
    #[error("{0}")]
    Unexpected(String),
}

impl Segment {
    /// `NAME=START:END`, seconds from the measured phase's start, checked as
    /// the reference checks it (`cli._segment`, `populations.Segment`).
    pub fn parse(text: &str) -> Result<Segment, SegmentError> {
        let (name, span) = text.split_once('=').unwrap_or((text, ""));
        let (start, end) = span.split_once(':').unwrap_or((span, ""));
        let repr = crate::py::text::repr_str;
        let flag = format!("--segment {}", repr(text));
        if name.is_empty() || start.is_empty() || end.is_empty() {
            return Err(SegmentError::Usage(format!("{flag}: use NAME=START:END")));
        }
        let number = |part: &str| -> Result<f64, SegmentError> {
            match crate::py::float::float_of_str(part) {
                None => Err(SegmentError::Usage(format!(
                    "{flag}: {} is not a number",
                    repr(part)
                ))),
                Some(v) if !v.is_finite() => Err(SegmentError::Usage(format!(
                    "{flag}: {} is not a finite number",
                    repr(part)
                ))),
                Some(v) => Ok(v),
            }
        };
        let (begin, finish) = (number(start)?, number(end)?);
        let nanoseconds = |seconds: f64| -> Result<f64, SegmentError> {
            let ns = (seconds * 1e9).round_ties_even();
            if ns.is_finite() {
                // -0.0 is 0 as an integer.
                Ok(ns + 0.0)
            } else {
                Err(SegmentError::Unexpected(
                    "cannot convert float infinity to integer".into(),
                ))
            }
        };
        Segment::new(name, nanoseconds(begin)?, nanoseconds(finish)?)
            .map_err(|e| SegmentError::Usage(format!("{flag}: {e}")))
    }

    /// A segment from its parts, or why it cannot be one.
    pub fn new(name: &str, start_offset_ns: f64, end_offset_ns: f64) -> Result<Segment, String> {
        if !short_identifier(name) {
            return Err(format!(
                "segment name {} is not a short identifier",
                crate::py::text::repr_str(name)
            ));
        }
        if !(0.0 <= start_offset_ns && start_offset_ns < end_offset_ns) {
            return Err(format!(
                "segment {name}: offsets must satisfy 0 <= start < end"
            ));
        }
        Ok(Segment {
            name: name.to_owned(),
            start_offset_ns,
            end_offset_ns,
        })
    }
}

/// `[a-z][a-z0-9_]{0,63}`, the whole name.
fn short_identifier(name: &str) -> bool {
    let b = name.as_bytes();
    !b.is_empty()
        && b.len() <= 64
        && b[0].is_ascii_lowercase()
        && b[1..]
            .iter()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'_')
}

/// Every name once: the repeated ones, sorted, are refused together.
pub fn check_unique(segments: &[Segment]) -> Result<(), SegmentError> {
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for s in segments {
        *counts.entry(s.name.as_str()).or_insert(0) += 1;
    }
    let repeated: Vec<&str> = counts
        .into_iter()
        .filter(|(_, n)| *n > 1)
        .map(|(name, _)| name)
        .collect();
    if repeated.is_empty() {
        return Ok(());
    }
    Err(SegmentError::Unexpected(format!(
        "segment {} is defined more than once",
        repeated.join(", ")
    )))
}

/// One segment of a case: its interval (clipped to the case) and its members.
pub struct Slice<'r> {
    /// The `segment` interval record.
    pub interval: Value,
    /// The requests that belong, counted in the segment's population.
    pub members: Vec<&'r Request>,
    /// The case's requests whose `str(request_id)` is a member's: what the
    /// latency, throughput and SLO blocks read (the reference selects them
    /// by id, so a request sharing a member's id, or an id-less request
    /// beside an id-less member, is read with them).
    pub by_id: Vec<&'r Request>,
}

/// The segment's slice of a case whose `intervals` block is given;
/// `ids_distinct` says every request id of the case is a string none other
/// repeats, so that the requests sharing a member's id are the members.
pub fn slice<'r>(
    segment: &Segment,
    membership: Membership,
    intervals: &Value,
    reqs: &[&'r Request],
    ids_distinct: bool,
) -> Slice<'r> {
    // Python's integers: the instants and offsets are exact at any size.
    let bounds = |iv: &Value| -> Option<(Int, Int)> {
        if !iv.is_object() {
            return None;
        }
        let at = |k: &str| int_value(pyjson::get(iv, k));
        Some((at("started_at_ns"), at("ended_at_ns")))
    };
    let span =
        bounds(pyjson::get(intervals, "measured_span")).or(bounds(pyjson::get(intervals, "rate")));
    let origin = span.as_ref().map_or(Int::default(), |(s, _)| s.clone());
    // The offsets are whole nanoseconds in a float (finite: validated).
    let offset = |ns: f64| Int::from_f64(ns).unwrap_or_default();
    let mut begin = origin.add(&offset(segment.start_offset_ns));
    let mut end = origin.add(&offset(segment.end_offset_ns));
    if let Some((s, e)) = span {
        begin = begin.max(s);
        end = end.min(e.max(begin.clone()));
    }
    let members: Vec<&Request> = reqs
        .iter()
        .copied()
        .filter(|r| belongs(r, &begin, &end, membership))
        .collect();
    let by_id = if ids_distinct {
        members.clone()
    } else {
        same_ids(&members, reqs)
    };
    Slice {
        interval: crate::analysis::case::interval("segment", &begin, &end, membership.cohort()),
        members,
        by_id,
    }
}

fn belongs(r: &Request, begin: &Int, end: &Int, membership: Membership) -> bool {
    match membership {
        Membership::Arrival => r
            .intended_at()
            .or_else(|| r.started_at())
            .is_some_and(|t| begin <= &t && &t < end),
        Membership::Overlap => match (r.started_at(), r.ended_at()) {
            (Some(s), Some(e)) => &s < end && &e >= begin,
            _ => false,
        },
    }
}

/// `str(request_id)`, borrowed when it is a string.
fn id_text(r: &Request) -> Cow<'_, str> {
    match &r.request_id {
        Value::String(s) => Cow::Borrowed(s),
        other => Cow::Owned(pyjson::str_form(other)),
    }
}

/// The case's requests whose id text is a member's, in case order.
fn same_ids<'r>(members: &[&'r Request], reqs: &[&'r Request]) -> Vec<&'r Request> {
    let ids: HashSet<Cow<'_, str>> = members.iter().map(|r| id_text(r)).collect();
    if ids.len() == members.len() && members.len() == reqs.len() {
        // Every request is a member.
        return members.to_vec();
    }
    reqs.iter()
        .copied()
        .filter(|r| ids.contains(&id_text(r)))
        .collect()
}

/// A segment's population (`count_population`): its requests by status,
/// with no schedule and no cohort checks of its own.
pub fn population(members: &[&Request], admitted: Option<&HashSet<String>>) -> Value {
    let mut n: BTreeMap<&str, usize> = BTreeMap::new();
    let mut other: BTreeMap<String, i64> = BTreeMap::new();
    for r in members {
        let counted = match r.status.as_str() {
            "ok" => "successful",
            "error" => "failed",
            "timeout" => "timed_out",
            "cancelled" => "cancelled",
            s @ ("dropped" | "unreachable" | "delivery_unknown" | "rejected") => s,
            s => {
                *other.entry(s.to_owned()).or_insert(0) += 1;
                continue;
            }
        };
        *n.entry(counted).or_insert(0) += 1;
    }
    let count = |k: &str| n.get(k).copied().unwrap_or(0);
    let offered = members.len();
    let sent = offered - count("dropped");
    let accepted = sent as i64
        - count("unreachable") as i64
        - count("delivery_unknown") as i64
        - count("rejected") as i64;
    let (server_admitted, coverage) =
        crate::analysis::case::server_admission(members, accepted, admitted);
    json!({
        "offered": offered, "scheduled": null, "dropped": count("dropped"), "sent": sent,
        "unreachable": count("unreachable"), "delivery_unknown": count("delivery_unknown"),
        "rejected": count("rejected"), "accepted": accepted, "successful": count("successful"),
        "failed": count("failed"), "timed_out": count("timed_out"), "cancelled": count("cancelled"),
        "censored": count("timed_out") + count("cancelled"), "other": other,
        "server_admitted": server_admitted, "server_evidence_coverage": coverage,
        "cohort_valid": true, "issues": [],
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn usage(text: &str) -> String {
        match Segment::parse(text) {
            Err(SegmentError::Usage(m)) => m,
            other => panic!("{text}: {other:?}"),
        }
    }

    /// The reference's messages, one per way a spec is wrong (taken from
    /// `stormlog infer compare --segment ...` of stormlog 0.4.3).
    #[test]
    fn bad_specs_are_refused_with_the_reference_messages() {
        for (text, message) in [
            ("early", "--segment 'early': use NAME=START:END"),
            ("=1:2", "--segment '=1:2': use NAME=START:END"),
            ("a=1", "--segment 'a=1': use NAME=START:END"),
            ("a=:2", "--segment 'a=:2': use NAME=START:END"),
            ("a=x:2", "--segment 'a=x:2': 'x' is not a number"),
            ("a=0:1:2", "--segment 'a=0:1:2': '1:2' is not a number"),
            (
                "a=1:inf",
                "--segment 'a=1:inf': 'inf' is not a finite number",
            ),
            (
                "a=nan:2",
                "--segment 'a=nan:2': 'nan' is not a finite number",
            ),
            (
                "Early=0:1",
                "--segment 'Early=0:1': segment name 'Early' is not a short identifier",
            ),
            (
                "early=0.4:0.1",
                "--segment 'early=0.4:0.1': segment early: offsets must satisfy 0 <= start < end",
            ),
            (
                "a=-1:2",
                "--segment 'a=-1:2': segment a: offsets must satisfy 0 <= start < end",
            ),
            (
                "a=1e-10:2e-10",
                "--segment 'a=1e-10:2e-10': segment a: offsets must satisfy 0 <= start < end",
            ),
        ] {
            assert_eq!(usage(text), message);
        }
        // Python's repr quotes a text holding a single quote in double quotes.
        assert_eq!(
            usage("it's=0:1"),
            r#"--segment "it's=0:1": segment name "it's" is not a short identifier"#
        );
        assert_eq!(
            usage(r"a=x\y:1"),
            r"--segment 'a=x\\y:1': 'x\\y' is not a number"
        );
        let long = format!("{}=0:1", "a".repeat(65));
        assert!(usage(&long).ends_with("is not a short identifier"));
        assert!(Segment::parse(&format!("{}=0:1", "a".repeat(64))).is_ok());
        assert_eq!(
            Segment::parse("a=1e300:1e301"),
            Err(SegmentError::Unexpected(
                "cannot convert float infinity to integer".into()
            ))
        );
    }

    #[test]
    fn offsets_round_half_to_even_and_python_numbers_are_read() {
        let s = Segment::parse("a= 0.0000000005 : 1_0 ").unwrap();
        assert_eq!((s.start_offset_ns, s.end_offset_ns), (0.0, 1e10));
        let s = Segment::parse("late=0.4:3").unwrap();
        assert_eq!((s.start_offset_ns, s.end_offset_ns), (4e8, 3e9));
        assert_eq!(Segment::parse("a=-0:1").unwrap().start_offset_ns, 0.0);
    }

    #[test]
    fn repeated_names_are_named_once_each() {
        let segs: Vec<Segment> = ["a=0:1", "b=1:2", "b=2:3", "a=5:6", "c=0:1"]
            .iter()
            .map(|t| Segment::parse(t).unwrap())
            .collect();
        assert_eq!(
            check_unique(&segs),
            Err(SegmentError::Unexpected(
                "segment a, b is defined more than once".into()
            ))
        );
        assert_eq!(check_unique(&segs[..2]), Ok(()));
    }

    fn req(v: Value) -> Request {
        Request::from_record(0, v.as_object().unwrap())
    }

    #[test]
    fn arrival_and_overlap_members_and_the_clipped_interval() {
        const T: i64 = 1_000_000_000_000;
        // Sent at 0, 0.5, 1.0, 1.5 s, each for 0.6 s; the second arrived
        // (intended) at 0.3 s.
        let reqs: Vec<Request> = (0..4i64)
            .map(|i| {
                let sent = T + i * 500_000_000;
                let mut r = json!({"request_id": format!("r{i}"), "status": "ok",
                    "started_at_ns": sent, "ended_at_ns": sent + 600_000_000});
                if i == 1 {
                    r["intended_at_ns"] = json!(T + 300_000_000);
                }
                req(r)
            })
            .collect();
        let refs: Vec<&Request> = reqs.iter().collect();
        let intervals = json!({"measured_span": crate::analysis::case::interval(
            "measured_span", &Int::from(T), &Int::from(T + 2_100_000_000), "all_measured"), "rate": null});
        let ids = |s: &Slice| -> Vec<String> {
            s.members.iter().map(|r| id_text(r).into_owned()).collect()
        };
        let seg = Segment::parse("a=0.4:5").unwrap();
        let by_arrival = slice(&seg, Membership::Arrival, &intervals, &refs, true);
        assert_eq!(ids(&by_arrival), ["r2", "r3"]);
        // Clipped to the measured span's end.
        assert_eq!(by_arrival.interval["ended_at_ns"], T + 2_100_000_000);
        assert_eq!(by_arrival.interval["seconds"], 1.7);
        assert_eq!(by_arrival.interval["numerator_cohort"], "arrival_cohort");
        let seg = Segment::parse("a=0.6:1").unwrap();
        let by_overlap = slice(&seg, Membership::Overlap, &intervals, &refs, true);
        // r0 ended at 0.6 s (>= start), r2 was sent at 1.0 s (not < end).
        assert_eq!(ids(&by_overlap), ["r0", "r1"]);
        assert_eq!(by_overlap.interval["numerator_cohort"], "overlapping");
        let p = population(&by_overlap.members, None);
        assert_eq!(
            (p["offered"].as_i64(), p["successful"].as_i64()),
            (Some(2), Some(2))
        );
        assert_eq!(p["server_admitted"], Value::Null);
    }

    #[test]
    fn requests_sharing_a_members_id_text_are_read_with_it() {
        let reqs = [
            req(json!({"request_id": 5, "status": "ok", "started_at_ns": 10, "ended_at_ns": 11})),
            req(
                json!({"request_id": "5", "status": "error", "started_at_ns": 90, "ended_at_ns": 91}),
            ),
            req(json!({"status": "ok", "started_at_ns": 12, "ended_at_ns": 13})),
            req(json!({"status": "ok", "started_at_ns": 95, "ended_at_ns": 96})),
        ];
        let refs: Vec<&Request> = reqs.iter().collect();
        let seg = Segment::parse("a=0:0.00000005").unwrap();
        let s = slice(&seg, Membership::Arrival, &Value::Null, &refs, false);
        assert_eq!(s.members.len(), 2);
        assert_eq!(s.by_id.len(), 4);
    }
}
