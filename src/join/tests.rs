#![allow(clippy::unwrap_used)]
//! Hand-computed placements and coverage (docs/server-join.md §15 and the edges
//! issue 4 lists), loader messages, and the shared conformance cases.

use serde_json::{json, Value};

use super::*;

const MS: i64 = 1_000_000;

/// `T(x)` of docs/server-join.md §15: 10 s plus x milliseconds.
fn t(x: i64) -> i64 {
    10_000_000_000 + x * MS
}

fn identity(host: &str, boot: Option<&str>, pid: i64, device: Option<&str>) -> Identity {
    Identity {
        host: host.into(),
        pid,
        process_start_ns: 1000,
        device_uuid: device.map(Into::into),
        gpu_instance_id: None,
        replica_id: None,
        rank: None,
        boot_id: boot.map(Into::into),
        group_id: None,
        world_size: None,
    }
}

fn sample(
    id: &Identity,
    at: i64,
    metric: &str,
    value: Option<i64>,
    state: &str,
    interval: i64,
) -> ServerSample {
    ServerSample {
        run_id: "run1".into(),
        identity: id.clone(),
        observed_at_ns: at,
        metric: metric.into(),
        value_bytes: value,
        state: state.into(),
        source: if metric == "process_rss_bytes" {
            "psutil"
        } else {
            "nvml-v2"
        }
        .into(),
        interval_ms: interval,
        detail: None,
        provenance: "observed".into(),
    }
}

fn artifact(host: &str, domain: &str) -> Value {
    json!({"schema_version": 2, "event_type": "infer.artifact", "event_id": "artifact",
           "artifact_kind": "inference_jsonl", "created_at_ns": 1,
           "context": {"run_id": "run1", "session_id": "s", "producer_id": "stormlog.infer.profile",
                       "source": "stormlog.infer.profile", "clock_domain": domain, "clock_kind": "wall",
                       "collection_mode": "active", "provenance": "observed", "host": host},
           "metadata": {"boot_id": null}})
}

fn alignment(
    event_id: &str,
    from: &str,
    offset: i64,
    uncertainty: i64,
    valid: (Option<i64>, Option<i64>),
) -> Value {
    json!({"schema_version": 2, "event_type": "infer.clock_alignment", "event_id": event_id,
           "context": {"run_id": "run1", "session_id": "s", "producer_id": "p", "source": "tool",
                       "clock_domain": "client/c1/unix_epoch_ns", "clock_kind": "wall",
                       "collection_mode": "imported", "provenance": "estimated"},
           "metadata": {}, "from_clock_domain": from, "to_clock_domain": "client/c1/unix_epoch_ns",
           "offset_ns": offset, "uncertainty_ns": uncertainty,
           "valid_from_ns": valid.0, "valid_to_ns": valid.1})
}

fn case(key: &str, window: Option<(i64, i64)>) -> CaseWindow {
    CaseWindow {
        case_key: key.into(),
        window,
    }
}

fn run(
    records: &[Value],
    cases: &[CaseWindow],
    samples: Vec<ServerSample>,
    offset: Option<i64>,
    uncertainty: Option<i64>,
) -> Result<JoinOutcome, JoinError> {
    join(JoinInputs {
        artifact_records: records,
        cases,
        samples,
        configured: true,
        direct_server: true,
        clock_offset_ns: offset,
        clock_uncertainty_ns: uncertainty,
    })
}

fn coverage_of(out: &JoinOutcome, key: &str) -> Value {
    out.cases[key].server_coverage.clone()
}

/// The docs/server-join.md §15.1 telemetry: 10 polls of RSS and device memory on `gpu-a`.
fn gpu_a_polls(polls: i64) -> Vec<ServerSample> {
    let id = identity("gpu-a", Some("b1"), 42, Some("GPU-a"));
    (0..polls)
        .flat_map(|i| {
            [
                sample(
                    &id,
                    t(100 * i),
                    "process_rss_bytes",
                    Some(2_000_000 + i),
                    "valid",
                    100,
                ),
                sample(
                    &id,
                    t(100 * i),
                    "device_memory_used_bytes",
                    Some(40_000_000 + i),
                    "valid",
                    100,
                ),
            ]
        })
        .collect()
}

