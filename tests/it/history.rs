//! `stormlog history` on made-up histories with a known truth: runs written
//! by the test from the compare_config baseline run (a real artifact), each
//! with fresh ids, an hour after the one before, its latencies scaled by a
//! known factor and a little noise, and a verified server description so
//! comparability is established (the corpus has none: docs/history.md §1).
use std::path::Path;

use serde_json::{json, Value};

use super::common::{fixtures, run_in};

const SOURCE_RUN: &str = "cmp_baseline_b1";
const SOURCE_SESSION: &str = "28e0c2de-d579-4bbc-b73f-7d6df9d005fb";
const BOOT: &str = "80956652-4182-4e20-8984-7a99c0a0659e";
const HOUR_NS: i64 = 3_600_000_000_000;

/// How one made-up run differs from the source run.
#[derive(Clone)]
struct Made {
    /// Latencies (TTFT, E2E, chunk gaps) multiplied by this.
    factor: f64,
    max_num_seqs: i64,
    /// A decoding setting that changes the workload's spec digest.
    temperature: Option<f64>,
    experiment: &'static str,
    /// Without the server's `/server_info` answer (no vllm_config known).
    no_server_info: bool,
}

impl Default for Made {
    fn default() -> Self {
        Made {
            factor: 1.0,
            max_num_seqs: 256,
            temperature: None,
            experiment: "exp-token-delay",
            no_server_info: false,
        }
    }
}

fn edit(v: &mut Value, key: &str, made: &Made, shift_ns: i64) {
    match v {
        Value::Object(m) => {
            for (k, item) in m.iter_mut() {
                edit(item, k, made, shift_ns);
            }
        }
        Value::Array(items) if key == "chunk_interarrival_ms" => {
            for item in items {
                if let Some(x) = item.as_f64() {
                    *item = json!(x * made.factor);
                }
            }
        }
        Value::Array(items) => {
            for item in items {
                edit(item, "", made, shift_ns);
            }
        }
        Value::Number(n) if key.ends_with("_at_ns") || key == "timestamp_ns" => {
            if let Some(x) = n.as_i64() {
                *v = json!(x + shift_ns);
            }
        }
        Value::Number(n)
            if ["ttft_ms", "e2e_latency_ms", "first_chunk_latency_ms"].contains(&key) =>
        {
            if let Some(x) = n.as_f64() {
                *v = json!(x * made.factor);
            }
        }
        Value::Number(_) if key == "max_num_seqs" => *v = json!(made.max_num_seqs),
        _ => {}
    }
}

/// The verified server description and the runner's weights record that
/// make `model.weights_digest`, `gpu.name` and `gpu.driver_version` known.
fn identity_records(run_id: &str, session: &str, at_ns: i64) -> [Value; 2] {
    let model = json!({"weights_digest": "sha256:5eed", "resolved_snapshot": "snap-1",
                       "identity_evidence": "pinned_snapshot_verified"});
    let server = json!({"pid": 4242, "start_ticks": 777});
    let mut described = model.clone();
    described["configured"] = json!("fake");
    let description = json!({
        "host": {"hostname": "vm", "boot_id": BOOT, "nproc": 16},
        "server": server,
        "gpus": {"driver_version": "550.54", "server_uuids": ["GPU-1"],
                 "devices": [{"uuid": "GPU-1", "server_pids": [4242], "settings": {"name": "NVIDIA H200"}}]},
        "model": described,
    });
    [
        json!({"event_type": "infer.manifest", "role": "before", "session_id": session, "run_id": run_id,
               "observed_at_ns": at_ns, "sha256": "d".repeat(64),
               "host": {"hostname": "vm", "boot_id": BOOT}, "server": server, "gpu_uuids": ["GPU-1"],
               "description": description}),
        json!({"event_type": "infer.model_identity", "session_id": session, "run_id": run_id,
               "server": server, "boot_id": BOOT, "model": model}),
    ]
}

