//! Tests of `stormlog sql`: refusals, sources of the query, and every query
//! of docs/sql.md against a database of the conformance cases.
#![allow(clippy::unwrap_used)]

use super::*;
use std::path::Path;

const CASES: &str = "tests/fixtures/conformance/cases";

/// Ingests the named conformance cases (artifacts, compare arms and
/// telemetry) into a fresh database file.
fn database(cases: &[&str]) -> (tempfile::TempDir, PathBuf, Vec<(String, PathBuf)>) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("conformance.db");
    let mut conn = db::open(&path, db::Mode::ReadWrite).unwrap();
    let mut artifacts = Vec::new();
    for case in cases {
        let mut files: Vec<PathBuf> = std::fs::read_dir(Path::new(CASES).join(case))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| {
                let name = p.file_name().unwrap().to_string_lossy().into_owned();
                name.ends_with(".jsonl")
                    && (name == "artifact.jsonl"
                        || name.starts_with("telemetry")
                        || name.starts_with("baseline_")
                        || name.starts_with("candidate_"))
            })
            .collect();
        // Artifacts first, so telemetry attaches to a run with its artifact.
        files.sort_by_key(|p| {
            (
                p.file_name()
                    .unwrap()
                    .to_string_lossy()
                    .starts_with("telemetry"),
                p.clone(),
            )
        });
        for f in files {
            let done = crate::ingest::ingest_path(&mut conn, &f, &Default::default())
                .unwrap_or_else(|e| panic!("{}: {e}", f.display()));
            if done.kind == crate::ingest::Kind::Artifact
                && !artifacts.iter().any(|(r, _)| *r == done.run_id)
            {
                artifacts.push((done.run_id, f));
            }
        }
    }
    (dir, path, artifacts)
}

fn all_cases() -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(CASES)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

fn args(db: &Path, format: Format, query: &str) -> SqlConfig {
    SqlConfig {
        db: db.to_owned(),
        format,
        file: None,
        output: None,
        query: Some(query.into()),
        timeout: 60.0,
    }
}

fn sql(db: &Path, format: Format, query: &str) -> Result<String, SqlError> {
    let mut out = Vec::new();
    let mut err = Vec::new();
    run_with_input(
        &args(db, format, query),
        &mut std::io::empty(),
        &mut out,
        &mut err,
    )?;
    Ok(String::from_utf8(out).unwrap())
}

fn count(db: &Path, table: &str) -> i64 {
    let conn = open_read_only(db).unwrap();
    conn.query_row(&format!("SELECT count(*) FROM {table}"), [], |r| r.get(0))
        .unwrap()
}

#[test]
fn writes_are_refused_and_change_nothing() {
    let (dir, db, _) = database(&["failures"]);
    let before = (count(&db, "requests"), count(&db, "runs"));
    let other = dir.path().join("other.db");
    let cases = [
        (
            "INSERT INTO runs (run_id, ingested_at) VALUES ('x', 'now')",
            "INSERT would change the database",
        ),
        ("DELETE FROM requests", "DELETE would change the database"),
        (
            "UPDATE requests SET ttft_ms = 0",
            "UPDATE would change the database",
        ),
        ("CREATE TABLE t (x)", "CREATE would change the database"),
        (
            "CREATE TEMP TABLE t (x)",
            "CREATE would change the database",
        ),
        ("DROP VIEW v_requests", "DROP would change the database"),
        ("PRAGMA user_version = 9", "a PRAGMA that sets a value"),
        ("PRAGMA user_version(9)", "a PRAGMA that sets a value"),
        ("pragma query_only = off", "a PRAGMA that sets a value"),
        (
            &format!("ATTACH '{}' AS o", other.display()),
            "ATTACH is not allowed",
        ),
        (
            &format!("VACUUM INTO '{}'", other.display()),
            "VACUUM writes a database file",
        ),
        // A write after reads refuses the whole query: the SELECT does not run either.
        (
            "SELECT 1; /* sneaky */ DELETE FROM runs",
            "statement 2 refused: DELETE",
        ),
    ];
    for (q, expected) in cases {
        let mut out = Vec::new();
        let e = run_with_input(
            &args(&db, Format::Table, q),
            &mut std::io::empty(),
            &mut out,
            &mut Vec::new(),
        )
        .unwrap_err();
        let msg = e.to_string();
        assert!(matches!(e, SqlError::Refused(_)), "{q}: {msg}");
        assert!(msg.contains(expected), "{q}: {msg}");
        assert!(msg.contains("nothing was changed"), "{q}: {msg}");
        assert_eq!(e.exit(), Exit::InvalidInput);
        assert!(
            out.is_empty(),
            "{q}: printed {:?}",
            String::from_utf8_lossy(&out)
        );
    }
    assert!(!other.exists(), "ATTACH or VACUUM INTO created a file");
    assert_eq!((count(&db, "requests"), count(&db, "runs")), before);
    assert_eq!(before, (80, 1));
    let conn = open_read_only(&db).unwrap();
    let v: i64 = conn
        .pragma_query_value(None, "user_version", |r| r.get(0))
        .unwrap();
    assert_eq!(v, db::SCHEMA_VERSION);
}