#[test]
fn worked_example_placement_and_seven_cases() {
    let records = [
        artifact("client", "client/c1/unix_epoch_ns"),
        alignment(
            "align-1",
            "gpu-a/b1/unix_epoch_ns",
            3 * MS,
            MS,
            (Some(t(0)), Some(t(800))),
        ),
    ];
    let cases = [
        case("dark", Some((t(780), t(880)))),
        case("early", Some((t(-200), t(120)))),
        case("failed", None),
        case("gap", Some((t(220), t(280)))),
        case("steady", Some((t(150), t(450)))),
        case("tail", Some((t(650), t(950)))),
        case("tiny", Some((t(210), t(210) + 1_500_000))),
    ];
    let out = run(&records, &cases, gpu_a_polls(10), None, None).unwrap();
    let expected = json!({"attribution": "case_window_observation_only",
     "case_coverage": {"empty": 4, "observed": 1, "partial": 2},
     "clock_alignment_evidence": "artifact_record",
     "clock_alignments": [{"aligned_samples": 16, "event_id": "align-1",
       "from_clock_domain": "gpu-a/b1/unix_epoch_ns", "offset_ns": 3000000,
       "source": "artifact", "to_clock_domain": "client/c1/unix_epoch_ns",
       "uncertainty_ns": 1000000, "valid_from_ns": 10000000000_i64, "valid_to_ns": 10800000000_i64}],
     "clock_offset_ns": 3000000,
     "clock_uncertainty_ns": 1000000,
     "identity": {"boot_id": "b1", "device_uuid": "GPU-a", "gpu_instance_id": null,
       "group_id": null, "host": "gpu-a", "pid": 42, "process_start_ns": 1000,
       "rank": null, "replica_id": null, "world_size": null},
     "invalidation": null,
     "route_evidence": "operator_declared_direct",
     "status": "joined",
     "unaligned_samples": {"ambiguous": 0, "uncovered": 4}});
    assert_eq!(out.server_join, expected);
    let steady = &out.cases["steady"];
    assert_eq!(
        steady.server_coverage,
        json!({"counted_window_ns": [10151000000_i64, 10449000000_i64], "reason": null, "status": "observed"})
    );
    assert_eq!(
        steady.server_observations,
        json!({
          "device_memory_used_bytes": {"counter_owner": "gpu_device", "intervals_ms": [100], "invalid_samples": 0,
            "maximum_recorded_bytes": 40000004, "missing_samples": 0, "observation_scope": "gpu_device",
            "provenance": ["observed"], "sources": ["nvml-v2"], "stale_samples": 0, "valid_samples": 3},
          "process_rss_bytes": {"counter_owner": "operating_system_process", "intervals_ms": [100], "invalid_samples": 0,
            "maximum_recorded_bytes": 2000004, "missing_samples": 0, "observation_scope": "server_process",
            "provenance": ["observed"], "sources": ["psutil"], "stale_samples": 0, "valid_samples": 3}})
    );
    assert_eq!(
        coverage_of(&out, "early"),
        json!({"counted_window_ns": [9801000000_i64, 10119000000_i64], "reason": "collector_started_after_window_start", "status": "partial"})
    );
    assert_eq!(
        out.cases["early"].server_observations["process_rss_bytes"]["valid_samples"],
        json!(2)
    );
    assert_eq!(
        out.cases["early"].server_observations["process_rss_bytes"]["maximum_recorded_bytes"],
        json!(2000001)
    );
    assert_eq!(
        coverage_of(&out, "tail"),
        json!({"counted_window_ns": [10651000000_i64, 10949000000_i64], "reason": "collector_stopped_before_window_end", "status": "partial"})
    );
    assert_eq!(
        coverage_of(&out, "dark"),
        json!({"counted_window_ns": [10781000000_i64, 10879000000_i64], "reason": "clock_alignment_uncovered", "status": "empty"})
    );
    assert_eq!(out.cases["dark"].server_observations, json!({}));
    assert_eq!(
        coverage_of(&out, "gap"),
        json!({"counted_window_ns": [10221000000_i64, 10279000000_i64], "reason": "no_collector_coverage", "status": "empty"})
    );
    // A window shorter than twice the uncertainty leaves nothing countable.
    assert_eq!(
        coverage_of(&out, "tiny"),
        json!({"counted_window_ns": null, "reason": "window_shorter_than_uncertainty", "status": "empty"})
    );
    assert_eq!(
        coverage_of(&out, "failed"),
        json!({"reason": "no_request_window", "status": "empty"})
    );
    assert_eq!(
        out.case_text_lines["tail"],
        vec![
            "  server telemetry: partial (collector_stopped_before_window_end)",
            "  device_memory_used_bytes (gpu_device): max recorded 40000007 bytes, 1 samples",
            "  process_rss_bytes (server_process): max recorded 2000007 bytes, 1 samples",
        ]
    );
    assert_eq!(
        out.case_text_lines["dark"],
        vec!["  server telemetry: none (clock_alignment_uncovered)"]
    );
    assert_eq!(
        out.run_text_lines,
        vec![
            "Server telemetry: joined to case windows (declared direct route, artifact_record clock evidence)",
            "Server coverage: 1 observed, 2 partial, 4 empty",
        ]
    );
}

#[test]
fn pid_reused_mid_run_invalidates_later_windows() {
    let records = [
        artifact("client", "client/c1/unix_epoch_ns"),
        alignment(
            "align-1",
            "gpu-a/b1/unix_epoch_ns",
            3 * MS,
            MS,
            (None, None),
        ),
    ];
    let id = identity("gpu-a", Some("b1"), 42, Some("GPU-a"));
    let detail = "server process ended or its PID was reused";
    let mut samples = Vec::new();
    for i in 0..8 {
        for metric in ["process_rss_bytes", "device_memory_used_bytes"] {
            let mut s = if i < 7 {
                sample(&id, t(100 * i), metric, Some(1 + i), "valid", 100)
            } else {
                sample(&id, t(100 * i), metric, None, "invalid", 100)
            };
            if i == 7 {
                s.detail = Some(detail.into());
            }
            samples.push(s);
        }
    }
    let cases = [
        case("A", Some((t(150), t(400)))),
        case("B", Some((t(500), t(700)))),
    ];
    let out = run(&records, &cases, samples, None, None).unwrap();
    assert_eq!(
        out.server_join["invalidation"],
        json!({"observed_at_ns": 10700000000_i64, "detail": detail, "last_confirmed_at_ns": 10600000000_i64})
    );
    assert_eq!(
        out.server_join["clock_alignments"][0]["aligned_samples"],
        json!(16)
    );
    assert_eq!(
        coverage_of(&out, "A"),
        json!({"counted_window_ns": [10151000000_i64, 10399000000_i64], "reason": null, "status": "observed"})
    );
    assert_eq!(
        out.cases["A"].server_observations["process_rss_bytes"]["valid_samples"],
        json!(2)
    );
    // trusted until T(600) + 3 ms - 1 ms = 10_602_000_000 < end of B.
    assert_eq!(
        coverage_of(&out, "B"),
        json!({"counted_window_ns": [10501000000_i64, 10699000000_i64], "reason": "identity_invalidated", "status": "empty"})
    );
    assert_eq!(
        out.server_join["case_coverage"],
        json!({"observed": 1, "partial": 0, "empty": 1})
    );
    assert_eq!(
        out.run_text_lines[2],
        "Server identity ended (server process ended or its PID was reused); case windows after the last confirmed poll are not joined"
    );
}