/// The source run rewritten as run `run_id`, `hours` after the source.
fn make_run(run_id: &str, hours: i64, made: &Made) -> String {
    let source =
        std::fs::read_to_string(fixtures().join("cases/compare_config/baseline_b1.jsonl")).unwrap();
    let session = format!("session-{run_id}");
    let text = source
        .replace(SOURCE_RUN, run_id)
        .replace(SOURCE_SESSION, &session);
    let mut records: Vec<Value> = Vec::new();
    for line in text.lines() {
        let mut record: Value = serde_json::from_str(line).unwrap();
        edit(&mut record, "", made, hours * HOUR_NS);
        match record["event_type"].as_str() {
            Some("infer.server_probe") => {
                record["answers"]["/version"] =
                    json!({"body": {"version": "0.11.0"}, "http_status": 200});
                if made.no_server_info {
                    if let Some(answers) = record["answers"].as_object_mut() {
                        answers.remove("/server_info?config_format=json");
                    }
                }
            }
            Some("infer.workload") => {
                if let Some(t) = made.temperature {
                    record["decoding"]["extra_body"] = json!({"temperature": t});
                }
            }
            Some("infer.session") if record["config"]["labels"].is_object() => {
                record["config"]["labels"]["experiment"] = json!(made.experiment);
            }
            _ => {}
        }
        let first_session = record["event_type"] == "infer.session"
            && !records.iter().any(|r| r["event_type"] == "infer.session");
        let at = record["timestamp_ns"].as_i64().unwrap_or(0);
        records.push(record);
        if first_session {
            records.extend(identity_records(run_id, &session, at));
        }
    }
    records.iter().map(|r| format!("{r}\n")).collect()
}

/// A deterministic noise in [-0.02, 0.02] for run `i`.
fn noise(i: u64) -> f64 {
    let x = i
        .wrapping_mul(6_364_136_223_846_793_005)
        .wrapping_add(1_442_695_040_888_963_407);
    ((x >> 33) as f64 / (1u64 << 31) as f64 - 0.5) * 0.04
}

/// Writes runs into a fresh project database in `dir`.
fn project(dir: &Path, runs: &[(String, Made)]) {
    let mut files = Vec::new();
    for (i, (id, made)) in runs.iter().enumerate() {
        let name = format!("{id}.jsonl");
        std::fs::write(dir.join(&name), make_run(id, i as i64, made)).unwrap();
        files.push(name);
    }
    let mut args = vec!["ingest", "--db", "p.db"];
    args.extend(files.iter().map(String::as_str));
    let out = run_in(dir, &args);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Twelve runs, latencies x1.5 from run 8 on, each with its own noise.
const SHIFT_AT: usize = 8;
fn shifted_history(dir: &Path) {
    let runs: Vec<(String, Made)> = (0..12)
        .map(|i| {
            let level = if i >= SHIFT_AT { 1.5 } else { 1.0 };
            let made = Made {
                factor: level * (1.0 + noise(i as u64)),
                ..Made::default()
            };
            (format!("r{i:02}"), made)
        })
        .collect();
    project(dir, &runs);
}

fn json_of(dir: &Path, args: &[&str]) -> (Value, i32) {
    let out = run_in(dir, args);
    let text = String::from_utf8_lossy(&out.stdout);
    let doc = serde_json::from_str(&text)
        .unwrap_or_else(|e| panic!("{e}: {text} {}", String::from_utf8_lossy(&out.stderr)));
    (doc, out.status.code().unwrap_or(-1))
}

fn metric<'a>(check: &'a Value, name: &str) -> &'a Value {
    check["cases"][0]["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["name"] == name)
        .unwrap()
}

const GATES: [&str; 4] = [
    "--gate",
    "client.e2e.p50=significant:0.05",
    "--gate",
    "client.ttft.p50=non-inferiority:0.10",
];

