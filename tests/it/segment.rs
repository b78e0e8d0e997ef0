//! Segments (`--segment NAME=START:END`): `infer compare` on twins of the
//! compare_segment case that the reference itself answered (overlap
//! membership, gates and attainment on overlap-only comparisons, several
//! segments by arrival; tests/fixtures/segment/*/case.md), and `report
//! --segment` on a stored run, checked against the run's own figures.
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::cases::{self, Case};
use crate::common::{leaf_mismatches, run_in};

/// The compare_segment arms, which every twin compares.
fn arms() -> PathBuf {
    cases::conformance("compare_segment").dir
}

/// The twins: every folder of tests/fixtures/segment is one (a folder
/// without `args` fails, naming it).
fn twins() -> Vec<Case> {
    let found = cases::all(cases::SEGMENT);
    for twin in &found {
        twin.file("args");
    }
    found
}

#[test]
fn compare_segment_twins_match_the_reference() {
    let twins = twins();
    assert!(twins.len() >= 3, "{twins:?}");
    for twin in twins {
        let name = &twin.name;
        let mut argv: Vec<&str> = vec!["infer", "compare"];
        argv.extend(twin.args.iter().map(String::as_str));
        let text = run_in(&arms(), &argv);
        argv.extend(["--format", "json"]);
        let json = run_in(&arms(), &argv);
        let rc = twin.expected_rc();
        assert_eq!(
            (json.status.code(), text.status.code()),
            (Some(rc), Some(rc)),
            "{name}: {}",
            String::from_utf8_lossy(&json.stderr)
        );
        let mut expected: Value = serde_json::from_str(&twin.read("expected.json"))
            .unwrap_or_else(|e| panic!("{name}: expected.json: {e}"));
        let mut actual: Value = serde_json::from_slice(&json.stdout).unwrap();
        for v in [&mut expected, &mut actual] {
            v.as_object_mut().unwrap().remove("generated_at_utc");
        }
        let bad = leaf_mismatches(&expected, &actual);
        assert!(
            bad.is_empty(),
            "{name}: {} mismatches: {:?}",
            bad.len(),
            &bad[..bad.len().min(8)]
        );
        let want = twin.read("expected.txt").into_bytes();
        assert!(
            text.stdout == want,
            "{name}: the text report differs:\n{}",
            String::from_utf8_lossy(&text.stdout)
        );
    }
}