#[test]
fn disagreeing_alignments_leave_a_sample_ambiguous() {
    let records = [
        artifact("client", "client/c1/unix_epoch_ns"),
        alignment(
            "A",
            "gpu-a/b1/unix_epoch_ns",
            3 * MS,
            MS,
            (None, Some(t(500))),
        ),
        alignment(
            "B",
            "gpu-a/b1/unix_epoch_ns",
            3 * MS,
            50 * MS,
            (Some(t(500)), None),
        ),
        alignment(
            "C",
            "gpu-a/b1/unix_epoch_ns",
            4 * MS,
            MS,
            (Some(t(700)), Some(t(800))),
        ),
    ];
    let id = identity("gpu-a", Some("b1"), 42, None);
    let samples = (0..10)
        .map(|i| sample(&id, t(100 * i), "process_rss_bytes", Some(i), "valid", 100))
        .collect();
    let cases = [
        case("Amb", Some((t(700), t(760)))),
        case("M", Some((t(400), t(620)))),
    ];
    let out = run(&records, &cases, samples, None, None).unwrap();
    let join = &out.server_join;
    let used: Vec<(Value, Value)> = join["clock_alignments"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| (a["event_id"].clone(), a["aligned_samples"].clone()))
        .collect();
    assert_eq!(used, vec![(json!("A"), json!(5)), (json!("B"), json!(4))]);
    assert_eq!(join["clock_offset_ns"], json!(3000000));
    assert_eq!(join["clock_uncertainty_ns"], json!(50000000));
    assert_eq!(
        join["unaligned_samples"],
        json!({"uncovered": 0, "ambiguous": 1})
    );
    assert_eq!(
        coverage_of(&out, "M"),
        json!({"counted_window_ns": [10401000000_i64, 10619000000_i64], "reason": null, "status": "observed"})
    );
    assert_eq!(
        out.cases["M"].server_observations["process_rss_bytes"]["valid_samples"],
        json!(2)
    );
    assert_eq!(
        coverage_of(&out, "Amb"),
        json!({"counted_window_ns": [10701000000_i64, 10759000000_i64], "reason": "clock_alignment_ambiguous", "status": "empty"})
    );
}

#[test]
fn a_member_with_only_ambiguous_samples_is_not_joined() {
    let records = [
        artifact("client", "client/c1/unix_epoch_ns"),
        alignment("A", "gpu-a/b1/unix_epoch_ns", 3 * MS, MS, (None, None)),
        alignment("B", "gpu-a/b1/unix_epoch_ns", 5 * MS, MS, (None, None)),
    ];
    let id = identity("gpu-a", Some("b1"), 42, None);
    let samples = vec![sample(
        &id,
        t(0),
        "process_rss_bytes",
        Some(1),
        "valid",
        100,
    )];
    let out = run(
        &records,
        &[case("c", Some((t(0), t(10))))],
        samples,
        None,
        None,
    )
    .unwrap();
    assert_eq!(
        out.server_join,
        json!({"status": "unjoined", "reason": "clock_alignment_ambiguous"})
    );
    assert_eq!(
        out.cases["c"].server_coverage,
        json!({"status": "not_joined"})
    );
    assert_eq!(
        out.run_text_lines,
        vec!["Server telemetry: unjoined (clock_alignment_ambiguous)"]
    );
    assert!(out.case_text_lines["c"].is_empty());
}

#[test]
fn legacy_execution_import_bracket() {
    let mut record = alignment("legacy", "gpu-a/b1/unix_epoch_ns", 3 * MS, 0, (None, None));
    record["context"]["source"] = json!("stormlog.infer.import_execution");
    record["metadata"] = json!({"gap_ns": 5});
    let records = [artifact("client", "client/c1/unix_epoch_ns"), record];
    let id = identity("gpu-a", Some("b1"), 42, None);
    let samples = vec![sample(
        &id,
        t(0),
        "process_rss_bytes",
        Some(1),
        "valid",
        100,
    )];
    // Bounds [3_000_000, 3_000_005], half = 3: placed at t + 3_000_002 with
    // uncertainty 3, so the counted window shrinks by 3 on each side.
    let window = (t(0) + 2_000_000, t(0) + 4_000_000);
    let out = run(&records, &[case("c", Some(window))], samples, None, None).unwrap();
    let entry = &out.server_join["clock_alignments"][0];
    assert_eq!(entry["offset_ns"], json!(3000000));
    assert_eq!(entry["uncertainty_ns"], json!(0));
    assert_eq!(out.server_join["clock_uncertainty_ns"], json!(3));
    assert_eq!(
        coverage_of(&out, "c")["counted_window_ns"],
        json!([t(0) + 2_000_003, t(0) + 3_999_997])
    );
}

#[test]
fn operator_flags_for_an_unqualified_shared_name() {
    let records = [artifact("client", "client/unix_epoch_ns")];
    let id = identity("client", None, 7, None);
    let samples: Vec<ServerSample> = (0..3)
        .map(|i| sample(&id, t(100 * i), "process_rss_bytes", Some(i), "valid", 100))
        .collect();
    let cases = [case("c", Some((t(0), t(200))))];
    let out = run(&records, &cases, samples.clone(), Some(0), Some(250_000)).unwrap();
    assert_eq!(
        out.server_join["clock_alignment_evidence"],
        json!("operator_supplied")
    );
    assert_eq!(
        out.server_join["clock_alignments"],
        json!([{"source": "operator", "event_id": "cli:clock-offset",
                "from_clock_domain": "client/unix_epoch_ns#server", "to_clock_domain": "client/unix_epoch_ns",
                "offset_ns": 0, "uncertainty_ns": 250000, "valid_from_ns": null, "valid_to_ns": null,
                "aligned_samples": 3}])
    );
    let without = run(&records, &cases, samples.clone(), None, None).unwrap();
    assert_eq!(
        without.server_join["reason"],
        json!("clock_domain_unverified")
    );
    let only_u = run(&records, &cases, samples.clone(), None, Some(5)).unwrap();
    assert_eq!(only_u.server_join["reason"], json!("clock_offset_required"));
    let only_o = run(&records, &cases, samples, Some(5), None).unwrap();
    assert_eq!(
        only_o.server_join["reason"],
        json!("clock_uncertainty_required")
    );
}

#[test]
fn negative_uncertainty_is_an_error_only_when_applied() {
    let records = [artifact("vm", "vm/b/unix_epoch_ns")];
    let id = identity("vm", Some("b"), 7, None);
    let samples = vec![sample(
        &id,
        t(0),
        "process_rss_bytes",
        Some(1),
        "valid",
        100,
    )];
    let err = run(&records, &[], samples.clone(), None, Some(-1)).unwrap_err();
    assert_eq!(err, JoinError::NegativeUncertainty);
    assert_eq!(
        err.to_string(),
        "uncertainty_ns must be a non-negative integer"
    );
    assert_eq!(err.exit(), crate::exit::Exit::Unexpected);
    // Without a declared route the clocks are never built.
    let out = join(JoinInputs {
        artifact_records: &records,
        cases: &[],
        samples,
        configured: true,
        direct_server: false,
        clock_offset_ns: None,
        clock_uncertainty_ns: Some(-1),
    })
    .unwrap();
    assert_eq!(out.server_join["reason"], json!("route_not_declared"));
}