#[test]
fn reading_pragmas_and_several_statements_run() {
    let (_dir, db, _) = database(&["failures"]);
    let text = sql(
        &db,
        Format::Csv,
        "PRAGMA table_info(v_runs); SELECT count(*) AS n FROM v_requests;\nSELECT 'a,b' AS s, NULL AS z",
    )
    .unwrap();
    let blocks: Vec<&str> = text.split("\n\n").collect();
    assert_eq!(blocks.len(), 3, "{text}");
    assert!(
        blocks[0].starts_with("cid,name,type,notnull,dflt_value,pk\n0,run_id,"),
        "{text}"
    );
    assert_eq!(blocks[1], "n\n80");
    assert_eq!(blocks[2], "s,z\n\"a,b\",\n");
    assert_eq!(
        sql(&db, Format::Json, "SELECT status_key, count(*) AS n FROM v_requests GROUP BY 1 ORDER BY 1").unwrap(),
        "{\"status_key\":\"error\",\"n\":19}\n{\"status_key\":\"ok\",\"n\":50}\n{\"status_key\":\"rejected\",\"n\":11}\n"
    );
}

#[test]
fn query_comes_from_file_or_stdin() {
    let (dir, db, _) = database(&["failures"]);
    let file = dir.path().join("q.sql");
    std::fs::write(&file, "SELECT failed FROM v_runs").unwrap();
    let mut a = args(&db, Format::Csv, "");
    a.query = None;
    a.file = Some(file);
    let mut out = Vec::new();
    run_with_input(&a, &mut std::io::empty(), &mut out, &mut Vec::new()).unwrap();
    assert_eq!(String::from_utf8(out).unwrap(), "failed\n30\n");
    a.file = None;
    let mut out = Vec::new();
    let mut stdin: &[u8] = b"SELECT ok FROM v_runs;";
    run_with_input(&a, &mut stdin, &mut out, &mut Vec::new()).unwrap();
    assert_eq!(String::from_utf8(out).unwrap(), "ok\n50\n");
    let mut stdin: &[u8] = b"  -- nothing here\n";
    let e = run_with_input(&a, &mut stdin, &mut Vec::new(), &mut Vec::new()).unwrap_err();
    assert_eq!(e.exit(), Exit::Usage, "{e}");
    let e = sql(&db, Format::Csv, "SELECT nope FROM v_runs").unwrap_err();
    assert!(
        e.to_string()
            .starts_with("statement 1: no such column: nope"),
        "{e}"
    );
    let e = sql(&dir.path().join("missing.db"), Format::Csv, "SELECT 1").unwrap_err();
    assert!(e.to_string().starts_with("no project database at "), "{e}");
    assert_eq!(e.exit(), Exit::InvalidInput);
}

// ----- every query of docs/sql.md against the conformance database -----

const DOC: &str = include_str!("../../docs/sql.md");

/// The ```sql blocks of docs/sql.md, keyed by their first comment line.
fn doc_queries() -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut rest = DOC;
    while let Some(start) = rest.find("```sql\n") {
        let body = &rest[start + 7..];
        let end = body.find("```").unwrap();
        let q = &body[..end];
        let title = q
            .lines()
            .next()
            .unwrap()
            .trim_start_matches("--")
            .trim()
            .to_owned();
        out.push((title, q.to_owned()));
        rest = &body[end + 3..];
    }
    out
}

struct Res<'a>(&'a ResultSet);

