//! Hand-computed cases of the execution block's rules.
use serde_json::{json, Value};

use super::*;

fn ctx(source: &str, producer: &str) -> Value {
    json!({"run_id": "r", "session_id": "s", "producer_id": producer, "source": source,
           "clock_domain": "h/mono", "clock_kind": "monotonic", "collection_mode": "imported",
           "provenance": "observed", "device_uuid": "GPU-1"})
}

fn rec(v: Value) -> (i64, Value) {
    (0, v)
}

fn iteration(id: &str, meta: Value) -> (i64, Value) {
    rec(
        json!({"schema_version": 2, "event_type": "infer.iteration", "event_id": format!("it-{id}"),
        "context": ctx(IMPORT_SOURCE, "vllm"), "iteration_ref": {"producer_id": "vllm", "id": id},
        "metadata": meta}),
    )
}

fn member(it: &str, request: &str, producer: &str, meta: Value) -> (i64, Value) {
    rec(
        json!({"schema_version": 2, "event_type": "infer.membership",
        "event_id": format!("m-{it}-{request}"), "context": ctx(IMPORT_SOURCE, "vllm"),
        "iteration_ref": {"producer_id": "vllm", "id": it},
        "request_ref": {"producer_id": producer, "id": request}, "role": "decode", "metadata": meta}),
    )
}

fn activity(id: &str, it: Option<&str>, start: i64, end: i64) -> (i64, Value) {
    let mut a = json!({"schema_version": 2, "event_type": "infer.activity_ref", "event_id": format!("a-{id}"),
        "context": ctx("kineto", "trace"), "activity_ref": {"producer_id": "trace", "id": id},
        "activity_kind": "gpu_kernel", "activity_domain": "gpu", "start_ns": start, "end_ns": end,
        "attribution_status": "unresolved", "metadata": {"unresolved_reason": "no_launch_record"}});
    if let Some(it) = it {
        a["iteration_ref"] = json!({"producer_id": "vllm", "id": it});
        a["attribution_status"] = json!("linked");
    }
    rec(a)
}

fn block_of(records: &[(i64, Value)], requests: &[Request]) -> Value {
    let contexts = BTreeMap::new();
    block(&Inputs {
        records,
        requests,
        dispatches: &[],
        facts: &[],
        contexts: &contexts,
        aggregate: None,
    })
}

fn request(seq: i64, id: &str, case: &str) -> Request {
    let m = json!({"event_type": "infer.request", "request_id": id, "x_request_id": format!("x-{id}"),
                   "case_id": case, "phase": "measured", "status": "ok"});
    Request::from_record(seq, m.as_object().unwrap())
}

#[test]
fn touching_intervals_join_in_a_union() {
    let mut v = vec![(10, 20), (20, 25), (0, 5), (3, 4)];
    assert_eq!(gpu::union_ns(&mut v), 20);
    assert_eq!(gpu::union_ns(&mut vec![]), 0);
}

