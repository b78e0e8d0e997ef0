//! Re-judging stored runs: a run judged with a TOML policy it never recorded
//! gives the report the reference gives for the same policy (its
//! `expected.json` made with `--slo` flags: same policy, same digest; only the
//! policy's source, `flags` there and `file` here, differs).
use serde_json::Value;

use crate::cases;
use crate::common::{fixtures, leaf_mismatches, run_in};

/// The policy document of a case's expected report, written as TOML.
fn as_toml(policy: &Value) -> String {
    let mut s = String::new();
    for key in ["format", "name", "population", "unknown_policy"] {
        s.push_str(&format!("{key} = {}\n", policy[key]));
    }
    s.push_str(&format!("version = {}\n", policy["version"]));
    if let Some(t) = policy["attainment_target"].as_f64() {
        s.push_str(&format!("attainment_target = {t}\n"));
    }
    s.push_str(&format!(
        "interval = {{ kind = {} }}\n",
        policy["interval"]["kind"]
    ));
    for c in policy["criteria"].as_array().unwrap() {
        s.push_str("\n[[criteria]]\n");
        s.push_str(&format!(
            "metric = {}\nboundary = {}\nmax_ms = {}\n",
            c["metric"], c["boundary"], c["max_ms"]
        ));
        if let Some(t) = c["attainment_target"].as_f64() {
            s.push_str(&format!("attainment_target = {t}\n"));
        }
    }
    s
}

/// Replaces the policy's source in a report, so reports made from flags and
/// from a file compare equal.
fn without_source(mut v: Value) -> Value {
    v["slo"]["source"] = Value::Null;
    if let Some(cases) = v["cases"].as_object_mut() {
        for case in cases.values_mut() {
            if case.get("slo").is_some() {
                case["slo"]["slo_source"] = Value::Null;
            }
        }
    }
    v
}

#[test]
fn a_stored_run_rejudged_with_a_toml_policy_matches_the_reference() {
    let tmp = tempfile::tempdir().unwrap();
    let mut checked = 0;
    for name in ["slo_override_unrecorded", "slo_override"] {
        let case = cases::conformance(name);
        let dir = case.dir.clone();
        let expected: Value = serde_json::from_str(&case.read("expected.json")).unwrap();
        let policy = tmp.path().join(format!("{name}.toml"));
        std::fs::write(&policy, as_toml(&expected["slo"]["policy"])).unwrap();
        let db = tmp.path().join(format!("{name}.db"));
        let db = db.to_str().unwrap();
        assert!(run_in(&dir, &["ingest", "--db", db, "artifact.jsonl"])
            .status
            .success());
        let runs: Value =
            serde_json::from_slice(&run_in(&dir, &["runs", "--db", db, "--format", "json"]).stdout)
                .unwrap();
        let run_id = runs[0]["run_id"].as_str().unwrap().to_owned();
        let out = run_in(
            &dir,
            &[
                "report",
                "--db",
                db,
                &run_id,
                "--slo-file",
                policy.to_str().unwrap(),
                "--format",
                "json",
            ],
        );
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let actual: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(
            actual["slo"]["digest"], expected["slo"]["digest"],
            "{name}: digest of the TOML policy"
        );
        assert_eq!(actual["slo"]["source"], "file");
        let bad = leaf_mismatches(&without_source(expected), &without_source(actual));
        assert!(bad.is_empty(), "{name}: {bad:?}");
        checked += 1;
    }
    assert_eq!(checked, 2);
}

#[test]
fn all_runs_are_judged_and_check_gates_on_targets() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("p.db");
    let db = db.to_str().unwrap();
    for c in ["slo_file", "poisson"] {
        assert!(run_in(
            &cases::conformance(c).dir,
            &["ingest", "--db", db, "artifact.jsonl"]
        )
        .status
        .success());
    }
    // slo_file recorded a policy whose client.ttft target (90%) its run misses (89.5%).
    let recorded = run_in(
        tmp.path(),
        &["report", "--db", db, "--all", "--check", "--format", "json"],
    );
    assert_eq!(
        recorded.status.code(),
        Some(4),
        "{}",
        String::from_utf8_lossy(&recorded.stderr)
    );
    let rows: Value = serde_json::from_slice(&recorded.stdout).unwrap();
    let row = rows
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["run_id"] == "slo_file")
        .unwrap();
    assert_eq!(row["verdict"], "missed");
    assert_eq!(row["attainment_lower"], 0.8947368421052632);
    // A looser policy from a file, every run judged: all met, exit 0.
    let policy = fixtures().join("../../../examples/slo/interactive.toml");
    let loose = run_in(
        tmp.path(),
        &[
            "report",
            "--db",
            db,
            "--all",
            "--check",
            "--slo-file",
            policy.to_str().unwrap(),
        ],
    );
    assert_eq!(
        loose.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&loose.stderr)
    );
    let table = String::from_utf8(loose.stdout).unwrap();
    assert_eq!(
        // A row ends with its verdict, two spaces after its first target.
        table.lines().filter(|l| l.ends_with("  met")).count(),
        3,
        "{table}"
    );
}
