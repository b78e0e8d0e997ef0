//! Snapshots (insta, in snapshots/) of what people read when stormlog says
//! no or explains itself: the error message and exit status of every
//! refusal case of the bad-input corpus, and the `--help` of every command
//! and subcommand, found by walking the command tree.
use std::path::Path;

use crate::cases;
use crate::common::{bin, run_in};

fn snapshot(name: &str, text: &str) {
    insta::with_settings!({snapshot_path => "../../snapshots", prepend_module_to_snapshot => false}, {
        insta::assert_snapshot!(name, text);
    });
}

#[test]
fn every_refusal_message_is_snapshotted() {
    let mut checked = 0;
    for case in cases::all(cases::BAD) {
        if !case.is_refusal() {
            continue;
        }
        let mut argv = case.infer_argv();
        argv.extend(["--format".to_owned(), "json".to_owned()]);
        let argv: Vec<&str> = argv.iter().map(String::as_str).collect();
        let out = run_in(&case.dir, &argv);
        let code = out.status.code();
        assert_eq!(code, Some(case.expected_rc()), "{}", case.name);
        assert!(
            out.stdout.is_empty(),
            "{}: a refusal printed a report",
            case.name
        );
        let stderr = String::from_utf8_lossy(&out.stderr);
        snapshot(
            &format!("refusal_{}", case.name),
            &format!("exit {}\n{stderr}", case.expected_rc()),
        );
        checked += 1;
    }
    assert!(checked >= 12, "only {checked} refusals");
}

/// The subcommands a `--help` lists under `Commands:` (`help` aside).
fn subcommands(help: &str) -> Vec<String> {
    help.lines()
        .skip_while(|l| l.trim_end() != "Commands:")
        .skip(1)
        .take_while(|l| !l.trim().is_empty())
        .filter(|l| l.starts_with("  ") && !l[2..].starts_with(' '))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|c| *c != "help")
        .map(str::to_owned)
        .collect()
}

#[test]
fn every_command_and_subcommand_help_is_snapshotted() {
    let mut todo: Vec<Vec<String>> = vec![vec![]];
    let mut seen = 0;
    while let Some(path) = todo.pop() {
        let out = bin()
            .args(&path)
            .arg("--help")
            .env("STORMLOG_DB", "not/shown.db")
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{path:?} --help");
        let help = String::from_utf8_lossy(&out.stdout).into_owned();
        for sub in subcommands(&help) {
            let mut next = path.clone();
            next.push(sub);
            todo.push(next);
        }
        // The names the existing snapshots use: help_<path>, or <path>_help
        // for the history and slo commands.
        // The top level is snapshotted by database.rs's help_snapshot.
        if path.is_empty() {
            continue;
        }
        let joined = path.join("_").replace('-', "_");
        let name = if Path::new(env!("CARGO_MANIFEST_DIR"))
            .join(format!("snapshots/{joined}_help.snap"))
            .exists()
        {
            format!("{joined}_help")
        } else {
            format!("help_{joined}")
        };
        seen += 1;
        snapshot(&name, &help);
    }
    assert!(seen >= 20, "only {seen} commands found");
}

#[test]
fn subcommands_are_read_off_the_commands_section() {
    let help = "About\n\nCommands:\n  runs    List the runs\n          continued [alias: ls]\n  help    Print\n\nOptions:\n  --db <DB>\n";
    assert_eq!(subcommands(help), ["runs"]);
}
