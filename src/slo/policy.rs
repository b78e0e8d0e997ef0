//! A validated policy (`stormlog.infer.slo` v1) and the document rules that
//! build one (docs/slo-policy.md §3): the validation order and messages of §3.2 step 3,
//! the stored form of §3.3, and the sliding-interval refusal of §3.2 step 4.
//!
//! A [`Policy`] cannot be invalid: every key is one of the ten criteria,
//! every limit finite and positive, the name well-formed.

use serde_json::{Map, Value};

use super::criteria::CriterionKey;
use crate::py::json as pyjson;

pub const SLO_FORMAT: &str = "stormlog.infer.slo";

/// One latency limit: a value passes when it is at most `max_ms`.
#[derive(Debug, Clone, PartialEq)]
pub struct Criterion {
    pub key: CriterionKey,
    pub max_ms: f64,
    /// Marginal target for this criterion alone; carried, never judged.
    pub attainment_target: Option<f64>,
}

/// The interval attainment and goodput are judged over.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Interval {
    /// Each case's own rate interval (offline analysis).
    MeasuredWindow,
    /// A window of `seconds`, judged online by a watcher.
    Sliding { seconds: f64 },
}

/// A named, validated SLO policy: its criteria are joined by AND.
#[derive(Debug, Clone, PartialEq)]
pub struct Policy {
    pub name: String,
    /// In the order given; the digest sorts them, the stored form does not.
    pub criteria: Vec<Criterion>,
    /// Joint target (every criterion passes); carried, never judged.
    pub attainment_target: Option<f64>,
    pub interval: Interval,
}

impl Criterion {
    fn to_record(&self) -> Value {
        let mut m = Map::new();
        m.insert("metric".into(), self.key.metric().into());
        m.insert("boundary".into(), self.key.boundary().as_str().into());
        m.insert("max_ms".into(), Value::from(self.max_ms));
        if let Some(t) = self.attainment_target {
            m.insert("attainment_target".into(), Value::from(t));
        }
        Value::Object(m)
    }
}

impl Interval {
    fn to_record(self) -> Value {
        let mut m = Map::new();
        match self {
            Interval::MeasuredWindow => {
                m.insert("kind".into(), "measured_window".into());
            }
            Interval::Sliding { seconds } => {
                m.insert("kind".into(), "sliding".into());
                m.insert("seconds".into(), Value::from(seconds));
            }
        }
        Value::Object(m)
    }
}

impl Policy {
    /// The policy as its versioned document (docs/slo-policy.md §3.3): every number a
    /// float, criteria in the given order.
    pub fn to_record(&self) -> Value {
        let mut m = Map::new();
        m.insert("format".into(), SLO_FORMAT.into());
        m.insert("version".into(), Value::from(1));
        m.insert("name".into(), self.name.clone().into());
        m.insert(
            "criteria".into(),
            Value::Array(self.criteria.iter().map(Criterion::to_record).collect()),
        );
        m.insert(
            "attainment_target".into(),
            self.attainment_target.map_or(Value::Null, Value::from),
        );
        m.insert("population".into(), "offered".into());
        m.insert("unknown_policy".into(), "bounds".into());
        m.insert("interval".into(), self.interval.to_record());
        Value::Object(m)
    }

    /// The criterion with this key, if the policy has it.
    pub fn criterion(&self, key: CriterionKey) -> Option<&Criterion> {
        self.criteria.iter().find(|c| c.key == key)
    }

    /// Refuses a sliding policy where each case is judged over its whole
    /// rate interval (docs/slo-policy.md §3.2 step 4, §4). The message goes after a
    /// caller's label such as `SLO policy <path>: `.
    pub fn require_measured_window(&self) -> Result<(), String> {
        match self.interval {
            Interval::MeasuredWindow => Ok(()),
            Interval::Sliding { seconds } => Err(format!(
                "a sliding interval of {} s is judged online by a watcher; profile and analyze \
                 judge each case over its whole rate interval",
                crate::py::float::g(seconds)
            )),
        }
    }
}

