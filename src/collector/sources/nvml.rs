//! GPU memory through NVML (docs/telemetry.md §5.4): open a GPU or MIG handle
//! and verify its UUID, then per poll re-check the identity and read
//! `nvmlDeviceGetMemoryInfo_v2`'s `used` and `reserved`. NVML is loaded at
//! run time (`libnvidia-ml.so.1`), so the binary runs on hosts without
//! NVIDIA drivers and only collection without `--no-gpu` stops there.
//!
//! The logic sits on a small [`NvmlBackend`] trait whose every call returns
//! the raw NVML return code on failure, because the messages quote it; the
//! real backend wraps `nvml-wrapper`, a fake one drives the tests.

use std::collections::BTreeSet;
use std::ffi::OsStr;

use nvml_wrapper::error::NvmlError;
use nvml_wrapper::{Device, Nvml};

use super::{GpuReading, GpuSource};
use crate::collector::output::SampleState;

/// The library the reference loads.
pub const NVML_LIBRARY: &str = "libnvidia-ml.so.1";
/// NVML_ERROR_INVALID_ARGUMENT and NVML_ERROR_NOT_FOUND: no such device.
const NO_SUCH_DEVICE: [u32; 2] = [2, 6];

/// Opening the GPU source failed (docs/telemetry.md §5.2 step 4).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GpuOpenError {
    #[error("NVML is unavailable on this host; pass --no-gpu to collect without GPU memory")]
    Unavailable,
    #[error("NVML initialization failed")]
    InitFailed,
    #[error("{named}: no such GPU on this host (NVML code {code})")]
    NoSuchDevice { named: String, code: u32 },
    #[error("NVML device lookup failed (code {0})")]
    LookupFailed(u32),
    #[error("NVML UUID lookup failed (code {0})")]
    UuidFailed(u32),
    #[error("NVML device UUID differs from requested UUID")]
    UuidDiffers,
    #[error("NVML MIG parent lookup failed (code {0})")]
    MigParentFailed(u32),
}

impl GpuOpenError {
    /// Whether the reference reports this as a usage error (exit 2) rather
    /// than a failure (exit 1).
    pub fn is_usage(&self) -> bool {
        matches!(
            self,
            GpuOpenError::Unavailable | GpuOpenError::NoSuchDevice { .. }
        )
    }
}

/// NVML's `nvmlMemory_v2_t` fields the collector records.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MemoryV2 {
    pub used: u64,
    pub reserved: u64,
}

/// The NVML calls the memory source makes; `Err` carries the NVML return code.
pub trait NvmlBackend {
    type Device;
    fn device_by_index(&self, index: u32) -> Result<Self::Device, u32>;
    fn device_by_uuid(&self, uuid: &str) -> Result<Self::Device, u32>;
    fn uuid(&self, device: &Self::Device) -> Result<String, u32>;
    fn mig_parent(&self, device: &Self::Device) -> Result<Self::Device, u32>;
    fn memory_v2(&self, device: &Self::Device) -> Result<MemoryV2, u32>;
    /// PIDs with a compute context (v3 query, else v2), `None` if NVML
    /// cannot say.
    fn compute_pids(&self, device: &Self::Device) -> Option<BTreeSet<u32>>;
}

/// A verified GPU or MIG handle and what it was when opened.
pub struct NvmlMemorySource<B: NvmlBackend> {
    backend: B,
    handle: B::Device,
    handle_uuid: String,
    parent: Option<B::Device>,
    device_uuid: String,
    gpu_instance_id: Option<String>,
}

impl<B: NvmlBackend> std::fmt::Debug for NvmlMemorySource<B> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NvmlMemorySource")
            .field("handle_uuid", &self.handle_uuid)
            .field("device_uuid", &self.device_uuid)
            .field("gpu_instance_id", &self.gpu_instance_id)
            .finish_non_exhaustive()
    }
}

impl<B: NvmlBackend> NvmlMemorySource<B> {
    /// Looks the device up (by UUID when one was given, even an empty one;
    /// else by index, wrapped to 32 bits as the C call takes it), verifies
    /// its UUID, and resolves a MIG instance to its parent GPU.
    pub fn open(
        backend: B,
        device_index: i64,
        expected_uuid: Option<&str>,
    ) -> Result<Self, GpuOpenError> {
        let found = match expected_uuid {
            Some(uuid) => backend.device_by_uuid(uuid),
            // Truncation is the point: the reference passes a C unsigned int.
            None => backend.device_by_index(device_index as u32),
        };
        let handle = found.map_err(|code| {
            if NO_SUCH_DEVICE.contains(&code) {
                let named = match expected_uuid {
                    Some(uuid) => format!("--device-uuid {uuid}"),
                    None => format!("--device-index {device_index}"),
                };
                GpuOpenError::NoSuchDevice { named, code }
            } else {
                GpuOpenError::LookupFailed(code)
            }
        })?;
        let handle_uuid = backend.uuid(&handle).map_err(GpuOpenError::UuidFailed)?;
        if expected_uuid.is_some_and(|u| !u.is_empty() && u != handle_uuid) {
            return Err(GpuOpenError::UuidDiffers);
        }
        let (parent, device_uuid, gpu_instance_id) = if handle_uuid.starts_with("MIG-") {
            let parent = backend
                .mig_parent(&handle)
                .map_err(GpuOpenError::MigParentFailed)?;
            let parent_uuid = backend.uuid(&parent).map_err(GpuOpenError::UuidFailed)?;
            (Some(parent), parent_uuid, Some(handle_uuid.clone()))
        } else {
            (None, handle_uuid.clone(), None)
        };
        Ok(Self {
            backend,
            handle,
            handle_uuid,
            parent,
            device_uuid,
            gpu_instance_id,
        })
    }

