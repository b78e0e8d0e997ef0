//! `stormlog collect-server` / `infer collect-server`'s flags (the
//! reference's argparse definition: names, defaults, Python's number
//! syntax), turned into `collector::RawOptions`.
use std::io::Write;
use std::path::PathBuf;

use crate::collector::args::{parse_py_float, parse_py_int};
use crate::collector::RawOptions;
use crate::exit::Exit;

/// `stormlog collect-server` / `stormlog infer collect-server` options.
#[derive(clap::Args, Debug, Clone)]
pub struct CollectArgs {
    /// The run id the profile run records (the load client's run id)
    #[arg(long = "run-id", value_name = "RUN_ID")]
    pub run_id: String,

    /// Server process to watch; use the worker that owns the GPU work
    #[arg(long, value_name = "PID", value_parser = parse_py_int, allow_negative_numbers = true)]
    pub pid: i64,

    /// JSONL path
    #[arg(long, value_name = "OUTPUT")]
    pub output: PathBuf,

    /// Seconds between polls
    #[arg(long, value_name = "INTERVAL", default_value = "0.1",
          value_parser = parse_py_float, allow_negative_numbers = true)]
    pub interval: f64,

    /// Stop after this many seconds (default: until Ctrl+C or SIGTERM)
    #[arg(long, value_name = "DURATION", value_parser = parse_py_float, allow_negative_numbers = true)]
    pub duration: Option<f64>,

    /// NVML index (PCI bus order, not the server's CUDA ordinal)
    #[arg(long = "device-index", value_name = "DEVICE_INDEX", default_value = "0",
          value_parser = parse_py_int, allow_negative_numbers = true)]
    pub device_index: i64,

    /// GPU or MIG UUID; preferred over --device-index
    #[arg(long = "device-uuid", value_name = "DEVICE_UUID")]
    pub device_uuid: Option<String>,

    /// Collect process RSS only
    #[arg(long = "no-gpu")]
    pub no_gpu: bool,

    /// A name for this server replica, recorded in every sample's identity
    /// (for telling replicas behind one endpoint apart)
    #[arg(long = "replica-id", value_name = "REPLICA_ID")]
    pub replica_id: Option<String>,

    /// This process's rank; required with --group-id
    #[arg(long, value_name = "RANK", value_parser = parse_py_int, allow_negative_numbers = true)]
    pub rank: Option<i64>,

    /// Shared by every collector of one server, e.g. its tensor-parallel workers
    #[arg(long = "group-id", value_name = "GROUP_ID")]
    pub group_id: Option<String>,

    /// Number of group members; each rank 0..N-1 needs a collector
    #[arg(long = "world-size", value_name = "WORLD_SIZE", value_parser = parse_py_int,
          allow_negative_numbers = true)]
    pub world_size: Option<i64>,

    /// Also write the samples into this project database as they are taken,
    /// attached to the run id (readers are not blocked while it runs)
    #[arg(long, value_name = "PATH")]
    pub db: Option<PathBuf>,
}

impl From<CollectArgs> for RawOptions {
    fn from(a: CollectArgs) -> Self {
        RawOptions {
            run_id: a.run_id,
            pid: a.pid,
            output: a.output,
            interval: a.interval,
            duration: a.duration,
            device_index: a.device_index,
            device_uuid: a.device_uuid,
            no_gpu: a.no_gpu,
            replica_id: a.replica_id,
            rank: a.rank,
            group_id: a.group_id,
            world_size: a.world_size,
            db: a.db,
        }
    }
}

/// Runs `collect-server`.
pub fn run(a: CollectArgs, out: &mut dyn Write, err: &mut dyn Write) -> crate::ops::Result<Exit> {
    crate::ops::collect::run(&a.into(), out, err)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::collector::{IdentityError, OptionsError};
    use clap::Parser;

    #[derive(Parser, Debug)]
    struct Cli {
        #[command(flatten)]
        args: CollectArgs,
    }

    fn parse(extra: &[&str]) -> Result<RawOptions, clap::Error> {
        let mut argv = vec!["x", "--run-id", "r1", "--pid", "42", "--output", "o.jsonl"];
        argv.extend_from_slice(extra);
        Cli::try_parse_from(argv).map(|c| c.args.into())
    }

    #[test]
    fn defaults_match_the_reference() {
        let a = parse(&[]).unwrap();
        assert_eq!(a.interval, 0.1);
        assert_eq!(a.duration, None);
        assert_eq!(a.device_index, 0);
        assert_eq!(a.device_uuid, None);
        assert!(!a.no_gpu);
        assert_eq!((a.rank, a.world_size), (None, None));
        assert_eq!(a.db, None);
        // The plain options' defaults are the flags' defaults.
        let plain = RawOptions {
            run_id: "r1".into(),
            pid: 42,
            output: "o.jsonl".into(),
            ..RawOptions::default()
        };
        assert_eq!(a, plain);
    }

    #[test]
    fn required_flags_are_required() {
        let r = Cli::try_parse_from(["x", "--run-id", "r", "--output", "o"]);
        assert_eq!(
            r.unwrap_err().kind(),
            clap::error::ErrorKind::MissingRequiredArgument
        );
    }

    #[test]
    fn negative_numbers_are_values() {
        let a = parse(&["--interval", "-1", "--rank", "-2", "--device-index", "-1"]).unwrap();
        assert_eq!((a.interval, a.rank, a.device_index), (-1.0, Some(-2), -1));
    }

    #[test]
    fn checks_run_in_the_reference_order() {
        let check = |extra: &[&str]| parse(extra).unwrap().check().map(|_| ());
        // run_id comes first even when the interval is also wrong.
        let mut a = parse(&["--interval", "0"]).unwrap();
        a.run_id.clear();
        assert_eq!(a.check().map(|_| ()), Err(OptionsError::RunIdAndPid));
        assert_eq!(
            check(&["--no-gpu", "--device-uuid", "GPU-1", "--interval", "0"]),
            Err(OptionsError::NoGpuWithSource)
        );
        assert_eq!(check(&["--no-gpu", "--device-uuid", ""]), Ok(()));
        assert_eq!(
            check(&["--interval", "0.0099"]),
            Err(OptionsError::Interval)
        );
        assert_eq!(check(&["--interval", "nan"]), Err(OptionsError::Interval));
        assert_eq!(check(&["--interval", "0.01"]), Ok(()));
        assert_eq!(check(&["--duration", "0"]), Err(OptionsError::Duration));
        assert_eq!(check(&["--duration", "inf"]), Err(OptionsError::Duration));
        assert_eq!(
            check(&["--world-size", "2"]),
            Err(OptionsError::Group(IdentityError::WorldSizeWithoutGroup))
        );
        assert_eq!(
            check(&["--group-id", "g", "--rank", "2", "--world-size", "2"]),
            Err(OptionsError::Group(IdentityError::RankNotBelowWorldSize))
        );
        // A negative rank passes here; the identity check refuses it later.
        assert_eq!(check(&["--rank", "-1"]), Ok(()));
        let mut a = parse(&[]).unwrap();
        a.pid = 0;
        assert_eq!(a.check().map(|_| ()), Err(OptionsError::RunIdAndPid));
    }
}
