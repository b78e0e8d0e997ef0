//! Hostile input and failure (issue 23): one regression test per defect
//! found, named after it. The expected figures are the reference's (stormlog
//! 0.4.3) on the same mutated inputs.
use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::Value;

use crate::common::{fixtures, run_in};

/// The replay case's artifact with `field` of its first successful measured
/// request replaced by the JSON text `value` (spelled as given: `1e30`,
/// `NaN`, a 31-digit integer).
pub fn mutated_replay(dir: &Path, field: &str, value: &str) -> PathBuf {
    let text =
        std::fs::read_to_string(fixtures().join("cases/replay/artifact.jsonl")).expect("fixture");
    let mut done = false;
    let lines: Vec<String> = text
        .split('\n')
        .map(|line| {
            let key = format!("\"{field}\": ");
            if done
                || !line.contains("\"infer.request\"")
                || !line.contains("\"phase\": \"measured\"")
                || !line.contains("\"status\": \"ok\"")
            {
                return line.to_owned();
            }
            let Some(at) = line.find(&key) else {
                return line.to_owned();
            };
            let start = at + key.len();
            let end = start + line[start..].find([',', '}']).expect("a value ends");
            done = true;
            format!("{}{value}{}", &line[..start], &line[end..])
        })
        .collect();
    assert!(done, "no request holds {field}");
    let path = dir.join(format!("{field}.jsonl"));
    std::fs::write(&path, lines.join("\n")).expect("write");
    path
}

