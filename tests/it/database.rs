//! The project database's promises: every conformance file ingests; the same
//! file twice changes nothing; export gives every record back; bad input
//! changes nothing; a killed ingest leaves a usable database; two ingests at
//! once both land.
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;
use stormlog::py::json as pyjson;

use crate::cases;
use crate::common::{bin, fixtures, run_in};

fn artifacts() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = Vec::new();
    for case in cases::all(cases::CONFORMANCE) {
        let dir = case.dir;
        for f in std::fs::read_dir(&dir).unwrap() {
            let p = f.unwrap().path();
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            let is_artifact = name == "artifact.jsonl"
                || name.starts_with("baseline_b")
                || name.starts_with("candidate_b");
            if is_artifact {
                v.push(p);
            }
        }
    }
    v.sort();
    v
}

/// Every row of every table, as text: equal dumps mean equal databases.
fn dump(db: &Path) -> String {
    let conn = rusqlite::Connection::open(db).unwrap();
    let mut tables: Vec<String> = conn
        .prepare("SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY name")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    tables.retain(|t| !t.starts_with("sqlite_"));
    let mut out = String::new();
    for t in tables {
        let mut stmt = conn
            .prepare(&format!("SELECT * FROM \"{t}\" ORDER BY 1, 2"))
            .unwrap();
        let n = stmt.column_count();
        let mut rows = stmt.query([]).unwrap();
        while let Some(row) = rows.next().unwrap() {
            out.push_str(&t);
            for i in 0..n {
                let v: rusqlite::types::Value = row.get(i).unwrap();
                out.push_str(&format!("|{v:?}"));
            }
            out.push('\n');
        }
    }
    out
}

fn ingest(db: &Path, files: &[&Path]) -> std::process::Output {
    let mut c = bin();
    c.arg("ingest")
        .arg("--db")
        .arg(db)
        .args(files)
        .env_remove("STORMLOG_DB");
    c.output().unwrap()
}

#[test]
fn every_artifact_ingests_twice_identically_and_exports_back() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("p.db");
    let files = artifacts();
    assert!(files.len() >= 40, "{} artifacts", files.len());
    // Runs from different cases may share a run id (e.g. the compare arms);
    // one database per run id keeps this test about losslessness.
    for (i, f) in files.iter().enumerate() {
        let db = tmp.path().join(format!("p{i}.db"));
        let out = ingest(&db, &[f]);
        assert!(
            out.status.success(),
            "{}: {}",
            f.display(),
            String::from_utf8_lossy(&out.stderr)
        );
        let before = dump(&db);
        let again = ingest(&db, &[f]);
        assert!(again.status.success());
        assert!(
            String::from_utf8_lossy(&again.stdout).contains("unchanged"),
            "{}",
            String::from_utf8_lossy(&again.stdout)
        );
        assert_eq!(
            before,
            dump(&db),
            "{}: second ingest changed the database",
            f.display()
        );
        let runs = run_in(
            tmp.path(),
            &["runs", "--db", db.to_str().unwrap(), "--format", "json"],
        );
        let runs: Value = serde_json::from_slice(&runs.stdout).unwrap();
        let run_id = runs[0]["run_id"].as_str().unwrap().to_owned();
        let export = run_in(
            tmp.path(),
            &["export", "--db", db.to_str().unwrap(), &run_id],
        );
        assert!(
            export.status.success(),
            "{}",
            String::from_utf8_lossy(&export.stderr)
        );
        // The reference writes sorted keys with Python's separators, as export
        // does: its files come back byte for byte.
        assert!(
            export.stdout == std::fs::read(f).unwrap(),
            "{}: export is not byte-identical",
            f.display()
        );
        let original: Vec<Value> = std::fs::read_to_string(f)
            .unwrap()
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| pyjson::parse(l).unwrap())
            .collect();
        let exported: Vec<Value> = String::from_utf8(export.stdout)
            .unwrap()
            .lines()
            .map(|l| pyjson::parse(l).unwrap())
            .collect();
        assert_eq!(original.len(), exported.len(), "{}", f.display());
        for (n, (a, b)) in original.iter().zip(&exported).enumerate() {
            assert!(
                pyjson::py_eq(a, b),
                "{} record {n}: {a} != {b}",
                f.display()
            );
        }
    }
    let _ = db;
}