/// The stored baseline run of block 1, in a fresh database.
fn stored_run(tmp: &Path) -> (String, String) {
    let db = tmp.join("segments.db").to_string_lossy().into_owned();
    let out = run_in(&arms(), &["ingest", "--db", &db, "baseline_b1.jsonl"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    (db, "cmp_baseline_b1".to_owned())
}

fn report(db: &str, run: &str, extra: &[&str]) -> std::process::Output {
    let mut argv = vec!["report", "--db", db, run];
    argv.extend(extra);
    run_in(&arms(), &argv)
}

#[test]
fn report_shows_each_segment_of_a_stored_run() {
    let tmp = tempfile::tempdir().unwrap();
    let (db, run) = stored_run(tmp.path());
    let flags = ["--segment", "late=0.4:3", "--segment", "early=0:0.4"];
    let mut json_flags = flags.to_vec();
    json_flags.extend(["--format", "json"]);
    let out = report(&db, &run, &json_flags);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let rep: Value = serde_json::from_slice(&out.stdout).unwrap();
    let case = &rep["cases"]["c2_in64_out16"];
    let span = &case["intervals"]["measured_span"];
    let (start, end) = (
        span["started_at_ns"].as_i64().unwrap(),
        span["ended_at_ns"].as_i64().unwrap(),
    );
    let (early, late) = (&case["segments"]["early"], &case["segments"]["late"]);
    // The slices partition the phase: every request arrived in one of them.
    let offered = |s: &Value| s["population"]["offered"].as_i64().unwrap();
    assert_eq!(
        offered(early) + offered(late),
        case["population"]["offered"].as_i64().unwrap()
    );
    assert_eq!((offered(early), offered(late)), (26, 14));
    // The early slice starts with the phase, the late one is clipped to its end.
    assert_eq!(
        early["intervals"]["rate"]["started_at_ns"].as_i64(),
        Some(start)
    );
    assert_eq!(
        early["intervals"]["rate"]["ended_at_ns"].as_i64(),
        Some(start + 400_000_000)
    );
    assert_eq!(
        late["intervals"]["rate"]["started_at_ns"].as_i64(),
        Some(start + 400_000_000)
    );
    assert_eq!(late["intervals"]["rate"]["ended_at_ns"].as_i64(), Some(end));
    // Rates per second of the slice, over the requests that arrived in it.
    let seconds = late["intervals"]["rate"]["seconds"].as_f64().unwrap();
    assert_eq!(seconds, (end - start - 400_000_000) as f64 / 1e9);
    let rps = late["throughput"]["requests_per_second"].as_f64().unwrap();
    assert_eq!(rps, 14.0 / seconds);
    assert_eq!(late["intervals"]["membership"], "arrival");
    assert_eq!(
        late["latency"]["metrics"]["client.e2e"]["successful"]["p50"]["n"],
        14
    );
    // The text report lists them beneath the case, by name.
    let text = String::from_utf8(report(&db, &run, &flags).stdout).unwrap();
    let lines: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("  segment "))
        .collect();
    assert_eq!(lines.len(), 2, "{text}");
    assert!(
        lines[0].starts_with(
            "  segment early (arrivals over 0.40 s): 26 offered, 26 successful; p50 E2E="
        ),
        "{}",
        lines[0]
    );
    assert!(
        lines[1].starts_with("  segment late (arrivals over 0.24 s): 14 offered"),
        "{}",
        lines[1]
    );
    assert!(
        lines[1].ends_with(&format!("requests={rps:.2} req/s")),
        "{}",
        lines[1]
    );

    // By overlap: the same slice has no rates, and says why.
    let out = report(
        &db,
        &run,
        &[
            "--segment",
            "late=0.4:3",
            "--segment-membership",
            "overlap",
            "--format",
            "json",
        ],
    );
    let rep: Value = serde_json::from_slice(&out.stdout).unwrap();
    let late = &rep["cases"]["c2_in64_out16"]["segments"]["late"];
    assert_eq!(late["intervals"]["membership"], "overlap");
    assert_eq!(late["intervals"]["rate_reason"], "overlapping_cohort");
    assert_eq!(late["intervals"]["rate"]["numerator_cohort"], "overlapping");
    assert_eq!(late["throughput"]["requests_per_second"], Value::Null);
    // Requests in flight at 0.4 s count too.
    assert!(late["population"]["offered"].as_i64().unwrap() >= 14);
}

#[test]
fn report_refuses_a_bad_segment_with_exit_2() {
    let tmp = tempfile::tempdir().unwrap();
    let (db, run) = stored_run(tmp.path());
    for (flags, message) in [
        (
            vec!["--segment", "early=0.4:0.1"],
            "Error: --segment 'early=0.4:0.1': segment early: offsets must satisfy 0 <= start < end",
        ),
        (vec!["--segment", "early"], "Error: --segment 'early': use NAME=START:END"),
        (
            vec!["--segment", "a=0:1", "--segment", "a=1:2"],
            "Error: segment a is defined more than once",
        ),
        (
            vec!["--segment", "a=0:1", &run],
            "Error: --segment needs one run",
        ),
    ] {
        let out = report(&db, &run, &flags);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{flags:?}: {stderr}");
        assert!(stderr.starts_with(message), "{flags:?}: {stderr}");
    }
}

#[test]
fn compare_refuses_a_repeated_segment_name_as_the_reference_does() {
    let out = run_in(
        &arms(),
        &[
            "infer",
            "compare",
            "--baseline",
            "baseline_b1.jsonl",
            "--candidate",
            "candidate_b1.jsonl",
            "--segment",
            "a=0:1",
            "--segment",
            "b=1:2",
            "--segment",
            "b=2:3",
            "--segment",
            "a=5:6",
        ],
    );
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "Error: segment a, b is defined more than once\n"
    );
}
