//! The host facts a collection's server identity is built from (host name,
//! boot ID; docs/telemetry.md §A). The identity itself is `model::identity`.

use std::fs;

pub use crate::model::identity::{
    validate_group, wall_clock_domain, IdentityError, ServerIdentity, WALL_CLOCK,
};

/// Facts about the collector host that go into the identity.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostInfo {
    pub host: String,
    pub boot_id: Option<String>,
}

impl HostInfo {
    /// Reads this host's name (`gethostname`) and boot ID.
    pub fn current() -> Self {
        Self {
            host: sysinfo::System::host_name().unwrap_or_default(),
            boot_id: host_boot_id(),
        }
    }
}

/// The Linux boot ID, stripped; `None` when unreadable or empty (docs/telemetry.md §A.3).
/// Other systems have none here (macOS's `kern.bootsessionuuid` is out of
/// scope for this Linux-first port).
pub fn host_boot_id() -> Option<String> {
    let text = fs::read_to_string("/proc/sys/kernel/random/boot_id").ok()?;
    let trimmed = text.trim();
    (!trimmed.is_empty()).then(|| trimmed.to_string())
}
