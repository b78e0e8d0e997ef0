//! The execution import's bulk records in the database (migrations/0007_execution_facts):
//! a report reads their fact lines, and gives the same block when it must
//! read the bodies instead (a database whose lines are gone, or records
//! edited with SQL), and when a repeated record is read whole.
use serde_json::Value;

use crate::common::{fixtures, leaf_mismatches, run_in};

fn sql(db: &std::path::Path, statement: &str) -> String {
    let conn = rusqlite::Connection::open(db).unwrap();
    let mut stmt = conn.prepare(statement).unwrap();
    let mut rows = stmt.query([]).unwrap();
    let mut out = Vec::new();
    while let Some(row) = rows.next().unwrap() {
        let v: rusqlite::types::Value = row.get(0).unwrap();
        out.push(format!("{v:?}"));
    }
    out.join(",")
}

fn report(dir: &std::path::Path, db: &str, run: &str) -> Value {
    let out = run_in(dir, &["report", "--db", db, run, "--format", "json"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn the_block_is_the_same_from_the_lines_and_from_the_bodies() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = fixtures().join("cases/execution_gpu");
    let db = tmp.path().join("e.db");
    let db_s = db.to_str().unwrap();
    let out = run_in(&dir, &["ingest", "--db", db_s, "artifact.jsonl"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Every step, membership, hook request and activity has its line.
    assert_eq!(
        sql(&db, "SELECT sum(lines) FROM execution_facts"),
        "Integer(987)"
    );
    let expected: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("expected.json")).unwrap()).unwrap();
    let from_lines = report(&dir, db_s, "execution_gpu");
    assert!(leaf_mismatches(&expected, &from_lines).is_empty());
    // An edit made with SQL drops the run's lines (the trigger); the report
    // then reads the bodies and still says the same.
    sql(
        &db,
        "UPDATE records SET body = body WHERE run_id = 'execution_gpu' AND event_type = 'infer.membership' AND seq = (SELECT min(seq) FROM records WHERE event_type = 'infer.membership')",
    );
    assert_eq!(
        sql(&db, "SELECT count(*) FROM execution_facts"),
        "Integer(0)"
    );
    let from_bodies = report(&dir, db_s, "execution_gpu");
    assert_eq!(from_lines, from_bodies);
}

#[test]
fn a_repeated_record_is_read_whole() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = fixtures().join("bad/execution_conflicting_iteration");
    let db = tmp.path().join("c.db");
    let out = run_in(
        &dir,
        &["ingest", "--db", db.to_str().unwrap(), "artifact.jsonl"],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // The two copies of the iteration have no line; the rest have theirs.
    assert_eq!(
        sql(&db, "SELECT count(*) FROM execution_whole"),
        "Integer(2)"
    );
    let block = &report(&dir, db.to_str().unwrap(), "execution_clean")["telemetry"]["execution"];
    assert_eq!(block["error"], "conflicting event identity");
}

fn report_txt(dir: &std::path::Path, db: &str, run: &str) -> Vec<u8> {
    let out = run_in(dir, &["report", "--db", db, run, "--format", "txt"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

fn ingest(dir: &std::path::Path, db: &std::path::Path) {
    let out = run_in(
        dir,
        &["ingest", "--db", db.to_str().unwrap(), "artifact.jsonl"],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// migrations/0013: the report reads the ingest's aggregate of the lines,
/// and says the same from the lines once the aggregate is gone.
#[test]
fn the_block_is_the_same_from_the_aggregate_and_from_the_lines() {
    for case in ["execution_gpu", "execution_shared", "execution_restart"] {
        let tmp = tempfile::tempdir().unwrap();
        let dir = fixtures().join("cases").join(case);
        let db = tmp.path().join("a.db");
        let db_s = db.to_str().unwrap();
        ingest(&dir, &db);
        assert_eq!(
            sql(&db, "SELECT count(*) FROM execution_aggregates"),
            "Integer(1)",
            "{case}"
        );
        let (json, txt) = (report(&dir, db_s, case), report_txt(&dir, db_s, case));
        let expected: Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join("expected.json")).unwrap())
                .unwrap();
        assert!(leaf_mismatches(&expected, &json).is_empty(), "{case}");
        sql(&db, "DELETE FROM execution_aggregates");
        assert_eq!(report(&dir, db_s, case), json, "{case}");
        assert_eq!(report_txt(&dir, db_s, case), txt, "{case}");
    }
}

/// The request-to-case map the aggregate was made with changes: the
/// trigger drops the aggregate, and the report follows the new map.
#[test]
fn a_request_edited_with_sql_drops_the_aggregate() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = fixtures().join("cases/execution_shared");
    let db = tmp.path().join("a.db");
    let db_s = db.to_str().unwrap();
    ingest(&dir, &db);
    let before = report(&dir, db_s, "execution_shared");
    sql(
        &db,
        "UPDATE requests SET case_id = 'elsewhere', case_key = 'elsewhere'",
    );
    assert_eq!(
        sql(&db, "SELECT count(*) FROM execution_aggregates"),
        "Integer(0)"
    );
    sql(&db, "UPDATE dispatches SET case_id = 'elsewhere'");
    let after = report(&dir, db_s, "execution_shared");
    let cases = after["telemetry"]["execution"]["cases"]
        .as_object()
        .unwrap();
    assert_eq!(cases.keys().collect::<Vec<_>>(), ["elsewhere"], "{cases:?}");
    assert_ne!(
        before["telemetry"]["execution"],
        after["telemetry"]["execution"]
    );
}

/// A database the previous schema wrote (no aggregates) gets them from the
/// migration, and the report stays the same.
#[test]
fn the_migration_fills_the_aggregates_of_stored_runs() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = fixtures().join("cases/execution_gpu");
    let db = tmp.path().join("a.db");
    let db_s = db.to_str().unwrap();
    ingest(&dir, &db);
    let json = report(&dir, db_s, "execution_gpu");
    // Back to the schema before 0013.
    for name in sql(
        &db,
        "SELECT name FROM sqlite_master WHERE type = 'trigger' AND name LIKE 'execution_aggregates_%'",
    )
    .split(',')
    {
        let name = name.trim_start_matches("Text(\"").trim_end_matches("\")");
        sql(&db, &format!("DROP TRIGGER {name}"));
    }
    sql(&db, "DROP TABLE execution_aggregates");
    // Schema version 12: 0013 runs again, and so do the later ones (0014
    // and 0015 apply again to the columns they added).
    sql(&db, "PRAGMA user_version = 12");
    let out = run_in(&dir, &["migrate", "--db", db_s]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(report(&dir, db_s, "execution_gpu"), json);
    assert_eq!(
        sql(&db, "SELECT run_id FROM execution_aggregates"),
        "Text(\"execution_gpu\")"
    );
}
