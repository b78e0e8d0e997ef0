//! The analyze pipeline (`infer analyze` without its output): one artifact
//! ingested into a scratch database, loaded, joined with its server and span
//! files and reported. Returns the decoded run beside its report, so a
//! second caller (`compare`) summarizes what was decoded instead of reading
//! the file again.
use std::path::PathBuf;

use serde_json::Value;

use crate::analysis::segment::{Membership, Segment};
use crate::db;
use crate::exit::Exit;
use crate::ingest::{self, IngestError};
use crate::model::RunData;
use crate::report;

/// What an analysis is asked: the artifact and every setting that reaches it.
#[derive(Debug, Clone, Default)]
pub struct AnalyzeConfig {
    pub artifact: PathBuf,
    pub server_telemetry: Vec<PathBuf>,
    pub vllm_spans: Vec<PathBuf>,
    pub slo: Vec<String>,
    pub slo_file: Option<PathBuf>,
    pub direct_server: bool,
    pub clock_offset_ns: Option<i64>,
    pub clock_uncertainty_ns: Option<i64>,
    /// Slices of each case's measured phase, reported beside it (compare --segment).
    pub segments: Vec<Segment>,
    pub membership: Membership,
    /// Hash the artifact as it is read ([`Analyzed::sha256`]); `infer
    /// analyze` itself never needs the digest and skips it.
    pub digest: bool,
}

/// An analyzed run: what was decoded of the artifact, and its report.
#[derive(Debug)]
pub struct Analyzed {
    pub data: RunData,
    pub report: report::Report,
    /// The artifact's SHA-256 (lower-case hex), when [`AnalyzeConfig::digest`] asked for it.
    pub sha256: Option<String>,
}

/// Why an analysis failed: the message for stderr and the exit status (the
/// error every command of `ops` returns, with its conversions).
pub use super::Error as AnalyzeError;

/// Loads the artifact into a scratch database (a temporary file, deleted
/// afterwards) and builds the report through the same path as `report`. The
/// checks run in the order of the reference's `stormlog.infer.cli.cmd_analyze`:
/// the artifact exists, the flags' policy, the artifact's records, the recorded
/// policy, then the server files.
pub fn analyze(a: &AnalyzeConfig) -> Result<Analyzed, AnalyzeError> {
    if !a.artifact.exists() {
        return Err(AnalyzeError::new(
            Exit::InvalidInput,
            format!("Input file '{}' not found", a.artifact.display()),
        ));
    }
    let policy = crate::slo::policy_from_cli(&a.slo, a.slo_file.as_deref())?;
    // The scratch database keeps the run's pages out of memory; the report
    // then reads it like any stored run.
    let mut clock = crate::util::Phases::from_env();
    let (mut conn, scratch) = db::open_scratch()?;
    let opts = ingest::Options {
        skip_digest: !a.digest,
        analyze: true,
        ..Default::default()
    };
    let done = ingest::ingest_artifact(&mut conn, &a.artifact, &opts)?;
    clock.mark("ingest");
    let data = db::store::load_run_packed(&conn, &done.run_id)?;
    let sha256 = match a.digest {
        true => db::compare_read::artifact_sha256(&conn, &done.run_id)?,
        false => None,
    };
    clock.mark("load");
    // The recorded policy is checked before the server files are read.
    if policy.is_none() {
        let recorded: Vec<&Value> = data.of_type("infer.slo").collect();
        crate::slo::select(None, &recorded)?;
    }
    for path in &a.server_telemetry {
        ingest::telemetry::attach(
            &mut conn,
            path,
            Some(&done.run_id),
            &ingest::Options::default(),
        )
        .map_err(|e| {
            AnalyzeError::new(
                Exit::InvalidInput,
                format!("--server-telemetry {}: {}", path.display(), file_reason(e)),
            )
        })?;
    }
    let samples = ingest::telemetry::load_samples(&conn, &done.run_id)?;
    let spans = external_spans(&a.vllm_spans, &data)?;
    let inputs = report::Inputs {
        policy,
        telemetry_configured: !a.server_telemetry.is_empty(),
        server_samples: samples,
        direct_server: a.direct_server,
        clock_offset_ns: a.clock_offset_ns,
        clock_uncertainty_ns: a.clock_uncertainty_ns,
        external_spans: spans,
        segments: a.segments.clone(),
        membership: a.membership,
    };
    let report = report::build(&data, inputs)?;
    clock.mark("report");
    drop(conn);
    drop(scratch);
    Ok(Analyzed {
        data,
        report,
        sha256,
    })
}

/// Reads `--vllm-spans` files (the reference's `stormlog.infer.vllm_spans`); errors as `vLLM telemetry: <reason>`.
fn external_spans(paths: &[PathBuf], data: &RunData) -> Result<Vec<Value>, AnalyzeError> {
    if paths.is_empty() {
        return Ok(Vec::new());
    }
    let records: Vec<Value> = data.records.iter().map(|(_, r)| r.clone()).collect();
    let mut spans = Vec::new();
    for path in paths {
        let invalid = |reason: String| {
            AnalyzeError::new(Exit::InvalidInput, format!("vLLM telemetry: {reason}"))
        };
        let text = ingest::read_text(path).map_err(|e| invalid(file_reason(e)))?;
        spans.extend(crate::vllm::load_span_file(path, &text, &records).map_err(invalid)?);
    }
    Ok(spans)
}

/// Why an input file could not be read, without the path: the reason the
/// reference prints after its own prefix (`--server-telemetry PATH: `, ...).
fn file_reason(e: IngestError) -> String {
    match e {
        IngestError::Invalid { message, .. } => message,
        IngestError::Io { source, .. } => os_reason(&source),
        other => other.to_string(),
    }
}

/// The OS's error text without Rust's " (os error N)" suffix.
fn os_reason(e: &std::io::Error) -> String {
    let s = e.to_string();
    match s.find(" (os error") {
        Some(i) => s[..i].to_owned(),
        None => s,
    }
}