    /// Only a different UUID invalidates; an unreadable one is missing data.
    fn identity_issue(&self) -> Option<GpuReading> {
        let unreadable = |code| {
            GpuReading::unavailable(
                SampleState::Missing,
                format!("device identity unreadable: NVML UUID lookup failed (code {code})"),
            )
        };
        let current = match self.backend.uuid(&self.handle) {
            Ok(uuid) => uuid,
            Err(code) => return Some(unreadable(code)),
        };
        let parent = match &self.parent {
            Some(parent) => match self.backend.uuid(parent) {
                Ok(uuid) => Some(uuid),
                Err(code) => return Some(unreadable(code)),
            },
            None => None,
        };
        if current != self.handle_uuid {
            return Some(GpuReading::unavailable(
                SampleState::Invalid,
                "device UUID changed".into(),
            ));
        }
        if parent.is_some_and(|p| p != self.device_uuid) {
            return Some(GpuReading::unavailable(
                SampleState::Invalid,
                "parent device UUID changed".into(),
            ));
        }
        None
    }
}

impl<B: NvmlBackend> GpuSource for NvmlMemorySource<B> {
    fn device_uuid(&self) -> &str {
        &self.device_uuid
    }

    fn gpu_instance_id(&self) -> Option<&str> {
        self.gpu_instance_id.as_deref()
    }

    fn read(&mut self) -> GpuReading {
        if let Some(issue) = self.identity_issue() {
            return issue;
        }
        match self.backend.memory_v2(&self.handle) {
            Ok(memory) => GpuReading::valid(memory.used, memory.reserved),
            Err(code) => GpuReading::unavailable(
                SampleState::Missing,
                format!("NVML memory read unavailable (code {code})"),
            ),
        }
    }

    fn compute_pids(&mut self) -> Option<BTreeSet<u32>> {
        self.backend.compute_pids(&self.handle)
    }
}

/// Loads `libnvidia-ml.so.1` and calls `nvmlInit_v2`. Dropping the result
/// calls `nvmlShutdown`, so every exit path after a successful init shuts
/// NVML down.
pub fn load_nvml() -> Result<Nvml, GpuOpenError> {
    match Nvml::builder().lib_path(OsStr::new(NVML_LIBRARY)).init() {
        Ok(nvml) => Ok(nvml),
        Err(NvmlError::LibloadingError(_)) => Err(GpuOpenError::Unavailable),
        Err(_) => Err(GpuOpenError::InitFailed),
    }
}

/// The NVML return code behind an `nvml-wrapper` error; errors that are
/// not NVML's own (a missing symbol, bad UTF-8) count as NVML_ERROR_UNKNOWN.
fn code(error: NvmlError) -> u32 {
    error.into()
}

/// The real backend: `nvml-wrapper` over a loaded library.
pub struct RealNvml<'n> {
    nvml: &'n Nvml,
}

impl<'n> RealNvml<'n> {
    pub fn new(nvml: &'n Nvml) -> Self {
        Self { nvml }
    }
}

impl<'n> NvmlBackend for RealNvml<'n> {
    type Device = Device<'n>;

