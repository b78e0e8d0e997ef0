//! A case judged against a policy: the `stormlog.infer.slo_evaluation` v1
//! record (docs/slo-policy.md §8) with attainment bounds, per-criterion marginals,
//! measurability, evidence coverage and SLO goodput, and its text line.
//!
//! Unknown outcomes widen the bounds (missed for the lower one, met for the
//! upper one); they never move a single figure.

use std::borrow::Cow;

use serde_json::{json, Map, Value};

use super::digest::digest;
use super::judge::{judge, verdict, Judged, Outcome, Reason, Verdict};
use super::policy::Policy;
use super::{PolicySource, Spans};
use crate::model::Request;
use crate::py::json as pyjson;

/// The `cases.<id>.slo` record. `requests` are the case's measured requests
/// in file order, every status; `rate_interval` is `intervals.rate` (null or
/// a measured-interval object); `population` the case population (null for
/// a segment, which has no cohort checks).
pub fn evaluate_case(
    requests: &[&Request],
    policy: &Policy,
    source: PolicySource,
    rate_interval: &Value,
    population: &Value,
    spans: &Spans,
) -> Value {
    evaluate_judged(
        judge_case(requests, policy, spans),
        policy,
        source,
        rate_interval,
        population,
    )
}

/// A case's requests judged against a policy, counted: the per-request part
/// of [`evaluate_case`], which needs neither the rate interval nor the
/// population (a report judges while it finds them). Only counts are kept,
/// no judgement per request.
#[derive(Debug)]
pub struct CaseJudgement {
    offered: usize,
    met: usize,
    unknown: usize,
    /// Successful requests, and those of them no criterion left unknown.
    ok: usize,
    ok_known: usize,
    /// Per criterion, in policy order: its outcomes among successful requests.
    criteria: Vec<CriterionTally>,
    /// The met requests' output tokens, summed exactly, as Python's integers
    /// are (a count of 1e308 is one).
    good_tokens: crate::py::Int,
}

/// One criterion's outcomes among a case's successful requests: how many of
/// each, and the reasons of the unknown ones with their counts, in order of
/// first appearance.
#[derive(Debug, Default)]
struct CriterionTally {
    outcomes: [usize; 4],
    unknown_reasons: Vec<(Reason, usize)>,
}

fn outcome_index(o: Outcome) -> usize {
    match o {
        Outcome::Pass => 0,
        Outcome::Fail => 1,
        Outcome::NotApplicable => 2,
        Outcome::Unknown => 3,
    }
}

impl CriterionTally {
    fn take(&mut self, j: Judged) {
        self.outcomes[outcome_index(j.outcome)] += 1;
        if j.outcome != Outcome::Unknown {
            return;
        }
        let reason = j.reason.unwrap_or(Cow::Borrowed("no_value"));
        match self.unknown_reasons.iter_mut().find(|(r, _)| *r == reason) {
            Some((_, n)) => *n += 1,
            None => self.unknown_reasons.push((reason, 1)),
        }
    }

    fn count(&self, o: Outcome) -> usize {
        self.outcomes[outcome_index(o)]
    }

    fn successful(&self) -> usize {
        self.outcomes.iter().sum()
    }
}

/// Judges each of `requests` against `policy` (as [`judge_request`] does)
/// and counts the judgements.
pub fn judge_case(requests: &[&Request], policy: &Policy, spans: &Spans) -> CaseJudgement {
    let mut case = CaseJudgement {
        offered: requests.len(),
        met: 0,
        unknown: 0,
        ok: 0,
        ok_known: 0,
        criteria: policy
            .criteria
            .iter()
            .map(|_| CriterionTally::default())
            .collect(),
        good_tokens: crate::py::Int::default(),
    };
    let mut good_tokens = crate::py::IntSum::default();
    for r in requests {
        let ok = r.is_ok();
        let (mut any_fail, mut any_unknown) = (false, false);
        for (c, tally) in policy.criteria.iter().zip(&mut case.criteria) {
            let j = judge(c, r, spans);
            any_fail |= j.outcome == Outcome::Fail;
            any_unknown |= j.outcome == Outcome::Unknown;
            if ok {
                tally.take(j);
            }
        }
        match verdict(ok, any_fail, any_unknown) {
            Verdict::Met => {
                case.met += 1;
                good_tokens.take(r.output_tokens_term());
            }
            Verdict::Unknown => case.unknown += 1,
            Verdict::Missed => {}
        }
        if ok {
            case.ok += 1;
            case.ok_known += usize::from(!any_unknown);
        }
    }
    case.good_tokens = good_tokens.total();
    case
}

