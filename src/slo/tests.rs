//! Shared test helpers, and the conformance test: the shared SLO cases'
//! `slo` blocks rebuilt from their artifacts and compared with the
//! reference's `expected.json`, with no other part of the report involved
//! (intervals and populations are taken from `expected.json`).
#![allow(clippy::unwrap_used)]

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use super::*;
use crate::model::Request;

/// A request view built from a record literal.
pub(crate) fn request(record: Value) -> Request {
    Request::from_record(0, record.as_object().unwrap())
}

/// Empty joined and quarantined span maps.
pub(crate) fn no_spans() -> (HashMap<String, Map<String, Value>>, HashMap<String, String>) {
    (HashMap::new(), HashMap::new())
}

fn cases_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/conformance/cases")
}

/// JSON equality where floats may differ by 1e-12 relative; ints and floats
/// are still told apart.
fn assert_close(got: &Value, want: &Value, path: &str) {
    match (got, want) {
        (Value::Number(a), Value::Number(b)) if a.is_f64() && b.is_f64() => {
            let (x, y) = (a.as_f64().unwrap(), b.as_f64().unwrap());
            assert!(
                x == y || (x - y).abs() <= 1e-12 * y.abs(),
                "{path}: {x} != {y}"
            );
        }
        (Value::Object(a), Value::Object(b)) => {
            let ka: Vec<_> = a.keys().collect();
            let kb: Vec<_> = b.keys().collect();
            assert_eq!(ka, kb, "{path}: keys");
            for (k, v) in a {
                assert_close(v, &b[k], &format!("{path}.{k}"));
            }
        }
        (Value::Array(a), Value::Array(b)) => {
            assert_eq!(a.len(), b.len(), "{path}: length");
            for (i, (x, y)) in a.iter().zip(b).enumerate() {
                assert_close(x, y, &format!("{path}[{i}]"));
            }
        }
        _ => assert_eq!(got, want, "{path}"),
    }
}

struct Case {
    slo_records: Vec<Value>,
    /// `infer.vllm_span` attributes by `request_id` (a naive join: these
    /// cases have exactly one span per request, so no quarantine applies).
    spans: HashMap<String, Map<String, Value>>,
    /// Measured requests by case key, in file order.
    by_case: Vec<(String, Vec<Request>)>,
    expected: Value,
    expected_txt: String,
    args: Vec<String>,
}

fn load_case(name: &str) -> Option<Case> {
    let dir = cases_dir().join(name);
    let artifact = std::fs::read_to_string(dir.join("artifact.jsonl")).ok()?;
    let mut slo_records = Vec::new();
    let mut spans = HashMap::new();
    let mut by_case: Vec<(String, Vec<Request>)> = Vec::new();
    for (seq, line) in artifact.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let v = crate::py::json::parse(line).unwrap();
        match v.get("event_type").and_then(Value::as_str) {
            Some("infer.slo") => slo_records.push(v),
            Some("infer.vllm_span") => {
                let id = crate::py::json::str_form(&v["request_id"]);
                let attributes = v["attributes"].as_object().unwrap().clone();
                assert!(
                    spans.insert(id, attributes).is_none(),
                    "{name}: two spans for one request"
                );
            }
            Some("infer.request") => {
                let r = Request::from_record(seq as i64, v.as_object().unwrap());
                if !r.is_measured() {
                    continue;
                }
                match by_case.iter_mut().find(|(k, _)| r.case_key == *k) {
                    Some((_, list)) => list.push(r),
                    None => by_case.push((r.case_key.to_string(), vec![r])),
                }
            }
            _ => {}
        }
    }
    let expected =
        crate::py::json::parse(&std::fs::read_to_string(dir.join("expected.json")).ok()?).unwrap();
    let expected_txt = std::fs::read_to_string(dir.join("expected.txt")).ok()?;
    let args = std::fs::read_to_string(dir.join("args"))
        .unwrap_or_default()
        .split_whitespace()
        .map(str::to_owned)
        .collect();
    Some(Case {
        slo_records,
        spans,
        by_case,
        expected,
        expected_txt,
        args,
    })
}

