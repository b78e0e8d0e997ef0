//! Helpers shared by the integration tests.
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

pub fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/conformance")
}

pub fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_stormlog"))
}

/// Runs stormlog in `dir` with `args`.
pub fn run_in(dir: &Path, args: &[&str]) -> Output {
    bin()
        .current_dir(dir)
        .args(args)
        .env_remove("STORMLOG_DB")
        .output()
        .expect("stormlog runs")
}

/// The flags of a case's `args` file (the reference wrote it with shlex.join;
/// no case needs quoting).
pub fn case_args(dir: &Path) -> Vec<String> {
    std::fs::read_to_string(dir.join("args"))
        .unwrap_or_default()
        .split_whitespace()
        .map(str::to_owned)
        .collect()
}

/// compare.py's rule: every expected leaf matches (numbers within 1e-9
/// relative or absolute, ints and floats numerically; strings, booleans and
/// null exactly; lists element-wise). Extra keys are allowed. Returns the
/// mismatching paths.
pub fn leaf_mismatches(expected: &Value, actual: &Value) -> Vec<String> {
    let mut out = Vec::new();
    walk(expected, actual, "$".to_owned(), &mut out);
    out
}

fn walk(e: &Value, a: &Value, path: String, out: &mut Vec<String>) {
    match (e, a) {
        (Value::Object(em), Value::Object(am)) => {
            for (k, ev) in em {
                match am.get(k) {
                    Some(av) => walk(ev, av, format!("{path}.{k}"), out),
                    None => out.push(format!("{path}.{k}: missing")),
                }
            }
        }
        (Value::Array(ea), Value::Array(aa)) => {
            if ea.len() != aa.len() {
                out.push(format!("{path}: {} items, expected {}", aa.len(), ea.len()));
                return;
            }
            for (i, (ev, av)) in ea.iter().zip(aa).enumerate() {
                walk(ev, av, format!("{path}[{i}]"), out);
            }
        }
        (Value::Number(en), Value::Number(an)) => {
            let (x, y) = (
                en.as_f64().unwrap_or(f64::NAN),
                an.as_f64().unwrap_or(f64::NAN),
            );
            let close =
                x == y || (x - y).abs() <= 1e-9 || (x - y).abs() <= 1e-9 * x.abs().max(y.abs());
            if !close {
                out.push(format!("{path}: {an} != expected {en}"));
            }
        }
        _ => {
            if e != a {
                out.push(format!("{path}: {a} != expected {e}"));
            }
        }
    }
}
