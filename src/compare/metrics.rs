//! Which per-run values a comparison compares, and how each is read from
//! a case of a run's analysis report (the reference's `compare_metrics`).
//! A metric reads one value or says why it cannot; SLO attainment and
//! goodput read as `(lower, upper)` bounds when outcomes are unknown.

use serde_json::Value;

use super::stats::{
    RunValue, DIFFERENCE, FRACTION_UNIT, HIGHER_IS_BETTER, LOG_RATIO, LOWER_IS_BETTER, RELATIVE,
};
use crate::py::float::{format_g, percent};
use crate::py::json::{get, is_number, number, real, str_form, truthy};

pub const UNMEASURABLE: &str = "unmeasurable";
pub const POPULATION_UNRECORDED: &str = "population_unrecorded";
/// A fraction's run that could not be measured: a miss in the run-level claim.
pub const RUN_MISSES: [&str; 2] = [UNMEASURABLE, POPULATION_UNRECORDED];
pub const LATENCY_KEYS: [&str; 6] = [
    "client.ttft",
    "client.e2e",
    "client.tpot",
    "client.e2e_from_intended",
    "server.ttft",
    "server.e2e",
];
pub const LEVELS: [&str; 4] = ["p50", "p90", "p95", "p99"];
const FRACTION_METRICS: [&str; 2] = ["attainment", "failure_fraction"];
const RATE_METRICS: [&str; 3] = ["goodput_rps", "output_tps", "throughput_rps"];
pub const SLO_METRICS: [&str; 2] = ["goodput_rps", "attainment"];

/// A reading: the value (or Missing) and why there is none, if so.
pub type Reading = (RunValue, Option<String>);

/// How a metric is read from a case.
#[derive(Debug, Clone, PartialEq)]
pub enum Reader {
    Goodput,
    Attainment,
    Throughput(&'static str),
    FailureFraction,
    Latency(&'static str, &'static str),
}

/// One compared metric: its direction, scale, units and reader.
#[derive(Debug, Clone)]
pub struct MetricSpec {
    pub name: String,
    pub direction: &'static str,
    pub scale: &'static str,
    pub unit: &'static str,
    pub value_unit: &'static str,
    pub reader: Reader,
    pub slo: bool,
    /// Whether the fraction's requests per run are counted (and how).
    pub trials: Option<Trials>,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Trials {
    Offered,
    SloOffered,
}

/// The metrics a case's report can give, in a stable order.
pub fn default_metrics(case: &Value) -> Vec<MetricSpec> {
    let spec = |name: &str, direction, scale, unit, value_unit, reader, slo, trials| MetricSpec {
        name: name.to_owned(),
        direction,
        scale,
        unit,
        value_unit,
        reader,
        slo,
        trials,
    };
    let mut metrics = vec![
        spec(
            "goodput_rps",
            HIGHER_IS_BETTER,
            LOG_RATIO,
            RELATIVE,
            "requests_per_second",
            Reader::Goodput,
            true,
            None,
        ),
        spec(
            "attainment",
            HIGHER_IS_BETTER,
            DIFFERENCE,
            FRACTION_UNIT,
            "fraction",
            Reader::Attainment,
            true,
            Some(Trials::SloOffered),
        ),
        spec(
            "throughput_rps",
            HIGHER_IS_BETTER,
            LOG_RATIO,
            RELATIVE,
            "requests_per_second",
            Reader::Throughput("requests_per_second"),
            false,
            None,
        ),
        spec(
            "output_tps",
            HIGHER_IS_BETTER,
            LOG_RATIO,
            RELATIVE,
            "tokens_per_second",
            Reader::Throughput("output_tokens_per_second"),
            false,
            None,
        ),
        spec(
            "failure_fraction",
            LOWER_IS_BETTER,
            DIFFERENCE,
            FRACTION_UNIT,
            "fraction",
            Reader::FailureFraction,
            false,
            Some(Trials::Offered),
        ),
    ];
    let present = get(get(case, "latency"), "metrics");
    for key in LATENCY_KEYS {
        if present.get(key).is_none() {
            continue;
        }
        for level in LEVELS {
            metrics.push(spec(
                &format!("{key}.{level}"),
                LOWER_IS_BETTER,
                LOG_RATIO,
                RELATIVE,
                "milliseconds",
                Reader::Latency(key, level),
                false,
                None,
            ));
        }
    }
    metrics
}

impl MetricSpec {
    /// The metric's value in one case, or why there is none.
    pub fn read(&self, case: &Value) -> Reading {
        match &self.reader {
            Reader::Goodput => goodput(case),
            Reader::Attainment => attainment(case),
            Reader::Throughput(key) => {
                let value = get(get(case, "throughput"), key);
                match number(value).filter(|_| is_number(value)) {
                    Some(v) => (RunValue::Point(v), None),
                    None => (RunValue::Missing, Some(rate_reason(case))),
                }
            }
            Reader::FailureFraction => {
                let population = get(case, "population");
                let (offered, successful) =
                    (get(population, "offered"), get(population, "successful"));
                match (number(offered), number(successful)) {
                    (Some(o), Some(s)) if o > 0.0 => (RunValue::Point((o - s) / o), None),
                    _ => (RunValue::Missing, Some(POPULATION_UNRECORDED.into())),
                }
            }
            Reader::Latency(key, level) => {
                let metric = get(get(get(case, "latency"), "metrics"), key);
                estimate(get(get(metric, "failure_penalized"), level))
            }
        }
    }

