//! `stormlog collect-server`: sample a live inference server's process RSS
//! and its GPU's (or MIG instance's) NVML v2 memory on the inference host,
//! writing the telemetry JSONL that `infer analyze --server-telemetry` joins
//! (see docs/telemetry.md §1-§3 for the format and docs/telemetry.md §5 for this command).
//!
//! `args` holds the CLI options and their checks, `sources` the process and
//! GPU readers behind traits (procfs, NVML, test fakes), `sampler` the poll
//! loop and its clock, `output` the record shape and the sinks, `identity`
//! who was observed, `matching` the GPU-process warnings. [`run`] is the
//! command; [`run_with`] is the same with the sources and clock supplied.

use std::io::Write;
use std::path::Path;
use std::sync::OnceLock;

pub mod args;
pub mod identity;
pub mod matching;
pub mod output;
pub mod sampler;
pub mod sources;

pub use args::{Options, OptionsError, RawOptions};
pub use identity::{HostInfo, IdentityError, ServerIdentity};
pub use output::{JsonlSink, MemorySink, Poll, RecordContext, Sample, SampleSink, SinkError};
pub use sampler::{
    collect, Clock, CollectionResult, LoopConfig, StopFlag, StopReason, SystemClock,
};
pub use sources::nvml::GpuOpenError;
pub use sources::procfs::ProcessLookupError;
pub use sources::{GpuSource, ProcessSource};

use crate::exit::Exit;
use args::display_path_like_python;
use sources::nvml::{load_nvml, NvmlMemorySource, RealNvml};
use sources::procfs::ProcfsProcess;