/// Validates a policy document (docs/slo-policy.md §3.2 step 3): the first rule the
/// document breaks, in the reference's order, gives the message.
pub fn from_document(doc: &Value) -> Result<Policy, String> {
    let Value::Object(payload) = doc else {
        return Err("the policy must be a JSON object".into());
    };
    reject_unknown(
        payload,
        &[
            "format",
            "version",
            "name",
            "criteria",
            "attainment_target",
            "population",
            "unknown_policy",
            "interval",
        ],
        "the policy",
    )?;
    if payload.get("format").and_then(Value::as_str) != Some(SLO_FORMAT) {
        return Err(format!("format must be '{SLO_FORMAT}'"));
    }
    if payload.get("version").and_then(pyjson::real) != Some(1.0) {
        return Err("version must be 1".into());
    }
    if payload
        .get("population")
        .is_some_and(|v| v.as_str() != Some("offered"))
    {
        return Err("population must be 'offered' in version 1".into());
    }
    if payload
        .get("unknown_policy")
        .is_some_and(|v| v.as_str() != Some("bounds"))
    {
        return Err("unknown_policy must be 'bounds' in version 1".into());
    }
    let Some(Value::Array(items)) = payload.get("criteria") else {
        return Err("criteria must be a list".into());
    };
    let criteria = items
        .iter()
        .enumerate()
        .map(|(i, item)| criterion_from_document(item, i))
        .collect::<Result<Vec<_>, _>>()?;
    let attainment_target = target(pyjson::get(doc, "attainment_target"), "attainment_target")?;
    let interval = match payload.get("interval") {
        None => Interval::MeasuredWindow,
        Some(v) => interval_from_document(v)?,
    };
    let name = payload.get("name").and_then(Value::as_str);
    assemble(name, criteria, attainment_target, interval)
}

/// The checks shared by documents and flags, made after the criteria are
/// read: name, at least one criterion, no key twice.
pub(crate) fn assemble(
    name: Option<&str>,
    criteria: Vec<Criterion>,
    attainment_target: Option<f64>,
    interval: Interval,
) -> Result<Policy, String> {
    let Some(name) = name.filter(|n| valid_name(n)) else {
        return Err(
            "name must start with a lowercase letter and use only lowercase letters, \
                    digits and underscores, at most 64 characters"
                .into(),
        );
    };
    if criteria.is_empty() {
        return Err("a policy needs at least one criterion".into());
    }
    let mut repeated: Vec<&str> = criteria
        .iter()
        .filter(|c| criteria.iter().filter(|d| d.key == c.key).count() > 1)
        .map(|c| c.key.as_str())
        .collect();
    repeated.sort_unstable();
    repeated.dedup();
    if !repeated.is_empty() {
        return Err(format!(
            "criterion {} is given more than once",
            repeated.join(", ")
        ));
    }
    Ok(Policy {
        name: name.to_owned(),
        criteria,
        attainment_target,
        interval,
    })
}

/// `[a-z][a-z0-9_]{0,63}`, matched in full.
fn valid_name(name: &str) -> bool {
    let b = name.as_bytes();
    !b.is_empty()
        && b.len() <= 64
        && b[0].is_ascii_lowercase()
        && b.iter()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'_')
}

fn criterion_from_document(item: &Value, index: usize) -> Result<Criterion, String> {
    let label = format!("criteria[{index}]");
    let Value::Object(fields) = item else {
        return Err(format!("{label} must be an object"));
    };
    reject_unknown(
        fields,
        &["metric", "boundary", "max_ms", "attainment_target"],
        &label,
    )?;
    let (Some(boundary), Some(metric)) = (
        fields.get("boundary").and_then(Value::as_str),
        fields.get("metric").and_then(Value::as_str),
    ) else {
        return Err(format!("{label} needs a boundary and a metric"));
    };
    let key = CriterionKey::check(boundary, metric)?;
    let max_ms = limit(pyjson::get(item, "max_ms"))
        .ok_or_else(|| format!("{label}.max_ms must be a positive number of milliseconds"))?;
    let attainment_target = target(
        pyjson::get(item, "attainment_target"),
        &format!("{label}.attainment_target"),
    )?;
    Ok(Criterion {
        key,
        max_ms,
        attainment_target,
    })
}

/// A finite number above zero (an integer too large for a float is not
/// finite, and a boolean is not a number).
pub(crate) fn limit(v: &Value) -> Option<f64> {
    pyjson::number(v).filter(|x| x.is_finite() && *x > 0.0)
}

/// An attainment target: absent/null, or a number in (0, 1].
fn target(v: &Value, label: &str) -> Result<Option<f64>, String> {
    if v.is_null() {
        return Ok(None);
    }
    match pyjson::real(v) {
        Some(t) if t > 0.0 && t <= 1.0 => Ok(Some(t)),
        _ => Err(format!("{label} must be a fraction above 0 and at most 1")),
    }
}