    /// A fraction's requests in one case.
    pub fn trials_in(&self, case: &Value) -> Option<i64> {
        let value = match self.trials? {
            Trials::Offered => get(get(case, "population"), "offered"),
            Trials::SloOffered => {
                let slo = get(case, "slo");
                if !slo.is_object() {
                    return None;
                }
                get(slo, "offered")
            }
        };
        number(value).filter(|v| *v > 0.0).map(|v| v.trunc() as i64)
    }
}

fn goodput(case: &Value) -> Reading {
    let slo = get(case, "slo");
    if !slo.is_object() {
        return (RunValue::Missing, Some("no_slo_policy".into()));
    }
    if get(slo, "status").as_str() != Some("evaluated") {
        return (RunValue::Missing, Some(UNMEASURABLE.into()));
    }
    let value = bounds(get(slo, "goodput_lower_rps"), get(slo, "goodput_upper_rps"));
    let reason = (value == RunValue::Missing).then(|| rate_reason(case));
    (value, reason)
}

fn attainment(case: &Value) -> Reading {
    let slo = get(case, "slo");
    if !slo.is_object() {
        return (RunValue::Missing, Some("no_slo_policy".into()));
    }
    if get(slo, "status").as_str() != Some("evaluated") {
        return (RunValue::Missing, Some(UNMEASURABLE.into()));
    }
    (
        bounds(get(slo, "attainment_lower"), get(slo, "attainment_upper")),
        None,
    )
}

fn rate_reason(case: &Value) -> String {
    let reason = get(get(case, "intervals"), "rate_reason");
    if truthy(reason) {
        str_form(reason)
    } else {
        "rate_unavailable".into()
    }
}

/// A quantile estimate's value, or why it cannot be gated.
fn estimate(e: &Value) -> Reading {
    if truthy(get(e, "penalized")) {
        return (RunValue::Missing, Some("penalized".into()));
    }
    let value = get(e, "value_ms");
    if real(value) == Some(f64::INFINITY) {
        // Worse than any value: the comparison fails it, never drops it.
        return (RunValue::Point(f64::INFINITY), None);
    }
    let num = number(value).filter(|_| is_number(value));
    if get(e, "sufficient") == &Value::Bool(false) {
        return (
            num.map_or(RunValue::Missing, RunValue::Point),
            Some("insufficient_tail_samples".into()),
        );
    }
    if let Some(v) = num {
        return (RunValue::Point(v), None);
    }
    let reason = get(e, "reason");
    (
        RunValue::Missing,
        Some(if truthy(reason) {
            str_form(reason)
        } else {
            "no_value".into()
        }),
    )
}

fn bounds(lower: &Value, upper: &Value) -> RunValue {
    match (
        number(lower).filter(|_| is_number(lower)),
        number(upper).filter(|_| is_number(upper)),
    ) {
        (Some(l), Some(u)) if l == u => RunValue::Point(l),
        (Some(l), Some(u)) => RunValue::Range(l, u),
        _ => RunValue::Missing,
    }
}

/// The share of a case's successful requests every SLO criterion judged.
pub fn evidence_coverage(case: &Value) -> Option<f64> {
    let slo = get(case, "slo");
    let value = get(slo, "evidence_coverage");
    number(value).filter(|_| slo.is_object() && is_number(value))
}

/// Every known metric name a name or pattern matches.
pub fn metric_names(pattern: &str) -> Vec<String> {
    let mut names: Vec<String> = FRACTION_METRICS
        .iter()
        .chain(RATE_METRICS.iter())
        .map(|s| (*s).to_owned())
        .collect();
    for key in LATENCY_KEYS {
        for level in LEVELS {
            names.push(format!("{key}.{level}"));
        }
    }
    names.into_iter().filter(|n| fnmatch(pattern, n)).collect()
}

/// The effect unit of the metrics a pattern matches, if it is one.
pub fn metric_unit(pattern: &str) -> Option<&'static str> {
    let mut units: Vec<&'static str> = metric_names(pattern)
        .iter()
        .map(|n| {
            if FRACTION_METRICS.contains(&n.as_str()) {
                FRACTION_UNIT
            } else {
                RELATIVE
            }
        })
        .collect();
    units.sort_unstable();
    units.dedup();
    (units.len() == 1).then(|| units[0])
}

/// Why a budget on the metrics a pattern matches could never fail, if so.
pub fn vacuous_budget(pattern: &str, budget: f64) -> Option<String> {
    let matched = metric_names(pattern);
    if budget >= 1.0
        && matched
            .iter()
            .any(|n| FRACTION_METRICS.contains(&n.as_str()))
    {
        return Some(format!(
            "a fraction budget of {} is 1 or more: it can never fail",
            format_g(budget, 6, false)
        ));
    }
    let rates: Vec<&str> = RATE_METRICS
        .iter()
        .copied()
        .filter(|r| matched.iter().any(|n| n == r))
        .collect();
    if budget >= 1.0 && !rates.is_empty() {
        return Some(format!(
            "{} cannot fall by {}, so the budget can never fail",
            rates.join(", "),
            percent(budget, 0, false)
        ));
    }
    None
}

/// The gates whose pattern matches none of the case's metrics: not evaluable,
/// `metric_absent` (compare's cases and history's checks report them alike).
pub fn absent_gates<'a>(
    gates: &[(String, super::stats::GateRule)],
    metric_names: impl Iterator<Item = &'a str> + Clone,
) -> Vec<(String, super::stats::GateOutcome)> {
    gates
        .iter()
        .filter(|(p, _)| !metric_names.clone().any(|m| fnmatch(p, m)))
        .map(|(p, r)| {
            (
                p.clone(),
                super::stats::GateOutcome::new(
                    super::stats::NOT_EVALUABLE,
                    Some("metric_absent"),
                    r,
                ),
            )
        })
        .collect()
}

