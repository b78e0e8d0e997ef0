//! `stormlog export`: one stored run back out as JSONL (its artifact or its
//! telemetry), an imported run's original files, or Parquet (`--parquet`,
//! the work of `ops::export_parquet`).
use std::io::Write;
use std::path::{Path, PathBuf};

use super::{write_output, Error, Result};
use crate::db;
use crate::exit::Exit;
use crate::slo::{Policy, PolicySource};

/// What `export` is asked.
#[derive(Debug, Clone, Default)]
pub struct ExportConfig {
    pub db: PathBuf,
    /// The run ids named (JSONL takes exactly one).
    pub runs: Vec<String>,
    /// The run's telemetry instead of its artifact.
    pub telemetry: bool,
    /// Write here instead of stdout.
    pub output: Option<PathBuf>,
    /// An imported run's original files into this folder.
    pub files: Option<PathBuf>,
    /// `--parquet DIR` and its flags, when asked.
    pub parquet: Option<ParquetRequest>,
}

/// `export --parquet DIR`'s part of the request.
#[derive(Debug, Clone, Default)]
pub struct ParquetRequest {
    pub dir: PathBuf,
    pub all: bool,
    pub since: Option<String>,
    pub policy: Option<(Policy, PolicySource)>,
}

/// Runs `export`.
pub fn run(c: ExportConfig, out: &mut dyn Write) -> Result<Exit> {
    if let Some(p) = c.parquet {
        return parquet(p, c.db, c.runs, out);
    }
    let [name] = c.runs.as_slice() else {
        return Err(Error::new(
            Exit::Usage,
            "export writes one run as JSONL; name exactly one (--parquet DIR takes several)",
        ));
    };
    let conn = db::read::open_for_reading(&c.db)?;
    let run = crate::db::runs::resolve(&conn, name)?;
    if let Some(dir) = &c.files {
        return export_files(&conn, &run, dir, out);
    }
    if !c.telemetry {
        // An imported run: the tool's own result file, as it was read.
        if let Some((index, _, _)) = crate::db::imports::files(&conn, &run)?.first() {
            let bytes = crate::db::imports::original(&conn, &run, *index)?;
            match c.output {
                Some(path) => write_output(&path, &bytes)?,
                None => out.write_all(&bytes)?,
            }
            return Ok(Exit::Ok);
        }
    }
    let text = if c.telemetry {
        crate::db::runs::export_telemetry(&conn, &run)?
    } else {
        crate::db::runs::export_artifact(&conn, &run)?
    };
    match c.output {
        Some(path) => write_output(&path, text.as_bytes())?,
        None => out.write_all(text.as_bytes())?,
    }
    Ok(Exit::Ok)
}

/// `export --parquet DIR`: the export, then what it did.
fn parquet(p: ParquetRequest, db: PathBuf, runs: Vec<String>, out: &mut dyn Write) -> Result<Exit> {
    use super::export_parquet::{export_parquet, render_summary, ParquetConfig};
    if p.all && !runs.is_empty() {
        return Err(Error::new(
            Exit::Usage,
            "--all exports every run; name runs or pass --all, not both",
        ));
    }
    let cfg = ParquetConfig {
        db,
        dir: p.dir,
        runs,
        all: p.all,
        since: p.since,
        policy: p.policy,
    };
    let summary = export_parquet(&cfg).map_err(|e| Error::new(e.exit(), e.to_string()))?;
    out.write_all(render_summary(&summary).as_bytes())?;
    Ok(Exit::Ok)
}

/// `export RUN --files DIR`: every original file of an imported run, by name.
fn export_files(conn: &db::Connection, run: &str, dir: &Path, out: &mut dyn Write) -> Result<Exit> {
    let files = crate::db::imports::files(conn, run)?;
    if files.is_empty() {
        return Err(Error::new(
            Exit::Usage,
            format!(
                "run {run} was not imported from another tool's files: it has no original files \
                 to write (`stormlog export {run}` gives its artifact back)"
            ),
        ));
    }
    // Names come from the database: only a plain file name is written, so
    // no stored name can reach outside DIR.
    let plain = |n: &str| {
        let p = Path::new(n);
        !n.is_empty()
            && p.components().count() == 1
            && matches!(p.components().next(), Some(std::path::Component::Normal(_)))
    };
    if let Some((_, _, bad)) = files.iter().find(|(_, _, n)| !plain(n)) {
        return Err(Error::new(
            Exit::Unexpected,
            format!("run {run}: the stored file name {bad:?} is not a plain file name"),
        ));
    }
    std::fs::create_dir_all(dir)
        .map_err(|e| Error::new(Exit::Unexpected, format!("{}: {e}", dir.display())))?;
    for (index, role, name) in &files {
        let bytes = crate::db::imports::original(conn, run, *index)?;
        let path = dir.join(name);
        crate::output::write_atomic(&path, &bytes, crate::output::Parents::Keep)?;
        writeln!(out, "{} ({role}, {} bytes)", path.display(), bytes.len())?;
    }
    Ok(Exit::Ok)
}
