//! Judging one request (docs/slo-policy.md §7): the value each criterion reads (client
//! values from the request, server values from its joined vLLM span), the
//! plausibility rule, one criterion's outcome, and the request's verdict.

use super::criteria::CriterionKey;
use super::policy::{Criterion, Policy};
use super::Spans;
use crate::model::Request;
use crate::py::json as pyjson;
use std::borrow::Cow;

/// Why a criterion has no value or does not apply: one of docs/slo-policy.md §9's
/// reasons, borrowed when it is a fixed word (no allocation per request and
/// criterion: a report measures every request for every metric), owned when
/// it names a span attribute or a quarantine.
pub type Reason = Cow<'static, str>;

/// A criterion's value for one request, in milliseconds, or why there is none.
#[derive(Debug, Clone, PartialEq)]
pub enum Measure {
    /// Finite and not negative.
    Value(f64),
    /// No value could be read; the reason is one of docs/slo-policy.md §9's.
    Unknown(Reason),
    /// The criterion does not apply (one output token has no TPOT).
    NotApplicable(Reason),
}

/// The value of the criterion named `key` (`client.ttft`, `server.queue`…).
/// An aggregate-only criterion is unknown with `aggregate_only`; a key that
/// names no criterion is unknown with `no_value`.
pub fn measure(req: &Request, key: &str, spans: &Spans) -> Measure {
    match CriterionKey::from_key(key) {
        Some(k) if k.is_aggregate_only() => Measure::Unknown("aggregate_only".into()),
        Some(k) => measure_key(req, k, spans),
        None => Measure::Unknown("no_value".into()),
    }
}

/// [`measure`] for a known criterion.
pub fn measure_key(req: &Request, key: CriterionKey, spans: &Spans) -> Measure {
    plausible(raw_measure(req, key, spans))
}

fn unknown(reason: &'static str) -> Measure {
    Measure::Unknown(Cow::Borrowed(reason))
}

/// [`measure_key`]'s value, when it has one: what the latency block reads
/// of every request for each of its metrics. The client's own fields are
/// read straight off the request, without making the [`Measure`] and its
/// reason only to keep its number (a 90,000-request report measured 450,000
/// times for its latency block alone); the other keys go through
/// [`measure_key`].
pub fn measure_value(req: &Request, key: CriterionKey, spans: &Spans) -> Option<f64> {
    use CriterionKey::*;
    let raw = match key {
        ClientTtft => req.ttft_ms(),
        ClientTtftFromIntended => match (req.ttft_ms(), req.dispatch_lag_ms()) {
            (Some(t), Some(lag)) => Some(t + lag),
            _ => None,
        },
        ClientE2e => req.e2e_latency_ms(),
        _ => {
            return match measure_key(req, key, spans) {
                Measure::Value(v) => Some(v),
                _ => None,
            }
        }
    };
    raw.filter(|v| is_plausible(*v))
}

