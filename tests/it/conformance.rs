//! Every reference case whose features stormlog implements must give the
//! reference's JSON (value for value) and text (byte for byte), through
//! `stormlog infer analyze` and through `stormlog ingest` + `stormlog report`.
//! Adding a case is adding a folder under tests/fixtures/conformance/cases.
use serde_json::Value;

use crate::cases::{self, Case};
use crate::common::{leaf_mismatches, run_in};

/// What a case needs beyond the client-side report.
#[derive(Debug, PartialEq, Eq, Clone, Copy)]
enum Feature {
    ServerTelemetry,
    Slo,
    Vllm,
}

/// The features this build implements; a case needing another one is listed
/// as not yet covered (and the test says which).
const IMPLEMENTED: &[Feature] = &[Feature::ServerTelemetry, Feature::Slo, Feature::Vllm];

fn features(case: &Case) -> Vec<Feature> {
    let args = case.args_line();
    let artifact = case.read("artifact.jsonl");
    let mut f = Vec::new();
    if args.contains("--server-telemetry") {
        f.push(Feature::ServerTelemetry);
    }
    if args.contains("--slo") || artifact.contains("\"event_type\": \"infer.slo\"") {
        f.push(Feature::Slo);
    }
    if args.contains("--vllm-spans") || artifact.contains("infer.vllm_") {
        f.push(Feature::Vllm);
    }
    f
}

/// The analyze cases, and the bad inputs the reference reads leniently (those
/// with an `expected.json`): both go through analyze and ingest + report.
fn analyze_cases() -> Vec<Case> {
    let mut v: Vec<Case> = cases::all(cases::CONFORMANCE)
        .into_iter()
        .filter(|c| !c.has("command"))
        .collect();
    v.extend(
        cases::all(cases::BAD)
            .into_iter()
            .filter(|c| c.has("expected.json") && !c.is_refusal()),
    );
    v.sort_by(|a, b| a.dir.cmp(&b.dir));
    v
}

/// Compares a command's JSON and text with the reference's; `people`: the
/// text is stormlog's own `report`, which is the reference's text in
/// people's units and with hints (`report::people`).
fn check(
    case: &Case,
    label: &str,
    json: &[u8],
    text: &[u8],
    people: bool,
    failures: &mut Vec<String>,
) {
    let name = &case.name;
    let expected: Value = serde_json::from_str(&case.read("expected.json"))
        .unwrap_or_else(|e| panic!("{name}: expected.json: {e}"));
    match serde_json::from_slice::<Value>(json) {
        Ok(actual) => {
            let bad = leaf_mismatches(&expected, &actual);
            if !bad.is_empty() {
                failures.push(format!(
                    "{name} ({label}) json: {} mismatches, first: {:?}",
                    bad.len(),
                    &bad[..bad.len().min(5)]
                ));
            }
        }
        Err(e) => failures.push(format!("{name} ({label}) json did not parse: {e}")),
    }
    let mut expected_txt = case.read("expected.txt").into_bytes();
    if people {
        expected_txt =
            stormlog::report::people::for_people(&String::from_utf8_lossy(&expected_txt))
                .into_bytes();
    }
    if text != expected_txt.as_slice() {
        let got = String::from_utf8_lossy(text);
        let want = String::from_utf8_lossy(&expected_txt);
        let first = got.lines().zip(want.lines()).position(|(a, b)| a != b);
        failures.push(format!("{name} ({label}) txt differs at line {first:?}"));
    }
}

#[test]
fn analyze_matches_the_reference() {
    let mut failures = Vec::new();
    let mut checked = 0;
    for case in analyze_cases() {
        if !features(&case).iter().all(|f| IMPLEMENTED.contains(f)) {
            continue;
        }
        let dir = &case.dir;
        let argv = case.infer_argv();
        let base: Vec<&str> = argv.iter().map(String::as_str).collect();
        let mut j = base.clone();
        j.extend(["--format", "json"]);
        let out = run_in(dir, &j);
        assert!(
            out.status.success(),
            "{}: {}",
            case.name,
            String::from_utf8_lossy(&out.stderr)
        );
        let txt = run_in(dir, &base);
        check(
            &case,
            "infer analyze",
            &out.stdout,
            &txt.stdout,
            false,
            &mut failures,
        );
        checked += 1;
    }
    assert!(checked >= 30, "only {checked} cases checked");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Splits a case's flags into the files to ingest (telemetry, spans) and the
/// flags `report` takes.
fn split_args(args: &[String]) -> (Vec<String>, Vec<String>, Vec<String>) {
    let (mut telemetry, mut spans, mut rest) = (vec![], vec![], vec![]);
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--server-telemetry" => telemetry.extend(it.next().cloned()),
            "--vllm-spans" => spans.extend(it.next().cloned()),
            _ => rest.push(a.clone()),
        }
    }
    (telemetry, spans, rest)
}

