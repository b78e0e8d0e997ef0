//! `stormlog compare --db`: arms named by stored run ids give the reference's
//! `infer compare` report on the original files (every statistic, digest and
//! verdict), the runs' names aside: run ids where the reference shows paths.
use serde_json::Value;

use crate::cases::{self, Case};
use crate::common::{leaf_mismatches, run_in};

/// Drops the leaves that name a run (paths there, run ids here) and those
/// the reference itself lists as varying between runs.
fn scrub(v: &mut Value) {
    match v {
        Value::Object(m) => {
            for key in ["path", "generated_at_utc", "argv"] {
                m.remove(key);
            }
            if let Some(d) = m.get_mut("diagnostics").and_then(Value::as_object_mut) {
                d.remove("unverified_pairs");
            }
            m.values_mut().for_each(scrub);
        }
        Value::Array(a) => a.iter_mut().for_each(scrub),
        _ => {}
    }
}

#[test]
fn stored_runs_compare_like_their_files() {
    let tmp = tempfile::tempdir().unwrap();
    for name in ["compare_config", "compare_allow", "compare_segment"] {
        let case = cases::conformance(name);
        let dir = case.dir.clone();
        let db = tmp.path().join(format!("{name}.db"));
        let db = db.to_str().unwrap();
        let args = case.args.clone();
        // --baseline A B --candidate C D: the files become stored runs.
        let mut argv: Vec<String> = vec!["compare".into(), "--db".into(), db.into()];
        let mut run_ids = std::collections::BTreeMap::new();
        for a in &args {
            if a.ends_with(".jsonl") {
                let out = run_in(&dir, &["ingest", "--db", db, a]);
                assert!(
                    out.status.success(),
                    "{}",
                    String::from_utf8_lossy(&out.stderr)
                );
                let text = String::from_utf8_lossy(&out.stdout).into_owned();
                let run = text
                    .split("run ")
                    .nth(1)
                    .unwrap()
                    .split(',')
                    .next()
                    .unwrap()
                    .to_owned();
                run_ids.insert(a.clone(), run.clone());
                argv.push(run);
            } else {
                argv.push(a.clone());
            }
        }
        argv.extend(["--format".into(), "json".into()]);
        let refs: Vec<&str> = argv.iter().map(String::as_str).collect();
        let out = run_in(&dir, &refs);
        let want_rc: i32 = std::fs::read_to_string(dir.join("expected.rc"))
            .map_or(0, |s| s.trim().parse().unwrap());
        assert_eq!(
            out.status.code(),
            Some(want_rc),
            "{name}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let mut expected: Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join("expected.json")).unwrap())
                .unwrap();
        let mut actual: Value = serde_json::from_slice(&out.stdout).unwrap();
        scrub(&mut expected);
        scrub(&mut actual);
        let bad = leaf_mismatches(&expected, &actual);
        assert!(
            bad.is_empty(),
            "{name}: {} mismatches: {:?}",
            bad.len(),
            &bad[..bad.len().min(8)]
        );
        // The text report names no run: byte for byte the reference's.
        let text_argv: Vec<&str> = refs[..refs.len() - 2].to_vec();
        let text = run_in(&dir, &text_argv);
        let want = std::fs::read(dir.join("expected.txt")).unwrap();
        assert!(
            text.stdout == want,
            "{name}: the text report differs:\n{}",
            String::from_utf8_lossy(&text.stdout)
        );
        assert_eq!(
            run_ids.len(),
            args.iter().filter(|a| a.ends_with(".jsonl")).count()
        );
    }
}

/// Ingests every arm file of the named compare cases into one database.
fn store_arms(db: &str, cases: &[&str]) {
    for name in cases {
        let case = cases::conformance(name);
        let dir = case.dir.clone();
        for a in case.args.clone().iter().filter(|a| a.ends_with(".jsonl")) {
            let out = run_in(&dir, &["ingest", "--db", db, a]);
            assert!(
                out.status.success(),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
    }
}

/// The case's flags without its arms' files: what follows `--experiment`.
fn flags_without_arms(case: &Case) -> Vec<String> {
    let mut rest = Vec::new();
    let mut in_arm = false;
    for a in case.args.clone() {
        match a.as_str() {
            "--baseline" | "--candidate" => in_arm = true,
            _ if in_arm && a.ends_with(".jsonl") => {}
            _ => {
                in_arm = false;
                rest.push(a);
            }
        }
    }
    rest
}

/// `--experiment NAME` chooses the arms by the labels the runs recorded
/// (experiment, arm `baseline` and `candidate`, one run per block): one
/// database holding two experiments compares each like its files.
#[test]
fn experiment_labels_choose_the_arms_of_stored_runs() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("experiments.db");
    let db = db.to_str().unwrap();
    store_arms(db, &["compare_config", "compare_allow"]);
    for (name, experiment) in [
        ("compare_config", "exp-token-delay"),
        ("compare_segment", "exp-token-delay"),
        ("compare_allow", "exp-slots"),
    ] {
        let case = cases::conformance(name);
        let dir = case.dir.clone();
        let mut argv: Vec<String> = ["compare", "--db", db, "--experiment", experiment]
            .map(str::to_owned)
            .to_vec();
        argv.extend(flags_without_arms(&case));
        let text_argv: Vec<&str> = argv.iter().map(String::as_str).collect();
        let text = run_in(&dir, &text_argv);
        let want_rc: i32 = std::fs::read_to_string(dir.join("expected.rc"))
            .map_or(0, |s| s.trim().parse().unwrap());
        assert_eq!(
            text.status.code(),
            Some(want_rc),
            "{name}: {}",
            String::from_utf8_lossy(&text.stderr)
        );
        assert!(
            text.stdout == std::fs::read(dir.join("expected.txt")).unwrap(),
            "{name}: the text report differs:\n{}",
            String::from_utf8_lossy(&text.stdout)
        );
        // Stderr says which runs were chosen, as none was named.
        let said = String::from_utf8_lossy(&text.stderr).into_owned();
        assert!(
            said.starts_with(&format!("experiment {experiment}: baseline = ")),
            "{said}"
        );
        let mut json_argv = text_argv.clone();
        json_argv.extend(["--format", "json"]);
        let out = run_in(&dir, &json_argv);
        let mut expected: Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join("expected.json")).unwrap())
                .unwrap();
        let mut actual: Value = serde_json::from_slice(&out.stdout).unwrap();
        scrub(&mut expected);
        scrub(&mut actual);
        let bad = leaf_mismatches(&expected, &actual);
        assert!(bad.is_empty(), "{name}: {:?}", &bad[..bad.len().min(8)]);
    }
    // Two of three blocks: the same comparison as naming their run ids.
    let case = cases::conformance("compare_allow");
    let dir = case.dir.clone();
    let flags = flags_without_arms(&case);
    let run_with = |head: &[&str]| {
        let mut argv: Vec<&str> = head.to_vec();
        argv.extend(flags.iter().map(String::as_str));
        argv.extend(["--format", "json"]);
        run_in(&dir, &argv)
    };
    let by_blocks = run_with(&[
        "compare",
        "--db",
        db,
        "--experiment",
        "exp-slots",
        "--block",
        "1",
        "--block",
        "3",
    ]);
    let by_ids = run_with(&[
        "compare",
        "--db",
        db,
        "--baseline",
        "cmpa_baseline_b1",
        "cmpa_baseline_b3",
        "--candidate",
        "cmpa_candidate_b1",
        "cmpa_candidate_b3",
    ]);
    let (mut a, mut b): (Value, Value) = (
        serde_json::from_slice(&by_blocks.stdout).unwrap(),
        serde_json::from_slice(&by_ids.stdout).unwrap(),
    );
    scrub(&mut a);
    scrub(&mut b);
    assert_eq!(a["payload"]["runs"].as_array().map(Vec::len), Some(4));
    assert_eq!(a, b);
    // A name no run recorded is a usage error that lists what there is.
    let out = run_in(&dir, &["compare", "--db", db, "--experiment", "exp-nope"]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "Error: no stored run records experiment 'exp-nope'; the database holds experiment exp-slots, exp-token-delay\n"
    );
    let out = run_in(
        &dir,
        &[
            "compare",
            "--db",
            db,
            "--experiment",
            "exp-slots",
            "--candidate",
            "treatment",
        ],
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr)
        .contains("has no run of arm 'treatment'; its arms: baseline, candidate"));
}
