//! Tests of `stormlog sql`: refusals, sources of the query, and every query
//! of docs/sql.md against a database of the conformance cases.
#![allow(clippy::unwrap_used)]

use super::*;
use std::path::Path;

const CASES: &str = "tests/fixtures/conformance/cases";

/// Ingests the named conformance cases (artifacts, compare arms and
/// telemetry) into a fresh database file.
fn database(cases: &[&str]) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("conformance.db");
    let mut conn = db::open(&path, Mode::ReadWrite).unwrap();
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
        files.sort_by_key(|p| (p.file_name().unwrap().to_string_lossy().starts_with("telemetry"), p.clone()));
        for f in files {
            crate::ingest::ingest_path(&mut conn, &f, Default::default())
                .unwrap_or_else(|e| panic!("{}: {e}", f.display()));
        }
    }
    (dir, path)
}

fn all_cases() -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(CASES)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

fn args(db: &Path, format: Format, query: &str) -> SqlArgs {
    SqlArgs {
        db: crate::cli::DbArg { db: db.to_owned() },
        format,
        file: None,
        query: Some(query.into()),
    }
}

fn sql(db: &Path, format: Format, query: &str) -> Result<String, SqlError> {
    let mut out = Vec::new();
    let mut err = Vec::new();
    run_with_input(&args(db, format, query), &mut std::io::empty(), &mut out, &mut err)?;
    Ok(String::from_utf8(out).unwrap())
}

#[test]
fn timing_probe() {
    let t = std::time::Instant::now();
    let cases = all_cases();
    let refs: Vec<&str> = cases.iter().map(String::as_str).collect();
    let (_d, p) = database(&refs);
    eprintln!("ingest {:?}", t.elapsed());
    eprintln!("{}", sql(&p, Format::Table, "SELECT * FROM v_runs; SELECT run_id, case_key, percentile(ttft_ms, 95) AS p95 FROM v_requests WHERE phase='measured' AND ok GROUP BY 1,2 LIMIT 10; select * from v_case_summary limit 5; select * from v_server_samples limit 3; select * from v_case_windows limit 3").unwrap());
    eprintln!("{:?}", t.elapsed());
}
