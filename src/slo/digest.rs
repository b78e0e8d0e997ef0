//! The policy digest (docs/slo-policy.md §6): SHA-256 of a canonical JSON text, identical
//! to the reference's, so a run's recorded digest and a re-judged one compare.
//!
//! The digest is of the policy, not of its spelling: criteria are sorted by
//! (boundary, metric) because they are joined by AND, and integral floats are
//! written as integers, so `500`, `500.0` and a TOML `500` digest alike.

use sha2::{Digest, Sha256};

use super::policy::{Interval, Policy, SLO_FORMAT};
use crate::py::json as pyjson;

/// Lowercase hex SHA-256 of [`canonical`].
pub fn digest(p: &Policy) -> String {
    let hash = Sha256::digest(canonical(p).as_bytes());
    hash.iter().map(|b| format!("{b:02x}")).collect()
}

/// The canonical text: keys sorted, `,`/`:` separators without spaces,
/// integral floats as integers, other floats in Python `repr` form. Every
/// string in a valid policy is ASCII without quotes or backslashes (the name
/// is `[a-z][a-z0-9_]*`, the rest are constants), so none needs escaping.
pub fn canonical(p: &Policy) -> String {
    let mut criteria: Vec<_> = p.criteria.iter().collect();
    criteria.sort_by_key(|c| (c.key.boundary().as_str(), c.key.metric()));
    let criteria: Vec<String> = criteria
        .iter()
        .map(|c| {
            let target = c
                .attainment_target
                .map(|t| format!("\"attainment_target\":{},", number(t)))
                .unwrap_or_default();
            format!(
                "{{{target}\"boundary\":\"{}\",\"max_ms\":{},\"metric\":\"{}\"}}",
                c.key.boundary().as_str(),
                number(c.max_ms),
                c.key.metric()
            )
        })
        .collect();
    let interval = match p.interval {
        Interval::MeasuredWindow => "{\"kind\":\"measured_window\"}".to_owned(),
        Interval::Sliding { seconds } => {
            format!("{{\"kind\":\"sliding\",\"seconds\":{}}}", number(seconds))
        }
    };
    format!(
        "{{\"attainment_target\":{},\"criteria\":[{}],\"format\":\"{SLO_FORMAT}\",\"interval\":{interval},\
         \"name\":\"{}\",\"population\":\"offered\",\"unknown_policy\":\"bounds\",\"version\":1}}",
        p.attainment_target.map_or_else(|| "null".to_owned(), number),
        criteria.join(","),
        p.name,
    )
}

/// An integral float as the exact integer it holds; any other in `repr` form.
fn number(x: f64) -> String {
    if x.is_finite() && x == x.floor() {
        exact_integer(x)
    } else {
        pyjson::float_repr(x)
    }
}

