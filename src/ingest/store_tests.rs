//! Round trips through the database: an artifact ingested, then its run
//! read back (records, batches, request packs and their parallel readers).
//! They live beside ingest, which builds their runs, so `db` needs no
//! import of `ingest`.
#![allow(clippy::unwrap_used)]
use crate::db::store::*;
use crate::db::{pack, tables, Connection};
use crate::model::Request;
use serde_json::Value;

/// The first line of the test artifacts: a session `s`.
fn session_line() -> String {
    let mut text = String::from(
        r#"{"event_type": "infer.session", "schema_version": 1, "session_id": "s", "status": "running", "timestamp_ns": 1}"#,
    );
    text.push('\n');
    text
}

/// Rows of a table stored in batches of [`ROWS_PER_INSERT`], the rest in
/// batches of [`ROWS_PER_SHORT_INSERT`] and then one by one, with rows of
/// other tables in between, are the rows of the file, in order.
#[test]
fn rows_stored_in_batches_keep_their_order_and_values() {
    let dir = tempfile::tempdir().unwrap();
    let artifact = dir.path().join("mixed.jsonl");
    let mut text = session_line();
    let n = 2 * ROWS_PER_INSERT + ROWS_PER_SHORT_INSERT + 5;
    for i in 0..n {
        text.push_str(&format!(
            r#"{{"event_type": "infer.request", "schema_version": 1, "session_id": "s", "request_id": "r{i}", "case_id": "c", "status": "{}", "ttft_ms": {}, "request_index": {i}}}"#,
            if i % 3 == 0 { "ok" } else { "error" },
            if i % 4 == 0 { "null".to_owned() } else { format!("{i}.5") },
        ));
        text.push('\n');
        if i % 5 == 0 {
            text.push_str(&format!(
                r#"{{"event_type": "infer.dispatch", "schema_version": 1, "request_id": "r{i}"}}"#
            ));
            text.push('\n');
        }
    }
    std::fs::write(&artifact, &text).unwrap();
    let mut conn = crate::db::open_memory().unwrap();
    crate::ingest::ingest_artifact(&mut conn, &artifact, &Default::default()).unwrap();
    let requests: Vec<(i64, String, Option<f64>, i64)> = conn
        .prepare("SELECT seq, request_id, ttft_ms, nulls FROM requests ORDER BY rowid")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    let dispatches: Vec<(i64, String)> = conn
        .prepare("SELECT seq, request_id FROM dispatches ORDER BY rowid")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(requests.len(), n);
    assert_eq!(dispatches.len(), n.div_ceil(5));
    // Sequence numbers count every record of the file in order.
    let mut seq = 1; // the session is record 0
    for (i, (s, id, ttft, nulls)) in requests.iter().enumerate() {
        assert_eq!((*s, id.as_str()), (seq, format!("r{i}").as_str()));
        assert_eq!(*ttft, (i % 4 != 0).then_some(i as f64 + 0.5), "request {i}");
        assert_eq!(*nulls != 0, i % 4 == 0, "request {i}");
        seq += 1;
        if i % 5 == 0 {
            let (ds, id) = &dispatches[i / 5];
            assert_eq!((*ds, id.as_str()), (seq, format!("r{i}").as_str()));
            seq += 1;
        }
    }
}

/// A scratch database for one report leaves out what no report reads;
/// a kept one stores every record.
#[test]
fn a_report_only_ingest_leaves_out_what_no_report_reads() {
    let dir = tempfile::tempdir().unwrap();
    let artifact = dir.path().join("a.jsonl");
    let mut text = session_line();
    for line in [
        r#"{"event_type": "infer.phase_start", "schema_version": 1, "case_id": "c"}"#,
        r#"{"event_type": "infer.dispatch", "schema_version": 1, "request_id": "r0", "x_request_id": "x0"}"#,
        r#"{"event_type": "infer.first_content", "schema_version": 1, "request_id": "r0"}"#,
        r#"{"event_type": "infer.request", "schema_version": 1, "request_id": "r0", "status": "ok"}"#,
        r#"{"event_type": "infer.summary", "schema_version": 1, "summary": {}}"#,
        r#"{"event_type": "infer.note", "schema_version": 1}"#,
    ] {
        text.push_str(line);
        text.push('\n');
    }
    std::fs::write(&artifact, &text).unwrap();
    let count = |c: &Connection, sql: &str| -> i64 { c.query_row(sql, [], |r| r.get(0)).unwrap() };
    for analyze in [false, true] {
        let mut conn = crate::db::open_memory().unwrap();
        let opts = crate::ingest::Options {
            analyze,
            ..Default::default()
        };
        crate::ingest::ingest_artifact(&mut conn, &artifact, &opts).unwrap();
        let kept = i64::from(!analyze);
        assert_eq!(count(&conn, "SELECT count(*) FROM first_contents"), kept);
        assert_eq!(count(&conn, "SELECT count(*) FROM records"), 1 + 2 * kept);
        assert_eq!(count(&conn, "SELECT count(*) FROM dispatches"), 1);
        // A scratch database packs its request rows without storing them;
        // its load reads them from the pack.
        assert_eq!(count(&conn, "SELECT count(*) FROM requests"), kept);
        assert_eq!(count(&conn, "SELECT count(*) FROM request_packs"), 1);
        let data = match analyze {
            true => load_run_packed(&conn, "s").unwrap(),
            false => load_run(&conn, "s").unwrap(),
        };
        assert_eq!(data.requests.len(), 1);
        assert_eq!(data.requests[0].request_id, "r0");
        // The run's record count is the file's either way.
        assert_eq!(count(&conn, "SELECT record_count FROM runs"), 7);
    }
}