fn interval_from_document(v: &Value) -> Result<Interval, String> {
    let Value::Object(fields) = v else {
        return Err("interval must be an object".into());
    };
    reject_unknown(fields, &["kind", "seconds"], "interval")?;
    let seconds = pyjson::get(v, "seconds");
    match fields.get("kind").and_then(Value::as_str) {
        Some("measured_window") if seconds.is_null() => Ok(Interval::MeasuredWindow),
        Some("measured_window") => Err("a measured_window interval takes no seconds".into()),
        Some("sliding") => limit(seconds)
            .map(|seconds| Interval::Sliding { seconds })
            .ok_or_else(|| "a sliding interval needs seconds > 0".into()),
        _ => Err("interval.kind must be 'measured_window' or 'sliding'".into()),
    }
}

fn reject_unknown(
    fields: &Map<String, Value>,
    allowed: &[&str],
    label: &str,
) -> Result<(), String> {
    // The map iterates in code point order, which is the order Python's
    // `sorted` gives the message.
    let unknown: Vec<&str> = fields
        .keys()
        .map(String::as_str)
        .filter(|k| !allowed.contains(k))
        .collect();
    if unknown.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "{label} has unknown fields: {}",
            unknown.join(", ")
        ))
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    fn err(doc: Value) -> String {
        from_document(&doc).unwrap_err()
    }

    #[test]
    fn the_spec_example_is_valid_and_stored_with_floats() {
        let doc = json!({
            "format": "stormlog.infer.slo", "version": 1, "name": "chat_interactive",
            "criteria": [
                {"metric": "ttft", "boundary": "client", "max_ms": 500, "attainment_target": 0.95},
                {"metric": "e2e", "boundary": "client", "max_ms": 4000.0},
                {"metric": "queue", "boundary": "server", "max_ms": 200}
            ],
            "attainment_target": 0.9, "population": "offered", "unknown_policy": "bounds",
            "interval": {"kind": "measured_window"}
        });
        let p = from_document(&doc).unwrap();
        assert_eq!(p.criteria.len(), 3);
        assert_eq!(p.criteria[2].key, CriterionKey::ServerQueue);
        let rec = p.to_record();
        assert_eq!(
            rec["criteria"][0],
            json!({"metric": "ttft", "boundary": "client", "max_ms": 500.0, "attainment_target": 0.95})
        );
        assert_eq!(
            rec["criteria"][1],
            json!({"metric": "e2e", "boundary": "client", "max_ms": 4000.0})
        );
        assert_eq!(rec["attainment_target"], json!(0.9));
        assert_eq!(rec["version"], json!(1));
        assert_eq!(rec["interval"], json!({"kind": "measured_window"}));
        // The stored form reads back as the same policy.
        assert_eq!(from_document(&rec).unwrap(), p);
    }

    #[test]
    fn validation_order_and_messages() {
        let base = || {
            json!({"format": "stormlog.infer.slo", "version": 1, "name": "p",
                   "criteria": [{"metric": "ttft", "boundary": "client", "max_ms": 5}]})
        };
        let with = |k: &str, v: Value| {
            let mut d = base();
            d[k] = v;
            d
        };
        assert_eq!(err(json!([1])), "the policy must be a JSON object");
        assert_eq!(
            err(with("zeta", json!(1))
                .as_object()
                .cloned()
                .map(|mut m| {
                    m.insert("alpha".into(), json!(1));
                    Value::Object(m)
                })
                .unwrap()),
            "the policy has unknown fields: alpha, zeta"
        );
        assert_eq!(
            err(with("format", json!("x"))),
            "format must be 'stormlog.infer.slo'"
        );
        assert_eq!(err(with("version", json!(true))), "version must be 1");
        assert_eq!(err(with("version", json!(2))), "version must be 1");
        assert!(from_document(&with("version", json!(1.0))).is_ok());
        assert_eq!(
            err(with("population", Value::Null)),
            "population must be 'offered' in version 1"
        );
        assert_eq!(
            err(with("unknown_policy", json!("drop"))),
            "unknown_policy must be 'bounds' in version 1"
        );
        assert_eq!(err(with("criteria", json!({}))), "criteria must be a list");
        assert_eq!(
            err(json!({"format": "stormlog.infer.slo", "version": 1})),
            "criteria must be a list"
        );
        assert_eq!(
            err(with("criteria", json!([5]))),
            "criteria[0] must be an object"
        );
        assert_eq!(
            err(with(
                "criteria",
                json!([{"metric": "ttft", "boundary": "client", "max_ms": 5}, {"x": 1, "a": 2}])
            )),
            "criteria[1] has unknown fields: a, x"
        );
        assert_eq!(
            err(with("criteria", json!([{"metric": "ttft", "max_ms": 5}]))),
            "criteria[0] needs a boundary and a metric"
        );
        assert!(err(with(
            "criteria",
            json!([{"metric": "itl", "boundary": "client"}])
        ))
        .starts_with("client.itl does not exist"));
        assert!(err(with(
            "criteria",
            json!([{"metric": "x", "boundary": "edge"}])
        ))
        .starts_with("unknown criterion edge.x; known: "));
        for bad in [
            json!(0),
            json!(-1),
            json!(true),
            json!("5"),
            Value::Null,
            json!(pyjson::INF),
            json!(pyjson::NAN),
        ] {
            assert_eq!(
                err(with(
                    "criteria",
                    json!([{"metric": "ttft", "boundary": "client", "max_ms": bad}])
                )),
                "criteria[0].max_ms must be a positive number of milliseconds"
            );
        }
        for bad in [
            json!(0),
            json!(1.5),
            json!(true),
            json!("0.5"),
            json!(pyjson::NAN),
        ] {
            assert_eq!(
                err(with(
                    "criteria",
                    json!([{"metric": "ttft", "boundary": "client", "max_ms": 1, "attainment_target": bad}])
                )),
                "criteria[0].attainment_target must be a fraction above 0 and at most 1"
            );
            assert_eq!(
                err(with("attainment_target", bad)),
                "attainment_target must be a fraction above 0 and at most 1"
            );
        }
        assert!(from_document(&with("attainment_target", json!(1))).is_ok());
        assert_eq!(
            err(with("interval", Value::Null)),
            "interval must be an object"
        );
        assert_eq!(
            err(with(
                "interval",
                json!({"kind": "sliding", "seconds": 3, "every": 1})
            )),
            "interval has unknown fields: every"
        );
        assert_eq!(
            err(with(
                "interval",
                json!({"kind": "measured_window", "seconds": 3})
            )),
            "a measured_window interval takes no seconds"
        );
        assert!(from_document(&with(
            "interval",
            json!({"kind": "measured_window", "seconds": null})
        ))
        .is_ok());
        assert_eq!(
            err(with("interval", json!({"kind": "sliding", "seconds": 0}))),
            "a sliding interval needs seconds > 0"
        );
        assert_eq!(
            err(with("interval", json!({"kind": "sliding"}))),
            "a sliding interval needs seconds > 0"
        );
        assert_eq!(
            err(with("interval", json!({"kind": "tumbling"}))),
            "interval.kind must be 'measured_window' or 'sliding'"
        );
        let name_msg = "name must start with a lowercase letter and use only lowercase letters, \
                        digits and underscores, at most 64 characters";
        for bad in [
            json!("P1"),
            json!("1p"),
            json!(""),
            json!(5),
            Value::Null,
            json!("a".repeat(65)),
            json!("é"),
        ] {
            assert_eq!(err(with("name", bad)), name_msg);
        }
        assert!(from_document(&with("name", json!("a".repeat(64)))).is_ok());
        assert_eq!(
            err(with("criteria", json!([]))),
            "a policy needs at least one criterion"
        );
        assert_eq!(
            err(with(
                "criteria",
                json!([
                    {"metric": "ttft", "boundary": "client", "max_ms": 5},
                    {"metric": "queue", "boundary": "server", "max_ms": 5},
                    {"metric": "ttft", "boundary": "client", "max_ms": 6},
                    {"metric": "queue", "boundary": "server", "max_ms": 7}
                ])
            )),
            "criterion client.ttft, server.queue is given more than once"
        );
        // Verified against the reference: criteria are checked before the name.
        assert_eq!(
            err(
                json!({"format": "stormlog.infer.slo", "version": 1, "name": "P1", "criteria": [5]})
            ),
            "criteria[0] must be an object"
        );
        assert_eq!(
            err(
                json!({"format": "stormlog.infer.slo", "version": 1, "name": "P1", "criteria": [], "interval": 3})
            ),
            "interval must be an object"
        );
    }

    #[test]
    fn sliding_is_refused_for_analysis() {
        let doc = json!({"format": "stormlog.infer.slo", "version": 1, "name": "live",
            "criteria": [{"metric": "ttft", "boundary": "server", "max_ms": 250.5}],
            "interval": {"kind": "sliding", "seconds": 30}});
        let p = from_document(&doc).unwrap();
        assert_eq!(p.interval, Interval::Sliding { seconds: 30.0 });
        assert_eq!(
            p.to_record()["interval"],
            json!({"kind": "sliding", "seconds": 30.0})
        );
        assert_eq!(
            p.require_measured_window().unwrap_err(),
            "a sliding interval of 30 s is judged online by a watcher; profile and analyze judge \
             each case over its whole rate interval"
        );
    }
}