/// The pack an ingest writes as it stores the rows is the pack of the rows
/// as SQLite gives them back (integers in REAL columns read as reals, ...),
/// and a run read through its pack is the run read through its rows, for
/// every artifact of the conformance cases.
#[test]
fn every_pack_holds_what_its_rows_hold() {
    use stormlog::db::store;
    let files = artifacts();
    assert!(files.len() >= 40, "{} artifacts", files.len());
    for f in &files {
        let mut conn = stormlog::db::open_memory().unwrap();
        let done = stormlog::ingest::ingest_artifact(&mut conn, f, &Default::default()).unwrap();
        let run = done.run_id;
        let stored: Vec<(u64, Vec<u8>)> = conn
            .prepare("SELECT requests, body FROM request_packs WHERE run_id = ?1 ORDER BY segment")
            .unwrap()
            .query_map([&run], |r| Ok((r.get::<_, i64>(0)? as u64, r.get(1)?)))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        let want = store::pack_rows(&conn, &run).unwrap();
        assert!(
            stored == want,
            "{}: the ingest packed other values",
            f.display()
        );
        let want_rows: u64 = want.iter().map(|(n, _)| n).sum();
        let packed = store::load_run(&conn, &run).unwrap();
        conn.execute("DELETE FROM request_packs", []).unwrap();
        let from_rows = store::load_run(&conn, &run).unwrap();
        assert_eq!(packed.requests.len(), want_rows as usize);
        // (Debug text: a NaN latency equals itself there.)
        assert!(
            format!("{:?}", packed.requests) == format!("{:?}", from_rows.requests),
            "{}: the pack reads back other requests",
            f.display()
        );
    }
}

#[test]
fn bad_files_are_refused_and_change_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("p.db");
    let good = fixtures().join("cases/burst/artifact.jsonl");
    assert!(ingest(&db, &[&good]).status.success());
    let before = dump(&db);
    let mut checked = 0;
    for case in cases::all(cases::BAD) {
        let dir = case.dir.clone();
        if !case.is_refusal() || case.expected_rc() != 5 {
            continue;
        }
        let args = case.args_line();
        // The file that is bad: the telemetry when the case names one, else the artifact.
        let bad = if args.contains("--server-telemetry") {
            dir.join(args.split_whitespace().nth(1).unwrap())
        } else if args.contains("--slo") {
            continue;
        } else {
            dir.join("artifact.jsonl")
        };
        let out = ingest(&db, &[&bad]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(5), "{}: {stderr}", case.name);
        let prefix = case.expected_prefix();
        // The message names the file as given and, where the reference does,
        // the line: the reference's reason in stormlog's words (ingest::words).
        let tail = prefix.as_str().split_once(": ").map_or("", |(_, t)| t);
        let tail = stormlog::ingest::words::plain(tail);
        let tail = tail.trim_end_matches(':');
        assert!(
            stderr.contains(tail),
            "{}: {stderr} lacks {tail:?}",
            dir.display()
        );
        assert_eq!(
            before,
            dump(&db),
            "{}: a refused file changed the database",
            dir.display()
        );
        checked += 1;
    }
    assert!(checked >= 7, "{checked}");
}

#[test]
fn a_different_file_for_a_stored_run_needs_replace() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("p.db");
    let src = fixtures().join("cases/slo_recorded/artifact.jsonl");
    let other = fixtures().join("cases/slo_override/artifact.jsonl");
    // slo_override re-judges the very same artifact: same bytes, a no-op.
    assert!(ingest(&db, &[&src]).status.success());
    let again = ingest(&db, &[&other]);
    assert!(again.status.success());
    // A changed copy claims the same run id: refused, then replaced on request.
    let changed = tmp.path().join("changed.jsonl");
    let mut text = std::fs::read_to_string(&src).unwrap();
    text.push_str("{\"event_type\": \"infer.note\", \"schema_version\": 1}\n");
    std::fs::write(&changed, text).unwrap();
    let before = dump(&db);
    let refused = ingest(&db, &[&changed]);
    assert_eq!(refused.status.code(), Some(5));
    assert!(String::from_utf8_lossy(&refused.stderr).contains("--replace"));
    assert_eq!(before, dump(&db));
    let mut c = bin();
    let out = c
        .args(["ingest", "--replace", "--db"])
        .arg(&db)
        .arg(&changed)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("replaced"));
    let conn = rusqlite::Connection::open(&db).unwrap();
    let n: i64 = conn
        .query_row(
            "SELECT count(*) FROM records WHERE event_type = 'infer.note'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(n, 1);
}

/// A large artifact made from the `large` case: its lines repeated with fresh
/// request ids, so an ingest of it takes long enough to be interrupted.
fn big_artifact(dir: &Path, copies: usize) -> PathBuf {
    let src = std::fs::read_to_string(fixtures().join("cases/large/artifact.jsonl")).unwrap();
    let (head, requests): (Vec<&str>, Vec<&str>) = src
        .lines()
        .partition(|l| !l.contains("\"event_type\": \"infer.request\""));
    let mut out = String::with_capacity(src.len() * copies);
    for l in &head {
        out.push_str(l);
        out.push('\n');
    }
    for c in 0..copies {
        for l in &requests {
            out.push_str(&l.replace("_measured_", &format!("_measured_{c}x")));
            out.push('\n');
        }
    }
    let p = dir.join("big.jsonl");
    std::fs::write(&p, out).unwrap();
    p
}