/// A run above the parallel threshold is read in two halves on two
/// connections, or from its pack's segments at once; either result is
/// the sequential read, request for request.
#[test]
fn halves_read_at_once_equal_one_sequential_read() {
    let dir = tempfile::tempdir().unwrap();
    let artifact = dir.path().join("big.jsonl");
    let mut text = session_line();
    let n = PARALLEL_LOAD_MIN + 1001;
    for i in 0..n {
        // Vary the symbols and leave some fields out or null.
        let status = ["ok", "ok", "error", "timeout"][i % 4];
        let ttft = if i % 7 == 0 {
            "null".to_owned()
        } else {
            format!("{}.25", i % 97)
        };
        text.push_str(&format!(
            r#"{{"event_type": "infer.request", "schema_version": 1, "case_id": "c{}", "phase": "measured", "status": "{status}", "request_id": "r{i}", "x_request_id": "x{i}", "request_index": {i}, "started_at_ns": {}, "ended_at_ns": {}, "ttft_ms": {ttft}, "chunk_interarrival_ms": [1.5, {i}]}}"#,
            i % 3,
            1_000 + i,
            2_000 + i
        ));
        text.push('\n');
    }
    std::fs::write(&artifact, text).unwrap();
    let db = dir.path().join("p.db");
    let mut conn = crate::db::open(&db, crate::db::Mode::ReadWrite).unwrap();
    let done = crate::ingest::ingest_artifact(&mut conn, &artifact, &Default::default()).unwrap();
    // Through the pack (segments decoded in parallel), then the rows.
    let packed = load_run(&conn, &done.run_id).unwrap();
    conn.execute("DELETE FROM request_packs", []).unwrap();
    let data = load_run(&conn, &done.run_id).unwrap();
    assert_eq!(data.requests.len(), n);
    let spec = tables::spec("requests").unwrap();
    let mut one = vec![Request::empty(0); n];
    let got = read_requests(&conn, spec, &done.run_id, i64::MIN, i64::MAX, &mut one).unwrap();
    assert_eq!(got, n);
    assert_eq!(data.requests, one);
    assert_eq!(packed.requests, one);
    assert_eq!(
        data.requests[n - 1].x_request_id,
        Value::from(format!("x{}", n - 1))
    );
    assert_eq!(data.requests[7].ttft_ms(), None);
    assert_eq!(data.requests[8].ttft_ms(), Some(8.25));
    assert!(data.requests.windows(2).all(|w| w[0].seq < w[1].seq));
}

/// A small run with a pack, in a kept database (triggers on).
fn packed_run(dir: &std::path::Path) -> (Connection, String) {
    let artifact = dir.join("a.jsonl");
    let mut text = session_line();
    for i in 0..5 {
        text.push_str(&format!(
            r#"{{"event_type": "infer.request", "schema_version": 1, "case_id": "c", "phase": "measured", "status": "ok", "request_id": "r{i}", "ttft_ms": {i}.5}}"#
        ));
        text.push('\n');
    }
    std::fs::write(&artifact, text).unwrap();
    let mut conn = crate::db::open(&dir.join("p.db"), crate::db::Mode::ReadWrite).unwrap();
    let done = crate::ingest::ingest_artifact(&mut conn, &artifact, &Default::default()).unwrap();
    (conn, done.run_id)
}

