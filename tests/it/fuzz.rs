//! A seeded mutation fuzzer over the conformance artifacts and telemetry.
//!
//! Each mutant is a real input with one hostile change (a flipped byte, a
//! truncation, a line duplicated, deleted or swapped, a field's value
//! replaced by another type or an extreme number, a BOM, CRLF line ends, a
//! NUL byte). For each one the fuzzer runs, in this process (panics caught,
//! a watchdog for hangs):
//!
//! - `infer analyze` with the case's own flags, and without them;
//! - `ingest` into a database that already holds another run, then `report`.
//!
//! and checks: no panic, no hang; exit 0 or a documented refusal (5 for
//! invalid input; 1 only with one of the Python conversion errors the
//! reference itself exits 1 with); a refused ingest leaves the database
//! byte for byte as it was; an accepted artifact reports from the database
//! exactly what `analyze` prints (exit status and output); the JSON parses
//! strictly (no NaN, no infinity, unless the input held one, which the
//! reference echoes too); no count is negative unless the input held a
//! negative number.
//!
//! `cargo test` runs a bounded sample (the default below, fixed seed, the
//! smaller artifacts). `bench/fuzz.sh N SEED` runs N mutants of every
//! artifact through the same code (STORMLOG_FUZZ_MUTANTS, STORMLOG_FUZZ_SEED,
//! STORMLOG_FUZZ_ALL) and prints the figures.
use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::Duration;

use clap::Parser;
use serde_json::Value;

use crate::common::{case_args, fixtures};

/// Mutants in the `cargo test` sample, and its seed.
const SAMPLE: usize = 200;
const SEED: u64 = 0x5eed_2301;
/// Artifacts above this many lines are left to the long run.
const SAMPLE_MAX_LINES: usize = 240;
/// One mutant's commands together may take this long before it counts as a hang.
const HANG: Duration = Duration::from_secs(120);

/// splitmix64: small, seedable, good enough to pick mutations.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next() % n as u64) as usize
        }
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

/// Values a field is replaced with: other types, and numbers at and past
/// the edges of the machine's integers and floats.
const VALUES: &[&str] = &[
    "null",
    "true",
    "false",
    "\"\"",
    "\"x\"",
    "\"12\"",
    "[]",
    "[1, \"a\"]",
    "{}",
    "{\"a\": 1}",
    "0",
    "-1",
    "-0",
    "0.5",
    "1e308",
    "-1e308",
    "1e-320",
    "NaN",
    "Infinity",
    "-Infinity",
    "9223372036854775807",
    "9223372036854775808",
    "-9223372036854775809",
    "18446744073709551616",
    "1000000000000000000000000000000",
    "\"\\u001b[31m\\n\"",
];

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Kind {
    ByteFlip,
    Truncate,
    DuplicateLine,
    DeleteLine,
    SwapLines,
    ReplaceField,
    Bom,
    Crlf,
    Nul,
}

const KINDS: &[Kind] = &[
    Kind::ByteFlip,
    Kind::Truncate,
    Kind::DuplicateLine,
    Kind::DeleteLine,
    Kind::SwapLines,
    Kind::ReplaceField,
    Kind::ReplaceField,
    Kind::ReplaceField,
    Kind::Bom,
    Kind::Crlf,
    Kind::Nul,
];

/// The end of the JSON value starting at `at` (a scalar, string, list or
/// object), by bracket and quote counting; the line's end when unclosed.
fn value_end(b: &[u8], at: usize) -> usize {
    let mut i = at;
    let mut depth = 0usize;
    let mut in_str = false;
    while i < b.len() {
        let c = b[i];
        if in_str {
            match c {
                b'\\' => i += 1,
                b'"' => {
                    in_str = false;
                    if depth == 0 {
                        return i + 1;
                    }
                }
                _ => {}
            }
        } else {
            match c {
                b'"' => in_str = true,
                b'[' | b'{' => depth += 1,
                b']' | b'}' if depth == 0 => return i,
                b']' | b'}' => {
                    depth -= 1;
                    if depth == 0 {
                        return i + 1;
                    }
                }
                b',' if depth == 0 => return i,
                _ => {}
            }
        }
        i += 1;
    }
    b.len()
}

