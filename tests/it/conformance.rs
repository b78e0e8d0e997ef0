//! Every reference case whose features stormlog implements must give the
//! reference's JSON (value for value) and text (byte for byte), through
//! `stormlog infer analyze` and through `stormlog ingest` + `stormlog report`.
//! Adding a case is adding a folder under tests/fixtures/conformance/cases.
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::common::{case_args, fixtures, leaf_mismatches, run_in};

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

fn features(dir: &Path) -> Vec<Feature> {
    let args = case_args(dir).join(" ");
    let artifact = std::fs::read_to_string(dir.join("artifact.jsonl")).unwrap_or_default();
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

/// A case of `infer compare` (its `command` file says so).
fn is_compare(dir: &Path) -> bool {
    std::fs::read_to_string(dir.join("command")).is_ok_and(|c| c.trim() == "compare")
}

/// The analyze cases, and the bad inputs the reference reads leniently (those
/// with an `expected.json`): both go through analyze and ingest + report.
fn analyze_cases() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(fixtures().join("cases"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| !p.join("command").exists())
        .collect();
    v.extend(
        std::fs::read_dir(fixtures().join("bad"))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.join("expected.json").exists() && !p.join("expected.rc").exists()),
    );
    v.sort();
    v
}

/// Compares a command's JSON and text with the reference's; `people`: the
/// text is stormlog's own `report`, which is the reference's text in
/// people's units and with hints (`report::people`).
fn check(
    dir: &Path,
    label: &str,
    json: &[u8],
    text: &[u8],
    people: bool,
    failures: &mut Vec<String>,
) {
    let name = dir.file_name().unwrap().to_string_lossy();
    let expected: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("expected.json")).unwrap()).unwrap();
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
    let mut expected_txt = std::fs::read(dir.join("expected.txt")).unwrap();
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
    for dir in analyze_cases() {
        if !features(&dir).iter().all(|f| IMPLEMENTED.contains(f)) {
            continue;
        }
        let args = case_args(&dir);
        let mut base: Vec<&str> = vec!["infer", "analyze", "artifact.jsonl"];
        base.extend(args.iter().map(String::as_str));
        let mut j = base.clone();
        j.extend(["--format", "json"]);
        let out = run_in(&dir, &j);
        assert!(
            out.status.success(),
            "{}: {}",
            dir.display(),
            String::from_utf8_lossy(&out.stderr)
        );
        let txt = run_in(&dir, &base);
        check(
            &dir,
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
    for dir in analyze_cases() {
        if !features(&dir).iter().all(|f| IMPLEMENTED.contains(f)) {
            continue;
        }
        // A collector started with another run id attaches to that run: this
        // case is about `infer analyze` given the wrong file, not about ingest.
        if dir.ends_with("telemetry_wrong_run") {
            continue;
        }
        let db = tmp
            .path()
            .join(format!("{}.db", dir.file_name().unwrap().to_string_lossy()));
        let db = db.to_str().unwrap();
        let (telemetry, spans, rest) = split_args(&case_args(&dir));
        let out = run_in(&dir, &["ingest", "--db", db, "artifact.jsonl"]);
        assert!(
            out.status.success(),
            "{}: {}",
            dir.display(),
            String::from_utf8_lossy(&out.stderr)
        );
        let runs = run_in(&dir, &["runs", "--db", db, "--format", "json"]);
        let runs: Value = serde_json::from_slice(&runs.stdout).unwrap();
        let run_id = runs[0]["run_id"].as_str().unwrap().to_owned();
        for t in &telemetry {
            let out = run_in(&dir, &["ingest", "--db", db, t]);
            assert!(
                out.status.success(),
                "{}: {}",
                dir.display(),
                String::from_utf8_lossy(&out.stderr)
            );
        }
        for s in &spans {
            let out = run_in(&dir, &["ingest", "--db", db, "--run", &run_id, s]);
            assert!(
                out.status.success(),
                "{}: {}",
                dir.display(),
                String::from_utf8_lossy(&out.stderr)
            );
        }
        let mut argv: Vec<&str> = vec!["report", "--db", db, &run_id];
        argv.extend(rest.iter().map(String::as_str));
        let txt = run_in(&dir, &argv);
        argv.extend(["--format", "json"]);
        let json = run_in(&dir, &argv);
        assert!(
            json.status.success(),
            "{}: {}",
            dir.display(),
            String::from_utf8_lossy(&json.stderr)
        );
        check(
            &dir,
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
    for entry in std::fs::read_dir(fixtures().join("bad")).unwrap() {
        let dir = entry.unwrap().path();
        let Ok(rc) = std::fs::read_to_string(dir.join("expected.rc")) else {
            continue;
        };
        let needs: Vec<Feature> = {
            let a = case_args(&dir).join(" ");
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
        let prefix = std::fs::read_to_string(dir.join("expected.prefix")).unwrap();
        let args = case_args(&dir);
        // A compare case names its arms' files in its flags.
        let mut argv: Vec<&str> = if is_compare(&dir) {
            vec!["infer", "compare"]
        } else {
            vec!["infer", "analyze", "artifact.jsonl"]
        };
        argv.extend(args.iter().map(String::as_str));
        argv.extend(["--format", "json"]);
        let out = run_in(&dir, &argv);
        let code = out.status.code().unwrap_or(-1);
        let stderr = String::from_utf8_lossy(&out.stderr);
        let name = dir.file_name().unwrap().to_string_lossy().into_owned();
        if code.to_string() != rc.trim() || !stderr.contains(prefix.trim_end_matches('\n')) {
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
