//! Command-level tests: `run_with` on fakes for the output lines and exit
//! statuses, and `run` against real child processes.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::Value;

use super::sources::fake::{FakeClock, FakeGpu, FakeProcess};
use super::sources::{GpuReading, ProcessReading};
use super::*;
use crate::collector::output::SampleState;

/// The options `argv` (pairs of a flag and its value, or `--no-gpu`) give;
/// the flags themselves are parsed in `cli::collect`.
fn args(argv: &[&str]) -> RawOptions {
    let mut o = RawOptions::default();
    let mut it = argv.iter();
    while let Some(flag) = it.next() {
        if *flag == "--no-gpu" {
            o.no_gpu = true;
            continue;
        }
        let value = *it.next().unwrap();
        let int = || args::parse_py_int(value).unwrap();
        let float = || args::parse_py_float(value).unwrap();
        match *flag {
            "--run-id" => o.run_id = value.into(),
            "--pid" => o.pid = int(),
            "--output" => o.output = value.into(),
            "--interval" => o.interval = float(),
            "--duration" => o.duration = Some(float()),
            "--rank" => o.rank = Some(int()),
            "--replica-id" => o.replica_id = Some(value.into()),
            other => panic!("flag {other} not known to this test helper"),
        }
    }
    o
}

fn host() -> HostInfo {
    HostInfo {
        host: "vm".into(),
        boot_id: Some("b00t".into()),
    }
}

struct Outcome {
    result: Result<Exit, CollectError>,
    out: String,
    err: String,
}

fn run_fake(
    options: &Options,
    process: &mut FakeProcess,
    gpu: Option<&mut FakeGpu>,
    clock: &mut FakeClock,
) -> Outcome {
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let result = run_with(
        options,
        &host(),
        process,
        gpu.map(|g| g as &mut dyn GpuSource),
        clock,
        &StopFlag::new(),
        &|_, _, _, file| Ok(Box::new(file) as Box<dyn SampleSink>),
        &mut out,
        &mut err,
    );
    Outcome {
        result,
        out: String::from_utf8(out).unwrap(),
        err: String::from_utf8(err).unwrap(),
    }
}