/// docs/slo-policy.md §7.1 and §7.2, before the plausibility check.
fn raw_measure(req: &Request, key: CriterionKey, spans: &Spans) -> Measure {
    use CriterionKey::*;
    let ttft = req.ttft_ms();
    let e2e = req.e2e_latency_ms();
    match key {
        ClientTtft => ttft.map_or_else(|| unknown("no_client_ttft"), Measure::Value),
        ClientTtftFromIntended => match (ttft, req.dispatch_lag_ms()) {
            (None, _) => unknown("no_client_ttft"),
            (Some(_), None) => unknown("no_dispatch_lag"),
            (Some(t), Some(lag)) => Measure::Value(t + lag),
        },
        ClientE2e => e2e.map_or_else(|| unknown("no_client_e2e"), Measure::Value),
        ClientE2eFromIntended => match (req.intended_at_ns(), req.ended_at_ns()) {
            _ if req.has_wide_times() => match (req.intended_at(), req.ended_at()) {
                (Some(start), Some(end)) => crate::model::request::span_ms_exact(&start, &end)
                    .map_or_else(|| unknown("no_intended_or_end_time"), Measure::Value),
                _ => unknown("no_intended_or_end_time"),
            },
            (Some(start), Some(end)) => Measure::Value(crate::model::request::span_ms(start, end)),
            _ => unknown("no_intended_or_end_time"),
        },
        ClientTpot => {
            // vLLM's formula, only with the count the server itself reported:
            // a local tokenizer's count is not the served one.
            if req.output_token_source != "server_usage" {
                return unknown("output_tokens_not_server_reported");
            }
            let tokens = match req.output_tokens() {
                Some(n) if req.output_tokens_is_int => n,
                _ => return unknown("no_output_tokens"),
            };
            if tokens <= 1.0 {
                return Measure::NotApplicable("at_most_one_output_token".into());
            }
            match (ttft, e2e) {
                (Some(t), Some(e)) => Measure::Value((e - t) / (tokens - 1.0)),
                _ => unknown("no_client_ttft_or_e2e"),
            }
        }
        ServerTtft | ServerE2e | ServerQueue => {
            let id = pyjson::str_form(&req.x_request_id);
            let Some(attributes) = spans.joined.get(&id) else {
                return Measure::Unknown(
                    spans
                        .quarantined
                        .get(&id)
                        .map_or(Cow::Borrowed("no_joined_span"), |r| Cow::Owned(r.clone())),
                );
            };
            let attribute = key.span_attribute().unwrap_or_default();
            match attributes.get(attribute).and_then(pyjson::real) {
                Some(seconds) => Measure::Value(seconds * 1000.0),
                None => Measure::Unknown(format!("span_attribute_missing:{attribute}").into()),
            }
        }
        ServerItl | ServerTpot => unknown("aggregate_only"),
    }
}

/// docs/slo-policy.md §7.3: a value no latency can have is unknown. A negative one
/// (a clock stepped back) would otherwise count as fast.
fn plausible(m: Measure) -> Measure {
    match m {
        Measure::Value(v) if !v.is_finite() => unknown("non_finite_value"),
        Measure::Value(v) if v < 0.0 => unknown("negative_value"),
        other => other,
    }
}

/// Whether [`plausible`] keeps the value `v`.
fn is_plausible(v: f64) -> bool {
    v.is_finite() && v >= 0.0
}

/// One criterion's outcome for one request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Outcome {
    Pass,
    Fail,
    NotApplicable,
    Unknown,
}

impl Outcome {
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Pass => "pass",
            Outcome::Fail => "fail",
            Outcome::NotApplicable => "not_applicable",
            Outcome::Unknown => "unknown",
        }
    }
}

/// A criterion judged on one request: the outcome, and for `unknown` and
/// `not_applicable` the reason.
#[derive(Debug, Clone, PartialEq)]
pub struct Judged {
    pub outcome: Outcome,
    pub reason: Option<Reason>,
}

/// The limit is inclusive: a value passes when it is at most `max_ms`. The
/// one comparison every judgement makes, so that counting the values at or
/// below a threshold in a sorted column (`slo::sweep`) agrees with it.
#[inline]
pub fn passes(value: f64, max_ms: f64) -> bool {
    value <= max_ms
}

/// docs/slo-policy.md §7.4.
pub fn judge(criterion: &Criterion, req: &Request, spans: &Spans) -> Judged {
    let (outcome, reason) = if criterion.key.is_aggregate_only() {
        (Outcome::Unknown, Some(Cow::Borrowed("aggregate_only")))
    } else {
        match measure_key(req, criterion.key, spans) {
            Measure::NotApplicable(r) => (Outcome::NotApplicable, Some(r)),
            Measure::Unknown(r) => (Outcome::Unknown, Some(r)),
            Measure::Value(v) if passes(v, criterion.max_ms) => (Outcome::Pass, None),
            Measure::Value(_) => (Outcome::Fail, None),
        }
    };
    Judged { outcome, reason }
}

/// A request's verdict (docs/slo-policy.md §7.5).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    Met,
    Missed,
    Unknown,
}

