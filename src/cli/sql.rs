//! `stormlog sql`'s flags, turned into `sqlcmd::SqlConfig`.
use std::io::Write;
use std::path::PathBuf;

use clap::{Args, ValueEnum};

use super::DbArg;
use crate::exit::Exit;
use crate::sqlcmd::{self, Format, SqlConfig};

/// The output formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, ValueEnum)]
pub enum SqlFormat {
    /// Columns aligned for a terminal, numbers right-aligned.
    #[default]
    #[value(name = "txt", alias = "table")]
    Table,
    /// Comma-separated values with a header line (RFC 4180 quoting).
    Csv,
    /// JSON lines: one object per row, keys in column order.
    Json,
    /// A GitHub-flavoured markdown table.
    Markdown,
}

impl From<SqlFormat> for Format {
    fn from(f: SqlFormat) -> Self {
        match f {
            SqlFormat::Table => Format::Table,
            SqlFormat::Csv => Format::Csv,
            SqlFormat::Json => Format::Json,
            SqlFormat::Markdown => Format::Markdown,
        }
    }
}

/// `stormlog sql` arguments.
#[derive(Debug, Clone, Args)]
pub struct SqlArgs {
    #[command(flatten)]
    pub db: DbArg,
    /// How to print results: txt (alias table) for people, csv, json (one
    /// object per line), markdown.
    #[arg(long, value_enum, default_value = "txt")]
    pub format: SqlFormat,
    /// Read the SQL from this file.
    #[arg(
        short = 'f',
        long = "file",
        value_name = "PATH",
        conflicts_with = "query"
    )]
    pub file: Option<PathBuf>,
    /// Write the results to FILE instead of stdout.
    #[arg(long, short = 'o', value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// The SQL: one or more statements separated by `;` (stdin when neither
    /// this nor --file is given).
    pub query: Option<String>,
    /// Stop a query that runs longer than this many seconds (0: no limit).
    #[arg(long, value_name = "SECONDS", default_value_t = 60.0)]
    pub timeout: f64,
}

impl From<SqlArgs> for SqlConfig {
    fn from(a: SqlArgs) -> Self {
        SqlConfig {
            db: a.db.db,
            format: a.format.into(),
            file: a.file,
            output: a.output,
            query: a.query,
            timeout: a.timeout,
        }
    }
}

/// Runs `sql`.
pub fn run(a: SqlArgs, out: &mut dyn Write, err: &mut dyn Write) -> crate::ops::Result<Exit> {
    sqlcmd::run(&a.into(), out, err).map_err(|e| crate::ops::Error {
        broken_pipe: e.is_broken_pipe(),
        exit: e.exit(),
        message: e.to_string(),
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn arguments_parse_as_documented() {
        use clap::{CommandFactory, Parser};
        #[derive(Debug, Parser)]
        struct Cli {
            #[command(flatten)]
            sql: SqlArgs,
        }
        Cli::command().debug_assert();
        let c = Cli::try_parse_from(["sql", "--db", "x.db", "--format", "markdown", "SELECT 1"])
            .unwrap();
        assert_eq!(Format::from(c.sql.format), Format::Markdown);
        assert_eq!(c.sql.query.as_deref(), Some("SELECT 1"));
        let c = Cli::try_parse_from(["sql", "-f", "q.sql"]).unwrap();
        let config = SqlConfig::from(c.sql);
        assert_eq!(
            (config.format, config.file.is_some()),
            (Format::Table, true)
        );
        assert!(Cli::try_parse_from(["sql", "-f", "q.sql", "SELECT 1"]).is_err());
    }
}
