//! The shared conformance cases for `infer compare` (compare_config,
//! compare_allow, compare_segment): JSON leaf for leaf within a relative
//! 1e-9, the text report byte for byte, and the exit status.
#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};

use clap::Parser;
use serde_json::Value;

use super::{run, CompareArgs, Format};
use crate::exit::Exit;

#[derive(Parser)]
struct Cli {
    #[command(flatten)]
    args: CompareArgs,
}

fn cases() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/conformance/cases");
    let mut found: Vec<PathBuf> = std::fs::read_dir(&root)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| std::fs::read_to_string(p.join("command")).is_ok_and(|c| c.trim() == "compare"))
        .collect();
    found.sort();
    found
}

fn args_for(dir: &Path, format: Format) -> CompareArgs {
    let words: Vec<String> = std::fs::read_to_string(dir.join("args"))
        .unwrap()
        .split_whitespace()
        .map(str::to_owned)
        .collect();
    let mut argv = vec!["compare".to_owned()];
    argv.extend(words.iter().cloned());
    let mut args = Cli::parse_from(&argv).args;
    args.format = format;
    let mut recorded = vec!["infer".to_owned(), "compare".to_owned()];
    recorded.extend(words);
    if format == Format::Json {
        recorded.extend(["--format".to_owned(), "json".to_owned()]);
    }
    args.argv = recorded;
    args.generated_at = Some("2026-01-01T00:00:00Z".into());
    args.base_dir = Some(dir.to_path_buf());
    args
}

fn ignored(path: &str, patterns: &[String]) -> bool {
    patterns
        .iter()
        .any(|p| crate::compare::metrics::fnmatch(p, path))
}

fn compare_leaves(
    expected: &Value,
    actual: &Value,
    path: &str,
    patterns: &[String],
    bad: &mut Vec<String>,
) {
    if ignored(path, patterns) {
        return;
    }
    let child = |key: &str| {
        if path.is_empty() {
            key.to_owned()
        } else {
            format!("{path}.{key}")
        }
    };
    match (expected, actual) {
        (Value::Object(e), Value::Object(a)) => {
            for (k, v) in e {
                match a.get(k) {
                    Some(av) => compare_leaves(v, av, &child(k), patterns, bad),
                    None if ignored(&child(k), patterns) => {}
                    None => bad.push(format!("{}: missing", child(k))),
                }
            }
        }
        (Value::Array(e), Value::Array(a)) => {
            if e.len() != a.len() {
                bad.push(format!("{path}: {} items, expected {}", a.len(), e.len()));
                return;
            }
            for (i, (x, y)) in e.iter().zip(a).enumerate() {
                compare_leaves(x, y, &format!("{path}[{i}]"), patterns, bad);
            }
        }
        (Value::Number(e), Value::Number(a)) => {
            let (x, y) = (e.as_f64().unwrap(), a.as_f64().unwrap());
            if (x - y).abs() > 1e-9 * x.abs().max(y.abs()) && (x - y).abs() > 1e-9 {
                bad.push(format!("{path}: {y}, expected {x}"));
            }
        }
        (e, a) if e == a => {}
        (e, a) => bad.push(format!("{path}: {a}, expected {e}")),
    }
}

#[test]
fn compare_cases_match_the_reference() {
    let all = cases();
    assert!(all.len() >= 2, "the compare cases are missing");
    for dir in all {
        let name = dir.file_name().unwrap().to_string_lossy().into_owned();
        let rc = std::fs::read_to_string(dir.join("expected.rc"))
            .map_or(0, |t| t.trim().parse::<u8>().unwrap());
        let patterns: Vec<String> = std::fs::read_to_string(dir.join("ignore"))
            .unwrap_or_default()
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(str::to_owned)
            .collect();

        let mut out = Vec::new();
        let exit = run(&args_for(&dir, Format::Json), &mut out, &mut Vec::new())
            .unwrap_or_else(|e| e.exit());
        assert_eq!(exit.code(), rc, "{name}: exit status");
        let expected: Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join("expected.json")).unwrap())
                .unwrap();
        let actual: Value = serde_json::from_slice(&out).unwrap();
        let mut bad = Vec::new();
        compare_leaves(&expected, &actual, "", &patterns, &mut bad);
        assert!(
            bad.is_empty(),
            "{name}: {} leaves differ:\n{}",
            bad.len(),
            bad.iter().take(40).cloned().collect::<Vec<_>>().join("\n")
        );

        let mut out = Vec::new();
        let exit = run(&args_for(&dir, Format::Txt), &mut out, &mut Vec::new())
            .unwrap_or_else(|e| e.exit());
        assert_eq!(
            exit,
            if rc == 0 { Exit::Ok } else { exit },
            "{name}: text exit status"
        );
        let expected = std::fs::read_to_string(dir.join("expected.txt")).unwrap();
        let actual = String::from_utf8(out).unwrap();
        let differing: Vec<String> = expected
            .lines()
            .zip(actual.lines())
            .filter(|(e, a)| e != a)
            .map(|(e, a)| format!("expected {e}\n     got {a}"))
            .collect();
        assert!(
            differing.is_empty() && expected == actual,
            "{name}: text differs:\n{}",
            differing.join("\n")
        );
    }
}
