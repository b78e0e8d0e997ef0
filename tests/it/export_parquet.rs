//! `export --parquet`: every conformance run exported and read back with the
//! parquet crate's own reader equals `stormlog sql` over the views, row for
//! row; exporting again with nothing changed writes nothing; an export
//! killed with SIGKILL leaves the last complete export readable.
#![cfg(feature = "parquet")]
use std::collections::BTreeMap;
use std::fs::File;
use std::path::{Path, PathBuf};

use parquet::basic::{LogicalType, TimeUnit};
use parquet::file::reader::{FileReader, SerializedFileReader};
use parquet::record::Field;
use serde_json::Value;

use crate::common::{bin, fixtures};

fn stormlog(db: &Path, args: &[&str]) -> String {
    let out = bin()
        .arg(args[0])
        .arg("--db")
        .arg(db)
        .args(&args[1..])
        .env_remove("STORMLOG_DB")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "stormlog {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// `stormlog sql --format json`'s rows, each with its columns in the order
/// of the csv format's header (JSON objects here keep no order).
fn sql_rows(db: &Path, query: &str) -> Vec<Vec<(String, Value)>> {
    let csv = stormlog(db, &["sql", "--format", "csv", query]);
    let header: Vec<&str> = csv.lines().next().unwrap_or_default().split(',').collect();
    stormlog(db, &["sql", "--format", "json", query])
        .lines()
        .map(|l| {
            let mut v: serde_json::Map<String, Value> = serde_json::from_str(l).unwrap();
            assert_eq!(v.len(), header.len(), "{query}");
            header
                .iter()
                .map(|&name| (name.to_owned(), v.remove(name).unwrap()))
                .collect()
        })
        .collect()
}

/// A Parquet file's rows through the crate's record reader, as JSON values;
/// also checks that every `*_ns` instant column is TIMESTAMP(NANOS, UTC).
fn parquet_rows(path: &Path) -> Vec<Vec<(String, Value)>> {
    let reader = SerializedFileReader::new(File::open(path).unwrap()).unwrap();
    let schema = reader.metadata().file_metadata().schema_descr_ptr();
    for col in schema.columns() {
        if col.name().ends_with("_at_ns") || col.name() == "process_start_ns" {
            assert_eq!(
                col.logical_type_ref(),
                Some(&LogicalType::timestamp(true, TimeUnit::NANOS)),
                "{}: {}",
                path.display(),
                col.name()
            );
        }
    }
    reader
        .get_row_iter(None)
        .unwrap()
        .map(|row| {
            row.unwrap()
                .get_column_iter()
                .map(|(name, f)| {
                    let v = match f {
                        Field::Null => Value::Null,
                        Field::Long(x) => Value::from(*x),
                        Field::Double(x) => {
                            serde_json::Number::from_f64(*x).map_or(Value::Null, Value::Number)
                        }
                        Field::Str(s) => Value::from(s.as_str()),
                        other => panic!("{}: {name}: unexpected {other:?}", path.display()),
                    };
                    (name.clone(), v)
                })
                .collect()
        })
        .collect()
}

fn quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "''"))
}

fn partition(dir: &Path, table: &str, run: &str) -> PathBuf {
    dir.join(table)
        .join(stormlog::columnar::partition_dir(run))
        .join("part-0.parquet")
}

/// Every file of a case folder that ingests: artifacts, then telemetry.
fn case_files(case: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(case)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            let n = p.file_name().unwrap().to_string_lossy();
            n == "artifact.jsonl" || n.starts_with("baseline_b") || n.starts_with("candidate_b")
        })
        .collect();
    files.sort();
    let mut telemetry: Vec<PathBuf> = std::fs::read_dir(case)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("telemetry")
        })
        .collect();
    telemetry.sort();
    files.extend(telemetry);
    files
}

/// Compares the export of every run in `db` with `stormlog sql` over the views.
fn assert_export_equals_views(db: &Path, dir: &Path) -> usize {
    let runs: Vec<String> = sql_rows(db, "SELECT run_id FROM v_runs ORDER BY run_id")
        .into_iter()
        .map(|r| r[0].1.as_str().unwrap().to_owned())
        .collect();
    let expected = sql_rows(db, "SELECT * FROM v_runs ORDER BY run_id");
    assert_eq!(parquet_rows(&dir.join("runs.parquet")), expected, "runs");
    let mut requests = 0;
    for run in &runs {
        let q = quote(run);
        for (table, query) in [
            (
                "requests",
                format!("SELECT * FROM v_requests WHERE run_id = {q} ORDER BY seq"),
            ),
            (
                "cases",
                format!("SELECT * FROM v_case_summary WHERE run_id = {q} ORDER BY phase, case_key"),
            ),
            (
                "telemetry_samples",
                format!("SELECT * FROM v_server_samples WHERE run_id = {q} ORDER BY file_id, seq"),
            ),
        ] {
            let expected = sql_rows(db, &query);
            let file = partition(dir, table, run);
            if expected.is_empty() {
                assert!(!file.exists(), "{}: a file for no rows", file.display());
                continue;
            }
            let got = parquet_rows(&file);
            assert_eq!(got.len(), expected.len(), "{}", file.display());
            for (i, (g, e)) in got.iter().zip(&expected).enumerate() {
                assert_eq!(g, e, "{} row {i}", file.display());
            }
            if table == "requests" {
                requests += got.len();
            }
        }
    }
    requests
}

