//! A user's first hour (issue 21) and read commands on files that are not
//! theirs (issue 23, defect 6): read commands never create or change a
//! database, one status for an unknown run, gates that can fail, per-file
//! ingest messages, `runs delete`, `--db` anywhere, every `--help` and the
//! listed error messages as snapshots, and the README's tour as written.
use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::Value;

use crate::common::{bin, run_in};

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn example(name: &str) -> String {
    repo().join("examples").join(name).display().to_string()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn code(o: &Output) -> i32 {
    o.status.code().unwrap_or(-1)
}

/// The names in `dir`, sorted.
fn listing(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// A folder with a database holding the two bundled single runs.
fn project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let out = run_in(
        dir.path(),
        &[
            "ingest",
            &example("fixed_rate.jsonl"),
            &example("telemetry_joined.jsonl"),
            &example("telemetry_joined.telemetry.jsonl"),
            &example("compare/baseline_b1.jsonl"),
            &example("compare/candidate_b1.jsonl"),
        ],
    );
    assert_eq!(code(&out), 0, "{}", text(&out.stderr));
    dir
}

/// Every read command, each naming a run where it takes one.
fn read_commands() -> Vec<Vec<&'static str>> {
    vec![
        vec!["runs"],
        vec!["runs", "--format", "json"],
        vec!["report", "fixed_rate"],
        vec!["report", "--all"],
        vec!["report", "fixed_rate", "telemetry_joined"],
        vec!["sql", "SELECT 1"],
        vec!["export", "fixed_rate"],
        vec!["export", "--telemetry", "telemetry_joined"],
        vec![
            "compare",
            "--db",
            "stormlog.db",
            "--baseline",
            "cmp_baseline_b1",
            "--candidate",
            "cmp_candidate_b1",
        ],
    ]
}

#[test]
fn read_commands_never_create_a_database() {
    for args in read_commands() {
        let dir = tempfile::tempdir().unwrap();
        let out = run_in(dir.path(), &args);
        assert_eq!(code(&out), 5, "{args:?}: {}", text(&out.stderr));
        assert_eq!(
            text(&out.stderr),
            "Error: no project database at ./stormlog.db; run `stormlog ingest FILE` first (or pass --db PATH)\n",
            "{args:?}"
        );
        assert!(
            listing(dir.path()).is_empty(),
            "{args:?} left {:?}",
            listing(dir.path())
        );
    }
}

