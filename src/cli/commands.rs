//! The dispatch from a parsed command to its `cli` module, which checks the
//! flags into a plain config and calls `ops`.
use std::io::Write;

use super::{Command, InferCommand};
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
        Command::Compare(a) => super::compare::dispatch(*a, false, out, err),
        Command::Infer {
            command: InferCommand::Compare(a),
        } => super::compare::dispatch(*a, true, out, err),
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