/// Python's `fnmatch.fnmatchcase`: `*`, `?`, `[seq]` and `[!seq]`.
pub fn fnmatch(pattern: &str, name: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let n: Vec<char> = name.chars().collect();
    matches(&p, &n)
}

fn matches(p: &[char], n: &[char]) -> bool {
    match p.first() {
        None => n.is_empty(),
        Some('*') => (0..=n.len()).any(|i| matches(&p[1..], &n[i..])),
        Some('?') => !n.is_empty() && matches(&p[1..], &n[1..]),
        Some('[') => {
            let Some(close) = p.iter().skip(2).position(|c| *c == ']').map(|i| i + 2) else {
                return n.first() == Some(&'[') && matches(&p[1..], &n[1..]);
            };
            let Some(c) = n.first() else {
                return false;
            };
            let (negate, set) = match p[1] {
                '!' => (true, &p[2..close]),
                _ => (false, &p[1..close]),
            };
            let mut hit = false;
            let mut i = 0;
            while i < set.len() {
                if i + 2 < set.len() && set[i + 1] == '-' {
                    hit |= set[i] <= *c && *c <= set[i + 2];
                    i += 3;
                } else {
                    hit |= set[i] == *c;
                    i += 1;
                }
            }
            hit != negate && matches(&p[close + 1..], &n[1..])
        }
        Some(ch) => n.first() == Some(ch) && matches(&p[1..], &n[1..]),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_name_metrics_and_units() {
        assert!(fnmatch("client.*.p9?", "client.e2e.p95"));
        assert!(!fnmatch("client.*.p5", "client.e2e.p50"));
        assert_eq!(metric_unit("client.e2e.p50"), Some(RELATIVE));
        assert_eq!(metric_unit("failure_fraction"), Some(FRACTION_UNIT));
        assert_eq!(metric_unit("*"), None);
        assert_eq!(metric_unit("nothing"), None);
        assert_eq!(
            vacuous_budget("*_rps", 1.0).as_deref(),
            Some("goodput_rps, throughput_rps cannot fall by 100%, so the budget can never fail")
        );
    }
}