#[test]
fn ingest_then_report_matches_the_reference() {
    let tmp = tempfile::tempdir().unwrap();
    let mut failures = Vec::new();
    let mut checked = 0;
    for case in analyze_cases() {
        if !features(&case).iter().all(|f| IMPLEMENTED.contains(f)) {
            continue;
        }
        let dir = &case.dir;
        // A collector started with another run id attaches to that run: this
        // case is about `infer analyze` given the wrong file, not about ingest.
        if dir.ends_with("telemetry_wrong_run") {
            continue;
        }
        let db = tmp.path().join(format!("{}.db", case.name));
        let db = db.to_str().unwrap();
        let (telemetry, spans, rest) = split_args(&case.args);
        let out = run_in(dir, &["ingest", "--db", db, "artifact.jsonl"]);
        assert!(
            out.status.success(),
            "{}: {}",
            case.name,
            String::from_utf8_lossy(&out.stderr)
        );
        let runs = run_in(dir, &["runs", "--db", db, "--format", "json"]);
        let runs: Value = serde_json::from_slice(&runs.stdout).unwrap();
        let run_id = runs[0]["run_id"].as_str().unwrap().to_owned();
        for t in &telemetry {
            let out = run_in(dir, &["ingest", "--db", db, t]);
            assert!(
                out.status.success(),
                "{}: {}",
                case.name,
                String::from_utf8_lossy(&out.stderr)
            );
        }
        for s in &spans {
            let out = run_in(dir, &["ingest", "--db", db, "--run", &run_id, s]);
            assert!(
                out.status.success(),
                "{}: {}",
                case.name,
                String::from_utf8_lossy(&out.stderr)
            );
        }
        let mut argv: Vec<&str> = vec!["report", "--db", db, &run_id];
        argv.extend(rest.iter().map(String::as_str));
        let txt = run_in(dir, &argv);
        argv.extend(["--format", "json"]);
        let json = run_in(dir, &argv);
        assert!(
            json.status.success(),
            "{}: {}",
            case.name,
            String::from_utf8_lossy(&json.stderr)
        );
        check(
            &case,
            "ingest + report",
            &json.stdout,
            &txt.stdout,
            true,
            &mut failures,
        );
        checked += 1;
    }
    assert!(checked >= 29, "only {checked} cases checked");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn bad_inputs_get_the_reference_status_and_message() {
    let mut failures = Vec::new();
    let mut checked = 0;
    for case in cases::all(cases::BAD) {
        if !case.is_refusal() {
            continue;
        }
        let rc = case.expected_rc().to_string();
        let needs: Vec<Feature> = {
            let a = case.args_line();
            let mut f = vec![];
            if a.contains("--server-telemetry") {
                f.push(Feature::ServerTelemetry);
            }
            if a.contains("--slo") && !a.contains("--slo-file")
                || a.contains("--slo-file") && !a.contains("--slo ")
            {
                f.push(Feature::Slo);
            }
            f
        };
        if !needs.iter().all(|f| IMPLEMENTED.contains(f)) {
            continue;
        }
        let prefix = case.expected_prefix();
        // A compare case names its arms' files in its flags.
        let full = case.infer_argv();
        let mut argv: Vec<&str> = full.iter().map(String::as_str).collect();
        argv.extend(["--format", "json"]);
        let out = run_in(&case.dir, &argv);
        let code = out.status.code().unwrap_or(-1);
        let stderr = String::from_utf8_lossy(&out.stderr);
        let name = &case.name;
        if code.to_string() != rc || !stderr.contains(prefix.as_str()) {
            failures.push(format!(
                "{name}: exit {code} (want {}), stderr {stderr:?} lacks {prefix:?}",
                rc.trim()
            ));
        }
        checked += 1;
    }
    assert!(checked >= 12, "only {checked} bad cases checked");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