#[test]
fn a_killed_ingest_leaves_a_usable_database() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("p.db");
    let big = big_artifact(tmp.path(), 12);
    let mut child = bin()
        .arg("ingest")
        .arg("--db")
        .arg(&db)
        .arg(&big)
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(400));
    let _ = child.kill(); // SIGKILL
    let _ = child.wait();
    let conn = rusqlite::Connection::open(&db).unwrap();
    let ok: String = conn
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .unwrap();
    assert_eq!(ok, "ok");
    drop(conn);
    let out = ingest(&db, &[&fixtures().join("cases/burst/artifact.jsonl")]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = ingest(&db, &[&big]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn a_database_an_ingest_creates_ends_in_wal_and_an_existing_one_stays_wal() {
    // The creating ingest writes without WAL (one copy of each page) and
    // switches the database to WAL when it is done, for readers beside
    // later writers.
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("new.db");
    let mode = |db: &Path| -> String {
        let conn = rusqlite::Connection::open(db).unwrap();
        conn.query_row("PRAGMA journal_mode", [], |r| r.get(0))
            .unwrap()
    };
    // The first ingest creates the database, the second finds it.
    for case in ["burst", "poisson"] {
        let artifact = fixtures().join(format!("cases/{case}/artifact.jsonl"));
        let out = ingest(&db, &[&artifact]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(mode(&db), "wal");
        assert!(!tmp.path().join("new.db-journal").exists());
    }
    // A refused first file still leaves a migrated WAL database behind.
    let bad_db = tmp.path().join("bad.db");
    let bad = tmp.path().join("bad.jsonl");
    std::fs::write(&bad, "{not json\n").unwrap();
    let out = ingest(&bad_db, &[&bad]);
    assert!(!out.status.success());
    assert_eq!(mode(&bad_db), "wal");
}

#[test]
fn two_ingests_at_once_both_land() {
    // Both commands create the database at once: the race on its journal mode
    // (taken without SQLite's busy handler) showed in about half the rounds.
    let tmp = tempfile::tempdir().unwrap();
    let a = fixtures().join("cases/poisson/artifact.jsonl");
    let b = fixtures().join("cases/closed_matrix/artifact.jsonl");
    for round in 0..6 {
        let db = tmp.path().join(format!("p{round}.db"));
        let spawn = |artifact: &std::path::Path| {
            bin()
                .arg("ingest")
                .arg("--db")
                .arg(&db)
                .arg(artifact)
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        };
        let (ca, cb) = (spawn(&a), spawn(&b));
        for child in [ca, cb] {
            let out = child.wait_with_output().unwrap();
            assert!(
                out.status.success(),
                "round {round}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        let runs = run_in(
            tmp.path(),
            &["runs", "--db", db.to_str().unwrap(), "--format", "json"],
        );
        let runs: Value = serde_json::from_slice(&runs.stdout).unwrap();
        assert_eq!(runs.as_array().unwrap().len(), 2);
    }
}

#[test]
fn ingest_on_a_terminal_draws_its_progress_and_finishes() {
    // The progress bar (a terminal, a file of 8 MB or more) is drawn by the
    // reading thread; it once waited forever on the stderr lock the command
    // held. `script` gives the command a terminal; without it there is none.
    if Command::new("script").arg("--version").output().is_err() {
        eprintln!("no `script` here: no terminal to test the progress bar on");
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    // The large case padded past 8 MB with blank lines (which readers skip).
    let mut text = std::fs::read_to_string(fixtures().join("cases/large/artifact.jsonl")).unwrap();
    while text.len() < 9 << 20 {
        text.push_str(" \n");
    }
    let artifact = tmp.path().join("padded.jsonl");
    std::fs::write(&artifact, text).unwrap();
    let db = tmp.path().join("tty.db");
    let line = format!(
        "{} ingest --db {} {}",
        env!("CARGO_BIN_EXE_stormlog"),
        db.display(),
        artifact.display()
    );
    let mut child = Command::new("script")
        .args(["-qec", &line, "/dev/null"])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let started = std::time::Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > std::time::Duration::from_secs(120) {
            let _ = child.kill();
            panic!("ingest on a terminal did not finish in 120 s");
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    let out = child.wait_with_output().unwrap();
    let shown = String::from_utf8_lossy(&out.stdout);
    assert!(status.success(), "{shown}");
    assert!(shown.contains("artifact ingested: run large"), "{shown}");
    let runs = run_in(
        tmp.path(),
        &["runs", "--db", db.to_str().unwrap(), "--format", "json"],
    );
    let runs: Value = serde_json::from_slice(&runs.stdout).unwrap();
    assert_eq!(runs[0]["run_id"], "large", "{runs}");
}

#[test]
fn schema_snapshot() {
    let conn = stormlog::db::open_memory().unwrap();
    let schema: Vec<String> = conn
        .prepare("SELECT sql FROM sqlite_schema WHERE sql IS NOT NULL ORDER BY type DESC, name")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    insta::with_settings!({snapshot_path => "../../snapshots", prepend_module_to_snapshot => false}, {
        insta::assert_snapshot!("schema", schema.join(";\n\n"));
    });
}

#[test]
fn collect_server_with_db_stores_samples_as_it_runs() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("p.db");
    let out = tmp.path().join("telemetry.jsonl");
    let mut target = std::process::Command::new("sleep")
        .arg("10")
        .spawn()
        .unwrap();
    let pid = target.id().to_string();
    let run = bin()
        .args([
            "collect-server",
            "--run-id",
            "live",
            "--pid",
            &pid,
            "--no-gpu",
            "--interval",
            "0.05",
            "--duration",
            "0.5",
            "--output",
        ])
        .arg(&out)
        .arg("--db")
        .arg(&db)
        .output()
        .unwrap();
    let _ = target.kill();
    let _ = target.wait();
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let file: Vec<Value> = std::fs::read_to_string(&out)
        .unwrap()
        .lines()
        .map(|l| pyjson::parse(l).unwrap())
        .collect();
    assert!(file.len() >= 5, "{} samples", file.len());
    // The database holds the very samples the file holds, under the run id.
    let export = run_in(
        tmp.path(),
        &[
            "export",
            "--db",
            db.to_str().unwrap(),
            "--telemetry",
            "live",
        ],
    );
    assert!(
        export.status.success(),
        "{}",
        String::from_utf8_lossy(&export.stderr)
    );
    let stored: Vec<Value> = String::from_utf8(export.stdout)
        .unwrap()
        .lines()
        .map(|l| pyjson::parse(l).unwrap())
        .collect();
    assert_eq!(stored, file);
    // Ingesting the finished file afterwards changes nothing.
    let before = dump(&db);
    let again = ingest(&db, &[&out]);
    assert!(String::from_utf8_lossy(&again.stdout).contains("unchanged"));
    assert_eq!(before, dump(&db));
}

#[test]
fn help_snapshot() {
    let out = bin().arg("--help").output().unwrap();
    assert!(out.status.success());
    insta::with_settings!({snapshot_path => "../../snapshots", prepend_module_to_snapshot => false}, {
        insta::assert_snapshot!("help", String::from_utf8(out.stdout).unwrap());
    });
}

/// A database dump with the ingest time stamps masked (they name the second
/// of the ingest).
fn dump_untimed(db: &Path) -> String {
    let conn = rusqlite::Connection::open(db).unwrap();
    conn.execute("UPDATE runs SET ingested_at = ''", [])
        .unwrap();
    drop(conn);
    dump(db)
}

#[test]
fn a_refused_file_between_two_good_ones_changes_nothing_while_the_next_is_read_ahead() {
    let tmp = tempfile::tempdir().unwrap();
    let large = std::fs::read_to_string(fixtures().join("cases/large/artifact.jsonl")).unwrap();
    let write = |name: &str, text: String| {
        let p = tmp.path().join(name);
        std::fs::write(&p, text).unwrap();
        p
    };
    let run = |id: &str| large.replace("\"run_id\": \"large\"", &format!("\"run_id\": \"{id}\""));
    let first = write("a.jsonl", run("first"));
    // Bad on its last line: its rows are being written when it is refused,
    // and the file after it is read ahead meanwhile.
    let bad = write("b.jsonl", format!("{}{{not json\n", run("bad")));
    let last = write("c.jsonl", run("last"));
    let together = tmp.path().join("together.db");
    let out = ingest(&together, &[&first, &bad, &last]);
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert_eq!(out.status.code(), Some(5), "{stderr}");
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 3, "{stdout}");
    assert!(
        lines[0].contains("a.jsonl: artifact ingested: run first"),
        "{stdout}"
    );
    assert!(
        lines[1].contains("c.jsonl: artifact ingested: run last"),
        "{stdout}"
    );
    assert!(
        lines[2].starts_with("3 files: 2 stored, 1 refused"),
        "{stdout}"
    );
    assert!(
        stderr.contains("b.jsonl") && stderr.contains("nothing from it was stored"),
        "{stderr}"
    );
    // The same database as the two good files ingested without it.
    let apart = tmp.path().join("apart.db");
    assert!(ingest(&apart, &[&first]).status.success());
    assert!(ingest(&apart, &[&last]).status.success());
    let got = dump_untimed(&together);
    assert!(!got.contains("\"bad\""));
    assert_eq!(got, dump_untimed(&apart));
}