#[test]
fn same_host_uncertainty_and_nonzero_offset() {
    let records = [artifact("vm", "vm/b/unix_epoch_ns")];
    let id = identity("vm", Some("b"), 7, None);
    let samples: Vec<ServerSample> = (0..5)
        .map(|i| sample(&id, t(100 * i), "process_rss_bytes", Some(i), "valid", 100))
        .collect();
    let cases = [case("c", Some((t(50), t(350))))];
    let out = run(&records, &cases, samples.clone(), None, Some(MS)).unwrap();
    assert_eq!(
        out.server_join["clock_alignments"][0]["uncertainty_ns"],
        json!(MS)
    );
    assert_eq!(
        coverage_of(&out, "c")["counted_window_ns"],
        json!([t(51), t(349)])
    );
    let shifted = run(&records, &cases, samples, Some(5), Some(0)).unwrap();
    assert_eq!(
        shifted.server_join["reason"],
        json!("clock_offset_on_shared_clock")
    );
}

fn member(rank: i64, world: i64, host: &str, boot: &str, pid: i64, device: &str) -> Identity {
    let mut id = identity(host, Some(boot), pid, Some(device));
    id.rank = Some(rank);
    id.group_id = Some("tp".into());
    id.world_size = Some(world);
    id
}

#[test]
fn group_of_two_with_mixed_evidence() {
    let records = [
        artifact("client", "client/c1/unix_epoch_ns"),
        alignment(
            "b-align",
            "gpu-b/b2/unix_epoch_ns",
            -2 * MS,
            MS / 2,
            (None, None),
        ),
    ];
    let r0 = member(0, 2, "client", "c1", 10, "GPU-0");
    let r1 = member(1, 2, "gpu-b", "b2", 11, "GPU-1");
    let mut samples: Vec<ServerSample> = (0..6)
        .map(|i| sample(&r1, t(100 * i), "process_rss_bytes", Some(i), "valid", 50))
        .collect();
    samples.extend(
        (0..10).map(|i| sample(&r0, t(100 * i), "process_rss_bytes", Some(i), "valid", 100)),
    );
    let cases = [
        case("A", Some((t(150), t(400)))),
        case("B", Some((t(850), t(950)))),
    ];
    let out = run(&records, &cases, samples, None, None).unwrap();
    let join = &out.server_join;
    assert_eq!(join["clock_alignment_evidence"], json!("mixed"));
    assert_eq!(join["clock_offset_ns"], Value::Null);
    assert_eq!(join["clock_uncertainty_ns"], json!(500000));
    let entries = join["clock_alignments"].as_array().unwrap();
    assert_eq!(entries[0]["source"], json!("same_host"));
    assert_eq!(entries[0]["aligned_samples"], json!(10));
    assert_eq!(entries[1]["event_id"], json!("b-align"));
    assert_eq!(entries[1]["aligned_samples"], json!(6));
    let ranks: Vec<Value> = join["group"]["members"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["rank"].clone())
        .collect();
    assert_eq!(ranks, vec![json!(0), json!(1)]);
    assert!(join.get("identity").is_none());
    let a = &out.cases["A"];
    assert_eq!(
        a.server_coverage,
        json!({"status": "observed", "reason": null})
    );
    let members = a.server_members.as_ref().unwrap();
    assert_eq!(
        members[0]["coverage"]["counted_window_ns"],
        json!([10150000000_i64, 10400000000_i64])
    );
    assert_eq!(
        members[1]["coverage"]["counted_window_ns"],
        json!([10150500000_i64, 10399500000_i64])
    );
    let b = &out.cases["B"];
    assert_eq!(
        b.server_coverage,
        json!({"status": "partial", "reason": "some_members_not_fully_observed"})
    );
    assert_eq!(
        b.server_members.as_ref().unwrap()[1]["coverage"]["reason"],
        json!("no_collector_coverage")
    );
    assert!(out
        .run_text_lines
        .contains(&"Server group: tp (2 members)".to_owned()));
    assert!(out.case_text_lines["B"]
        .contains(&"  rank 1 (GPU-1): none (no_collector_coverage)".to_owned()));
}

#[test]
fn membership_reasons() {
    let records = [artifact("vm", "vm/b/unix_epoch_ns")];
    let reason = |ids: Vec<Identity>| {
        let samples = ids
            .iter()
            .map(|id| sample(id, t(0), "process_rss_bytes", Some(1), "valid", 100))
            .collect();
        run(&records, &[], samples, None, None).unwrap().server_join["reason"].clone()
    };
    let a = member(0, 2, "vm", "b", 1, "GPU-0");
    let b = member(1, 2, "vm", "b", 2, "GPU-1");
    // Rank 1 never reported: the group is incomplete.
    assert_eq!(reason(vec![a.clone()]), json!("group_member_missing"));
    // Rank 1 under two PIDs: a restarted worker.
    let mut b2 = b.clone();
    b2.pid = 3;
    assert_eq!(
        reason(vec![a.clone(), b.clone(), b2]),
        json!("group_member_changed")
    );
    let mut other = b.clone();
    other.group_id = Some("other".into());
    assert_eq!(
        reason(vec![a.clone(), other]),
        json!("multiple_server_groups")
    );
    let mut wide = b.clone();
    wide.world_size = Some(3);
    assert_eq!(
        reason(vec![a.clone(), wide]),
        json!("inconsistent_group_size")
    );
    let plain = identity("vm", Some("b"), 9, None);
    assert_eq!(
        reason(vec![a.clone(), plain.clone()]),
        json!("undeclared_server_identity")
    );
    let mut plain2 = plain.clone();
    plain2.pid = 10;
    assert_eq!(
        reason(vec![plain, plain2]),
        json!("multiple_server_identities")
    );
    assert_eq!(reason(vec![a, b]), Value::Null);
}

