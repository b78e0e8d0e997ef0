//! Other tools' real results (tests/fixtures/peers, made by each tool
//! against the loopback test server; each folder's made.md says how): every
//! import reproduces the tool's own summary from the stored rows, exports
//! its file back, re-ingests as a no-op, and a cut file changes nothing.
use std::path::{Path, PathBuf};

use rusqlite::Connection;
use serde_json::Value;

use stormlog::import::defs::percentile_guidellm;

use crate::common::bin;

fn peers() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/peers")
}

fn ingest(db: &Path, args: &[&str]) -> std::process::Output {
    bin()
        .arg("ingest")
        .arg("--db")
        .arg(db)
        .args(args)
        .env_remove("STORMLOG_DB")
        .output()
        .expect("stormlog runs")
}

/// Ingests `dir` into a fresh database; the database and the run id.
fn imported(dir: &Path) -> (tempfile::TempDir, Connection, String) {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("p.db");
    let out = ingest(&db, &[dir.to_str().unwrap()]);
    assert!(
        out.status.success(),
        "{}: {}",
        dir.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    let conn = Connection::open(&db).unwrap();
    let run: String = conn
        .query_row("SELECT run_id FROM imports", [], |r| r.get(0))
        .unwrap();
    (tmp, conn, run)
}

/// One stored request of an imported run, stormlog's and the tool's figures.
#[derive(Debug)]
struct Row {
    case: String,
    ok: bool,
    ttft: Option<f64>,
    e2e: Option<f64>,
    tpot: Option<f64>,
    itl: Option<f64>,
    out_tokens: Option<f64>,
    gaps: Vec<f64>,
}

fn rows(conn: &Connection) -> Vec<Row> {
    let mut stmt = conn
        .prepare(
            "SELECT v.case_key, v.status = 'ok', v.tool_ttft_ms, v.tool_e2e_ms, v.tool_tpot_ms,
                    v.tool_itl_ms, coalesce(v.tool_output_tokens, v.output_tokens),
                    q.chunk_interarrival_ms
             FROM v_import_requests v JOIN requests q ON q.run_id = v.run_id AND q.seq = v.seq
             WHERE v.phase = 'measured' ORDER BY v.seq",
        )
        .unwrap();
    stmt.query_map([], |r| {
        let blob: Option<Vec<u8>> = r.get(7)?;
        let gaps = blob
            .unwrap_or_default()
            .chunks_exact(8)
            .map(|c| f64::from_le_bytes(c.try_into().unwrap()))
            .collect();
        Ok(Row {
            case: r.get(0)?,
            ok: r.get(1)?,
            ttft: r.get(2)?,
            e2e: r.get(3)?,
            tpot: r.get(4)?,
            itl: r.get(5)?,
            out_tokens: r.get(6)?,
            gaps,
        })
    })
    .unwrap()
    .map(Result::unwrap)
    .collect()
}

fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len() as f64
}

fn close(what: &str, got: f64, want: f64) {
    let rel = ((got - want) / want.abs().max(1e-300)).abs();
    assert!(
        rel <= 1e-9 || (got - want).abs() <= 1e-12,
        "{what}: stored {got}, the tool's summary {want} (relative {rel:e})"
    );
}

/// numpy's default percentile (linear interpolation between closest ranks).
fn linear(values: &[f64], q: f64) -> f64 {
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    let rank = q / 100.0 * (v.len() - 1) as f64;
    let (lo, hi) = (rank.floor() as usize, rank.ceil() as usize);
    v[lo] + (v[hi] - v[lo]) * (rank - lo as f64)
}

fn num(v: &Value, pointer: &str) -> f64 {
    v.pointer(pointer)
        .and_then(Value::as_f64)
        .unwrap_or_else(|| panic!("{pointer} missing"))
}

fn read_json(p: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
}

fn some(v: impl Iterator<Item = Option<f64>>) -> Vec<f64> {
    v.flatten().collect()
}