fn lines(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn gpu_identity_change_is_a_finding() {
    let dir = tempfile::tempdir().unwrap();
    let out_path = dir.path().join("t.jsonl");
    let options = args(&[
        "--run-id",
        "r1",
        "--pid",
        "42",
        "--output",
        out_path.to_str().unwrap(),
    ])
    .check()
    .unwrap();
    let mut process = FakeProcess::new(42, vec![]);
    let mut gpu = FakeGpu::new(
        "GPU-a",
        vec![
            GpuReading::valid(10, 2),
            GpuReading::unavailable(SampleState::Invalid, "device UUID changed".into()),
        ],
    );
    gpu.compute_pids = Some(BTreeSet::from([42]));
    let o = run_fake(
        &options,
        &mut process,
        Some(&mut gpu),
        &mut FakeClock::new(),
    );
    assert_eq!(o.result.unwrap(), Exit::Findings);
    assert_eq!(
        o.out,
        format!(
            "Collected 2 server polls to: {} (stopped: gpu_identity_changed)\n",
            out_path.display()
        )
    );
    assert_eq!(
        o.err,
        "Findings: GPU identity changed (device UUID changed); later polls were not recorded and later case \
         windows will not be joined\n"
    );
    let records = lines(&out_path);
    assert_eq!(records.len(), 6);
    assert_eq!(records[0]["identity"]["device_uuid"], "GPU-a");
    assert_eq!(records[0]["clock_domain"], "vm/b00t/unix_epoch_ns");
    assert_eq!(records[4]["state"], "invalid");
}

#[test]
fn match_warnings_print_before_collection() {
    let dir = tempfile::tempdir().unwrap();
    let out_path = dir.path().join("sub/../t.jsonl");
    let options = args(&[
        "--run-id",
        "r1",
        "--pid",
        "42",
        "--output",
        out_path.to_str().unwrap(),
        "--duration",
        "0.05",
    ])
    .check()
    .unwrap();
    let mut process = FakeProcess::new(42, vec![]);
    process.descendants = BTreeSet::from([43]);
    let mut gpu = FakeGpu::new("GPU-a", vec![]);
    gpu.compute_pids = Some(BTreeSet::from([43]));
    let o = run_fake(
        &options,
        &mut process,
        Some(&mut gpu),
        &mut FakeClock::new(),
    );
    assert_eq!(o.result.unwrap(), Exit::Ok);
    assert!(o.err.starts_with(
        "Warning: PID 42 has no compute context on GPU-a, but its child process(es) 43 do."
    ));
    assert!(
        o.out
            .ends_with("sub/../t.jsonl (stopped: duration_elapsed)\n"),
        "{}",
        o.out
    );
}

#[test]
fn process_end_is_a_warning_with_status_zero() {
    let dir = tempfile::tempdir().unwrap();
    let out_path = dir.path().join("end.jsonl");
    let options = args(&[
        "--run-id",
        "r1",
        "--pid",
        "42",
        "--output",
        out_path.to_str().unwrap(),
        "--no-gpu",
        "--interval",
        "0.5",
    ])
    .check()
    .unwrap();
    let mut process = FakeProcess::new(
        42,
        vec![
            ProcessReading::valid(1),
            ProcessReading::valid(2),
            ProcessReading::ended(),
        ],
    );
    let o = run_fake(&options, &mut process, None, &mut FakeClock::new());
    assert_eq!(o.result.unwrap(), Exit::Ok);
    assert!(o
        .out
        .ends_with("end.jsonl (stopped: server_process_ended)\n"));
    assert_eq!(
        o.err,
        "Warning: server process ended or its PID was reused; case windows that extend past the last \
         confirmed poll will not be joined\n"
    );
    let records = lines(&out_path);
    assert_eq!(records.len(), 3);
    assert_eq!(records[2]["value_bytes"], Value::Null);
    assert_eq!(
        records[1]["observed_at_ns"].as_i64().unwrap()
            - records[0]["observed_at_ns"].as_i64().unwrap(),
        500_000_000
    );
}

#[test]
fn identity_problems_are_failures_not_usage() {
    let dir = tempfile::tempdir().unwrap();
    let out_path = dir.path().join("t.jsonl");
    let o = out_path.to_str().unwrap();
    let mut process = FakeProcess::new(42, vec![]);
    let options = args(&[
        "--run-id", "r", "--pid", "42", "--output", o, "--no-gpu", "--rank", "-1",
    ])
    .check()
    .unwrap();
    let e = run_fake(&options, &mut process, None, &mut FakeClock::new())
        .result
        .unwrap_err();
    assert_eq!(
        (e.to_string().as_str(), e.exit()),
        ("rank must be non-negative", Exit::Unexpected)
    );
    let options = args(&[
        "--run-id",
        "r",
        "--pid",
        "42",
        "--output",
        o,
        "--no-gpu",
        "--replica-id",
        "",
    ])
    .check()
    .unwrap();
    let e = run_fake(&options, &mut process, None, &mut FakeClock::new())
        .result
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        "optional server identity fields must be non-empty strings"
    );
    // Identity fails before the output is opened, as in the reference.
    assert!(!out_path.exists());
}

#[test]
fn unwritable_output_is_a_failure_naming_the_path() {
    let dir = tempfile::tempdir().unwrap();
    let blocker = dir.path().join("file");
    std::fs::write(&blocker, "x").unwrap();
    let out_path = blocker.join("t.jsonl");
    let options = args(&[
        "--run-id",
        "r",
        "--pid",
        "42",
        "--output",
        out_path.to_str().unwrap(),
        "--no-gpu",
    ])
    .check()
    .unwrap();
    let mut process = FakeProcess::new(42, vec![]);
    let e = run_fake(&options, &mut process, None, &mut FakeClock::new())
        .result
        .unwrap_err();
    assert_eq!(e.exit(), Exit::Unexpected);
    assert!(e.to_string().starts_with("cannot create "), "{e}");
}

#[test]
fn error_statuses() {
    assert_eq!(
        CollectError::from(OptionsError::Interval).exit(),
        Exit::Usage
    );
    assert_eq!(
        CollectError::from(ProcessLookupError::NotRunning).exit(),
        Exit::Usage
    );
    assert_eq!(
        CollectError::from(GpuOpenError::Unavailable).exit(),
        Exit::Usage
    );
    assert_eq!(
        CollectError::from(GpuOpenError::InitFailed).exit(),
        Exit::Unexpected
    );
    assert_eq!(
        CollectError::from(GpuOpenError::UuidDiffers).exit(),
        Exit::Unexpected
    );
}

/// Runs the real command; returns (status or error, stdout, stderr).
fn run_real(argv: &[&str]) -> Outcome {
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let result = run(
        &args(argv),
        &|_, _, _, file| Ok(Box::new(file) as Box<dyn SampleSink>),
        &mut out,
        &mut err,
    );
    Outcome {
        result,
        out: String::from_utf8(out).unwrap(),
        err: String::from_utf8(err).unwrap(),
    }
}

