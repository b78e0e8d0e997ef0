//! The dispatch from a parsed command to its `cli` module, which checks the
//! flags into a plain config and calls `ops`.
use std::io::Write;
use std::path::PathBuf;

use super::{Command, InferCommand};
use crate::db::DbError;
use crate::exit::Exit;

pub use crate::ops::ingest::ingest_failure;
/// An error on its way to stderr, with the exit status it maps to
/// (`ops::Error`; the old name keeps working).
pub use crate::ops::Error as CliError;

type Result<T> = std::result::Result<T, CliError>;

pub fn run(command: Command, out: &mut dyn Write, err: &mut dyn Write) -> Result<Exit> {
    match command {
        Command::Ingest(a) => super::ingest::run(a, out, err),
        Command::Runs(a) => super::runs::run(a, out, err),
        Command::Migrate(a) => super::migrate::run(a, out),
        Command::Compare(a) => cmd_compare(*a, false, out, err),
        Command::Infer {
            command: InferCommand::Compare(a),
        } => cmd_compare(*a, true, out, err),
        Command::Sql(a) => super::sql::run(a, out, err),
        Command::History(a) => super::history::run(a, out),
        Command::Export(a) => super::export::run(a, out),
        Command::Slo(a) => super::slo::run(a, out, err),
        Command::Report(a) => super::report::run(a, out, err),
        Command::Analyze(a)
        | Command::Infer {
            command: InferCommand::Analyze(a),
        } => super::analyze::run(a, out, err),
        Command::CollectServer(a)
        | Command::Infer {
            command: InferCommand::CollectServer(a),
        } => super::collect::run(a, out, err),
    }
}

/// The project database a command uses when no --db is given: $STORMLOG_DB
/// (when set and not empty), else ./stormlog.db, as `DbArg` has it.
fn default_db_path() -> PathBuf {
    std::env::var_os("STORMLOG_DB")
        .filter(|v| !v.is_empty())
        .map_or_else(|| PathBuf::from("stormlog.db"), PathBuf::from)
}

/// `compare` and the drop-in `infer compare` (`drop_in`: the reference's
/// messages, unchanged).
fn cmd_compare(
    mut a: super::compare::CompareArgs,
    drop_in: bool,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<Exit> {
    // The report records the command line as the reference spells it.
    if a.argv.is_empty() {
        let args: Vec<String> = std::env::args().skip(1).collect();
        let from = args
            .iter()
            .position(|x| x == "compare")
            .map_or(0, |i| i + 1);
        a.argv = ["infer".to_owned(), "compare".to_owned()]
            .into_iter()
            .chain(args[from..].iter().cloned())
            .collect();
    }
    let first_missing = a
        .baseline
        .iter()
        .chain(&a.candidate)
        .find(|p| !p.exists())
        .cloned();
    // `compare` finds its database as every other command does (--db before
    // or after the command, $STORMLOG_DB, ./stormlog.db) when no arm names a
    // file: the arms are then run ids. Arms that are files are read as
    // artifacts, with or without a database about. The drop-in `infer
    // compare` reads files unless --db is given, as the reference does.
    let mut implicit_db = None;
    if !drop_in && a.db.is_none() {
        let any_file = a.baseline.iter().chain(&a.candidate).any(|p| p.exists());
        if a.experiment.is_some() || !any_file {
            let path = default_db_path();
            if !path.exists() {
                let what = match (&a.experiment, &first_missing) {
                    (Some(_), _) | (None, None) => "--experiment chooses stored runs".to_owned(),
                    (None, Some(arm)) => format!(
                        "{} is not a file, and as a run id it needs a project database",
                        crate::util::printable(&arm.display().to_string())
                    ),
                };
                let missing = DbError::Missing { path };
                return Err(CliError::new(
                    Exit::InvalidInput,
                    format!("{what}: {missing}"),
                ));
            }
            implicit_db = Some(path.clone());
            a.db = Some(path);
        }
    }
    let no_db = a.db.is_none();
    super::compare::run(&a, out, err).map_err(|e| {
        let mut message = e.to_string();
        let broken_pipe = message.contains("Broken pipe");
        if let (false, true, Some(missing)) = (drop_in, no_db, &first_missing) {
            message.push_str(&format!(
                "; if {} is a stored run id, pass --db PATH (before or after `compare`)",
                missing.display()
            ));
        }
        if let (Some(path), None) = (&implicit_db, &a.experiment) {
            if e.exit() == Exit::InvalidInput {
                message.push_str(&format!(
                    "; no arm names a file, so the arms were read as run ids in {}",
                    path.display()
                ));
            }
        }
        CliError {
            message,
            exit: e.exit(),
            broken_pipe,
        }
    })
}