#[test]
fn defect_6_read_commands_leave_a_foreign_sqlite_file_unchanged() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("stormlog.db");
    {
        let conn = rusqlite::Connection::open(&db).unwrap();
        conn.execute_batch("CREATE TABLE notes (body TEXT); INSERT INTO notes VALUES ('mine');")
            .unwrap();
    }
    let before = std::fs::read(&db).unwrap();
    for args in read_commands() {
        let out = run_in(dir.path(), &args);
        assert_eq!(code(&out), 5, "{args:?}: {}", text(&out.stderr));
        assert!(
            text(&out.stderr).contains("stormlog.db: not a stormlog database"),
            "{args:?}: {}",
            text(&out.stderr)
        );
        assert_eq!(
            std::fs::read(&db).unwrap(),
            before,
            "{args:?} changed the file"
        );
        assert_eq!(listing(dir.path()), ["stormlog.db"], "{args:?}");
    }
    // Nor does a writing command take it over.
    let out = run_in(dir.path(), &["ingest", &example("fixed_rate.jsonl")]);
    assert_eq!(code(&out), 5, "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("stormlog.db: not a stormlog database"));
    assert_eq!(
        std::fs::read(&db).unwrap(),
        before,
        "ingest changed the file"
    );
    // A file that is not SQLite at all: the same refusal, nothing touched.
    std::fs::write(&db, "[package]\nname = \"x\"\n").unwrap();
    let out = run_in(dir.path(), &["sql", "SELECT 1"]);
    assert_eq!(code(&out), 5, "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("not a stormlog database"));
    assert_eq!(std::fs::read(&db).unwrap(), b"[package]\nname = \"x\"\n");
}

#[test]
fn defect_6_read_commands_leave_no_wal_or_shm_behind() {
    let dir = project();
    assert_eq!(listing(dir.path()), ["stormlog.db"]);
    for args in read_commands() {
        let out = run_in(dir.path(), &args);
        assert_eq!(code(&out), 0, "{args:?}: {}", text(&out.stderr));
        assert_eq!(listing(dir.path()), ["stormlog.db"], "{args:?}");
    }
}

#[test]
fn defect_6_a_database_whose_directory_cannot_be_written_is_readable() {
    let dir = project();
    // A directory where the `-shm` file would go stops SQLite making it,
    // as a read-only directory does (and this works for root too).
    std::fs::create_dir(dir.path().join("stormlog.db-shm")).unwrap();
    let before = std::fs::read(dir.path().join("stormlog.db")).unwrap();
    for args in read_commands() {
        let out = run_in(dir.path(), &args);
        assert_eq!(code(&out), 0, "{args:?}: {}", text(&out.stderr));
    }
    let out = run_in(
        dir.path(),
        &["sql", "--format", "csv", "SELECT count(*) AS n FROM v_runs"],
    );
    assert_eq!(text(&out.stdout), "n\n4\n");
    assert_eq!(
        std::fs::read(dir.path().join("stormlog.db")).unwrap(),
        before
    );
    std::fs::remove_dir(dir.path().join("stormlog.db-shm")).unwrap();

    // A real read-only directory, where permissions bind (not for root).
    use std::os::unix::fs::PermissionsExt;
    let set =
        |mode| std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(mode)).unwrap();
    set(0o555);
    let writable = std::fs::write(dir.path().join("probe"), "").is_ok();
    if !writable {
        for args in read_commands() {
            let out = run_in(dir.path(), &args);
            assert_eq!(code(&out), 0, "{args:?}: {}", text(&out.stderr));
        }
    }
    set(0o755);
}

#[test]
fn an_unknown_run_is_invalid_input_everywhere_with_the_closest_ids() {
    let dir = project();
    let commands: Vec<Vec<&str>> = vec![
        vec!["report", "fixed_rtae"],
        vec!["report", "fixed_rate", "fixed_rtae"],
        vec!["export", "fixed_rtae"],
        vec!["runs", "delete", "--yes", "fixed_rtae"],
        vec![
            "compare",
            "--db",
            "stormlog.db",
            "--baseline",
            "fixed_rtae",
            "--candidate",
            "fixed_rate",
        ],
    ];
    for args in commands {
        let out = run_in(dir.path(), &args);
        assert_eq!(code(&out), 5, "{args:?}: {}", text(&out.stderr));
        assert!(
            text(&out.stderr)
                .contains("no run 'fixed_rtae' in the database; did you mean fixed_rate?"),
            "{args:?}: {}",
            text(&out.stderr)
        );
    }
    let out = run_in(dir.path(), &["report", "zzzz"]);
    assert_eq!(
        text(&out.stderr),
        "Error: no run 'zzzz' in the database; `stormlog runs` lists them\n"
    );
}