#[test]
fn the_check_flags_the_shifted_runs_and_not_the_others() {
    let dir = tempfile::tempdir().unwrap();
    shifted_history(dir.path());
    let pre_shift = "r03,r04,r05,r06,r07";
    for i in 3..12 {
        let run = format!("r{i:02}");
        let mut args = vec!["history", "check", &run, "--db", "p.db", "--format", "json"];
        args.extend(GATES);
        if i >= SHIFT_AT {
            args.extend(["--baseline", "runs", pre_shift]);
        }
        let (check, rc) = json_of(dir.path(), &args);
        assert_eq!(check["cases"][0]["comparability"], "compatible", "{run}");
        let e2e = metric(&check, "client.e2e.p50");
        let ttft = metric(&check, "client.ttft.p50");
        if i >= SHIFT_AT {
            assert_eq!(rc, 4, "{run} is shifted");
            assert_eq!(e2e["gate"]["status"], "fail", "{run}");
            assert_eq!(ttft["gate"]["status"], "fail", "{run}");
            assert_eq!(e2e["verdict"]["direction"], "worse", "{run}");
            // The shift is +50% and the noise 2%: the effect is near +50%.
            let effect = e2e["effect"].as_f64().unwrap();
            assert!((effect - 0.5).abs() < 0.07, "{run}: {effect}");
        } else {
            assert_eq!(rc, 0, "{run} is not shifted: {e2e}");
            assert_eq!(e2e["gate"]["status"], "pass", "{run}");
            assert_eq!(ttft["gate"]["status"], "pass", "{run}");
            assert_eq!(
                check["cases"][0]["baseline_runs"].as_array().unwrap().len(),
                i.min(5)
            );
        }
    }
    // The first shifted run, against the last five runs before it.
    let mut args = vec![
        "history", "check", "r08", "--db", "p.db", "--format", "json",
    ];
    args.extend(GATES);
    let (check, rc) = json_of(dir.path(), &args);
    assert_eq!(rc, 4);
    assert_eq!(
        check["cases"][0]["baseline_runs"],
        json!(["r03", "r04", "r05", "r06", "r07"])
    );
    // since: a date keeps the runs from then on (r02 started two hours after r00).
    let (since, _) = json_of(
        dir.path(),
        &[
            "history",
            "check",
            "r05",
            "--db",
            "p.db",
            "--format",
            "json",
            "--baseline",
            "since:2026-11-29T16:14:00Z",
        ],
    );
    assert_eq!(
        since["cases"][0]["baseline_runs"],
        json!(["r02", "r03", "r04"])
    );
}

#[test]
fn too_few_baseline_runs_are_not_evaluable_and_exit_4_unless_allowed() {
    let dir = tempfile::tempdir().unwrap();
    shifted_history(dir.path());
    let mut args = vec![
        "history", "check", "r02", "--db", "p.db", "--format", "json",
    ];
    args.extend(GATES);
    let (check, rc) = json_of(dir.path(), &args);
    assert_eq!(rc, 4);
    assert_eq!(
        metric(&check, "client.e2e.p50")["gate"]["status"],
        "not_evaluable"
    );
    assert_eq!(
        metric(&check, "client.e2e.p50")["gate"]["reason"],
        "insufficient_runs"
    );
    args.push("--allow-not-evaluable");
    let (_, rc) = json_of(dir.path(), &args);
    assert_eq!(rc, 0);
    // The first run has no earlier run at all.
    let (first, rc) = json_of(
        dir.path(),
        &[
            "history", "check", "r00", "--db", "p.db", "--format", "json", "--gate", GATES[1],
        ],
    );
    assert_eq!(rc, 4);
    assert_eq!(first["cases"][0]["baseline_runs"], json!([]));
}