impl Res<'_> {
    fn col(&self, name: &str) -> usize {
        self.0
            .columns
            .iter()
            .position(|c| c == name)
            .unwrap_or_else(|| panic!("no column {name}"))
    }
    fn f(&self, row: usize, name: &str) -> Option<f64> {
        match &self.0.rows[row][self.col(name)] {
            Cell::Null => None,
            Cell::Int(i) => Some(*i as f64),
            Cell::Real(f) => Some(*f),
            c => panic!("{name}: not a number: {c:?}"),
        }
    }
    fn i(&self, row: usize, name: &str) -> i64 {
        match &self.0.rows[row][self.col(name)] {
            Cell::Int(i) => *i,
            c => panic!("{name}: not an integer: {c:?}"),
        }
    }
    fn s(&self, row: usize, name: &str) -> String {
        match &self.0.rows[row][self.col(name)] {
            Cell::Text(s) => s.clone(),
            c => panic!("{name}: not text: {c:?}"),
        }
    }
    fn len(&self) -> usize {
        self.0.rows.len()
    }
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-12 * b.abs().max(1.0)
}

/// Reports of every stored artifact, built by the library's `analyze`.
fn reports(
    artifacts: &[(String, PathBuf)],
) -> std::collections::BTreeMap<String, serde_json::Value> {
    artifacts
        .iter()
        .map(|(run, path)| {
            let req = crate::ops::analyze::AnalyzeConfig {
                artifact: path.clone(),
                ..Default::default()
            };
            let rep = crate::ops::analyze::analyze(&req)
                .unwrap_or_else(|e| panic!("{}: {}", path.display(), e.message));
            (run.clone(), rep.report.json)
        })
        .collect()
}

/// Request records of an artifact file, decoded by the test itself.
fn raw_requests(case: &str) -> Vec<serde_json::Value> {
    let text = std::fs::read_to_string(Path::new(CASES).join(case).join("artifact.jsonl")).unwrap();
    text.lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .filter(|v| v["event_type"] == "infer.request")
        .collect()
}

#[test]
fn every_documented_query_runs_and_gives_the_known_numbers() {
    let cases = all_cases();
    let refs: Vec<&str> = cases.iter().map(String::as_str).collect();
    let (_dir, db, artifacts) = database(&refs);
    let reports = reports(&artifacts);
    let conn = open_read_only(&db).unwrap();
    let queries = doc_queries();
    assert!(
        queries.len() >= 10,
        "docs/sql.md has {} queries",
        queries.len()
    );
    for (title, q) in &queries {
        let results = query(&conn, q).unwrap_or_else(|e| panic!("{title}: {e}"));
        assert_eq!(results.len(), 1, "{title}");
        let r = Res(&results[0]);
        assert!(r.len() > 0, "{title}: no rows");
        check(title, &r, &reports, &conn);
        // Every format renders every documented result.
        for f in [Format::Table, Format::Csv, Format::Json, Format::Markdown] {
            format::write(f, &results[0], &mut Vec::new()).unwrap();
        }
    }
}