    fn device_by_index(&self, index: u32) -> Result<Device<'n>, u32> {
        self.nvml.device_by_index(index).map_err(code)
    }

    fn device_by_uuid(&self, uuid: &str) -> Result<Device<'n>, u32> {
        // An interior NUL cannot name a device; NVML would say "not found".
        self.nvml.device_by_uuid(uuid).map_err(|e| match e {
            NvmlError::NulError(_) => 6,
            other => code(other),
        })
    }

    fn uuid(&self, device: &Device<'n>) -> Result<String, u32> {
        device.uuid().map_err(code)
    }

    fn mig_parent(&self, device: &Device<'n>) -> Result<Device<'n>, u32> {
        device.mig_parent_device().map_err(code)
    }

    fn memory_v2(&self, device: &Device<'n>) -> Result<MemoryV2, u32> {
        device
            .memory_info()
            .map(|m| MemoryV2 {
                used: m.used,
                reserved: m.reserved,
            })
            .map_err(code)
    }

    fn compute_pids(&self, device: &Device<'n>) -> Option<BTreeSet<u32>> {
        let listed = match device.running_compute_processes() {
            // The v3 symbol is missing on older drivers; v2 has the same layout.
            Err(NvmlError::FailedToLoadSymbol(_)) => device.running_compute_processes_v2(),
            other => other,
        };
        listed
            .ok()
            .map(|infos| infos.into_iter().map(|info| info.pid).collect())
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::collector::sources::fake::FakeNvml;

    fn open<'a>(
        nvml: &'a FakeNvml,
        index: i64,
        uuid: Option<&str>,
    ) -> Result<NvmlMemorySource<&'a FakeNvml>, GpuOpenError> {
        NvmlMemorySource::open(nvml, index, uuid)
    }

    #[test]
    fn full_gpu_by_index_reads_used_and_reserved() {
        let nvml = FakeNvml::gpu("GPU-aaaa");
        nvml.set_memory(Ok(MemoryV2 {
            used: 1000,
            reserved: 300,
        }));
        let mut src = open(&nvml, 0, None).unwrap();
        assert_eq!(src.device_uuid(), "GPU-aaaa");
        assert_eq!(src.gpu_instance_id(), None);
        assert_eq!(src.read(), GpuReading::valid(1000, 300));
    }

    #[test]
    fn mig_instance_records_its_parent() {
        let nvml = FakeNvml::mig("MIG-bbbb", "GPU-aaaa");
        nvml.set_memory(Ok(MemoryV2 {
            used: 7,
            reserved: 2,
        }));
        let mut src = open(&nvml, 0, Some("MIG-bbbb")).unwrap();
        assert_eq!(src.device_uuid(), "GPU-aaaa");
        assert_eq!(src.gpu_instance_id(), Some("MIG-bbbb"));
        assert_eq!(src.read(), GpuReading::valid(7, 2));
        nvml.set_parent_uuid(Ok("GPU-cccc".into()));
        assert_eq!(
            src.read(),
            GpuReading::unavailable(SampleState::Invalid, "parent device UUID changed".into())
        );
    }

    #[test]
    fn open_failures_say_what_the_reference_says() {
        let nvml = FakeNvml::gpu("GPU-aaaa");
        nvml.set_lookup(Err(6));
        let e = open(&nvml, -1, None).unwrap_err();
        assert_eq!(
            e.to_string(),
            "--device-index -1: no such GPU on this host (NVML code 6)"
        );
        assert!(e.is_usage());
        // The index reaches NVML as a C unsigned int.
        assert_eq!(nvml.last_index(), Some(u32::MAX));
        let e = open(&nvml, 0, Some("GPU-x")).unwrap_err();
        assert_eq!(
            e.to_string(),
            "--device-uuid GPU-x: no such GPU on this host (NVML code 6)"
        );
        nvml.set_lookup(Err(2));
        assert!(open(&nvml, 3, None).unwrap_err().is_usage());
        nvml.set_lookup(Err(999));
        let e = open(&nvml, 0, None).unwrap_err();
        assert_eq!(e.to_string(), "NVML device lookup failed (code 999)");
        assert!(!e.is_usage());

        nvml.set_lookup(Ok(()));
        assert_eq!(
            open(&nvml, 0, Some("GPU-other")).unwrap_err().to_string(),
            "NVML device UUID differs from requested UUID"
        );
        // An empty requested UUID is looked up but not compared.
        assert!(open(&nvml, 0, Some("")).is_ok());
        nvml.set_uuid(Err(15));
        assert_eq!(
            open(&nvml, 0, None).unwrap_err().to_string(),
            "NVML UUID lookup failed (code 15)"
        );

        let mig = FakeNvml::mig("MIG-bbbb", "GPU-aaaa");
        mig.set_parent_lookup(Err(3));
        assert_eq!(
            open(&mig, 0, Some("MIG-bbbb")).unwrap_err().to_string(),
            "NVML MIG parent lookup failed (code 3)"
        );
    }

    #[test]
    fn read_failures_are_missing_and_changes_invalid() {
        let nvml = FakeNvml::gpu("GPU-aaaa");
        let mut src = open(&nvml, 0, None).unwrap();
        nvml.set_memory(Err(3));
        assert_eq!(
            src.read(),
            GpuReading::unavailable(
                SampleState::Missing,
                "NVML memory read unavailable (code 3)".into()
            )
        );
        nvml.set_uuid(Err(15));
        assert_eq!(
            src.read(),
            GpuReading::unavailable(
                SampleState::Missing,
                "device identity unreadable: NVML UUID lookup failed (code 15)".into()
            )
        );
        nvml.set_uuid(Ok("GPU-zzzz".into()));
        assert_eq!(
            src.read(),
            GpuReading::unavailable(SampleState::Invalid, "device UUID changed".into())
        );
    }

    #[test]
    fn missing_library_is_the_usage_error() {
        // Hosts with a driver load it; elsewhere the reference's message.
        match load_nvml() {
            Ok(_) => {}
            Err(e) => assert!(
                e == GpuOpenError::Unavailable || e == GpuOpenError::InitFailed,
                "{e}"
            ),
        }
        assert_eq!(
            GpuOpenError::Unavailable.to_string(),
            "NVML is unavailable on this host; pass --no-gpu to collect without GPU memory"
        );
    }
}