#[test]
fn aiperf_runs_reproduce_aiperfs_summary() {
    for run in ["chat-conc4", "chat-poisson40-err5"] {
        let dir = peers().join("aiperf").join(run);
        let s = read_json(&dir.join("profile_export_aiperf.json"));
        let (_t, conn, id) = imported(&dir);
        assert_eq!(
            id,
            format!("aiperf-{}", s["benchmark_id"].as_str().unwrap())
        );
        let rows = rows(&conn);
        let ok: Vec<&Row> = rows.iter().filter(|r| r.ok).collect();
        // request_count counts successes; error_request_count is absent at zero.
        assert_eq!(ok.len() as f64, num(&s, "/request_count/avg"), "{run}");
        let errors = s
            .pointer("/error_request_count/avg")
            .and_then(Value::as_f64)
            .unwrap_or(0.0);
        assert_eq!((rows.len() - ok.len()) as f64, errors, "{run}");
        for (metric, values) in [
            ("time_to_first_token", some(ok.iter().map(|r| r.ttft))),
            ("request_latency", some(ok.iter().map(|r| r.e2e))),
            ("inter_token_latency", some(ok.iter().map(|r| r.tpot))),
        ] {
            close(
                &format!("{run} {metric} avg"),
                mean(&values),
                num(&s, &format!("/{metric}/avg")),
            );
            for p in [1.0, 5.0, 25.0, 50.0, 75.0, 90.0, 95.0, 99.0] {
                close(
                    &format!("{run} {metric} p{p}"),
                    linear(&values, p),
                    num(&s, &format!("/{metric}/p{p}")),
                );
            }
        }
        // stormlog's own TTFT and E2E are AIPerf's (same instants).
        let (ttft, e2e): (f64, f64) = conn
            .query_row(
                "SELECT avg(ttft_ms), avg(e2e_ms) FROM v_import_requests WHERE status = 'ok'",
                [],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .unwrap();
        close("stormlog ttft", ttft, num(&s, "/time_to_first_token/avg"));
        close("stormlog e2e", e2e, num(&s, "/request_latency/avg"));
    }
}

#[test]
fn aiperf_failures_keep_their_error_text_and_status() {
    let (_t, conn, _) = imported(&peers().join("aiperf/chat-poisson40-err5"));
    let (n, code, msg): (i64, i64, String) = conn
        .query_row(
            "SELECT count(*), max(http_status), max(error_message) FROM requests WHERE status <> 'ok'",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .unwrap();
    assert_eq!((n, code), (10, 500));
    assert!(msg.contains("injected internal error"), "{msg}");
}

#[test]
fn guidellm_runs_reproduce_guidellms_summary_per_benchmark() {
    for run in ["constant40", "sweep4-err5"] {
        let dir = peers().join("guidellm").join(run);
        let doc = read_json(&dir.join("benchmarks.json"));
        let (_t, conn, _) = imported(&dir);
        let rows = rows(&conn);
        let cases: Vec<String> = {
            let mut stmt = conn
                .prepare("SELECT case_id FROM import_cases ORDER BY case_index")
                .unwrap();
            stmt.query_map([], |r| r.get(0))
                .unwrap()
                .map(Result::unwrap)
                .collect()
        };
        let benchmarks = doc["benchmarks"].as_array().unwrap();
        assert_eq!(cases.len(), benchmarks.len());
        for (b, case) in benchmarks.iter().zip(&cases) {
            let m = &b["metrics"];
            let mine: Vec<&Row> = rows.iter().filter(|r| &r.case == case).collect();
            let ok: Vec<&Row> = mine.iter().copied().filter(|r| r.ok).collect();
            let totals = &m["request_totals"];
            assert_eq!(ok.len() as f64, num(totals, "/successful"), "{run} {case}");
            assert_eq!(
                (mine.len() - ok.len()) as f64,
                num(totals, "/errored") + num(totals, "/incomplete"),
                "{run} {case}"
            );
            let ttft = some(ok.iter().map(|r| r.ttft));
            close(
                &format!("{run} {case} ttft mean"),
                mean(&ttft),
                num(m, "/time_to_first_token_ms/successful/mean"),
            );
            let e2e = some(ok.iter().map(|r| r.e2e));
            close(
                &format!("{run} {case} latency mean"),
                mean(&e2e) / 1e3,
                num(m, "/request_latency/successful/mean"),
            );
            // TPOT and ITL are summarised per token: weighted by output tokens
            // and by the gaps between them.
            let weighted = |pairs: Vec<(f64, f64)>| {
                pairs.iter().map(|p| p.0 * p.1).sum::<f64>()
                    / pairs.iter().map(|p| p.1).sum::<f64>()
            };
            let tpot: Vec<(f64, f64)> = ok
                .iter()
                .filter_map(|r| Some((r.tpot?, r.out_tokens?)))
                .collect();
            close(
                &format!("{run} {case} tpot mean"),
                weighted(tpot.clone()),
                num(m, "/time_per_output_token_ms/successful/mean"),
            );
            let itl: Vec<(f64, f64)> = ok
                .iter()
                .filter_map(|r| Some((r.itl?, r.out_tokens? - 1.0)))
                .collect();
            close(
                &format!("{run} {case} itl mean"),
                weighted(itl),
                num(m, "/inter_token_latency_ms/successful/mean"),
            );
            // GuideLLM's percentiles: the first value whose cumulative weight
            // reaches q (no interpolation); TPOT and ITL weighted per token.
            let ones: Vec<(f64, f64)> = ttft.iter().map(|v| (*v, 1.0)).collect();
            for (key, q) in [("p50", 50.0), ("p90", 90.0), ("p99", 99.0), ("p01", 1.0)] {
                close(
                    &format!("{run} {case} ttft {key}"),
                    percentile_guidellm(&ones, q).unwrap(),
                    num(
                        m,
                        &format!("/time_to_first_token_ms/successful/percentiles/{key}"),
                    ),
                );
                close(
                    &format!("{run} {case} tpot {key}"),
                    percentile_guidellm(&tpot, q).unwrap(),
                    num(
                        m,
                        &format!("/time_per_output_token_ms/successful/percentiles/{key}"),
                    ),
                );
            }
        }
    }
}

#[test]
fn inference_perf_runs_reproduce_each_stage_and_the_summary() {
    for run in ["completion-2stages", "chat-shared-prefix-err5"] {
        let dir = peers().join("inference-perf").join(run);
        let (_t, conn, _) = imported(&dir);
        let rows = rows(&conn);
        let mut files: Vec<(String, Value)> = vec![(
            "all".into(),
            read_json(&dir.join("summary_lifecycle_metrics.json")),
        )];
        for n in 0..4 {
            let p = dir.join(format!("stage_{n}_lifecycle_metrics.json"));
            if p.exists() {
                files.push((format!("stage_{n}"), read_json(&p)));
            }
        }
        // Stage N is the case of index N (its id names its load).
        let ids: Vec<String> = {
            let mut stmt = conn
                .prepare("SELECT case_id FROM import_cases ORDER BY case_index")
                .unwrap();
            stmt.query_map([], |r| r.get(0))
                .unwrap()
                .map(Result::unwrap)
                .collect()
        };
        for (case, s) in &files {
            let id = case
                .strip_prefix("stage_")
                .map(|n| ids[n.parse::<usize>().unwrap()].clone());
            let mine: Vec<&Row> = rows
                .iter()
                .filter(|r| id.as_ref().is_none_or(|i| &r.case == i))
                .collect();
            let ok: Vec<&Row> = mine.iter().copied().filter(|r| r.ok).collect();
            assert_eq!(ok.len() as f64, num(s, "/successes/count"), "{run} {case}");
            assert_eq!(
                (mine.len() - ok.len()) as f64,
                num(s, "/failures/count"),
                "{run} {case}"
            );
            for (metric, values) in [
                ("time_to_first_token", some(ok.iter().map(|r| r.ttft))),
                ("request_latency", some(ok.iter().map(|r| r.e2e))),
                ("time_per_output_token", some(ok.iter().map(|r| r.tpot))),
                (
                    "normalized_time_per_output_token",
                    some(ok.iter().map(|r| r.itl)),
                ),
            ] {
                let base = format!("/successes/latency/{metric}");
                close(
                    &format!("{run} {case} {metric} mean"),
                    mean(&values) / 1e3,
                    num(s, &format!("{base}/mean")),
                );
                for (key, q) in [("median", 50.0), ("p90", 90.0), ("p99", 99.0)] {
                    close(
                        &format!("{run} {case} {metric} {key}"),
                        linear(&values, q) / 1e3,
                        num(s, &format!("{base}/{key}")),
                    );
                }
            }
        }
    }
}

#[test]
fn vllm_runs_reproduce_vllms_aggregates() {
    for run in ["chat-poisson40", "completions-conc4-err5"] {
        let dir = peers().join("vllm").join(run);
        let s = read_json(&dir.join("vllm_bench_serve.json"));
        let (_t, conn, _) = imported(&dir);
        let rows = rows(&conn);
        let ok: Vec<&Row> = rows.iter().filter(|r| r.ok).collect();
        assert_eq!(ok.len() as f64, num(&s, "/completed"), "{run}");
        assert_eq!((rows.len() - ok.len()) as f64, num(&s, "/failed"), "{run}");
        let pooled: Vec<f64> = ok.iter().flat_map(|r| r.gaps.clone()).collect();
        for (metric, values) in [
            ("ttft", some(ok.iter().map(|r| r.ttft))),
            ("e2el", some(ok.iter().map(|r| r.e2e))),
            ("tpot", some(ok.iter().map(|r| r.tpot))),
            ("itl", pooled),
        ] {
            close(
                &format!("{run} mean {metric}"),
                mean(&values),
                num(&s, &format!("/mean_{metric}_ms")),
            );
            for p in ["50", "90", "99"] {
                close(
                    &format!("{run} p{p} {metric}"),
                    linear(&values, p.parse().unwrap()),
                    num(&s, &format!("/p{p}_{metric}_ms")),
                );
            }
        }
    }
}

fn every_fixture() -> Vec<PathBuf> {
    let mut out = Vec::new();
    for tool in std::fs::read_dir(peers()).unwrap() {
        for run in std::fs::read_dir(tool.unwrap().path()).unwrap() {
            out.push(run.unwrap().path());
        }
    }
    out.sort();
    out
}

#[test]
fn every_import_exports_its_file_back_and_reingests_as_a_no_op() {
    for dir in every_fixture() {
        let tmp = tempfile::tempdir().unwrap();
        let db = tmp.path().join("p.db");
        assert!(ingest(&db, &[dir.to_str().unwrap()]).status.success());
        let again = ingest(&db, &[dir.to_str().unwrap()]);
        assert!(again.status.success());
        assert!(
            String::from_utf8_lossy(&again.stdout).contains("unchanged"),
            "{}",
            dir.display()
        );
        let conn = Connection::open(&db).unwrap();
        let (run, name): (String, String) = conn
            .query_row(
                "SELECT f.run_id, f.name FROM import_files f WHERE f.file_index = 0",
                [],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .unwrap();
        let out = bin()
            .args(["export", "--db", db.to_str().unwrap(), &run])
            .output()
            .unwrap();
        assert!(out.status.success());
        let original = std::fs::read(dir.join(&name)).unwrap();
        assert_eq!(out.stdout, original, "{}", dir.display());
        // And the run answers the ordinary commands.
        for args in [
            vec!["report", &run],
            vec!["report", &run, "--format", "json"],
            vec!["report", &run, "--slo", "ttft:50"],
        ] {
            let out = bin()
                .args(&args)
                .args(["--db", db.to_str().unwrap()])
                .output()
                .unwrap();
            assert!(
                out.status.success() || out.status.code() == Some(3),
                "{} {args:?}: {}",
                dir.display(),
                String::from_utf8_lossy(&out.stderr)
            );
        }
    }
}

/// `--replace` of an import by another tool's run under the same id leaves
/// nothing of the first: no request, case, file or stored chunk of it (the
/// import deletes them itself, as nothing cascades with its foreign-key
/// checks off), and no row that points nowhere.
#[test]
fn a_replaced_import_leaves_nothing_of_the_first() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("p.db");
    let first = peers().join("inference-perf/completion-2stages");
    let second = peers().join("vllm/chat-poisson40");
    let args = |dir: &Path, replace: bool| {
        let mut a = vec![
            dir.to_str().unwrap().to_owned(),
            "--run-id".into(),
            "r".into(),
        ];
        if replace {
            a.push("--replace".into());
        }
        a
    };
    let run = |a: Vec<String>| ingest(&db, &a.iter().map(String::as_str).collect::<Vec<_>>());
    assert!(run(args(&first, false)).status.success());
    let refused = run(args(&second, false));
    assert!(
        !refused.status.success(),
        "a different content needs --replace"
    );
    let out = run(args(&second, true));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    let (_t, alone, _) = imported(&second);
    let conn = Connection::open(&db).unwrap();
    let count = |c: &Connection, sql: &str| -> i64 { c.query_row(sql, [], |r| r.get(0)).unwrap() };
    for sql in [
        "SELECT count(*) FROM requests",
        "SELECT count(*) FROM import_cases",
        "SELECT count(*) FROM import_files",
        "SELECT count(*) FROM import_file_chunks",
        "SELECT coalesce(sum(length(body)), 0) FROM import_file_chunks",
        "SELECT count(*) FROM records",
    ] {
        assert_eq!(count(&conn, sql), count(&alone, sql), "{sql}");
    }
    assert_eq!(
        count(&conn, "SELECT tool = 'vllm-bench-serve' FROM imports"),
        1
    );
    let dangling: Vec<String> = conn
        .prepare("PRAGMA foreign_key_check")
        .unwrap()
        .query_map([], |r| r.get::<_, String>(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert!(dangling.is_empty(), "rows pointing nowhere: {dangling:?}");
}

#[test]
fn export_files_gives_back_every_file_the_tool_wrote_byte_for_byte() {
    for dir in every_fixture() {
        let (tmp, conn, run) = imported(&dir);
        let db = tmp.path().join("p.db");
        let back = tmp.path().join("back");
        let out = bin()
            .args(["export", "--db", db.to_str().unwrap(), &run, "--files"])
            .arg(&back)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}: {}",
            dir.display(),
            String::from_utf8_lossy(&out.stderr)
        );
        // Every file of the tool's folder (made.md is the fixture maker's).
        let mut want: Vec<String> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n != "made.md")
            .collect();
        want.sort();
        let mut got: Vec<String> = std::fs::read_dir(&back)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        got.sort();
        assert_eq!(got, want, "{}", dir.display());
        for name in &got {
            let a = std::fs::read(back.join(name)).unwrap();
            let b = std::fs::read(dir.join(name)).unwrap();
            assert!(a == b, "{}: {name} differs", dir.display());
        }
        let stored: i64 = conn
            .query_row("SELECT count(*) FROM import_files", [], |r| r.get(0))
            .unwrap();
        assert_eq!(stored as usize, got.len(), "{}", dir.display());
        assert_eq!(
            String::from_utf8_lossy(&out.stdout).lines().count(),
            got.len()
        );
    }
    // A run that was not imported has no files to give.
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("p.db");
    let artifact = crate::common::fixtures().join("cases/closed_matrix/artifact.jsonl");
    {
        assert!(ingest(&db, &[artifact.to_str().unwrap()]).status.success());
        let conn = Connection::open(&db).unwrap();
        let run: String = conn
            .query_row("SELECT run_id FROM runs", [], |r| r.get(0))
            .unwrap();
        let out = bin()
            .args(["export", "--db", db.to_str().unwrap(), &run, "--files"])
            .arg(tmp.path().join("none"))
            .output()
            .unwrap();
        assert_eq!(
            out.status.code(),
            Some(2),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(!tmp.path().join("none").exists());
    }
}

#[test]
fn monotonic_clock_runs_are_never_dated_1970() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("p.db");
    let dbs = db.to_str().unwrap();
    for d in [
        "vllm/chat-poisson40",
        "inference-perf/completion-2stages",
        "aiperf/chat-conc4",
    ] {
        let out = ingest(&db, &[peers().join(d).to_str().unwrap()]);
        assert!(
            out.status.success(),
            "{d}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let conn = Connection::open(&db).unwrap();
    let run_of = |tool: &str| -> String {
        conn.query_row("SELECT run_id FROM imports WHERE tool = ?1", [tool], |r| {
            r.get(0)
        })
        .unwrap()
    };
    let (vllm, ip, aiperf) = (
        run_of("vllm-bench-serve"),
        run_of("inference-perf"),
        run_of("aiperf"),
    );
    let out = bin()
        .args(["runs", "--db", dbs, "--format", "json"])
        .output()
        .unwrap();
    let listed: Value = serde_json::from_slice(&out.stdout).unwrap();
    let entry = |run: &str| -> Value {
        listed
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["run_id"] == run)
            .unwrap()
            .clone()
    };
    // vLLM's per-request times are perf_counter seconds and its `date` is a
    // local time with no zone: no UTC start, the tool's own timestamp shown.
    let v = entry(&vllm);
    assert_eq!(v["started_at_ns"], Value::Null);
    assert_eq!(v["clock"], "monotonic");
    assert!(
        v["tool_wall_time"]
            .as_str()
            .unwrap()
            .starts_with("2026-12-01 19:22:33 local (vLLM's `date`"),
        "{v}"
    );
    // inference-perf's stage report carries a UTC start: stage 0 began at
    // 2026-12-01T19:21:51.079937Z = 20788 days and 19:21:51.079937 after the epoch.
    let i = entry(&ip);
    let want: i64 = (20_788 * 86_400 + 19 * 3600 + 21 * 60 + 51) * 1_000_000_000 + 79_937_000;
    assert_eq!(i["started_at_ns"].as_i64(), Some(want), "{i}");
    assert_eq!(i["started_at"], "2026-12-01T19:21:51Z");
    // An epoch-clock run keeps its first request's start.
    let a = entry(&aiperf);
    assert_eq!(a["clock"], "unix_epoch");
    assert!(
        a["started_at"].as_str().unwrap().starts_with("2026-12-01T"),
        "{a}"
    );
    let first_start: i64 = conn
        .query_row(
            "SELECT min(started_at_ns) FROM requests WHERE run_id = ?1",
            [&aiperf],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(a["started_at_ns"].as_i64(), Some(first_start));
    // The table, the history listing and the HTML pages say so too.
    let text = |args: &[&str]| -> String {
        let out = bin()
            .args(args)
            .args(["--db", dbs])
            .current_dir(tmp.path())
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let table = text(&["runs"]);
    assert!(
        table.contains("unknown (monotonic clock; 2026-12-01 19:22:33"),
        "{table}"
    );
    assert!(!table.contains("1970"), "{table}");
    let history = text(&["history"]);
    assert!(!history.contains("1970"), "{history}");
    text(&["report", "--all", "--format", "html", "-o", "project.html"]);
    let project = std::fs::read_to_string(tmp.path().join("project.html")).unwrap();
    assert!(!project.contains("1970-01-01"));
    assert!(project.contains("2026-12-01T19:21:51Z"));
    text(&["report", &vllm, "--format", "html", "-o", "vllm.html"]);
    let page = std::fs::read_to_string(tmp.path().join("vllm.html")).unwrap();
    assert!(!page.contains("1970-01-01"));
    assert!(page.contains("monotonic"));
    assert!(page.contains("2026-12-01 19:22:33"));
}

/// The database's rows, all tables, as text (to compare before and after).
fn dump(db: &Path) -> String {
    let conn = Connection::open(db).unwrap();
    let mut out = String::new();
    let tables: Vec<String> = {
        let mut stmt = conn
            .prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
            .unwrap();
        stmt.query_map([], |r| r.get(0))
            .unwrap()
            .map(Result::unwrap)
            .collect()
    };
    for t in tables {
        let n: i64 = conn
            .query_row(&format!("SELECT count(*) FROM \"{t}\""), [], |r| r.get(0))
            .unwrap();
        out.push_str(&format!("{t}: {n}\n"));
    }
    out
}

#[test]
fn a_cut_file_of_every_format_is_refused_and_changes_nothing() {
    let cases = [
        ("aiperf/chat-conc4", "profile_export.jsonl", "line "),
        ("guidellm/constant40", "benchmarks.json", "cut short"),
        (
            "inference-perf/completion-2stages",
            "per_request_lifecycle_metrics.json",
            "cut short",
        ),
        ("vllm/chat-poisson40", "vllm_bench_serve.json", "cut short"),
    ];
    for (run, file, says) in cases {
        let tmp = tempfile::tempdir().unwrap();
        let db = tmp.path().join("p.db");
        // Something stored first, so "unchanged" means more than empty.
        assert!(ingest(
            &db,
            &[peers()
                .join("vllm/completions-conc4-err5")
                .to_str()
                .unwrap()]
        )
        .status
        .success());
        let before = dump(&db);
        let src = peers().join(run);
        let cut_dir = tmp.path().join("cut");
        std::fs::create_dir(&cut_dir).unwrap();
        for f in std::fs::read_dir(&src).unwrap() {
            let p = f.unwrap().path();
            std::fs::copy(&p, cut_dir.join(p.file_name().unwrap())).unwrap();
        }
        let bytes = std::fs::read(src.join(file)).unwrap();
        std::fs::write(cut_dir.join(file), &bytes[..bytes.len() * 2 / 3]).unwrap();
        let out = ingest(&db, &[cut_dir.to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(5), "{run}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(file) && err.contains(says), "{run}: {err}");
        assert_eq!(dump(&db), before, "{run}");
    }
}

#[test]
fn a_monotonic_run_refuses_server_telemetry_with_the_reason() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("p.db");
    let dir = peers().join("vllm/chat-poisson40");
    assert!(ingest(&db, &["--run-id", "v", dir.to_str().unwrap()])
        .status
        .success());
    let telemetry = crate::common::fixtures().join("cases/telemetry_wrong_run/telemetry.jsonl");
    let out = ingest(&db, &["--run", "v", telemetry.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(5));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("monotonic clock"), "{err}");
}

#[test]
fn two_tools_compare_with_a_finding_for_each_differing_definition() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("p.db");
    for (id, dir) in [
        ("a", "aiperf/chat-conc4"),
        ("v", "vllm/completions-conc4-err5"),
    ] {
        let out = ingest(&db, &["--run-id", id, peers().join(dir).to_str().unwrap()]);
        assert!(out.status.success());
    }
    let out = bin()
        .args([
            "compare",
            "--db",
            db.to_str().unwrap(),
            "--baseline",
            "a",
            "--candidate",
            "v",
        ])
        .args(["--format", "json"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let report: Value = serde_json::from_str(&text).unwrap_or_else(|_| panic!("{text}"));
    let warnings: Vec<&str> = report["payload"]["diagnostics"]["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert!(
        warnings.iter().any(|w| w.contains("different tools")),
        "{warnings:?}"
    );
    for figure in ["tool.tpot", "tool.ttft", "clock"] {
        assert!(
            warnings
                .iter()
                .any(|w| w.starts_with(&format!("definition differs: {figure}:"))),
            "{figure}: {warnings:?}"
        );
    }
    let kinds: Vec<&str> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|f| f["kind"].as_str())
        .collect();
    assert!(kinds.contains(&"definition_differs"), "{kinds:?}");
    // Both load shapes are closed loops of 4: the arms share the case.
    assert!(
        report["payload"]["cases"].get("closed-c4").is_some(),
        "{}",
        report["payload"]["cases"]
    );
}

#[test]
fn a_vllm_result_without_per_request_arrays_keeps_its_aggregates_and_says_why() {
    let tmp = tempfile::tempdir().unwrap();
    let mut doc = read_json(&peers().join("vllm/chat-poisson40/vllm_bench_serve.json"));
    for k in [
        "input_lens",
        "output_lens",
        "ttfts",
        "itls",
        "latencies",
        "start_times",
        "generated_texts",
        "errors",
    ] {
        doc.as_object_mut().unwrap().remove(k);
    }
    let file = tmp.path().join("result.json");
    std::fs::write(&file, doc.to_string()).unwrap();
    let db = tmp.path().join("p.db");
    assert!(ingest(&db, &["--run-id", "agg", file.to_str().unwrap()])
        .status
        .success());
    let conn = Connection::open(&db).unwrap();
    let (per_request, summary): (i64, String) = conn
        .query_row("SELECT per_request, summary FROM imports", [], |r| {
            Ok((r.get(0)?, r.get(1)?))
        })
        .unwrap();
    assert_eq!(per_request, 0);
    let summary: Value = serde_json::from_str(&summary).unwrap();
    assert_eq!(summary["mean_ttft_ms"], doc["mean_ttft_ms"]);
    let out = bin()
        .args([
            "report",
            "agg",
            "--format",
            "json",
            "--db",
            db.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let why = report["imported"]["unsupported"]["requests"]
        .as_str()
        .unwrap();
    assert!(why.contains("--save-detailed"), "{why}");
}

#[test]
fn a_malformed_record_is_named_by_line_or_path() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("p.db");
    // AIPerf: line 3's latency is a string.
    let src =
        std::fs::read_to_string(peers().join("aiperf/chat-conc4/profile_export.jsonl")).unwrap();
    let mut lines: Vec<String> = src.lines().take(5).map(str::to_owned).collect();
    lines[2] = lines[2].replacen("\"value\":32", "\"value\":\"32\"", 1);
    let file = tmp.path().join("profile_export.jsonl");
    std::fs::write(&file, lines.join("\n")).unwrap();
    let out = ingest(&db, &[file.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(5));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("profile_export.jsonl") && err.contains("line 3"),
        "{err}"
    );
    // GuideLLM: a request's start time is a string.
    let doc = std::fs::read_to_string(peers().join("guidellm/constant40/benchmarks.json")).unwrap();
    let bad = doc.replacen(
        "\"request_start_time\": ",
        "\"request_start_time\": \"x\", \"y\": ",
        2,
    );
    let file = tmp.path().join("benchmarks.json");
    std::fs::write(&file, bad).unwrap();
    let out = ingest(&db, &[file.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(5));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("benchmarks[0].requests.successful[0]") && err.contains("expected"),
        "{err}"
    );
    assert!(
        !db.exists() || dump(&db).contains("runs: 0"),
        "{}",
        dump(&db)
    );
}