#[test]
fn run_id_and_not_configured() {
    let records = [artifact("vm", "vm/b/unix_epoch_ns")];
    let id = identity("vm", Some("b"), 7, None);
    let mut s = sample(&id, t(0), "process_rss_bytes", Some(1), "valid", 100);
    s.run_id = "other".into();
    let out = run(
        &records,
        &[case("c", None)],
        vec![s.clone(), s.clone()],
        None,
        None,
    )
    .unwrap();
    assert_eq!(
        out.server_join,
        json!({"status": "unjoined", "reason": "run_id_mismatch", "artifact_run_id": "run1", "telemetry_run_ids": ["other"]})
    );
    // The duplicate is dropped before counting targets.
    assert_eq!(out.server_targets[0]["sample_states"]["valid"], json!(1));
    let none = join(JoinInputs {
        artifact_records: &records,
        cases: &[case("c", None)],
        samples: Vec::new(),
        configured: false,
        direct_server: true,
        clock_offset_ns: None,
        clock_uncertainty_ns: None,
    })
    .unwrap();
    assert_eq!(none.server_join, json!({"status": "not_configured"}));
    assert_eq!(none.server_targets, json!([]));
    assert!(none.run_text_lines.is_empty());
    assert_eq!(
        none.cases["c"],
        CaseMemory {
            server_observations: json!({}),
            server_coverage: json!({"status": "not_joined"}),
            server_members: None
        }
    );
}

#[test]
fn foreign_and_conflicting_alignments() {
    let id = identity("gpu-a", Some("b1"), 42, None);
    let samples = vec![sample(
        &id,
        t(0),
        "process_rss_bytes",
        Some(1),
        "valid",
        100,
    )];
    let mut foreign = alignment("copied", "gpu-a/b1/unix_epoch_ns", 0, 0, (None, None));
    foreign["context"]["run_id"] = json!("run0");
    let records = [
        artifact("client", "client/c1/unix_epoch_ns"),
        foreign.clone(),
    ];
    let out = run(&records, &[], samples.clone(), None, None).unwrap();
    assert_eq!(
        out.server_join["reason"],
        json!("clock_alignment_from_another_run")
    );
    let records = [
        artifact("client", "client/c1/unix_epoch_ns"),
        foreign,
        alignment("mine", "gpu-a/b1/unix_epoch_ns", 0, 0, (None, None)),
    ];
    let out = run(&records, &[], samples.clone(), None, None).unwrap();
    assert_eq!(
        out.server_join["ignored_clock_alignments"],
        json!(["copied"])
    );
    let out = run(&records, &[], samples.clone(), Some(1), Some(1)).unwrap();
    assert_eq!(
        out.server_join["overridden_clock_alignments"],
        json!(["copied", "mine"])
    );
    let records = [
        artifact("client", "client/c1/unix_epoch_ns"),
        alignment("same", "gpu-a/b1/unix_epoch_ns", 0, 0, (None, None)),
        alignment("same", "gpu-a/b1/unix_epoch_ns", 1, 0, (None, None)),
    ];
    let err = run(&records, &[], samples.clone(), None, None).unwrap_err();
    assert_eq!(err.to_string(), "conflicting event identity");
    let mut bad = alignment("x", "gpu-a/b1/unix_epoch_ns", 0, 0, (Some(5), Some(3)));
    let records = [artifact("client", "client/c1/unix_epoch_ns"), bad.clone()];
    let err = run(&records, &[], samples.clone(), None, None).unwrap_err();
    assert_eq!(err.to_string(), "end_ns must be >= start_ns");
    bad["extra"] = json!(1);
    let records = [artifact("client", "client/c1/unix_epoch_ns"), bad];
    let err = run(&records, &[], samples, None, None).unwrap_err();
    assert_eq!(
        err.to_string(),
        "invalid infer.clock_alignment record: ClockAlignmentEvent.__init__() got an unexpected keyword argument 'extra'"
    );
}

#[test]
fn a_file_passed_twice_counts_once() {
    let records = [artifact("vm", "vm/b/unix_epoch_ns")];
    let id = identity("vm", Some("b"), 7, None);
    let once: Vec<ServerSample> = (0..4)
        .map(|i| sample(&id, t(100 * i), "process_rss_bytes", Some(i), "valid", 100))
        .collect();
    let mut twice = once.clone();
    twice.extend(once.iter().cloned());
    // Same instant and value but another state: not a duplicate.
    let mut missing = once[0].clone();
    missing.state = "missing".into();
    missing.value_bytes = None;
    twice.push(missing);
    let out = run(
        &records,
        &[case("c", Some((t(0), t(300))))],
        twice,
        None,
        None,
    )
    .unwrap();
    assert_eq!(
        out.server_join["clock_alignments"][0]["aligned_samples"],
        json!(5)
    );
    assert_eq!(
        out.server_targets[0]["sample_states"],
        json!({"valid": 4, "missing": 1, "stale": 0, "invalid": 0})
    );
    let rss = &out.cases["c"].server_observations["process_rss_bytes"];
    assert_eq!(rss["valid_samples"], json!(4));
    assert_eq!(rss["missing_samples"], json!(1));
}

#[test]
fn resolver_keeps_the_smaller_event_id_of_one_entity() {
    let id = identity("gpu-a", Some("b1"), 42, None);
    let samples = vec![sample(
        &id,
        t(0),
        "process_rss_bytes",
        Some(1),
        "valid",
        100,
    )];
    let records = [
        artifact("client", "client/c1/unix_epoch_ns"),
        alignment("z", "gpu-a/b1/unix_epoch_ns", 0, 0, (None, None)),
        alignment("a", "gpu-a/b1/unix_epoch_ns", 0, 0, (None, None)),
    ];
    let out = run(&records, &[], samples, None, None).unwrap();
    assert_eq!(
        out.server_join["clock_alignments"][0]["event_id"],
        json!("a")
    );
    assert_eq!(out.server_join["unaligned_samples"]["ambiguous"], json!(0));
}

fn line(overrides: Value) -> String {
    let mut record = json!({"clock_domain": "vm/b/unix_epoch_ns", "counter_owner": "operating_system_process",
        "detail": null, "event_type": "infer.telemetry_sample",
        "identity": {"boot_id": "b", "device_uuid": null, "gpu_instance_id": null, "group_id": null,
                     "host": "vm", "pid": 5, "process_start_ns": 9, "rank": null, "replica_id": null, "world_size": null},
        "interval_ms": 50, "metric": "process_rss_bytes", "observed_at_ns": 100, "provenance": "observed",
        "run_id": "r1", "schema_version": 1, "scope": "server_process", "source": "psutil", "state": "valid",
        "value_bytes": 10});
    for (k, v) in overrides.as_object().unwrap() {
        if let (true, Some(fields)) = (k == "identity", v.as_object()) {
            for (ik, iv) in fields {
                if iv == &json!("<del>") {
                    record["identity"].as_object_mut().unwrap().remove(ik);
                } else {
                    record["identity"][ik] = iv.clone();
                }
            }
        } else if v == &json!("<del>") {
            record.as_object_mut().unwrap().remove(k);
        } else {
            record[k] = v.clone();
        }
    }
    record.to_string()
}