fn has_pack(conn: &Connection, run_id: &str) -> bool {
    conn.query_row(
        "SELECT count(*) FROM request_packs WHERE run_id = ?1",
        [run_id],
        |r| r.get::<_, i64>(0),
    )
    .unwrap()
        > 0
}

/// An edit of the rows made with SQL drops the run's pack, so the next
/// report reads the edited rows; the ingest's own writes do not (it
/// writes the pack itself, with triggers off), and its connection gets
/// its triggers back.
#[test]
fn an_edit_made_with_sql_drops_the_pack() {
    let dir = tempfile::tempdir().unwrap();
    let (conn, run) = packed_run(dir.path());
    assert!(has_pack(&conn, &run));
    use crate::db::DbConfig::SQLITE_DBCONFIG_ENABLE_TRIGGER;
    assert!(conn.db_config(SQLITE_DBCONFIG_ENABLE_TRIGGER).unwrap());
    conn.execute(
        "UPDATE requests SET ttft_ms = 99.0 WHERE request_id = 'r2'",
        [],
    )
    .unwrap();
    assert!(!has_pack(&conn, &run));
    let data = load_run(&conn, &run).unwrap();
    assert_eq!(data.requests[2].ttft_ms(), Some(99.0));
    for edit in [
        "DELETE FROM requests WHERE request_id = 'r4'",
        "INSERT INTO requests (run_id, seq, case_key, status_key, request_id) SELECT run_id, 100, 'c', 'ok', 'r9' FROM runs",
    ] {
        store_pack(&conn, &run, &pack_rows(&conn, &run).unwrap()).unwrap();
        assert!(has_pack(&conn, &run));
        conn.execute(edit, []).unwrap();
        assert!(!has_pack(&conn, &run), "{edit}");
    }
    let data = load_run(&conn, &run).unwrap();
    let ids: Vec<&str> = data
        .requests
        .iter()
        .filter_map(|r| r.request_id.as_str())
        .collect();
    assert_eq!(ids, ["r0", "r1", "r2", "r3", "r9"]);
}