/// [`evaluate_case`]'s record of a case judged by [`judge_case`].
pub fn evaluate_judged(
    case: CaseJudgement,
    policy: &Policy,
    source: PolicySource,
    rate_interval: &Value,
    population: &Value,
) -> Value {
    let CaseJudgement {
        offered,
        met,
        unknown,
        ok,
        ok_known,
        criteria,
        good_tokens,
    } = case;
    let reason = unmeasurable(policy, &criteria);
    let seconds = pyjson::get(rate_interval, "seconds");
    let rate = |count: f64| -> Value {
        match pyjson::real(seconds) {
            Some(s) if s.is_finite() && s != 0.0 && reason.is_none() => Value::from(count / s),
            _ => Value::Null,
        }
    };
    let measured = |v: Option<f64>| -> Value {
        match v {
            Some(x) if reason.is_none() => Value::from(x),
            _ => Value::Null,
        }
    };
    let (cohort_valid, cohort_issues) = match population {
        Value::Object(p) => (
            p.get("cohort_valid").cloned().unwrap_or(Value::Null),
            match p.get("issues") {
                Some(Value::Array(items)) => Value::Array(items.clone()),
                _ => json!([]),
            },
        ),
        _ => (Value::Null, json!([])),
    };
    let mut rec = Map::new();
    let mut put = |k: &str, v: Value| {
        rec.insert(k.to_owned(), v);
    };
    put("format", "stormlog.infer.slo_evaluation".into());
    put("version", 1.into());
    put("slo_name", policy.name.clone().into());
    put("slo_digest", digest(policy).into());
    put("slo_source", source.as_str().into());
    put(
        "status",
        if reason.is_none() {
            "evaluated"
        } else {
            "unmeasurable"
        }
        .into(),
    );
    put("reason", reason.clone().map_or(Value::Null, Value::from));
    put("population_declared", "offered".into());
    put("population_evaluated", "offered".into());
    put("offered", offered.into());
    put("met", met.into());
    put("missed", (offered - met - unknown).into());
    put("unknown", unknown.into());
    put("attainment_lower", measured(share(met, offered)));
    put("attainment_upper", measured(share(met + unknown, offered)));
    put(
        "evidence_coverage",
        share(ok_known, ok).map_or(Value::Null, Value::from),
    );
    put("per_criterion", per_criterion(policy, &criteria, offered));
    put("interval", rate_interval.clone());
    put("goodput_lower_rps", rate(met as f64));
    put("goodput_upper_rps", rate((met + unknown) as f64));
    put(
        "goodput_lower_output_tps",
        good_tokens.to_f64().map_or(Value::Null, rate),
    );
    put("cohort_valid", cohort_valid);
    put("cohort_issues", cohort_issues);
    Value::Object(rec)
}

pub(crate) fn share(part: usize, whole: usize) -> Option<f64> {
    (whole > 0).then(|| part as f64 / whole as f64)
}

/// docs/slo-policy.md §8.4: the first criterion, in policy order, that is aggregate-only
/// or that every successful request left unknown (with its most common
/// reason; ties go to the reason met first).
fn unmeasurable(policy: &Policy, tallies: &[CriterionTally]) -> Option<String> {
    for (c, tally) in policy.criteria.iter().zip(tallies) {
        if c.key.is_aggregate_only() {
            return Some(format!("{}: aggregate_only", c.key));
        }
        let unknown = tally.count(Outcome::Unknown);
        if unknown > 0 && unknown == tally.successful() {
            // The first of the most common, in order of first appearance.
            let best = tally
                .unknown_reasons
                .iter()
                .fold(None::<(&str, usize)>, |acc, (r, n)| match acc {
                    Some((_, m)) if m >= *n => acc,
                    _ => Some((r, *n)),
                })
                .map_or("no_value", |(r, _)| r);
            return Some(format!("{}: {best}", c.key));
        }
    }
    None
}

