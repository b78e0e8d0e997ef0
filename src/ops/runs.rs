//! `stormlog runs` (the stored runs as a table, JSON or CSV), `runs delete`
//! and `migrate`: the commands that list or look after the project database.
use std::io::Write;
use std::path::PathBuf;

use serde_json::{json, Value};

use super::{Error, Result};
use crate::db;
use crate::exit::Exit;

/// How a table of rows is printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TableFormat {
    /// Aligned columns for a terminal.
    Table,
    /// A JSON array of objects.
    Json,
    /// Comma-separated values with a header line.
    Csv,
}

/// `runs`: list the stored runs.
pub fn list(db_path: &std::path::Path, format: TableFormat, out: &mut dyn Write) -> Result<Exit> {
    let conn = db::read::open_for_reading(db_path)?;
    let rows = crate::db::runs::list(&conn)?;
    match format {
        TableFormat::Json => {
            let v: Vec<Value> = rows
                .iter()
                .map(|r| {
                    json!({"run_id": r.run_id, "started_at_ns": r.started_at_ns, "started_at": r.started_at_ns.map(|ns| crate::util::iso8601_utc_signed(ns.div_euclid(1_000_000_000))),
                           "clock": r.clock_kind, "tool_wall_time": r.wall_time,
                           "model": r.model, "endpoint": r.endpoint, "artifact": r.artifact_name, "cases": r.cases,
                           "requests": r.requests, "failures": r.failures, "telemetry_files": r.telemetry_files,
                           "telemetry_samples": r.telemetry_samples, "telemetry": r.telemetry_files > 0})
                })
                .collect();
            writeln!(
                out,
                "{}",
                serde_json::to_string_pretty(&v).unwrap_or_default()
            )?;
        }
        TableFormat::Table | TableFormat::Csv => {
            let header = [
                "RUN",
                "STARTED (UTC)",
                "MODEL",
                "ENDPOINT",
                "CASES",
                "REQUESTS",
                "FAILURES",
                "TELEMETRY",
            ];
            let body: Vec<Vec<String>> = rows
                .iter()
                .map(|r| {
                    vec![
                        r.run_id.clone(),
                        r.started_shown(),
                        r.model.clone().unwrap_or_else(|| "-".into()),
                        r.endpoint.clone().unwrap_or_else(|| "-".into()),
                        r.cases.to_string(),
                        r.requests.to_string(),
                        r.failures.to_string(),
                        if r.telemetry_files > 0 {
                            format!("{} samples", r.telemetry_samples)
                        } else {
                            "no".into()
                        },
                    ]
                })
                .collect();
            if format == TableFormat::Csv {
                for row in std::iter::once(header.map(str::to_owned).to_vec()).chain(body) {
                    let cells: Vec<String> =
                        row.iter().map(|c| crate::output::csv_field(c)).collect();
                    writeln!(out, "{}", cells.join(","))?;
                }
                return Ok(Exit::Ok);
            }
            out.write_all(crate::util::table(&header, &body).as_bytes())?;
            if rows.is_empty() {
                writeln!(out, "(no runs; `stormlog ingest FILE` adds one)")?;
            }
        }
    }
    Ok(Exit::Ok)
}

/// What `runs delete` is asked.
#[derive(Debug, Clone, Default)]
pub struct DeleteConfig {
    pub db: PathBuf,
    /// Delete without asking on a terminal.
    pub yes: bool,
    /// Whole run ids.
    pub runs: Vec<String>,
}

/// `runs delete`: asks first on a terminal (unless `yes`), then deletes the
/// runs in one transaction.
pub fn delete(c: &DeleteConfig, out: &mut dyn Write, err: &mut dyn Write) -> Result<Exit> {
    let mut conn = db::admin::open_existing(&c.db)?;
    let ids: Vec<String> = c
        .runs
        .iter()
        .map(|r| crate::db::runs::resolve_whole(&conn, r))
        .collect::<std::result::Result<_, _>>()?;
    use std::io::IsTerminal;
    if !c.yes && std::io::stdin().is_terminal() {
        write!(
            err,
            "Delete {} and everything attached? [y/N] ",
            ids.join(", ")
        )?;
        let mut answer = String::new();
        std::io::stdin().read_line(&mut answer)?;
        if !matches!(answer.trim(), "y" | "Y" | "yes") {
            writeln!(err, "Nothing deleted.")?;
            return Ok(Exit::Ok);
        }
    }
    for id in crate::db::runs::delete(&mut conn, &ids)? {
        writeln!(out, "deleted run {id}")?;
    }
    Ok(Exit::Ok)
}

/// `migrate`: opening the database for writing applies the missing
/// migrations; then the schema version is printed.
pub fn migrate(db_path: &std::path::Path, out: &mut dyn Write) -> Result<Exit> {
    let conn = db::admin::open_existing(db_path)?;
    let version = db::admin::schema_version(&conn)
        .map_err(|e| Error::new(Exit::Unexpected, format!("{}: {e}", db_path.display())))?;
    writeln!(out, "{}: schema version {version}", db_path.display())?;
    Ok(Exit::Ok)
}