fn load_error(overrides: Value) -> String {
    let text = format!("{}\n", line(overrides));
    load_telemetry_text(&text).unwrap_err()
}

#[test]
fn loader_messages_in_check_order() {
    let cases: Vec<(Value, &str)> = vec![
        (json!({"schema_version": true}), "unsupported telemetry record"),
        (json!({"schema_version": 1.0}), "unsupported telemetry record"),
        (json!({"identity": "<del>"}), "'identity'"),
        (json!({"identity": null}), "stormlog.infer.telemetry.ServerIdentity() argument after ** must be a mapping, not NoneType"),
        (json!({"identity": {"x": 1}}), "ServerIdentity.__init__() got an unexpected keyword argument 'x'"),
        (json!({"identity": {"pid": "<del>", "host": "<del>"}}), "ServerIdentity.__init__() missing 2 required positional arguments: 'host' and 'pid'"),
        (json!({"identity": {"pid": 0}}), "host, positive pid, and process_start_ns are required"),
        (json!({"identity": {"boot_id": "a/b"}}), "host and boot_id cannot contain '/'"),
        (json!({"identity": {"boot_id": 5}}), "argument of type 'int' is not iterable"),
        (json!({"identity": {"boot_id": ""}}), "optional server identity fields must be non-empty strings"),
        (json!({"identity": {"gpu_instance_id": "MIG-1"}}), "gpu_instance_id requires device_uuid"),
        (json!({"identity": {"rank": -1}}), "rank must be non-negative"),
        (json!({"identity": {"world_size": 2}}), "world_size requires group_id"),
        (json!({"identity": {"group_id": "g"}}), "group members need a positive world_size"),
        (json!({"identity": {"group_id": "g", "world_size": 2, "rank": 2}}), "group members need a rank below world_size"),
        (json!({"run_id": "<del>"}), "'run_id'"),
        (json!({"detail": "<del>"}), "'detail'"),
        (json!({"metric": "gpu_bytes"}), "run_id, supported metric, and source are required"),
        (json!({"interval_ms": 0}), "observed_at_ns and interval_ms must be positive"),
        (json!({"observed_at_ns": 1.5}), "observed_at_ns and interval_ms must be positive"),
        (json!({"state": ["valid"]}), "unhashable type: 'list'"),
        (json!({"state": "gone"}), "unsupported telemetry state"),
        (json!({"provenance": "guess"}), "unsupported telemetry provenance"),
        (json!({"detail": 3}), "detail must be a string or null"),
        (json!({"value_bytes": -1}), "valid samples require non-negative value_bytes"),
        (json!({"state": "missing"}), "unavailable samples must have null value_bytes"),
        (json!({"metric": "device_memory_used_bytes"}), "GPU metrics require device_uuid"),
        (json!({"scope": "gpu_device"}), "telemetry scope does not match metric"),
        (json!({"clock_domain": "vm/unix_epoch_ns"}), "telemetry clock domain does not match host"),
        (json!({"counter_owner": "allocator"}), "telemetry counter owner does not match metric"),
    ];
    for (overrides, message) in cases {
        assert_eq!(
            load_error(overrides.clone()),
            format!("invalid telemetry line 1: {message}"),
            "{overrides}"
        );
    }
    assert_eq!(
        load_telemetry_text("\n  \n").unwrap_err(),
        "telemetry artifact has no samples"
    );
    assert_eq!(
        load_telemetry_text("[1]\n").unwrap_err(),
        "invalid telemetry line 1: record must be an object"
    );
    // Blank lines and \r line ends still count towards the line number.
    let text = format!(
        "{}\r\n\n{}\r",
        line(json!({})),
        line(json!({"state": "gone"}))
    );
    assert_eq!(
        load_telemetry_text(&text).unwrap_err(),
        "invalid telemetry line 3: unsupported telemetry state"
    );
    let good = load_telemetry_text(&format!("{}\n{}", line(json!({})), line(json!({})))).unwrap();
    assert_eq!(good.len(), 2);
    let mut back = String::new();
    good[0].write_record(&good[0].head(), None, &mut back);
    assert_eq!(
        serde_json::from_str::<Value>(&back).unwrap(),
        serde_json::from_str::<Value>(&line(json!({}))).unwrap()
    );
}

/// A sample the collector writes, loaded and written back the way export
/// writes it, gives the same bytes: one writer (`model::telemetry`) for
/// both. The odd values: escapes and non-ASCII in every string of the
/// identity, the run ID and the detail; integers past 2^53 and at
/// `i64::MAX`; null values, an empty detail; and, on a line with keys the
/// sample does not keep, NaN, ±Infinity and an integer past 64 bits.
#[test]
fn collector_and_export_write_the_same_bytes() {
    use crate::collector::output::{Metric, Poll, RecordContext, Sample, SampleState};
    let id = Identity {
        host: "h\u{f4}st\u{1}\"".into(),
        pid: 4_194_304,
        process_start_ns: i64::MAX,
        device_uuid: Some("GPU-\u{1f600}".into()),
        gpu_instance_id: Some("MIG-\\\u{7f}".into()),
        replica_id: Some("r\u{2028}".into()),
        rank: Some(0),
        boot_id: Some("b\t".into()),
        group_id: Some("g".into()),
        world_size: Some(1),
    };
    id.validate().unwrap();
    let sample = |metric, value_bytes, state, detail: Option<&str>| Sample {
        metric,
        value_bytes,
        state,
        detail: detail.map(Into::into),
    };
    let poll = Poll {
        observed_at_ns: i64::MAX,
        samples: vec![
            sample(
                Metric::ProcessRss,
                Some(i64::MAX as u64),
                SampleState::Valid,
                None,
            ),
            sample(
                Metric::DeviceMemoryUsed,
                Some(9_007_199_254_740_993),
                SampleState::Valid,
                Some("\u{fc}\u{7f}\n"),
            ),
            sample(
                Metric::InstanceMemoryReserved,
                None,
                SampleState::Missing,
                Some("no reading: \u{221e} NaN"),
            ),
            sample(
                Metric::DeviceMemoryReserved,
                None,
                SampleState::Invalid,
                Some(""),
            ),
        ],
    };
    let text = RecordContext::new("run-\u{e9}\r", id, 1).render_poll(&poll);
    let samples = load_telemetry_with_extras(&text).unwrap();
    assert_eq!(samples.len(), 4);
    let mut back = String::new();
    for (s, extra) in &samples {
        assert_eq!(*extra, None);
        s.write_record(&s.head(), None, &mut back);
    }
    assert_eq!(back, text);

    // Keys beside the fifteen, before the first and after the last.
    let first = text.lines().next().unwrap();
    let odd = format!(
        "{{\"aaa\": NaN, {}, \"zzz\": [Infinity, -Infinity, 123456789012345678901234567890, \"\\u00e9\"]}}\n",
        &first[1..first.len() - 1]
    );
    let loaded = load_telemetry_with_extras(&odd).unwrap();
    let (s, extra) = &loaded[0];
    assert_eq!(extra.as_ref().map(serde_json::Map::len), Some(2));
    let mut back = String::new();
    s.write_record(&s.head(), extra.as_ref(), &mut back);
    assert_eq!(back, odd);
}