fn lines_of(bytes: &[u8]) -> Vec<Vec<u8>> {
    bytes.split(|&b| b == b'\n').map(<[u8]>::to_vec).collect()
}

fn mutate(rng: &mut Rng, input: &[u8], kind: Kind) -> Vec<u8> {
    let mut out = input.to_vec();
    let mut lines = lines_of(input);
    let n = lines.len().max(1);
    match kind {
        Kind::ByteFlip => {
            for _ in 0..1 + rng.below(3) {
                let at = rng.below(out.len());
                if let Some(b) = out.get_mut(at) {
                    *b ^= 1 << rng.below(8);
                }
            }
            out
        }
        Kind::Truncate => {
            out.truncate(rng.below(out.len()));
            out
        }
        Kind::DuplicateLine => {
            let i = rng.below(n.min(lines.len()));
            let line = lines[i].clone();
            lines.insert(i + 1, line);
            lines.join(&b'\n')
        }
        Kind::DeleteLine => {
            lines.remove(rng.below(lines.len()));
            lines.join(&b'\n')
        }
        Kind::SwapLines => {
            let (i, j) = (rng.below(lines.len()), rng.below(lines.len()));
            lines.swap(i, j);
            lines.join(&b'\n')
        }
        Kind::ReplaceField => {
            // A random `"key": value` of a random line.
            let i = rng.below(lines.len());
            let line = &lines[i];
            let starts: Vec<usize> = line
                .windows(3)
                .enumerate()
                .filter(|(_, w)| w == b"\": ")
                .map(|(at, _)| at + 3)
                .collect();
            if starts.is_empty() {
                return out;
            }
            let at = *rng.pick(&starts);
            let end = value_end(line, at).max(at);
            let mut changed = line[..at].to_vec();
            changed.extend_from_slice(rng.pick(VALUES).as_bytes());
            changed.extend_from_slice(&line[end..]);
            lines[i] = changed;
            lines.join(&b'\n')
        }
        Kind::Bom => {
            let mut v = "\u{feff}".as_bytes().to_vec();
            v.extend_from_slice(input);
            v
        }
        Kind::Crlf => lines.join(&b"\r\n"[..]),
        Kind::Nul => {
            out.insert(rng.below(out.len() + 1), 0);
            out
        }
    }
}

/// One command run in this process: its exit status and output, or the
/// panic's message.
struct Ran {
    code: i32,
    stdout: Vec<u8>,
    stderr: String,
    panicked: Option<String>,
}

fn stormlog(args: &[String]) -> Ran {
    let mut argv = vec!["stormlog".to_owned()];
    argv.extend(args.iter().cloned());
    let cli = match stormlog::cli::Cli::try_parse_from(&argv) {
        Ok(cli) => cli,
        Err(e) => {
            return Ran {
                code: 2,
                stdout: Vec::new(),
                stderr: e.to_string(),
                panicked: None,
            }
        }
    };
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        stormlog::cli::commands::run(cli.command, &mut out, &mut err)
    }));
    let mut stderr = String::from_utf8_lossy(&err).into_owned();
    match result {
        Ok(Ok(exit)) => Ran {
            code: i32::from(exit.code()),
            stdout: out,
            stderr,
            panicked: None,
        },
        Ok(Err(e)) => {
            stderr.push_str(&format!("Error: {}\n", e.message));
            Ran {
                code: i32::from(e.exit.code()),
                stdout: out,
                stderr,
                panicked: None,
            }
        }
        Err(p) => {
            let message = p
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| p.downcast_ref::<&str>().map(|s| (*s).to_owned()))
                .unwrap_or_default();
            Ran {
                code: 101,
                stdout: out,
                stderr,
                panicked: Some(message),
            }
        }
    }
}

/// The Python conversion errors the reference exits 1 with (its int() of a
/// request's output_tokens).
fn python_error(stderr: &str) -> bool {
    [
        "cannot convert float",
        "invalid literal for int()",
        "int() argument must be",
        "Exceeds the limit",
    ]
    .iter()
    .any(|m| stderr.contains(m))
}

fn exit_ok(r: &Ran) -> Result<(), String> {
    if let Some(p) = &r.panicked {
        return Err(format!("panicked: {p}"));
    }
    match r.code {
        0 | 5 => Ok(()),
        1 if python_error(&r.stderr) => Ok(()),
        c => Err(format!("exit {c}: {}", r.stderr.trim_end())),
    }
}

