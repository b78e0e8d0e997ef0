//! The two things a collector reads, behind traits so the poll loop runs the
//! same against the operating system and NVML as against test fakes:
//! [`ProcessSource`] (the server process's RSS and identity, telemetry spec
//! docs/telemetry.md §5.7) and [`GpuSource`] (NVML v2 memory of one GPU or MIG instance, docs/telemetry.md §5.4).

use std::collections::BTreeSet;

use super::output::SampleState;

pub mod nvml;
pub mod procfs;

#[cfg(test)]
pub mod fake;

/// Detail of every sample of a poll in which the server process was gone.
pub const PROCESS_ENDED_DETAIL: &str = "server process ended or its PID was reused";
/// Detail of an RSS sample the OS refused to show.
pub const ACCESS_DENIED_DETAIL: &str = "access denied reading server process memory";

/// One RSS reading: `value` is `Some` exactly when `state` is `Valid`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProcessReading {
    pub state: SampleState,
    pub rss_bytes: Option<u64>,
    pub detail: Option<String>,
}

impl ProcessReading {
    pub fn valid(rss_bytes: u64) -> Self {
        Self {
            state: SampleState::Valid,
            rss_bytes: Some(rss_bytes),
            detail: None,
        }
    }

    /// The process ended, became a zombie, or its PID names another process.
    pub fn ended() -> Self {
        Self {
            state: SampleState::Invalid,
            rss_bytes: None,
            detail: Some(PROCESS_ENDED_DETAIL.to_string()),
        }
    }

    pub fn access_denied() -> Self {
        Self::missing(ACCESS_DENIED_DETAIL.to_string())
    }

    /// No reading this time, with no evidence that the process changed.
    pub fn missing(detail: String) -> Self {
        Self {
            state: SampleState::Missing,
            rss_bytes: None,
            detail: Some(detail),
        }
    }
}

/// The watched server process.
pub trait ProcessSource {
    /// The PID being watched.
    fn pid(&self) -> u32;

    /// Start time in ns since the Unix epoch, as the identity records it.
    fn start_ns(&self) -> Result<u64, String>;

    /// RSS of the process itself (children excluded), or why there is none.
    /// Once a reading says the process ended, every later one says so too.
    fn read_rss(&mut self) -> ProcessReading;

    /// PIDs of all descendants (recursive); empty when they cannot be read.
    fn descendants(&mut self) -> BTreeSet<u32>;
}

/// One NVML memory reading; `used`/`reserved` are `Some` exactly when
/// `state` is `Valid`. Both GPU samples of a poll share state and detail.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GpuReading {
    pub state: SampleState,
    pub used_bytes: Option<u64>,
    pub reserved_bytes: Option<u64>,
    pub detail: Option<String>,
}

impl GpuReading {
    pub fn valid(used_bytes: u64, reserved_bytes: u64) -> Self {
        Self {
            state: SampleState::Valid,
            used_bytes: Some(used_bytes),
            reserved_bytes: Some(reserved_bytes),
            detail: None,
        }
    }

    pub fn unavailable(state: SampleState, detail: String) -> Self {
        Self {
            state,
            used_bytes: None,
            reserved_bytes: None,
            detail: Some(detail),
        }
    }
}

/// The watched GPU or MIG instance.
pub trait GpuSource {
    /// The full GPU's UUID (`GPU-…`); the parent's for a MIG instance.
    fn device_uuid(&self) -> &str;

    /// The MIG instance UUID (`MIG-…`) when a MIG instance is watched.
    fn gpu_instance_id(&self) -> Option<&str>;

    /// Re-checks the device identity, then reads v2 memory.
    fn read(&mut self) -> GpuReading;

    /// PIDs with a compute context on the device, or `None` when NVML
    /// cannot say.
    fn compute_pids(&mut self) -> Option<BTreeSet<u32>>;
}

/// Lends an optional GPU source for one call without giving it up. (The
/// trait object's lifetime has to shrink with the borrow, which a closure
/// passed to `Option::map` does not infer.)
pub fn reborrow_gpu<'s>(gpu: &'s mut Option<&mut dyn GpuSource>) -> Option<&'s mut dyn GpuSource> {
    match gpu {
        Some(source) => Some(&mut **source),
        None => None,
    }
}