/// docs/slo-policy.md §8.3: counts among successful requests, marginal bounds over
/// every offered request; no bounds for an aggregate-only criterion or one
/// no successful request could be judged on (`[0, 1]` would read as a figure).
fn per_criterion(policy: &Policy, tallies: &[CriterionTally], offered: usize) -> Value {
    let mut out = Map::new();
    for (c, tally) in policy.criteria.iter().zip(tallies) {
        let n = |o: Outcome| tally.count(o);
        let (pass, fail, na, unknown) = (
            n(Outcome::Pass),
            n(Outcome::Fail),
            n(Outcome::NotApplicable),
            n(Outcome::Unknown),
        );
        let m = Marginal::of_counts(c.key.is_aggregate_only(), pass, fail, na, unknown, offered);
        out.insert(
            c.key.as_str().to_owned(),
            json!({
                "pass": m.pass,
                "fail": m.fail,
                "not_applicable": m.not_applicable,
                "unknown": m.unknown,
                "attainment_lower": m.attainment_lower,
                "attainment_upper": m.attainment_upper,
            }),
        );
    }
    Value::Object(out)
}

/// One criterion's `per_criterion` entry (docs/slo-policy.md §8.3) as data: the counts
/// among successful requests and the marginal bounds over every offered
/// request. The report and `stormlog slo` both build it here.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Marginal {
    pub pass: usize,
    pub fail: usize,
    pub not_applicable: usize,
    pub unknown: usize,
    pub attainment_lower: Option<f64>,
    pub attainment_upper: Option<f64>,
}

impl Marginal {
    /// No bounds for an aggregate-only criterion or one no successful
    /// request could be judged on (`[0, 1]` would read as a figure).
    pub fn of_counts(
        aggregate_only: bool,
        pass: usize,
        fail: usize,
        not_applicable: usize,
        unknown: usize,
        offered: usize,
    ) -> Marginal {
        let na = not_applicable;
        let unjudgeable = unknown > 0 && unknown == pass + fail + na + unknown;
        let (attainment_lower, attainment_upper) = if aggregate_only || unjudgeable {
            (None, None)
        } else {
            (
                share(pass + na, offered),
                share(pass + na + unknown, offered),
            )
        };
        Marginal {
            pass,
            fail,
            not_applicable,
            unknown,
            attainment_lower,
            attainment_upper,
        }
    }
}

/// The case's text line (docs/slo-policy.md §8.6, docs/report.md §9), or None without an
/// evaluation.
pub fn case_text_line(case_slo: &Value) -> Option<String> {
    let Value::Object(slo) = case_slo else {
        return None;
    };
    let text = |k: &str| pyjson::str_form(pyjson::get(case_slo, k));
    let name = text("slo_name");
    if slo.get("status").and_then(Value::as_str) != Some("evaluated") {
        return Some(format!("  SLO {name}: unmeasurable ({})", text("reason")));
    }
    let pair = |lo: &str, hi: &str, fmt: fn(Option<f64>) -> String| {
        let (a, b) = (pyjson::get(case_slo, lo), pyjson::get(case_slo, hi));
        let (x, y) = (figure(a), figure(b));
        if pyjson::py_eq(a, b) {
            fmt(x)
        } else {
            format!("{}-{}", fmt(x), fmt(y))
        }
    };
    let attainment = pair("attainment_lower", "attainment_upper", percent);
    let goodput = pair("goodput_lower_rps", "goodput_upper_rps", two_decimals);
    Some(format!(
        "  SLO {name}: attainment {attainment} of {} offered, goodput {goodput} req/s, {} unknown",
        text("offered"),
        text("unknown")
    ))
}

/// A number as Python's `isinstance(v, (int, float))` sees it (booleans
/// count, as they do there).
fn figure(v: &Value) -> Option<f64> {
    match v {
        Value::Bool(b) => Some(f64::from(u8::from(*b))),
        _ => pyjson::real(v),
    }
}

/// Python's `f"{x:.1%}"`, `-` without a number.
fn percent(v: Option<f64>) -> String {
    v.map_or_else(|| "-".into(), |x| crate::py::float::percent(x, 1, false))
}

