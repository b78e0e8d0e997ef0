//! `stormlog runs` and `runs delete`'s flags, turned into calls of `ops::runs`.
use std::io::Write;

use clap::{Args, ValueEnum};

use super::DbArg;
use crate::exit::Exit;
use crate::ops::runs::{self, DeleteConfig};

/// How a table of rows is printed.
#[derive(Debug, Clone, Copy, ValueEnum, PartialEq, Eq)]
pub enum TableFormat {
    /// Aligned columns for a terminal.
    #[value(name = "txt", alias = "table")]
    Table,
    /// A JSON array of objects.
    Json,
    /// Comma-separated values with a header line.
    Csv,
}

impl From<TableFormat> for runs::TableFormat {
    fn from(f: TableFormat) -> Self {
        match f {
            TableFormat::Table => runs::TableFormat::Table,
            TableFormat::Json => runs::TableFormat::Json,
            TableFormat::Csv => runs::TableFormat::Csv,
        }
    }
}

#[derive(Debug, Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct RunsArgs {
    #[command(flatten)]
    pub db: DbArg,
    /// Output format: txt (alias table) for people, json, csv.
    #[arg(long, value_enum, default_value = "txt")]
    pub format: TableFormat,
    #[command(subcommand)]
    pub action: Option<RunsAction>,
}

#[derive(Debug, clap::Subcommand)]
pub enum RunsAction {
    /// Delete runs and everything attached to them (requests, records,
    /// telemetry, spans), all in one transaction.
    #[command(
        visible_alias = "rm",
        after_help = "Examples:\n  stormlog runs delete o100            # a stray ingest\n  stormlog runs delete r1 r2 --yes     # no question on a terminal"
    )]
    Delete(RunsDeleteArgs),
}

#[derive(Debug, Args)]
pub struct RunsDeleteArgs {
    #[command(flatten)]
    pub db: DbArg,
    /// Delete without asking (on a terminal, stormlog asks first).
    #[arg(long, short = 'y')]
    pub yes: bool,
    /// Whole run ids (see `stormlog runs`; a prefix is only suggested back).
    #[arg(required = true, value_name = "RUN")]
    pub runs: Vec<String>,
}

/// Runs `runs` or `runs delete`.
pub fn run(a: RunsArgs, out: &mut dyn Write, err: &mut dyn Write) -> crate::ops::Result<Exit> {
    match a.action {
        Some(RunsAction::Delete(d)) => {
            let config = DeleteConfig {
                db: d.db.db,
                yes: d.yes,
                runs: d.runs,
            };
            runs::delete(&config, out, err)
        }
        None => runs::list(&a.db.db, a.format.into(), out),
    }
}