fn check(
    title: &str,
    r: &Res<'_>,
    reports: &std::collections::BTreeMap<String, serde_json::Value>,
    conn: &Connection,
) {
    let summary = |run: &str, key: &str| reports[run]["summary"][key].clone();
    match title {
        "Runs at a glance" => {
            // Every artifact's run, plus `run-b`: telemetry whose artifact was never ingested.
            assert_eq!(r.len(), reports.len() + 1);
            for row in 0..r.len() {
                let run = r.s(row, "run_id");
                if run == "run-b" {
                    assert_eq!(r.i(row, "requests"), 0);
                    continue;
                }
                assert_eq!(
                    r.i(row, "requests"),
                    summary(&run, "total_requests").as_i64().unwrap(),
                    "{run}"
                );
                assert_eq!(
                    r.i(row, "failed"),
                    summary(&run, "failed_requests").as_i64().unwrap(),
                    "{run}"
                );
            }
        }
        "p95 TTFT per case of every run, in plain SQL (window functions): the" => {
            // The plain-SQL interpolation agrees with the report's to the
            // three decimals the query rounds to.
            let mut seen = 0;
            for row in 0..r.len() {
                let (run, case) = (r.s(row, "run_id"), r.s(row, "case_key"));
                let want = reports[&run]["cases"][&case]["latency_ms"]["ttft_p95"].as_f64();
                let want = want.map(|v| (v * 1000.0).round() / 1000.0);
                assert_eq!(r.f(row, "ttft_p95_ms"), want, "{run} {case}");
                seen += 1;
            }
            assert!(seen >= 20, "{seen}");
        }
        "p95 TTFT per case of every run" => {
            let mut seen = 0;
            for row in 0..r.len() {
                let (run, case) = (r.s(row, "run_id"), r.s(row, "case_key"));
                let lat = &reports[&run]["cases"][&case]["latency_ms"];
                for (col, key) in [
                    ("ttft_p50_ms", "ttft_p50"),
                    ("ttft_p95_ms", "ttft_p95"),
                    ("ttft_p99_ms", "ttft_p99"),
                ] {
                    // Bit for bit: the aggregate is the report's method.
                    assert_eq!(r.f(row, col), lat[key].as_f64(), "{run} {case} {key}");
                }
                seen += 1;
            }
            let with_ttft: usize = reports
                .values()
                .map(|rep| {
                    rep["cases"]
                        .as_object()
                        .unwrap()
                        .values()
                        .filter(|c| !c["latency_ms"]["ttft_p95"].is_null())
                        .count()
                })
                .sum();
            assert!(with_ttft > 50, "{with_ttft}");
            assert!(seen >= with_ttft);
        }
        "p95 TTFT per run, all cases pooled" => {
            let runs_with_ok: i64 = conn
                .query_row("SELECT count(*) FROM v_runs WHERE ok > 0", [], |x| x.get(0))
                .unwrap();
            assert_eq!(r.len() as i64, runs_with_ok);
            let mut single = 0;
            for row in 0..r.len() {
                let run = r.s(row, "run_id");
                let cases = reports[&run]["cases"].as_object().unwrap();
                if cases.len() == 1 {
                    let only = cases.values().next().unwrap();
                    assert_eq!(
                        r.f(row, "ttft_p95_ms"),
                        only["latency_ms"]["ttft_p95"].as_f64(),
                        "{run}"
                    );
                    single += 1;
                }
            }
            assert!(single >= 10);
        }
        "Failures by status across runs" => {
            let mut got: std::collections::BTreeMap<
                String,
                serde_json::Map<String, serde_json::Value>,
            > = Default::default();
            for row in 0..r.len() {
                got.entry(r.s(row, "run_id"))
                    .or_default()
                    .insert(r.s(row, "status"), r.i(row, "requests").into());
            }
            for (run, rep) in reports {
                let want = rep["summary"]["failures_by_status"].as_object().unwrap();
                assert_eq!(got.get(run).cloned().unwrap_or_default(), *want, "{run}");
            }
            assert_eq!(got["failures"]["error"], 19);
        }
        "What the failures said" => {
            let total: i64 = (0..r.len()).map(|row| r.i(row, "requests")).sum();
            assert_eq!(
                total,
                summary("failures", "failed_requests").as_i64().unwrap()
            );
            let errors: i64 = (0..r.len())
                .filter(|&row| r.s(row, "status") == "error")
                .map(|row| r.i(row, "requests"))
                .sum();
            assert_eq!(errors, 19);
            assert_eq!(
                (r.s(0, "status"), r.f(0, "http_status"), r.i(0, "requests")),
                ("error".into(), Some(500.0), 11)
            );
        }
        "The slowest requests of a case" => {
            let mut e2e: Vec<f64> = raw_requests("closed_matrix")
                .iter()
                .filter(|v| v["case_id"] == "c8_in256_out24" && v["phase"] == "measured")
                .filter_map(|v| v["e2e_latency_ms"].as_f64())
                .collect();
            e2e.sort_by(|a, b| b.total_cmp(a));
            assert_eq!(r.len(), 5);
            let got: Vec<f64> = (0..5).map(|row| r.f(row, "e2e_ms").unwrap()).collect();
            assert_eq!(got, e2e[..5]);
        }
        "Two runs' TTFT distributions side by side" => {
            assert_eq!(r.len(), 4);
            for (col, run) in [
                ("baseline_ms", "cmp_baseline_b1"),
                ("candidate_ms", "cmp_candidate_b1"),
            ] {
                let case = reports[run]["cases"]
                    .as_object()
                    .unwrap()
                    .values()
                    .next()
                    .unwrap();
                assert_eq!(r.f(0, col), case["latency_ms"]["ttft_p50"].as_f64());
                assert_eq!(r.f(2, col), case["latency_ms"]["ttft_p95"].as_f64());
                assert_eq!(r.f(3, col), case["latency_ms"]["ttft_p99"].as_f64());
            }
            assert_eq!(r.i(1, "p"), 90);
        }
        "Case summary of a run" => {
            assert_eq!(r.len(), 1);
            assert_eq!(
                (r.i(0, "requests"), r.i(0, "ok"), r.i(0, "failed")),
                (80, 50, 30)
            );
            assert_eq!(
                r.f(0, "failure_rate"),
                summary("failures", "failure_rate").as_f64()
            );
        }
        "Throughput per case" => {
            let mut checked = 0;
            for row in 0..r.len() {
                let (run, case) = (r.s(row, "run_id"), r.s(row, "case_key"));
                let t = &reports[&run]["cases"][&case]["throughput"];
                if t["interval_kind"] != "measured_span" {
                    continue;
                }
                let rps = t["requests_per_second"].as_f64().unwrap();
                assert!(
                    close(r.f(row, "requests_per_s").unwrap(), rps),
                    "{run} {case}"
                );
                if let Some(tps) = t["output_tokens_per_second"].as_f64() {
                    assert!(
                        close(r.f(row, "output_tokens_per_s").unwrap(), tps),
                        "{run} {case}"
                    );
                }
                checked += 1;
            }
            assert!(checked >= 20, "{checked}");
        }
        "Goodput of every run under a threshold written inline" => {
            // slo_recorded's recorded policy is exactly ttft <= 25 ms and e2e <= 70 ms.
            let mut checked = 0;
            for row in 0..r.len() {
                if r.s(row, "run_id") != "slo_recorded" {
                    continue;
                }
                let slo = &reports["slo_recorded"]["cases"][&r.s(row, "case_key")]["slo"];
                assert_eq!(r.i(row, "met"), slo["met"].as_i64().unwrap());
                assert!(close(
                    r.f(row, "goodput_rps").unwrap(),
                    slo["goodput_lower_rps"].as_f64().unwrap()
                ));
                assert!(close(
                    r.f(row, "attainment").unwrap(),
                    slo["attainment_lower"].as_f64().unwrap()
                ));
                checked += 1;
            }
            assert_eq!(checked, 2);
        }
        "Server memory peak per case" => {
            let path = Path::new(CASES).join("telemetry_joined");
            let req = crate::ops::analyze::AnalyzeConfig {
                artifact: path.join("artifact.jsonl"),
                server_telemetry: vec![path.join("telemetry.jsonl")],
                direct_server: true,
                ..Default::default()
            };
            let rep = crate::ops::analyze::analyze(&req)
                .map_err(|e| e.message)
                .unwrap()
                .report
                .json;
            let mut checked = 0;
            for row in 0..r.len() {
                if r.s(row, "run_id") != "telemetry_joined" {
                    continue;
                }
                let obs = &rep["cases"][&r.s(row, "case_key")]["memory"]["server_observations"]
                    ["process_rss_bytes"];
                assert_eq!(
                    r.i(row, "peak_bytes"),
                    obs["maximum_recorded_bytes"].as_i64().unwrap()
                );
                assert_eq!(r.i(row, "samples"), obs["valid_samples"].as_i64().unwrap());
                checked += 1;
            }
            assert_eq!(checked, 3);
            assert_eq!(
                r.i(0, "peak_bytes") as f64 / 1048576.0,
                r.f(0, "peak_mib").unwrap()
            );
        }
        "Requests per second of a run, second by second" => {
            let started: i64 = (0..r.len()).map(|row| r.i(row, "started")).sum();
            let failed: i64 = (0..r.len()).map(|row| r.i(row, "failed")).sum();
            assert_eq!((started, failed), (80, 30));
        }
        "Fields recorded as null" => {
            let raw = raw_requests("failures")
                .iter()
                .filter(|v| v.get("ttft_ms").is_some_and(serde_json::Value::is_null))
                .count() as i64;
            assert!(raw > 0);
            let row = (0..r.len())
                .find(|&row| r.s(row, "run_id") == "failures")
                .unwrap();
            assert_eq!(r.i(row, "requests"), raw);
        }
        "Warmup against measured" => {
            let raw = raw_requests("warmup");
            let n = |phase: &str| {
                raw.iter()
                    .filter(|v| v["phase"] == phase && v["status"] == "ok")
                    .count() as i64
            };
            assert_eq!(r.len(), 2);
            assert_eq!(
                (r.s(0, "phase"), r.i(0, "requests")),
                ("measured".into(), n("measured"))
            );
            assert_eq!(
                (r.s(1, "phase"), r.i(1, "requests")),
                ("warmup".into(), n("warmup"))
            );
            assert!(n("warmup") > 0);
        }
        other => panic!("docs/sql.md query {other:?} has no check here: add one"),
    }
}