#[test]
fn check_fails_with_4_when_nothing_could_be_judged() {
    let dir = project();
    let run = |args: &[&str]| {
        let out = run_in(dir.path(), args);
        (code(&out), text(&out.stderr))
    };
    // No policy: the run records none and none is given.
    let (c, e) = run(&["report", "fixed_rate", "--check"]);
    assert_eq!(c, 4, "{e}");
    assert!(
        e.contains("check failed: run fixed_rate: no SLO policy"),
        "{e}"
    );
    let (c, e) = run(&["report", "--all", "--check"]);
    assert_eq!(c, 4, "{e}");
    // A policy from flags without a target.
    let (c, e) = run(&["report", "--all", "--slo", "ttft:20", "--check"]);
    assert_eq!(c, 4, "{e}");
    assert!(e.contains("case c8_in128_out24: no target"), "{e}");
    // With targets the gate decides: met, then missed.
    let (c, e) = run(&["report", "--all", "--slo", "ttft:2000@90%", "--check"]);
    assert_eq!(c, 0, "{e}");
    let (c, e) = run(&["report", "--all", "--slo", "ttft:20@50%", "--check"]);
    assert_eq!(c, 4, "{e}");
    assert_eq!(
        e.trim_end(),
        "check failed: run telemetry_joined case c8_in128_out24: missed"
    );
    let (c, e) = run(&[
        "report",
        "fixed_rate",
        "--slo",
        "e2e:4000",
        "--target",
        "99%",
        "--check",
    ]);
    assert_eq!(c, 0, "{e}");
    // No run, so no case: nothing to judge.
    let out = run_in(
        dir.path(),
        &[
            "runs",
            "delete",
            "--yes",
            "fixed_rate",
            "telemetry_joined",
            "cmp_baseline_b1",
            "cmp_candidate_b1",
        ],
    );
    assert_eq!(code(&out), 0, "{}", text(&out.stderr));
    let (c, e) = run(&["report", "--all", "--slo", "ttft:500@95%", "--check"]);
    assert_eq!(c, 4, "{e}");
    assert_eq!(e, "check failed: nothing to judge (no run, or no case)\n");
}

#[test]
fn ingest_of_several_files_says_what_each_did_and_sums_up() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("Cargo.toml"), "[package]\nname = \"x\"\n").unwrap();
    std::fs::write(dir.path().join("logo.png"), b"\x89PNG\r\n").unwrap();
    std::fs::copy(
        example("fixed_rate.jsonl"),
        dir.path().join("fixed_rate.jsonl"),
    )
    .unwrap();
    let out = run_in(
        dir.path(),
        &[
            "ingest",
            "Cargo.toml",
            "fixed_rate.jsonl",
            "logo.png",
            "fixed_rate.jsonl",
        ],
    );
    assert_eq!(code(&out), 5);
    assert_eq!(
        text(&out.stderr),
        "Error: Cargo.toml is not JSON Lines: line 1 is not a JSON object (a value was expected at column 2); nothing from it was stored\n\
         Error: logo.png is not UTF-8 text: line 1: byte 0x89 (invalid start byte); nothing from it was stored\n"
    );
    let stdout = text(&out.stdout);
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 3, "{stdout}");
    assert!(lines[0].starts_with(
        "fixed_rate.jsonl: artifact ingested: run fixed_rate, 314 records, 294.4 KiB in "
    ));
    assert!(lines[1]
        .starts_with("fixed_rate.jsonl: artifact unchanged (already ingested): run fixed_rate"));
    assert_eq!(
        lines[2],
        "4 files: 1 stored, 1 unchanged, 2 refused (nothing of a refused file was stored; the others were)"
    );
    let runs = run_in(dir.path(), &["runs", "--format", "json"]);
    let runs: Value = serde_json::from_slice(&runs.stdout).unwrap();
    assert_eq!(runs.as_array().unwrap().len(), 1);
    assert_eq!(runs[0]["run_id"], "fixed_rate");
    assert_eq!(runs[0]["requests"], 100);
}