/// `infer analyze` and `ingest` + `report` of one artifact: both outputs
/// (JSON), which must agree.
fn analyze_and_report(dir: &Path, artifact: &Path) -> Value {
    let a = artifact.to_str().expect("utf-8 path");
    let out = run_in(dir, &["infer", "analyze", a, "--format", "json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let analyzed: Value = serde_json::from_slice(&out.stdout).expect("json");
    let db = dir.join("p.db");
    let _ = std::fs::remove_file(&db);
    let db = db.to_str().expect("utf-8 path");
    let out = run_in(dir, &["ingest", "--db", db, a]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let runs = run_in(dir, &["runs", "--db", db, "--format", "json"]);
    let runs: Value = serde_json::from_slice(&runs.stdout).expect("runs json");
    let run = runs[0]["run_id"].as_str().expect("a run").to_owned();
    let out = run_in(dir, &["report", "--db", db, "--format", "json", &run]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let reported: Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(
        analyzed, reported,
        "report from the database equals analyze"
    );
    analyzed
}

pub fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// The report's JSON text of one case's block, numbers spelled as printed
/// (serde_json would read a 31-digit integer as a float).
fn raw_number(out: &Value, path: &[&str]) -> String {
    let mut v = out;
    for k in path {
        v = &v[*k];
    }
    v.to_string()
}

#[test]
fn defect_1_integers_past_64_bits_stay_exact() {
    let dir = tempfile::tempdir().unwrap();
    let case = ["cases", "replay_in64_out16"];
    let tokens = |field: &str, value: &str, key: &str| {
        let out = analyze_and_report(dir.path(), &mutated_replay(dir.path(), field, value));
        raw_number(&out, &[case[0], case[1], "tokens", key])
    };
    // 2^63 plus the other requests' 304 tokens; the reference's exact sum.
    assert_eq!(
        tokens("output_tokens", "9223372036854775808", "output_tokens"),
        "9223372036854776112"
    );
    // Past 64 bits: an integer literal is exact; the float 1e30 is int(1e30).
    let exact = analyze_and_report(
        dir.path(),
        &mutated_replay(
            dir.path(),
            "output_tokens",
            "1000000000000000000000000000000",
        ),
    );
    let printed = String::from_utf8(
        run_in(
            dir.path(),
            &[
                "infer",
                "analyze",
                dir.path().join("output_tokens.jsonl").to_str().unwrap(),
                "--format",
                "json",
            ],
        )
        .stdout,
    )
    .unwrap();
    assert!(
        printed.contains("\"output_tokens\": 1000000000000000000000000000304"),
        "the exact sum is printed"
    );
    assert_eq!(
        exact[case[0]][case[1]]["streaming"]["mean_tokens_per_chunk"],
        3.125e27
    );
    assert_eq!(
        tokens("total_tokens", "-9223372036854775809", "total_tokens"),
        "-9223372036854774289"
    );
    // A peak in flight past 2^63, exactly.
    let out = analyze_and_report(
        dir.path(),
        &mutated_replay(dir.path(), "in_flight_at_dispatch", "9223372036854775809"),
    );
    assert_eq!(
        raw_number(&out, &[case[0], case[1], "arrivals", "peak_in_flight"]),
        "9223372036854775809"
    );
    // An end time of 1e30 ns: the span is exact, not clamped to 2^63.
    let out = analyze_and_report(
        dir.path(),
        &mutated_replay(dir.path(), "ended_at_ns", "1e30"),
    );
    let latency = &out[case[0]][case[1]]["latency_ms"];
    assert_eq!(latency["e2e_from_intended_p99"], 8.09999999998544e23);
    assert_eq!(latency["e2e_from_intended_p95"], 4.999999999991091e22);
    // A start past 2^63 is kept exactly in the dispatch window.
    let out = analyze_and_report(
        dir.path(),
        &mutated_replay(dir.path(), "started_at_ns", "9223372036854775809"),
    );
    assert_eq!(
        raw_number(
            &out,
            &[
                case[0],
                case[1],
                "intervals",
                "dispatch_window",
                "ended_at_ns"
            ]
        ),
        "9223372036854775809"
    );
}

#[test]
fn defect_2_nan_output_tokens_is_refused_as_the_reference_does() {
    let dir = tempfile::tempdir().unwrap();
    for (value, message) in [
        ("NaN", "cannot convert float NaN to integer"),
        ("Infinity", "cannot convert float infinity to integer"),
        ("\"abc\"", "invalid literal for int() with base 10: 'abc'"),
        (
            "[1]",
            "int() argument must be a string, a bytes-like object or a real number, not 'list'",
        ),
    ] {
        let a = mutated_replay(dir.path(), "output_tokens", value);
        let out = run_in(
            dir.path(),
            &["infer", "analyze", a.to_str().unwrap(), "--format", "json"],
        );
        assert_eq!(out.status.code(), Some(1), "{value}: {}", stderr(&out));
        assert_eq!(
            stderr(&out).trim_end(),
            format!("Error: {message}"),
            "{value}"
        );
    }
    // What Python's int() reads, the tokens per chunk count.
    let a = mutated_replay(dir.path(), "output_tokens", "\" 1_7 \"");
    let out = analyze_and_report(dir.path(), &a);
    assert_eq!(
        out["cases"]["replay_in64_out16"]["streaming"]["mean_tokens_per_chunk"], 1.003125,
        "16 tokens read as 17"
    );
}

/// `path`'s lines with line `n` (1-based) written twice.
pub fn with_line_repeated(dir: &Path, path: &Path, n: usize, name: &str) -> PathBuf {
    let text = std::fs::read_to_string(path).expect("fixture");
    let mut lines: Vec<&str> = text.split('\n').collect();
    lines.insert(n, lines[n - 1]);
    let out = dir.join(name);
    std::fs::write(&out, lines.join("\n")).expect("write");
    out
}

#[test]
fn defect_3_a_repeated_context_line_is_accepted() {
    let dir = tempfile::tempdir().unwrap();
    let original = fixtures().join("cases/replay/artifact.jsonl");
    let line = std::fs::read_to_string(&original)
        .unwrap()
        .lines()
        .position(|l| l.contains("\"event_type\": \"infer.context\""))
        .expect("a context line")
        + 1;
    let repeated = with_line_repeated(dir.path(), &original, line, "repeated.jsonl");
    let out = analyze_and_report(dir.path(), &repeated);
    let expected: Value = serde_json::from_str(
        &std::fs::read_to_string(fixtures().join("cases/replay/expected.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(out["cases"], expected["cases"]);
}

/// The bytes of a database and its write-ahead log, if any.
pub fn db_bytes(db: &Path) -> Vec<u8> {
    let mut bytes = std::fs::read(db).unwrap_or_default();
    let wal = db.with_extension("db-wal");
    bytes.extend(std::fs::read(wal).unwrap_or_default());
    bytes
}

#[test]
fn defect_4_a_repeated_slo_line_is_refused_by_ingest_as_by_analyze() {
    let dir = tempfile::tempdir().unwrap();
    let original = fixtures().join("cases/slo_recorded/artifact.jsonl");
    let line = std::fs::read_to_string(&original)
        .unwrap()
        .lines()
        .position(|l| l.contains("\"event_type\": \"infer.slo\""))
        .expect("an slo line")
        + 1;
    with_line_repeated(dir.path(), &original, line, "two_slo.jsonl");
    let message = "the artifact holds 2 infer.slo records; expected one";
    let out = run_in(
        dir.path(),
        &["infer", "analyze", "two_slo.jsonl", "--format", "json"],
    );
    assert_eq!(out.status.code(), Some(5));
    assert_eq!(stderr(&out).trim_end(), format!("Error: {message}"));
    // A database holding another run: the refusal leaves it byte for byte.
    let good = fixtures().join("cases/replay/artifact.jsonl");
    let ok = run_in(
        dir.path(),
        &["ingest", "--db", "p.db", good.to_str().unwrap()],
    );
    assert_eq!(ok.status.code(), Some(0), "{}", stderr(&ok));
    let before = db_bytes(&dir.path().join("p.db"));
    let out = run_in(dir.path(), &["ingest", "--db", "p.db", "two_slo.jsonl"]);
    assert_eq!(out.status.code(), Some(5), "{}", stderr(&out));
    assert!(
        stderr(&out).contains(&format!("two_slo.jsonl: line {}: {message}", line + 1)),
        "{}",
        stderr(&out)
    );
    assert_eq!(before, db_bytes(&dir.path().join("p.db")));
}

#[test]
fn defect_5_values_of_65536_characters_do_not_panic_the_tables() {
    let dir = tempfile::tempdir().unwrap();
    let good = fixtures().join("cases/replay/artifact.jsonl");
    let ok = run_in(
        dir.path(),
        &["ingest", "--db", "p.db", good.to_str().unwrap()],
    );
    assert_eq!(ok.status.code(), Some(0), "{}", stderr(&ok));
    let out = run_in(
        dir.path(),
        &[
            "sql",
            "--db",
            "p.db",
            "SELECT printf('%.*c', 65536, 'x') AS v",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = String::from_utf8(out.stdout).unwrap();
    assert_eq!(text.lines().nth(2).map(str::len), Some(65536));
    {
        let conn = rusqlite::Connection::open(dir.path().join("p.db")).unwrap();
        conn.execute("UPDATE runs SET model = printf('%.*c', 70000, 'm')", [])
            .unwrap();
    }
    let out = run_in(dir.path(), &["runs", "--db", "p.db"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(String::from_utf8_lossy(&out.stdout).contains(&"m".repeat(70000)));
}

#[test]
fn defect_7_run_ids_models_and_endpoints_cannot_reach_the_terminal_raw() {
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(fixtures().join("cases/replay/artifact.jsonl")).unwrap();
    let hostile = "\\u001b[2J\\u001b]0;owned\\u0007re\\nplay";
    let text = text.replace(
        "\"run_id\": \"replay\"",
        &format!("\"run_id\": \"{hostile}\""),
    );
    std::fs::write(dir.path().join("a.jsonl"), text).unwrap();
    let out = run_in(dir.path(), &["ingest", "--db", "p.db", "a.jsonl"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let said = String::from_utf8(out.stdout).unwrap();
    assert!(
        !said.contains('\u{1b}') && !said.contains('\u{7}'),
        "{said:?}"
    );
    assert_eq!(said.lines().count(), 1, "{said:?}");
    assert!(said.contains("run \\u{1b}[2J\\u{1b}]0;owned\\u{7}re\\u{a}play,"));
    {
        let conn = rusqlite::Connection::open(dir.path().join("p.db")).unwrap();
        conn.execute(
            "UPDATE runs SET model = 'm' || char(27) || '[31m', endpoint = 'e' || char(10) || 'forged  row'",
            [],
        )
        .unwrap();
    }
    let out = run_in(dir.path(), &["runs", "--db", "p.db"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let table = String::from_utf8(out.stdout).unwrap();
    assert!(!table.contains('\u{1b}'), "{table:?}");
    assert_eq!(table.lines().count(), 2, "a header and one row: {table:?}");
    // report --all names the run in its warning (no policy to judge by).
    let out = run_in(dir.path(), &["report", "--db", "p.db", "--all"]);
    let err = stderr(&out);
    assert!(
        !err.contains('\u{1b}') && err.contains("re\\u{a}play"),
        "{err:?}"
    );
}

#[test]
fn defect_11_sql_stops_a_runaway_query_at_its_timeout() {
    let dir = tempfile::tempdir().unwrap();
    let good = fixtures().join("cases/replay/artifact.jsonl");
    let ok = run_in(
        dir.path(),
        &["ingest", "--db", "p.db", good.to_str().unwrap()],
    );
    assert_eq!(ok.status.code(), Some(0), "{}", stderr(&ok));
    let endless =
        "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c";
    let out = run_in(
        dir.path(),
        &["sql", "--db", "p.db", "--timeout", "0.3", endless],
    );
    assert_eq!(out.status.code(), Some(5), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("ran longer than --timeout 0.3 s and was stopped"),
        "{}",
        stderr(&out)
    );
    // A query within its time is untouched by the watch.
    let out = run_in(
        dir.path(),
        &[
            "sql",
            "--db",
            "p.db",
            "--timeout",
            "30",
            "SELECT count(*) AS n FROM requests",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
}

#[test]
fn defect_10_invalid_utf8_is_reported_with_its_line_and_python_s_position() {
    let dir = tempfile::tempdir().unwrap();
    let mut bytes = b"{\"a\": 1}\n".repeat(2000);
    bytes.extend_from_slice(b"{\"c\": \"\xff\"}\n");
    std::fs::write(dir.path().join("u.jsonl"), &bytes).unwrap();
    // The reference counts the position from its 8 KB reading chunk.
    let python = "'utf-8' codec can't decode byte 0xff in position 1623: invalid start byte";
    let out = run_in(dir.path(), &["infer", "analyze", "u.jsonl"]);
    assert_eq!(out.status.code(), Some(5));
    assert_eq!(stderr(&out).trim_end(), format!("Error: u.jsonl: {python}"));
    let out = run_in(dir.path(), &["ingest", "--db", "p.db", "u.jsonl"]);
    assert_eq!(out.status.code(), Some(5));
    assert_eq!(
        stderr(&out).trim_end(),
        "Error: u.jsonl is not UTF-8 text: line 2001: byte 0xff (invalid start byte); nothing from it was stored"
    );
}

/// A full disk and a read-only database, produced for real: SQLite's page
/// limit gives the full disk's SQLITE_FULL, a read-only connection the
/// read-only file's SQLITE_READONLY (a test run as root cannot make a file
/// unwritable with permissions).
#[test]
fn defect_10_a_full_disk_or_a_read_only_database_names_both_files_and_what_to_do() {
    use stormlog::db::{self, Mode};
    use stormlog::exit::Exit;
    let dir = tempfile::tempdir().unwrap();
    let db_path = dir.path().join("p.db");
    let base = fixtures().join("cases/replay/artifact.jsonl");
    let ok = run_in(
        dir.path(),
        &["ingest", "--db", "p.db", base.to_str().unwrap()],
    );
    assert_eq!(ok.status.code(), Some(0), "{}", stderr(&ok));
    // No free pages left (a migration that rebuilds a table leaves some),
    // so that the next ingest needs new ones.
    db::open(&db_path, Mode::ReadWrite)
        .unwrap()
        .execute_batch("VACUUM")
        .unwrap();
    let before = db_bytes(&db_path);
    // (Large enough to need more than one new page of the database.)
    let other = fixtures().join("cases/poisson/artifact.jsonl");
    let opts = stormlog::ingest::Options::default();
    {
        let mut conn = db::open(&db_path, Mode::ReadWrite).unwrap();
        let pages: i64 = conn
            .query_row("PRAGMA page_count", [], |r| r.get(0))
            .unwrap();
        conn.pragma_update(None, "max_page_count", pages + 1)
            .unwrap();
        let err = stormlog::ingest::ingest_path(&mut conn, &other, &opts).unwrap_err();
        let cli = stormlog::cli::commands::ingest_failure(err, &other, &db_path);
        assert_eq!(cli.exit, Exit::Database);
        assert_eq!(cli.exit.code(), 6);
        let m = &cli.message;
        assert!(m.contains("poisson/artifact.jsonl: not stored in "), "{m}");
        assert!(
            m.contains("p.db: the disk holding the database is full: free some space"),
            "{m}"
        );
    }
    assert_eq!(
        before,
        db_bytes(&db_path),
        "the failed ingest changed nothing"
    );
    {
        let mut conn = db::open(&db_path, Mode::ReadOnly).unwrap();
        let err = stormlog::ingest::ingest_path(&mut conn, &other, &opts).unwrap_err();
        let cli = stormlog::cli::commands::ingest_failure(err, &other, &db_path);
        assert_eq!(cli.exit, Exit::Database);
        assert!(
            cli.message.contains("cannot be written here"),
            "{}",
            cli.message
        );
    }
    assert_eq!(before, db_bytes(&db_path));
}

/// The samples stored for a run, by counting them in SQL.
fn stored_samples(dir: &Path) -> i64 {
    let conn = rusqlite::Connection::open(dir.join("p.db")).unwrap();
    conn.query_row("SELECT count(*) FROM server_samples", [], |r| r.get(0))
        .unwrap()
}

#[test]
fn defect_8_a_killed_collector_s_file_ingested_after_it_is_stored_once() {
    let dir = tempfile::tempdir().unwrap();
    let mut target = std::process::Command::new("sleep")
        .arg("30")
        .spawn()
        .unwrap();
    let pid = target.id().to_string();
    let mut collector = crate::common::bin()
        .current_dir(dir.path())
        .args([
            "collect-server",
            "--run-id",
            "live",
            "--pid",
            &pid,
            "--no-gpu",
        ])
        .args(["--interval", "0.02", "--duration", "20"])
        .args(["--output", "t.jsonl", "--db", "p.db"])
        .env_remove("STORMLOG_DB")
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Wait for a few samples in the file, then kill the collector outright.
    let file = dir.path().join("t.jsonl");
    for _ in 0..500 {
        let lines = std::fs::read_to_string(&file).map_or(0, |t| t.lines().count());
        if lines >= 5 {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    collector.kill().unwrap();
    collector.wait().unwrap();
    let _ = target.kill();
    let _ = target.wait();
    let in_file = std::fs::read_to_string(&file).unwrap().lines().count() as i64;
    assert!(in_file >= 5, "{in_file} samples");
    let out = run_in(dir.path(), &["ingest", "--db", "p.db", "t.jsonl"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stored_samples(dir.path()), in_file, "each sample once");
    let again = run_in(dir.path(), &["ingest", "--db", "p.db", "t.jsonl"]);
    assert!(String::from_utf8_lossy(&again.stdout).contains("unchanged"));
    assert_eq!(stored_samples(dir.path()), in_file);
}

/// The collector's database writes wait for another writer's lock on a
/// thread of their own: with the database locked for the whole collection,
/// sampling goes on at its interval (before, each poll waited for the lock
/// and the file got a handful of samples). The count is a lenient bound,
/// not a timing: 50 polls are due, 10 are asked for.
#[test]
fn defect_9_sampling_does_not_wait_on_a_locked_database() {
    let dir = tempfile::tempdir().unwrap();
    let good = fixtures().join("cases/replay/artifact.jsonl");
    let ok = run_in(
        dir.path(),
        &["ingest", "--db", "p.db", good.to_str().unwrap()],
    );
    assert_eq!(ok.status.code(), Some(0), "{}", stderr(&ok));
    let mut target = std::process::Command::new("sleep")
        .arg("30")
        .spawn()
        .unwrap();
    let pid = target.id().to_string();
    let lock = rusqlite::Connection::open(dir.path().join("p.db")).unwrap();
    lock.execute_batch("BEGIN IMMEDIATE").unwrap();
    let mut collector = crate::common::bin()
        .current_dir(dir.path())
        .args([
            "collect-server",
            "--run-id",
            "live",
            "--pid",
            &pid,
            "--no-gpu",
        ])
        .args(["--interval", "0.02", "--duration", "1"])
        .args(["--output", "t.jsonl", "--db", "p.db"])
        .env_remove("STORMLOG_DB")
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let file = dir.path().join("t.jsonl");
    let lines = || std::fs::read_to_string(&file).map_or(0, |t| t.lines().count());
    // Held until the collection is over (or long past its second).
    for _ in 0..300 {
        if lines() >= 10 {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let sampled = lines();
    lock.execute_batch("COMMIT").unwrap();
    drop(lock);
    let status = collector.wait().unwrap();
    let _ = target.kill();
    let _ = target.wait();
    assert!(
        sampled >= 10,
        "{sampled} samples while the database was locked"
    );
    assert!(status.success());
    // Once the lock is gone the queued polls are stored, each once.
    assert_eq!(stored_samples(dir.path()), lines() as i64);
}

/// Found by the fuzzer: goodput's token sum wrapped (a debug build
/// panicked) for a met request counting 1e308 tokens. The figures are the
/// reference's.
#[test]
fn defect_1_goodput_sums_tokens_exactly() {
    let dir = tempfile::tempdir().unwrap();
    let case = fixtures().join("cases/slo_override/artifact.jsonl");
    let text = std::fs::read_to_string(case).unwrap();
    let mut lines: Vec<String> = text.split('\n').map(str::to_owned).collect();
    lines[86] = lines[86].replace("\"output_tokens\": 20", "\"output_tokens\": 1e308");
    std::fs::write(dir.path().join("a.jsonl"), lines.join("\n")).unwrap();
    let out = analyze_and_report(dir.path(), &dir.path().join("a.jsonl"));
    let goodput = |c: &str| out["cases"][c]["slo"]["goodput_lower_output_tps"].clone();
    assert_eq!(goodput("c2_in64_out20"), 1.2516680980743036e308);
    assert_eq!(goodput("c6_in64_out20"), 742.4625354216695);
}

/// Defect 1, the storage half: an integer past 64 bits is kept exactly in
/// its own column (as decimal text, where no SQLite integer holds it), not
/// as NULL beside a copy in `extra`; the report read back from those
/// columns equals `analyze`.
#[test]
fn defect_1_integers_past_64_bits_are_kept_in_their_columns() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("p.db");
    let db = db.to_str().unwrap();
    for (field, value) in [
        ("output_tokens", "9223372036854775808"),
        ("output_tokens", "1000000000000000000000000000000"),
        ("total_tokens", "-10000000000000000000000000"),
        ("started_at_ns", "9223372036854775808"),
        ("in_flight_at_dispatch", "9223372036854775808"),
        ("ended_at_ns", "10000000000000000000000000000000000000000"),
    ] {
        analyze_and_report(dir.path(), &mutated_replay(dir.path(), field, value));
        let query = format!(
            "SELECT {field} AS v, typeof({field}) AS t, extra FROM requests \
             WHERE typeof({field}) <> 'integer' AND {field} IS NOT NULL"
        );
        let out = run_in(dir.path(), &["sql", "--db", db, "--format", "json", &query]);
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        let text = String::from_utf8(out.stdout).unwrap();
        let rows: Vec<Value> = text
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| serde_json::from_str(l).expect("a json row"))
            .collect();
        assert_eq!(
            rows,
            [serde_json::json!({"v": value, "t": "text", "extra": null})],
            "{field} = {value}"
        );
    }
}

/// Defect 1: window times past i128 (1.7e38 ns) are exact, as the
/// reference's Python integers are (they were clamped to 2^127 - 1).
#[test]
fn defect_1_window_times_past_128_bits_are_exact() {
    let dir = tempfile::tempdir().unwrap();
    let text =
        std::fs::read_to_string(fixtures().join("cases/replay/artifact.jsonl")).expect("fixture");
    let huge = "10000000000000000000000000000000000000000";
    let mutated = text.replace(
        "\"drained_at_ns\": 1795961328455614553",
        &format!("\"drained_at_ns\": {huge}"),
    );
    assert_ne!(mutated, text);
    let path = dir.path().join("window.jsonl");
    std::fs::write(&path, mutated).unwrap();
    let out = analyze_and_report(dir.path(), &path);
    let case = &out["cases"]["replay_in64_out16"];
    for kind in ["measured_span", "drain"] {
        // float(10^40 - start) / 1e9, as the reference prints it.
        assert_eq!(case["intervals"][kind]["seconds"], 1.0000000000000001e31);
    }
    assert_eq!(case["arrivals"]["drain_seconds"], 1.0000000000000001e31);
    assert_eq!(case["arrivals"]["window_seconds"], 0.700423155);
    // The printed digits (serde_json here would read them as a float).
    let a = path.to_str().unwrap();
    let printed = run_in(dir.path(), &["infer", "analyze", a, "--format", "json"]).stdout;
    let printed = String::from_utf8(printed).unwrap();
    assert_eq!(
        printed
            .matches(&format!("\"ended_at_ns\": {huge},"))
            .count(),
        2,
        "measured_span and drain end at 10^40 exactly"
    );
    // A segment reaching past 2^127 ns from the start: its end is exact
    // (start + round(1e30 * 1e9)), where it overflowed (a panic).
    let db = dir.path().join("p.db");
    let out = run_in(
        dir.path(),
        &[
            "report",
            "--db",
            db.to_str().unwrap(),
            "replay",
            "--segment",
            "a=0:1e30",
            "--format",
            "json",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let printed = String::from_utf8(out.stdout).unwrap();
    assert!(
        printed.contains("\"ended_at_ns\": 1000000000000000090826689784759539765184,"),
        "the segment's exact end"
    );
}