/// Why `collect-server` could not collect. Print it as `Error: {self}` on
/// stderr and exit with [`CollectError::exit`].
#[derive(Debug, thiserror::Error)]
pub enum CollectError {
    #[error(transparent)]
    Options(#[from] OptionsError),
    #[error(transparent)]
    Process(#[from] ProcessLookupError),
    #[error(transparent)]
    Gpu(#[from] GpuOpenError),
    #[error("cannot read the server process start time: {0}")]
    ProcessStart(String),
    #[error(transparent)]
    Identity(#[from] IdentityError),
    #[error(transparent)]
    Output(#[from] SinkError),
    #[error("cannot install the SIGINT/SIGTERM handler: {0}")]
    Signals(String),
    #[error("--db: {0}")]
    Database(String),
}

impl CollectError {
    /// The reference's status: option, process-lookup, "NVML unavailable"
    /// and "no such GPU" problems are usage errors (2); the rest, identity
    /// problems included, are failures (1).
    pub fn exit(&self) -> Exit {
        match self {
            CollectError::Options(_) | CollectError::Process(_) => Exit::Usage,
            CollectError::Gpu(e) if e.is_usage() => Exit::Usage,
            _ => Exit::Unexpected,
        }
    }
}

/// Opens the sink of `collect-server --db`: given the database path, the
/// run id, the output path and the file's sink, a sink that writes the file
/// and stores each poll in the database, or why it cannot. The caller
/// supplies it: the database adapter lives above the collector
/// (`db::telemetry::open_live_sink`).
pub type DbSinkOpener<'a> =
    &'a dyn Fn(&Path, &str, &Path, JsonlSink) -> Result<Box<dyn SampleSink>, String>;

/// The stop flag SIGINT and SIGTERM set. The handler is installed once per
/// process (the `ctrlc` crate allows no more) and stays: the command ends
/// right after collection, so restoring the old disposition buys nothing.
fn signal_stop_flag() -> Result<StopFlag, CollectError> {
    static FLAG: OnceLock<StopFlag> = OnceLock::new();
    static INSTALLED: OnceLock<Result<(), String>> = OnceLock::new();
    let flag = FLAG.get_or_init(StopFlag::new).clone();
    let handler_flag = flag.clone();
    INSTALLED
        .get_or_init(|| ctrlc::set_handler(move || handler_flag.set()).map_err(|e| e.to_string()))
        .clone()
        .map_err(CollectError::Signals)?;
    Ok(flag)
}

/// Runs `collect-server`: checks the options, finds the process, opens NVML
/// unless `--no-gpu`, then collects until a stop reason, printing what the
/// reference prints. Returns the exit status of a completed collection;
/// start-up and write failures come back as [`CollectError`] for the caller
/// to print. `--db` stores the polls through `db_sink`.
pub fn run(
    args: &RawOptions,
    db_sink: DbSinkOpener<'_>,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<Exit, CollectError> {
    let stop = signal_stop_flag()?;
    // A signal before this command started is not a request to stop it.
    stop.clear();
    let options = args.check()?;
    let mut process = ProcfsProcess::open(options.pid)?;
    let nvml = if options.no_gpu {
        None
    } else {
        Some(load_nvml()?)
    };
    // Declared after `nvml`, so dropped before it: NVML shuts down last.
    let mut gpu = match &nvml {
        Some(nvml) => Some(NvmlMemorySource::open(
            RealNvml::new(nvml),
            options.device_index,
            options.device_uuid.as_deref(),
        )?),
        None => None,
    };
    run_with(
        &options,
        &HostInfo::current(),
        &mut process,
        gpu.as_mut().map(|g| g as &mut dyn GpuSource),
        &mut SystemClock::new(),
        &stop,
        db_sink,
        out,
        err,
    )
}

/// The part of [`run`] after the sources are open (docs/telemetry.md §5.2 steps 5-8): GPU
/// match warnings, identity, output file, poll loop, summary and status.
#[allow(clippy::too_many_arguments)]
pub fn run_with(
    options: &Options,
    host: &HostInfo,
    process: &mut dyn ProcessSource,
    mut gpu: Option<&mut dyn GpuSource>,
    clock: &mut dyn Clock,
    stop: &StopFlag,
    db_sink: DbSinkOpener<'_>,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<Exit, CollectError> {
    let (warnings, _match) = matching::check_gpu_process(process, sources::reborrow_gpu(&mut gpu));
    for warning in &warnings {
        // Diagnostics are best effort: a closed stderr must not stop collection.
        let _ = writeln!(err, "Warning: {warning}");
    }
    let identity = ServerIdentity {
        host: host.host.clone(),
        pid: i64::from(process.pid()),
        // (A start past the year 2262 does not fit; the identity refuses 0.)
        process_start_ns: i64::try_from(process.start_ns().map_err(CollectError::ProcessStart)?)
            .unwrap_or(0),
        device_uuid: gpu.as_ref().map(|g| g.device_uuid().to_string()),
        gpu_instance_id: gpu
            .as_ref()
            .and_then(|g| g.gpu_instance_id().map(str::to_string)),
        replica_id: options.replica_id.clone(),
        rank: options.rank,
        boot_id: host.boot_id.clone(),
        group_id: options.group_id.clone(),
        world_size: options.world_size,
    };
    identity.validate()?;
    let context = RecordContext::new(
        &options.run_id,
        identity,
        sampler::interval_ms(options.interval_seconds),
    );
    let config = LoopConfig::new(context, options.interval_seconds, options.duration_seconds);
    let file = JsonlSink::create(&options.output)?;
    let mut sink: Box<dyn output::SampleSink> = match &options.db {
        None => Box::new(file),
        Some(db) => {
            db_sink(db, &options.run_id, &options.output, file).map_err(CollectError::Database)?
        }
    };
    let mut result = collect(&config, process, gpu, clock, sink.as_mut(), stop)?;
    drop(sink);
    result.warnings = warnings;

    let shown = display_path_like_python(&options.output.to_string_lossy());
    let summary = writeln!(
        out,
        "Collected {} server polls to: {shown} (stopped: {})",
        result.polls,
        result.stop_reason.as_str()
    );
    if summary.and_then(|()| out.flush()).is_err() {
        // Closed stdout (`| head`): the reference exits 1 without a message.
        return Ok(Exit::Unexpected);
    }
    let detail = result.detail.as_deref().unwrap_or("None");
    match result.stop_reason {
        StopReason::GpuIdentityChanged => {
            let _ = writeln!(
                err,
                "Findings: GPU identity changed ({detail}); later polls were not recorded and later \
                 case windows will not be joined"
            );
            Ok(Exit::Findings)
        }
        StopReason::ServerProcessEnded => {
            let _ = writeln!(
                err,
                "Warning: {detail}; case windows that extend past the last confirmed poll will not be joined"
            );
            Ok(Exit::Ok)
        }
        StopReason::DurationElapsed | StopReason::StopRequested => Ok(Exit::Ok),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests;