/// Real processes, one after another: they share the process-wide signal
/// handler, and the last case sends this test process a SIGTERM.
#[test]
fn real_processes() {
    let dir = tempfile::tempdir().unwrap();

    // 1. A child that exits mid-collection and is never reaped: a zombie.
    let child = Command::new("sleep")
        .arg("1")
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let pid = child.id().to_string();
    let path = dir.path().join("zombie.jsonl");
    let p = path.to_str().unwrap();
    let o = run_real(&[
        "--run-id",
        "r1",
        "--pid",
        &pid,
        "--output",
        p,
        "--no-gpu",
        "--interval",
        "0.2",
        "--duration",
        "20",
    ]);
    assert_eq!(o.result.unwrap(), Exit::Ok);
    assert!(
        o.out.ends_with("(stopped: server_process_ended)\n"),
        "{}",
        o.out
    );
    assert!(o
        .err
        .starts_with("Warning: server process ended or its PID was reused;"));
    let records = lines(&path);
    let polls: usize = o.out.split_whitespace().nth(1).unwrap().parse().unwrap();
    assert_eq!(records.len(), polls);
    assert!(
        (4..=8).contains(&polls),
        "{polls} polls of a 1 s process at 5 Hz"
    );
    let (last, live) = records.split_last().unwrap();
    assert_eq!(last["state"], "invalid");
    assert!(live
        .iter()
        .all(|r| r["state"] == "valid" && r["value_bytes"].as_u64().unwrap() > 0));
    assert!(records
        .iter()
        .all(|r| r["identity"]["pid"].as_u64() == Some(u64::from(child.id()))));
    drop(child);

    // 2. A child that exits and is reaped: the PID is gone.
    let mut child = Command::new("sleep").arg("0.5").spawn().unwrap();
    let pid = child.id().to_string();
    let reaper = std::thread::spawn(move || child.wait());
    let path = dir.path().join("gone.jsonl");
    let o = run_real(&[
        "--run-id",
        "r1",
        "--pid",
        &pid,
        "--output",
        path.to_str().unwrap(),
        "--no-gpu",
        "--interval",
        "0.1",
    ]);
    assert_eq!(o.result.unwrap(), Exit::Ok);
    assert!(o.out.contains("(stopped: server_process_ended)"));
    reaper.join().unwrap().unwrap();

    // 3. Start-up refusals: no such process, and the GPU without NVML.
    let o = run_real(&[
        "--run-id",
        "r1",
        "--pid",
        "2147483647",
        "--output",
        "x.jsonl",
        "--no-gpu",
    ]);
    let e = o.result.unwrap_err();
    assert_eq!(
        (e.to_string().as_str(), e.exit()),
        ("no process with pid 2147483647", Exit::Usage)
    );
    let me = std::process::id().to_string();
    let path = dir.path().join("gpu.jsonl");
    let o = run_real(&[
        "--run-id",
        "r1",
        "--pid",
        &me,
        "--output",
        path.to_str().unwrap(),
        "--duration",
        "0.05",
    ]);
    if let Err(e) = &o.result {
        // Hosts without NVIDIA drivers (the usual CI machine).
        if matches!(e, CollectError::Gpu(GpuOpenError::Unavailable)) {
            assert_eq!(e.exit(), Exit::Usage);
            assert!(!path.exists(), "nothing is written before the GPU opens");
        }
    }

    // 4. SIGTERM ends the collection after the poll in progress.
    let mut long = Command::new("sleep").arg("30").spawn().unwrap();
    let pid = long.id().to_string();
    let path = dir.path().join("term.jsonl");
    let killer = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(400));
        Command::new("kill").args(["-TERM", &me]).status()
    });
    let o = run_real(&[
        "--run-id",
        "r1",
        "--pid",
        &pid,
        "--output",
        path.to_str().unwrap(),
        "--no-gpu",
        "--interval",
        "0.1",
    ]);
    assert!(killer.join().unwrap().unwrap().success());
    assert_eq!(o.result.unwrap(), Exit::Ok);
    assert!(o.out.ends_with("(stopped: stop_requested)\n"), "{}", o.out);
    assert_eq!(o.err, "");
    assert!(lines(&path).iter().all(|r| r["state"] == "valid"));
    long.kill().unwrap();
    long.wait().unwrap();
}