#[test]
fn every_conformance_run_reads_back_as_the_views_say() {
    let tmp = tempfile::tempdir().unwrap();
    let cases: Vec<PathBuf> = crate::cases::all(crate::cases::CONFORMANCE)
        .into_iter()
        .map(|c| c.dir)
        .collect();
    let mut runs = 0;
    let mut requests = 0;
    let mut samples_seen = false;
    for (i, case) in cases.iter().enumerate() {
        let files = case_files(case);
        if files.is_empty() {
            continue;
        }
        let db = tmp.path().join(format!("p{i}.db"));
        let dir = tmp.path().join(format!("lake{i}"));
        for f in &files {
            // A telemetry file written for another run id is refused (the
            // telemetry_wrong_run case); the rest attach.
            let _ = bin()
                .arg("ingest")
                .arg("--db")
                .arg(&db)
                .arg(f)
                .env_remove("STORMLOG_DB")
                .output()
                .unwrap();
        }
        stormlog(
            &db,
            &["export", "--parquet", dir.to_str().unwrap(), "--all"],
        );
        requests += assert_export_equals_views(&db, &dir);
        runs += std::fs::read_dir(dir.join("requests")).unwrap().count();
        samples_seen |= dir.join("telemetry_samples").exists();
    }
    assert!(runs >= 40, "{runs} runs");
    assert!(requests > 5_000, "{requests} requests");
    assert!(samples_seen);
}

/// Path, length and modification time of every file under `dir`.
fn listing(dir: &Path) -> BTreeMap<PathBuf, (u64, std::time::SystemTime)> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let e = e.unwrap();
            let meta = e.metadata().unwrap();
            if meta.is_dir() {
                stack.push(e.path());
            } else {
                out.insert(e.path(), (meta.len(), meta.modified().unwrap()));
            }
        }
    }
    out
}

#[test]
fn exporting_again_writes_only_what_changed() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("p.db");
    let dir = tmp.path().join("lake");
    let d = dir.to_str().unwrap();
    let cases = fixtures().join("cases");
    let burst = cases.join("burst/artifact.jsonl");
    let failures = cases.join("failures/artifact.jsonl");
    stormlog(&db, &["ingest", burst.to_str().unwrap()]);
    let first = stormlog(&db, &["export", "--parquet", d, "--all"]);
    assert!(first.contains("1 run(s) written (64 requests"), "{first}");
    let before = listing(&dir);
    std::thread::sleep(std::time::Duration::from_millis(20));

    let again = stormlog(&db, &["export", "--parquet", d, "--all"]);
    assert!(again.contains("0 run(s) written"), "{again}");
    assert!(again.contains("1 unchanged"), "{again}");
    assert!(
        again.contains("nothing changed; nothing written"),
        "{again}"
    );
    assert_eq!(listing(&dir), before);

    // A new run: only its partition, runs.parquet and the manifest are written.
    stormlog(&db, &["ingest", failures.to_str().unwrap()]);
    let third = stormlog(&db, &["export", "--parquet", d, "--all"]);
    assert!(third.contains("1 run(s) written (80 requests"), "{third}");
    let after = listing(&dir);
    for (path, stamp) in &before {
        let name = path
            .strip_prefix(&dir)
            .unwrap()
            .to_string_lossy()
            .into_owned();
        if name == "runs.parquet" || name == "_stormlog.json" {
            assert_ne!(after.get(path), Some(stamp), "{name} not rewritten");
        } else {
            assert_eq!(after.get(path), Some(stamp), "{name} rewritten");
        }
    }
    assert!(partition(&dir, "requests", "failures").exists());
    let manifest: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("_stormlog.json")).unwrap())
            .unwrap();
    assert_eq!(manifest["format"], "stormlog-parquet");
    assert_eq!(manifest["schema_version"], stormlog::db::SCHEMA_VERSION);
    assert_eq!(manifest["runs"]["failures"]["rows"]["requests"], 80);
    assert!(manifest["runs"]["burst"]["content_hash"]
        .as_str()
        .unwrap()
        .starts_with("sha256:"));
    assert_export_equals_views(&db, &dir);

    // Judging under a policy changes what every run's files hold.
    let slo = stormlog(
        &db,
        &["export", "--parquet", d, "--all", "--slo", "ttft:200"],
    );
    assert!(slo.contains("2 run(s) written"), "{slo}");
    let verdicts = parquet_rows(&partition(&dir, "slo_verdicts", "burst"));
    assert!(!verdicts.is_empty());
    assert_eq!(verdicts[0][0], ("run_id".to_owned(), Value::from("burst")));
    let judged = stormlog(
        &db,
        &["report", "--all", "--slo", "ttft:200", "--format", "json"],
    );
    let judged: Vec<Value> = serde_json::from_str(&judged).unwrap();
    let burst_cases = judged.iter().filter(|j| j["run_id"] == "burst").count();
    assert_eq!(verdicts.len(), burst_cases);
    let verdict = verdicts[0].iter().find(|(n, _)| n == "verdict").unwrap();
    assert_eq!(verdict.1, judged[0]["verdict"]);
    // Without it again, the verdicts go.
    stormlog(&db, &["export", "--parquet", d, "--all"]);
    assert!(!partition(&dir, "slo_verdicts", "burst").exists());

    // `--all` from a database without a run removes the run's files;
    // naming runs removes nothing.
    let other = tmp.path().join("other.db");
    stormlog(&other, &["ingest", burst.to_str().unwrap()]);
    let named = stormlog(&other, &["export", "--parquet", d, "burst"]);
    assert!(named.contains("0 removed"), "{named}");
    assert!(partition(&dir, "requests", "failures").exists());
    let all = stormlog(&other, &["export", "--parquet", d, "--all"]);
    assert!(all.contains("1 removed"), "{all}");
    assert!(!partition(&dir, "requests", "failures").exists());
    assert!(!dir.join("requests/run_id=failures").exists());
    assert_export_equals_views(&other, &dir);
}