/// Keys whose value counts something.
fn is_count(key: &str) -> bool {
    key == "n"
        || key.ends_with("count")
        || key.ends_with("_n")
        || key.ends_with("requests")
        || matches!(
            key,
            "accepted"
                | "successful"
                | "failed"
                | "timed_out"
                | "cancelled"
                | "censored"
                | "responses"
                | "held_for_slot"
                | "dropped"
                | "completed"
        )
}

fn negative_counts(v: &Value, path: &str, out: &mut Vec<String>) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                if is_count(k) && x.as_f64().is_some_and(|f| f < 0.0) {
                    out.push(format!("{path}.{k} = {x}"));
                }
                negative_counts(x, &format!("{path}.{k}"), out);
            }
        }
        Value::Array(a) => {
            for (i, x) in a.iter().enumerate() {
                negative_counts(x, &format!("{path}[{i}]"), out);
            }
        }
        _ => {}
    }
}

/// Whether the bytes hold a negative number (a minus before a digit).
fn holds_negative(bytes: &[u8]) -> bool {
    bytes
        .windows(2)
        .any(|w| w[0] == b'-' && w[1].is_ascii_digit())
}

fn json_ok(r: &Ran, input: &[u8]) -> Result<(), String> {
    if r.code != 0 {
        return Ok(());
    }
    // A NaN or an infinity the input held may come back as it is (the
    // reference echoes a record's value, e.g. a cache state's); one the
    // input did not hold is a number computed wrong.
    let echoed =
        |t: &[u8]| t.windows(3).any(|w| w == b"NaN") || t.windows(8).any(|w| w == b"Infinity");
    let v: Value = match serde_json::from_slice(&r.stdout) {
        Ok(v) => v,
        Err(e) if !echoed(input) => {
            return Err(format!("output is not strict JSON (NaN or infinity?): {e}"))
        }
        Err(_) => stormlog::py::json::parse(&String::from_utf8_lossy(&r.stdout))
            .map_err(|e| format!("output is not JSON: {e}"))?,
    };
    let mut bad = Vec::new();
    negative_counts(&v, "$", &mut bad);
    if !bad.is_empty() && !holds_negative(input) {
        return Err(format!("negative counts: {bad:?}"));
    }
    Ok(())
}

fn bytes_of(db: &Path) -> Vec<u8> {
    let mut b = std::fs::read(db).unwrap_or_default();
    b.extend(std::fs::read(db.with_extension("db-wal")).unwrap_or_default());
    b
}

/// A source input: an artifact, or a case's telemetry, with the case's flags.
#[derive(Clone)]
struct Source {
    case: PathBuf,
    artifact: PathBuf,
    telemetry: Option<PathBuf>,
}

fn sources(all: bool) -> Vec<Source> {
    let mut out = Vec::new();
    let dirs: Vec<PathBuf> = crate::cases::all(crate::cases::CONFORMANCE)
        .into_iter()
        .filter(|c| c.has("artifact.jsonl") && !c.has("command"))
        .map(|c| c.dir)
        .collect();
    for dir in dirs {
        let artifact = dir.join("artifact.jsonl");
        let lines = std::fs::read_to_string(&artifact).unwrap().lines().count();
        if !all && lines > SAMPLE_MAX_LINES {
            continue;
        }
        out.push(Source {
            case: dir.clone(),
            artifact: artifact.clone(),
            telemetry: None,
        });
        let telemetry = dir.join("telemetry.jsonl");
        if telemetry.exists() && case_args(&dir).join(" ").contains("--server-telemetry") {
            out.push(Source {
                case: dir.clone(),
                artifact,
                telemetry: Some(telemetry),
            });
        }
    }
    out
}

/// The case's flags with its files named by absolute path; `telemetry`
/// replaces the case's telemetry file.
fn flags(src: &Source, telemetry: Option<&Path>) -> Vec<String> {
    case_args(&src.case)
        .into_iter()
        .map(|a| {
            if a == "telemetry.jsonl" {
                if let Some(t) = telemetry {
                    return t.display().to_string();
                }
            }
            let p = src.case.join(&a);
            if !a.starts_with('-') && p.exists() {
                p.display().to_string()
            } else {
                a
            }
        })
        .collect()
}