/// The policy the case's command line gives (only `--slo` is used by these cases).
fn cli_policy(args: &[String]) -> Option<(Policy, PolicySource)> {
    let flags: Vec<String> = args
        .windows(2)
        .filter(|w| w[0] == "--slo")
        .map(|w| w[1].clone())
        .collect();
    (!flags.is_empty()).then(|| policy_from_flags(&flags).unwrap())
}

/// Judges every case of `case` by `selected` and compares with the expected
/// `cases.<id>.slo`, after `adjust` (used to change the expected source).
fn check_cases(name: &str, case: &Case, selected: &Selected, adjust: impl Fn(&mut Value)) -> usize {
    let q = HashMap::new();
    let spans = Spans {
        joined: &case.spans,
        quarantined: &q,
    };
    let policy = selected.policy.as_ref().unwrap();
    let source = selected.source.unwrap();
    let cases = case.expected["cases"].as_object().unwrap();
    assert_eq!(cases.len(), case.by_case.len(), "{name}: case count");
    for (key, requests) in &case.by_case {
        let exp_case = &cases[key];
        let refs: Vec<&Request> = requests.iter().collect();
        let got = evaluate_case(
            &refs,
            policy,
            source,
            &exp_case["intervals"]["rate"],
            &exp_case["population"],
            &spans,
        );
        let mut want = exp_case["slo"].clone();
        adjust(&mut want);
        assert_close(&got, &want, &format!("{name}.cases.{key}.slo"));
        let line = case_text_line(&got).unwrap();
        assert!(
            case.expected_txt.lines().any(|l| l == line),
            "{name}: text line {line:?}"
        );
    }
    cases.len()
}

#[test]
fn conformance_slo_cases() {
    let names = [
        "slo_recorded",
        "slo_override",
        "slo_file",
        "slo_override_unrecorded",
        "vllm_metrics",
        "vllm_spans",
    ];
    let mut checked = 0;
    for name in names {
        // A case named here that is gone fails: it would otherwise pass unchecked.
        let Some(case) = load_case(name) else {
            panic!("conformance case {name} not found under tests/fixtures/conformance/cases");
        };
        let recorded: Vec<&Value> = case.slo_records.iter().collect();
        let selected = select(cli_policy(&case.args), &recorded).unwrap();
        assert_close(
            &selected.report_slo,
            &case.expected["slo"],
            &format!("{name}.slo"),
        );
        for line in &selected.text_lines {
            assert!(
                case.expected_txt.lines().any(|l| l == line),
                "{name}: {line:?}"
            );
        }
        checked += check_cases(name, &case, &selected, |_| {});
    }
    if cases_dir().exists() {
        assert!(checked >= 21, "only {checked} cases checked");
    }
}

/// A policy document written as TOML (integral limits spelled as integers,
/// to show the spelling does not matter).
fn as_toml(doc: &Value) -> String {
    let scalar = |v: &Value| match v {
        Value::Number(n) => match n.as_f64() {
            Some(f) if f.fract() == 0.0 => format!("{}", f as i64),
            _ => n.to_string(),
        },
        other => other.to_string(),
    };
    let mut out = String::new();
    for (k, v) in doc.as_object().unwrap() {
        if !matches!(v, Value::Null | Value::Array(_) | Value::Object(_)) {
            out.push_str(&format!("{k} = {}\n", scalar(v)));
        }
    }
    let interval = doc["interval"].as_object().unwrap();
    let fields: Vec<String> = interval
        .iter()
        .map(|(k, v)| format!("{k} = {}", scalar(v)))
        .collect();
    out.push_str(&format!("interval = {{ {} }}\n", fields.join(", ")));
    for c in doc["criteria"].as_array().unwrap() {
        out.push_str("\n[[criteria]]\n");
        for (k, v) in c.as_object().unwrap() {
            out.push_str(&format!("{k} = {}\n", scalar(v)));
        }
    }
    out
}