/// Every telemetry file of the conformance corpus (written by the
/// reference's collect-server) comes back byte for byte through the writer.
#[test]
fn reference_telemetry_files_come_back_byte_for_byte() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/conformance");
    let mut checked = 0;
    for suite in ["cases", "bad"] {
        for case in std::fs::read_dir(root.join(suite)).unwrap() {
            for file in std::fs::read_dir(case.unwrap().path()).unwrap() {
                let path = file.unwrap().path();
                let name = path.file_name().unwrap().to_string_lossy().into_owned();
                if !(name.starts_with("telemetry") && name.ends_with(".jsonl")) {
                    continue;
                }
                let text = std::fs::read_to_string(&path).unwrap();
                // Files the loader refuses (the truncated one) are not records.
                let Ok(samples) = load_telemetry_with_extras(&text) else {
                    continue;
                };
                let mut back = String::new();
                for (s, extra) in &samples {
                    s.write_record(&s.head(), extra.as_ref(), &mut back);
                }
                assert_eq!(back, text, "{}", path.display());
                checked += 1;
            }
        }
    }
    assert!(checked >= 10, "{checked} telemetry files");
}

/// CPU time of this thread in ns (10 ms ticks), from /proc: the machine is
/// shared, so wall time overstates the join's cost.
fn thread_cpu_ns() -> i64 {
    let stat = std::fs::read_to_string("/proc/thread-self/stat").unwrap_or_default();
    let after_name = stat.rsplit(')').next().unwrap_or("");
    let fields: Vec<i64> = after_name
        .split_whitespace()
        .map(|f| f.parse().unwrap_or(0))
        .collect();
    // utime and stime are fields 14 and 15 of the line, 12 and 13 after the name.
    (fields.get(11).unwrap_or(&0) + fields.get(12).unwrap_or(&0)) * 10_000_000
}

/// A million samples over a 300,000-request run in 100 cases; run with
/// `cargo test --release --lib join::tests::join_scales -- --ignored --nocapture`.
#[test]
#[ignore]
fn join_scales() {
    let records = [artifact("vm", "vm/b/unix_epoch_ns")];
    let id = identity("vm", Some("b"), 7, Some("GPU-0"));
    let start = t(0);
    let metrics = [
        "process_rss_bytes",
        "device_memory_used_bytes",
        "device_memory_reserved_bytes",
    ];
    let samples: Vec<ServerSample> = (0..1_000_000i64)
        .map(|i| {
            sample(
                &id,
                start + (i / 3) * 10 * MS,
                metrics[(i % 3) as usize],
                Some(i),
                "valid",
                10,
            )
        })
        .collect();
    let span = (1_000_000 / 3) * 10 * MS;
    let cases: Vec<CaseWindow> = (0..100)
        .map(|c| {
            case(
                &format!("case{c:03}"),
                Some((start + c * span / 100, start + (c + 1) * span / 100 - 1)),
            )
        })
        .collect();
    let began = std::time::Instant::now();
    let cpu_began = thread_cpu_ns();
    let out = run(&records, &cases, samples, None, None).unwrap();
    let cpu = (thread_cpu_ns() - cpu_began) as f64 / 1e9;
    let took = began.elapsed();
    eprintln!("join of 1,000,000 samples over 100 cases: {took:?} wall, {cpu:.3} s CPU");
    assert_eq!(out.server_join["case_coverage"]["observed"], json!(100));
}

mod conformance {
    //! The shared server cases: artifact + telemetry + args in, the
    //! reference's `server_join`, `server_targets`, per-case server memory
    //! and text lines out.
    use std::collections::BTreeMap;
    use std::path::{Path, PathBuf};

    use serde_json::{Map, Value};

    use super::super::*;