fn s(p: &Path) -> String {
    p.display().to_string()
}

/// The checks of one mutant; the first failure found.
fn check_mutant(
    src: &Source,
    mutant: &[u8],
    dir: &Path,
    base_db: &Path,
) -> Result<&'static str, String> {
    let m = dir.join("mutant.jsonl");
    std::fs::write(&m, mutant).unwrap();
    let (artifact, telemetry) = match &src.telemetry {
        Some(_) => (src.artifact.clone(), Some(m.clone())),
        None => (m.clone(), None),
    };
    let mut args = vec![
        "infer".into(),
        "analyze".into(),
        s(&artifact),
        "--format".into(),
        "json".into(),
    ];
    let case_flags = flags(src, telemetry.as_deref());
    let flagless = case_flags.is_empty() && telemetry.is_none();
    args.extend(case_flags);
    let with_flags = stormlog(&args);
    exit_ok(&with_flags).map_err(|e| format!("analyze with the case's flags: {e}"))?;
    json_ok(&with_flags, mutant).map_err(|e| format!("analyze with the case's flags: {e}"))?;

    // Ingest into a database that holds another run.
    let db = dir.join("p.db");
    let _ = std::fs::remove_file(db.with_extension("db-wal"));
    std::fs::copy(base_db, &db).unwrap();
    let before = bytes_of(&db);
    let ingest = match &telemetry {
        Some(t) => stormlog(&[
            "ingest".into(),
            "--db".into(),
            s(&db),
            s(&src.artifact),
            s(t),
        ]),
        None => stormlog(&["ingest".into(), "--db".into(), s(&db), s(&m)]),
    };
    if let Some(p) = &ingest.panicked {
        return Err(format!("ingest panicked: {p}"));
    }
    if ingest.code != 0 {
        if ingest.code != 5 {
            return Err(format!(
                "ingest exit {}: {}",
                ingest.code,
                ingest.stderr.trim_end()
            ));
        }
        if telemetry.is_none() && bytes_of(&db) != before {
            return Err("a refused ingest changed the database".into());
        }
        return Ok("refused");
    }
    if telemetry.is_some() {
        return Ok("accepted");
    }
    // Accepted: the report from the database is analyze's, status and all.
    // (Without flags of its own, the case's analyze was this one.)
    let plain = if flagless {
        with_flags
    } else {
        stormlog(&[
            "infer".into(),
            "analyze".into(),
            s(&m),
            "--format".into(),
            "json".into(),
        ])
    };
    exit_ok(&plain).map_err(|e| format!("analyze: {e}"))?;
    json_ok(&plain, mutant).map_err(|e| format!("analyze: {e}"))?;
    let runs = stormlog(&[
        "runs".into(),
        "--db".into(),
        s(&db),
        "--format".into(),
        "json".into(),
    ]);
    let runs: Value = serde_json::from_slice(&runs.stdout).map_err(|e| format!("runs: {e}"))?;
    let run = runs
        .as_array()
        .and_then(|a| {
            a.iter()
                .filter_map(|r| r["run_id"].as_str())
                .find(|id| *id != "fuzz-base")
        })
        .ok_or("the ingested run is not listed")?
        .to_owned();
    let report = stormlog(&[
        "report".into(),
        "--db".into(),
        s(&db),
        "--format".into(),
        "json".into(),
        run,
    ]);
    if let Some(p) = &report.panicked {
        return Err(format!("report panicked: {p}"));
    }
    if report.code != plain.code || report.stdout != plain.stdout {
        let first_error = |r: &Ran| r.stderr.lines().last().unwrap_or("").to_owned();
        return Err(format!(
            "report (exit {}, {}) differs from analyze (exit {}, {})",
            report.code,
            first_error(&report),
            plain.code,
            first_error(&plain)
        ));
    }
    Ok(if plain.code == 0 {
        "accepted"
    } else {
        "refused"
    })
}

