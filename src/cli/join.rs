//! The server-join flags `report` and `analyze` share (`--direct-server`,
//! `--clock-offset-ns`, `--clock-uncertainty-ns`), flattened into each.
use clap::Args;

use crate::ops::join::JoinConfig;

/// Flags shared by `report` and `infer analyze` that change the server join.
#[derive(Debug, Args, Clone, Default)]
pub struct JoinFlags {
    /// Declare that the client reached the observed server directly (no proxy).
    #[arg(long = "direct-server")]
    pub direct_server: bool,
    /// Server clock minus client clock, in ns, for a server on another host.
    #[arg(
        long = "clock-offset-ns",
        value_name = "NS",
        allow_hyphen_values = true
    )]
    pub clock_offset_ns: Option<i64>,
    /// Uncertainty of --clock-offset-ns, in ns.
    #[arg(
        long = "clock-uncertainty-ns",
        value_name = "NS",
        allow_hyphen_values = true
    )]
    pub clock_uncertainty_ns: Option<i64>,
}

impl From<&JoinFlags> for JoinConfig {
    fn from(f: &JoinFlags) -> Self {
        JoinConfig {
            direct_server: f.direct_server,
            clock_offset_ns: f.clock_offset_ns,
            clock_uncertainty_ns: f.clock_uncertainty_ns,
        }
    }
}