    fn cases_dir() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/conformance/cases")
    }

    /// Decode an artifact: v4 references get their context back (docs/artifact.md §1.1).
    fn read_artifact(path: &Path) -> Vec<Value> {
        let text = std::fs::read_to_string(path).unwrap();
        let mut contexts: BTreeMap<String, Value> = BTreeMap::new();
        let mut records = Vec::new();
        for line in text.lines().filter(|l| !l.trim().is_empty()) {
            let mut record: Value = serde_json::from_str(line).unwrap();
            if record["event_type"] == "infer.context" {
                contexts.insert(
                    record["context_id"].as_str().unwrap().into(),
                    record["context"].clone(),
                );
                continue;
            }
            if let Some(id) = record
                .get("context_id")
                .and_then(Value::as_str)
                .map(str::to_owned)
            {
                let obj = record.as_object_mut().unwrap();
                obj.remove("context_id");
                obj.insert("context".into(), contexts[&id].clone());
                obj.insert("schema_version".into(), Value::from(2));
            }
            records.push(record);
        }
        records
    }

    fn windows(records: &[Value]) -> Vec<CaseWindow> {
        let mut by_case: BTreeMap<String, Option<(i64, i64)>> = BTreeMap::new();
        for r in records {
            if r["event_type"] != "infer.request" || r["phase"] != "measured" {
                continue;
            }
            let key = match r.get("case_id") {
                None => "unknown".to_owned(),
                Some(Value::String(s)) => s.clone(),
                Some(other) => other.to_string(),
            };
            let slot = by_case.entry(key).or_insert(None);
            let number = |v: &Value| {
                v.as_i64()
                    .or_else(|| v.as_f64().filter(|f| f.is_finite()).map(|f| f as i64))
            };
            if r["status"] != "ok" {
                continue;
            }
            if let (Some(s), Some(e)) = (number(&r["started_at_ns"]), number(&r["ended_at_ns"])) {
                *slot = Some(slot.map_or((s, e), |(a, b)| (a.min(s), b.max(e))));
            }
        }
        by_case
            .into_iter()
            .map(|(case_key, window)| CaseWindow { case_key, window })
            .collect()
    }

    fn check(name: &str) {
        let dir = cases_dir().join(name);
        let records = read_artifact(&dir.join("artifact.jsonl"));
        let cases = windows(&records);
        let args_text = std::fs::read_to_string(dir.join("args")).unwrap();
        let args: Vec<&str> = args_text.split_whitespace().collect();
        let mut samples = Vec::new();
        let (mut direct, mut offset, mut uncertainty, mut configured) = (false, None, None, false);
        let mut i = 0;
        while i < args.len() {
            match args[i] {
                "--server-telemetry" => {
                    let text = std::fs::read_to_string(dir.join(args[i + 1])).unwrap();
                    samples.extend(load_telemetry_text(&text).unwrap());
                    configured = true;
                    i += 1;
                }
                "--direct-server" => direct = true,
                "--clock-offset-ns" => {
                    offset = Some(args[i + 1].parse().unwrap());
                    i += 1;
                }
                "--clock-uncertainty-ns" => {
                    uncertainty = Some(args[i + 1].parse().unwrap());
                    i += 1;
                }
                other => panic!("unexpected arg {other}"),
            }
            i += 1;
        }
        let relevant: Vec<Value> = records
            .iter()
            .filter(|r| {
                r["event_type"] == "infer.artifact" || r["event_type"] == "infer.clock_alignment"
            })
            .cloned()
            .collect();
        let out = join(JoinInputs {
            artifact_records: &relevant,
            cases: &cases,
            samples,
            configured,
            direct_server: direct,
            clock_offset_ns: offset,
            clock_uncertainty_ns: uncertainty,
        })
        .unwrap();
        let expected: Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join("expected.json")).unwrap())
                .unwrap();
        assert_eq!(
            out.server_join, expected["telemetry"]["server_join"],
            "{name}: server_join"
        );
        assert_eq!(
            out.server_targets, expected["telemetry"]["server_targets"],
            "{name}: server_targets"
        );
        let expected_cases = expected["cases"].as_object().unwrap();
        assert_eq!(out.cases.len(), expected_cases.len(), "{name}: case count");
        for (key, case) in expected_cases {
            let want: Map<String, Value> = case["memory"]
                .as_object()
                .unwrap()
                .iter()
                .filter(|(k, _)| k.starts_with("server_"))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
            let mut got = Map::new();
            out.cases[key].insert_into(&mut got);
            assert_eq!(
                Value::Object(got),
                Value::Object(want),
                "{name}: case {key}"
            );
        }
        // Text: run lines right after the client-local memory line; each
        // case's server lines end its block.
        let txt = std::fs::read_to_string(dir.join("expected.txt")).unwrap();
        let lines: Vec<&str> = txt.lines().collect();
        let at = lines
            .iter()
            .position(|l| *l == "Memory observations: client-local")
            .unwrap();
        let run_lines: Vec<&str> = out.run_text_lines.iter().map(String::as_str).collect();
        assert_eq!(
            &lines[at + 1..at + 1 + run_lines.len()],
            run_lines.as_slice(),
            "{name}: run lines"
        );
        let after = lines.get(at + 1 + run_lines.len()).copied().unwrap_or("");
        assert!(
            !after.starts_with("Server "),
            "{name}: unexpected server line {after}"
        );
        for (key, case_lines) in &out.case_text_lines {
            let head = format!("- {key}: ");
            let begin = lines.iter().position(|l| l.starts_with(&head)).unwrap();
            let end = lines[begin + 1..]
                .iter()
                .position(|l| l.starts_with("- "))
                .map_or(lines.len(), |p| begin + 1 + p);
            let block = &lines[begin + 1..end];
            let tail = &block[block.len() - case_lines.len()..];
            assert_eq!(tail, case_lines.as_slice(), "{name}: case {key} lines");
            if case_lines.is_empty() {
                assert!(block
                    .iter()
                    .all(|l| !l.contains("server telemetry") && !l.contains("_bytes (")));
            }
        }
    }

    #[test]
    fn telemetry_joined() {
        check("telemetry_joined");
    }
    #[test]
    fn telemetry_no_direct() {
        check("telemetry_no_direct");
    }
    #[test]
    fn telemetry_wrong_run() {
        check("telemetry_wrong_run");
    }
    #[test]
    fn telemetry_invalidated() {
        check("telemetry_invalidated");
    }
    #[test]
    fn clock_offset_same_host() {
        check("clock_offset_same_host");
    }
    #[test]
    fn clock_offset_remote() {
        check("clock_offset_remote");
    }
    #[test]
    fn remote_no_clock() {
        check("remote_no_clock");
    }
    #[test]
    fn group2() {
        check("group2");
    }
    #[test]
    fn two_servers_ungrouped() {
        check("two_servers_ungrouped");
    }

    #[test]
    fn truncated_telemetry_names_the_line() {
        let dir = cases_dir().join("../bad/telemetry_truncated");
        let text = std::fs::read_to_string(dir.join("telemetry.jsonl")).unwrap();
        let err = load_telemetry_text(&text).unwrap_err();
        let prefix = std::fs::read_to_string(dir.join("expected.prefix")).unwrap();
        let prefix = prefix
            .trim_end()
            .trim_start_matches("--server-telemetry telemetry.jsonl: ");
        assert!(err.starts_with(prefix), "{err}");
        let full = JoinError::TelemetryFile {
            path: "telemetry.jsonl".into(),
            reason: err,
        };
        assert_eq!(full.exit(), crate::exit::Exit::InvalidInput);
    }
}
