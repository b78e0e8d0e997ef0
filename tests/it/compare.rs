//! `stormlog compare --db`: arms named by stored run ids give the reference's
//! `infer compare` report on the original files (every statistic, digest and
//! verdict), the runs' names aside: run ids where the reference shows paths.
use serde_json::Value;

use crate::common::{case_args, fixtures, leaf_mismatches, run_in};

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
        let dir = fixtures().join("cases").join(name);
        let db = tmp.path().join(format!("{name}.db"));
        let db = db.to_str().unwrap();
        let args = case_args(&dir);
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