/// Runs `count` mutants from `seed`; returns the failures and prints the figures.
fn run_fuzz(count: usize, seed: u64, all: bool) -> Vec<String> {
    let sources = sources(all);
    // Each mutant's ingest ends in a checkpoint whose fsync, on a busy
    // disk, costs more than the mutant's work: on Linux the databases live
    // in shared memory when it is there.
    let shm = Path::new("/dev/shm");
    let tmp = if cfg!(target_os = "linux") && shm.is_dir() {
        tempfile::tempdir_in(shm).unwrap()
    } else {
        tempfile::tempdir().unwrap()
    };
    // The base database: one run under an id no mutant carries.
    let base_artifact = tmp.path().join("base.jsonl");
    let text = std::fs::read_to_string(fixtures().join("cases/replay/artifact.jsonl")).unwrap();
    std::fs::write(
        &base_artifact,
        text.replace("\"run_id\": \"replay\"", "\"run_id\": \"fuzz-base\""),
    )
    .unwrap();
    let base_db = tmp.path().join("base.db");
    let made = stormlog(&[
        "ingest".into(),
        "--db".into(),
        s(&base_db),
        s(&base_artifact),
    ]);
    assert_eq!(made.code, 0, "{}", made.stderr);
    let inputs: Vec<Vec<u8>> = sources
        .iter()
        .map(|src| std::fs::read(src.telemetry.as_ref().unwrap_or(&src.artifact)).unwrap())
        .collect();
    let mut rng = Rng(seed);
    let mut failures = Vec::new();
    let mut tally: BTreeMap<(Kind, &str), usize> = BTreeMap::new();
    for i in 0..count {
        let which = rng.below(sources.len());
        let kind = *rng.pick(KINDS);
        let mutant = mutate(&mut rng, &inputs[which], kind);
        let src = sources[which].clone();
        let dir = tmp.path().join(format!("m{}", i % 4));
        std::fs::create_dir_all(&dir).unwrap();
        let base = base_db.clone();
        let (send, recv) = mpsc::channel();
        let job_dir = dir.clone();
        let job_mutant = mutant.clone();
        let job_src = src.clone();
        std::thread::spawn(move || {
            let _ = send.send(check_mutant(&job_src, &job_mutant, &job_dir, &base));
        });
        let verdict = match recv.recv_timeout(HANG) {
            Ok(v) => v,
            Err(_) => Err(format!("no answer within {} s (a hang)", HANG.as_secs())),
        };
        if (i + 1) % 500 == 0 {
            let failed = failures.len();
            eprintln!("fuzz: {} of {count} mutants done, {failed} failed", i + 1);
        }
        let name = src.case.file_name().unwrap().to_string_lossy().into_owned();
        let what = if src.telemetry.is_some() {
            "telemetry"
        } else {
            "artifact"
        };
        match verdict {
            Ok(outcome) => *tally.entry((kind, outcome)).or_default() += 1,
            Err(e) => {
                *tally.entry((kind, "FAILED")).or_default() += 1;
                let kept = tmp.path().join(format!("failure{}.jsonl", failures.len()));
                let _ = std::fs::write(&kept, &mutant);
                failures.push(format!("mutant {i} ({kind:?} of {name} {what}): {e}"));
                if failures.len() >= 20 {
                    break;
                }
            }
        }
    }
    let mut report = format!(
        "fuzz: {count} mutants, seed {seed:#x}, {} sources\n",
        sources.len()
    );
    for ((kind, outcome), n) in &tally {
        report.push_str(&format!("  {kind:?} {outcome}: {n}\n"));
    }
    let _ = std::io::stderr().write_all(report.as_bytes());
    if !failures.is_empty() {
        // Keep the failing mutants for a look.
        let keep = tmp.keep();
        eprintln!("failing mutants kept in {}", keep.display());
    }
    failures
}

#[test]
fn mutants_of_real_inputs_are_refused_cleanly_or_reported_consistently() {
    let env = |k: &str| std::env::var(k).ok();
    let count = env("STORMLOG_FUZZ_MUTANTS")
        .and_then(|v| v.parse().ok())
        .unwrap_or(SAMPLE);
    let seed = env("STORMLOG_FUZZ_SEED")
        .and_then(|v| match v.strip_prefix("0x") {
            Some(hex) => u64::from_str_radix(hex, 16).ok(),
            None => v.parse().ok(),
        })
        .unwrap_or(SEED);
    let all = env("STORMLOG_FUZZ_ALL").is_some();
    let failures = run_fuzz(count, seed, all);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