/// The analysis reads every record but the four types it never needs,
/// whatever sorts around them (the query takes index ranges between
/// them), a record without an event type included, in file order.
#[test]
fn the_analysis_reads_all_records_but_four_types() {
    let dir = tempfile::tempdir().unwrap();
    let artifact = dir.path().join("a.jsonl");
    let mut text = session_line();
    let types = [
        "infer.capabilities",
        "infer.dispatch",
        "infer.dispatch_note",
        "infer.first_content",
        "infer.iteration",
        "infer.phase_start",
        "infer.server_probe",
        "infer.summary",
        "infer.summaryx",
        "infer.zzz",
        "infer.dispatch",
    ];
    for t in types {
        text.push_str(&format!(
            r#"{{"event_type": "{t}", "schema_version": 1, "timestamp_ns": 2}}"#
        ));
        text.push('\n');
    }
    text.push_str(r#"{"schema_version": 1, "note": "no type"}"#);
    text.push('\n');
    std::fs::write(&artifact, text).unwrap();
    let mut conn = crate::db::open(&dir.path().join("r.db"), crate::db::Mode::ReadWrite).unwrap();
    let done = crate::ingest::ingest_artifact(&mut conn, &artifact, &Default::default()).unwrap();
    let data = load_run(&conn, &done.run_id).unwrap();
    let got: Vec<String> = data
        .records
        .iter()
        .map(|(_, r)| match r.get("event_type") {
            Some(Value::String(t)) => t.clone(),
            _ => "(none)".to_owned(),
        })
        .filter(|t| t != "infer.session")
        .collect();
    assert_eq!(
        got,
        [
            "infer.capabilities",
            "infer.dispatch_note",
            "infer.iteration",
            "infer.server_probe",
            "infer.summaryx",
            "infer.zzz",
            "(none)"
        ]
    );
    assert!(data.records.windows(2).all(|w| w[0].0 < w[1].0));
}

/// A run of three pack segments (two whole, one of 7 rows), in a file.
fn three_segment_run(dir: &std::path::Path) -> (Connection, String, usize) {
    let artifact = dir.join("s.jsonl");
    let mut text = session_line();
    let n = pack::SEGMENT_ROWS as usize * 2 + 7;
    for i in 0..n {
        let status = ["ok", "error", "ok"][i % 3];
        text.push_str(&format!(
            r#"{{"event_type": "infer.request", "schema_version": 1, "case_id": "c{}", "phase": "measured", "status": "{status}", "request_id": "r{i}", "x_request_id": "x{i}", "ttft_ms": {}.5, "chunk_interarrival_ms": [{i}]}}"#,
            i % 5,
            i % 89
        ));
        text.push('\n');
    }
    std::fs::write(&artifact, text).unwrap();
    let mut conn = crate::db::open(&dir.join("s.db"), crate::db::Mode::ReadWrite).unwrap();
    let done = crate::ingest::ingest_artifact(&mut conn, &artifact, &Default::default()).unwrap();
    (conn, done.run_id, n)
}

/// However many readers share a pack out, they read what the rows hold.
#[test]
fn a_pack_read_by_several_readers_equals_its_rows() {
    let dir = tempfile::tempdir().unwrap();
    let (conn, run, n) = three_segment_run(dir.path());
    let spec = tables::spec("requests").unwrap();
    let mut rows = vec![Request::empty(0); n];
    let got = read_requests(&conn, spec, &run, i64::MIN, i64::MAX, &mut rows).unwrap();
    assert_eq!(got, n);
    for readers in [1, 2, 3, 8] {
        let mut out = Vec::new();
        assert!(read_pack(&conn, spec, &run, &mut out, readers).unwrap());
        assert_eq!(out, rows, "{readers} readers");
    }
    assert_eq!(rows[n - 1].x_request_id, Value::from(format!("x{}", n - 1)));
}

/// A pack whose segments are not the ones listed, or not all there, or
/// counted past a segment's rows, is passed over by one reader and by
/// several, and the rows are read.
#[test]
fn a_pack_missing_a_segment_or_miscounted_is_passed_over() {
    let dir = tempfile::tempdir().unwrap();
    let spec = tables::spec("requests").unwrap();
    for (i, edit) in [
        "DELETE FROM request_packs WHERE segment = 1",
        "DELETE FROM request_packs WHERE segment = 2",
        "UPDATE request_packs SET requests = requests - 1 WHERE segment = 0",
        "UPDATE request_packs SET segment = 3 WHERE segment = 2",
        "UPDATE request_packs SET body = x'00' WHERE segment = 1",
        // Counts no ingest writes: room asked for that no body fills (a
        // capacity overflow or an abort, before the check).
        "UPDATE request_packs SET requests = 9223372036854775807 WHERE segment = 2",
        "UPDATE request_packs SET requests = 1000000000 WHERE segment = 0",
    ]
    .into_iter()
    .enumerate()
    {
        let at = dir.path().join(i.to_string());
        std::fs::create_dir(&at).unwrap();
        let (conn, run, n) = three_segment_run(&at);
        conn.execute(edit, []).unwrap();
        for readers in [1, 2, 3] {
            let mut out = Vec::new();
            assert!(
                !read_pack(&conn, spec, &run, &mut out, readers).unwrap(),
                "{edit}"
            );
        }
        let data = load_run(&conn, &run).unwrap();
        assert_eq!(data.requests.len(), n, "{edit}");
        assert_eq!(
            data.requests[n - 1].request_id,
            Value::from(format!("r{}", n - 1))
        );
    }
}

/// Rows deleted with the triggers off leave the pack in place; one that
/// no longer starts or ends where the rows do is passed over for them.
#[test]
fn a_pack_past_the_ends_of_the_rows_is_passed_over() {
    let dir = tempfile::tempdir().unwrap();
    let (conn, run) = packed_run(dir.path());
    use crate::db::DbConfig::SQLITE_DBCONFIG_ENABLE_TRIGGER;
    conn.set_db_config(SQLITE_DBCONFIG_ENABLE_TRIGGER, false)
        .unwrap();
    let ids = |conn: &Connection| -> Vec<String> {
        let data = load_run(conn, &run).unwrap();
        data.requests
            .iter()
            .filter_map(|r| r.request_id.as_str().map(str::to_owned))
            .collect()
    };
    assert_eq!(ids(&conn), ["r0", "r1", "r2", "r3", "r4"]);
    conn.execute("DELETE FROM requests WHERE request_id = 'r4'", [])
        .unwrap();
    assert!(has_pack(&conn, &run));
    assert_eq!(ids(&conn), ["r0", "r1", "r2", "r3"]);
    conn.execute("DELETE FROM requests WHERE request_id = 'r0'", [])
        .unwrap();
    assert_eq!(ids(&conn), ["r1", "r2", "r3"]);
}

/// A pack that does not fit the run (another row count, damaged bytes, a
/// segment missing) is passed over for the rows.
#[test]
fn a_pack_that_does_not_fit_is_passed_over() {
    let dir = tempfile::tempdir().unwrap();
    let (conn, run) = packed_run(dir.path());
    let want = format!("{:?}", load_run(&conn, &run).unwrap().requests);
    let good = pack_rows(&conn, &run).unwrap();
    assert_eq!(good.len(), 1);
    let (rows, body) = good[0].clone();
    let mut damaged = body.clone();
    let last = damaged.len() - 1;
    damaged[last] ^= 0x55;
    let mut cut = body.clone();
    cut.truncate(body.len() - 3);
    let wrong: Vec<Vec<(u64, Vec<u8>)>> = vec![
        vec![(rows + 1, body.clone())],
        vec![(rows, damaged)],
        vec![(rows, cut)],
        vec![(rows, Vec::new())],
        vec![(rows, body.clone()), (rows, body.clone())],
    ];
    for pack in wrong {
        store_pack(&conn, &run, &pack).unwrap();
        assert!(has_pack(&conn, &run));
        let got = format!("{:?}", load_run(&conn, &run).unwrap().requests);
        assert_eq!(got, want);
    }
    // A segment numbered out of order.
    store_pack(&conn, &run, &good).unwrap();
    conn.execute("UPDATE request_packs SET segment = 1", [])
        .unwrap();
    let got = format!("{:?}", load_run(&conn, &run).unwrap().requests);
    assert_eq!(got, want);
}

/// A scratch ingest skips the digest only: the run reads back the same.
#[test]
fn an_ingest_without_digest_stores_the_same_run() {
    let dir = tempfile::tempdir().unwrap();
    let artifact = dir.path().join("a.jsonl");
    std::fs::write(
        &artifact,
        concat!(
            r#"{"event_type": "infer.session", "schema_version": 1, "session_id": "s1", "status": "running", "timestamp_ns": 1}"#,
            "\n",
            r#"{"event_type": "infer.request", "schema_version": 1, "case_id": "c", "phase": "measured", "status": "ok", "ttft_ms": 2.5}"#,
            "\n",
        ),
    )
    .unwrap();
    let mut loaded = Vec::new();
    for skip_digest in [false, true] {
        let mut conn = crate::db::open_memory().unwrap();
        let opts = crate::ingest::Options {
            skip_digest,
            ..Default::default()
        };
        let done = crate::ingest::ingest_artifact(&mut conn, &artifact, &opts).unwrap();
        let sha: Option<String> = conn
            .query_row("SELECT artifact_sha256 FROM runs", [], |r| r.get(0))
            .unwrap();
        let want = (!skip_digest).then(|| crate::util::sha256_file(&artifact).unwrap());
        assert_eq!(sha, want);
        let data = load_run(&conn, &done.run_id).unwrap();
        loaded.push((done.run_id, format!("{:?}", data.requests)));
    }
    assert_eq!(loaded[0], loaded[1]);
}

/// Writes a database at `path` as schema version `version` left it, with
/// the rows `rows` (SQL) in it.
fn old_database(path: &std::path::Path, version: usize, rows: &str) {
    let mut conn = Connection::open(path).unwrap();
    let tx = conn.transaction().unwrap();
    for (_, sql) in &crate::db::MIGRATIONS[..version] {
        tx.execute_batch(sql).unwrap();
    }
    tx.pragma_update(None, "user_version", version as i64)
        .unwrap();
    tx.execute_batch(rows).unwrap();
    tx.commit().unwrap();
}

/// Records stored whole by schema 8 move to their typed tables when the
/// database is migrated: the rows are those an ingest writes now, the
/// values no column keeps stay in `extra`, and export gives every
/// record back as it was.
#[test]
fn dispatch_and_first_content_records_of_schema_8_move_to_their_tables() {
    let dir = tempfile::tempdir().unwrap();
    let lines = [
        r#"{"event_type": "infer.session", "schema_version": 1, "session_id": "s", "status": "running", "timestamp_ns": 1}"#,
        r#"{"case_id": "c", "event_type": "infer.dispatch", "intended_at_ns": 10, "phase": "measured", "request_id": "r0", "schema_version": 1, "session_id": "s", "started_at_ns": 11, "timestamp_ns": 11, "x_request_id": "x0"}"#,
        r#"{"case_id": 7, "event_type": "infer.dispatch", "intended_at_ns": 123456789012345678901234567890, "note": [1, {"a": null}], "phase": null, "request_id": "NaN", "schema_version": "1", "started_at_ns": 1.5, "timestamp_ns": -3}"#,
        r#"{"case_id": "c", "event_type": "infer.first_content", "first_content_at_ns": 12, "phase": "measured", "request_id": "r0", "schema_version": 1, "session_id": "s", "timestamp_ns": 12, "x_request_id": "x0"}"#,
        r#"{"event_type": "infer.first_content", "first_content_at_ns": true, "x_request_id": ""}"#,
        r#"{"event_type": "infer.summary", "schema_version": 1, "summary": {}}"#,
    ];
    let artifact = dir.path().join("a.jsonl");
    std::fs::write(&artifact, lines.join("\n") + "\n").unwrap();
    // Today's ingest of the file.
    let fresh_path = dir.path().join("fresh.db");
    let mut fresh = crate::db::open(&fresh_path, crate::db::Mode::ReadWrite).unwrap();
    crate::ingest::ingest_path(&mut fresh, &artifact, &Default::default()).unwrap();
    // Schema 8's rows of the same file: only the session was typed.
    let old = dir.path().join("v8.db");
    let mut rows = String::from(
        "INSERT INTO runs (run_id, ingested_at) VALUES ('s', 'now');
         INSERT INTO sessions (run_id, seq, schema_version, session_id, status, timestamp_ns)
         VALUES ('s', 0, 1, 's', 'running', 1);",
    );
    for (seq, line) in lines.iter().enumerate().skip(1) {
        let et = crate::py::json::parse(line).unwrap()["event_type"]
            .as_str()
            .unwrap()
            .to_owned();
        rows.push_str(&format!(
            "INSERT INTO records (run_id, seq, event_type, body) VALUES ('s', {seq}, '{et}', '{line}');"
        ));
    }
    old_database(&old, 8, &rows);
    let conn = crate::db::open(&old, crate::db::Mode::ReadWrite).unwrap();
    let v: i64 = conn
        .pragma_query_value(None, "user_version", |r| r.get(0))
        .unwrap();
    assert_eq!(v, crate::db::SCHEMA_VERSION);
    let all = |c: &Connection, table: &str| -> Vec<Vec<crate::db::SqlValue>> {
        let mut stmt = c
            .prepare(&format!("SELECT * FROM {table} ORDER BY run_id, seq"))
            .unwrap();
        let n = stmt.column_count();
        stmt.query_map([], |r| (0..n).map(|i| r.get(i)).collect())
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap()
    };
    for table in ["dispatches", "first_contents"] {
        assert_eq!(all(&conn, table), all(&fresh, table), "{table}");
        assert_eq!(all(&conn, table).len(), 2, "{table}");
    }
    let left: Vec<(i64, String)> = conn
        .prepare("SELECT seq, body FROM records ORDER BY seq")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(left, [(5, lines[5].to_owned())]);
    let extra: String = conn
        .query_row("SELECT extra FROM dispatches WHERE seq = 2", [], |r| {
            r.get(0)
        })
        .unwrap();
    let extra: serde_json::Value = crate::py::json::parse(&extra).unwrap();
    for key in [
        "case_id",
        "intended_at_ns",
        "note",
        "schema_version",
        "started_at_ns",
    ] {
        assert!(extra.get(key).is_some(), "{key}: {extra}");
    }
    // Every record comes back as it was read, in file order.
    let back = crate::db::store::raw_records(&conn, "s").unwrap();
    let seqs: Vec<i64> = back.iter().map(|(s, _)| *s).collect();
    assert_eq!(seqs, [0, 1, 2, 3, 4, 5]);
    for ((_, got), line) in back.iter().zip(lines) {
        assert_eq!(
            crate::py::json::dumps_compact(got),
            crate::py::json::dumps_compact(&crate::py::json::parse(line).unwrap())
        );
    }
    let check: String = conn
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .unwrap();
    assert_eq!(check, "ok");
}

/// The lines of a run whose dispatch and first-content records repeat
/// their request's fields (migrations/0014), and some that do not.
const SHARING_LINES: [&str; 9] = [
    r#"{"event_type": "infer.session", "schema_version": 1, "session_id": "s", "status": "running", "timestamp_ns": 1}"#,
    r#"{"case_id": "c", "event_type": "infer.dispatch", "intended_at_ns": 10, "phase": "measured", "request_id": "r0", "schema_version": 1, "session_id": "s", "started_at_ns": 11, "timestamp_ns": 11, "x_request_id": "x0"}"#,
    r#"{"case_id": "c", "event_type": "infer.first_content", "first_content_at_ns": 15, "phase": "measured", "request_id": "r0", "schema_version": 1, "session_id": "s", "timestamp_ns": 15, "x_request_id": "x0"}"#,
    r#"{"case_id": 7, "event_type": "infer.dispatch", "intended_at_ns": 20, "phase": null, "request_id": "r1", "schema_version": 2, "session_id": "s", "started_at_ns": 22, "timestamp_ns": 22, "x_request_id": "other"}"#,
    r#"{"case_id": "c", "event_type": "infer.request", "intended_at_ns": 10, "phase": "measured", "request_id": "r0", "schema_version": 1, "session_id": "s", "started_at_ns": 11, "status": "ok", "timestamp_ns": 11, "x_request_id": "x0"}"#,
    r#"{"case_id": "c", "event_type": "infer.request", "intended_at_ns": 20, "phase": "warmup", "request_id": "r1", "schema_version": 1, "session_id": "s", "started_at_ns": 21, "status": "ok", "timestamp_ns": 21, "x_request_id": "x1"}"#,
    r#"{"case_id": "c", "event_type": "infer.dispatch", "intended_at_ns": 30, "phase": "measured", "request_id": "r0", "schema_version": 1, "session_id": "s", "started_at_ns": 31, "timestamp_ns": 31, "x_request_id": "x0"}"#,
    r#"{"event_type": "infer.first_content", "first_content_at_ns": 40, "request_id": "lost", "schema_version": 1}"#,
    r#"{"event_type": "infer.summary", "schema_version": 1, "summary": {}}"#,
];

/// Every row of a query, as SQL values.
fn all_rows(c: &Connection, sql: &str) -> Vec<Vec<crate::db::SqlValue>> {
    let mut stmt = c.prepare(sql).unwrap();
    let n = stmt.column_count();
    stmt.query_map([], |r| (0..n).map(|i| r.get(i)).collect())
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap()
}

/// Every record of run `s` read back is the line it came from.
fn assert_records_are(conn: &Connection, lines: &[&str]) {
    let back = crate::db::store::raw_records(conn, "s").unwrap();
    let seqs: Vec<i64> = back.iter().map(|(s, _)| *s).collect();
    assert_eq!(seqs, (0..lines.len() as i64).collect::<Vec<_>>());
    for ((_, got), line) in back.iter().zip(lines) {
        assert_eq!(
            crate::py::json::dumps_compact(got),
            crate::py::json::dumps_compact(&crate::py::json::parse(line).unwrap())
        );
    }
}

/// A kept database stores NULL for a dispatch's or first content's field
/// its request row holds (same type, same value) and reads it from there:
/// the records, the views and the execution block's map see every value.
#[test]
fn dispatches_and_first_contents_share_their_request_fields() {
    let dir = tempfile::tempdir().unwrap();
    let artifact = dir.path().join("a.jsonl");
    std::fs::write(&artifact, SHARING_LINES.join("\n") + "\n").unwrap();
    let path = dir.path().join("kept.db");
    let mut conn = crate::db::open(&path, crate::db::Mode::ReadWrite).unwrap();
    crate::ingest::ingest_path(&mut conn, &artifact, &Default::default()).unwrap();
    let stored = all_rows(
        &conn,
        "SELECT seq, link, shared, session_id, request_id, x_request_id, phase, started_at_ns
         FROM dispatches ORDER BY seq",
    );
    use crate::db::SqlValue::{Integer as I, Null as N, Text as T};
    assert_eq!(
        stored,
        [
            // All nine fields are the request's.
            vec![I(1), I(4), I(511), N, N, N, N, N],
            // Only session_id, request_id and intended_at_ns; a case_id of
            // another type and a null phase stay the dispatch's.
            vec![I(3), I(5), I(70), N, N, T("other".into()), N, I(22)],
            // Its request came before it: nothing shared.
            vec![
                I(6),
                N,
                I(0),
                T("s".into()),
                T("r0".into()),
                T("x0".into()),
                T("measured".into()),
                I(31)
            ],
        ]
    );
    let firsts = all_rows(
        &conn,
        "SELECT seq, link, shared, first_content_at_ns, timestamp_ns FROM first_contents ORDER BY seq",
    );
    // schema_version .. phase; timestamp_ns 15 is not the request's 11.
    assert_eq!(firsts[0], [I(2), I(4), I(63), I(15), I(15)]);
    assert_eq!(firsts[1], [I(7), N, I(0), I(40), N]);
    assert_records_are(&conn, &SHARING_LINES);
    let view = all_rows(
        &conn,
        "SELECT seq, case_id, phase, request_id, x_request_id, dispatch_lag_ms FROM v_dispatches ORDER BY seq",
    );
    assert_eq!(
        view[0],
        [
            I(1),
            T("c".into()),
            T("measured".into()),
            T("r0".into()),
            T("x0".into()),
            crate::db::SqlValue::Real(1e-6)
        ]
    );
    assert_eq!(
        view[1][..5],
        [I(3), N, N, T("r1".into()), T("other".into())]
    );
    let firsts = all_rows(
        &conn,
        "SELECT seq, case_id, request_id, x_request_id, first_content_at_ms FROM v_first_contents ORDER BY seq",
    );
    assert_eq!(
        firsts[0],
        [I(2), T("c".into()), T("r0".into()), T("x0".into()), I(0)]
    );
    let map = all_rows(
        &conn,
        "SELECT d.seq, iif(d.shared & 4, r.request_id, d.request_id) FROM dispatches d
         LEFT JOIN requests r ON d.shared <> 0 AND r.run_id = d.run_id AND r.seq = d.link ORDER BY d.seq",
    );
    assert_eq!(map[0], [I(1), T("r0".into())]);
    // The request-to-case map's query reads the shared values too.
    let q = crate::sql::EXECUTION_CASE_REQUESTS;
    let mut stmt = conn.prepare(q.sql).unwrap();
    let ids: Vec<Option<String>> = stmt
        .query_map([("s")], |r| r.get(1))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(ids.iter().filter(|i| i.as_deref() == Some("r0")).count(), 3);
}

/// A database written by schema 13 keeps its dispatch and first-content
/// rows whole through 0014 (`shared` 0): they read back as they did, the
/// same records and view rows a fresh ingest of the file gives.
#[test]
fn dispatch_rows_of_schema_13_read_back_the_same_after_0014() {
    let dir = tempfile::tempdir().unwrap();
    let artifact = dir.path().join("a.jsonl");
    let lines = &SHARING_LINES[..6];
    std::fs::write(&artifact, lines.join("\n") + "\n").unwrap();
    let fresh_path = dir.path().join("fresh.db");
    let mut fresh = crate::db::open(&fresh_path, crate::db::Mode::ReadWrite).unwrap();
    crate::ingest::ingest_path(&mut fresh, &artifact, &Default::default()).unwrap();
    let old = dir.path().join("v13.db");
    old_database(
        &old,
        13,
        r#"INSERT INTO runs (run_id, ingested_at) VALUES ('s', 'now');
         INSERT INTO sessions (run_id, seq, schema_version, session_id, status, timestamp_ns)
         VALUES ('s', 0, 1, 's', 'running', 1);"#,
    );
    // The other rows as schema 13's ingest wrote them: every value in the
    // row (0014's layout read back whole through its load queries).
    {
        let conn = Connection::open(&old).unwrap();
        conn.execute_batch(&format!("ATTACH '{}' AS f", fresh_path.display()))
            .unwrap();
        conn.execute_batch("INSERT INTO requests SELECT * FROM f.requests")
            .unwrap();
        for (table, q) in [
            ("dispatches", crate::sql::LOAD_DISPATCHES),
            ("first_contents", crate::sql::LOAD_FIRST_CONTENTS),
        ] {
            let cols = q
                .sql
                .lines()
                .find_map(|l| l.strip_prefix("-- Columns: "))
                .unwrap();
            let body = q
                .sql
                .replace(&format!("FROM {table} "), &format!("FROM f.{table} "))
                .replace("JOIN requests ", "JOIN f.requests ")
                .replace(":run_id", "'s'");
            conn.execute_batch(&format!(
                "INSERT INTO {table} (run_id, {cols}) SELECT 's', * FROM ({body})"
            ))
            .unwrap();
        }
    }
    let conn = crate::db::open(&old, crate::db::Mode::ReadWrite).unwrap();
    let v: i64 = conn
        .pragma_query_value(None, "user_version", |r| r.get(0))
        .unwrap();
    assert_eq!(v, crate::db::SCHEMA_VERSION);
    let shared = all_rows(
        &conn,
        "SELECT shared, link FROM dispatches UNION ALL SELECT shared, link FROM first_contents",
    );
    assert!(
        shared
            .iter()
            .all(|r| r[0] == crate::db::SqlValue::Integer(0)),
        "{shared:?}"
    );
    assert_records_are(&conn, lines);
    assert_records_are(&fresh, lines);
    for view in ["v_dispatches", "v_first_contents"] {
        let sql = format!("SELECT * FROM {view} ORDER BY seq");
        assert_eq!(all_rows(&conn, &sql), all_rows(&fresh, &sql), "{view}");
    }
    let check: String = conn
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .unwrap();
    assert_eq!(check, "ok");
}