/// A request judged against a whole policy.
#[derive(Debug, Clone, PartialEq)]
pub struct RequestJudgement {
    pub verdict: Verdict,
    /// The request succeeded (`status == "ok"`).
    pub ok: bool,
    /// One entry per criterion, in policy order.
    pub criteria: Vec<Judged>,
}

/// Judges every criterion; a request that did not succeed is missed whatever
/// its criteria say (they are still judged, for diagnosis).
pub fn judge_request(policy: &Policy, req: &Request, spans: &Spans) -> RequestJudgement {
    let criteria: Vec<Judged> = policy
        .criteria
        .iter()
        .map(|c| judge(c, req, spans))
        .collect();
    let ok = req.is_ok();
    RequestJudgement {
        verdict: verdict(
            ok,
            criteria.iter().any(|j| j.outcome == Outcome::Fail),
            criteria.iter().any(|j| j.outcome == Outcome::Unknown),
        ),
        ok,
        criteria,
    }
}

/// A request's verdict from its status (`ok`) and whether any criterion
/// failed or was left unknown: a request that did not succeed is missed.
pub fn verdict(ok: bool, any_fail: bool, any_unknown: bool) -> Verdict {
    if !ok || any_fail {
        Verdict::Missed
    } else if any_unknown {
        Verdict::Unknown
    } else {
        Verdict::Met
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::slo::tests::{no_spans, request};
    use serde_json::json;
    use std::collections::HashMap;

    #[test]
    fn client_values() {
        let (j, q) = no_spans();
        let s = Spans {
            joined: &j,
            quarantined: &q,
        };
        let r = request(
            json!({"status": "ok", "ttft_ms": 40, "e2e_latency_ms": 100.5,
            "dispatch_lag_ms": 2.5, "intended_at_ns": 1_795_961_411_808_261_135_i64,
            "ended_at_ns": 1_795_961_411_908_261_136_i64, "output_tokens": 11,
            "output_token_source": "server_usage"}),
        );
        assert_eq!(measure(&r, "client.ttft", &s), Measure::Value(40.0));
        assert_eq!(
            measure(&r, "client.ttft_from_intended", &s),
            Measure::Value(42.5)
        );
        assert_eq!(measure(&r, "client.e2e", &s), Measure::Value(100.5));
        assert_eq!(
            measure(&r, "client.e2e_from_intended", &s),
            Measure::Value(100.000001)
        );
        assert_eq!(measure(&r, "client.tpot", &s), Measure::Value(6.05));
        assert_eq!(
            measure(&r, "server.itl", &s),
            Measure::Unknown("aggregate_only".into())
        );
        assert_eq!(
            measure(&r, "server.ttft", &s),
            Measure::Unknown("no_joined_span".into())
        );

        let bare = request(json!({"status": "ok", "ttft_ms": 40}));
        assert_eq!(
            measure(&bare, "client.ttft_from_intended", &s),
            Measure::Unknown("no_dispatch_lag".into())
        );
        assert_eq!(
            measure(&bare, "client.e2e", &s),
            Measure::Unknown("no_client_e2e".into())
        );
        assert_eq!(
            measure(&bare, "client.e2e_from_intended", &s),
            Measure::Unknown("no_intended_or_end_time".into())
        );
        assert_eq!(
            measure(&bare, "client.tpot", &s),
            Measure::Unknown("output_tokens_not_server_reported".into())
        );

        let tpot = |extra: serde_json::Value| {
            let mut rec = json!({"status": "ok", "output_token_source": "server_usage"});
            for (k, v) in extra.as_object().unwrap() {
                rec[k] = v.clone();
            }
            measure(&request(rec), "client.tpot", &s)
        };
        assert_eq!(
            tpot(json!({"output_tokens": 5.0})),
            Measure::Unknown("no_output_tokens".into())
        );
        assert_eq!(
            tpot(json!({"output_tokens": true})),
            Measure::Unknown("no_output_tokens".into())
        );
        assert_eq!(
            tpot(json!({"output_tokens": 1})),
            Measure::NotApplicable("at_most_one_output_token".into())
        );
        assert_eq!(
            tpot(json!({"output_tokens": 0})),
            Measure::NotApplicable("at_most_one_output_token".into())
        );
        assert_eq!(
            tpot(json!({"output_tokens": 3, "ttft_ms": 5})),
            Measure::Unknown("no_client_ttft_or_e2e".into())
        );
        // Plausibility: a negative or non-finite value is unknown.
        assert_eq!(
            tpot(json!({"output_tokens": 3, "ttft_ms": 50, "e2e_latency_ms": 10})),
            Measure::Unknown("negative_value".into())
        );
        let nan =
            request(json!({"status": "ok", "ttft_ms": pyjson::NAN, "e2e_latency_ms": pyjson::INF}));
        assert_eq!(
            measure(&nan, "client.ttft", &s),
            Measure::Unknown("non_finite_value".into())
        );
        assert_eq!(
            measure(&nan, "client.e2e", &s),
            Measure::Unknown("non_finite_value".into())
        );
    }

    #[test]
    fn server_values_come_from_the_joined_span() {
        let mut joined = HashMap::new();
        joined.insert(
            "a".to_owned(),
            json!({"gen_ai.latency.time_to_first_token": 0.05, "gen_ai.latency.e2e": "x",
                   "gen_ai.latency.time_in_queue": -0.001})
            .as_object()
            .unwrap()
            .clone(),
        );
        let mut quarantined = HashMap::new();
        quarantined.insert("b".to_owned(), "conflicting_spans".to_owned());
        quarantined.insert("None".to_owned(), "multiple_spans".to_owned());
        let s = Spans {
            joined: &joined,
            quarantined: &quarantined,
        };
        let a = request(json!({"status": "ok", "x_request_id": "a"}));
        assert_eq!(measure(&a, "server.ttft", &s), Measure::Value(50.0));
        assert_eq!(
            measure(&a, "server.e2e", &s),
            Measure::Unknown("span_attribute_missing:gen_ai.latency.e2e".into())
        );
        assert_eq!(
            measure(&a, "server.queue", &s),
            Measure::Unknown("negative_value".into())
        );
        let b = request(json!({"status": "ok", "x_request_id": "b"}));
        assert_eq!(
            measure(&b, "server.ttft", &s),
            Measure::Unknown("conflicting_spans".into())
        );
        // A dropped request's id is null, looked up as "None".
        let dropped = request(json!({"status": "dropped", "x_request_id": null}));
        assert_eq!(
            measure(&dropped, "server.queue", &s),
            Measure::Unknown("multiple_spans".into())
        );
        let c = request(json!({"status": "ok", "x_request_id": "c"}));
        assert_eq!(
            measure(&c, "server.ttft", &s),
            Measure::Unknown("no_joined_span".into())
        );
    }

    #[test]
    fn verdicts() {
        let (j, q) = no_spans();
        let s = Spans {
            joined: &j,
            quarantined: &q,
        };
        let p = crate::slo::parse_flags(&["ttft:100".into(), "tpot:30".into()]).unwrap();
        let v = |rec| judge_request(&p, &request(rec), &s).verdict;
        assert_eq!(
            v(
                json!({"status": "ok", "ttft_ms": 50, "e2e_latency_ms": 300, "output_tokens": 11, "output_token_source": "server_usage"})
            ),
            Verdict::Met
        );
        assert_eq!(
            v(json!({"status": "ok", "output_tokens": 1, "output_token_source": "server_usage"})),
            Verdict::Unknown
        );
        assert_eq!(
            v(
                json!({"status": "ok", "ttft_ms": 150, "output_tokens": 5, "output_token_source": "tiktoken"})
            ),
            Verdict::Missed
        );
        assert_eq!(
            v(
                json!({"status": "error", "ttft_ms": 50, "e2e_latency_ms": 300, "output_tokens": 11, "output_token_source": "server_usage"})
            ),
            Verdict::Missed
        );
        // The limit is inclusive.
        assert_eq!(
            v(
                json!({"status": "ok", "ttft_ms": 100, "output_tokens": 1, "output_token_source": "server_usage"})
            ),
            Verdict::Met
        );
    }
}