/// A policy the artifact recorded, given back as a TOML file and as a JSON
/// file: same policy, same digest, and every case judged as the reference
/// judged it (only the source differs).
#[test]
fn toml_policy_judges_as_the_json_one() {
    for name in ["slo_recorded", "slo_file"] {
        let Some(case) = load_case(name) else {
            continue;
        };
        let doc = &case.slo_records[0]["slo"];
        let dir = tempfile::tempdir().unwrap();
        let json_path = dir.path().join("p.json");
        let toml_path = dir.path().join("p.toml");
        std::fs::write(&json_path, crate::py::json::dumps_pretty(doc)).unwrap();
        let toml_text = as_toml(doc);
        std::fs::write(&toml_path, &toml_text).unwrap();
        let from_json = load_file(&json_path, "p.json").unwrap();
        let from_toml = load_file(&toml_path, "p.toml").unwrap();
        assert_eq!(from_json, from_toml, "{toml_text}");
        assert_eq!(
            digest(&from_toml),
            case.slo_records[0]["digest"].as_str().unwrap()
        );
        // `--slo FILE.toml` is the same as `--slo-file FILE.toml`.
        let flag = policy_from_flags(&[toml_path.to_string_lossy().into_owned()]).unwrap();
        assert_eq!(flag, (from_toml.clone(), PolicySource::File));
        let recorded: Vec<&Value> = case.slo_records.iter().collect();
        for p in [from_json, from_toml] {
            let selected = select(Some((p, PolicySource::File)), &recorded).unwrap();
            // Same digest as recorded: listed as overridden, not replaced.
            assert!(selected.warnings.is_empty());
            check_cases(name, &case, &selected, |want| {
                want["slo_source"] = "file".into();
            });
        }
    }
}

#[test]
fn slo_file_with_other_flags_is_a_usage_error() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("p.json");
    std::fs::write(&path, "{}").unwrap();
    let shown = path.to_string_lossy().into_owned();
    let e = parse_flags(&["ttft:5".into(), shown.clone()]).unwrap_err();
    assert_eq!(e.exit().code(), 2);
    assert!(e
        .to_string()
        .ends_with(": a policy file must be the only --slo value"));
    let e = parse_flags(std::slice::from_ref(&shown)).unwrap_err();
    assert_eq!(
        (e.to_string(), e.exit().code()),
        (
            format!("SLO policy {shown}: format must be 'stormlog.infer.slo'"),
            5
        )
    );
    assert_eq!(
        SloError::slo_and_slo_file().to_string(),
        "use --slo or --slo-file, not both"
    );
    assert_eq!(SloError::slo_and_slo_file().exit().code(), 2);
}

#[test]
fn shipped_examples_digest() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/slo");
    let p = load_file(&root.join("interactive.toml"), "interactive.toml").unwrap();
    assert_eq!(p.name, "interactive");
    assert_eq!(p.criteria.len(), 3);
}

/// `measure_value` is `measure_key`'s number for every key, on requests
/// with values missing, negative, NaN-free extremes and zero.
#[test]
fn measure_value_is_measure_keys_value() {
    let joined: HashMap<String, Map<String, Value>> = HashMap::new();
    let quarantined = HashMap::new();
    let spans = Spans {
        joined: &joined,
        quarantined: &quarantined,
    };
    let records = [
        serde_json::json!({}),
        serde_json::json!({"ttft_ms": 12.5, "dispatch_lag_ms": 0.5, "e2e_latency_ms": 40.0}),
        serde_json::json!({"ttft_ms": -1.0, "dispatch_lag_ms": 0.5, "e2e_latency_ms": -0.0}),
        serde_json::json!({"ttft_ms": 3.0, "dispatch_lag_ms": -5.0, "e2e_latency_ms": 1e308}),
        serde_json::json!({"ttft_ms": 1e308, "dispatch_lag_ms": 1e308}),
        serde_json::json!({"ttft_ms": 0.0, "e2e_latency_ms": 9.0, "output_tokens": 5,
                           "output_token_source": "server_usage", "x_request_id": "x1",
                           "intended_at_ns": 1_000, "ended_at_ns": 9_000_000}),
    ];
    for record in records {
        let r = request(record.clone());
        for key in criteria::ALL {
            let expected = match measure_key(&r, key, &spans) {
                Measure::Value(v) => Some(v.to_bits()),
                _ => None,
            };
            let got = measure_value(&r, key, &spans).map(f64::to_bits);
            assert_eq!(got, expected, "{key:?} of {record}");
        }
    }
}