/// The exact decimal value of an integral finite double (`1e23` →
/// `99999999999999991611392`), as Python's `int(x)` prints it.
fn exact_integer(x: f64) -> String {
    crate::py::int::Int::from_f64(x).map_or_else(String::new, |i| i.to_string())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::slo::policy::from_document;
    use serde_json::json;

    fn file_policy(name: &str, criteria: serde_json::Value, extra: serde_json::Value) -> Policy {
        let mut doc = json!({"format": "stormlog.infer.slo", "version": 1, "name": name, "criteria": criteria});
        if let serde_json::Value::Object(m) = extra {
            for (k, v) in m {
                doc[k] = v;
            }
        }
        from_document(&doc).unwrap()
    }

    #[test]
    fn exact_integers_of_large_doubles() {
        assert_eq!(exact_integer(500.0), "500");
        assert_eq!(exact_integer(1e20), "100000000000000000000");
        assert_eq!(exact_integer(1e23), "99999999999999991611392");
        assert_eq!(exact_integer(9007199254740993.0), "9007199254740992");
        assert_eq!(exact_integer(2f64.powi(64)), "18446744073709551616");
        assert_eq!(
            exact_integer(1e300),
            "1000000000000000052504760255204420248704468581108159154915854115511802457988908195786371375080447864043704443832883878176942523235360430575644792184786706982848387200926575803737830233794788090059368953234970799945081119038967640880074652742780142494579258788820056842838115669472196386865459400540160"
        );
        assert_eq!(number(0.95), "0.95");
        assert_eq!(number(0.00001), "1e-05");
        assert_eq!(number(2.5e-7), "2.5e-07");
        assert_eq!(number(2500.5), "2500.5");
    }

    #[test]
    fn flag_policy_digest_6_1() {
        let p = crate::slo::parse_flags(&["ttft:100".into(), "e2e:500".into()]).unwrap();
        assert_eq!(
            canonical(&p),
            r#"{"attainment_target":null,"criteria":[{"boundary":"client","max_ms":500,"metric":"e2e"},{"boundary":"client","max_ms":100,"metric":"ttft"}],"format":"stormlog.infer.slo","interval":{"kind":"measured_window"},"name":"cli","population":"offered","unknown_policy":"bounds","version":1}"#
        );
        assert_eq!(
            digest(&p),
            "ea7f74e77d0130282af5f41d13cd6d6260b75deeec7de776f106ed64107be5eb"
        );
        let q = crate::slo::parse_flags(&["client.e2e:500.0".into(), "ttft:1e2".into()]).unwrap();
        assert_eq!(digest(&q), digest(&p));
    }

    #[test]
    fn verified_digests_6_2() {
        let flags = |f: &[&str]| {
            let v: Vec<String> = f.iter().map(|s| s.to_string()).collect();
            digest(&crate::slo::parse_flags(&v).unwrap())
        };
        assert_eq!(
            flags(&["ttft:500"]),
            "cf9c963cd41e61828593dd6b923b48b8676ff13525d1dc55480dbaf71003bb03"
        );
        assert_eq!(
            flags(&["server.ttft:100", "e2e:1000"]),
            "2d60e46817f01f5f3dfec40db73b2919155d57059f849ae957d0063aa1146502"
        );
        let web = file_policy(
            "web",
            json!([{"metric": "ttft", "boundary": "server", "max_ms": 400, "attainment_target": 0.95},
                   {"metric": "e2e", "boundary": "client", "max_ms": 2500.5}]),
            json!({"attainment_target": 0.9}),
        );
        assert_eq!(
            canonical(&web),
            r#"{"attainment_target":0.9,"criteria":[{"boundary":"client","max_ms":2500.5,"metric":"e2e"},{"attainment_target":0.95,"boundary":"server","max_ms":400,"metric":"ttft"}],"format":"stormlog.infer.slo","interval":{"kind":"measured_window"},"name":"web","population":"offered","unknown_policy":"bounds","version":1}"#
        );
        assert_eq!(
            digest(&web),
            "a9f38aaf8d55e0145eabe736114553435c3c37b0a4192559cf76006361804f6c"
        );
        let tiny = file_policy(
            "tiny",
            json!([{"metric": "ttft", "boundary": "client", "max_ms": 0.00001}]),
            json!({}),
        );
        assert!(canonical(&tiny).contains(r#""max_ms":1e-05"#));
        assert_eq!(
            digest(&tiny),
            "5a173420b3aa7c1257ac7b209980e82bc5d38a5145698860d79f9412c468ac19"
        );
        let huge = file_policy(
            "huge",
            json!([{"metric": "ttft", "boundary": "client", "max_ms": 1e20}]),
            json!({}),
        );
        assert!(canonical(&huge).contains(r#""max_ms":100000000000000000000"#));
        assert_eq!(
            digest(&huge),
            "61345529d6b7b0c750183a839b0b2bfb82a52bdcbc308bfb29fe2ad39914b4a0"
        );
        let live = file_policy(
            "live",
            json!([{"metric": "ttft", "boundary": "server", "max_ms": 250.5}]),
            json!({"interval": {"kind": "sliding", "seconds": 30}}),
        );
        assert_eq!(
            digest(&live),
            "6511d00fa576a94da534f4cd88887647d474324984e452003b0908f87cc48796"
        );
    }

    #[test]
    fn chat_interactive_6_3() {
        let p = file_policy(
            "chat_interactive",
            json!([
                {"metric": "ttft", "boundary": "client", "max_ms": 500, "attainment_target": 0.95},
                {"metric": "e2e", "boundary": "client", "max_ms": 4000.0},
                {"metric": "queue", "boundary": "server", "max_ms": 200}
            ]),
            json!({"attainment_target": 0.9, "population": "offered", "unknown_policy": "bounds",
                   "interval": {"kind": "measured_window"}}),
        );
        assert_eq!(
            canonical(&p),
            r#"{"attainment_target":0.9,"criteria":[{"boundary":"client","max_ms":4000,"metric":"e2e"},{"attainment_target":0.95,"boundary":"client","max_ms":500,"metric":"ttft"},{"boundary":"server","max_ms":200,"metric":"queue"}],"format":"stormlog.infer.slo","interval":{"kind":"measured_window"},"name":"chat_interactive","population":"offered","unknown_policy":"bounds","version":1}"#
        );
        assert_eq!(
            digest(&p),
            "9dafa9907bcec776624b9b100facdc6cddd70939a77a05ac89117f6817dcb296"
        );
    }
}