#[test]
fn change_points_are_found_where_the_shift_starts() {
    let dir = tempfile::tempdir().unwrap();
    shifted_history(dir.path());
    let (doc, rc) = json_of(dir.path(), &["history", "--db", "p.db", "--format", "json"]);
    assert_eq!(rc, 0);
    let series = doc["series"].as_array().unwrap();
    assert_eq!(series.len(), 1, "{doc}");
    assert_eq!(series[0]["runs"].as_array().unwrap().len(), 12);
    let changes = series[0]["change_points"].as_array().unwrap();
    // Every latency figure shifts at run 8, and nothing else moves.
    assert_eq!(changes.len(), 9, "{changes:?}");
    for c in changes {
        assert_eq!(c["first_run"], "r08", "{c}");
        assert_eq!(c["index"], SHIFT_AT);
        let change = c["change"].as_f64().unwrap();
        assert!((change - 0.5).abs() < 0.05, "{c}");
    }
    // A series without a shift has no change point.
    let quiet = tempfile::tempdir().unwrap();
    let runs: Vec<(String, Made)> = (0..10)
        .map(|i| {
            let made = Made {
                factor: 1.0 + noise(i as u64),
                ..Made::default()
            };
            (format!("q{i}"), made)
        })
        .collect();
    project(quiet.path(), &runs);
    let (doc, _) = json_of(
        quiet.path(),
        &["history", "--db", "p.db", "--format", "json"],
    );
    assert_eq!(doc["series"][0]["change_points"], json!([]));
    // The text and CSV forms say the same.
    let out = run_in(dir.path(), &["history", "--db", "p.db", "--format", "csv"]);
    let csv = String::from_utf8_lossy(&out.stdout);
    let flagged: Vec<&str> = csv
        .lines()
        .filter(|l| l.contains("client.ttft.p50:+"))
        .collect();
    assert_eq!(flagged.len(), 1, "{csv}");
    assert!(flagged[0].contains(",r08,"), "{csv}");
    let out = run_in(dir.path(), &["history", "--db", "p.db"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("client.e2e.p50: from run r08: +"), "{text}");
}

#[test]
fn series_split_on_engine_config_or_workload_and_join_with_allow() {
    let dir = tempfile::tempdir().unwrap();
    let runs = vec![
        ("a0".to_owned(), Made::default()),
        ("a1".to_owned(), Made::default()),
        (
            "seqs".to_owned(),
            Made {
                max_num_seqs: 128,
                ..Made::default()
            },
        ),
        (
            "warm".to_owned(),
            Made {
                temperature: Some(0.7),
                ..Made::default()
            },
        ),
        (
            "other".to_owned(),
            Made {
                experiment: "exp-other",
                ..Made::default()
            },
        ),
        ("a2".to_owned(), Made::default()),
    ];
    project(dir.path(), &runs);
    let members = |args: &[&str]| -> Vec<Vec<String>> {
        let mut all = vec!["history", "--db", "p.db", "--format", "json"];
        all.extend(args);
        let (doc, rc) = json_of(dir.path(), &all);
        assert_eq!(rc, 0);
        let mut series: Vec<Vec<String>> = doc["series"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| {
                s["runs"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|r| r["run_id"].as_str().unwrap().to_owned())
                    .collect()
            })
            .collect();
        series.sort();
        series
    };
    let s = |ids: &[&str]| ids.iter().map(|i| (*i).to_owned()).collect::<Vec<_>>();
    assert_eq!(
        members(&[]),
        vec![
            s(&["a0", "a1", "a2"]),
            s(&["other"]),
            s(&["seqs"]),
            s(&["warm"])
        ]
    );
    assert_eq!(
        members(&["--allow", "engine.max_num_seqs"]),
        vec![s(&["a0", "a1", "seqs", "a2"]), s(&["other"]), s(&["warm"])]
    );
    assert_eq!(
        members(&["--allow", "workload.spec_digest", "--allow", "experiment"]),
        vec![s(&["a0", "a1", "warm", "other", "a2"]), s(&["seqs"])]
    );
    // The check says which field keeps a named run out, with exit 5.
    let out = run_in(
        dir.path(),
        &[
            "history",
            "check",
            "a2",
            "--db",
            "p.db",
            "--baseline",
            "runs",
            "a0,seqs",
        ],
    );
    assert_eq!(out.status.code(), Some(5));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("max_num_seqs"), "{err}");
    // --series picks one series by its key (or a prefix of it).
    let (doc, _) = json_of(dir.path(), &["history", "--db", "p.db", "--format", "json"]);
    let key = doc["series"][0]["key"].as_str().unwrap().to_owned();
    let (one, _) = json_of(
        dir.path(),
        &[
            "history", "--db", "p.db", "--format", "json", "--series", &key,
        ],
    );
    assert_eq!(one["series"].as_array().unwrap().len(), 1);
    let out = run_in(dir.path(), &["history", "--db", "p.db", "--series", "nope"]);
    assert_eq!(out.status.code(), Some(5));
}

