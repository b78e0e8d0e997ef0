//! Command-line options of `collect-server` (raw, as typed) and their checked
//! form. The flags, defaults and value syntax follow the reference's argparse
//! definition (docs/telemetry.md §5.1); the checks follow docs/telemetry.md §5.2 step 3 in order, so
//! the first failing check names the same problem the reference would.

use std::path::PathBuf;

use super::identity::{validate_group, IdentityError};

/// `collect-server`'s options as typed (`cli::collect` fills them from
/// the flags), before the checks of [`RawOptions::check`].
#[derive(Debug, Clone, PartialEq)]
pub struct RawOptions {
    /// The run id the profile run records (the load client's run id).
    pub run_id: String,
    /// Server process to watch.
    pub pid: i64,
    /// JSONL path.
    pub output: PathBuf,
    /// Seconds between polls (the reference's default 0.1).
    pub interval: f64,
    /// Stop after this many seconds.
    pub duration: Option<f64>,
    /// NVML index (default 0).
    pub device_index: i64,
    /// GPU or MIG UUID; preferred over `device_index`.
    pub device_uuid: Option<String>,
    /// Collect process RSS only.
    pub no_gpu: bool,
    /// A name for this server replica.
    pub replica_id: Option<String>,
    /// This process's rank; required with `group_id`.
    pub rank: Option<i64>,
    /// Shared by every collector of one server.
    pub group_id: Option<String>,
    /// Number of group members.
    pub world_size: Option<i64>,
    /// Also write the samples into this project database.
    pub db: Option<PathBuf>,
}

/// The reference's defaults for the options not given.
impl Default for RawOptions {
    fn default() -> Self {
        RawOptions {
            run_id: String::new(),
            pid: 0,
            output: PathBuf::new(),
            interval: DEFAULT_INTERVAL_SECONDS,
            duration: None,
            device_index: 0,
            device_uuid: None,
            no_gpu: false,
            replica_id: None,
            rank: None,
            group_id: None,
            world_size: None,
            db: None,
        }
    }
}

/// The poll interval when none is given, in seconds.
pub const DEFAULT_INTERVAL_SECONDS: f64 = 0.1;

/// An option check of docs/telemetry.md §5.2 step 3 failed: a usage error (exit 2).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OptionsError {
    #[error("run_id and a positive pid are required")]
    RunIdAndPid,
    #[error("--no-gpu cannot be combined with a GPU source")]
    NoGpuWithSource,
    #[error("interval must be a finite number of seconds >= 0.01")]
    Interval,
    #[error("duration must be a finite, positive number of seconds")]
    Duration,
    #[error(transparent)]
    Group(#[from] IdentityError),
}

/// Options that passed the checks of docs/telemetry.md §5.2 step 3 (process lookup excluded).
#[derive(Debug, Clone, PartialEq)]
pub struct Options {
    pub run_id: String,
    /// Positive; a value beyond the OS's PID range is refused by the lookup.
    pub pid: i64,
    pub output: PathBuf,
    pub interval_seconds: f64,
    pub duration_seconds: Option<f64>,
    pub device_index: i64,
    pub device_uuid: Option<String>,
    pub no_gpu: bool,
    pub replica_id: Option<String>,
    pub rank: Option<i64>,
    pub group_id: Option<String>,
    pub world_size: Option<i64>,
    /// Also write the samples into this project database as they are taken.
    pub db: Option<PathBuf>,
}

/// The smallest poll interval the reference accepts, in seconds.
pub const MIN_INTERVAL_SECONDS: f64 = 0.01;