/// Python's `f"{x:.2f}"`, `-` without a number.
fn two_decimals(v: Option<f64>) -> String {
    v.map_or_else(|| "-".into(), |x| crate::py::float::fixed(x, 2, false))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::slo::tests::{no_spans, request};
    use std::collections::HashMap;

    fn interval(seconds: f64) -> Value {
        json!({"kind": "measured_span", "started_at_ns": 0, "ended_at_ns": (seconds * 1e9) as i64,
               "seconds": seconds, "numerator_cohort": "all_measured"})
    }

    fn flags(f: &[&str]) -> Policy {
        crate::slo::parse_flags(&f.iter().map(|s| s.to_string()).collect::<Vec<_>>()).unwrap()
    }

    /// docs/slo-policy.md §8.7 A: five requests, one slow TTFT, one timeout.
    fn example_a() -> Vec<Request> {
        vec![
            request(
                json!({"status": "ok", "ttft_ms": 40, "e2e_latency_ms": 100, "output_tokens": 10}),
            ),
            request(
                json!({"status": "ok", "ttft_ms": 80, "e2e_latency_ms": 200, "output_tokens": 10}),
            ),
            request(
                json!({"status": "ok", "ttft_ms": 120, "e2e_latency_ms": 300, "output_tokens": 10}),
            ),
            request(
                json!({"status": "ok", "ttft_ms": 90, "e2e_latency_ms": 400, "output_tokens": 10}),
            ),
            request(json!({"status": "timeout", "e2e_latency_ms": 600})),
        ]
    }

    #[test]
    fn worked_example_a() {
        let (j, q) = no_spans();
        let s = Spans {
            joined: &j,
            quarantined: &q,
        };
        let reqs = example_a();
        let refs: Vec<&Request> = reqs.iter().collect();
        let p = flags(&["ttft:100", "e2e:500"]);
        let pop = json!({"cohort_valid": true, "issues": []});
        let rec = evaluate_case(&refs, &p, PolicySource::Flags, &interval(1.6), &pop, &s);
        assert_eq!(
            rec["slo_digest"],
            "ea7f74e77d0130282af5f41d13cd6d6260b75deeec7de776f106ed64107be5eb"
        );
        assert_eq!(
            (
                rec["met"].clone(),
                rec["missed"].clone(),
                rec["unknown"].clone()
            ),
            (json!(3), json!(2), json!(0))
        );
        assert_eq!(rec["attainment_lower"], json!(0.6));
        assert_eq!(rec["attainment_upper"], json!(0.6));
        assert_eq!(rec["goodput_lower_rps"], json!(1.875));
        assert_eq!(rec["goodput_lower_output_tps"], json!(18.75));
        assert_eq!(rec["evidence_coverage"], json!(1.0));
        assert_eq!(
            rec["per_criterion"]["client.ttft"],
            json!({"pass": 3, "fail": 1, "not_applicable": 0, "unknown": 0, "attainment_lower": 0.6, "attainment_upper": 0.6})
        );
        assert_eq!(
            rec["per_criterion"]["client.e2e"]["attainment_lower"],
            json!(0.8)
        );
        assert_eq!(rec["cohort_valid"], json!(true));
        assert_eq!(
            case_text_line(&rec).unwrap(),
            "  SLO cli: attainment 60.0% of 5 offered, goodput 1.88 req/s, 0 unknown"
        );
        // F: without a rate interval, attainment stays and goodput goes.
        let rec = evaluate_case(
            &refs,
            &p,
            PolicySource::Flags,
            &Value::Null,
            &Value::Null,
            &s,
        );
        assert_eq!(rec["goodput_lower_rps"], Value::Null);
        assert_eq!(rec["goodput_lower_output_tps"], Value::Null);
        assert_eq!(rec["interval"], Value::Null);
        assert_eq!(rec["cohort_valid"], Value::Null);
        assert_eq!(rec["cohort_issues"], json!([]));
        assert_eq!(
            case_text_line(&rec).unwrap(),
            "  SLO cli: attainment 60.0% of 5 offered, goodput - req/s, 0 unknown"
        );
    }

    #[test]
    fn worked_example_b_unknowns_widen_the_bounds() {
        let (j, q) = no_spans();
        let s = Spans {
            joined: &j,
            quarantined: &q,
        };
        let reqs = [
            request(
                json!({"status": "ok", "ttft_ms": 50, "e2e_latency_ms": 300, "output_tokens": 11, "output_token_source": "server_usage"}),
            ),
            request(
                json!({"status": "ok", "ttft_ms": null, "output_tokens": 1, "output_token_source": "server_usage"}),
            ),
            request(
                json!({"status": "ok", "ttft_ms": 150, "output_tokens": 5, "output_token_source": "tiktoken"}),
            ),
            request(json!({"status": "error"})),
            request(json!({"status": "dropped"})),
        ];
        let refs: Vec<&Request> = reqs.iter().collect();
        let p = flags(&["ttft:100", "tpot:30"]);
        let rec = evaluate_case(
            &refs,
            &p,
            PolicySource::File,
            &interval(2.0),
            &Value::Null,
            &s,
        );
        assert_eq!(rec["slo_source"], "file");
        assert_eq!(
            (
                rec["met"].clone(),
                rec["unknown"].clone(),
                rec["missed"].clone()
            ),
            (json!(1), json!(1), json!(3))
        );
        assert_eq!(
            (
                rec["attainment_lower"].clone(),
                rec["attainment_upper"].clone()
            ),
            (json!(0.2), json!(0.4))
        );
        assert_eq!(
            (
                rec["goodput_lower_rps"].clone(),
                rec["goodput_upper_rps"].clone()
            ),
            (json!(0.5), json!(1.0))
        );
        assert_eq!(rec["goodput_lower_output_tps"], json!(5.5));
        assert_eq!(rec["evidence_coverage"], json!(1.0 / 3.0));
        assert_eq!(
            rec["per_criterion"]["client.ttft"],
            json!({"pass": 1, "fail": 1, "not_applicable": 0, "unknown": 1, "attainment_lower": 0.2, "attainment_upper": 0.4})
        );
        assert_eq!(
            rec["per_criterion"]["client.tpot"],
            json!({"pass": 1, "fail": 0, "not_applicable": 1, "unknown": 1, "attainment_lower": 0.4, "attainment_upper": 0.6})
        );
        assert_eq!(
            case_text_line(&rec).unwrap(),
            "  SLO cli: attainment 20.0%-40.0% of 5 offered, goodput 0.50-1.00 req/s, 1 unknown"
        );
    }

    #[test]
    fn worked_example_c_server_criterion_with_spans() {
        let mut reqs = example_a();
        for (i, r) in reqs.iter_mut().enumerate().take(4) {
            r.x_request_id = json!(format!("r{i}"));
        }
        let mut joined = HashMap::new();
        joined.insert(
            "r0".to_owned(),
            json!({"gen_ai.latency.time_to_first_token": 0.05})
                .as_object()
                .unwrap()
                .clone(),
        );
        let mut quarantined = HashMap::new();
        quarantined.insert("r1".to_owned(), "conflicting_spans".to_owned());
        quarantined.insert("r2".to_owned(), "multiple_spans".to_owned());
        let s = Spans {
            joined: &joined,
            quarantined: &quarantined,
        };
        let refs: Vec<&Request> = reqs.iter().collect();
        let p = flags(&["server.ttft:100", "e2e:1000"]);
        let rec = evaluate_case(
            &refs,
            &p,
            PolicySource::Flags,
            &interval(1.6),
            &Value::Null,
            &s,
        );
        assert_eq!(
            (
                rec["met"].clone(),
                rec["unknown"].clone(),
                rec["missed"].clone()
            ),
            (json!(1), json!(3), json!(1))
        );
        assert_eq!(
            (
                rec["goodput_lower_rps"].clone(),
                rec["goodput_upper_rps"].clone()
            ),
            (json!(0.625), json!(2.5))
        );
        assert_eq!(rec["goodput_lower_output_tps"], json!(6.25));
        assert_eq!(rec["evidence_coverage"], json!(0.25));
        assert_eq!(rec["per_criterion"]["server.ttft"]["unknown"], json!(3));
        assert_eq!(
            rec["per_criterion"]["server.ttft"]["attainment_upper"],
            json!(0.8)
        );
        assert_eq!(
            case_text_line(&rec).unwrap(),
            "  SLO cli: attainment 20.0%-80.0% of 5 offered, goodput 0.62-2.50 req/s, 3 unknown"
        );
        // Case o1: no span for any successful request.
        let (j, q) = no_spans();
        let none = Spans {
            joined: &j,
            quarantined: &q,
        };
        let rec = evaluate_case(
            &refs,
            &p,
            PolicySource::Flags,
            &interval(1.6),
            &Value::Null,
            &none,
        );
        assert_eq!(rec["status"], "unmeasurable");
        assert_eq!(rec["reason"], "server.ttft: no_joined_span");
        for k in [
            "attainment_lower",
            "attainment_upper",
            "goodput_lower_rps",
            "goodput_upper_rps",
            "goodput_lower_output_tps",
        ] {
            assert_eq!(rec[k], Value::Null, "{k}");
        }
        assert_eq!(rec["met"], json!(0));
        assert_eq!(rec["unknown"], json!(4));
        assert_eq!(
            rec["per_criterion"]["server.ttft"]["attainment_lower"],
            Value::Null
        );
        assert_eq!(
            case_text_line(&rec).unwrap(),
            "  SLO cli: unmeasurable (server.ttft: no_joined_span)"
        );
    }

    #[test]
    fn worked_examples_d_and_e() {
        let (j, q) = no_spans();
        let s = Spans {
            joined: &j,
            quarantined: &q,
        };
        let reqs = example_a();
        let refs: Vec<&Request> = reqs.iter().collect();
        let rec = evaluate_case(
            &refs,
            &flags(&["server.itl:100", "ttft:5"]),
            PolicySource::Flags,
            &interval(1.6),
            &Value::Null,
            &s,
        );
        assert_eq!(rec["reason"], "server.itl: aggregate_only");
        assert_eq!(
            rec["per_criterion"]["server.itl"],
            json!({"pass": 0, "fail": 0, "not_applicable": 0, "unknown": 4, "attainment_lower": null, "attainment_upper": null})
        );
        let failed = [
            request(json!({"status": "error"})),
            request(json!({"status": "dropped"})),
        ];
        let refs: Vec<&Request> = failed.iter().collect();
        let rec = evaluate_case(
            &refs,
            &flags(&["ttft:5"]),
            PolicySource::Flags,
            &interval(2.0),
            &Value::Null,
            &s,
        );
        assert_eq!(rec["status"], "evaluated");
        assert_eq!(
            (rec["met"].clone(), rec["missed"].clone()),
            (json!(0), json!(2))
        );
        assert_eq!(
            (
                rec["attainment_lower"].clone(),
                rec["attainment_upper"].clone()
            ),
            (json!(0.0), json!(0.0))
        );
        assert_eq!(rec["goodput_lower_rps"], json!(0.0));
        assert_eq!(rec["evidence_coverage"], Value::Null);
        assert_eq!(
            rec["per_criterion"]["client.ttft"],
            json!({"pass": 0, "fail": 0, "not_applicable": 0, "unknown": 0, "attainment_lower": 0.0, "attainment_upper": 0.0})
        );
    }

    #[test]
    fn most_common_reason_ties_go_to_the_first() {
        let (j, q) = no_spans();
        let s = Spans {
            joined: &j,
            quarantined: &q,
        };
        let reqs = [
            request(
                json!({"status": "ok", "e2e_latency_ms": 5, "output_tokens": 2, "output_token_source": "server_usage"}),
            ),
            request(json!({"status": "ok", "output_tokens": 2, "output_token_source": "tiktoken"})),
            request(
                json!({"status": "ok", "ttft_ms": 1, "output_tokens": 2.5, "output_token_source": "server_usage"}),
            ),
            request(json!({"status": "ok", "output_tokens": 2, "output_token_source": "tiktoken"})),
        ];
        let refs: Vec<&Request> = reqs.iter().collect();
        let rec = evaluate_case(
            &refs,
            &flags(&["tpot:5"]),
            PolicySource::Flags,
            &interval(1.0),
            &Value::Null,
            &s,
        );
        assert_eq!(
            rec["reason"],
            "client.tpot: output_tokens_not_server_reported"
        );
        let rec = evaluate_case(
            &refs[..3],
            &flags(&["tpot:5"]),
            PolicySource::Flags,
            &interval(1.0),
            &Value::Null,
            &s,
        );
        assert_eq!(rec["reason"], "client.tpot: no_client_ttft_or_e2e");
    }

    #[test]
    fn python_fixed_point() {
        assert_eq!(percent(Some(0.00125)), "0.1%");
        assert_eq!(two_decimals(Some(0.625)), "0.62");
        assert_eq!(two_decimals(Some(0.125)), "0.12");
        assert_eq!(two_decimals(Some(2.675)), "2.67");
        assert_eq!(percent(Some(1.0)), "100.0%");
        assert_eq!(percent(None), "-");
    }
}