#[test]
fn a_check_against_one_earlier_run_agrees_with_compare() {
    let dir = tempfile::tempdir().unwrap();
    shifted_history(dir.path());
    for (base, cand) in [("r06", "r07"), ("r07", "r08")] {
        // p90 of 40 requests has too few tail samples: both refuse to gate it.
        for gate in [
            "client.e2e.p50=non-inferiority:0.10",
            "client.ttft.p50=significant:0.05",
            "client.ttft.p90=significant:0.05",
        ] {
            let name = gate.split('=').next().unwrap();
            let (ours, our_rc) = json_of(
                dir.path(),
                &[
                    "history",
                    "check",
                    cand,
                    "--db",
                    "p.db",
                    "--format",
                    "json",
                    "--baseline",
                    "runs",
                    base,
                    "--gate",
                    gate,
                ],
            );
            let (theirs, their_rc) = json_of(
                dir.path(),
                &[
                    "compare",
                    "--db",
                    "p.db",
                    "--baseline",
                    base,
                    "--candidate",
                    cand,
                    "--design",
                    "independent",
                    "--gate",
                    gate,
                    "--format",
                    "json",
                ],
            );
            assert_eq!(our_rc, their_rc, "{base} vs {cand}, {gate}");
            let compared = &theirs["payload"]["cases"]["c2_in64_out16"]["metrics"][name];
            let checked = metric(&ours, name);
            assert_eq!(
                checked["gate"]["status"], compared["gate"]["status"],
                "{gate}"
            );
            assert_eq!(
                checked["gate"]["reason"], compared["gate"]["reason"],
                "{gate}"
            );
            assert_eq!(checked["verdict"], compared["verdict"], "{gate}");
        }
    }
}

#[test]
fn the_cache_is_rebuilt_when_a_run_is_replaced() {
    let dir = tempfile::tempdir().unwrap();
    shifted_history(dir.path());
    let (before, _) = json_of(dir.path(), &["history", "--db", "p.db", "--format", "json"]);
    let (again, _) = json_of(dir.path(), &["history", "--db", "p.db", "--format", "json"]);
    assert_eq!(before, again, "the kept entries read back as built");
    // r03 replaced by a slower run under the same id.
    let slow = Made {
        factor: 3.0,
        ..Made::default()
    };
    std::fs::write(dir.path().join("r03.jsonl"), make_run("r03", 3, &slow)).unwrap();
    let out = run_in(
        dir.path(),
        &["ingest", "--db", "p.db", "--replace", "r03.jsonl"],
    );
    assert!(out.status.success());
    let (after, _) = json_of(dir.path(), &["history", "--db", "p.db", "--format", "json"]);
    let e2e = |doc: &Value| {
        doc["series"][0]["runs"][3]["figures"]["client.e2e.p50"]
            .as_f64()
            .unwrap()
    };
    assert!(
        e2e(&after) > 2.5 * e2e(&before),
        "{} then {}",
        e2e(&before),
        e2e(&after)
    );
}

#[test]
fn help_snapshots() {
    for (name, args) in [
        ("history_help", vec!["history", "--help"]),
        ("history_check_help", vec!["history", "check", "--help"]),
    ] {
        let out = super::common::bin().args(&args).output().unwrap();
        assert!(out.status.success());
        insta::with_settings!({snapshot_path => "../../snapshots", prepend_module_to_snapshot => false}, {
            insta::assert_snapshot!(name, String::from_utf8(out.stdout).unwrap());
        });
    }
}

#[test]
fn bad_flags_are_usage_errors() {
    let dir = tempfile::tempdir().unwrap();
    shifted_history(dir.path());
    for (args, says) in [
        (vec!["--baseline", "last:0"], "use last:N"),
        (vec!["--baseline", "since:yesterday"], "UTC date"),
        (
            vec!["--gate", "client.e2e.p50=maybe:0.1"],
            "gate rule must be one of",
        ),
        (vec!["--gate", "nothing=significant:0.1"], "names no metric"),
        (vec!["--confidence", "1.5"], "between 0 and 1"),
    ] {
        let mut all = vec!["history", "check", "r05", "--db", "p.db"];
        all.extend(&args);
        let out = run_in(dir.path(), &all);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(says), "{args:?}: {err}");
    }
    let out = run_in(dir.path(), &["history", "check", "nope", "--db", "p.db"]);
    assert_eq!(out.status.code(), Some(5));
}