impl RawOptions {
    /// Runs the option checks in the reference's order (docs/telemetry.md §5.2 step 3.1-3.5).
    pub fn check(&self) -> Result<Options, OptionsError> {
        if self.run_id.is_empty() || self.pid <= 0 {
            return Err(OptionsError::RunIdAndPid);
        }
        // An empty --device-uuid is falsy in the reference, so it passes here.
        if self.no_gpu && self.device_uuid.as_deref().is_some_and(|u| !u.is_empty()) {
            return Err(OptionsError::NoGpuWithSource);
        }
        // `!(x >= min)` also rejects NaN, which compares false with everything.
        if !self.interval.is_finite() || self.interval < MIN_INTERVAL_SECONDS {
            return Err(OptionsError::Interval);
        }
        if let Some(duration) = self.duration {
            if !duration.is_finite() || duration <= 0.0 {
                return Err(OptionsError::Duration);
            }
        }
        validate_group(self.group_id.as_deref(), self.rank, self.world_size)?;
        Ok(Options {
            run_id: self.run_id.clone(),
            pid: self.pid,
            output: self.output.clone(),
            interval_seconds: self.interval,
            duration_seconds: self.duration,
            device_index: self.device_index,
            device_uuid: self.device_uuid.clone(),
            no_gpu: self.no_gpu,
            replica_id: self.replica_id.clone(),
            rank: self.rank,
            group_id: self.group_id.clone(),
            world_size: self.world_size,
            db: self.db.clone(),
        })
    }
}

/// Parses an integer the way Python's `int(text)` does: surrounding
/// whitespace, a sign, leading zeros and single `_` between digits are
/// accepted. Values outside `i64` are refused (Python's are unbounded).
pub fn parse_py_int(text: &str) -> Result<i64, String> {
    let invalid = || format!("invalid int value: '{text}'");
    let value = crate::py::int::int_of_str(text).map_err(|_| invalid())?;
    value.to_i64().ok_or_else(invalid)
}

/// Parses a float the way Python's `float(text)` does: surrounding
/// whitespace, `_` between digits, `inf`/`infinity`/`nan` in any case.
pub fn parse_py_float(text: &str) -> Result<f64, String> {
    crate::py::float::float_of_str(text).ok_or_else(|| format!("invalid float value: '{text}'"))
}

/// Renders a path the way Python's `pathlib.PurePosixPath` prints it:
/// repeated `/` collapsed, `.` segments and a trailing `/` dropped, `..`
/// kept, exactly two leading slashes preserved, and `.` for an empty path.
pub fn display_path_like_python(path: &str) -> String {
    let root = if path.starts_with("//") && !path.starts_with("///") {
        "//"
    } else if path.starts_with('/') {
        "/"
    } else {
        ""
    };
    let parts: Vec<&str> = path
        .split('/')
        .filter(|part| !part.is_empty() && *part != ".")
        .collect();
    let joined = parts.join("/");
    if root.is_empty() && joined.is_empty() {
        ".".to_string()
    } else {
        format!("{root}{joined}")
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn python_int_syntax() {
        assert_eq!(parse_py_int(" +1_000 "), Ok(1000));
        assert_eq!(parse_py_int("007"), Ok(7));
        assert_eq!(parse_py_int("-5"), Ok(-5));
        for bad in ["", "1__0", "_1", "1_", "0x10", "1.0", "1e3", "- 1"] {
            assert_eq!(
                parse_py_int(bad),
                Err(format!("invalid int value: '{bad}'"))
            );
        }
    }

    #[test]
    fn python_float_syntax() {
        assert_eq!(parse_py_float(" 1_0.5 "), Ok(10.5));
        assert_eq!(parse_py_float("1e-2"), Ok(0.01));
        assert_eq!(parse_py_float(".5"), Ok(0.5));
        assert_eq!(parse_py_float("-Infinity"), Ok(f64::NEG_INFINITY));
        assert!(parse_py_float("nan").unwrap().is_nan());
        for bad in ["", "1._5", "0x1p3", "1 0", "abc"] {
            assert!(parse_py_float(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn paths_print_like_pathlib() {
        assert_eq!(
            display_path_like_python("./sub//dir/../o.jsonl"),
            "sub/dir/../o.jsonl"
        );
        assert_eq!(display_path_like_python("/a/./b/"), "/a/b");
        assert_eq!(display_path_like_python("//a"), "//a");
        assert_eq!(display_path_like_python("///a"), "/a");
        assert_eq!(display_path_like_python("./"), ".");
    }
}