#[test]
fn ownership_sharing_and_gpu_unions_by_hand() {
    // Step 1: two run requests of two cases; step 2: a run request and a
    // foreign one; step 3 counts itself (all three counts given).
    let records = vec![
        iteration("1", json!({})),
        iteration("2", json!({"state": "incomplete"})),
        iteration(
            "3",
            json!({"run_members": 0, "foreign_members": 0, "unresolved_members": 2}),
        ),
        member("1", "a", "stormlog", json!({})),
        member("1", "b", "stormlog", json!({})),
        member("2", "a", "stormlog", json!({"ownership": "run"})),
        member("2", "f", "foreign", json!({"ownership": "foreign"})),
        member("3", "b", "stormlog", json!({})),
        activity("k1", Some("1"), 0, 10),
        activity("k2", Some("2"), 5, 15),
        activity("k3", None, 15, 20),
        rec(
            json!({"schema_version": 2, "event_type": "infer.membership", "event_id": "bad",
            "context": ctx(IMPORT_SOURCE, "vllm"), "iteration_ref": {"producer_id": "vllm", "id": "1"},
            "request_ref": {"producer_id": "stormlog", "id": "a"}, "role": ""}),
        ),
    ];
    let requests = vec![request(1, "a", "c1"), request(2, "b", "c2")];
    let b = block_of(&records, &requests);
    assert_eq!(b["skipped_records"], 1);
    assert_eq!(b["iterations"]["total"], 3);
    assert_eq!(b["iterations"]["complete"], 2);
    assert_eq!(b["iterations"]["incomplete"], 1);
    assert_eq!(
        b["iterations"]["ownership"],
        json!({"run": 1, "mixed": 1, "unresolved": 1})
    );
    assert_eq!(b["memberships"], json!({"run": 4, "foreign": 1}));
    assert_eq!(b["requests"]["run_requests_total"], 2);
    let scope = &b["gpu"]["GPU-1@h/mono"];
    assert_eq!(scope["measured_busy_ns"], 20);
    assert_eq!(scope["linkage"]["linked_ns"], 15);
    assert_eq!(
        scope["linkage"]["unlinked_by_reason_ns"],
        json!({"no_launch_record": 5})
    );
    assert_eq!(
        scope["membership_ns"],
        json!({"complete": 10, "incomplete": 10})
    );
    assert_eq!(scope["ownership_ns"], json!({"run": 10, "mixed": 10}));
    // c1 took part in steps 1 and 2 (both shared); c2 in 1 and 3.
    assert_eq!(b["cases"]["c1"]["iterations"], 2);
    assert_eq!(b["cases"]["c1"]["shared_iterations"], 2);
    assert_eq!(b["cases"]["c1"]["gpu"]["GPU-1@h/mono"]["linked_ns"], 15);
    assert_eq!(b["cases"]["c2"]["gpu"]["GPU-1@h/mono"]["linked_ns"], 10);
    assert_eq!(b["capture_loss"]["incomplete_iterations"], 1);
}

#[test]
fn a_conflicting_copy_or_a_second_run_is_the_blocks_error() {
    let mut other = iteration("1", json!({"state": "x"}));
    other.1["event_id"] = json!("it-1-b");
    let b = block_of(&[iteration("1", json!({})), other], &[]);
    assert_eq!(
        b,
        json!({"available": false, "error": "conflicting entity identity", "imports": []})
    );
    let mut run2 = iteration("2", json!({}));
    run2.1["context"]["run_id"] = json!("r2");
    let b = block_of(&[iteration("1", json!({})), run2], &[]);
    assert_eq!(
        b["error"],
        "correlation artifact contains multiple run_id values"
    );
    // An equal copy with a larger event id is the same entity.
    let mut copy = iteration("1", json!({}));
    copy.1["event_id"] = json!("it-1-z");
    assert_eq!(
        block_of(&[iteration("1", json!({})), copy], &[])["iterations"]["total"],
        1
    );
}

#[test]
fn a_fact_line_reads_back_as_its_fact() {
    let records = [
        iteration(
            "7",
            json!({"state": "complete", "run_members": 1, "foreign_members": 0,
                              "unresolved_members": 0, "update_failed": true, "start_wall_ns": 1.5e18}),
        ),
        member("7", "a", "stormlog", json!({"ownership": "run"})),
        activity("k", Some("7"), 100, 200),
    ];
    for (_, r) in &records {
        let e = event::parse(r.as_object().unwrap()).unwrap();
        let scope = fact::Scope::of(e.context);
        let f = fact::Fact::of(&e, &scope).unwrap();
        let line = f.encode("c-1").unwrap();
        let back = fact::Fact::decode(&line, |id| (id == "c-1").then_some(&scope)).unwrap();
        assert_eq!(format!("{f:?}"), format!("{back:?}"));
    }
    let line = fact::Fact::of(
        &event::parse(records[0].1.as_object().unwrap()).unwrap(),
        &fact::Scope::default(),
    )
    .unwrap()
    .encode("c")
    .unwrap();
    assert_eq!(fact::field(&line, 'i', 10), Some("1.5e18"));
    assert_eq!(fact::field(&line, 'm', 10), None);
}