#[test]
fn a_killed_export_leaves_the_last_one_readable() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("p.db");
    let dir = tmp.path().join("lake");
    let d = dir.to_str().unwrap();
    // Runs of a few thousand requests each, under fresh run ids.
    let src = std::fs::read_to_string(fixtures().join("cases/large/artifact.jsonl")).unwrap();
    let mut files = Vec::new();
    for k in 0..10 {
        let p = tmp.path().join(format!("run{k}.jsonl"));
        std::fs::write(
            &p,
            src.replace("\"run_id\": \"large\"", &format!("\"run_id\": \"big-{k}\"")),
        )
        .unwrap();
        files.push(p);
    }
    let mut args = vec!["ingest".to_owned()];
    args.extend(files.iter().map(|p| p.to_string_lossy().into_owned()));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    stormlog(&db, &args);
    stormlog(&db, &["export", "--parquet", d, "big-0", "big-1"]);
    let complete = std::fs::read_to_string(dir.join("_stormlog.json")).unwrap();

    let mut child = bin()
        .args(["export", "--db"])
        .arg(&db)
        .args(["--parquet", d, "--all"])
        .env_remove("STORMLOG_DB")
        .spawn()
        .unwrap();
    // Kill it once it has started on the new runs, and before it is done.
    let started = partition(&dir, "requests", "big-2");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while !started.exists() && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    let unfinished = child.try_wait().unwrap().is_none();
    let _ = child.kill(); // SIGKILL
    let _ = child.wait();
    assert!(unfinished, "the export finished before it could be killed");

    // The last complete export is all there and readable; so is every file
    // a reader's glob finds, new or old.
    let manifest: Value = serde_json::from_str(&complete).unwrap();
    for (run, entry) in manifest["runs"].as_object().unwrap() {
        let n = parquet_rows(&partition(&dir, "requests", run)).len();
        assert_eq!(Value::from(n), entry["rows"]["requests"], "{run}");
    }
    let now: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("_stormlog.json")).unwrap())
            .unwrap();
    assert!(now["runs"].as_object().unwrap().len() < 10);
    for path in listing(&dir).keys() {
        let name = path.file_name().unwrap().to_string_lossy();
        if name.ends_with(".parquet") {
            let rows = parquet_rows(path);
            assert!(!rows.is_empty(), "{}", path.display());
        }
    }
    // runs.parquet matches the manifest beside it (the first export's, or
    // a checkpoint the killed one had made).
    assert_eq!(
        parquet_rows(&dir.join("runs.parquet")).len(),
        now["runs"].as_object().unwrap().len()
    );

    // The next export finishes the job and leaves no temporary file.
    let done = stormlog(&db, &["export", "--parquet", d, "--all"]);
    assert!(done.contains(" unchanged, 0 removed"), "{done}");
    assert!(listing(&dir).keys().all(|p| !p
        .file_name()
        .unwrap()
        .to_string_lossy()
        .ends_with(".tmp")));
    assert_eq!(assert_export_equals_views(&db, &dir), 30_000);
}