#[test]
fn text_snapshots() {
    let dir = tempfile::tempdir().unwrap();
    shifted_history(dir.path());
    let text = |args: &[&str]| {
        let out = run_in(dir.path(), args);
        String::from_utf8(out.stdout).unwrap()
    };
    let listing = text(&["history", "--db", "p.db", "--metric", "client.e2e.*"]);
    let check = text(&[
        "history",
        "check",
        "r08",
        "--db",
        "p.db",
        "--gate",
        GATES[1],
        "--gate",
        GATES[3],
        "--case",
        "c2_in64_out16",
    ]);
    let csv = text(&[
        "history", "check", "r08", "--db", "p.db", "--gate", GATES[1], "--format", "csv",
    ]);
    insta::with_settings!({snapshot_path => "../../snapshots", prepend_module_to_snapshot => false}, {
        insta::assert_snapshot!("history_listing", listing);
        insta::assert_snapshot!("history_check", check);
        insta::assert_snapshot!("history_check_csv", csv);
    });
}

#[test]
fn series_runs_that_differ_where_the_first_is_unknown_are_set_aside() {
    let dir = tempfile::tempdir().unwrap();
    let blind = Made {
        no_server_info: true,
        ..Made::default()
    };
    let narrow = Made {
        max_num_seqs: 128,
        ..Made::default()
    };
    let runs = vec![
        ("u0".to_owned(), blind),
        ("wide".to_owned(), Made::default()),
        ("narrow".to_owned(), narrow),
    ];
    project(dir.path(), &runs);
    let (doc, _) = json_of(dir.path(), &["history", "--db", "p.db", "--format", "json"]);
    let series = doc["series"].as_array().unwrap();
    assert_eq!(series.len(), 1, "{doc}");
    assert_eq!(series[0]["comparability"], "unverified");
    let (check, rc) = json_of(
        dir.path(),
        &[
            "history", "check", "narrow", "--db", "p.db", "--format", "json", "--gate", GATES[1],
        ],
    );
    assert_eq!(rc, 4);
    let case = &check["cases"][0];
    assert_eq!(case["baseline_runs"], json!(["u0"]));
    assert_eq!(case["set_aside"][0]["run_id"], "wide");
    let why = case["set_aside"][0]["reason"].as_str().unwrap();
    assert!(
        why.starts_with("incompatible: ") && why.contains("max_num_seqs"),
        "{why}"
    );
    // Unverified comparability blocks the gate, as in compare.
    assert_eq!(
        metric(&check, "client.e2e.p50")["gate"]["reason"],
        "unverified"
    );
}

#[test]
fn attainment_is_judged_under_the_chosen_policy() {
    let dir = tempfile::tempdir().unwrap();
    shifted_history(dir.path());
    let (plain, _) = json_of(dir.path(), &["history", "--db", "p.db", "--format", "json"]);
    assert_eq!(
        plain["series"][0]["runs"][0]["figures"]["attainment"],
        Value::Null
    );
    // TTFT under 13 ms: most requests before the shift, none after it.
    let (judged, _) = json_of(
        dir.path(),
        &[
            "history",
            "--db",
            "p.db",
            "--format",
            "json",
            "--slo",
            "ttft:13",
            "--metric",
            "attainment",
        ],
    );
    let runs = judged["series"][0]["runs"].as_array().unwrap();
    let attainment = |i: usize| runs[i]["figures"]["attainment"].as_f64().unwrap();
    assert!(attainment(0) > 0.5 && attainment(11) == 0.0, "{runs:?}");
    let changes = judged["series"][0]["change_points"].as_array().unwrap();
    assert_eq!(changes.len(), 1, "{changes:?}");
    assert_eq!(
        (
            changes[0]["metric"].as_str(),
            changes[0]["first_run"].as_str()
        ),
        (Some("attainment"), Some("r08"))
    );
    assert_eq!(changes[0]["scale"], "difference");
    // A policy's entries are kept apart from the recorded policy's.
    let (again, _) = json_of(dir.path(), &["history", "--db", "p.db", "--format", "json"]);
    assert_eq!(again, plain);
}