#[test]
fn runs_delete_removes_a_run_and_all_it_holds() {
    let dir = project();
    let count = |sql: &str| {
        let out = run_in(dir.path(), &["sql", "--format", "csv", sql]);
        assert_eq!(code(&out), 0, "{}", text(&out.stderr));
        text(&out.stdout)
    };
    let samples = "SELECT count(*) AS n FROM v_server_samples WHERE run_id = 'telemetry_joined'";
    assert_ne!(count(samples), "n\n0\n");
    // A prefix is not enough to delete.
    let out = run_in(dir.path(), &["runs", "delete", "--yes", "telemetry"]);
    assert_eq!(code(&out), 5);
    assert!(text(&out.stderr).contains("did you mean telemetry_joined?"));
    let out = run_in(dir.path(), &["runs", "rm", "telemetry_joined"]);
    assert_eq!(code(&out), 0, "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "deleted run telemetry_joined\n");
    assert_eq!(count(samples), "n\n0\n");
    for table in [
        "requests",
        "records",
        "request_packs",
        "attached_files",
        "contexts",
    ] {
        let q = format!("SELECT count(*) AS n FROM {table} WHERE run_id = 'telemetry_joined'");
        assert_eq!(count(&q), "n\n0\n", "{table}");
    }
    assert_eq!(
        count("SELECT group_concat(run_id, ' ') AS n FROM (SELECT run_id FROM v_runs ORDER BY 1)"),
        "n\ncmp_baseline_b1 cmp_candidate_b1 fixed_rate\n"
    );
}

#[test]
fn db_is_taken_before_or_after_the_command_and_from_the_environment() {
    let dir = tempfile::tempdir().unwrap();
    let fixed = example("fixed_rate.jsonl");
    let out = run_in(dir.path(), &["--db", "a.db", "ingest", &fixed]);
    assert_eq!(code(&out), 0, "{}", text(&out.stderr));
    let out = run_in(dir.path(), &["ingest", &fixed, "--db", "b.db"]);
    assert_eq!(code(&out), 0, "{}", text(&out.stderr));
    assert_eq!(listing(dir.path()), ["a.db", "b.db"]);
    for args in [
        vec!["--db", "a.db", "runs", "--format", "csv"],
        vec!["runs", "--db", "b.db", "--format", "csv"],
    ] {
        let out = run_in(dir.path(), &args);
        assert!(text(&out.stdout).contains("\nfixed_rate,"), "{args:?}");
    }
    let out = bin()
        .current_dir(dir.path())
        .env("STORMLOG_DB", "a.db")
        .args(["report", "fixed_rate", "--format", "json"])
        .output()
        .unwrap();
    assert_eq!(code(&out), 0, "{}", text(&out.stderr));
    // On the command line it wins over the environment, before or after.
    let out = bin()
        .current_dir(dir.path())
        .env("STORMLOG_DB", "a.db")
        .args(["--db", "c.db", "runs"])
        .output()
        .unwrap();
    assert!(text(&out.stderr).contains("no project database at ./c.db"));
}

/// Every command's `--help`, one snapshot each.
#[test]
fn help_of_every_command() {
    let commands: &[&[&str]] = &[
        &["ingest"],
        &["runs"],
        &["runs", "delete"],
        &["export"],
        &["report"],
        &["analyze"],
        &["compare"],
        &["sql"],
        &["collect-server"],
        &["infer"],
        &["infer", "analyze"],
        &["infer", "compare"],
        &["infer", "collect-server"],
        &["migrate"],
    ];
    for command in commands {
        let out = bin()
            .args(*command)
            .arg("--help")
            .env("STORMLOG_DB", "not/shown.db")
            .output()
            .unwrap();
        assert_eq!(code(&out), 0, "{command:?}");
        let help = text(&out.stdout);
        assert!(help.contains("Example"), "{command:?} has no examples");
        assert!(!help.contains("infer profile"), "{command:?}");
        let name = format!("help_{}", command.join("_").replace('-', "_"));
        insta::with_settings!({snapshot_path => "../../snapshots", prepend_module_to_snapshot => false}, {
            insta::assert_snapshot!(name, help);
        });
    }
}

/// `sql --help` names every view a project database has, and nothing else,
/// and its example queries run on one.
#[test]
fn sql_help_names_the_views_and_its_examples_run() {
    let dir = project();
    let help = text(&bin().args(["sql", "--help"]).output().unwrap().stdout);
    let mut named: Vec<String> = help
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .filter(|w| w.starts_with("v_"))
        .map(str::to_owned)
        .collect();
    named.sort();
    named.dedup();
    let out = run_in(
        dir.path(),
        &[
            "sql",
            "--format",
            "csv",
            "SELECT name FROM sqlite_schema WHERE type = 'view' ORDER BY name",
        ],
    );
    assert_eq!(code(&out), 0, "{}", text(&out.stderr));
    let views: Vec<String> = text(&out.stdout)
        .lines()
        .skip(1)
        .map(str::to_owned)
        .collect();
    assert_eq!(named, views);
    let examples: Vec<&str> = help
        .lines()
        .filter_map(|l| l.trim().strip_prefix("stormlog sql "))
        .filter_map(|l| l.split('"').nth(1))
        .collect();
    assert_eq!(examples.len(), 2, "{help}");
    for query in examples {
        let out = run_in(dir.path(), &["sql", query]);
        assert_eq!(code(&out), 0, "{query}: {}", text(&out.stderr));
    }
}

/// The error messages a first hour meets, with their exit statuses.
#[test]
fn first_hour_error_messages() {
    let dir = project();
    std::fs::write(dir.path().join("Cargo.toml"), "[package]\nname = \"x\"\n").unwrap();
    std::fs::write(dir.path().join("logo.png"), b"\x89PNG\r\n").unwrap();
    let long = format!(
        "{{\"event_type\": \"infer.request\", \"x\": \"{}\n",
        "a".repeat(40)
    );
    std::fs::write(dir.path().join("cut.jsonl"), long).unwrap();
    std::fs::write(dir.path().join("foreign.db"), "").unwrap();
    std::fs::write(dir.path().join("bad.toml"), "name = \"x\"\n[[criteria]\n").unwrap();
    let cases: &[&[&str]] = &[
        &["--db", "missing.db", "runs"],
        &["--db", "foreign.db", "runs"],
        &["--db", "Cargo.toml", "sql", "SELECT 1"],
        &["report", "fixed_rtae"],
        &["report", "zzzz"],
        &["report"],
        &["report", "fixed_rate", "--check"],
        &["report", "fixed_rate", "--slo", "ttft:500", "--check"],
        &["report", "fixed_rate", "--slo", "nosuchfile.toml"],
        &["report", "fixed_rate", "--slo-file", "bad.toml"],
        &["report", "fixed_rate", "--slo", "ttft:500@150%"],
        &[
            "report",
            "fixed_rate",
            "--slo",
            "ttft:500@95%",
            "--slo",
            "e2e:4000",
            "--target",
            "1.5",
        ],
        &["ingest", "Cargo.toml"],
        &["ingest", "logo.png"],
        &["ingest", "cut.jsonl"],
        &["runs", "delete", "--yes", "fixed"],
        &[
            "compare",
            "--baseline",
            "fixed_rate",
            "--candidate",
            "Cargo.toml",
        ],
        &[
            "--db",
            "none.db",
            "compare",
            "--baseline",
            "fixed_rate",
            "--candidate",
            "telemetry_joined",
        ],
    ];
    let mut shown = String::new();
    for args in cases {
        let out = run_in(dir.path(), args);
        shown.push_str(&format!(
            "$ stormlog {}\n{}[exit {}]\n\n",
            args.join(" "),
            text(&out.stderr),
            code(&out)
        ));
    }
    insta::with_settings!({snapshot_path => "../../snapshots", prepend_module_to_snapshot => false}, {
        insta::assert_snapshot!("first_hour_errors", shown);
    });
}

/// A command of the README's tour and the output lines it shows.
struct Step {
    command: String,
    shown: Vec<String>,
}

/// The `console` blocks of the README: `$ ` lines are commands, the lines
/// after one are (part of) what it prints.
fn tour() -> Vec<Step> {
    let readme = std::fs::read_to_string(repo().join("README.md")).unwrap();
    let mut steps: Vec<Step> = Vec::new();
    let mut inside = false;
    for line in readme.lines() {
        if line.starts_with("```") {
            inside = line == "```console";
            continue;
        }
        if !inside {
            continue;
        }
        match line.strip_prefix("$ ") {
            Some(command) => steps.push(Step {
                command: command.to_owned(),
                shown: Vec::new(),
            }),
            None => steps
                .last_mut()
                .expect("a console block starts with a command")
                .shown
                .push(line.to_owned()),
        }
    }
    steps
}

/// Whether `shown` appears in `printed`, in order (a shown line ending in
/// `...` stands for any line that starts with what comes before it).
fn shows(printed: &str, shown: &[String]) -> Result<(), String> {
    let mut lines = printed.lines();
    for want in shown {
        let hit = |got: &str| match want.strip_suffix("...") {
            Some(prefix) => got.starts_with(prefix),
            None => got == want,
        };
        if !lines.any(hit) {
            return Err(want.clone());
        }
    }
    Ok(())
}

/// The README's tour, word for word, in a folder laid out as a fresh clone
/// (its `examples/`), with this build's `stormlog` first on the PATH.
#[test]
fn the_readme_tour_runs_as_written() {
    let steps = tour();
    assert!(steps.len() >= 8, "{} steps", steps.len());
    let dir = tempfile::tempdir().unwrap();
    let status = std::process::Command::new("cp")
        .arg("-R")
        .arg(repo().join("examples"))
        .arg(dir.path())
        .status()
        .unwrap();
    assert!(status.success());
    let bin_dir = Path::new(env!("CARGO_BIN_EXE_stormlog"))
        .parent()
        .unwrap()
        .to_owned();
    let path = format!(
        "{}:{}",
        bin_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    for step in steps {
        assert!(step.command.starts_with("stormlog "), "{}", step.command);
        let out = std::process::Command::new("sh")
            .arg("-c")
            .arg(&step.command)
            .current_dir(dir.path())
            .env("PATH", &path)
            .env_remove("STORMLOG_DB")
            .output()
            .unwrap();
        let printed = format!("{}{}", text(&out.stdout), text(&out.stderr));
        assert_eq!(code(&out), 0, "{}:\n{printed}", step.command);
        if let Err(missing) = shows(&printed, &step.shown) {
            panic!(
                "{}: the README shows\n{missing}\nbut it printed\n{printed}",
                step.command
            );
        }
    }
}

#[test]
fn report_all_fits_100_columns_and_report_speaks_mib() {
    let dir = project();
    let policy = repo().join("examples/slo/interactive.toml");
    let out = run_in(
        dir.path(),
        &["report", "--all", "--slo-file", policy.to_str().unwrap()],
    );
    assert_eq!(code(&out), 0, "{}", text(&out.stderr));
    let table = text(&out.stdout);
    assert!(table.starts_with("policy interactive\nRUN "), "{table}");
    for line in table.lines() {
        assert!(
            line.chars().count() <= 100,
            "{} columns: {line}",
            line.len()
        );
    }
    // One row per case (7 in the 4 runs), its other targets on lines below.
    assert_eq!(table.lines().filter(|l| l.ends_with("  met")).count(), 7);
    let out = run_in(
        dir.path(),
        &["report", "telemetry_joined", "--direct-server"],
    );
    let report = text(&out.stdout);
    assert!(
        report.contains("max recorded 31.6 MiB, 30 samples"),
        "{report}"
    );
    assert!(!report.contains(" bytes,"), "{report}");
}

#[test]
fn an_older_database_is_read_only_after_stormlog_migrate() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("stormlog.db");
    {
        let conn = rusqlite::Connection::open(&db).unwrap();
        for sql in [
            include_str!("../../migrations/0001_initial.sql"),
            include_str!("../../migrations/0002_views.sql"),
            include_str!("../../migrations/0003_requests_rowid.sql"),
            include_str!("../../migrations/0004_request_packs.sql"),
        ] {
            conn.execute_batch(sql).unwrap();
        }
        conn.pragma_update(None, "user_version", 4).unwrap();
    }
    let before = std::fs::read(&db).unwrap();
    let out = run_in(dir.path(), &["sql", "SELECT 1"]);
    assert_eq!(code(&out), 5);
    assert!(
        text(&out.stderr).contains("schema version 4, older than this stormlog's"),
        "{}",
        text(&out.stderr)
    );
    assert_eq!(std::fs::read(&db).unwrap(), before);
    let out = run_in(dir.path(), &["migrate"]);
    assert_eq!(code(&out), 0, "{}", text(&out.stderr));
    assert!(text(&out.stdout).starts_with("stormlog.db: schema version "));
    let out = run_in(dir.path(), &["runs"]);
    assert_eq!(code(&out), 0, "{}", text(&out.stderr));
    // A missing database is not made by migrate either.
    let out = run_in(dir.path(), &["migrate", "--db", "other.db"]);
    assert_eq!(code(&out), 5);
    assert!(!dir.path().join("other.db").exists());
}

/// `report --format csv`: one row per judged case, the figures in full.
/// Hand-checked against the artifacts with SQL: telemetry_joined's case
/// c1_in128_out24 has 24 measured requests, 16 of them ok with TTFT ≤ 20 ms,
/// over a 1.466567154 s window (16 / 1.466567154 = 10.909831136174484 per
/// second); c8 has 1 of 24 (1 / 0.451834756 = 2.213198490644664).
#[test]
fn report_all_as_csv_has_a_row_per_case() {
    let dir = project();
    let out = run_in(
        dir.path(),
        &["report", "--all", "--slo", "ttft:20@50%", "--format", "csv"],
    );
    assert_eq!(code(&out), 0, "{}", text(&out.stderr));
    let csv = text(&out.stdout);
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(
        lines[0],
        "run_id,case_id,policy,status,reason,offered,met,missed,unknown,attainment_lower,\
         attainment_upper,goodput_lower_rps,goodput_upper_rps,targets,verdict"
    );
    // The two single runs' five cases and the two compare runs' one each.
    assert_eq!(lines.len(), 1 + 5 + 2, "{csv}");
    assert!(
        lines.contains(
            &"telemetry_joined,c1_in128_out24,cli,evaluated,,24,16,8,0,0.6666666666666666,\
              0.6666666666666666,10.909831136174484,10.909831136174484,client.ttft>=0.5:met,met"
        ),
        "{csv}"
    );
    assert!(
        lines.contains(
            &"telemetry_joined,c8_in128_out24,cli,evaluated,,24,1,23,0,0.041666666666666664,\
              0.041666666666666664,2.213198490644664,2.213198490644664,client.ttft>=0.5:missed,missed"
        ),
        "{csv}"
    );
    // The same figures as the JSON form, which the SQL above checks.
    let out = run_in(
        dir.path(),
        &["sql", "--format", "csv",
          "SELECT count(*), sum(ok AND ttft_ms <= 20) FROM v_requests \
           WHERE run_id = 'telemetry_joined' AND case_key = 'c1_in128_out24' AND phase = 'measured'"],
    );
    assert_eq!(text(&out.stdout).lines().nth(1), Some("24,16"));
    // One run gives its cases' rows; to a file, with the line that says so.
    let out = run_in(
        dir.path(),
        &[
            "report",
            "fixed_rate",
            "--slo",
            "ttft:20@50%",
            "--format",
            "csv",
            "-o",
            "j.csv",
        ],
    );
    assert_eq!(code(&out), 0, "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "Judgements saved to: j.csv\n");
    let saved = std::fs::read_to_string(dir.path().join("j.csv")).unwrap();
    assert_eq!(saved.lines().count(), 3, "{saved}");
    assert!(saved
        .lines()
        .all(|l| l.starts_with("run_id,") || l.starts_with("fixed_rate,")));
}

/// `compare` finds the project database as every command does when its arms
/// are run ids: ./stormlog.db, $STORMLOG_DB, --db before or after the command.
#[test]
fn compare_reads_the_database_every_command_reads() {
    let dir = project();
    let db = dir.path().join("stormlog.db").display().to_string();
    let elsewhere = tempfile::tempdir().unwrap();
    let arms = [
        "--baseline",
        "cmp_baseline_b1",
        "--candidate",
        "cmp_candidate_b1",
        "--format",
        "json",
    ];
    let ok = |out: Output, how: &str| {
        assert_eq!(code(&out), 0, "{how}: {}", text(&out.stderr));
        let report: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(report["format"], "stormlog.report", "{how}");
        assert!(text(&out.stdout).contains("cmp_candidate_b1"), "{how}");
    };
    ok(
        run_in(dir.path(), &[&["compare"], &arms[..]].concat()),
        "./stormlog.db",
    );
    ok(
        run_in(
            elsewhere.path(),
            &[&["--db", &db, "compare"], &arms[..]].concat(),
        ),
        "--db before",
    );
    ok(
        run_in(
            elsewhere.path(),
            &[&["compare"], &arms[..], &["--db", &db]].concat(),
        ),
        "--db after",
    );
    let from_env = bin()
        .current_dir(elsewhere.path())
        .env("STORMLOG_DB", &db)
        .arg("compare")
        .args(arms)
        .output()
        .unwrap();
    ok(from_env, "STORMLOG_DB");
    // Files are still read as files, whatever database is about.
    let files = bin()
        .current_dir(elsewhere.path())
        .env("STORMLOG_DB", "nowhere.db")
        .args([
            "compare",
            "--baseline",
            &example("compare/baseline_b1.jsonl"),
            "--candidate",
            &example("compare/candidate_b1.jsonl"),
            "--format",
            "json",
        ])
        .output()
        .unwrap();
    assert_eq!(code(&files), 0, "{}", text(&files.stderr));
    // A run id and no database: the hint, exit 5, and nothing created.
    let out = run_in(elsewhere.path(), &[&["compare"], &arms[..]].concat());
    assert_eq!(code(&out), 5, "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stderr),
        "Error: cmp_baseline_b1 is not a file, and as a run id it needs a project database: \
         no project database at ./stormlog.db; run `stormlog ingest FILE` first (or pass --db PATH)\n"
    );
    assert!(
        listing(elsewhere.path()).is_empty(),
        "{:?}",
        listing(elsewhere.path())
    );
    // An unknown run id found through the default database says how it was read.
    let out = run_in(
        dir.path(),
        &[
            "compare",
            "--baseline",
            "fixed_rtae",
            "--candidate",
            "fixed_rate",
        ],
    );
    assert_eq!(code(&out), 5, "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("no run 'fixed_rtae' in the database; did you mean fixed_rate?"),
        "{}",
        text(&out.stderr)
    );
}

/// Every documented view's every column has a declared type a scanner can
/// read (`PRAGMA table_info`), and the typed columns hold what they did.
#[test]
fn every_view_column_has_a_declared_type() {
    let dir = project();
    let views = [
        "v_runs",
        "v_requests",
        "v_case_windows",
        "v_case_summary",
        "v_server_samples",
        "v_imports",
        "v_import_requests",
    ];
    for view in views {
        let out = run_in(
            dir.path(),
            &[
                "sql",
                "--format",
                "csv",
                &format!("SELECT name, type FROM pragma_table_info('{view}')"),
            ],
        );
        assert_eq!(code(&out), 0, "{view}: {}", text(&out.stderr));
        let listed = text(&out.stdout);
        let rows: Vec<&str> = listed.lines().skip(1).collect();
        assert!(rows.len() > 10, "{view}: {listed}");
        for row in rows {
            let (name, ty) = row.split_once(',').unwrap();
            assert!(
                ["INTEGER", "INT", "REAL", "TEXT"].contains(&ty),
                "{view}.{name} has type {ty:?}"
            );
        }
    }
    // The derived values, read back: fixed_rate started at
    // 1795961295357104925 ns = 2026-11-29T14:08:15.357Z.
    let out = run_in(
        dir.path(),
        &[
            "sql",
            "--format",
            "csv",
            "SELECT r.started_at, r.started_at_ms, typeof(r.cases), \
             (SELECT typeof(ok) || ' ' || typeof(started_s) || ' ' || typeof(started_at_ms) \
              FROM v_requests WHERE run_id = r.run_id LIMIT 1), \
             (SELECT count(*) FROM v_case_windows w \
              WHERE w.run_id = r.run_id AND w.window_s = (w.drained_at_ns - w.started_at_ns) / 1e9 \
              AND w.started_at_ms = w.started_at_ns / 1000000) \
             FROM v_runs r WHERE run_id = 'fixed_rate'",
        ],
    );
    assert_eq!(
        text(&out.stdout).lines().nth(1),
        Some("2026-11-29T14:08:15.357Z,1795961295357,integer,integer real integer,2")
    );
}
